import Foundation
import XCTest
import SubscriptionCore
import SubdeskScenarios
import TerminalUI
@testable import Dashboard
import SubdeskTestKit

/// `:app NAME` scopes every screen, each list says each row's app when several apps are
/// configured, and the header keeps the scope where room runs out.
final class AppScopeScreenTests: XCTestCase, RunsOnEveryEngine {
    /// The rows of the screen's table (the lines under its column header, above the bottom
    /// line), for looking at one app's rows: first each row's app while every app is shown,
    /// no APP column once the desk is scoped to one (every row is then its).
    func tableLines(_ session: DashboardSession, header: String, scoped: Bool = false) throws -> [String] {
        let lines = session.screenLines
        let index = try XCTUnwrap(lines.firstIndex { $0.contains(header) }, session.screenText)
        XCTAssertEqual(lines[index].trimmingCharacters(in: CharacterSet(charactersIn: " │")).hasPrefix("APP"), !scoped,
                       (scoped ? "scoped to one app: no APP column\n" : "two apps: the list says each row's app first\n") + session.screenText)
        return Array(lines[(index + 1)..<(lines.count - 1)])
    }

    /// On `screen`: every app's rows (the other app's `marker` on a row named `other`, and
    /// some row of `demo`); `:app other` leaves only the other app's, `:app demo` none of
    /// them (but rows of its own: a row has digits, an empty table's text none), `:app all`
    /// both again.
    func checkScoped(_ command: String, header: String, marker: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let session = try TwoAppFixture.session()
        session.command(command)
        var rows = try tableLines(session, header: header)
        XCTAssertTrue(rows.contains { $0.contains(marker) && $0.contains(" other ") }, "unscoped: the other app's row, named\n" + session.screenText,
                      file: file, line: line)
        XCTAssertTrue(rows.contains { $0.contains(" demo ") }, "unscoped: the demo app's rows too\n" + session.screenText, file: file, line: line)

        session.command("app other")
        XCTAssertEqual(session.state.screen, session.state.stack.last, file: file, line: line)
        rows = try tableLines(session, header: header, scoped: true)
        XCTAssertTrue(rows.contains { $0.contains(marker) }, "scoped to other: its row\n" + session.screenText, file: file, line: line)

        session.command("app demo")
        rows = try tableLines(session, header: header, scoped: true)
        XCTAssertFalse(rows.contains { $0.contains(marker) }, "scoped to demo: not the other app's row\n" + session.screenText, file: file, line: line)
        XCTAssertTrue(rows.first?.contains(where: \.isNumber) == true, "scoped to demo: its rows\n" + session.screenText, file: file, line: line)

        session.command("app all")
        rows = try tableLines(session, header: header)
        XCTAssertTrue(rows.contains { $0.contains(marker) } && rows.contains { $0.contains(" demo ") }, session.screenText, file: file, line: line)
    }

    func testTheFeedIsScoped() throws {
        try checkScoped("feed", header: "TYPE/SUBTYPE", marker: TwoAppFixture.otherId)
    }

    /// A scoped feed's next poll starts after the lines its read passed over, another app's
    /// included, so a quiet app beside a busy one does not read the busy app's lines again.
    func testAScopedFeedDoesNotReadAnotherAppsLinesAgain() throws {
        let session = try TwoAppFixture.session()
        session.command("app other")
        session.command("feed")
        let shown = session.state.feed.entries.map(\.id)
        XCTAssertFalse(shown.isEmpty)
        try session.store.write {
            try session.store.logIntake(IntakeLogEntry(receivedDate: DashboardFixture.anchor, result: .stored, notificationUUID: nil,
                                                       type: "DID_RENEW", originalTransactionId: ScenarioBuilder.originalTransactionId(instance: 0),
                                                       productId: "app.monthly", environment: "Production"))
        }
        session.send(.storeChanged)
        XCTAssertEqual(session.state.feed.entries.map(\.id), shown, "the demo app's line is not the other app's")
        XCTAssertEqual(session.state.feed.lastId, try session.store.intakeLog.newestId(), "the next poll starts after it")
    }

    func testTheQuarantineIsScoped() throws {
        try checkScoped("quarantine", header: "REASON", marker: TwoAppFixture.otherRefusal)
    }

    func testTheRefundQueueIsScoped() throws {
        try checkScoped("refunds", header: "STANDING", marker: TwoAppFixture.otherId)
    }

    func testConsentWithdrawalsAreScoped() throws {
        try checkScoped("consent", header: "APP TRANSACTION", marker: TwoAppFixture.otherId)
    }

    func testGapsAreScoped() throws {
        try checkScoped("gaps", header: "APPLE'S ATTEMPTS", marker: TwoAppFixture.otherId)
    }

    func testTheAuditLogIsScoped() throws {
        try checkScoped("audit", header: "OPERATOR", marker: TwoAppFixture.otherId)
    }

    func testTheSubscriberListAndItsCountsAreScoped() throws {
        try checkScoped("app all", header: "ORIGINAL TX", marker: TwoAppFixture.otherId)
        let session = try TwoAppFixture.session()
        let everyApp = try XCTUnwrap(session.state.subscribers.totalCount)
        session.command("app other")
        XCTAssertEqual(session.state.subscribers.totalCount, 1, "the status counts are the scoped app's")
        XCTAssertEqual(session.state.subscribers.statusCounts.values.reduce(0, +), 1)
        session.command("app demo")
        XCTAssertEqual(session.state.subscribers.totalCount, everyApp - 1)
    }

