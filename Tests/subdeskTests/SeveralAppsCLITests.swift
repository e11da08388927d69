import Foundation
import XCTest
import FakeApple
@testable import SubscriptionCore
@testable import SubdeskScenarios
import SubdeskTestKit

/// Several apps on the command line: one `ingest` and one notification URL for every app
/// of the config file, each body stored under the app it was signed for.
final class SeveralAppsCLITests: SubdeskTestCase, RunsOnEveryEngine {
    static let root = repoRoot + "/sample-data/test-ca/root.der"

    /// The config file with the issue's two-app shape (and the test CA as the trust root).
    func writeConfig(keyFile: String = "/etc/subdesk/SubscriptionKey_KEY123.p8", extra: String = "") throws {
        try FileManager.default.createDirectory(atPath: dir + "/config/subdesk", withIntermediateDirectories: true)
        try """
        root_ca = \(Self.root)
        \(extra)
        [key team]
        issuer_id = 11111111-2222-3333-4444-555555555555
        key_id = KEY123
        key_file = \(keyFile)

        [app fitness]
        bundle_id = com.example.fitness
        app_apple_id = 1234567890
        environment = Production, Sandbox
        key = team

        [app recipes]
        bundle_id = com.example.recipes
        app_apple_id = 2234567890
        environment = Production
        key = team

        """.write(toFile: dir + "/config/subdesk/config", atomically: true, encoding: .utf8)
    }

    /// A SUBSCRIBED body signed by the test CA for `bundleId`.
    static func body(_ bundleId: String, appleId: Int64, otid: String, product: String = "app.monthly") throws -> Data {
        let signer = try SampleData(directory: Self.repoRoot + "/sample-data").signer()
        let now = DateText.nowMillis()
        let transaction: [String: Any] = [
            "transactionId": otid, "originalTransactionId": otid, "productId": product, "bundleId": bundleId,
            "purchaseDate": now - 60_000, "originalPurchaseDate": now - 60_000, "expiresDate": now + 30 * 86_400_000,
            "signedDate": now, "environment": "Production", "inAppOwnershipType": "PURCHASED",
            "type": "Auto-Renewable Subscription", "price": 9990, "currency": "USD"]
        let payload: [String: Any] = ["notificationType": "SUBSCRIBED", "subtype": "INITIAL_BUY", "notificationUUID": "n-\(otid)",
                                      "signedDate": now, "version": "2.0",
                                      "data": ["bundleId": bundleId, "environment": "Production", "appAppleId": appleId,
                                               "signedTransactionInfo": try signer.sign(payload: try JSONSerialization.data(withJSONObject: transaction))]]
        return try JSONSerialization.data(withJSONObject: ["signedPayload": try signer.sign(payload: try JSONSerialization.data(withJSONObject: payload))])
    }

    func testOneIngestStoresBothAppsBodiesAndRefusesAThirdAppsNamingItsBundleId() throws {
        try writeConfig()
        let db = Store.testLocation(file: dir + "/apps.db")
        let files = try bodyFiles([("com.example.fitness", Int64(1234567890), "7100000000000001"),
                                          ("com.example.recipes", Int64(2234567890), "7200000000000001"),
                                          ("com.example.other", Int64(3234567890), "7300000000000001")])
        let r = try run(["ingest", "--db", db] + files)
        XCTAssertTrue(r.stdout.hasPrefix("ingested 2, duplicates 0, rejected 1"), r.stdout + r.stderr)
        XCTAssertTrue(r.stderr.contains("bundleId com.example.other is no configured app's (apps: fitness (com.example.fitness), "
                                        + "recipes (com.example.recipes))"), r.stderr)
        XCTAssertFalse(r.stderr.contains("bundle ids are not checked"), r.stderr)
        let store = try Store(path: db)
        XCTAssertNotNil(try store.subscriptions.find(originalTransactionId: "7100000000000001"))
        XCTAssertNotNil(try store.subscriptions.find(originalTransactionId: "7200000000000001"))
        XCTAssertNil(try store.subscriptions.find(originalTransactionId: "7300000000000001"))
        XCTAssertEqual(try store.quarantine.entries().map(\.reason).filter { $0.contains("com.example.other") }.count, 1)
        // show --json names each subscription's app: its bundle id and configured name.
        let shown = try run(["show", "--db", db, "7200000000000001", "--json"])
        let object = try JSONSerialization.jsonObject(with: Data(shown.stdout.utf8)) as? [String: Any]
        let app = (object?["subscriptions"] as? [[String: Any]])?.first?["app"] as? [String: String]
        XCTAssertEqual(app, ["name": "recipes", "bundleId": "com.example.recipes"], shown.stdout + shown.stderr)
    }

    /// Ingests one subscription of fitness (7100000000000001) and one of recipes (7200000000000001).
    /// Files of SUBSCRIBED bodies, one for each (bundle id, Apple ID, transaction id).
    func bodyFiles(_ bodies: [(String, Int64, String)]) throws -> [String] {
        try bodies.map { bundleId, appleId, otid in
            let file = dir + "/\(otid).json"
            try Self.body(bundleId, appleId: appleId, otid: otid).write(to: URL(fileURLWithPath: file))
            return file
        }
    }

    func ingestOneOfEachApp(_ db: String) throws {
        let files = try bodyFiles([("com.example.fitness", Int64(1234567890), "7100000000000001"),
                                          ("com.example.recipes", Int64(2234567890), "7200000000000001")])
        XCTAssertEqual(try run(["ingest", "--db", db] + files).status, 0)
    }

