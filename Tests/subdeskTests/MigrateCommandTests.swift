import Foundation
import XCTest
@testable import SubscriptionCore
import SubdeskTestKit

/// `subdesk migrate` and `subdesk db`, as a person moving a store would run them.
final class MigrateCommandTests: SubdeskTestCase, RunsOnEveryEngine {
    /// A copy between two SQLite files and a refused password name their engines: they run once.
    static let engineTests: Set<String>? = [
        "testAStoreBeingWrittenIsCopiedAsOneConsistentState",
        "testARoundTripThroughPostgreSQLLosesNothing",
    ]

    func demo() throws -> String {
        let path = dir + "/demo.db"
        let built = try run(["demo", "--db", path, "--no-dashboard"])
        XCTAssertEqual(built.status, 0, built.stderr)
        return path
    }

    /// What a support agent would look at, for every subscription of a store.
    func views(_ location: String) throws -> [String] {
        var out: [String] = []
        for id in ["2000000400000101", "2000000400502201", "2000000400001201", "user-1005"] {
            let shown = try run(["--db", location, "show", id])
            XCTAssertEqual(shown.status, 0, shown.stderr)
            out.append(shown.stdout)
        }
        let counts = try run(["--db", location, "counts", "--from", "2026-01-01", "--json"])
        XCTAssertEqual(counts.status, 0, counts.stderr)
        out.append(counts.stdout)
        let audit = try run(["--db", location, "audit", "--json"])
        out.append(audit.stdout)
        return out
    }

