import Foundation
import XCTest
import SubdeskTestKit
import SubscriptionCore
import TerminalUI
@testable import Dashboard

/// `:consent` and the subscriber list's consent badge over `ConsentFixture`: withdrawals for
/// 7702 (a day ago) and 7701 (two days ago) and one no stored purchase carries (three days ago).
final class ConsentScreenTests: XCTestCase, RunsOnEveryEngine {
    struct NotOnScreen: Error {}

    static let sizes = [(80, 24), (120, 40)]

    func session(_ store: Store, width: Int, height: Int) -> DashboardSession {
        let session = DashboardSession(store: store, state: DashboardFixture.state(width: width, height: height),
                                       clock: { DashboardFixture.anchor }, operatorName: "ana")
        session.start()
        return session
    }

    func frame(_ session: DashboardSession) -> ScreenBuffer {
        var buffer = ScreenBuffer(width: session.state.width, height: session.state.height)
        session.render(into: &buffer)
        return buffer
    }

    /// The row holding `text`, and the column it starts at (every character here is one column wide).
    func find(_ text: String, in buffer: ScreenBuffer, file: StaticString = #filePath, line: UInt = #line) throws -> (y: Int, x: Int) {
        for y in 0..<buffer.height {
            let row = buffer.row(y)
            if let range = row.range(of: text) { return (y, row.distance(from: row.startIndex, to: range.lowerBound)) }
        }
        XCTFail("no \(text) on screen:\n\(buffer.lines().joined(separator: "\n"))", file: file, line: line)
        throw NotOnScreen()
    }

    func testTheScreenListsOpenWithdrawalsNewestFirstWithWhatTheyConcern() throws {
        let store = try ConsentFixture.store()
        for (width, height) in Self.sizes {
            let session = session(store, width: width, height: height)
            session.type(.char(":"))
            session.type("consent")
            session.type(.enter)
            XCTAssertEqual(session.state.screen, .consent)
            let buffer = frame(session)
            let lines = buffer.lines()
            let screen = lines.joined(separator: "\n")
            XCTAssertTrue(lines[0].contains("subdesk ▸ subscribers ▸ consent"), lines[0])
            let title = " 3 open consent withdrawals · 0 handled · a parent or guardian withdrew consent: Apple stops the app for that user"
            XCTAssertEqual(lines[1], width >= 110 ? title : String(title.prefix(78)) + "…", "\(width)x\(height)")
            XCTAssertEqual(buffer.roles(1)[1], .title)
            XCTAssertTrue(lines[2].contains("SIGNED (UTC)") && lines[2].contains("APP TRANSACTION") && lines[2].contains("SUBSCRIPTIONS")
                          && lines[2].contains("HANDLED"), lines[2])
            // Newest first; the one no purchase carries says so.
            XCTAssertTrue(lines[3].hasPrefix(" 2026-11-15 12:00 ") && lines[3].contains(" 880002 "), lines[3])
            XCTAssertTrue(lines[3].contains(" 7702 ") && lines[3].hasSuffix(" open"), lines[3])
            XCTAssertTrue(lines[4].hasPrefix(" 2026-11-14 12:00 ") && lines[4].contains(" 880001 ") && lines[4].contains(" 7701 "), lines[4])
            XCTAssertTrue(lines[5].hasPrefix(" 2026-11-13 12:00 ") && lines[5].contains(" 880009 ")
                          && lines[5].contains("no stored purchase"), lines[5])
            XCTAssertTrue(lines[3].contains(width >= 110 ? "Production" : "Prod"), lines[3])
            // An open withdrawal is a warning; a row the selection is not on shows it.
            let openColumn = lines[3].count - "open".count
            XCTAssertEqual(buffer.roles(3)[openColumn], .selection, "the selected row is drawn selected")
            XCTAssertEqual(buffer.roles(4)[openColumn], .warning, "an open withdrawal is a warning")
            let noPurchase = try find("no stored purchase", in: buffer)
            XCTAssertEqual(buffer.roles(noPurchase.y)[noPurchase.x], .dim)
            // The panel: the notification and the app download, then what h does.
            XCTAssertTrue(screen.contains(" RESCIND_CONSENT consent-880002 · app transaction 880002 · iOS · downloaded"), screen)
            XCTAssertTrue(screen.contains(" open: h marks it handled once done (end access, delete data, tell the family)"), screen)
            if width == 80 {
                // Cut at the edge, and said so.
                let panel = try XCTUnwrap(lines.first { $0.contains("RESCIND_CONSENT consent-880002") })
                XCTAssertTrue(panel.hasSuffix("…"), panel)
            }
            XCTAssertTrue(lines[height - 1].contains("h handled") && lines[height - 1].contains("a all"), lines[height - 1])
        }
    }

