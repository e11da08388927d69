import Foundation
import FakeApple
import SubscriptionCore
import XCTest
import SubdeskTestKit

/// Runs the `subdesk` binary as a user or a script would; shared by the command-line tests.
class SubdeskTestCase: XCTestCase {
    static let repoRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    static let binary: String = {
        let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for dir in [beside, beside.deletingLastPathComponent(), beside.deletingLastPathComponent().deletingLastPathComponent()] {
            let candidate = dir.appendingPathComponent("subdesk").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return repoRoot + "/.build/debug/subdesk"
    }()

    var dir: String!

    override func setUpWithError() throws {
        // A child that exits before reading all its stdin must not take the test runner down.
        signal(SIGPIPE, SIG_IGN)
        dir = NSTemporaryDirectory() + "subdesk-cli-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: dir)
    }

    struct Result { var status: Int32; var stdout: String; var stderr: String }

    /// Every subscription's derived state, keyed by originalTransactionId.
    func states(_ db: String) throws -> [String: String] {
        let store = try Store(path: db)
        var result: [String: String] = [:]
        var cursor: PageCursor?
        let query = SubscriptionQuery()
        while true {
            let page = try store.subscriptions.page(query, after: cursor, limit: 500)
            guard let last = page.last else { break }
            for row in page {
                result[row.state.originalTransactionId] = "\(row.state) \(row.subscriber.userId ?? "") \(row.subscriber.appAccountToken ?? "")"
            }
            cursor = SubscriptionTable.cursor(for: last, in: query)
        }
        return result
    }


    /// Starts subdesk with `args` in the background, its output thrown away, for a test that
    /// works beside it (a writer while another command reads); the caller waits for it.
    func startQuietly(_ args: [String]) throws -> Process {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Self.binary)
        p.arguments = args
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        return p
    }

    @discardableResult
    func run(_ args: [String], stdin: Data? = nil, env: [String: String] = [:], executable: String? = nil) throws -> Result {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: executable ?? Self.binary)
        p.arguments = args
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_DATA_HOME"] = dir + "/data"
        environment["XDG_CONFIG_HOME"] = dir + "/config"
        environment["SUBDESK_SAMPLE_DATA"] = Self.repoRoot + "/sample-data"
        environment.removeValue(forKey: "SUBDESK_DB")
        environment.removeValue(forKey: "SUBDESK_CONFIG")
        for (k, v) in env { environment[k] = v }
        p.environment = environment
        let out = Pipe(), err = Pipe(), input = Pipe()
        p.standardOutput = out
        p.standardError = err
        p.standardInput = input
        try p.run()
        // Feed stdin on its own thread: a child may answer (and exit) before reading it all.
        let writer = DispatchGroup()
        writer.enter()
        DispatchQueue.global().async {
            if let stdin { try? input.fileHandleForWriting.write(contentsOf: stdin) }
            try? input.fileHandleForWriting.close()
            writer.leave()
        }
        let e = Shared(Data())
        let errReader = DispatchGroup()
        errReader.enter()
        DispatchQueue.global().async {
            let read = ChildOutput.readAll(err.fileHandleForReading)
            e.update { $0 = read }
            errReader.leave()
        }
        let o = ChildOutput.readAll(out.fileHandleForReading)
        errReader.wait()
        writer.wait()
        p.waitUntilExit()
        return Result(status: p.terminationStatus, stdout: String(decoding: o, as: UTF8.self), stderr: String(decoding: e.current, as: UTF8.self))
    }

    /// A demo store with every scenario once: a file, or in the PostgreSQL pass a new schema
    /// there, so the commands that read and change it run on both (the test must be marked
    /// RunsOnEveryEngine).
    func demoStore() throws -> String {
        try buildDemo(at: Store.testLocation(file: dir + "/demo.db"))
    }

    /// The same demo store as a SQLite file on every pass: for a test of what the command line
    /// does before it reads a store (an option's bounds, a header's parse).
    func demoStoreFile() throws -> String {
        try buildDemo(at: dir + "/demo.db")
    }

    private func buildDemo(at db: String) throws -> String {
        let r = try run(["demo", "--no-dashboard", "--copies", "1", "--db", db])
        XCTAssertEqual(r.status, 0, r.stderr)
        return db
    }

    func json(_ text: String) throws -> Any { try JSONSerialization.jsonObject(with: Data(text.utf8)) }

    /// NDJSON of every raw body in a store, oldest first.
    func rawBodies(_ db: String) throws -> Data {
        let r = try run(["notifications", "--db", db, "--ndjson", "--limit", "100000"])
        XCTAssertEqual(r.status, 0, r.stderr)
        return Data(r.stdout.utf8)
    }

}

