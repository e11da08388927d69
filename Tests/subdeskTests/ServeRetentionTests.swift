import Foundation
import XCTest
@testable import SubscriptionCore
@testable import SubdeskScenarios
import SubdeskTestKit

/// `serve` answering Apple's real-time Retention Messaging request on `/retention`, signed
/// by the test CA: each answer kind by the rules, each refusal, the decisions in the store,
/// a fast answer while the store is unavailable, and the API key never read.
final class ServeRetentionTests: SubdeskTestCase, RunsOnEveryEngine {
    static let sample = SampleData(directory: repoRoot + "/sample-data")
    var servers: [ServeProcess] = []

    override func tearDownWithError() throws {
        for server in servers { server.stop() }
        try super.tearDownWithError()
    }

    var socketPath: String { dir + "/serve.sock" }

    func makeStore() throws -> String {
        let db = Store.testLocation(file: dir + "/store.db")
        XCTAssertEqual(try run(["init", "--db", db]).status, 0)
        return db
    }

    func startServe(_ db: String, env: [String: String]) throws -> ServeProcess {
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_DATA_HOME"] = dir + "/data"
        environment["XDG_CONFIG_HOME"] = dir + "/config"
        environment.removeValue(forKey: "SUBDESK_DB")
        for (k, v) in env { environment[k] = v }
        let server = try ServeProcess(binary: Self.binary, arguments: ["--db", db], socket: socketPath,
                                      log: dir + "/serve-\(servers.count).log", environment: environment)
        servers.append(server)
        try server.waitUntilAnswering()
        return server
    }

    /// The rules, the keys (the API key's file is missing: serve never reads it) and the
    /// configuration naming them; the environment that points serve at it.
    func retentionConfig(_ db: String, rules: String) throws -> [String: String] {
        let offerKey = dir + "/offer-key.p8", rulesFile = dir + "/retention.rules", config = dir + "/subdesk.conf"
        if !FileManager.default.fileExists(atPath: offerKey) {
            try FileManager.default.copyItem(atPath: Self.repoRoot + "/sample-data/test-ca/leaf-key.pem", toPath: offerKey)
            chmod(offerKey, 0o600)
        }
        try rules.write(toFile: rulesFile, atomically: true, encoding: .utf8)
        try """
        db = \(db)
        root_ca = \(HardeningTests.root)
        serve_socket = \(socketPath)
        [key api]
        issuer_id = issuer-api
        key_id = APIKEY0001
        key_file = \(dir!)/absent/SubscriptionKey_APIKEY0001.p8
        [key offers]
        issuer_id = issuer-offers
        key_id = OFFERKEY01
        key_file = \(offerKey)
        [app demo]
        bundle_id = \(ScenarioBuilder.demoBundleId)
        app_apple_id = \(ScenarioBuilder.demoAppAppleId)
        key = api
        offer_key = offers
        retention_rules = \(rulesFile)

        """.write(toFile: config, atomically: true, encoding: .utf8)
        chmod(config, 0o600)
        return ["SUBDESK_CONFIG": config]
    }

    static func request(otid: String, product: String = "app.monthly", locale: String = "en-US", app: Int64 = ScenarioBuilder.demoAppAppleId,
                        environment: String = "Production", signedDate: Millis = DateText.nowMillis()) throws -> Data {
        let payload: [String: Any] = ["originalTransactionId": otid, "appAppleId": app, "productId": product, "userLocale": locale,
                                      "requestIdentifier": UUID().uuidString.lowercased(), "environment": environment, "signedDate": signedDate]
        let jws = try sample.signer().sign(payload: try JSONSerialization.data(withJSONObject: payload))
        return try JSONSerialization.data(withJSONObject: ["signedPayload": jws])
    }

    static func retentionParams(_ body: Data) -> [(String, String)] {
        FastCGITestClient.params(length: body.count).filter { $0.0 != "SCRIPT_NAME" }
            + [("SCRIPT_NAME", "/appstore"), ("DOCUMENT_URI", "/appstore/retention")]
    }

    func ask(_ client: FastCGITestClient, _ body: Data) throws -> (status: Int, json: [String: Any]) {
        let answer = try XCTUnwrap(client.post(body, params: Self.retentionParams(body)))
        let json = (try? JSONSerialization.jsonObject(with: Data(answer.text.utf8))) as? [String: Any] ?? [:]
        return (answer.status, json)
    }

    static let firstRules = "rule offer: state=expired,grace,billing_retry,revoked -> offer=SAVE50 message=m-offer\n"
    static let rules = firstRules + """
    rule switch: product=app.monthly locale=en-US -> switch_to=app.yearly billing_plan=BILLED_UPFRONT message=m-switch
    rule german: locale=de -> message=m-de

    """

