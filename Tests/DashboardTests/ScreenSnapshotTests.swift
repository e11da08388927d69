import XCTest
import SubdeskTestKit
import SubscriptionCore
import TerminalUI
@testable import Dashboard

/// Every screen rendered without a terminal, at the smallest supported size and a roomy one.
final class ScreenSnapshotTests: XCTestCase, RunsOnEveryEngine {
    static let sizes = [(80, 24), (120, 40)]
    nonisolated(unsafe) static var store: Store?

    /// One demo store for the whole class: building it signs a few hundred payloads.
    func demoStore() throws -> Store {
        if let store = Self.store { return store }
        let store = try DashboardFixture.demoStore()
        Self.store = store
        return store
    }

    func snapshot(_ name: String, forwardTargets: [String] = [], _ prepare: (DashboardSession) -> Void) throws {
        for (width, height) in Self.sizes {
            let session = DashboardFixture.session(try demoStore(), width: width, height: height, forwardTargets: forwardTargets)
            prepare(session)
            Snapshot.assertLines(session.screenLines, named: "\(name)-\(width)x\(height)")
        }
    }

    func testSubscribers() throws {
        try snapshot("subscribers") { _ in }
    }

    func testSubscribersFilteredByStatus() throws {
        try snapshot("subscribers-expired") { $0.type(.char("4")) }
    }

    func testDetailOfSubscriberInGrace() throws {
        try snapshot("detail-grace") { session in
            session.type(.char("/"))
            session.type("user-1010")
            session.type(.enter, .enter)
        }
    }

    func testDetailWithExpandedNotification() throws {
        try snapshot("detail-expanded") { session in
            session.type(.char("/"))
            session.type("user-1010")
            session.type(.enter, .enter, .char("k"), .enter)
        }
    }

    func testDetailOfPendingDowngrade() throws {
        try snapshot("detail-downgrade") { session in
            session.type(.char("/"))
            session.type("user-1006")
            session.type(.enter, .enter)
        }
    }

    func testFeed() throws {
        try snapshot("feed") { session in
            session.type(.char(":"))
            session.type("feed")
            session.type(.enter)
        }
    }

    /// With a `[forward]` target configured, which the demo store owes nothing: its lag row is quiet.
    func testHealth() throws {
        try snapshot("health", forwardTargets: ["backend"]) { session in
            session.type(.char(":"))
            session.type("health")
            session.type(.enter)
        }
    }

    func testForward() throws {
        try snapshot("forward", forwardTargets: ["backend"]) { session in
            session.type(.char(":"))
            session.type("forward")
            session.type(.enter)
        }
    }

    func testDaily() throws {
        try snapshot("daily") { session in
            session.type(.char(":"))
            session.type("daily")
            session.type(.enter, .char("j"), .char("j"))
        }
    }

    func testCohorts() throws {
        try snapshot("cohorts") { session in
            session.type(.char(":"))
            session.type("cohorts")
            session.type(.enter)
        }
    }

    func testRefunds() throws {
        try snapshot("refunds") { session in
            session.type(.char(":"))
            session.type("refunds")
            session.type(.enter)
        }
    }

    func testDailyByWeekAndMonth() throws {
        try snapshot("daily-weeks") { session in
            session.type(.char(":"))
            session.type("daily")
            session.type(.enter, .char("p"))
        }
        try snapshot("daily-months") { session in
            session.type(.char(":"))
            session.type("daily")
            session.type(.enter, .char("p"), .char("p"))
        }
    }

    func testQuarantine() throws {
        try snapshot("quarantine") { session in
            session.type(.char(":"))
            session.type("quarantine")
            session.type(.enter)
        }
    }

    func testQuarantinedBody() throws {
        try snapshot("quarantine-body") { session in
            session.type(.char(":"))
            session.type("quarantine")
            session.type(.enter, .char("j"), .enter)
        }
    }

    func testHelp() throws {
        try snapshot("help") { $0.type(.char("?")) }
    }

