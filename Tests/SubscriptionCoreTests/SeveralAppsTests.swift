import Foundation
import XCTest
import FakeApple
@testable import SubscriptionCore
import SubdeskScenarios
import SubdeskTestKit

/// Several apps in one desk: `[key]` and `[app]` sections, intake that holds each body to
/// the app it was signed for, and Apple calls signed for the subscription's app.
final class SeveralAppsTests: XCTestCase, RunsOnEveryEngine {
    /// The issue's shape, exactly.
    static let issueShape = """
    [key team]
    issuer_id = 11111111-2222-3333-4444-555555555555
    key_id = KEY123
    key_file = /etc/subdesk/SubscriptionKey_KEY123.p8

    [app fitness]
    bundle_id = com.example.fitness
    app_apple_id = 1234567890
    environment = Production, Sandbox
    key = team
    """

    static let fitness = "com.example.fitness"
    static let recipes = "com.example.recipes"

    /// Two apps sharing the team's key; recipes alone takes V1 bodies.
    static let twoApps = issueShape + """


    [app recipes]
    bundle_id = com.example.recipes
    app_apple_id = 2234567890
    environment = Production
    key = team
    allow_v1 = yes
    """

    func testTheIssuesShapeParsesIntoOneAppWithItsKey() throws {
        let config = try Configuration(text: Self.issueShape, source: "config")
        let apps = try ConfiguredApps(configuration: config)
        XCTAssertTrue(apps.fromSections)
        XCTAssertEqual(apps.apps, [ConfiguredApp(
            name: "fitness", bundleId: Self.fitness, appAppleId: 1234567890, environments: [.production, .sandbox],
            key: AppStoreKeySettings(name: "team", issuerId: "11111111-2222-3333-4444-555555555555", keyId: "KEY123",
                                     keyFile: "/etc/subdesk/SubscriptionKey_KEY123.p8"))])
        XCTAssertNil(apps.apps[0].environment, "both environments: none is the only one")
        XCTAssertEqual(config.values, [:], "sections set no team-wide key")
    }

    func testAppsAreFoundByNameBundleIdOrAppleId() throws {
        let apps = try ConfiguredApps(configuration: Configuration(text: Self.twoApps, source: "config"))
        XCTAssertEqual(apps.apps.map(\.name), ["fitness", "recipes"])
        XCTAssertEqual(apps.app(named: "recipes")?.bundleId, Self.recipes)
        XCTAssertEqual(apps.app(named: Self.fitness)?.name, "fitness")
        XCTAssertEqual(apps.app(named: "2234567890")?.name, "recipes")
        XCTAssertEqual(apps.app(bundleId: Self.recipes)?.environments, [.production])
        XCTAssertNil(apps.app(bundleId: "com.example.other"))
        XCTAssertNil(apps.app(named: "beta"))
        XCTAssertEqual(apps.apps.map(\.allowV1), [false, true])
    }

    func testAFlatConfigurationIsOneAppNamedDefaultWithItsFlagsOnTop() throws {
        let config = try Configuration(text: "bundle_id = com.example.app\napp_apple_id = 42\nenvironment = Sandbox\n"
                                       + "api_key_file = /k.p8\napi_key_id = K\napi_issuer_id = I\n", source: "config")
        var flags = ConfiguredApps.Overrides()
        flags.bundleId = "com.example.flag"
        let apps = try ConfiguredApps(configuration: config, overrides: flags)
        XCTAssertFalse(apps.fromSections)
        XCTAssertEqual(apps.apps, [ConfiguredApp(name: ConfiguredApps.flatAppName, bundleId: "com.example.flag", appAppleId: 42,
                                                 environments: [.sandbox],
                                                 key: AppStoreKeySettings(name: ConfiguredApps.flatKeyName, issuerId: "I", keyId: "K", keyFile: "/k.p8"))])
        // Only some api_* keys: the app is still there, and its key names what is missing when used.
        let partial = try ConfiguredApps(configuration: Configuration(text: "api_key_id = K\n", source: "config"))
        XCTAssertThrowsError(try partial.apps[0].apiKey(warn: { _ in })) { error in
            XCTAssertTrue("\(error)".contains("missing api_key_file, api_issuer_id"), "\(error)")
        }
    }

