import Foundation
import FakeApple
import SubscriptionCore
import XCTest

/// A 429 whose Retry-After is too large for any date (as Apple, a TLS-intercepting proxy
/// or any server `server_api_url` names could send) stops every Apple command cleanly:
/// no crash, the wait said to be far in the future and not waited out, and the action
/// audited where it is audited.
final class RetryAfterCLITests: SubdeskTestCase {
    static let hugeRetryAfters = ["1e300", "99999999999999999999999", "9300000000000000000"]
    static let farFuture = "Apple asks to wait until far in the future: not waited out"

    /// A fake Apple that answers everything with 429 and `retryAfter`.
    func rateLimitingApple(_ retryAfter: String) throws -> FakeAppleServer {
        let apple = try FakeAppleServer()
        apple.routeEverythingElse { _ in
            .json(["errorCode": 4290000, "errorMessage": "Rate limit exceeded."], status: 429, headers: ["Retry-After": retryAfter])
        }
        return apple
    }

    /// Runs `args` against a rate-limiting Apple for each huge Retry-After; checks it exits
    /// with `status` (not a signal), says the wait is far in the future, and asked Apple.
    func assertStopsCleanly(_ name: String, _ db: String, _ args: [String], status: Int32 = 1) throws {
        for value in Self.hugeRetryAfters {
            let apple = try rateLimitingApple(value)
            defer { apple.stop() }
            let r = try run(args + ["--db", db] + (try appleArguments(apple)))
            XCTAssertEqual(r.status, status, "\(name), Retry-After \(value): \(r.stderr)")
            XCTAssertTrue(r.stderr.contains("rate limited by Apple (HTTP 429); " + Self.farFuture), "\(name), \(value): \(r.stderr)")
            XCTAssertFalse(apple.requests.isEmpty, "\(name) asked Apple")
        }
    }

    func testRevalidateStopsAndAuditsTheFailure() throws {
        let db = try demoStoreFile()
        try assertStopsCleanly("revalidate", db, ["revalidate", "user-1013"])
        let failed = try audit(db).filter { ($0["action"] as? String) == "revalidate" }
        XCTAssertEqual(failed.count, Self.hugeRetryAfters.count, "\(failed)")
        for entry in failed {
            XCTAssertEqual(entry["outcome"] as? String, "failed", "\(entry)")
            XCTAssertTrue("\(entry["detail"] ?? "")".contains(Self.farFuture), "\(entry)")
        }
    }

    func testSweepStopsAndAuditsTheFailure() throws {
        let db = try demoStoreFile()
        try assertStopsCleanly("sweep", db, ["sweep", "--quiet"])
        let sweeps = try audit(db).filter { ($0["action"] as? String) == "sweep" }
        XCTAssertEqual(sweeps.count, Self.hugeRetryAfters.count, "\(sweeps)")
        for entry in sweeps {
            XCTAssertTrue("\(entry["outcome"] ?? "") \(entry["detail"] ?? "")".contains(Self.farFuture), "\(entry)")
        }
    }

    func testBackfillStopsAndAuditsTheStop() throws {
        let db = try demoStoreFile()
        let since = DateText.iso(DateText.nowMillis() - 86_400_000)
        try assertStopsCleanly("backfill", db, ["backfill", "--since", since, "--quiet"])
        let backfills = try audit(db).filter { ($0["action"] as? String) == "backfill" }
        XCTAssertEqual(backfills.count, Self.hugeRetryAfters.count, "\(backfills)")
        for entry in backfills {
            XCTAssertTrue("\(entry["outcome"] ?? "") \(entry["detail"] ?? "")".contains(Self.farFuture), "\(entry)")
        }
        let runs = try run(["backfill", "--list", "--db", db, "--json"])
        XCTAssertEqual(runs.status, 0, runs.stderr)
        XCTAssertEqual((try json(runs.stdout) as? [[String: Any]])?.count, Self.hugeRetryAfters.count, runs.stdout)
    }

    func testPingStops() throws {
        let db = try demoStoreFile()
        try assertStopsCleanly("ping", db, ["ping", "--wait", "1"])
    }

    /// `show --apple` still shows what the store holds (exit 0), with Apple's stop as a warning.
    func testShowAppleStops() throws {
        let db = try demoStoreFile()
        try assertStopsCleanly("show --apple", db, ["show", "user-1013", "--apple"], status: 0)
    }
}

extension SubdeskTestCase {
    /// Options that point subdesk at `apple` with a fresh key, for the demo store's app, waiting
    /// `timeout` seconds for each answer.
    func appleArguments(_ apple: FakeAppleServer, timeout: Double = 5) throws -> [String] {
        let key = dir + "/AuthKey_RATE.p8"
        if !FileManager.default.fileExists(atPath: key) {
            let made = try runToEnd("/usr/bin/env", ["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", key])
            XCTAssertEqual(made.status, 0, made.output)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: key)
        }
        let base = apple.baseURL.absoluteString
        return ["--api-key-file", key, "--api-key-id", "RATEKEY001", "--api-issuer-id", "57246542-96fe-1a63-e053-0824d011072a",
                "--bundle-id", "com.example.subdesk.demo", "--server-api-url", base + "/prod",
                "--server-api-sandbox-url", base + "/sandbox", "--timeout", String(timeout)]
    }

    /// The audit log, newest first, as `subdesk audit --json` prints it.
    func audit(_ db: String) throws -> [[String: Any]] {
        let r = try run(["audit", "--db", db, "--json", "--limit", "1000"])
        XCTAssertEqual(r.status, 0, r.stderr)
        return try json(r.stdout) as? [[String: Any]] ?? []
    }
}
