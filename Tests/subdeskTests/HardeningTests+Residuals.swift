import Foundation
import XCTest
@testable import SubscriptionCore
@testable import SubdeskScenarios

/// Smaller things a hostile sender or a careless setting met: what the CGI answer echoes,
/// a replay that can do nothing, a schema name PostgreSQL would cut short.
extension HardeningTests {
    /// A V1 body whose `notification_type` carries ESC, BEL and a right-to-left override:
    /// the answer (which reaches the sender and the web server's log) shows them escaped,
    /// and the body is quarantined whole.
    func testTheCGIAnswerEscapesWhatItQuotesFromTheBody() throws {
        let db = try makeStore()
        let body = Data(#"{"notification_type":"X\u001b]0;pwned\u0007\u202eY","environment":"PROD"}"#.utf8)
        let r = try run(["ingest", "--cgi", "--db", db] + Self.policyFlags, stdin: body, env: cgiEnvironment(length: body.count))
        XCTAssertTrue(r.stdout.hasPrefix("Status: 400 Bad Request"), r.stdout)
        XCTAssertTrue(r.stdout.contains(#"V1 notification X\e]0;pwned\x07\u{202E}Y refused"#), r.stdout)
        let answer = r.stdout.components(separatedBy: "\r\n\r\n").last ?? ""
        XCTAssertFalse(answer.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 || $0.value == 0x202E }, answer)
        XCTAssertEqual(try sqlite(db, "SELECT length(body) FROM quarantine"), String(body.count))
    }

    /// `quarantine replay` of a number that names nothing waiting: exit 1 with the reason.
    func testReplayingAnEntryThatCannotBeReplayedExitsOne() throws {
        let db = try makeStore()
        let junk = Data(#"{"junk":true}"#.utf8)
        XCTAssertTrue(try run(["ingest", "--cgi", "--db", db] + Self.policyFlags, stdin: junk,
                              env: cgiEnvironment(length: junk.count)).stdout.hasPrefix("Status: 400"))
        let missing = try run(["quarantine", "replay", "99", "--db", db] + Self.policyFlags)
        XCTAssertEqual(missing.status, 1, missing.stdout + missing.stderr)
        XCTAssertTrue(missing.stderr.contains("#99 cannot be replayed: there is no quarantine entry #99"), missing.stderr)
        XCTAssertTrue(missing.stdout.contains("replayed 0: stored 0, duplicates 0, still refused 0, 1 could not be replayed"), missing.stdout)

        _ = try sqlite(db, "UPDATE quarantine SET resolved_ms = 1, resolution = 'stored as n-1 by replay' WHERE id = 1")
        let resolved = try run(["quarantine", "replay", "1", "--db", db] + Self.policyFlags)
        XCTAssertEqual(resolved.status, 1, resolved.stdout + resolved.stderr)
        XCTAssertTrue(resolved.stderr.contains("#1 cannot be replayed: it was resolved already (stored as n-1 by replay)"), resolved.stderr)
    }

    /// A `?schema=` longer than PostgreSQL's 63-byte names is refused, naming the limit,
    /// before anything connects (PostgreSQL would cut it short and two stores would be one).
    func testASchemaNameLongerThanPostgreSQLKeepsIsRefused() throws {
        let long = String(repeating: "s", count: 64)
        let r = try run(["init", "--db", "postgresql://ana@/postgres?host=\(dir!)&schema=\(long)"])
        XCTAssertNotEqual(r.status, 0)
        XCTAssertTrue(r.stderr.contains("is 64 bytes; PostgreSQL names are at most 63 bytes"), r.stderr)
        XCTAssertNoThrow(try PostgresLocation("postgresql://ana@/postgres?schema=\(long.dropLast())"), "63 bytes is a name PostgreSQL keeps")
    }
}

extension HardeningTests {
    /// Distinct junk posted past the quarantine budget: the quarantine stops adding rows
    /// and counts each body on one entry, so the total refused stays right.
    func testDistinctJunkPastTheBudgetIsCountedOnOneEntry() throws {
        let db = try makeStore()
        let config = dir + "/subdesk.conf"
        try "quarantine_budget_mb = 0\n".write(toFile: config, atomically: true, encoding: .utf8)
        var bytes = 0
        for i in 0..<40 {
            let junk = Data(#"{"junk":\#(i)}"#.utf8)
            bytes += junk.count
            let r = try run(["ingest", "--cgi", "--db", db, "--config", config] + Self.policyFlags, stdin: junk,
                            env: cgiEnvironment(length: junk.count))
            guard r.stdout.hasPrefix("Status: 400") else { return XCTFail("post \(i): \(r.stdout) \(r.stderr)") }
        }
        XCTAssertEqual(try sqlite(db, "SELECT count(*), sum(times_seen), sum(body_bytes), sum(length(body)) FROM quarantine"),
                       "1|40|\(bytes)|0")
        // The feed tells of the flood once a minute, not once a request.
        XCTAssertEqual(try sqlite(db, "SELECT count(*) FROM intake_log"), "1")
        let listed = try run(["quarantine", "--db", db])
        XCTAssertTrue(listed.stdout.contains("seen 40 times"), listed.stdout)
        XCTAssertTrue(listed.stdout.contains("past the quarantine budget: refused bodies counted here, not kept; the latest: "),
                      listed.stdout)
        let replay = try run(["quarantine", "replay", "--db", db] + Self.policyFlags)
        XCTAssertEqual(replay.status, 1, "nothing of those bodies is left to replay: \(replay.stderr)")
    }
}

extension HardeningTests {
    /// A validly signed notification whose transaction's productId holds U+0000: stored
    /// text would end at it (SQLite) or could not hold it (PostgreSQL), so the body is
    /// refused with that reason and quarantined whole, and no subscription is stored.
    func testASignedStringHoldingNULIsRefusedAndQuarantinedWhole() throws {
        let db = try makeStore()
        let signer = try SampleData(directory: SubdeskTestCase.repoRoot + "/sample-data").signer()
        let now = DateText.nowMillis()
        let transaction: [String: Any] = [
            "transactionId": "9300", "originalTransactionId": "9300", "productId": "app.monthly\u{0}.free",
            "bundleId": ScenarioBuilder.demoBundleId, "purchaseDate": now - 1000, "expiresDate": now + 86_400_000,
            "signedDate": now, "environment": "Production", "type": "Auto-Renewable Subscription"]
        let payload: [String: Any] = [
            "notificationType": "SUBSCRIBED", "subtype": "INITIAL_BUY", "notificationUUID": "nul-1", "signedDate": now,
            "data": ["bundleId": ScenarioBuilder.demoBundleId, "environment": "Production", "appAppleId": ScenarioBuilder.demoAppAppleId,
                     "signedTransactionInfo": try signer.sign(payload: try JSONSerialization.data(withJSONObject: transaction))]]
        let body = try JSONSerialization.data(withJSONObject: [
            "signedPayload": try signer.sign(payload: try JSONSerialization.data(withJSONObject: payload))])
        let r = try run(["ingest", "--cgi", "--db", db] + Self.policyFlags, stdin: body, env: cgiEnvironment(length: body.count))
        XCTAssertTrue(r.stdout.hasPrefix("Status: 400 Bad Request"), r.stdout)
        // The verifier names the payload and why it is refused.
        XCTAssertTrue(r.stdout.contains("signedTransactionInfo: payload: a string holds U+0000"), r.stdout)
        XCTAssertEqual(try sqlite(db, "SELECT length(body) FROM quarantine"), String(body.count), "the body is kept whole")
        XCTAssertEqual(try sqlite(db, "SELECT count(*) FROM subscriptions"), "0")
        let show = try run(["show", "9300", "--db", db])
        XCTAssertNotEqual(show.status, 0, show.stdout)

        // In the body itself (here a V1 body, allowed), the reason names the NUL.
        let v1 = Data(#"{"notification_type":"INITIAL_BUY\u0000X","environment":"PROD"}"#.utf8)
        let plain = try run(["ingest", "--cgi", "--allow-v1", "--db", db] + Self.policyFlags, stdin: v1, env: cgiEnvironment(length: v1.count))
        XCTAssertTrue(plain.stdout.contains("body: a string holds U+0000"), plain.stdout)
        XCTAssertEqual(try sqlite(db, "SELECT count(*) FROM quarantine WHERE length(body) = \(v1.count)"), "1")
    }
}