    func testSectionMistakesAreRefusedNamingTheFileAndLine() {
        let cases: [(String, String)] = [
            ("[team x]\n", "c:1: unknown section kind team"),
            ("[app]\n", "c:1: [app] sections take one name"),
            ("[app a\n", "c:1: a section header is [KIND NAME]"),
            ("[app a]\nbundle_id = com.a\nissuer_id = X\n", "c:3: key issuer_id is not allowed in [app a]"),
            ("[key k]\nbundle_id = com.a\n", "c:2: key bundle_id is not allowed in [key k]"),
            ("[app a]\nbundle_id = com.a\ndb = x.db\n", "c:3: key db is not allowed in [app a]"),
            ("[app a]\nbundle_id = com.a\ncolour = red\n", "c:3: unknown key colour in [app a]"),
            ("[app a]\nbundle_id = com.a\n\n[app a]\nbundle_id = com.b\n", "c:4: duplicate section [app a] (first at line 1)"),
            ("[app a]\nbundle_id = com.a\nkey = team\n", "c:3: [app a] names key team, but no [key team] section is declared"),
            ("[app a]\nbundle_id = com.a\n[app b]\nbundle_id = com.a\n", "c:4: bundle id com.a is already [app a]'s (line 2)"),
            ("bundle_id = com.flat\n\n[app a]\nbundle_id = com.a\n", "c:1: bundle_id at the top level beside [app] sections"),
            ("api_key_id = K\n[app a]\nbundle_id = com.a\n", "c:1: api_key_id at the top level beside [app] sections"),
            ("[app a]\napp_apple_id = 1\n", "c:1: [app a] has no bundle_id"),
            ("[app a]\nbundle_id = com.a\napp_apple_id = one\n", "c:3: app_apple_id must be a number, got one"),
            ("[app a]\nbundle_id = com.a\nenvironment = Production, Xcode\n", "c:3: environment is Production, Sandbox or both, got Xcode"),
            ("[app a]\nbundle_id = com.a\nallow_v1 = perhaps\n", "c:3: allow_v1 is yes or no, got perhaps"),
            ("[key k]\nkey_id = K\n[app a]\nbundle_id = com.a\n", "c:1: [key k] lacks issuer_id, key_file"),
            ("[app a]\nbundle_id = com.a\nenvironment = Sandbox\nenvironment = Production\n", "c:4: environment given twice in [app a] (first at line 3)"),
            ("[app a]\nbundle_id = com.a\n[app b]\nbundle_id = com.b\nallow_v1 = yes\n\nallow_v1 = no\n", "c:7: allow_v1 given twice in [app b] (first at line 5)"),
            ("[app com.b]\nbundle_id = com.a\n[app b]\nbundle_id = com.b\n", "c:1: [app com.b]'s name is [app b]'s bundle id: it would name both apps"),
            ("[app a]\nbundle_id = com.a\napp_apple_id = 12\n[app 12]\nbundle_id = com.b\n", "c:4: [app 12]'s name is [app a]'s Apple ID"),
        ]
        for (text, expected) in cases {
            XCTAssertThrowsError(try Configuration(text: text, source: "c"), text) { error in
                XCTAssertTrue("\(error)".hasPrefix(expected), "\(text.debugDescription): \(error)")
            }
        }        // A key repeated at the top level is as before: the last of it (a list, every one).
        XCTAssertEqual(try Configuration(text: "bundle_id = com.a\nbundle_id = com.b\n", source: "c").string(.bundleId), "com.b")
    }

    func testAppFlagsAreRefusedBesideAppSectionsButEnvironmentNarrowsEveryApp() throws {
        let config = try Configuration(text: Self.twoApps, source: "config")
        var flags = ConfiguredApps.Overrides()
        flags.bundleId = "com.example.flag"
        XCTAssertThrowsError(try ConfiguredApps(configuration: config, overrides: flags)) { error in
            XCTAssertTrue("\(error)".hasPrefix("--bundle-id sets the app of a configuration without [app] sections"), "\(error)")
        }
        flags = ConfiguredApps.Overrides()
        flags.environment = "Sandbox"
        XCTAssertEqual(try ConfiguredApps(configuration: config, overrides: flags).apps.map(\.environments), [[.sandbox], [.sandbox]])
    }

