import Foundation
import XCTest
@testable import SubscriptionCore

/// The README's table of role rights is `PostgresRoles.rights`, as `PostgresRoles.markdown`
/// writes it; the role-matrix test (PostgresRoleTests) proves the server enforces the same.
final class RoleTableTests: XCTestCase {
    static let readme = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("README.md")

    func testTheReadmeShowsTheRightsTheRolesAreGiven() throws {
        let readme = try String(contentsOf: Self.readme, encoding: .utf8)
        let table = PostgresRoles.markdown.split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.isEmpty ? "" : "  " + $0 }.joined(separator: "\n")
        XCTAssertTrue(readme.contains(table), "README.md's role table differs from PostgresRoles.rights; it should read:\n\(table)")
    }

    /// Every action subdesk writes (an `AuditEntry` takes only an `AuditAction`) is in the
    /// table of audit actions, or written only inside the owner's functions, so no command
    /// meets the audit log's trigger refusing its own entry on PostgreSQL; each once.
    func testEveryAuditActionIsInTheTableOfAuditActions() throws {
        let table = PostgresRoles.auditActions.flatMap(\.actions) + PostgresRoles.ownerFunctionAuditActions
        XCTAssertEqual(Set(table), Set(AuditAction.allCases), "each action is in the table, or the owner's functions write it")
        XCTAssertEqual(table.count, Set(table).count, "each action is listed once")
        for action in AuditAction.allCases where !PostgresRoles.ownerFunctionAuditActions.contains(action) {
            XCTAssertFalse(PostgresRoles.auditWriters(of: action).isEmpty, "\(action.rawValue) has a role that may write it")
        }
    }

    /// What the matrix and the README rest on: support and read never write derived state,
    /// and no human role writes the chain memory.
    func testTheRightsKeepDerivedStateAndChainMemoryToTheVerifyingRoles() {
        for role in ["subdesk_read", "subdesk_support"] {
            for table in PostgresRoles.derived {
                for privilege in [PostgresRoles.Privilege.insert, .delete, .truncate] {
                    XCTAssertFalse(PostgresRoles.allows(role, privilege, on: table), "\(role) \(privilege) \(table)")
                }
                XCTAssertFalse(PostgresRoles.allows(role, .update, on: table, column: "status"), "\(role) may update \(table)")
            }
        }
        for role in ["subdesk_read", "subdesk_support", "subdesk_operator"] {
            XCTAssertFalse(PostgresRoles.allows(role, .insert, on: "verified_chains"), role)
            XCTAssertFalse(PostgresRoles.allows(role, .update, on: "verified_chains"), role)
        }
        // Nor may they lock a table intake writes (LOCK TABLE stronger than ROW EXCLUSIVE
        // needs a table-wide UPDATE, DELETE or TRUNCATE), but the writers' own lock.
        for role in PostgresRoles.all where !PostgresRoles.tableLockers.contains(role) {
            for table in PostgresRoles.tables where table != "store_changes" {
                for privilege in [PostgresRoles.Privilege.update, .delete, .truncate] {
                    XCTAssertFalse(PostgresRoles.allows(role, privilege, on: table), "\(role) may lock \(table) (\(privilege))")
                }
            }
        }
        XCTAssertTrue(PostgresRoles.routines.contains { $0.name == "subdesk_drop_empty_subscriber" && $0.roles.contains("subdesk_support") })
        XCTAssertTrue(PostgresRoles.allows("subdesk_support", .update, on: "subscriptions", column: "subscriber_id"))
        XCTAssertFalse(PostgresRoles.allows("subdesk_support", .update, on: "subscriptions"))
    }
}
