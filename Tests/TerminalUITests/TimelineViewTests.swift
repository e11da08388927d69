import XCTest
@testable import TerminalUI

final class TimelineViewTests: XCTestCase {
    let entries = [
        TimelineEntry(date: "2026-09-16 09:14", kind: "SUBSCRIBED/INITIAL_BUY", detail: "free trial, 7d"),
        TimelineEntry(date: "2026-09-23 09:14", kind: "DID_RENEW", detail: "app.monthly  9.99 USD",
                      extraLines: ["{", "  \"notificationType\": \"DID_RENEW\"", "}"]),
        TimelineEntry(date: "2026-11-18 10:02", kind: "revalidated by ana", detail: "no change", role: .accent),
    ]

    func testExpandedEntryShowsIndentedPayload() {
        var offset = -1
        let buffer = render(width: 70, height: 7) {
            offset = TimelineView(entries: entries, selectedEntry: 1, expandedEntries: [1]).render(in: $0.bounds, buffer: &$0)
        }
        assertLines(buffer, [
            "2026-09-16 09:14  SUBSCRIBED/INITIAL_BUY  free trial, 7d",
            "2026-09-23 09:14  DID_RENEW               app.monthly  9.99 USD",
            "                    {",
            "                      \"notificationType\": \"DID_RENEW\"",
            "                    }",
            "2026-11-18 10:02  revalidated by ana      no change",
        ])
        XCTAssertEqual(offset, 0)
        XCTAssertEqual(roleRuns(buffer, row: 1), "selection×70")
        XCTAssertEqual(roleRuns(buffer, row: 5), "dim×16 normal×2 accent×18 normal×6 accent×9 normal×19")
    }

    func testCollapsedEntriesShowOneLineEach() {
        let buffer = render(width: 70, height: 4) {
            TimelineView(entries: entries).render(in: $0.bounds, buffer: &$0)
        }
        XCTAssertEqual(buffer.lines().filter { !$0.isEmpty }.count, 3)
    }

    func testScrollingKeepsSelectedEntryAndAsMuchOfItsPayloadAsFits() {
        var offset = -1
        let buffer = render(width: 70, height: 3) {
            offset = TimelineView(entries: entries, selectedEntry: 1, expandedEntries: [1]).render(in: $0.bounds, buffer: &$0)
        }
        XCTAssertEqual(offset, 1)
        assertLines(buffer, [
            "2026-09-23 09:14  DID_RENEW               app.monthly  9.99 USD",
            "                    {",
            "                      \"notificationType\": \"DID_RENEW\"",
        ])

        let last = render(width: 70, height: 3) {
            offset = TimelineView(entries: entries, selectedEntry: 2, expandedEntries: [1]).render(in: $0.bounds, buffer: &$0)
        }
        XCTAssertEqual(offset, 3)
        assertLines(last, [
            "                      \"notificationType\": \"DID_RENEW\"",
            "                    }",
            "2026-11-18 10:02  revalidated by ana      no change",
        ])
    }

    func testNarrowTimelineTruncatesKindAndPayloadText() {
        let buffer = render(width: 30, height: 5) {
            TimelineView(entries: [entries[1]], expandedEntries: [0]).render(in: $0.bounds, buffer: &$0)
        }
        assertLines(buffer, [
            "2026-09-23 09:14  DID_RE…  ap…",
            "                    {",
            "                      \"notifi…",
            "                    }",
        ])
    }

    func testPayloadLinesAreSanitized() {
        let entry = TimelineEntry(date: "d", kind: "k", detail: "x\u{202E}y", extraLines: ["\u{1B}[31mred"])
        let buffer = render(width: 30, height: 2) {
            TimelineView(entries: [entry], expandedEntries: [0]).render(in: $0.bounds, buffer: &$0)
        }
        assertLines(buffer, ["d  k  x\\u{202E}y", "     \\e[31mred"])
    }

    func testEmptyTimeline() {
        let buffer = render(width: 15, height: 1) { TimelineView(entries: []).render(in: $0.bounds, buffer: &$0) }
        assertLines(buffer, ["   no events"])
    }
}