    func testCommandLineWithCompletions() throws {
        try snapshot("command-line") { session in
            session.type(.char(":"))
            session.type("q")
        }
    }

    func testTooSmall() throws {
        let session = DashboardFixture.session(try demoStore(), width: 60, height: 20)
        Snapshot.assertLines(session.screenLines, named: "too-small-60x20")
    }
}

/// `:daily` says what TOTAL adds up and moves its day columns sideways.
final class DailyColumnsTests: XCTestCase, RunsOnEveryEngine {
    func testTotalsCoverTheWholeRangeAndColumnsMoveSideways() throws {
        let session = DashboardFixture.session(try DashboardFixture.demoStore())
        session.type(.char(":"))
        session.type("daily")
        session.type(.enter)
        var lines = session.screenText.components(separatedBy: "\n")
        XCTAssertTrue(lines[1].contains("TOTAL: 30 days, h/l more"), lines[1])
        XCTAssertTrue(lines[2].hasSuffix("11-10 11-11 11-12 11-13 11-14 11-15 11-16"), lines[2])
        // TOTAL is the sum over all 30 days, not over the seven on screen.
        let days = session.state.daily.days
        XCTAssertEqual(days.count, 30)
        let renewals = try XCTUnwrap(lines.first { $0.contains(" renewals ") })
        let total = try XCTUnwrap(Int(renewals.split(separator: " ")[1]))
        XCTAssertEqual(total, days.reduce(0) { $0 + $1[.renewals] })

        session.type(.char("h"))
        lines = session.screenText.components(separatedBy: "\n")
        XCTAssertTrue(lines[2].hasSuffix("11-03 11-04 11-05 11-06 11-07 11-08 11-09"), lines[2])
        for _ in 0..<10 { session.type(.left) }
        lines = session.screenText.components(separatedBy: "\n")
        XCTAssertTrue(lines[2].hasSuffix("10-18 10-19 10-20 10-21 10-22 10-23 10-24"), "stops at the range's first day: \(lines[2])")
        session.type(.char("l"), .right, .char("l"), .char("l"), .char("l"))
        lines = session.screenText.components(separatedBy: "\n")
        XCTAssertTrue(lines[2].hasSuffix("11-10 11-11 11-12 11-13 11-14 11-15 11-16"), lines[2])
        XCTAssertTrue(lines.contains { $0.contains("active paid (end of day)") }, "levels say they are counted at the end of the day")
        session.type(.char("G"))
        lines = session.screenText.components(separatedBy: "\n")
        XCTAssertTrue(lines.contains { $0.contains("billing retry (end of day)") } || lines.contains { $0.contains("auto-renew on") })
        XCTAssertFalse(session.screenText.contains("eod"))
    }
}

/// The README's screenshots are what the dashboard draws: every line of each one is a
/// line of a recorded snapshot (they are cut from them), so a changed screen fails here
/// until the README shows it too.
final class ReadmeScreenshotTests: XCTestCase {
    func testEveryScreenshotLineIsOnARecordedScreen() throws {
        let root = DashboardFixture.repositoryRoot
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let snapshots = root.appendingPathComponent("Tests/DashboardTests/Snapshots")
        var recorded = Set<String>()
        for file in try FileManager.default.contentsOfDirectory(atPath: snapshots.path) {
            let text = try String(contentsOf: snapshots.appendingPathComponent(file), encoding: .utf8)
            for line in text.components(separatedBy: "\n") { recorded.insert(line.replacingOccurrences(of: " +$", with: "", options: .regularExpression)) }
        }
        let blocks = readme.components(separatedBy: "```").enumerated().filter { $0.offset % 2 == 1 }.map(\.element)
        let screens = blocks.filter { $0.hasPrefix("\n subdesk ▸") }
        XCTAssertGreaterThanOrEqual(screens.count, 5)
        for screen in screens {
            for line in screen.components(separatedBy: "\n") where !line.isEmpty {
                XCTAssertTrue(recorded.contains(line), "README line not on any recorded screen: \(line)")
            }
        }
    }
}