    /// The whole screen as recorded, for review and for the README's picture of it.
    func testSnapshots() throws {
        let store = try ConsentFixture.store()
        for (width, height) in Self.sizes {
            let session = session(store, width: width, height: height)
            Snapshot.assertLines(session.screenLines, named: "subscribers-consent-\(width)x\(height)")
            session.type(.char(":"))
            session.type("consent")
            session.type(.enter)
            Snapshot.assertLines(session.screenLines, named: "consent-\(width)x\(height)")
        }
    }

    func testEnterOpensTheSubscriptionItConcernsOrSaysThereIsNone() throws {
        let session = session(try ConsentFixture.store(), width: 80, height: 24)
        session.type(.char(":"))
        session.type("consent")
        session.type(.enter, .enter)
        XCTAssertEqual(session.state.screen, .detail)
        XCTAssertEqual(session.state.detail?.originalTransactionId, "7702")
        XCTAssertTrue(session.screenText.contains("WITHDRAWN"), session.screenText)
        session.type(.escape, .char("G"), .enter)
        XCTAssertEqual(session.state.screen, .consent)
        XCTAssertTrue(session.state.flash?.text.contains("no stored purchase carries app transaction 880009") == true,
                      "\(String(describing: session.state.flash))")
    }

    func testMarkingOneHandledAsksAReasonThenYesAndIsAudited() throws {
        let store = try ConsentFixture.store()
        let session = session(store, width: 80, height: 24)
        session.type(.char(":"))
        session.type("consent")
        session.type(.enter)

        // No reason, nothing recorded.
        session.type(.char("h"))
        XCTAssertEqual(session.screenLines[23], "reason (what was done for the family):")
        XCTAssertEqual(frame(session).roles(23)[0], .prompt)
        session.type(.enter)
        XCTAssertTrue(session.state.flash?.text.contains("a reason is required") == true, "\(String(describing: session.state.flash))")
        // A reason, then n: nothing recorded either.
        session.type(.escape, .char("h"))
        session.type("account closed, data deleted")
        session.type(.enter)
        XCTAssertTrue(session.screenLines[23].hasPrefix(" Mark handled? y: yes, any other key: no · consent withdrawal for 7702: account"),
                      session.screenLines[23])
        session.type(.char("n"))
        XCTAssertEqual(session.state.flash?.text, "cancelled: nothing was recorded")
        XCTAssertFalse(try store.audit.entries().contains { $0.kind == .consentHandled })

        session.type(.char("h"))
        session.type("account closed, data deleted")
        session.type(.enter, .char("y"))
        let entry = try XCTUnwrap(try store.audit.entries(targets: [ConsentFixture.uuid2]).first { $0.action == "consent_handled" })
        XCTAssertEqual(entry.operatorName, "ana")
        XCTAssertEqual(entry.reason, "account closed, data deleted")
        XCTAssertEqual(entry.detail, "app transaction 880002; subscriptions 7702")
        XCTAssertTrue(session.state.messages.last?.text.hasPrefix("consent withdrawal consent-880002 marked handled by ana (audit #") == true,
                      "\(String(describing: session.state.messages.last))")

        // Gone from the open ones; `a` lists it with the handled, under the open.
        var lines = session.screenLines
        XCTAssertTrue(lines[1].hasPrefix(" 2 open consent withdrawals · 1 handled (a lists them) · "), lines[1])
        XCTAssertFalse(lines[3...6].contains { $0.contains("880002") }, session.screenText)
        session.type(.char("a"))
        lines = session.screenLines
        XCTAssertTrue(lines[5].contains("880002") && lines[5].contains("ana 11-16 12:00"), lines[5])
        XCTAssertTrue(lines[3].contains("880001") && lines[3].contains("open"), lines[3])
        session.type(.char("G"))
        XCTAssertTrue(session.screenText.contains("handled by ana 2026-11-16 12:00 UTC: account closed, data deleted"), session.screenText)
        // Handled once.
        session.type(.char("h"))
        XCTAssertNil(session.state.prompt)
        XCTAssertTrue(session.state.flash?.text.hasPrefix("already handled by ana") == true, "\(String(describing: session.state.flash))")

        // The subscriber list no longer marks 7702.
        session.type(.char(":"))
        session.type("subs")
        session.type(.enter)
        XCTAssertEqual(session.state.subscribers.consentWithdrawn, ["7701"])
    }