    // MARK: Intake

    /// Intake for the two apps, signed by the test CA.
    static func twoAppIntake(_ store: Store) throws -> Intake {
        var policy = IntakePolicy()
        try policy.serve(try ConfiguredApps(configuration: Configuration(text: Self.twoApps, source: "config"))) { _, _ in "" }
        return TestKit.intake(store, policy: policy)
    }

    static func body(app bundleId: String, appleId: Int64, otid: String, uuid: String) -> Data {
        TestKit.body(type: "SUBSCRIBED", subtype: "INITIAL_BUY", uuid: uuid, bundleId: bundleId, appAppleId: appleId,
                     transaction: TestKit.transaction(id: otid, original: otid, bundleId: bundleId),
                     renewal: TestKit.renewal(original: otid))
    }

    /// A policy refusal, quarantined with `reason`, and nothing of the body stored.
    func assertQuarantinedAndNotStored(_ outcome: IntakeOutcome, in store: Store, uuid: String, otid: String, reason: String,
                                       line: UInt = #line) throws {
        guard case .rejected(let refusal, let id) = outcome else { return XCTFail("\(outcome)", line: line) }
        XCTAssertEqual(refusal.kind, .policy, line: line)
        XCTAssertEqual(refusal.description, reason, line: line)
        XCTAssertEqual(try store.quarantine.entries(ids: [id]).first?.reason, reason, line: line)
        XCTAssertNil(try store.notifications.find(uuid: uuid), line: line)
        XCTAssertNil(try store.subscriptions.find(originalTransactionId: otid), line: line)
    }

    func testEachAppsBodiesAreStoredAndAThirdAppsAreRefusedNamingItsBundleId() throws {
        let store = try Store.inMemory()
        let intake = try Self.twoAppIntake(store)
        guard case .stored = try intake.ingest(Self.body(app: Self.fitness, appleId: 1234567890, otid: "7100000000000001", uuid: "fit-1")),
              case .stored = try intake.ingest(Self.body(app: Self.recipes, appleId: 2234567890, otid: "7200000000000001", uuid: "rec-1")) else {
            return XCTFail("both apps' bodies are stored")
        }
        XCTAssertNotNil(try store.subscriptions.find(originalTransactionId: "7100000000000001"))
        XCTAssertNotNil(try store.subscriptions.find(originalTransactionId: "7200000000000001"))
        try assertQuarantinedAndNotStored(try intake.ingest(Self.body(app: "com.example.other", appleId: 3234567890, otid: "7300000000000001", uuid: "oth-1")),
                                          in: store, uuid: "oth-1", otid: "7300000000000001",
                                          reason: "signedPayload: bundleId com.example.other is no configured app's "
                                            + "(apps: fitness (com.example.fitness), recipes (com.example.recipes))")
        // An app's Production body must carry that app's Apple ID, not another app's.
        let crossed = try intake.ingest(Self.body(app: Self.recipes, appleId: 1234567890, otid: "7200000000000002", uuid: "rec-2"))
        guard case .rejected(let wrongId, _) = crossed else { return XCTFail("\(crossed)") }
        XCTAssertEqual(wrongId.description, "signedPayload: appAppleId 1234567890 is not the configured 2234567890")
        // A transaction nested in one app's notification is held to that app's bundle id.
        let nested = TestKit.body(type: "DID_RENEW", uuid: "fit-2", bundleId: Self.fitness, appAppleId: 1234567890,
                                  transaction: TestKit.transaction(id: "7100000000000002", original: "7100000000000001", bundleId: Self.recipes),
                                  renewal: nil)
        guard case .rejected(let mixed, _) = try intake.ingest(nested) else { return XCTFail("a nested record of another app is refused") }
        XCTAssertEqual(mixed.description, "signedTransactionInfo: bundleId com.example.recipes is not the configured com.example.fitness")
    }