    /// The cohorts and the daily counts read the scoped app's aggregates, as
    /// `--where app=NAME` does; switching the scope reads them again.
    func testCohortsAndDailyCountsAreScoped() throws {
        let session = try TwoAppFixture.session()
        session.command("cohorts")
        let everyApp = try XCTUnwrap(session.state.cohorts.report).rows.map(\.size).reduce(0, +)
        session.command("app other")
        XCTAssertEqual(session.state.screen, .cohorts)
        let other = try XCTUnwrap(session.state.cohorts.report).rows.map(\.size).reduce(0, +)
        session.command("app demo")
        let demo = try XCTUnwrap(session.state.cohorts.report).rows.map(\.size).reduce(0, +)
        XCTAssertEqual(other, 1, "the other app's one paid subscription")
        XCTAssertEqual(demo + other, everyApp)

        session.command("app other")
        session.command("daily")
        let request = try XCTUnwrap(session.state.daily.request)
        let expected = try DailyCountsReport.compute(store: session.store, from: request.from, to: request.to, timeZone: request.zone,
                                                     segments: request.segment.segments, period: request.period,
                                                     filter: SegmentFilter(dimension: .app, value: TwoAppFixture.otherBundleId))
        XCTAssertEqual(session.state.daily.days, expected)
        session.command("app all")
        let unscoped = try DailyCountsReport.compute(store: session.store, from: request.from, to: request.to, timeZone: request.zone,
                                                     segments: request.segment.segments, period: request.period)
        XCTAssertEqual(session.state.daily.days, unscoped)
        XCTAssertNotEqual(unscoped, expected)
    }

    /// One app configured: no APP column, the lists as they were.
    func testOneAppShowsNoAppColumn() throws {
        let session = DashboardFixture.session(try TwoAppFixture.store(), width: 120, height: 40)
        for screen in ["feed", "quarantine", "refunds", "consent", "gaps", "audit"] {
            session.command(screen)
            XCTAssertFalse(session.screenLines.contains { $0.trimmingCharacters(in: .whitespaces).hasPrefix("APP ") }, session.screenText)
        }
    }

    /// At 80 columns the scope stays beside the login and the live state while the store's
    /// name and the zone give way; at 40 it is the last to go before the live state.
    func testTheHeaderKeepsTheScopeInItsOrder() throws {
        var state = DashboardFixture.state(width: 80, height: 24)
        state.apps = TwoAppFixture.apps
        state.storeName = "pg:subdesk_production@db-primary.example.internal"
        state.login = StoreLogin(user: "mgr", roles: ["subdesk_read"])
        try DashboardCommandLine.scope(toApp: "other", &state)
        state.stack = [.subscribers, .feed]
        let top = DashboardRenderer.render(state).lines()[0]
        XCTAssertTrue(top.contains("app: other"), top)
        XCTAssertTrue(top.contains("mgr"), top)
        XCTAssertTrue(top.hasSuffix("● live"), top)
        XCTAssertFalse(top.contains("store:"), top)

        let header = DashboardRenderer.header(state)
        XCTAssertEqual(header.fitting(80).map(\.text).filter { $0.contains("other") }, ["app: other"])
        // Narrower: the store, the zone and the login go first; the scope shortens to its name.
        XCTAssertEqual(header.fitting(40).map(\.text), ["other", "● live"])
        XCTAssertEqual(header.fitting(30).map(\.text), ["● live"])
    }

    /// `:ap` starts both `:app` and `:apple`: the desk names both and does nothing, with or
    /// without a word after it; the help lists both.
    func testApIsAmbiguousBetweenAppAndApple() throws {
        let session = try TwoAppFixture.session()
        session.type(.enter)
        let before = (screen: session.state.screen, stack: session.state.stack, rows: session.state.subscribers.rows.count)
        for line in ["ap", "ap other"] {
            session.command(line)
            XCTAssertEqual(session.state.flash?.kind, .error, line)
            XCTAssertEqual(session.state.flash?.text, ":ap could be :apple or :app; type more of it", line)
            XCTAssertNil(session.state.scope, "nothing scoped: \(line)")
            XCTAssertNil(session.state.confirmation, line)
            XCTAssertEqual(session.state.stack, before.stack, line)
            XCTAssertEqual(session.state.subscribers.rows.count, before.rows, line)
            XCTAssertFalse(session.hasBackgroundWork, "nothing asked of Apple: \(line)")
        }
        XCTAssertEqual(DashboardCommandLine.completions(for: "ap", state: session.state).sorted(), ["app", "apple"])
        let help = DashboardCommandLine.helpLines(width: 400, severalApps: true).joined(separator: " ")
        XCTAssertTrue(help.contains(":app NAME|all"), help)
        XCTAssertTrue(help.contains(":apple"), help)
        session.type("?")
        // The help's lines joined as one paragraph, as it wraps them.
        let shown = session.screenLines.map { $0.trimmingCharacters(in: CharacterSet(charactersIn: " │")) }.joined(separator: " ")
        XCTAssertTrue(shown.contains(":app NAME|all"), session.screenText)
        XCTAssertTrue(shown.contains(":apple"), session.screenText)
    }
}
