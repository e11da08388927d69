import XCTest
import SubdeskTestKit
import SubscriptionCore
import TerminalUI
@testable import Dashboard

/// At 80x24, the smallest supported size, what does not fit ends in "…" rather than being
/// cut silently; and what a screen shows says what it is (refused rows, token-only
/// subscribers, revocations, the period a level is counted at).
final class NarrowScreenTests: XCTestCase, RunsOnEveryEngine {
    nonisolated(unsafe) static var store: Store?

    func demoStore() throws -> Store {
        if let store = Self.store { return store }
        let store = try DashboardFixture.demoStore()
        Self.store = store
        return store
    }

    func command(_ session: DashboardSession, _ text: String) {
        session.type(.char(":"))
        session.type(text)
        session.type(.enter)
    }

    /// The text of a framed line, without its frame.
    func inside(_ line: String) -> String {
        line.trimmingCharacters(in: CharacterSet(charactersIn: "│ "))
    }

    func tabsLine(all: Int, _ counts: [SubscriptionStatus: Int]) -> String {
        var state = DashboardFixture.state()
        _ = DashboardReducer.reduce(into: &state, .statusCountsLoaded(counts, total: all))
        return DashboardRenderer.render(state).lines()[1]
    }

    func testStatusTabsShortenThenEndInAnEllipsisRatherThanLosingRevoked() {
        let fitting = tabsLine(all: 12_345, [.active: 9000, .gracePeriod: 600, .billingRetry: 600, .expired: 2400, .revoked: 1345])
        XCTAssertTrue(fitting.contains("3 retry 600"), "billing retry shortened: \(fitting)")
        XCTAssertTrue(fitting.contains("5 revoked 1345"), "every tab whole: \(fitting)")

        let huge = tabsLine(all: 1_234_567, [.active: 1_000_000, .gracePeriod: 12_345, .billingRetry: 12_345,
                                             .expired: 200_000, .revoked: 9877])
        let shown = huge.trimmingCharacters(in: .whitespaces)
        XCTAssertTrue(shown.hasSuffix("…"), "the tab that does not fit says so: \(huge)")
        XCTAssertTrue(shown.contains("4 expired 200000"), huge)
    }

    func testTheOwnerLineLeavesOutWholeFactsAndSaysSo() throws {
        let session = DashboardFixture.session(try demoStore())
        session.type(.char("/"))
        session.type("user-1010")
        session.type(.enter, .enter)
        let owner = try XCTUnwrap(session.screenLines.first { $0.contains("Owner") })
        XCTAssertTrue(inside(owner).hasSuffix("…"), owner)
        XCTAssertTrue(owner.contains("user user-1010 · token 5e1f…0009"), owner)
        XCTAssertFalse(owner.contains("storefr"), "a fact is shown whole or not at all: \(owner)")
    }

