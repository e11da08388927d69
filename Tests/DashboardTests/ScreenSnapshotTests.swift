import XCTest
import SubscriptionCore
import TerminalUI
@testable import Dashboard

/// Every screen rendered without a terminal, at the smallest supported size and a roomy one.
final class ScreenSnapshotTests: XCTestCase {
    static let sizes = [(80, 24), (120, 40)]
    nonisolated(unsafe) static var store: Store?

    /// One demo store for the whole class: building it signs a few hundred payloads.
    func demoStore() throws -> Store {
        if let store = Self.store { return store }
        let store = try DashboardFixture.demoStore()
        Self.store = store
        return store
    }

    func snapshot(_ name: String, _ prepare: (DashboardSession) -> Void) throws {
        for (width, height) in Self.sizes {
            let session = DashboardFixture.session(try demoStore(), width: width, height: height)
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

    func testDaily() throws {
        try snapshot("daily") { session in
            session.type(.char(":"))
            session.type("daily")
            session.type(.enter, .char("j"), .char("j"))
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