    func testABodyPostedToAnotherAppsURLIsRefusedNamingBothAndNotStored() throws {
        let store = try Store.inMemory()
        let intake = try Self.twoAppIntake(store)
        let recipesBody = Self.body(app: Self.recipes, appleId: 2234567890, otid: "7200000000000009", uuid: "rec-9")
        try assertQuarantinedAndNotStored(try intake.ingest(recipesBody, source: "cgi:test", postedFor: "fitness"),
                                          in: store, uuid: "rec-9", otid: "7200000000000009",
                                          reason: "signedPayload: signed for app recipes (com.example.recipes), "
                                            + "posted to ?app=fitness, app fitness (com.example.fitness)")
        // A URL naming no configured app refuses every body; its own app's (by name, bundle id or Apple ID) are stored.
        guard case .rejected(let unknown, _) = try intake.ingest(recipesBody, postedFor: "beta") else { return XCTFail() }
        XCTAssertTrue(unknown.description.hasPrefix("?app: beta names no configured app"), unknown.description)
        guard case .stored = try intake.ingest(recipesBody, postedFor: "2234567890") else { return XCTFail("its own app's URL stores it") }
        // Replayed without the URL (once the set-up is fixed), it is stored under the app it was signed for.
        XCTAssertNotNil(try store.subscriptions.find(originalTransactionId: "7200000000000009"))        // A retry of the stored body posted to the other app's URL is refused as well, not
        // answered as a duplicate; to its own app's URL, or with none, it is a duplicate.
        guard case .rejected(let retried, _) = try intake.ingest(recipesBody, postedFor: "fitness") else {
            return XCTFail("a stored body posted again to another app's URL is refused")
        }
        XCTAssertTrue(retried.description.contains("posted to ?app=fitness"), retried.description)
        guard case .duplicate = try intake.ingest(recipesBody, postedFor: "recipes"), case .duplicate = try intake.ingest(recipesBody) else {
            return XCTFail("to its own app's URL, or none, a retry is a duplicate")
        }
    }

