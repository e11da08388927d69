import Foundation
import XCTest
@testable import SubscriptionCore

/// What only a PostgreSQL store has: database roles, and an audit log whose operator the
/// server records. Runs when SUBDESK_TEST_POSTGRES names a server (`scripts/pg-cluster`).
final class PostgresRoleTests: XCTestCase {
    var base: String!
    var location: String!
    var owner: Store!
    var suffix: String!

    override func setUpWithError() throws {
        guard let base = ProcessInfo.processInfo.environment["SUBDESK_TEST_POSTGRES"], !base.isEmpty else {
            throw XCTSkip("SUBDESK_TEST_POSTGRES is not set (scripts/pg-cluster start)")
        }
        self.base = base
        location = Store.freshPostgresLocation(base)
        owner = try Store(path: location)
        try owner.installRoles()
        suffix = String(UUID().uuidString.prefix(8)).lowercased()
    }

    /// A store opened as a new login user who is a member of `role`.
    func open(as role: String, mode: Store.OpenMode = .existing) throws -> (store: Store, user: String) {
        let user = "\(role.replacingOccurrences(of: "subdesk_", with: ""))_\(suffix!)"
        try owner.executeForTesting("CREATE ROLE \(user) LOGIN IN ROLE \(role)")
        var parts = try XCTUnwrap(URLComponents(string: location))
        parts.user = user
        return (try Store(path: try XCTUnwrap(parts.string), mode: mode), user)
    }

    func notification(_ uuid: String, id: String) -> Data {
        TestKit.body(type: "SUBSCRIBED", subtype: "INITIAL_BUY", uuid: uuid,
                     transaction: TestKit.transaction(id: id, original: id), renewal: TestKit.renewal(original: id))
    }

    func assertRefused(_ what: String, _ body: () throws -> Void, file: StaticString = #filePath, line: UInt = #line) {
        do {
            try body()
            XCTFail("\(what) was allowed", file: file, line: line)
        } catch let e as StoreError {
            XCTAssertEqual(e.sqlState, "42501", "\(what): \(e)", file: file, line: line)
        } catch {
            XCTFail("\(what): \(error)", file: file, line: line)
        }
    }

    func testEachRoleCanDoWhatItShouldAndNothingMore() throws {
        // Something to look at, written by the owner.
        guard case .stored = try TestKit.intake(owner).ingest(notification(UUID().uuidString.lowercased(), id: "2000000955500001")) else {
            return XCTFail("the owner could not ingest")
        }
        let now = DateText.nowMillis()

        // Read-only: looks everything up, writes nothing.
        let reader = try open(as: "subdesk_read", mode: .reading).store
        XCTAssertTrue(reader.isReadOnly)
        XCTAssertNotNil(try reader.subscription(originalTransactionId: "2000000955500001"))
        XCTAssertEqual(try reader.notificationCount(), 1)
        assertRefused("ingest as read") { _ = try TestKit.intake(reader).ingest(self.notification(UUID().uuidString.lowercased(), id: "2000000955500002")) }
        assertRefused("override as read") { _ = try Operations(store: reader, operatorName: "x").grant("2000000955500001", until: now + 86_400_000, reason: "r") }

        // Intake: adds notifications and derives state; no overrides, no audit entries,
        // and a stored notification is never changed or deleted.
        let intake = try open(as: "subdesk_intake").store
        guard case .stored = try TestKit.intake(intake).ingest(notification(UUID().uuidString.lowercased(), id: "2000000955500003")) else {
            return XCTFail("intake could not ingest")
        }
        XCTAssertNotNil(try owner.subscription(originalTransactionId: "2000000955500003"))
        assertRefused("override as intake") { _ = try Operations(store: intake, operatorName: "x").grant("2000000955500003", until: now + 86_400_000, reason: "r") }
        assertRefused("update a notification as intake") { try intake.executeForTesting("UPDATE notifications SET type = 'REFUND'") }
        assertRefused("delete a notification as intake") { try intake.executeForTesting("DELETE FROM notifications") }
        assertRefused("purge quarantine as intake") { _ = try Operations(store: intake, operatorName: "x").purgeQuarantine(before: now, reason: "r") }

        // Support: overrides (audited), but no notifications and no purges.
        let (support, supportUser) = try open(as: "subdesk_support")
        let placed = try Operations(store: support, operatorName: "somebody-else").grant("2000000955500001", until: now + 86_400_000, reason: "goodwill")
        XCTAssertEqual(try owner.override(id: placed.id)?.kind, .grant)
        assertRefused("ingest as support") { _ = try TestKit.intake(support).ingest(self.notification(UUID().uuidString.lowercased(), id: "2000000955500004")) }
        assertRefused("purge quarantine as support") { _ = try Operations(store: support, operatorName: "x").purgeQuarantine(before: now, reason: "r") }

        // Operator: purges the quarantine, audited.
        let (op, operatorUser) = try open(as: "subdesk_operator")
        _ = try Operations(store: op, operatorName: "x").purgeQuarantine(before: now, reason: "spring cleaning")

        // The audit log names the database users, whatever name the client gave.
        let entries = try owner.audit()
        XCTAssertEqual(entries.map(\.operatorName), [supportUser, operatorUser])
        XCTAssertEqual(entries.map(\.action), ["override_grant", "quarantine_purge"])
    }

    func testTheAuditLogRefusesUpdateAndDeleteForEveryRoleAndTheOwner() throws {
        _ = try Operations(store: owner, operatorName: "x").grant(try seed(), until: DateText.nowMillis() + 86_400_000, reason: "goodwill")
        var stores: [(String, Store)] = [("owner", owner)]
        for role in PostgresRoles.all {
            stores.append((role, try open(as: role, mode: role == "subdesk_read" ? .reading : .existing).store))
        }
        for (who, store) in stores {
            for statement in ["UPDATE audit_log SET reason = 'changed'", "DELETE FROM audit_log", "TRUNCATE audit_log"] {
                do {
                    try store.executeForTesting(statement)
                    XCTFail("\(who): \(statement) was allowed")
                } catch let e as StoreError {
                    // The owner meets the triggers; the roles meet their missing privileges first.
                    XCTAssertTrue(e.message.contains("append-only") || e.sqlState == "42501", "\(who): \(statement): \(e)")
                }
            }
        }
        XCTAssertEqual(try owner.audit().map(\.reason), ["goodwill"])
    }

    private func seed() throws -> String {
        guard case .stored = try TestKit.intake(owner).ingest(notification(UUID().uuidString.lowercased(), id: "2000000955500009")) else {
            throw XCTSkip("seed not stored")
        }
        return "2000000955500009"
    }
}
