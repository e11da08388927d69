import Foundation
import XCTest
@testable import SubscriptionCore

/// What each role is told when the server refuses it, and who the records name: the
/// database user, in overrides, lifts and the audit log alike. Runs when
/// SUBDESK_TEST_POSTGRES names a server (`scripts/pg-cluster`).
extension PostgresHardeningTests {
    func testARefusedRoleIsToldWhoItIsWhatItMayNotDoAndWhoMay() throws {
        try requirePostgres()
        let made = try bodies(4, firstInstance: 880)
        let file = dir + "/four.ndjson"
        try Data(made.lines.joined(separator: Data("\n".utf8))).write(to: URL(fileURLWithPath: file))
        XCTAssertEqual(try run(["ingest", "--db", location, "--quiet"] + ReliabilityTests.policyFlags + [file]).status, 0)
        let otid = try XCTUnwrap(made.subscriptions.first)
        let manager = try login("mgr", in: "subdesk_read")
        let placed = try run(["override", "grant", otid, "--until", "+1d", "--reason", "goodwill", "--db", try uri(as: manager)])
        XCTAssertEqual(placed.status, 1, placed.stderr)
        XCTAssertTrue(placed.stderr.contains("\(manager) (subdesk_read) may not place or lift overrides: that needs "
                                             + "subdesk_support or subdesk_operator"), placed.stderr)
        XCTAssertFalse(placed.stderr.contains("INSERT INTO"), "no cut SQL statement: \(placed.stderr)")

        let made2 = try bodies(1, firstInstance: 890)
        let one = dir + "/one.ndjson"
        try made2.lines[0].write(to: URL(fileURLWithPath: one))
        let ingested = try run(["ingest", "--db", try uri(as: manager)] + ReliabilityTests.policyFlags + [one])
        XCTAssertNotEqual(ingested.status, 0, ingested.stderr)
        // Ingest stops its batch and says why: the server's refusal in the role model's words.
        XCTAssertTrue(ingested.stderr.contains("\(manager) (subdesk_read) may not INSERT on "), ingested.stderr)
        XCTAssertTrue(ingested.stderr.contains("that needs subdesk_intake or subdesk_operator"), ingested.stderr)

        let receiver = try login("receiver", in: "subdesk_intake")
        let byIntake = try run(["override", "grant", otid, "--until", "+1d", "--reason", "goodwill", "--db", try uri(as: receiver)])
        XCTAssertEqual(byIntake.status, 1, byIntake.stderr)
        XCTAssertTrue(byIntake.stderr.contains("\(receiver) (subdesk_intake) may not place or lift overrides: that needs "
                                               + "subdesk_support or subdesk_operator"), byIntake.stderr)

        let clerk = try login("clerk", in: "subdesk_support")
        let purge = try run(["quarantine", "purge", "--before", "-1d", "--reason", "tidy", "--db", try uri(as: clerk)])
        XCTAssertEqual(purge.status, 1, purge.stderr)
        XCTAssertTrue(purge.stderr.contains("\(clerk) (subdesk_support) may not replay or purge quarantined bodies: that needs "
                                            + "subdesk_operator"), purge.stderr)

        // The name the client gives is not what is recorded: the database user is, everywhere.
        let granted = try run(["override", "grant", otid, "--until", "+1d", "--reason", "goodwill", "--operator", "someone-else",
                               "--db", try uri(as: clerk)])
        XCTAssertEqual(granted.status, 0, granted.stderr)
        let listed = try run(["override", "list", "--db", try uri(as: clerk), "--json"])
        XCTAssertTrue(listed.stdout.contains("\"operator\" : \"\(clerk)\"") || listed.stdout.contains("\"operator\":\"\(clerk)\""), listed.stdout)
        XCTAssertFalse(listed.stdout.contains("someone-else"), listed.stdout)
        let audit = try run(["audit", "--db", location, "--json"])
        XCTAssertTrue(audit.stdout.contains(clerk), audit.stdout)
        XCTAssertFalse(audit.stdout.contains("someone-else"), audit.stdout)
    }
}