    /// A refused body is counted under the app it names when a configured app has that
    /// bundle id; bodies naming apps none has are counted as one (the metrics' `other`), so
    /// bodies naming made-up apps cannot add an intake counter row each.
    func testRefusalsNamingAppsNoneHasAreCountedAsOneAppAndAConfiguredAppsAsItself() throws {
        let store = try Store.inMemory()
        let intake = try Self.twoAppIntake(store)
        for (n, app) in ["com.example.a", "com.example.b", "com.example.c"].enumerated() {
            guard case .rejected = try intake.ingest(Self.body(app: app, appleId: 3234567890, otid: "730000000000000\(n)", uuid: "made-up-\(n)")) else {
                return XCTFail("\(app) is refused")
            }
        }
        // One whose signature does not verify, naming yet another app.
        let tampered = String(decoding: Self.body(app: "com.example.d", appleId: 3234567890, otid: "7300000000000009", uuid: "made-up-9"),
                              as: UTF8.self).replacingOccurrences(of: "\"}", with: "AAAA\"}")
        guard case .rejected(let refusal, _) = try intake.ingest(Data(tampered.utf8)) else { return XCTFail("the tampered body is refused") }
        XCTAssertEqual(refusal.kind, .signature)
        // A fitness body posted to recipes' URL: refused, and counted as fitness's.
        guard case .rejected = try intake.ingest(Self.body(app: Self.fitness, appleId: 1234567890, otid: "7100000000000009", uuid: "fit-9"),
                                                 postedFor: "recipes") else { return XCTFail("posted to another app's URL") }
        let counts = try OnCallReading.read(from: store, now: TestKit.anchor).intakeCounts
        XCTAssertEqual(counts.filter { $0.bundleId == IntakePolicy.unconfiguredApp }.map(\.count).reduce(0, +), 4)
        XCTAssertEqual(Set(counts.map(\.bundleId)), [IntakePolicy.unconfiguredApp, Self.fitness])
        var inputs = OnCallInputs(reading: try OnCallReading.read(from: store, now: TestKit.anchor), roots: [], quarantineBudgetBytes: nil)
        inputs.apps = try ConfiguredApps(configuration: Configuration(text: Self.twoApps, source: "config"))
        let apps = OnCallMetrics.exposition(inputs).split(separator: "\n").filter { $0.hasPrefix("subdesk_notifications_received_total{") }
            .map { $0.split(separator: ",")[0] }
        XCTAssertEqual(Set(apps), [#"subdesk_notifications_received_total{app="other""#, #"subdesk_notifications_received_total{app="fitness""#])
    }

    func testAV1BodyNamesItsAppByBidAndOnlyThatAppsAllowV1Counts() throws {
        let store = try Store.inMemory()
        let intake = try Self.twoAppIntake(store)
        func v1(_ bid: String, id: String) -> Data {
            TestKit.json(["notification_type": "INITIAL_BUY", "environment": "PROD", "bid": bid, "password": "",
                          "auto_renew_status": "true", "auto_renew_product_id": "app.monthly",
                          "unified_receipt": ["environment": "Production", "latest_receipt_info": [[
                              "transaction_id": id, "original_transaction_id": id, "product_id": "app.monthly",
                              "purchase_date_ms": "\(TestKit.anchor - TestKit.day)", "expires_date_ms": "\(TestKit.anchor + 20 * TestKit.day)",
                              "original_purchase_date_ms": "\(TestKit.anchor - TestKit.day)"]]]])
        }
        guard case .stored = try intake.ingest(v1(Self.recipes, id: "7200000000000100")) else { return XCTFail("recipes allows V1") }
        let refused = try intake.ingest(v1(Self.fitness, id: "7100000000000100"))
        guard case .rejected(let refusal, _) = refused else { return XCTFail("\(refused)") }
        XCTAssertTrue(refusal.description.hasPrefix("body: V1 notification INITIAL_BUY refused for com.example.fitness"), refusal.description)
        guard case .rejected(let other, _) = try intake.ingest(v1("com.example.other", id: "7300000000000100")) else { return XCTFail() }
        XCTAssertTrue(other.description.hasPrefix("body.bid: bundleId com.example.other is no configured app's"), other.description)
    }

    // MARK: Apple

    func key(_ bundleId: String) throws -> AppStoreAPIKey {
        try AppStoreAPIKey.load(file: RevalidationKeys.privateKeyFile, keyId: RevalidationFixture.keyId,
                                issuerId: RevalidationFixture.issuerId, bundleId: bundleId, warn: { _ in })
    }

    /// A revalidator of both apps, each signing with the team's key for its own bundle id.
    func twoAppRevalidator(_ fixture: RevalidationFixture) throws -> Revalidator {
        var configuration = RevalidationConfiguration(endpoints: fixture.endpoints, http: RevalidationFixture.fastHTTP)
        configuration.appKeys = [Self.fitness: try key(Self.fitness), Self.recipes: try key(Self.recipes)]
        let policy = try Self.twoAppIntake(try fixture.openStore()).policy
        let path = fixture.storePath
        return Revalidator(openStore: { try Store(path: path) }, configuration: configuration,
                           verifier: SignedDataVerifier(roots: TestKit.roots), policy: policy, operatorName: "ana",
                           clock: { TestKit.anchor })
    }

    /// Stores `transaction` of `app` through two-app intake, and has the fake App Store answer
    /// its statuses and history (for that app only).
    func seedAndAnswer(_ fixture: RevalidationFixture, app bundleId: String, appleId: Int64, transaction: [String: Any]) throws {
        let otid = transaction["originalTransactionId"] as! String
        let body = TestKit.body(type: "SUBSCRIBED", subtype: "INITIAL_BUY", uuid: "n-\(otid)", signed: transaction["signedDate"] as! Millis,
                                bundleId: bundleId, appAppleId: appleId, transaction: transaction, renewal: TestKit.renewal(original: otid))
        guard case .stored = try Self.twoAppIntake(try fixture.openStore()).ingest(body, receivedAt: TestKit.anchor - 20 * TestKit.day) else {
            throw RevalidationFixture.Failure("not seeded")
        }
        answer(fixture, app: bundleId, appleId: appleId, transaction: transaction)
    }

    /// Has the fake App Store answer the statuses and history of `transaction`'s subscription,
    /// for its app only.
    func answer(_ fixture: RevalidationFixture, app bundleId: String, appleId: Int64, transaction: [String: Any]) {
        let otid = transaction["originalTransactionId"] as! String
        fixture.server.transactions([otid], belongTo: bundleId)
        let app: [String: Any] = ["environment": "Production", "bundleId": bundleId, "appAppleId": appleId]
        fixture.server.route("GET", "/prod/inApps/v1/subscriptions/\(otid)", .json(app.merging([
            "data": [["subscriptionGroupIdentifier": "1", "lastTransactions": [[
                "originalTransactionId": otid, "status": 1, "signedTransactionInfo": RevalidationFixture.sign(transaction)]]]]]) { $1 }))
        fixture.server.route("GET", "/prod/inApps/v2/history/\(otid)", .json(app.merging([
            "revision": "r", "hasMore": false, "signedTransactions": [RevalidationFixture.sign(transaction)]]) { $1 }))
    }

    /// An order id and an app transaction id name no stored subscription: each app is asked in
    /// turn (the first, fitness, refused as Apple refuses another app's token) until the one
    /// that knows it answers; with an app named, only that app is asked.
    func testAnOrderAndAnAppTransactionAreAskedOfEachAppUntilTheirAppAnswers() throws {
        let fixture = try RevalidationFixture()
        defer { fixture.tearDown() }
        _ = try fixture.openStore()
        let (otid, order, download) = ("7200000000000041", "MTN9T4BRB9", "71199")
        let bought = TestKit.transaction(id: otid, original: otid, purchase: TestKit.anchor - 5 * TestKit.day,
                                         expires: TestKit.anchor + 25 * TestKit.day, signed: TestKit.anchor - 5 * TestKit.day,
                                         bundleId: Self.recipes, extra: ["appTransactionId": download])
        answer(fixture, app: Self.recipes, appleId: 2234567890, transaction: bought)
        fixture.server.transactions([order], belongTo: Self.recipes)
        fixture.server.route("GET", "/prod/inApps/v1/lookup/\(order)", .json(["status": 0, "signedTransactions": [RevalidationFixture.sign(bought)]]))
        let found = try twoAppRevalidator(fixture).lookUpOrder(order)
        XCTAssertEqual(found.originalTransactionIds, [otid])
        XCTAssertEqual(try fixture.openStore().subscriptions.find(originalTransactionId: otid)?.state.status, .active)
        let tokens = { (path: String) in fixture.server.requests("GET", path).map { FakeAppleServer.tokenBundleId($0) ?? "-" } }
        XCTAssertEqual(tokens("/prod/inApps/v1/lookup/\(order)"), [Self.fitness, Self.recipes])
        _ = try twoAppRevalidator(fixture).lookUpOrder(order, app: Self.recipes)
        XCTAssertEqual(tokens("/prod/inApps/v1/lookup/\(order)"), [Self.fitness, Self.recipes, Self.recipes], "only the app named")

        // The app download the purchase came from, asked by its appTransactionId.
        let examples = ConsentExamples()
        var response = try ConsentExamples.Examples.example("appTransactionInfoResponse")
        response["signedAppTransactionInfo"] = try ConsentExamples.Examples.sign(
            try examples.appTransaction(["bundleId": Self.recipes, "appAppleId": 2234567890, "appTransactionId": download]))
        fixture.server.transactions([download], belongTo: Self.recipes)
        fixture.server.route("GET", "/prod/inApps/v1/transactions/appTransactions/\(download)", .json(response))
        let app = try XCTUnwrap(try twoAppRevalidator(fixture).resolveAppTransaction(download, reason: "two apps"))
        XCTAssertEqual(app.appTransaction.bundleId, Self.recipes)
        XCTAssertEqual(app.originalTransactionIds, [otid])
        XCTAssertEqual(tokens("/prod/inApps/v1/transactions/appTransactions/\(download)"), [Self.fitness, Self.recipes])
        // The store knows the download's purchase now: its subscription is revalidated, signed for its app.
        XCTAssertEqual(tokens("/prod/inApps/v1/subscriptions/\(otid)").last, Self.recipes)
    }

    func testEachRequestIsSignedForTheSubscriptionsAppAndAnotherAppsTokenIsRefused() throws {
        let fixture = try RevalidationFixture()
        defer { fixture.tearDown() }
        let otid = "7200000000000001"
        try seedAndAnswer(fixture, app: Self.recipes, appleId: 2234567890,
                          transaction: TestKit.transaction(id: otid, original: otid, bundleId: Self.recipes))
        // A token for the other app is refused, as Apple refuses it; the app's own is answered.
        let wrong = AppStoreServerAPIClient(key: try key(Self.fitness), endpoints: fixture.endpoints, policy: RevalidationFixture.fastHTTP,
                                            environments: [.production])
        XCTAssertThrowsError(try wrong.subscriptionStatuses(transactionId: otid)) { error in
            XCTAssertTrue("\(error)".contains("401"), "\(error)")
        }
        let right = AppStoreServerAPIClient(key: try key(Self.recipes), endpoints: fixture.endpoints, policy: RevalidationFixture.fastHTTP,
                                            environments: [.production])
        XCTAssertEqual(try right.subscriptionStatuses(transactionId: otid).bundleId, Self.recipes)
        // The revalidator of both apps signs for the subscription's app (recipes, the second app), not the first.
        let result = try twoAppRevalidator(fixture).revalidate(otid, reason: "two apps")
        XCTAssertEqual(result.originalTransactionId, otid)
        let tokens = fixture.server.requests.filter { $0.path.hasPrefix("/prod/inApps") }.map(FakeAppleServer.tokenBundleId)
        XCTAssertEqual(Array(tokens.suffix(2)), [Self.recipes, Self.recipes])
    }

    /// The sweep takes both apps' lapsed subscriptions, each asked with its own app's token,
    /// and names the app of one it could not revalidate.
    func testTheSweepSignsEachSubscriptionForItsAppAndNamesTheAppOfAFailure() throws {
        let fixture = try RevalidationFixture()
        defer { fixture.tearDown() }
        let (fit, rec) = ("7100000000000011", "7200000000000011")
        for (otid, bundleId, appleId) in [(fit, Self.fitness, Int64(1234567890)), (rec, Self.recipes, Int64(2234567890))] {
            try seedAndAnswer(fixture, app: bundleId, appleId: appleId, transaction: TestKit.transaction(
                id: otid, original: otid, purchase: TestKit.anchor - 31 * TestKit.day, expires: TestKit.anchor - TestKit.day,
                signed: TestKit.anchor - 31 * TestKit.day, bundleId: bundleId))
        }
        fixture.server.route("GET", "/prod/inApps/v1/subscriptions/\(rec)",
                             RevalidationFixture.apiError(500, code: 5000000, message: "An unknown error occurred."))
        let report = try ExpirySweep(revalidator: try twoAppRevalidator(fixture)).run(options: SweepOptions(concurrency: 2))
        XCTAssertEqual(report.counts.checked, 2)
        XCTAssertEqual(report.failures.map(\.originalTransactionId), [rec])
        XCTAssertEqual(report.failures.first?.app, "recipes (com.example.recipes)")
        XCTAssertEqual((report.jsonObject()["failures"] as? [[String: Any]])?.first?["app"] as? String, "recipes (com.example.recipes)")
        let asked = Set(fixture.server.requests.map { "\($0.path.split(separator: "/").last ?? "") \(FakeAppleServer.tokenBundleId($0) ?? "-")" })
        XCTAssertEqual(asked, ["\(fit) \(Self.fitness)", "\(rec) \(Self.recipes)"])
        // One app's sweep (--app) takes only its subscriptions: recipes' is still lapsed (fitness' is expired now).
        let before = fixture.server.requests.count
        let one = try ExpirySweep(revalidator: try twoAppRevalidator(fixture))
            .run(options: SweepOptions(app: AppScope(bundleId: Self.recipes, includesUnknown: false)))
        XCTAssertEqual(one.counts.checked, 1)
        XCTAssertEqual(Set(fixture.server.requests.dropFirst(before).map { FakeAppleServer.tokenBundleId($0) ?? "-" }), [Self.recipes])
        let none = try ExpirySweep(revalidator: try twoAppRevalidator(fixture))
            .run(options: SweepOptions(app: AppScope(bundleId: Self.fitness, includesUnknown: false)))
        XCTAssertEqual(none.counts.checked, 0)
    }

    /// A refund answer is signed for the app its CONSUMPTION_REQUEST was signed for, even when
    /// the request names no subscription; a request of an app no longer configured is refused
    /// by name, and nothing is sent.
    func testARefundAnswerIsSignedForTheRequestsAppAndAnUnconfiguredAppIsRefused() throws {
        let fixture = try RevalidationFixture()
        defer { fixture.tearDown() }
        let (otid, tid, uuid) = ("7200000000000031", "7200000000000032", "c0a50000-0000-4000-8000-000000000031")
        let bought = TestKit.transaction(id: tid, original: otid, purchase: TestKit.anchor - 5 * TestKit.day,
                                         expires: TestKit.anchor + 25 * TestKit.day, signed: TestKit.anchor - 5 * TestKit.day,
                                         bundleId: Self.recipes)
        let intake = try Self.twoAppIntake(try fixture.openStore())
        for body in [TestKit.body(type: "SUBSCRIBED", subtype: "INITIAL_BUY", signed: TestKit.anchor - 5 * TestKit.day, bundleId: Self.recipes,
                                  appAppleId: 2234567890, transaction: bought, renewal: TestKit.renewal(original: otid)),
                     TestKit.body(type: "CONSUMPTION_REQUEST", uuid: uuid, signed: TestKit.anchor - 2 * 3_600_000, bundleId: Self.recipes,
                                  appAppleId: 2234567890, transaction: bought, renewal: nil,
                                  extraData: ["consumptionRequestReason": "UNINTENDED_PURCHASE"])] {
            guard case .stored = try intake.ingest(body, receivedAt: TestKit.anchor - 3_600_000) else { return XCTFail("not stored") }
        }
        let store = try fixture.openStore()
        XCTAssertEqual(try store.refundRequests.request(uuid: uuid)?.bundleId, Self.recipes)
        // The request names no subscription (as one about a purchase the store does not hold).
        try store.db.run("UPDATE refund_requests SET original_transaction_id = NULL WHERE notification_uuid = ?", [uuid])
        fixture.server.transactions([tid], belongTo: Self.recipes)
        let path = "/prod/inApps/v2/transactions/consumption/\(tid)"
        fixture.server.route("PUT", path, FakeAppleServer.Response(status: 202))
        let answer = ConsumptionAnswer(customerConsented: true, deliveryStatus: .delivered, sampleContentProvided: false,
                                       refundPreference: .decline)
        // An app no configuration has: refused by name before Apple is asked.
        try store.db.run("UPDATE refund_requests SET bundle_id = 'com.example.gone' WHERE notification_uuid = ?", [uuid])
        XCTAssertThrowsError(try twoAppRevalidator(fixture).answerRefundRequest(uuid, answer: answer, reason: nil)) { error in
            XCTAssertTrue("\(error)".hasPrefix("refund request \(uuid) is app com.example.gone's, which no configured app is (apps: "
                                              + "fitness (com.example.fitness), recipes (com.example.recipes))"), "\(error)")
        }
        XCTAssertTrue(fixture.server.requests.isEmpty)
        try store.db.run("UPDATE refund_requests SET bundle_id = ? WHERE notification_uuid = ?", [Self.recipes, uuid])
        let answered = try twoAppRevalidator(fixture).answerRefundRequest(uuid, answer: answer, reason: "two apps")
        XCTAssertEqual(answered.answerOutcome, "accepted")
        XCTAssertEqual(fixture.server.requests("PUT", path).map(FakeAppleServer.tokenBundleId), [Self.recipes])
    }
}