    func testTheBadgeMarksSubscriptionsWhoseCustomerWithdrewConsent() throws {
        let store = try ConsentFixture.store()
        for (width, height) in Self.sizes {
            let session = session(store, width: width, height: height)
            let buffer = frame(session)
            let lines = buffer.lines()
            let wide = width >= 110
            // No override in force on any row: no OVERRIDE column before it.
            let header = try find(wide ? "STATUS         CONSENT" : "STATUS  C", in: buffer)
            let column = header.x + (wide ? 15 : 8)
            for (otid, marked) in [("7701", true), ("7702", true), ("7703", false)] {
                let y = try find(otid, in: buffer).y
                let mark = String(buffer.row(y).dropFirst(column).prefix(wide ? 11 : 1))
                XCTAssertEqual(mark, marked ? (wide ? "⊘ withdrawn" : "⊘") : (wide ? "           " : " "), "\(otid) at \(width)x\(height): \(lines[y])")
                if marked, session.state.subscribers.selectedRow?.state.originalTransactionId != otid {
                    XCTAssertEqual(buffer.roles(y)[column], .warning, lines[y])
                }
            }
            // Nothing moved: the expiry column still ends where the table says.
            XCTAssertTrue(lines.contains { $0.contains("2026-12-11 12:00") }, lines.joined(separator: "\n"))
        }
        XCTAssertEqual(ASCIIFallback.text("⊘ withdrawn"), "! withdrawn", "the ASCII terminal keeps the mark and its column")

        // Once none is open, the list gives the columns back.
        for uuid in [ConsentFixture.uuid1, ConsentFixture.uuid2, ConsentFixture.unmatched] {
            try Operations(store: store, operatorName: "ana").markConsentHandled(uuid, reason: "done")
        }
        let after = session(store, width: 80, height: 24).screenLines
        XCTAssertTrue(after[3].contains("STATUS  EXPIRES (UTC)"), after[3])
        XCTAssertFalse(after.contains { $0.contains("⊘") }, after.joined(separator: "\n"))
        XCTAssertEqual(TextWidth.width(of: "⊘"), 1)
    }

    func testTheBadgeLookupReadsOnlyOpenWithdrawalsForThePage() throws {
        let store = try ConsentFixture.store()
        let index = ConsentBadgeIndex()
        XCTAssertEqual(try index.marks(among: ["7701", "7702", "7703", "2000000400000301"], store: store),
                       ConsentBadgeIndex.Marks(withdrawn: ["7701", "7702"], openCount: 3))
        XCTAssertEqual(try index.marks(among: ["7703"], store: store).withdrawn, [])
        XCTAssertEqual(try ConsentWithdrawal.openCount(store: store), 3)
        try Operations(store: store, operatorName: "ana").markConsentHandled(ConsentFixture.uuid1, reason: "done")
        XCTAssertEqual(try index.marks(among: ["7701", "7702", "7703"], store: store),
                       ConsentBadgeIndex.Marks(withdrawn: ["7702"], openCount: 2))
        XCTAssertEqual(try ConsentWithdrawal.openCount(store: store), 2)
    }
}