    /// Notifications stored first (the store then knows the products' subscription group),
    /// the switch-plan rule added and read again on SIGHUP; then each answer and refusal.
    func startWithStoredSubscriptions() throws -> (db: String, server: ServeProcess, client: FastCGITestClient, grace: String, active: String) {
        let db = try makeStore()
        let env = try retentionConfig(db, rules: Self.firstRules)
        let server = try startServe(db, env: env)
        let client = try FastCGITestClient(socket: socketPath)
        for signed in try ServeTests.signedBodies(80, firstInstance: 880_000) {
            XCTAssertEqual(client.post(signed.body)?.status, 200, server.log)
        }
        _ = try retentionConfig(db, rules: Self.rules)
        server.signal(SIGHUP)
        let deadline = Date().addingTimeInterval(30)
        while !server.log.contains("reloaded") && Date() < deadline { usleep(20_000) }
        XCTAssertTrue(server.log.contains("reloaded"), server.log)
        let grace = try engineQuery(db, "SELECT original_transaction_id FROM subscriptions WHERE status <> 1 LIMIT 1")
        let active = try engineQuery(db, "SELECT original_transaction_id FROM subscriptions WHERE status = 1 AND product_id = 'app.monthly' LIMIT 1")
        XCTAssertFalse(grace.isEmpty)
        XCTAssertFalse(active.isEmpty)
        return (db, server, try FastCGITestClient(socket: socketPath), grace, active)
    }

