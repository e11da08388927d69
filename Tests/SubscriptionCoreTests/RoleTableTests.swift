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

    /// Every action subdesk's commands audit is in the table of audit actions, so no command
    /// meets the audit log's trigger refusing its own entry on PostgreSQL, and the table
    /// lists no action nothing writes.
    func testEveryAuditedActionIsInTheTableOfAuditActions() throws {
        let sources = Self.readme.deletingLastPathComponent().appendingPathComponent("Sources/SubscriptionCore")
        var written = Set<String>()
        let files = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)!.compactMap { $0 as? URL }
        for file in files where file.pathExtension == "swift" {
            let text = try String(contentsOf: file, encoding: .utf8)
            for match in text.matches(of: #/AuditEntry\((?s:.){0,300}?action: "([a-z_]+)"/#) { written.insert(String(match.1)) }
        }
        written.insert(ConsentWithdrawal.handledAction)
        written.insert(Operations.retentionImportAction)
        for action in [RetentionConsole.uploadAction, RetentionConsole.deleteAction, RetentionConsole.defaultAction,
                       RetentionConsole.realtimeURLAction, RetentionConsole.performanceTestAction] { written.insert(action) }
        for kind in [Override.Kind.grant, .revoke] { written.insert("override_\(kind.rawValue)") }
        XCTAssertGreaterThan(written.count, 10, "the audited actions were found: \(written)")
        let table = Set(PostgresRoles.auditActions.flatMap(\.actions))
        XCTAssertEqual(written.subtracting(table).sorted(), [], "audited, but no role may write it")
        XCTAssertEqual(table.subtracting(written).sorted(), [], "in the table, but nothing audits it")
        XCTAssertEqual(table.count, PostgresRoles.auditActions.flatMap(\.actions).count, "each action is listed once")
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