    func testARevokedSubscriptionsHeaderSaysWhenAndWhyAt80Columns() throws {
        let session = DashboardFixture.session(try demoStore())
        session.type(.char("/"))
        session.type("user-1019")
        session.type(.enter, .enter)
        let status = try XCTUnwrap(session.screenLines.first { $0.contains("Status") })
        XCTAssertTrue(status.contains("REVOKED"), status)
        XCTAssertTrue(status.range(of: #"revoked (2026-)?\d\d-\d\d \d\d:\d\d"#, options: .regularExpression) != nil, status)
        XCTAssertTrue(status.contains("reason:") || status.contains("app issue") || status.contains("other reason"), status)
    }

    func testTheRefundsPanelEndsLongLinesInAnEllipsis() throws {
        let session = DashboardFixture.session(try demoStore())
        command(session, "refunds")
        let lines = session.screenLines
        let rule = try XCTUnwrap(lines.lastIndex { $0.hasPrefix(" ───") }, lines.joined(separator: "\n"))
        let panel = lines[(rule + 1)..<(lines.count - 1)]
        XCTAssertFalse(panel.isEmpty)
        for line in panel where line.count >= 80 && !line.hasSuffix(" ") {
            XCTAssertTrue(line.hasSuffix("…"), "cut without an ellipsis: \(line)")
        }
        XCTAssertTrue(panel.contains { $0.hasSuffix("…") }, "the demo's panel has a line too long for 80 columns:\n\(panel.joined(separator: "\n"))")
    }

    func testTheFeedHeaderEndsInAnEllipsisWhenTheFeedIsFull() {
        var state = DashboardFixture.state()
        _ = DashboardReducer.reduce(into: &state, .key(.char(":")))
        for c in "feed" { _ = DashboardReducer.reduce(into: &state, .key(.char(c))) }
        _ = DashboardReducer.reduce(into: &state, .key(.enter))
        let full = (1...Int64(FeedState.capacity)).reversed().map {
            IntakeLogEntry(id: $0, receivedDate: state.now, result: .stored, type: "DID_RENEW", originalTransactionId: "otid-\($0)")
        }
        _ = DashboardReducer.reduce(into: &state, .feedLoaded(full, rate: [1], now: state.now))
        let header = DashboardRenderer.render(state).lines()[1]
        XCTAssertTrue(header.contains("500 rows (newest"), header)
        XCTAssertTrue(header.trimmingCharacters(in: .whitespaces).hasSuffix("…"), header)
    }

    func testRefusedRowsSayWhyInTheTypeColumnAndRejFindsThem() {
        var state = DashboardFixture.state()
        _ = DashboardReducer.reduce(into: &state, .key(.char(":")))
        for c in "feed" { _ = DashboardReducer.reduce(into: &state, .key(.char(c))) }
        _ = DashboardReducer.reduce(into: &state, .key(.enter))
        let entries = [
            IntakeLogEntry(id: 2, receivedDate: state.now, result: .stored, type: "DID_RENEW", originalTransactionId: "2000000400000001",
                           productId: "app.monthly", environment: "Production"),
            IntakeLogEntry(id: 1, receivedDate: state.now, result: .rejected, detail: "signedPayload: not a JWS (expected three segments)"),
        ]
        _ = DashboardReducer.reduce(into: &state, .feedLoaded(entries, rate: [2], now: state.now))
        let buffer = DashboardRenderer.render(state)
        let lines = buffer.lines()
        let refused = try! XCTUnwrap(lines.firstIndex { $0.contains("REJECTED") }, lines.joined(separator: "\n"))
        XCTAssertTrue(lines[refused].contains("signedPayload: not a …"), "the reason where the type would be: \(lines[refused])")
        let column = try! XCTUnwrap(lines[refused].range(of: "signedPayload")).lowerBound.utf16Offset(in: lines[refused])
        XCTAssertEqual(buffer[column, refused].role, .error)

        _ = DashboardReducer.reduce(into: &state, .key(.char("/")))
        for c in "rej" { _ = DashboardReducer.reduce(into: &state, .key(.char(c))) }
        _ = DashboardReducer.reduce(into: &state, .key(.enter))
        XCTAssertEqual(state.feed.visible.map(\.id), [1], "/rej finds the refused row and only it")
        state.feed.filter = "not a jws"
        XCTAssertEqual(state.feed.visible.map(\.id), [1], "and its reason")
    }

    func testASubscriberKnownOnlyByItsTokenIsToldApartInTheList() throws {
        let store = try demoStore()
        var state = DashboardFixture.state()
        let request = SubscriberPageRequest(query: state.subscribers.query, position: .first, limit: 10)
        var rows = try store.subscriptions.pageWithin(request.query, limit: 10).rows
        rows[0].subscriber.userId = nil
        rows[0].subscriber.appAccountToken = "5e1f0000-0000-4000-8000-00000000abcd"
        _ = DashboardReducer.reduce(into: &state, .subscribersLoaded(request, SubscriberPage(rows: rows, reachesStart: true, reachesEnd: true)))
        let lines = DashboardRenderer.render(state).lines()
        let row = try XCTUnwrap(lines.first { $0.contains(rows[0].state.originalTransactionId) }, lines.joined(separator: "\n"))
        XCTAssertTrue(row.hasPrefix(" token 5e1f"), row)
    }

    func testPeriodsRelabelTheLevelsEndOfDay() throws {
        let session = DashboardFixture.session(try demoStore())
        command(session, "daily")
        XCTAssertTrue(session.screenText.contains("active paid (end of day)"), session.screenText)
        session.type(.char("p"))
        XCTAssertTrue(session.screenText.contains("active paid (week end)"), session.screenText)
        XCTAssertFalse(session.screenText.contains("end of day"), session.screenText)
        session.type(.char("p"))
        XCTAssertTrue(session.screenText.contains("active paid (month end)"), session.screenText)

        let wide = DashboardFixture.session(try demoStore(), width: 120, height: 40)
        command(wide, "daily")
        wide.type(.char("p"))
        XCTAssertTrue(wide.screenText.contains("active paid at end of week"), wide.screenText)
        XCTAssertFalse(wide.screenText.contains("end of day"), wide.screenText)
    }
}