    func testEachAnswerKindEachRefusalAndTheDecisionsInTheStore() throws {
        let (db, server, client, grace, active) = try startWithStoredSubscriptions()

        let offer = try ask(client, try Self.request(otid: grace))
        XCTAssertEqual(offer.status, 200, server.log)
        XCTAssertEqual(Array(offer.json.keys), ["promotionalOffer"])
        let inner = try XCTUnwrap(offer.json["promotionalOffer"] as? [String: String])
        XCTAssertEqual(inner["messageIdentifier"], "m-offer")
        let leaf = try X509Certificate(der: try Data(contentsOf: URL(fileURLWithPath: Self.repoRoot + "/sample-data/test-ca/leaf.der")))
        let jws = try XCTUnwrap(inner["promotionalOfferSignatureV2"]).split(separator: ".").map(String.init)
        XCTAssertTrue(ES256.isValidSignature(try XCTUnwrap(Base64URL.decode(jws[2])), of: Data((jws[0] + "." + jws[1]).utf8),
                                             by: try ES256.PublicKey(certificate: leaf)))
        let claims = try XCTUnwrap(try JSONSerialization.jsonObject(with: try XCTUnwrap(Base64URL.decode(jws[1]))) as? [String: Any])
        XCTAssertEqual(claims["aud"] as? String, "promotional-offer")
        XCTAssertEqual(claims["transactionId"] as? String, grace)
        XCTAssertEqual(claims["bid"] as? String, ScenarioBuilder.demoBundleId)
        XCTAssertEqual(claims["offerIdentifier"] as? String, "SAVE50")
        XCTAssertEqual(claims["iss"] as? String, "issuer-offers")

        let switched = try ask(client, try Self.request(otid: active))
        XCTAssertEqual(switched.status, 200)
        XCTAssertEqual(switched.json["alternateProduct"] as? [String: String],
                       ["productId": "app.yearly", "billingPlanType": "BILLED_UPFRONT", "messageIdentifier": "m-switch"])
        let message = try ask(client, try Self.request(otid: active, product: "app.yearly", locale: "de-DE"))
        XCTAssertEqual(message.json["message"] as? [String: String], ["messageIdentifier": "m-de"])
        let none = try ask(client, try Self.request(otid: active, product: "app.yearly", locale: "fr-FR"))
        XCTAssertEqual(none.status, 200)
        XCTAssertTrue(none.json.isEmpty, "no rule: nothing useful, Apple falls back")

        XCTAssertEqual(try ask(client, try Self.request(otid: active, app: 42)).status, 403, "wrong app")
        XCTAssertEqual(try ask(client, try Self.request(otid: active, environment: "LocalTesting")).status, 403, "wrong environment")
        XCTAssertEqual(try ask(client, try Self.request(otid: active, signedDate: DateText.nowMillis() - 600_000)).status, 403, "stale")
        var tampered = String(decoding: try Self.request(otid: active), as: UTF8.self)
        let parts = tampered.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        let payload = String(decoding: try XCTUnwrap(Base64URL.decode(parts[1])), as: UTF8.self).replacingOccurrences(of: active, with: grace)
        tampered = parts[0] + "." + Base64URL.encode(Data(payload.utf8)) + "." + parts[2]
        XCTAssertEqual(try ask(client, Data(tampered.utf8)).status, 403, "tampered")
        XCTAssertEqual(try ask(client, Data(#"{"payload":"x"}"#.utf8)).status, 400, "unsigned")
        XCTAssertEqual(try ask(client, Data("not json".utf8)).status, 400, "malformed")
        // The notification URL keeps answering as before.
        let later = try ServeTests.signedBodies(1, firstInstance: 889_000)[0]
        XCTAssertEqual(client.post(later.body)?.text, "stored \(later.uuid)", server.log)

        var outcomes = ""
        let deadline = Date().addingTimeInterval(10)
        repeat {
            outcomes = try engineQuery(db, "SELECT outcome || ' ' || COALESCE(rule, '-') || ' ' || COALESCE(answer_kind, '-') FROM retention_decisions ORDER BY id")
            if outcomes.split(separator: "\n").count >= 11 { break }
            usleep(50_000)
        } while Date() < deadline
        XCTAssertEqual(outcomes.split(separator: "\n").map(String.init), [
            "answered offer promotional_offer", "answered switch alternate_product", "answered german message", "no_rule - -",
            "refused:unknown_app - -", "refused:environment - -", "refused:stale - -", "refused:signature - -",
            "refused:unsigned - -", "refused:malformed - -",
        ])
        XCTAssertEqual(try engineQuery(db, "SELECT answer_value FROM retention_decisions WHERE rule = 'switch'"), "app.yearly")
        XCTAssertEqual(try engineQuery(db, "SELECT count(*) FROM retention_decisions WHERE original_transaction_id = '\(grace)'"), "1")
        XCTAssertTrue(server.log.contains("retention request refused (stale)"), server.log)
        // Counted by serve itself, as its 503s are: /metrics through serve_socket.
        let metrics = try run(["metrics"], env: ["SUBDESK_CONFIG": dir + "/subdesk.conf"])
        XCTAssertTrue(metrics.stdout.contains("subdesk_serve_retention_requests_total{outcome=\"answered\"} 3\n"), metrics.stdout)
        XCTAssertTrue(metrics.stdout.contains("subdesk_serve_retention_requests_total{outcome=\"refused:stale\"} 1\n"), metrics.stdout)
        XCTAssertTrue(metrics.stdout.contains("subdesk_serve_retention_requests_total{outcome=\"no_rule\"} 1\n"), metrics.stdout)
    }

    /// From serve's answer to the count: the responder suggests the yearly plan to a
    /// subscriber about to cancel and logs it; the subscriber switches (the notification of
    /// the changed renewal preference, through serve); `counts` then has one more saved
    /// subscription, and `cohorts --where saved=realtime` holds it.
    func testAnAnswerServeGaveAndThePlanSwitchAfterItAreASave() throws {
        let (db, server, client, _, active) = try startWithStoredSubscriptions()
        let utc = ["--tz", "UTC", "--from", DateText.format(DateText.nowMillis() - 400 * 86_400_000, "yyyy-MM-dd", zone: TimeZone(identifier: "UTC")!)]
        func saved() throws -> Int {
            let r = try run(["counts", "--db", db, "--json"] + utc)
            XCTAssertEqual(r.status, 0, r.stderr)
            return try XCTUnwrap(try json(r.stdout) as? [[String: Any]], r.stdout).reduce(0) { $0 + ($1["saved"] as? Int ?? 0) }
        }
        let before = try saved()
        let switched = try ask(client, try Self.request(otid: active))
        XCTAssertEqual((switched.json["alternateProduct"] as? [String: String])?["productId"], "app.yearly", server.log)
        XCTAssertEqual(try saved(), before, "an answer alone is no save")

        let latest = try XCTUnwrap(try Store(path: db).subscriptions.history(originalTransactionId: active).transactions.max { $0.purchaseDate < $1.purchaseDate })
        let transaction: [String: Any] = [
            "transactionId": latest.transactionId, "originalTransactionId": active, "productId": latest.productId,
            "bundleId": ScenarioBuilder.demoBundleId, "purchaseDate": latest.purchaseDate, "originalPurchaseDate": latest.originalPurchaseDate as Any,
            "expiresDate": latest.expiresDate as Any, "signedDate": DateText.nowMillis(), "environment": "Production",
            "inAppOwnershipType": "PURCHASED", "type": "Auto-Renewable Subscription", "transactionReason": "RENEWAL",
            "price": latest.price as Any, "currency": latest.currency as Any]
        let renewal: [String: Any] = ["originalTransactionId": active, "productId": latest.productId, "autoRenewProductId": "app.yearly",
                                      "autoRenewStatus": 1, "signedDate": DateText.nowMillis(), "environment": "Production"]
        usleep(5_000)
        let body = try FidelityCLITests.signedBody(type: "DID_CHANGE_RENEWAL_PREF", subtype: "UPGRADE", uuid: "switched-\(active)",
                                                   transaction: transaction, renewal: renewal)
        XCTAssertEqual(client.post(body)?.status, 200, server.log)
        XCTAssertEqual(try saved(), before + 1, "the switch to the answered product saved the subscription")
        let month = DateText.format(DateText.nowMillis() - 400 * 86_400_000, "yyyy-MM", zone: TimeZone(identifier: "UTC")!)
        let cohort = try run(["cohorts", "--db", db, "--json", "--from", month, "--where", "saved=realtime"])
        XCTAssertEqual(cohort.status, 0, cohort.stderr)
        let cohorts = try XCTUnwrap((try json(cohort.stdout) as? [String: Any])?["cohorts"] as? [[String: Any]], cohort.stdout)
        XCTAssertEqual(cohorts.compactMap { $0["size"] as? Int }.reduce(0, +), 1, cohort.stdout)
    }

    /// The subscriptions table locked by another session (PostgreSQL: ACCESS EXCLUSIVE, which
    /// blocks reads; a SQLite store in WAL mode cannot be kept from its readers while serve
    /// holds it open): a request whose rules ask about the subscriber gets an answer with
    /// nothing in it, fast, not after the lock is let go.
    func testARequestWhileTheStoreIsUnavailableGetsAFastAnswer() throws {
        let (db, server, client, grace, _) = try startWithStoredSubscriptions()
        guard PostgresLocation.isPostgres(db) else { throw XCTSkip("locks a PostgreSQL table (SUBDESK_TEST_POSTGRES)") }
        let location = try PostgresLocation(db)
        let locker = Process()
        locker.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        locker.arguments = ["psql", "-d", location.conninfo, "-AtqX", "-c",
                            (location.schema.map { "SET search_path TO \($0); " } ?? "")
                                + "BEGIN; LOCK TABLE subscriptions IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(20); COMMIT;"]
        locker.standardOutput = FileHandle.nullDevice
        try locker.run()
        defer { locker.terminate(); locker.waitUntilExit() }
        let deadline = Date().addingTimeInterval(10)
        while try engineQuery(db, "SELECT count(*) FROM pg_locks WHERE mode = 'AccessExclusiveLock' AND relation = 'subscriptions'::regclass") == "0",
              Date() < deadline { usleep(50_000) }
        let started = Date()
        let answer = try ask(client, try Self.request(otid: grace))
        let took = Date().timeIntervalSince(started)
        XCTAssertEqual(answer.status, 200, server.log)
        XCTAssertTrue(answer.json.isEmpty, "nothing useful: Apple falls back")
        XCTAssertLessThan(took, 2, "answered fast, not after the lock is let go")
        print("retention answer while the store is locked: \(Int(took * 1000)) ms")
    }

    /// The responder's time from request to answer through serve, sequential and 16 at once.
    func testMeasureTheRespondersTimes() throws {
        let (_, _, client, grace, active) = try startWithStoredSubscriptions()
        let bodies = try (0..<400).map { try Self.request(otid: $0 % 2 == 0 ? grace : active) }
        func percentiles(_ ms: [Double]) -> String {
            let s = ms.sorted()
            return String(format: "p50 %.2f ms, p99 %.2f ms (n=%d)", s[s.count / 2], s[min(s.count - 1, s.count * 99 / 100)], s.count)
        }
        var sequential: [Double] = []
        for body in bodies.prefix(200) {
            let t = DispatchTime.now().uptimeNanoseconds
            XCTAssertEqual(try ask(client, body).status, 200)
            sequential.append(Double(DispatchTime.now().uptimeNanoseconds - t) / 1e6)
        }
        let times = Shared([Double]())
        let next = Shared(0)
        let group = DispatchGroup()
        let socket = socketPath
        for _ in 0..<16 {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                guard let c = try? FastCGITestClient(socket: socket) else { return }
                while true {
                    var i = 0
                    next.update { i = $0; $0 += 1 }
                    guard i < bodies.count else { return }
                    let t = DispatchTime.now().uptimeNanoseconds
                    _ = c.post(bodies[i], params: Self.retentionParams(bodies[i]))
                    let ms = Double(DispatchTime.now().uptimeNanoseconds - t) / 1e6
                    times.update { $0.append(ms) }
                }
            }
        }
        group.wait()
        print("retention responder over serve, sequential: \(percentiles(sequential))")
        print("retention responder over serve, 16 concurrent: \(percentiles(times.current))")
    }
}
