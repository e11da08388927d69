import Foundation
import XCTest
import FakeApple
@testable import SubscriptionCore
@testable import SubdeskScenarios
import SubdeskTestSupport

/// Several apps on the command line: one `ingest` and one notification URL for every app
/// of the config file, each body stored under the app it was signed for.
final class SeveralAppsCLITests: SubdeskTestCase {
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
    static func body(_ bundleId: String, appleId: Int64, otid: String) throws -> Data {
        let signer = try SampleData(directory: Self.repoRoot + "/sample-data").signer()
        let now = DateText.nowMillis()
        let transaction: [String: Any] = [
            "transactionId": otid, "originalTransactionId": otid, "productId": "app.monthly", "bundleId": bundleId,
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
        var files: [String] = []
        for (bundleId, appleId, otid) in [("com.example.fitness", Int64(1234567890), "7100000000000001"),
                                          ("com.example.recipes", Int64(2234567890), "7200000000000001"),
                                          ("com.example.other", Int64(3234567890), "7300000000000001")] {
            let file = dir + "/\(otid).json"
            try Self.body(bundleId, appleId: appleId, otid: otid).write(to: URL(fileURLWithPath: file))
            files.append(file)
        }
        let r = try run(["ingest", "--db", db] + files)
        XCTAssertTrue(r.stdout.hasPrefix("ingested 2, duplicates 0, rejected 1"), r.stdout + r.stderr)
        XCTAssertTrue(r.stderr.contains("bundleId com.example.other is no configured app's (apps: fitness (com.example.fitness), "
                                        + "recipes (com.example.recipes))"), r.stderr)
        XCTAssertFalse(r.stderr.contains("bundle ids are not checked"), r.stderr)
        let store = try Store(path: db)
        XCTAssertNotNil(try store.subscription(originalTransactionId: "7100000000000001"))
        XCTAssertNotNil(try store.subscription(originalTransactionId: "7200000000000001"))
        XCTAssertNil(try store.subscription(originalTransactionId: "7300000000000001"))
        XCTAssertEqual(try store.quarantined().map(\.reason).filter { $0.contains("com.example.other") }.count, 1)
        // show --json names each subscription's app: its bundle id and configured name.
        let shown = try run(["show", "--db", db, "7200000000000001", "--json"])
        let object = try JSONSerialization.jsonObject(with: Data(shown.stdout.utf8)) as? [String: Any]
        let app = (object?["subscriptions"] as? [[String: Any]])?.first?["app"] as? [String: String]
        XCTAssertEqual(app, ["name": "recipes", "bundleId": "com.example.recipes"], shown.stdout + shown.stderr)
    }

    /// Ingests one subscription of fitness (7100000000000001) and one of recipes (7200000000000001).
    func ingestOneOfEachApp(_ db: String) throws {
        var files: [String] = []
        for (bundleId, appleId, otid) in [("com.example.fitness", Int64(1234567890), "7100000000000001"),
                                          ("com.example.recipes", Int64(2234567890), "7200000000000001")] {
            let file = dir + "/\(otid).json"
            try Self.body(bundleId, appleId: appleId, otid: otid).write(to: URL(fileURLWithPath: file))
            files.append(file)
        }
        XCTAssertEqual(try run(["ingest", "--db", db] + files).status, 0)
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
        XCTAssertNil(try store.subscription(originalTransactionId: "7200000000000002"))
        XCTAssertNil(try store.notification(uuid: "n-7200000000000002"))
        XCTAssertEqual(try store.quarantined().count, 1)
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
        XCTAssertEqual(try store.quarantined().filter { $0.reason.contains(String(repeating: "a", count: IntakePolicy.quotedAppBytes + 1)) }, [])
        XCTAssertTrue(try post("app=recipes&app=recipes").stdout.hasPrefix("Status: 200 OK"), "the same app twice is that app")
        // Its own app's URL (by bundle id here) stores it.
        let own = try post("app=com.example.recipes")
        XCTAssertTrue(own.stdout.hasPrefix("Status: 200 OK"), own.stdout)
        XCTAssertNotNil(try store.subscription(originalTransactionId: "7200000000000002"))
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
        XCTAssertNil(try Store(path: db).subscription(originalTransactionId: "7100000000000003"))
        let own = try XCTUnwrap(client.post(fitness, params: FastCGITestClient.params(length: fitness.count) + [("QUERY_STRING", "app=fitness")]))
        XCTAssertTrue(own.stdout.hasPrefix("Status: 200 OK"), own.stdout)
        XCTAssertNotNil(try Store(path: db).subscription(originalTransactionId: "7100000000000003"))
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

    func testBackfillResumeWithSeveralAppsAsksTheAppAndEnvironmentTheRunRecorded() throws {
        try writeConfig(keyFile: try makeKeyFile())
        let db = Store.testLocation(file: dir + "/resume.db")
        XCTAssertEqual(try run(["init", "--db", db]).status, 0)
        let now = DateText.nowMillis()
        _ = try Store(path: db).startBackfill(environment: "Production", since: now - 7_200_000, until: now, onlyFailures: false,
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
}
