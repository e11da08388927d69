import XCTest
import SubscriptionCore
import TerminalUI
@testable import Dashboard

/// The override dialog, a detail with an override in force, and the audit log, at both sizes.
final class OperatorSnapshotTests: XCTestCase {
    nonisolated(unsafe) static var store: Store?

    /// A demo store with a few operator actions at fixed instants, so the log renders the same every run.
    func operatorStore() throws -> Store {
        if let store = Self.store { return store }
        // Three operators' entries through one connection: on PostgreSQL the server would
        // record that connection's user for all three, so this rendering test keeps SQLite
        // (PostgresRoleTests covers the server's operator).
        let store = try DashboardFixture.demoStore(engine: .sqlite)
        let anchor = DashboardFixture.anchor
        let hour: Millis = 3_600_000
        try store.write {
            _ = try store.audit.append(AuditEntry(at: anchor - 6 * hour, operatorName: "cron", action: .sweep, target: nil,
                                                 reason: nil, outcome: "checked 3, renewed 1, expired 1, changed 0, unchanged 1, failed 0"))
        }
        let ana = Operations(store: store, operatorName: "ana")
        let ben = Operations(store: store, operatorName: "ben")
        _ = try ana.grant("2000000400001301", until: DateText.parse("2026-12-31")!, reason: "goodwill, ticket 4411", now: anchor - 2 * hour)
        let revoke = try ana.revoke("2000000400000101", reason: "chargeback dispute", now: anchor - 90 * 60_000)
        _ = try ben.lift(overrideId: revoke.id, reason: "dispute withdrawn", now: anchor - hour)
        try store.write {
            _ = try store.audit.append(AuditEntry(
                at: anchor - 30 * 60_000, operatorName: "ana", action: .revalidate, target: "2000000400000901", reason: nil,
                outcome: "failed", detail: "revalidation is not configured: no App Store Server API key (api_key_file, "
                    + "api_key_id, api_issuer_id) and no stored receipt for 2000000400000901 to send to verifyReceipt"))
        }
        Self.store = store
        return store
    }

    func snapshot(_ name: String, _ prepare: (DashboardSession) -> Void) throws {
        for (width, height) in ScreenSnapshotTests.sizes {
            let session = DashboardFixture.session(try operatorStore(), width: width, height: height)
            prepare(session)
            Snapshot.assertLines(session.screenLines, named: "\(name)-\(width)x\(height)")
        }
    }

    func open(_ user: String, _ session: DashboardSession) {
        session.type(.char("/"))
        session.type(user)
        session.type(.enter, .enter)
    }

    func testOverrideDialogWithAValidationError() throws {
        try snapshot("override-dialog") { session in
            open("user-1013", session)
            session.type(.char("o"), .tab)
            session.type("2026-13-45")
            session.type(.tab)
            session.type("goodwill, ticket 4411")
            session.type(.tab, .enter)
        }
    }

    func testOverrideDialogAskingToConfirm() throws {
        try snapshot("override-confirm") { session in
            open("user-1013", session)
            session.type(.char("o"), .tab)
            session.type("2026-12-31")
            session.type(.tab)
            session.type("goodwill, ticket 4411")
            session.type(.tab, .enter)
        }
    }

    func testDetailWithAnOverrideInForce() throws {
        try snapshot("detail-override") { open("user-1014", $0) }
    }

    func testAuditLog() throws {
        try snapshot("audit") { session in
            session.type(.char(":"))
            session.type("audit")
            session.type(.enter, .char("j"))
        }
    }
}