    func testListsNameEachRowsAppAndAuditAndGapsTakeTheAppScope() throws {
        try writeConfig()
        let db = Store.testLocation(file: dir + "/named.db")
        try ingestOneOfEachApp(db)
        // With two apps, each list's rows say their app: an APP column, and `app` in JSON.
        let searched = try run(["search", "00000000000001", "--db", db])
        let lines = searched.stdout.split(separator: "\n").map(String.init)
        XCTAssertTrue(lines.first?.hasPrefix("APP ") == true, searched.stdout)
        XCTAssertEqual(lines.dropFirst().map { String($0.prefix(while: { $0 != " " })) }.sorted(), ["fitness", "recipes"], searched.stdout)
        let listed = try run(["notifications", "--db", db, "--json"])
        let notifications = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]], listed.stdout)
        XCTAssertEqual(notifications.compactMap { ($0["app"] as? [String: Any])?["name"] as? String }.sorted(), ["fitness", "recipes"])
        XCTAssertTrue(try run(["notifications", "--db", db]).stdout.hasPrefix("APP "))

        // The audit log read for one app holds the entries about its subscriptions alone.
        XCTAssertEqual(try run(["override", "grant", "7200000000000001", "--until", "2099-01-01", "--reason", "goodwill",
                                "--db", db]).status, 0)
        XCTAssertTrue(try run(["--app", "fitness", "audit", "--db", db]).stdout.hasPrefix("the audit log has no entries"))
        let recipes = try run(["--app", "recipes", "audit", "--db", db])
        XCTAssertTrue(recipes.stdout.contains("override_grant  app recipes  7200000000000001"), recipes.stdout + recipes.stderr)
        let entries = try run(["audit", "--db", db, "--json"])
        let audit = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(entries.stdout.utf8)) as? [[String: Any]], entries.stdout)
        XCTAssertEqual(audit.compactMap { ($0["app"] as? [String: Any])?["name"] as? String }, ["recipes"])
        XCTAssertEqual(try run(["--app", "recipes", "gaps", "--db", db]).status, 0)
        XCTAssertEqual(try run(["--app", "beta", "gaps", "--db", db]).status, 2, "an unknown app is refused")
    }

    func testAppScopesShowSearchAndNotificationsAndAnUnknownAppIsRefusedNamingTheApps() throws {
        try writeConfig()
        let db = Store.testLocation(file: dir + "/scoped.db")
        try ingestOneOfEachApp(db)
        // Another app's subscription is not found; its own is, by name, bundle id or Apple ID.
        let other = try run(["--app", "recipes", "show", "7100000000000001", "--db", db])
        XCTAssertEqual(other.status, 2, other.stdout)
        for app in ["fitness", "com.example.fitness", "1234567890"] {
            XCTAssertEqual(try run(["show", "7100000000000001", "--db", db, "--app", app]).status, 0, app)
        }
        let unknown = try run(["show", "7100000000000001", "--db", db, "--app", "beta"])
        XCTAssertEqual(unknown.status, 2)
        XCTAssertTrue(unknown.stderr.contains("--app: beta names no configured app (apps: fitness (com.example.fitness), "
                                              + "recipes (com.example.recipes))"), unknown.stderr)
        // Search and the notification list: one app's, or every app's without --app.
        func ids(_ args: [String], _ key: String) throws -> [String] {
            let r = try run(args + ["--db", db, "--json"])
            return ((try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]]) ?? []).compactMap { $0[key] as? String }.sorted()
        }
        XCTAssertEqual(try ids(["search", "700000000000"], "originalTransactionId"), [], "neither id holds the text")
        XCTAssertEqual(try ids(["search", "00000000000001"], "originalTransactionId"), ["7100000000000001", "7200000000000001"])
        XCTAssertEqual(try ids(["search", "00000000000001", "--app", "recipes"], "originalTransactionId"), ["7200000000000001"])
        XCTAssertEqual(try ids(["notifications", "--app", "fitness"], "originalTransactionId"), ["7100000000000001"])
        XCTAssertEqual(try ids(["notifications"], "originalTransactionId"), ["7100000000000001", "7200000000000001"])

        // counts: by app, each by its configured name; one app's part by name, bundle id or --app.
        let by = try run(["counts", "--by", "app", "--db", db, "--json"])
        let periods = try XCTUnwrap((try JSONSerialization.jsonObject(with: Data(by.stdout.utf8)) as? [String: Any])?["periods"] as? [[String: Any]],
                                    by.stdout + by.stderr)
        XCTAssertEqual(periods.last?["values"] as? [String: Int], ["fitness": 1, "recipes": 1])
        func activeToday(_ args: [String]) throws -> Int? {
            let r = try run(["counts", "--db", db, "--json"] + args)
            return ((try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]])?.last?["activePaid"] as? Int)
        }
        XCTAssertEqual(try activeToday([]), 2)
        for args in [["--where", "app=fitness"], ["--where", "app=com.example.fitness"], ["--app", "fitness"]] {
            XCTAssertEqual(try activeToday(args), 1, "\(args)")
        }
        // cohorts: by app, each by its configured name; one app's by --where app= or --app.
        func cohorts(_ args: [String]) throws -> [(value: String?, size: Int)] {
            let r = try run(["cohorts", "--db", db, "--json"] + args)
            let rows = (try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])?["cohorts"] as? [[String: Any]]
            return try XCTUnwrap(rows, r.stdout + r.stderr).map { ($0["value"] as? String, $0["size"] as? Int ?? 0) }
        }
        XCTAssertEqual(try cohorts(["--by", "app"]).map { "\($0.value ?? "-") \($0.size)" }.sorted(), ["fitness 1", "recipes 1"])
        XCTAssertEqual(try cohorts([]).map(\.size), [2])
        XCTAssertEqual(try cohorts(["--where", "app=recipes"]).map(\.size), [1])
        XCTAssertEqual(try cohorts(["--app", "com.example.fitness"]).map(\.size), [1])
        // doctor tells each app's last notification.
        let doctor = try run(["doctor", "--db", db])
        for app in ["fitness", "recipes"] {
            XCTAssertNotNil(doctor.stdout.range(of: "app +\(app): [^\n]*; last notification [0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:]{5} UTC",
                                                options: .regularExpression), doctor.stdout)
        }
    }

    func testABodyPostedToAnotherAppsURLIsAnswered400AndQuarantinedNotStored() throws {
        try writeConfig()
        let db = Store.testLocation(file: dir + "/cgi.db")
        XCTAssertEqual(try run(["init", "--db", db]).status, 0)
        let recipes = try Self.body("com.example.recipes", appleId: 2234567890, otid: "7200000000000002")
        func post(_ query: String) throws -> Result {
            try run(["ingest", "--cgi", "--db", db], stdin: recipes,
                    env: ["REQUEST_METHOD": "POST", "GATEWAY_INTERFACE": "CGI/1.1", "REMOTE_ADDR": "192.0.2.7",
                          "CONTENT_LENGTH": String(recipes.count), "QUERY_STRING": query])
        }
        let crossed = try post("app=fitness")
        XCTAssertTrue(crossed.stdout.hasPrefix("Status: 400 Bad Request"), crossed.stdout)
        XCTAssertTrue(crossed.stdout.contains("signed for app recipes (com.example.recipes), posted to ?app=fitness, "
                                              + "app fitness (com.example.fitness)"), crossed.stdout)
        let store = try Store(path: db)
        XCTAssertNil(try store.subscriptions.find(originalTransactionId: "7200000000000002"))
        XCTAssertNil(try store.notifications.find(uuid: "n-7200000000000002"))
        XCTAssertEqual(try store.quarantine.entries().count, 1)
        // A query no URL parser would take names no app: refused like any unknown name, never a crash.
        for query in ["x&app=%zz%", "app=%E2%80%AE"] {
            let garbled = try post(query)
            XCTAssertTrue(garbled.stdout.hasPrefix("Status: 400 Bad Request"), garbled.stdout + garbled.stderr)
            XCTAssertTrue(garbled.stdout.contains("names no configured app"), garbled.stdout)
            XCTAssertFalse(garbled.stdout.contains("\u{202E}"), "the bidi override reaches the answer escaped")
        }
        // A query that names no one app is refused and quarantined, not read as no app (an
        // empty value) or as its last (a repeat); a long name is quoted cut short.
        for (query, words) in [("app=", "app= is empty"), ("app=fitness&app=recipes", "app= is given twice, as fitness and as recipes"),
                               ("app=recipes&x=1&app", "app= is given twice, as recipes and as : name one app")] {
            let refused = try post(query)
            XCTAssertTrue(refused.stdout.hasPrefix("Status: 400 Bad Request"), "\(query): \(refused.stdout)")
            XCTAssertTrue(refused.stdout.contains("quarantine #") && refused.stdout.contains(words), "\(query): \(refused.stdout)")
        }
        let long = try post("app=" + String(repeating: "a", count: 5000))
        XCTAssertTrue(long.stdout.hasPrefix("Status: 400 Bad Request"), long.stdout)
        XCTAssertTrue(long.stdout.contains(String(repeating: "a", count: IntakePolicy.quotedAppBytes) + "... names no configured app"), long.stdout)
        XCTAssertFalse(long.stdout.contains(String(repeating: "a", count: IntakePolicy.quotedAppBytes + 1)), long.stdout)
        XCTAssertEqual(try store.quarantine.entries().filter { $0.reason.contains(String(repeating: "a", count: IntakePolicy.quotedAppBytes + 1)) }, [])
        XCTAssertTrue(try post("app=recipes&app=recipes").stdout.hasPrefix("Status: 200 OK"), "the same app twice is that app")
        // Its own app's URL (by bundle id here) stores it.
        let own = try post("app=com.example.recipes")
        XCTAssertTrue(own.stdout.hasPrefix("Status: 200 OK"), own.stdout)
        XCTAssertNotNil(try store.subscriptions.find(originalTransactionId: "7200000000000002"))
    }

    /// `subdesk serve` takes the URL's `?app=` as the CGI does.
    func testServeAnswersABodyPostedToAnotherAppsURL400() throws {
        try writeConfig()
        let db = Store.testLocation(file: dir + "/serve.db")
        XCTAssertEqual(try run(["init", "--db", db]).status, 0)
        var env = ProcessInfo.processInfo.environment
        (env["XDG_DATA_HOME"], env["XDG_CONFIG_HOME"]) = (dir + "/data", dir + "/config")
        env.removeValue(forKey: "SUBDESK_CONFIG")
        let server = try ServeProcess(binary: Self.binary, arguments: ["--db", db], socket: dir + "/serve.sock",
                                      log: dir + "/serve.log", environment: env)
        defer { server.stop() }
        try server.waitUntilAnswering()
        let client = try FastCGITestClient(socket: dir + "/serve.sock")
        let fitness = try Self.body("com.example.fitness", appleId: 1234567890, otid: "7100000000000003")
        let crossed = try XCTUnwrap(client.post(fitness, params: FastCGITestClient.params(length: fitness.count) + [("QUERY_STRING", "app=recipes")]))
        XCTAssertTrue(crossed.stdout.hasPrefix("Status: 400 Bad Request"), crossed.stdout)
        XCTAssertTrue(crossed.stdout.contains("signed for app fitness (com.example.fitness), posted to ?app=recipes"), crossed.stdout)
        XCTAssertNil(try Store(path: db).subscriptions.find(originalTransactionId: "7100000000000003"))
        let own = try XCTUnwrap(client.post(fitness, params: FastCGITestClient.params(length: fitness.count) + [("QUERY_STRING", "app=fitness")]))
        XCTAssertTrue(own.stdout.hasPrefix("Status: 200 OK"), own.stdout)
        XCTAssertNotNil(try Store(path: db).subscriptions.find(originalTransactionId: "7100000000000003"))
    }

    func testSectionMistakesStopEveryCommandNamingTheFileAndLine() throws {
        try writeConfig(extra: "bundle_id = com.example.flat")
        let mixed = try run(["show", "--db", dir + "/x.db", "x"])
        XCTAssertEqual(mixed.status, 2)
        XCTAssertTrue(mixed.stderr.contains("/subdesk/config:2: bundle_id at the top level beside [app] sections"), mixed.stderr)
        try writeConfig(extra: "[app recipes]\nbundle_id = com.example.early")
        let duplicate = try run(["counts", "--db", dir + "/x.db"])
        XCTAssertEqual(duplicate.status, 2)
        XCTAssertTrue(duplicate.stderr.contains("/subdesk/config:15: duplicate section [app recipes] (first at line 2)"), duplicate.stderr)
    }

    /// A key file for the [key team] section, made with the openssl CLI (mode 600).
    func makeKeyFile() throws -> String {
        let keyFile = dir + "/SubscriptionKey_KEY123.p8"
        let made = try run(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", keyFile], executable: "/usr/bin/openssl")
        XCTAssertEqual(made.status, 0, made.stderr)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: keyFile)
        return keyFile
    }

    /// backfill asks every app in each of its environments, each request signed for that app.
    func testBackfillGoesThroughEveryAppAndEnvironmentSigningForEach() throws {
        try writeConfig(keyFile: try makeKeyFile())
        let db = Store.testLocation(file: dir + "/backfill.db")
        XCTAssertEqual(try run(["init", "--db", db]).status, 0)
        let apple = try FakeAppleServer()
        defer { apple.stop() }
        for environment in ["prod", "sandbox"] {
            apple.route("POST", "/\(environment)/inApps/v1/notifications/history", .json(["hasMore": false, "notificationHistory": []]))
        }
        let base = apple.baseURL.absoluteString
        let r = try run(["backfill", "--db", db, "--since", "-2h", "--server-api-url", base + "/prod",
                         "--server-api-sandbox-url", base + "/sandbox", "--quiet"])
        XCTAssertEqual(r.status, 0, r.stderr)
        // `fitness (com.example.fitness) backfill #1 (Production, ...`: the app, then the run as before.
        let lines = r.stdout.split(separator: "\n").map { line in
            line.components(separatedBy: ", ")[0].replacingOccurrences(of: #"#[0-9]+ "#, with: "", options: .regularExpression)
        }
        XCTAssertEqual(lines, ["fitness (com.example.fitness) backfill (Production", "fitness (com.example.fitness) backfill (Sandbox",
                               "recipes (com.example.recipes) backfill (Production"], r.stdout)
        let asked = apple.requests.map { "\($0.path.split(separator: "/")[0]) \(FakeAppleServer.tokenBundleId($0) ?? "-")" }
        XCTAssertEqual(asked, ["prod com.example.fitness", "sandbox com.example.fitness", "prod com.example.recipes"])
    }

    func testCheckAppJudgesOneAppsSilenceBesideABusyOne() throws {
        try writeConfig()
        let db = Store.testLocation(file: dir + "/check.db")
        try ingestOneOfEachApp(db)
        // recipes last heard from three hours ago; fitness just now.
        try Store(path: db).db.run("UPDATE notifications SET received_ms = received_ms - 10800000 WHERE bundle_id = ?", ["com.example.recipes"])
        let all = try run(["check", "--db", db])
        XCTAssertEqual(all.status, 0, all.stdout)
        let fitness = try run(["check", "--db", db, "--app", "fitness"])
        XCTAssertEqual(fitness.status, 0, fitness.stdout)
        XCTAssertTrue(fitness.stdout.hasPrefix("SUBDESK OK - app fitness: Production intake healthy"), fitness.stdout)
        let recipes = try run(["check", "--db", db, "--app", "recipes"])
        XCTAssertEqual(recipes.status, 2, recipes.stdout)
        XCTAssertTrue(recipes.stdout.hasPrefix("SUBDESK CRITICAL - app recipes: no Production notification for 3h"), recipes.stdout)
        let unknown = try run(["check", "--db", db, "--app", "beta"])
        XCTAssertEqual(unknown.status, 3, unknown.stdout)
    }

    /// `subdesk metrics` labels every intake count and last arrival with its app: each
    /// configured app's own, and `other` for a body of a bundle id no app has or whose app
    /// could not be read. `--app NAME metrics` prints that app's samples alone, and the apps'
    /// counts add up to every outcome the intake log holds.
    func testMetricsLabelEachAppsIntakeAndTheAppsAddUpToTheStore() throws {
        try writeConfig()
        let db = Store.testLocation(file: dir + "/metrics.db")
        let files = try bodyFiles([("com.example.fitness", Int64(1234567890), "7100000000000001"),
                                          ("com.example.fitness", Int64(1234567890), "7100000000000002"),
                                          ("com.example.recipes", Int64(2234567890), "7200000000000001"),
                                          ("com.example.other", Int64(3234567890), "7300000000000001")])
        try Data("not a notification".utf8).write(to: URL(fileURLWithPath: dir + "/junk.json"))
        let ingested = try run(["ingest", "--db", db] + files + [dir + "/junk.json"])
        XCTAssertTrue(ingested.stdout.hasPrefix("ingested 3, duplicates 0, rejected 2"), ingested.stdout + ingested.stderr)
        // A redelivery of fitness's first body: a duplicate, counted as fitness's.
        XCTAssertEqual(try run(["ingest", "--db", db, files[0]]).status, 0)

        func received(_ arguments: [String]) throws -> [String: Double] {
            let r = try run(arguments + ["metrics", "--db", db])
            XCTAssertEqual(r.status, 0, r.stderr)
            var samples: [String: Double] = [:]
            for line in r.stdout.split(separator: "\n") where line.hasPrefix("subdesk_notifications_received_total{") {
                let parts = line.split(separator: " ")
                samples[String(parts[0])] = Double(parts[1])
            }
            return samples
        }
        let all = try received([])
        func app(_ sample: String) -> String? {
            sample.range(of: #"app="[^"]*""#, options: .regularExpression).map { String(sample[$0].dropFirst(5).dropLast()) }
        }
        XCTAssertEqual(Set(all.keys.compactMap(app)), ["fitness", "recipes", "other"], "\(all)")
        XCTAssertEqual(all.keys.filter { app($0) == nil }, [], "every sample names its app")
        func total(_ samples: [String: Double], app name: String? = nil, outcome: String) -> Double {
            samples.filter { (name == nil || app($0.key) == name) && $0.key.contains("outcome=\"\(outcome)\"") }.values.reduce(0, +)
        }
        XCTAssertEqual(total(all, app: "fitness", outcome: "stored"), 2)
        XCTAssertEqual(total(all, app: "fitness", outcome: "duplicate"), 1)
        XCTAssertEqual(total(all, app: "recipes", outcome: "stored"), 1)
        XCTAssertEqual(total(all, app: "other", outcome: "rejected"), 2, "a third app's body and one whose app cannot be read")
        XCTAssertEqual(total(all, app: "fitness", outcome: "rejected") + total(all, app: "recipes", outcome: "rejected"), 0)

        // Each app's scrape holds its samples alone; with other's, they are the whole.
        let fitness = try received(["--app", "fitness"]), recipes = try received(["--app", "com.example.recipes"])
        XCTAssertEqual(Set(fitness.keys.compactMap(app)), ["fitness"])
        XCTAssertEqual(Set(recipes.keys.compactMap(app)), ["recipes"])
        XCTAssertEqual(fitness.merging(recipes) { $1 }.merging(all.filter { app($0.key) == "other" }) { $1 }, all)
        // The apps' counts add up to every outcome the intake log holds.
        let log = try Store(path: db, mode: .reading).intakeLog.entries(limit: 1000)
        for outcome in ["stored", "duplicate", "rejected"] {
            XCTAssertEqual(total(fitness, outcome: outcome) + total(recipes, outcome: outcome) + total(all, app: "other", outcome: outcome),
                           Double(log.filter { $0.result.rawValue == outcome }.count), outcome)
        }
        // Each app's last arrival, so a quiet app is seen beside a busy one.
        let metrics = try run(["metrics", "--db", db]).stdout
        for name in ["fitness", "recipes"] {
            XCTAssertTrue(metrics.contains("subdesk_last_notification_age_seconds{app=\"\(name)\",environment=\"Production\"} "), metrics)
        }
        let unknown = try run(["--app", "beta", "metrics", "--db", db])
        XCTAssertNotEqual(unknown.status, 0)
        XCTAssertTrue(unknown.stderr.contains("beta names no configured app"), unknown.stderr)
    }

    func testBackfillResumeWithSeveralAppsAsksTheAppAndEnvironmentTheRunRecorded() throws {
        try writeConfig(keyFile: try makeKeyFile())
        let db = Store.testLocation(file: dir + "/resume.db")
        XCTAssertEqual(try run(["init", "--db", db]).status, 0)
        let now = DateText.nowMillis()
        _ = try Store(path: db).backfills.start(environment: "Production", since: now - 7_200_000, until: now, onlyFailures: false,
                                              operatorName: "test", now: now, bundleId: "com.example.recipes")
        let apple = try FakeAppleServer()
        defer { apple.stop() }
        apple.route("POST", "/prod/inApps/v1/notifications/history", .json(["hasMore": false, "notificationHistory": []]))
        let base = apple.baseURL.absoluteString
        let r = try run(["backfill", "--db", db, "--resume", "--server-api-url", base + "/prod",
                         "--server-api-sandbox-url", base + "/sandbox", "--quiet"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.hasPrefix("recipes (com.example.recipes) backfill #1 (Production"), r.stdout)
        XCTAssertEqual(apple.requests.map { FakeAppleServer.tokenBundleId($0) ?? "-" }, ["com.example.recipes"])
    }

    func testDoctorListsEachAppWithItsEnvironmentsAndKeyNameNeverTheKey() throws {
        let keyFile = try makeKeyFile()
        try writeConfig(keyFile: keyFile)
        let db = Store.testLocation(file: dir + "/doctor.db")
        XCTAssertEqual(try run(["init", "--db", db]).status, 0)
        let doctor = try run(["doctor", "--db", db])
        XCTAssertTrue(doctor.stdout.contains("app           fitness: com.example.fitness, Apple ID 1234567890, Production and Sandbox, "
                                             + "key team (key id KEY123), no shared secret, V1 refused; last notification none"), doctor.stdout)
        XCTAssertTrue(doctor.stdout.contains("app           recipes: com.example.recipes, Apple ID 2234567890, Production, "
                                             + "key team (key id KEY123)"), doctor.stdout)
        XCTAssertTrue(doctor.stdout.contains("api key       recipes: key KEY123, issuer 11111111-2222-3333-4444-555555555555"), doctor.stdout)
        let key = try String(contentsOfFile: keyFile, encoding: .utf8)
        let secretLine = try XCTUnwrap(key.split(separator: "\n").dropFirst().first)
        XCTAssertFalse(doctor.stdout.contains(secretLine) || doctor.stderr.contains(secretLine), "doctor printed the key")
    }

    /// A fake App Store that answers every mass extension and its status (complete), refusing
    /// a token for another app than the product's (`apple.products`).
    func massExtensionApple() throws -> FakeAppleServer {
        let apple = try FakeAppleServer()
        apple.routeEverythingElse { request in
            let parts = request.path.split(separator: "/")
            if request.method == "POST" { return .json([:]) }
            return .json(["requestIdentifier": String(parts.last ?? ""), "complete": true, "completeDate": DateText.nowMillis(),
                          "succeededCount": 4, "failedCount": 0])
        }
        return apple
    }

    /// `extend --all` asks each app that sells the product, signed for it, each line naming it;
    /// an app or a product no app sells is refused before Apple is asked.
    func testAMassExtensionIsAskedOfTheAppsThatSellTheProductEachSignedForItsApp() throws {
        try writeConfig(keyFile: try makeKeyFile())
        let db = Store.testLocation(file: dir + "/extend.db")
        /// Ingests a subscription of fitness and one of recipes, of these products, with ids ending in `n`.
        func ingest(fitness: String, recipes: String, _ n: Int) throws {
            var files: [String] = []
            for (bundleId, appleId, otid, product) in [("com.example.fitness", Int64(1234567890), "710000000000000\(n)", fitness),
                                                       ("com.example.recipes", Int64(2234567890), "720000000000000\(n)", recipes)] {
                files.append(dir + "/\(otid).json")
                try Self.body(bundleId, appleId: appleId, otid: otid, product: product).write(to: URL(fileURLWithPath: files.last!))
            }
            XCTAssertEqual(try run(["ingest", "--db", db] + files).status, 0)
        }
        try ingest(fitness: "fit.monthly", recipes: "rec.yearly", 1)
        let apple = try massExtensionApple()
        defer { apple.stop() }
        apple.products(["fit.monthly"], belongTo: "com.example.fitness")
        apple.products(["rec.yearly"], belongTo: "com.example.recipes")
        let base = apple.baseURL.absoluteString
        func extend(_ words: [String]) throws -> Result {
            try run(words + ["--days", "3", "--reason-code", "3", "--reason", "outage", "--yes", "--wait", "0", "--db", db,
                             "--server-api-url", base + "/prod", "--server-api-sandbox-url", base + "/sandbox"])
        }
        // recipes, the second app, sells rec.yearly: its token, and one document naming it.
        let json = try extend(["extend", "--all", "--product", "rec.yearly", "--json"])
        XCTAssertEqual(json.status, 0, json.stdout + json.stderr)
        let entries = try XCTUnwrap((try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])?["extensions"]
                                    as? [[String: Any]], json.stdout)
        XCTAssertEqual(entries.map { "\($0["app"] ?? "-") \($0["environment"] ?? "-") \($0["outcome"] ?? "-")" }, ["recipes Production complete"])
        XCTAssertEqual(entries.first?["productId"] as? String, "rec.yearly")
        XCTAssertEqual(apple.requests.map { "\($0.method) \(FakeAppleServer.tokenBundleId($0) ?? "-")" },
                       ["POST com.example.recipes", "GET com.example.recipes"])
        // --status follows it again, signed for the app that sells the product.
        let request = try XCTUnwrap(entries.first?["requestIdentifier"] as? String)
        let status = try extend(["extend", "--status", request])
        XCTAssertEqual(status.status, 0, status.stdout + status.stderr)
        XCTAssertEqual(FakeAppleServer.tokenBundleId(try XCTUnwrap(apple.requests.last)), "com.example.recipes")

        // A product both apps sell: one request per app, each line naming its app.
        try ingest(fitness: "app.monthly", recipes: "app.monthly", 2)
        let both = try extend(["extend", "--all", "--product", "app.monthly"])
        XCTAssertEqual(both.status, 0, both.stdout + both.stderr)
        let lines = both.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 4, both.stdout)
        XCTAssertTrue(lines[0].hasPrefix("fitness (com.example.fitness) Production: ") && lines[0].contains("every active subscriber of app.monthly"),
                      both.stdout)
        XCTAssertTrue(lines[2].hasPrefix("recipes (com.example.recipes) Production: "), both.stdout)
        XCTAssertEqual(apple.requests.filter { $0.method == "POST" }.suffix(2).map { FakeAppleServer.tokenBundleId($0) ?? "-" },
                       ["com.example.fitness", "com.example.recipes"])
        // --status of recipes' request: both apps sell the product, so each is asked in turn,
        // fitness (which Apple refuses for another app's request) passing to recipes.
        let recipesRequest = try XCTUnwrap(lines[2].range(of: #"request [0-9a-f-]{36}"#, options: .regularExpression)
            .map { String(lines[2][$0].dropFirst("request ".count)) }, lines[2])
        apple.transactions([recipesRequest], belongTo: "com.example.recipes")
        let followed = try extend(["extend", "--status", recipesRequest])
        XCTAssertEqual(followed.status, 0, followed.stdout + followed.stderr)
        XCTAssertTrue(followed.stdout.hasPrefix("recipes (com.example.recipes) Production: "), followed.stdout)
        XCTAssertEqual(apple.requests.suffix(2).map { FakeAppleServer.tokenBundleId($0) ?? "-" }, ["com.example.fitness", "com.example.recipes"])

        // Refused before Apple is asked: --app naming an app without the product, and a product no app has.
        let asked = apple.requests.count
        let wrongApp = try extend(["--app", "fitness", "extend", "--all", "--product", "rec.yearly"])
        XCTAssertEqual(wrongApp.status, 2, wrongApp.stdout)
        XCTAssertTrue(wrongApp.stderr.contains("app fitness (com.example.fitness) has no subscription of product rec.yearly in this store "
                                               + "(the apps that have: recipes (com.example.recipes) Production)"), wrongApp.stderr)
        let nobody = try extend(["extend", "--all", "--product", "app.weekly"])
        XCTAssertEqual(nobody.status, 2, nobody.stdout)
        XCTAssertTrue(nobody.stderr.contains("product app.weekly is in no configured app's subscriptions in this store (apps: "
                                             + "fitness (com.example.fitness), recipes (com.example.recipes))"), nobody.stderr)
        XCTAssertEqual(apple.requests.count, asked)
        // --app narrows a product both apps sell to that app.
        let one = try extend(["--app", "recipes", "extend", "--all", "--product", "app.monthly"])
        XCTAssertEqual(one.status, 0, one.stdout + one.stderr)
        XCTAssertEqual(apple.requests.dropFirst(asked).map { FakeAppleServer.tokenBundleId($0) ?? "-" }, ["com.example.recipes", "com.example.recipes"])
    }

    /// The two-app configuration with a key file, a new store `name`, and a fake App Store that
    /// answers POST `path` in each environment (`prod`, `sandbox`) with `answer`, but refuses
    /// `bundleId`'s token (400) as Apple refuses a request it cannot take.
    func twoAppsAndApple(store name: String, post path: String, refusing bundleId: String,
                         answer: @escaping (String) -> FakeAppleServer.Response) throws -> (db: String, apple: FakeAppleServer) {
        try writeConfig(keyFile: try makeKeyFile())
        let db = Store.testLocation(file: dir + "/" + name)
        XCTAssertEqual(try run(["init", "--db", db]).status, 0)
        let apple = try FakeAppleServer()
        for environment in ["prod", "sandbox"] {
            apple.route("POST", "/\(environment)\(path)") { request in
                FakeAppleServer.tokenBundleId(request) == bundleId
                    ? .json(["errorCode": 4000006, "errorMessage": "Invalid request identifier."], status: 400) : answer(environment)
            }
        }
        return (db, apple)
    }

    /// One app's failure does not stop backfill: each app and environment is asked and said,
    /// the exit status is 1, and --json is one document with an entry per run.
    func testBackfillGoesOnPastOneAppsFailureAndPrintsOneJSONDocument() throws {
        let (db, apple) = try twoAppsAndApple(store: "backfill-fail.db", post: "/inApps/v1/notifications/history", refusing: "com.example.fitness") { _ in
            .json(["hasMore": false, "notificationHistory": []])
        }
        defer { apple.stop() }
        let base = apple.baseURL.absoluteString
        let words = ["backfill", "--db", db, "--since", "-2h", "--server-api-url", base + "/prod", "--server-api-sandbox-url", base + "/sandbox", "--quiet"]
        let text = try run(words)
        XCTAssertEqual(text.status, 1, text.stdout + text.stderr)
        XCTAssertEqual(text.stderr.components(separatedBy: "fitness (com.example.fitness) backfill stopped: ").count, 3, text.stderr)
        XCTAssertEqual(text.stdout.split(separator: "\n").filter { $0.hasPrefix("recipes (com.example.recipes) backfill #") }.count, 1, text.stdout)
        let json = try run(words + ["--json"])
        XCTAssertEqual(json.status, 1, json.stdout + json.stderr)
        let runs = try XCTUnwrap((try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])?["runs"] as? [[String: Any]],
                                 json.stdout)
        XCTAssertEqual(runs.map { "\($0["app"] ?? "-") \($0["environment"] ?? "-") \($0["finished"] ?? "-") \($0["exitCode"] ?? "-")" },
                       ["fitness Production - 1", "fitness Sandbox - 1", "recipes Production 1 -"], json.stdout)
        XCTAssertEqual(runs.last?["bundleId"] as? String, "com.example.recipes")
        XCTAssertEqual(apple.requests.suffix(3).map { "\($0.path.split(separator: "/")[0]) \(FakeAppleServer.tokenBundleId($0) ?? "-")" },
                       ["prod com.example.fitness", "sandbox com.example.fitness", "prod com.example.recipes"])
        // --app asks that app alone.
        let one = try run(["--app", "recipes"] + words)
        XCTAssertEqual(one.status, 0, one.stdout + one.stderr)
        XCTAssertTrue(one.stdout.hasPrefix("recipes (com.example.recipes) backfill #"), one.stdout)
        XCTAssertEqual(FakeAppleServer.tokenBundleId(try XCTUnwrap(apple.requests.last)), "com.example.recipes")
        XCTAssertEqual(apple.requests.count, 7)
    }

    /// ping asks every app and environment past one's failure, and --json is one document.
    func testPingGoesOnPastOneAppsFailureAndPrintsOneJSONDocument() throws {
        let (db, apple) = try twoAppsAndApple(store: "ping.db", post: "/inApps/v1/notifications/test", refusing: "com.example.recipes") {
            .json(["testNotificationToken": "token-\($0)"])
        }
        defer { apple.stop() }
        apple.routeEverythingElse { _ in .json(["sendAttempts": [["attemptDate": DateText.nowMillis(), "sendAttemptResult": "TIMED_OUT"]]]) }
        let base = apple.baseURL.absoluteString
        let r = try run(["ping", "--db", db, "--wait", "0.2", "--json", "--server-api-url", base + "/prod",
                         "--server-api-sandbox-url", base + "/sandbox", "--quiet"])
        XCTAssertEqual(r.status, 1, r.stdout + r.stderr)
        let pings = try XCTUnwrap((try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])?["pings"] as? [[String: Any]],
                                  r.stdout)
        XCTAssertEqual(pings.map { "\($0["app"] ?? "-") \($0["environment"] ?? "-") \($0["testNotificationToken"] ?? "-") \($0["error"] == nil)" },
                       ["fitness Production token-prod true", "fitness Sandbox token-sandbox true", "recipes Production - false"], r.stdout)
        XCTAssertTrue(r.stderr.contains("ping: recipes (com.example.recipes) Production: "), r.stderr)
        // --app asks that app alone, in each of its environments.
        let asked = apple.requests.filter { $0.method == "POST" }.count
        let one = try run(["--app", "fitness", "ping", "--db", db, "--wait", "0.2", "--server-api-url", base + "/prod",
                           "--server-api-sandbox-url", base + "/sandbox", "--quiet"])
        XCTAssertEqual(one.stdout.split(separator: "\n").map { $0.components(separatedBy: ": ")[0] },
                       ["fitness (com.example.fitness) Production", "fitness (com.example.fitness) Sandbox"], one.stdout + one.stderr)
        XCTAssertEqual(apple.requests.filter { $0.method == "POST" }.dropFirst(asked).map { FakeAppleServer.tokenBundleId($0) ?? "-" },
                       ["com.example.fitness", "com.example.fitness"])
    }

    /// `show ORDERID` asks each app with a key in turn (a key in a [key] section counts) until
    /// the order's app answers, and `show ID --apple` signs for the subscription's app.
    func testShowAsksEachAppForAnOrderIdAndShowAppleSignsForTheSubscriptionsApp() throws {
        try writeConfig(keyFile: try makeKeyFile())
        let db = Store.testLocation(file: dir + "/order.db")
        XCTAssertEqual(try run(["init", "--db", db]).status, 0)
        let (otid, order, recipes) = ("7200000000000051", "MTN9T4BRB9", "com.example.recipes")
        let now = DateText.nowMillis()
        let transaction: [String: Any] = [
            "transactionId": otid, "originalTransactionId": otid, "productId": "app.monthly", "bundleId": recipes,
            "purchaseDate": now - 60_000, "originalPurchaseDate": now - 60_000, "expiresDate": now + 30 * 86_400_000,
            "signedDate": now, "environment": "Production", "inAppOwnershipType": "PURCHASED",
            "type": "Auto-Renewable Subscription", "price": 9990, "currency": "USD"]
        let signed = try SampleData(directory: Self.repoRoot + "/sample-data").signer()
            .sign(payload: try JSONSerialization.data(withJSONObject: transaction))
        let apple = try FakeAppleServer()
        defer { apple.stop() }
        apple.transactions([order, otid], belongTo: recipes)
        let app: [String: Any] = ["environment": "Production", "bundleId": recipes, "appAppleId": 2234567890]
        apple.route("GET", "/prod/inApps/v1/lookup/\(order)", .json(["status": 0, "signedTransactions": [signed]]))
        apple.route("GET", "/prod/inApps/v1/subscriptions/\(otid)", .json(app.merging([
            "data": [["subscriptionGroupIdentifier": "1", "lastTransactions": [["originalTransactionId": otid, "status": 1,
                                                                                 "signedTransactionInfo": signed]]]]]) { $1 }))
        apple.route("GET", "/prod/inApps/v2/history/\(otid)", .json(app.merging(["revision": "r", "hasMore": false,
                                                                               "signedTransactions": [signed]]) { $1 }))
        apple.route("GET", "/prod/inApps/v2/refund/lookup/\(otid)", .json(["revision": "r", "hasMore": false, "signedTransactions": []]))
        apple.route("GET", "/prod/inApps/v1/transactions/\(otid)", .json(["signedTransactionInfo": signed]))
        let base = apple.baseURL.absoluteString
        let urls = ["--db", db, "--server-api-url", base + "/prod", "--server-api-sandbox-url", base + "/sandbox"]
        let shown = try run(["show", order] + urls)
        XCTAssertEqual(shown.status, 0, shown.stdout + shown.stderr)
        XCTAssertTrue(shown.stdout.contains("Order \(order): 1 subscription"), shown.stdout)
        func tokens(_ path: String) -> [String] { apple.requests("GET", path).map { FakeAppleServer.tokenBundleId($0) ?? "-" } }
        XCTAssertEqual(tokens("/prod/inApps/v1/lookup/\(order)"), ["com.example.fitness", recipes])
        let withApple = try run(["show", otid, "--apple"] + urls)
        XCTAssertEqual(withApple.status, 0, withApple.stdout + withApple.stderr)
        XCTAssertEqual(tokens("/prod/inApps/v2/refund/lookup/\(otid)") + tokens("/prod/inApps/v1/transactions/\(otid)"), [recipes, recipes])
    }
}