    func testACopyBetweenSQLiteFilesIsIdenticalAndATargetWithDataIsRefused() throws {
        let source = try demo()
        let copy = dir + "/copy.db"
        let moved = try run(["migrate", "--from", source, "--to", copy])
        XCTAssertEqual(moved.status, 0, moved.stderr)
        XCTAssertTrue(moved.stdout.contains("every table's rows are identical on both sides"), moved.stdout)
        // Six copies of the demo's 69 notifications.
        XCTAssertTrue(moved.stderr.contains("notifications: 414 rows copied"), moved.stderr)
        XCTAssertTrue(moved.stderr.contains("jws_headers: 1 row copied"), "one row is a row: \(moved.stderr)")
        XCTAssertEqual(try views(copy), try views(source))

        // Again into the same target: it holds data now, so the copy would mix two stores.
        let again = try run(["migrate", "--from", source, "--to", copy])
        XCTAssertEqual(again.status, 2, again.stderr)
        XCTAssertTrue(again.stderr.contains("already holds data"), again.stderr)
        XCTAssertEqual(try Store(path: copy, mode: .reading).notifications.count(), 414, "the target is unchanged")

        let missing = try run(["migrate", "--from", dir + "/nothing.db", "--to", dir + "/x.db"])
        XCTAssertEqual(missing.status, 2)
        XCTAssertTrue(missing.stderr.contains("no store at"), missing.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/x.db"), "nothing is created for a copy that cannot start")
    }

    func testAPasswordInAPostgresURIIsRefused() throws {
        let refused = try run(["--db", "postgres://alice:secret@db.example/subdesk", "show", "1"])
        XCTAssertEqual(refused.status, 1)
        XCTAssertTrue(refused.stderr.contains("the URI holds a password"), refused.stderr)
        XCTAssertFalse(refused.stderr.contains("secret"), "the password is not repeated: \(refused.stderr)")
        let roles = try run(["db", "init", "--roles", "--db", dir + "/s.db"])
        XCTAssertEqual(roles.status, 2)
        XCTAssertTrue(roles.stderr.contains("--roles is for a PostgreSQL store"), roles.stderr)
    }

    /// Intake goes on into the source while it is copied: the copy is one consistent state
    /// of it, checked against that state, and nothing that arrived later is in the copy.
    func testAStoreBeingWrittenIsCopiedAsOneConsistentState() throws {
        let source = Store.testLocation(file: dir + "/live.db")
        XCTAssertEqual(try run(["init", "--db", source]).status, 0)
        let bodies = dir + "/bodies.ndjson"
        try ReliabilityTests.signedBodies(count: 400, firstInstance: 600_000).write(to: URL(fileURLWithPath: bodies))
        XCTAssertEqual(try run(["ingest", "--db", source, "--quiet"] + ReliabilityTests.policyFlags + [bodies]).status, 0)
        let more = dir + "/more.ndjson"
        try ReliabilityTests.signedBodies(count: 1500, firstInstance: 700_000).write(to: URL(fileURLWithPath: more))
        let writer = try startQuietly(["ingest", "--db", source, "--quiet", "--batch-size", "20"] + ReliabilityTests.policyFlags + [more])
        let target = dir + "/copy.db"
        let copied = try run(["migrate", "--from", source, "--to", target, "--json"])
        let stillWriting = writer.isRunning
        writer.waitUntilExit()
        XCTAssertEqual(copied.status, 0, copied.stderr)
        XCTAssertTrue(copied.stdout.contains("\"identical\" : true"), copied.stdout)
        let inCopy = try Store(path: target, mode: .reading).notifications.count()
        let inSource = try Store(path: source, mode: .reading).notifications.count()
        XCTAssertGreaterThanOrEqual(inCopy, 400)
        XCTAssertEqual(inSource, 1900, "the writer finished")
        print("copied \(inCopy) of the \(inSource) notifications the source ended with; the writer was \(stillWriting ? "still" : "no longer") running when the copy ended")
    }

    /// SQLite to PostgreSQL and back: the same rows, and the same answers on every engine.
    func testARoundTripThroughPostgreSQLLosesNothing() throws {
        let postgres = try TestEngine.requirePostgres()
        let source = try demo()
        let pg = Store.freshPostgresLocation(postgres)
        let there = try run(["migrate", "--from", source, "--to", pg])
        XCTAssertEqual(there.status, 0, there.stderr)
        let back = dir + "/back.db"
        let returned = try run(["migrate", "--from", pg, "--to", back, "--json"])
        XCTAssertEqual(returned.status, 0, returned.stderr)
        XCTAssertTrue(returned.stdout.contains("\"identical\" : true"), returned.stdout)
        let sourceDigest = try Store(path: source, mode: .reading).upkeep.contentDigest()
        XCTAssertEqual(try Store(path: back, mode: .reading).upkeep.contentDigest(), sourceDigest)
        XCTAssertEqual(try Store(path: pg, mode: .reading).upkeep.contentDigest(), sourceDigest)
        let expected = try views(source)
        XCTAssertEqual(try views(pg), expected)
        XCTAssertEqual(try views(back), expected)

        // New rows after the copy get ids after the copied ones (the sequences moved on).
        let placed = try run(["--db", pg, "override", "grant", "2000000400000101", "--until", "2099-01-01", "--reason", "after the move"])
        XCTAssertEqual(placed.status, 0, placed.stderr)
        let doctor = try run(["--db", pg, "doctor"])
        XCTAssertTrue(doctor.stdout.contains("OK    audit log"), doctor.stdout)
        XCTAssertTrue(doctor.stdout.contains("PostgreSQL, as database user"), doctor.stdout)

        // The digest tells one changed value apart, in that table only.
        let changed = dir + "/changed.db"
        XCTAssertEqual(try run(["migrate", "--from", back, "--to", changed, "--quiet"]).status, 0)
        XCTAssertEqual(try engineQuery(changed, "UPDATE subscriptions SET auto_renew = 1 - auto_renew WHERE original_transaction_id = '2000000400000101'"), "")
        let differs = try Store(path: changed, mode: .reading).upkeep.contentDigest()
        XCTAssertEqual(Set(differs.keys.filter { differs[$0] != sourceDigest[$0] }), ["subscriptions"])

        let backup = dir + "/pg.dump"
        let dumped = try run(["--db", pg, "backup", backup])
        XCTAssertEqual(dumped.status, 0, dumped.stderr)
        XCTAssertGreaterThan((try FileManager.default.attributesOfItem(atPath: backup)[.size] as? NSNumber)?.intValue ?? 0, 10_000)
    }
}
