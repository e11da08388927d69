import Foundation
import XCTest
@testable import SubscriptionCore
import SubdeskScenarios
import SubdeskTestKit

/// What a hostile or broken world sends, met as it arrives: CGI requests with real
/// environment variables, stores and files tampered with from outside.
final class HardeningTests: SubdeskTestCase, RunsOnEveryEngine {
    static let root = SubdeskTestCase.repoRoot + "/sample-data/test-ca/root.der"
    static let policyFlags = ["--root-ca", root, "--bundle-id", ScenarioBuilder.demoBundleId,
                              "--app-apple-id", String(ScenarioBuilder.demoAppAppleId)]

    func makeStore() throws -> String {
        let db = Store.testLocation(file: dir + "/store.db")
        XCTAssertEqual(try run(["init", "--db", db]).status, 0)
        return db
    }

    func cgiEnvironment(length: Int?) -> [String: String] {
        var env = ["REQUEST_METHOD": "POST", "GATEWAY_INTERFACE": "CGI/1.1", "REMOTE_ADDR": "192.0.2.7"]
        if let length { env["CONTENT_LENGTH"] = String(length) }
        return env
    }

    func sqlite(_ db: String, _ sql: String) throws -> String { try engineQuery(db, sql) }

    /// Runs subdesk under GNU time with stdin from `input`: its exit status, stdout and peak
    /// resident memory in KiB. (rusage from a child of this test process would count the test
    /// runner's own memory, which the child holds until it execs.)
    func runMeasured(_ args: [String], input: String, env: [String: String]) throws -> (status: Int32, stdout: String, maxRSSKiB: Int) {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/time") else {
            throw XCTSkip("GNU time is not installed (apt-get install time): peak memory is not measured")
        }
        let rss = dir + "/rss"
        let quoted = ([Self.binary] + args).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        let r = try run(["-c", "/usr/bin/time -o '\(rss)' -f %M \(quoted) < '\(input)'"], env: env, executable: "/bin/sh")
        let text = try String(contentsOfFile: rss, encoding: .utf8)
        let kib = try XCTUnwrap(text.split(separator: "\n").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }.last, text)
        return (r.status, r.stdout, kib)
    }

    func testA50MBBodyIsAnswered413InBoundedMemoryAndKeepsAPrefix() throws {
        let db = try makeStore()
        let big = dir + "/big.body"
        let size = 50_000_000
        _ = FileManager.default.createFile(atPath: big, contents: nil)
        let handle = try XCTUnwrap(FileHandle(forWritingAtPath: big))
        let chunk = Data(repeating: UInt8(ascii: "{"), count: 1 << 20)
        for _ in 0..<(size / chunk.count) { handle.write(chunk) }
        handle.write(Data(repeating: UInt8(ascii: "{"), count: size % chunk.count))
        try handle.close()
        let r = try runMeasured(["ingest", "--cgi", "--db", db] + Self.policyFlags, input: big, env: cgiEnvironment(length: size))
        XCTAssertTrue(r.stdout.hasPrefix("Status: 413 Payload Too Large"), r.stdout)
        XCTAssertLessThan(r.maxRSSKiB, 64 * 1024, "peak RSS \(r.maxRSSKiB) KiB for a 50 MB body")
        XCTAssertEqual(try sqlite(db, "SELECT length(body), body_bytes, times_seen FROM quarantine"), "65536|50000000|1")
        // Sent again without CONTENT_LENGTH: still bounded, recognised as the same body by its digest.
        let again = try runMeasured(["ingest", "--cgi", "--db", db] + Self.policyFlags, input: big, env: cgiEnvironment(length: nil))
        XCTAssertTrue(again.stdout.hasPrefix("Status: 413"), again.stdout)
        XCTAssertLessThan(again.maxRSSKiB, 64 * 1024)
        XCTAssertEqual(try sqlite(db, "SELECT count(*), sum(times_seen) FROM quarantine"), "1|2")
    }

    /// Each post is a CGI process of its own; SUBDESK_JUNK_POSTS sets how many (default 250;
    /// 1,000 or more for a soak).
    func testTheSameJunkPostedHundredsOfTimesGrowsTheStoreByOneBody() throws {
        let posts = Int(ProcessInfo.processInfo.environment["SUBDESK_JUNK_POSTS"] ?? "").map { min(max($0, 2), 100_000) } ?? 250
        let db = try makeStore()
        let junk = Data(#"{"junk":"\#(String(repeating: "z", count: 2000))"}"#.utf8)
        for i in 0..<posts {
            let r = try run(["ingest", "--cgi", "--db", db] + Self.policyFlags, stdin: junk, env: cgiEnvironment(length: junk.count))
            guard r.stdout.hasPrefix("Status: 400") else { return XCTFail("post \(i): \(r.stdout) \(r.stderr)") }
        }
        XCTAssertEqual(try sqlite(db, "SELECT count(*), sum(length(body)), sum(times_seen) FROM quarantine"), "1|\(junk.count)|\(posts)")
        let listed = try run(["quarantine", "--db", db])
        XCTAssertTrue(listed.stdout.contains("\(junk.count) bytes, seen \(posts) times"), listed.stdout)
        let doctor = try run(["doctor", "--db", db] + Self.policyFlags)
        XCTAssertTrue(doctor.stdout.contains("OK    kept bodies   0.0 MiB of rejected bodies kept, quarantine budget 256 MiB"), doctor.stdout)
    }

    func testATruncatedRequestAnswers503AndKeepsNothing() throws {
        let db = try makeStore()
        let body = Data(#"{"signedPayload":"eyJhbGciOiJFUzI1NiJ9"}"#.utf8)
        let r = try run(["ingest", "--cgi", "--db", db] + Self.policyFlags, stdin: body, env: cgiEnvironment(length: body.count + 500))
        XCTAssertTrue(r.stdout.hasPrefix("Status: 503"), r.stdout)
        XCTAssertTrue(r.stderr.contains("ended after \(body.count) of \(body.count + 500) bytes"), r.stderr)
        XCTAssertEqual(try sqlite(db, "SELECT (SELECT count(*) FROM quarantine) + (SELECT count(*) FROM notifications)"), "0")
    }

    func testPurgeFromTheCommandLineIsAudited() throws {
        let db = try makeStore()
        _ = try run(["ingest", "--db", db, "--quiet"] + Self.policyFlags + ["-"], stdin: Data("not json\n".utf8))
        let noDate = try run(["quarantine", "purge", "--db", db, "--reason", "x"])
        XCTAssertEqual(noDate.status, 2)
        XCTAssertTrue(noDate.stderr.contains("--before DATE"), noDate.stderr)
        let purged = try run(["quarantine", "purge", "--db", db, "--before", "-0h", "--reason", "scanner junk", "--operator", "ana"])
        XCTAssertEqual(purged.status, 0, purged.stderr)
        XCTAssertTrue(purged.stdout.contains("purged 1 quarantine entries"), purged.stdout)
        let audit = try run(["audit", "--db", db])
        XCTAssertTrue(audit.stdout.contains("quarantine_purge") && audit.stdout.contains("scanner junk"), audit.stdout)
        XCTAssertEqual(try sqlite(db, "SELECT count(*) FROM quarantine"), "0")
    }

    func testDoctorReportsAuditTriggersDroppedFromOutside() throws {
        let db = try makeStore()
        XCTAssertTrue(try run(["doctor", "--db", db] + Self.policyFlags).stdout.contains("append-only (triggers in place)"))
        _ = try sqlite(db, "DROP TRIGGER audit_log_no_delete" + (PostgresLocation.isPostgres(db) ? " ON audit_log" : ""))
        let doctor = try run(["doctor", "--db", db] + Self.policyFlags)
        XCTAssertEqual(doctor.status, 1)
        XCTAssertTrue(doctor.stdout.contains("FAIL  audit log") && doctor.stdout.contains("audit_log_no_delete"), doctor.stdout)
    }

    func testAStoreFromANewerSubdeskIsRefusedForWritingAndReadWithAWarning() throws {
        let db = try makeStore()
        // Where each engine keeps the schema version.
        let version = PostgresLocation.isPostgres(db) ? "SELECT version FROM schema_version" : "PRAGMA user_version"
        _ = try sqlite(db, PostgresLocation.isPostgres(db) ? "UPDATE schema_version SET version = 99" : "PRAGMA user_version = 99")
        let body = try XCTUnwrap(try ReliabilityTests.signedBodies(count: 1, firstInstance: 810_000))
        let ingest = try run(["ingest", "--db", db] + Self.policyFlags + ["-"], stdin: body)
        XCTAssertNotEqual(ingest.status, 0)
        XCTAssertTrue(ingest.stderr.contains("schema version 99 was written by a newer subdesk"), ingest.stderr)
        let cgi = try run(["ingest", "--cgi", "--db", db] + Self.policyFlags, stdin: body, env: cgiEnvironment(length: body.count))
        XCTAssertTrue(cgi.stdout.hasPrefix("Status: 503"), cgi.stdout)
        for args in [["link", "user-1", "123"], ["override", "grant", "123", "--until", "+1d", "--reason", "x"]] {
            let r = try run(args + ["--db", db])
            XCTAssertNotEqual(r.status, 0, "\(args)")
            XCTAssertTrue(r.stderr.contains("newer subdesk"), "\(args): \(r.stderr)")
        }
        let show = try run(["search", "anything", "--db", db])
        XCTAssertEqual(show.status, 0, show.stderr)
        XCTAssertTrue(show.stderr.contains("written by a newer subdesk (schema 99); reading it without changing it"), show.stderr)
        let doctor = try run(["doctor", "--db", db] + Self.policyFlags)
        XCTAssertEqual(doctor.status, 1)
        XCTAssertTrue(doctor.stdout.contains("FAIL  schema") && doctor.stdout.contains("newer subdesk"), doctor.stdout)
        XCTAssertEqual(try sqlite(db, version), "99", "never migrated down or up")
        XCTAssertEqual(try sqlite(db, "SELECT count(*) FROM notifications"), "0")
    }

    func testWritableTrustFilesAreFlaggedByDoctorAndIntake() throws {
        let db = try makeStore()
        let root = dir + "/root.der"
        try FileManager.default.copyItem(atPath: Self.root, toPath: root)
        let config = dir + "/config"
        try "db = \(db)\nroot_ca = \(root)\nbundle_id = \(ScenarioBuilder.demoBundleId)\n".write(toFile: config, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o640], ofItemAtPath: config)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: root)
        XCTAssertFalse(try run(["doctor", "--config", config]).stdout.contains("trust files"))
        try FileManager.default.setAttributes([.posixPermissions: 0o666], ofItemAtPath: root)
        try FileManager.default.setAttributes([.posixPermissions: 0o660], ofItemAtPath: config)
        let doctor = try run(["doctor", "--config", config])
        XCTAssertEqual(doctor.status, 1)
        XCTAssertTrue(doctor.stdout.contains("root certificate \(root) can be written by every user (mode 666)"), doctor.stdout)
        XCTAssertTrue(doctor.stdout.contains("config file \(config) can be written by its group (mode 660)"), doctor.stdout)
        let ingest = try run(["ingest", "--config", config, "-"], stdin: Data())
        XCTAssertTrue(ingest.stderr.contains("warning: root certificate \(root) can be written by every user"), ingest.stderr)
    }

    /// A config file every local user may read is said by doctor when it names the store or a
    /// secret's file (at the top level or in a section), and not when it names neither.
    func testAConfigOthersCanReadIsWarnedAboutWhenItNamesSecrets() throws {
        let db = try makeStore()
        let config = dir + "/config"
        try "bundle_id = \(ScenarioBuilder.demoBundleId)\n".write(toFile: config, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: config)
        XCTAssertFalse(try run(["doctor", "--db", db, "--config", config]).stdout.contains("readable by every local user"))
        try """
            db = \(db)
            [key team]
            issuer_id = 57246542-96fe-1a63-e053-0824d011072a
            key_id = ABC123DEFG
            key_file = \(dir!)/key.p8
            [app demo]
            bundle_id = \(ScenarioBuilder.demoBundleId)
            key = team

            """.write(toFile: config, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: config)
        let doctor = try run(["doctor", "--config", config])
        XCTAssertTrue(doctor.stdout.contains("WARN  config file   \(config) is readable by every local user (mode 644) and names db, "
                                             + "[key team] key_file: chmod o-r it"), doctor.stdout)
        try FileManager.default.setAttributes([.posixPermissions: 0o640], ofItemAtPath: config)
        XCTAssertFalse(try run(["doctor", "--config", config]).stdout.contains("readable by every local user"))
    }
}