/// The README's two-app rehearsal, run as a new user would paste it: its shell block, line
/// for line, in an empty folder with `subdesk` on the PATH (all but the desk itself, which
/// needs a terminal). Its store is the file the README names, on every pass: it runs once.
final class SeveralAppsReadmeTests: SubdeskTestCase {
    func testTheReadmesTwoAppRehearsalRunsAsWritten() throws {
        let readme = try String(contentsOfFile: Self.repoRoot + "/README.md", encoding: .utf8)
        let section = try XCTUnwrap(readme.range(of: "#### A two-app desk, step by step"), "the README has the walkthrough")
        let rest = readme[section.upperBound...]
        let open = try XCTUnwrap(rest.range(of: "```sh\n"))
        let close = try XCTUnwrap(rest[open.upperBound...].range(of: "\n```"))
        let lines = rest[open.upperBound..<close.lowerBound].split(separator: "\n", omittingEmptySubsequences: false)
        let dashboardLine = lines.filter { $0.hasPrefix("subdesk ") && $0.dropFirst(8).trimmingCharacters(in: .whitespaces).hasPrefix("#") }
        XCTAssertEqual(dashboardLine.count, 1, "one line opens the desk")
        let script = lines.filter { !dashboardLine.contains($0) }.joined(separator: "\n")
        XCTAssertTrue(script.contains("simulate --ndjson") && script.contains("counts --by app"), script)

        try FileManager.default.createSymbolicLink(atPath: dir + "/sample-data", withDestinationPath: Self.repoRoot + "/sample-data")
        let binaries = (CLITests.binary as NSString).deletingLastPathComponent
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/sh")
        shell.arguments = ["-ec", script]
        shell.currentDirectoryURL = URL(fileURLWithPath: dir)
        var environment = ProcessInfo.processInfo.environment
        environment["PATH"] = binaries + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
        environment["XDG_DATA_HOME"] = dir + "/data"
        environment["XDG_CONFIG_HOME"] = dir + "/config"
        for name in ["SUBDESK_DB", "SUBDESK_CONFIG", "SUBDESK_SAMPLE_DATA"] { environment.removeValue(forKey: name) }
        shell.environment = environment
        let output = Pipe(), errors = Pipe()
        shell.standardOutput = output
        shell.standardError = errors
        try shell.run()
        let text = String(decoding: ChildOutput.readAll(output.fileHandleForReading), as: UTF8.self)
        let errorText = String(decoding: ChildOutput.readAll(errors.fileHandleForReading), as: UTF8.self)
        shell.waitUntilExit()
        XCTAssertEqual(shell.terminationStatus, 0, text + errorText)

        XCTAssertTrue(text.contains("ingested 60, duplicates 0, rejected 0"), text + errorText)
        XCTAssertNotNil(text.range(of: "app +fitness: com.example.subdesk.demo[^\n]*last notification [0-9]{4}-", options: .regularExpression), text)
        XCTAssertNotNil(text.range(of: "app +recipes: com.example.recipes[^\n]*last notification [0-9]{4}-", options: .regularExpression), text)
        let header = try XCTUnwrap(text.split(separator: "\n").first { $0.hasPrefix("MONTH") }, text)
        XCTAssertEqual(Set(header.split(separator: " ").dropFirst().map(String.init)), ["fitness", "recipes"], String(header))
        // The scoped search lists recipes' subscriptions alone: the simulated ones' ids.
        let listed = text.split(separator: "\n").drop { !$0.hasPrefix("APP ") || !$0.contains("ORIGINAL TX") }.dropFirst()
            .prefix { $0.hasPrefix("recipes ") || $0.hasPrefix("fitness ") }
        XCTAssertFalse(listed.isEmpty, text)
        XCTAssertTrue(listed.allSatisfy { $0.hasPrefix("recipes ") }, "no demo (fitness) subscription: \(listed)")
        // The walkthrough cleans up after itself.
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/two-apps.db"))
    }
}