/// The `subdesk` binary, driven as a user or a script would: exit codes, output, files.
final class CLITests: SubdeskTestCase, RunsOnEveryEngine {
    /// A CGI process answers one notification and exits: URLSession, and libcurl with the
    /// thirty-odd libraries behind it, stay out of the binary, in the `subdesk-http` helper
    /// that revalidation starts.
    /// What a manager mistypes is refused with what would have been right.
    func testCountsRefusesWhatMatchesNothingAndReadsOffsets() throws {
        let db = try demoStore()
        let offset = try run(["counts", "--db", db, "--tz", "+05:30", "--from", "2026-06-01", "--to", "2026-06-02", "--json"])
        XCTAssertEqual(offset.status, 0, offset.stderr)
        let text = try run(["counts", "--db", db, "--tz", "+05:30", "--from", "2026-06-01", "--to", "2026-06-02"])
        XCTAssertTrue(text.stdout.contains("time zone +05:30"), text.stdout)
        let badZone = try run(["counts", "--db", db, "--tz", "Mars/Olympus"])
        XCTAssertEqual(badZone.status, 2)
        XCTAssertTrue(badZone.stderr.contains("unknown time zone Mars/Olympus (use e.g. UTC, Europe/Paris or an offset such as +05:30)"), badZone.stderr)

        let typo = try run(["counts", "--db", db, "--where", "product=app.montly"])
        XCTAssertEqual(typo.status, 2, typo.stdout)
        XCTAssertTrue(typo.stderr.contains("no subscription has product app.montly: the product values there are "), typo.stderr)
        XCTAssertTrue(typo.stderr.contains("app.monthly"), typo.stderr)

        let metric = try run(["counts", "--db", db, "--metric", "churned"])
        XCTAssertEqual(metric.status, 2)
        XCTAssertTrue(metric.stderr.contains("--metric picks the one metric --by shows"), metric.stderr)

        let month = try run(["counts", "--db", db, "--from", "2026-13-01", "--to", "2026-13-02"])
        XCTAssertEqual(month.status, 2)
        XCTAssertTrue(month.stderr.contains("day 2026-13-01 is not a date: there is no month 13"), month.stderr)
        let day = try run(["counts", "--db", db, "--from", "2026-02-30", "--to", "2026-03-02"])
        XCTAssertTrue(day.stderr.contains("day 2026-02-30 is not a date: month 2 of 2026 has no day 30"), day.stderr)
        let shape = try run(["counts", "--db", db, "--from", "yesterday"])
        XCTAssertTrue(shape.stderr.contains("day yesterday is not YYYY-MM-DD"), shape.stderr)
    }

