import Foundation
import SubscriptionCore
import XCTest
import SubdeskTestKit

/// The desk as a login that may only read: the header names who it acts as, and the keys it
/// may not use say which role may, before any dialog, in the command line's words.
extension DashboardEndToEndTests {
    func testAReadLoginIsNamedAndToldWhatItMayNotDoBeforeAnyDialog() throws {
        database = Store.freshPostgresLocation(try TestEngine.requirePostgres())
        try buildDemoStore()
        let roles = try subdesk(["db", "init", "--roles", "--db", database])
        XCTAssertEqual(roles.status, 0, roles.output)
        let manager = "mgr_" + UUID().uuidString.prefix(8).lowercased()
        _ = try engineQuery(database, "CREATE ROLE \(manager) LOGIN IN ROLE subdesk_read")
        var parts = try XCTUnwrap(URLComponents(string: database))
        parts.user = manager
        let asManager = try XCTUnwrap(parts.string)

        try terminal.shell(commandLine("--db '\(asManager)'"))
        var screen = try terminal.waitFor(text: " subscriptions · ")
        XCTAssertTrue(screen.components(separatedBy: "\n")[0].contains("pg: \(manager) (read)"), screen)
        try terminal.send(literal: "/user-1010")
        try terminal.send(keys: "Enter")
        try terminal.waitFor(text: "1 subscription")
        try terminal.send(keys: "Enter")
        screen = try terminal.waitFor(text: "Status")
        XCTAssertTrue(screen.contains("⊘override") && screen.contains("⊘revalidate"), "the hints mark what this login may not use:\n\(screen)")

        try terminal.send(keys: "o")
        screen = try terminal.waitFor(text: "may not place or lift overrides")
        XCTAssertFalse(screen.contains("grant"), "no override dialog opened:\n\(screen)")
        try terminal.send(keys: "Escape", "r")
        screen = try terminal.waitFor(text: "may not revalidate subscriptions")
        XCTAssertFalse(screen.contains("asking Apple"), screen)
        try terminal.send(keys: "Escape")
        try terminal.send(literal: ":messages")
        try terminal.send(keys: "Enter")
        screen = try terminal.waitFor(text: "Messages of this session")
        XCTAssertTrue(screen.contains("\(manager) (subdesk_read) may not place or lift overrides: that needs subdesk_support or"), screen)
        XCTAssertTrue(screen.contains("\(manager) (subdesk_read) may not revalidate subscriptions: that needs"), screen)
        for word in ["LOCK", "INSERT", "UPDATE", "store_changes", "SELECT"] {
            XCTAssertFalse(screen.contains(word), "no SQL or lock names (\(word)):\n\(screen)")
        }
        try terminal.send(keys: "Escape", "q")
        XCTAssertEqual(waitForExit(), "EXIT=0")
    }
}