    func testTheBinaryLeavesURLSessionToTheHTTPHelper() throws {
        let linked = try runToEnd("/usr/bin/ldd", [Self.binary]).output
        XCTAssertTrue(linked.contains("libsqlite3"), linked)
        XCTAssertFalse(linked.contains("libFoundationNetworking"), linked)
        XCTAssertFalse(linked.contains("libcurl"), linked)
        let helper = URL(fileURLWithPath: Self.binary).deletingLastPathComponent().appendingPathComponent("subdesk-http").path
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: helper), "subdesk-http is built beside subdesk")
    }

    /// The binary starts the helper beside it: a refused connection comes back as URLSession
    /// saw it, and a helper path set on purpose that is wrong is named. (`run` reads stderr
    /// to its end, which the helper shares: it returns only once the helper has exited too.)
    func testRevalidationGoesThroughTheHelperBesideTheBinary() throws {
        let db = try demoStore()
        let receipt = dir + "/receipt.txt", secret = dir + "/shared-secret"
        try "dGVzdA==".write(toFile: receipt, atomically: true, encoding: .utf8)
        try "0123456789abcdef0123456789abcdef".write(toFile: secret, atomically: true, encoding: .utf8)
        chmod(secret, 0o600)
        let url = "http://127.0.0.1:\(try WebServerTests.freeLoopbackPort())/verifyReceipt"
        let args = ["revalidate", "user-1013", "--db", db, "--receipt-file", receipt, "--shared-secret-file", secret,
                    "--verify-receipt-url", url, "--timeout", "2"]
        let refused = try run(args)
        XCTAssertEqual(refused.status, 1, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("POST \(url): network error: connection refused"), refused.stderr)

        let missing = dir + "/nowhere/subdesk-http"
        let unfound = try run(args, env: ["SUBDESK_HTTP_HELPER": missing])
        XCTAssertEqual(unfound.status, 1, unfound.stderr)
        XCTAssertTrue(unfound.stderr.contains("HTTP helper not found: $SUBDESK_HTTP_HELPER is \(missing)"), unfound.stderr)
    }

    func testVersionAndHelp() throws {
        let v = try run(["--version"])
        XCTAssertEqual(v.status, 0)
        XCTAssertTrue(v.stdout.hasPrefix("subdesk "))
        let h = try run(["--help"])
        XCTAssertTrue(h.stdout.contains("ingest"))
        let ih = try run(["ingest", "--help"])
        XCTAssertTrue(ih.stdout.contains("--cgi"))
        let bad = try run(["frobnicate"])
        XCTAssertEqual(bad.status, 2)
        XCTAssertTrue(bad.stderr.contains("unknown command 'frobnicate'"))
        let typo = try run(["show", "--jsno", "x"])
        XCTAssertEqual(typo.status, 2)
        XCTAssertTrue(typo.stderr.contains("unknown option --jsno"))
    }

    func testShowJSONHasTheDocumentedFields() throws {
        let db = try demoStore()
        let r = try run(["show", "--db", db, "user-1010", "--json"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let o = try XCTUnwrap(try json(r.stdout) as? [String: Any])
        XCTAssertNotNil(o["subscriber"] as? [String: Any])
        let sub = try XCTUnwrap((o["subscriptions"] as? [[String: Any]])?.first)
        for key in ["originalTransactionId", "productId", "status", "entitled", "expiresDate", "autoRenewStatus",
                    "autoRenewProductId", "gracePeriodExpiresDate", "isInBillingRetryPeriod", "expirationIntent",
                    "environment", "ownershipType", "timeline"] {
            XCTAssertTrue(sub.keys.contains(key), "missing \(key)")
        }
        XCTAssertEqual(sub["status"] as? String, "grace_period")
        XCTAssertEqual(sub["entitled"] as? Bool, true)
        XCTAssertEqual(sub["expirationIntent"] as? Int, 2)
        XCTAssertTrue((sub["expiresDate"] as? String)?.hasSuffix("Z") ?? false, "ISO 8601 UTC")
        let timeline = try XCTUnwrap(sub["timeline"] as? [[String: Any]])
        XCTAssertEqual(timeline.last?["detail"] as? String, "DID_FAIL_TO_RENEW/GRACE_PERIOD  app.monthly", "newest last")
        let text = try run(["show", "--db", db, "user-1010"])
        XCTAssertTrue(text.stdout.contains("GRACE PERIOD"))
        XCTAssertTrue(text.stdout.contains("billing error"))
        let unknown = try run(["show", "--db", db, "no-such-id"])
        XCTAssertEqual(unknown.status, 2)
        XCTAssertTrue(unknown.stderr.contains("no subscriber, subscription, purchase or transaction matches no-such-id"))
    }

    /// Dates a support agent reads aloud: no "next renewal" once its date passed (what
    /// happened instead), and a refunded subscription says when access ended, not the
    /// refunded period's end.
    func testShowSaysWhatBecameOfAPassedRenewalAndWhenARevokedOnesAccessEnded() throws {
        let db = try demoStore()
        let grace = try run(["show", "--db", db, "user-1010"]).stdout
        let next = try XCTUnwrap(grace.components(separatedBy: "\n").first { $0.contains("Next ") }, grace)
        XCTAssertTrue(next.contains("Next     renewal was due "), next)
        XCTAssertTrue(next.contains("; in grace until "), next)
        XCTAssertFalse(grace.contains("next renewal"), grace)
        let revoked = try run(["show", "--db", db, "2000000400001801"]).stdout
        XCTAssertTrue(revoked.contains("REVOKED"), revoked)
        let product = try XCTUnwrap(revoked.components(separatedBy: "\n").first { $0.contains("Product ") }, revoked)
        XCTAssertTrue(product.contains("Access ended "), product)
        XCTAssertFalse(product.contains("Expires"), product)
        let active = try run(["show", "--db", db, "2000000400001701"]).stdout
        XCTAssertTrue(active.contains("Next     renewal 20"), active)
    }

    func testIngestCountsAndExitStatusAndQuarantine() throws {
        let demo = try demoStore()
        // Re-ingesting the demo's stored bodies as NDJSON: all duplicates.
        let db = Store.testLocation(file: dir + "/fresh.db")
        let bodies = try run(["notifications", "--db", demo, "--json", "--limit", "5"])
        XCTAssertEqual(bodies.status, 0)
        let good = try XCTUnwrap(FileManager.default.contents(atPath: Self.repoRoot + "/sample-data/test-ca/root.der"))
        XCTAssertFalse(good.isEmpty)
        let ndjson = dir + "/batch.ndjson"
        try "{\"signedPayload\":\"a.b\"}\nnot json\n{\"x\":1}\n".write(toFile: ndjson, atomically: true, encoding: .utf8)
        let r = try run(["ingest", "--db", db, ndjson])
        XCTAssertEqual(r.status, 1)
        XCTAssertEqual(r.stdout, "ingested 0, duplicates 0, rejected 3\n")
        XCTAssertTrue(r.stderr.contains("batch.ndjson:1: signedPayload: not a JWS"))
        let q = try run(["quarantine", "--db", db, "--json"])
        XCTAssertEqual((try json(q.stdout) as? [Any])?.count, 3)
    }

    /// `--workers` is bounded and refused before any store is made; any number of workers
    /// takes the same bodies in with the same counts.
    func testIngestWorkersAreBoundedAndTakeTheSameBodiesIn() throws {
        let demo = try demoStore()
        let bodies = try rawBodies(demo)
        let count = bodies.split(separator: UInt8(ascii: "\n")).count
        let flags = ["--root-ca", Self.repoRoot + "/sample-data/test-ca/root.der", "--bundle-id", "com.example.subdesk.demo",
                     "--app-apple-id", "1234567890"]
        for bad in ["0", "65", "two", "-1", "99999999999999999999999"] {
            let path = dir + "/refused-\(bad.count).db"
            let r = try run(["ingest", "--db", path, "--workers", bad] + flags + ["-"], stdin: bodies)
            XCTAssertNotEqual(r.status, 0, bad)
            XCTAssertTrue(r.stderr.contains("--workers must be a whole number from 1 to 64, got \(bad)"), r.stderr)
            XCTAssertFalse(FileManager.default.fileExists(atPath: path), "no store is made for a refused --workers \(bad)")
        }
        for workers in ["1", "3"] {
            let db = Store.testLocation(file: dir + "/workers-\(workers).db")
            let r = try run(["ingest", "--db", db, "--workers", workers, "--batch-size", "7"] + flags + ["-"], stdin: bodies)
            XCTAssertEqual(r.status, 0, r.stderr)
            XCTAssertEqual(r.stdout, "ingested \(count), duplicates 0, rejected 0\n", "--workers \(workers)")
        }
    }

    func testIngestFromStdinWithRootAndPolicyFlags() throws {
        // Build signed bodies with the demo builder, export them, and ingest through the CLI.
        let demo = try demoStore()
        let export = try run(["notifications", "--db", demo, "--json", "--limit", "1000"])
        let count = (try json(export.stdout) as? [Any])?.count ?? 0
        XCTAssertGreaterThan(count, 40)
        let db = Store.testLocation(file: dir + "/cli.db")
        let bodies = try rawBodies(demo)
        let root = Self.repoRoot + "/sample-data/test-ca/root.der"
        let r = try run(["ingest", "--db", db, "--root-ca", root, "--bundle-id", "com.example.subdesk.demo",
                         "--app-apple-id", "1234567890", "-"], stdin: bodies)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.hasPrefix("ingested \(count), duplicates 0, rejected 0"), r.stdout)
        let again = try run(["ingest", "--db", db, "--root-ca", root, "--bundle-id", "com.example.subdesk.demo", "-"], stdin: bodies)
        XCTAssertTrue(again.stdout.hasPrefix("ingested 0, duplicates \(count), rejected 0"), again.stdout)
        // Without the test root, Apple's root is the default: every body is refused and quarantined.
        let strict = try run(["ingest", "--db", Store.testLocation(file: dir + "/strict.db"), "-"], stdin: bodies)
        XCTAssertEqual(strict.status, 1)
        XCTAssertTrue(strict.stdout.contains("rejected \(count)"), strict.stdout)
        XCTAssertTrue(strict.stderr.contains("certificate chain does not lead to a configured root"), strict.stderr)
        // The config file supplies what flags did; a flag still wins over it.
        try FileManager.default.createDirectory(atPath: dir + "/config/subdesk", withIntermediateDirectories: true)
        try "root_ca = \(root)\nbundle_id = com.other.app\n".write(toFile: dir + "/config/subdesk/config", atomically: true, encoding: .utf8)
        let configured = try run(["ingest", "--db", Store.testLocation(file: dir + "/c.db"), "-"], stdin: bodies)
        XCTAssertTrue(configured.stderr.contains("bundleId com.example.subdesk.demo is not the configured com.other.app"), configured.stderr)
        let flagWins = try run(["ingest", "--db", Store.testLocation(file: dir + "/c2.db"), "--bundle-id", "com.example.subdesk.demo", "-"], stdin: bodies)
        XCTAssertEqual(flagWins.status, 0, flagWins.stderr)
        try "bundle_id com.broken\n".write(toFile: dir + "/config/subdesk/config", atomically: true, encoding: .utf8)
        let broken = try run(["show", "--db", db, "x"])
        XCTAssertEqual(broken.status, 2)
        XCTAssertTrue(broken.stderr.contains("config:1: expected key = value"), broken.stderr)
    }

    func testCGIAnswersPerOutcome() throws {
        let demo = try demoStore()
        let body = try XCTUnwrap(String(decoding: try rawBodies(demo), as: UTF8.self).split(separator: "\n").first).data(using: .utf8)!
        let db = dir + "/cgi.db"
        let root = Self.repoRoot + "/sample-data/test-ca/root.der"
        func cgi(_ data: Data, method: String = "POST") throws -> Result {
            try run(["ingest", "--cgi", "--db", db, "--root-ca", root, "--bundle-id", "com.example.subdesk.demo"], stdin: data,
                    env: ["REQUEST_METHOD": method, "CONTENT_LENGTH": String(data.count), "GATEWAY_INTERFACE": "CGI/1.1"])
        }
        // CGI never creates a store: a missing one is a broken set-up, answered 503 (Apple retries).
        let missing = try cgi(body)
        XCTAssertTrue(missing.stdout.hasPrefix("Status: 503"), missing.stdout)
        XCTAssertTrue(missing.stderr.contains("no store at \(db)"), missing.stderr)
        XCTAssertFalse(missing.stdout.contains(db), "paths stay in the operator's log: \(missing.stdout)")
        XCTAssertFalse(FileManager.default.fileExists(atPath: db))
        let created = try run(["init", "--db", db])
        XCTAssertEqual(created.status, 0)
        XCTAssertTrue(created.stdout.contains("created an empty store at \(db)"), created.stdout)
        let mode = try XCTUnwrap(try FileManager.default.attributesOfItem(atPath: db)[.posixPermissions] as? NSNumber).intValue
        XCTAssertEqual(mode & 0o777, 0o600, "a new store is the owner's alone")
        let ok = try cgi(body)
        XCTAssertTrue(ok.stdout.hasPrefix("Status: 200 OK\r\n"), ok.stdout)
        // The same signedPayload with a trailing newline (or other white space) is the same notification.
        let spaced = try cgi(body + Data("\n".utf8))
        XCTAssertTrue(spaced.stdout.hasPrefix("Status: 200 OK\r\n") && spaced.stdout.contains("duplicate "), spaced.stdout)
        XCTAssertTrue(ok.stdout.contains("stored "))
        let dup = try cgi(body)
        XCTAssertTrue(dup.stdout.hasPrefix("Status: 200 OK\r\n"))
        XCTAssertTrue(dup.stdout.contains("duplicate "))
        let bad = try cgi(Data("{\"signedPayload\":\"x.y.z\"}".utf8))
        XCTAssertTrue(bad.stdout.hasPrefix("Status: 400 Bad Request\r\n"), bad.stdout)
        let get = try cgi(Data(), method: "GET")
        XCTAssertTrue(get.stdout.hasPrefix("Status: 405"), get.stdout)
        // A store that cannot be written answers 503 so Apple retries.
        let blocked = dir + "/not-a-dir"
        try "file".write(toFile: blocked, atomically: true, encoding: .utf8)
        let down = try run(["ingest", "--cgi", "--db", blocked + "/x.db", "--root-ca", root], stdin: body,
                           env: ["REQUEST_METHOD": "POST", "CONTENT_LENGTH": String(body.count)])
        XCTAssertTrue(down.stdout.hasPrefix("Status: 503"), down.stdout)
        let q = try run(["quarantine", "--db", db, "--json"])
        XCTAssertEqual((try json(q.stdout) as? [Any])?.count, 1, "the bad body is quarantined")
    }

    func testOverridesAndAuditThroughTheCommandLine() throws {
        let db = try demoStore()
        let g = try run(["override", "grant", "user-1013", "--until", "+7d", "--reason", "goodwill", "--operator", "ana", "--db", db, "--json"])
        XCTAssertEqual(g.status, 0, g.stderr)
        let o = try XCTUnwrap(try json(g.stdout) as? [String: Any])
        let show = try XCTUnwrap(try json(try run(["show", "user-1013", "--json", "--db", db]).stdout) as? [String: Any])
        let sub = try XCTUnwrap((show["subscriptions"] as? [[String: Any]])?.first)
        XCTAssertEqual(sub["entitled"] as? Bool, true)
        XCTAssertEqual(sub["appleEntitled"] as? Bool, false)
        XCTAssertEqual(sub["status"] as? String, "expired")
        let noReason = try run(["override", "revoke", "user-1013", "--db", db])
        XCTAssertEqual(noReason.status, 2)
        XCTAssertTrue(noReason.stderr.contains("a reason is required"))
        let lift = try run(["override", "lift", "\(o["id"]!)", "--reason", "paid", "--operator", "bo", "--db", db])
        XCTAssertEqual(lift.status, 0, lift.stderr)
        let audit = try XCTUnwrap(try json(try run(["audit", "user-1013", "--json", "--db", db]).stdout) as? [[String: Any]])
        // Newest first, the order :audit shows.
        XCTAssertEqual(audit.map { $0["action"] as? String }, ["override_lift", "override_grant"])
        // On PostgreSQL the server records who connected (the tests' user, ana), not --operator.
        XCTAssertEqual(audit.map { $0["operator"] as? String }, PostgresLocation.isPostgres(db) ? ["ana", "ana"] : ["bo", "ana"])
        let text = try run(["audit", "user-1013", "--db", db]).stdout.split(separator: "\n")
        XCTAssertTrue(text.first?.contains("override_lift") == true && text.last?.contains("override_grant") == true, "\(text)")
    }

    func testCountsJSONHasOneObjectPerDay() throws {
        let db = try demoStore()
        let r = try run(["counts", "--db", db, "--from", "2026-01-01", "--to", "2026-01-03", "--json"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let days = try XCTUnwrap(try json(r.stdout) as? [[String: Any]])
        XCTAssertEqual(days.map { $0["day"] as? String }, ["2026-01-01", "2026-01-02", "2026-01-03"])
        for key in ["newPaidSubscriptions", "renewals", "churned", "expiredVoluntary", "activePaid", "activeSubscriptions", "inGracePeriod",
                    "trialConversions"] {
            XCTAssertNotNil(days[0][key] as? Int, key)
        }
        XCTAssertTrue(days[0].keys.contains("churnRate") && days[0].keys.contains("refundRate"), "rates are there, null when undefined")
        let weeks = try run(["counts", "--db", db, "--from", "2026-01-01", "--to", "2026-01-31", "--period", "week", "--csv"])
        XCTAssertEqual(weeks.status, 0, weeks.stderr)
        let rows = weeks.stdout.split(separator: "\n")
        XCTAssertTrue(rows.first?.hasPrefix("week,activePaid,") == true, weeks.stdout)
        XCTAssertEqual(rows.dropFirst().map { String($0.prefix(10)) }, ["2025-12-29", "2026-01-05", "2026-01-12", "2026-01-19", "2026-01-26"],
                       "ISO weeks from Monday, the first holding the range's first days")
        let bad = try run(["counts", "--db", db, "--from", "2026-02-30x", "--to", "2026-01-01"])
        XCTAssertEqual(bad.status, 2)
    }

    /// `--definitions-markdown` prints the README's two lists of definitions, from the table.
    func testCountsPrintsTheMetricDefinitionsAsTheReadmeListsThem() throws {
        let r = try run(["counts", "--definitions-markdown"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.stdout, Metric.readmeLists().joined(separator: "\n\n") + "\n")
    }

    /// `--by` splits one metric by a dimension's values, which add up to the whole; `--where`
    /// counts one part; bad input names what is wrong.
    func testCountsBySegmentAddUpToTheWholeAndRefuseWhatCannotBeSplit() throws {
        let db = try demoStore()
        let range = ["--from", "2026-10-01", "--to", "2026-11-20"]
        let whole = try run(["counts", "--db", db, "--json", "--segment", "all"] + range)
        XCTAssertEqual(whole.status, 0, whole.stderr)
        let days = try XCTUnwrap(try json(whole.stdout) as? [[String: Any]])
        let byProduct = try run(["counts", "--db", db, "--json", "--segment", "all", "--by", "product", "--metric", "activePaid"] + range)
        XCTAssertEqual(byProduct.status, 0, byProduct.stderr)
        let split = try XCTUnwrap(try json(byProduct.stdout) as? [String: Any])
        let periods = try XCTUnwrap(split["periods"] as? [[String: Any]])
        XCTAssertEqual(periods.count, days.count)
        let products = Set(periods.flatMap { ($0["values"] as? [String: Any] ?? [:]).keys })
        XCTAssertTrue(products.isSuperset(of: ["app.monthly", "app.yearly", "app.premium.monthly"]), "\(products)")
        for (day, period) in zip(days, periods) {
            let sum = (period["values"] as? [String: Any] ?? [:]).values.compactMap { $0 as? Int }.reduce(0, +)
            XCTAssertEqual(sum, day["activePaid"] as? Int, "\(day["day"] ?? "")")
        }
        let monthly = try run(["counts", "--db", db, "--json", "--segment", "all", "--where", "product=app.monthly"] + range)
        XCTAssertEqual(monthly.status, 0, monthly.stderr)
        let monthlyDays = try XCTUnwrap(try json(monthly.stdout) as? [[String: Any]])
        XCTAssertEqual(monthlyDays.map { $0["activePaid"] as? Int },
                       periods.map { ($0["values"] as? [String: Any])?["app.monthly"] as? Int })
        let text = try run(["counts", "--db", db, "--by", "offer", "--metric", "new paid subscriptions", "--period", "month"] + range)
        XCTAssertEqual(text.status, 0, text.stderr)
        XCTAssertTrue(text.stdout.hasPrefix("new paid subscriptions by offer"), text.stdout)
        XCTAssertTrue(text.stdout.contains("introductory") && text.stdout.contains("none"), text.stdout)
        for (args, says) in [(["--where", "colour=red"], "no segment dimension colour"),
                             (["--where", "product"], "DIMENSION=VALUE"),
                             (["--by", "colour"], "--by takes one of"),
                             (["--by", "product", "--metric", "nonsense"], "no metric nonsense"),
                             (["--by", "product", "--where", "offer=none"], "do not go together"),
                             (["--segment", "sandbox", "--where", "ownership=FAMILY_SHARED"], "leave nothing to count")] {
            let refused = try run(["counts", "--db", db] + args)
            XCTAssertEqual(refused.status, 2, "\(args): \(refused.stdout)")
            XCTAssertTrue(refused.stderr.contains(says), "\(args): \(refused.stderr)")
        }
    }
}
