import Foundation
import XCTest
@testable import SubscriptionCore
@testable import SubdeskScenarios
import SubdeskTestKit

/// Intake fidelity as a support agent meets it on the command line.
final class FidelityCLITests: SubdeskTestCase, RunsOnEveryEngine {
    static let policyFlags = HardeningTests.policyFlags

    /// A V2 notification of the demo app carrying `transaction`, signed by the test CA.
    /// A notification signed now by the sample data's test chain, carrying `transaction` (and
    /// `renewal`, the renewal info, when given).
    static func signedBody(type: String, subtype: String? = nil, uuid: String, transaction: [String: Any],
                           renewal: [String: Any]? = nil) throws -> Data {
        let signer = try SampleData(directory: Self.repoRoot + "/sample-data").signer()
        let now = DateText.nowMillis()
        var data: [String: Any] = ["bundleId": ScenarioBuilder.demoBundleId, "environment": "Production",
                                   "appAppleId": ScenarioBuilder.demoAppAppleId,
                                   "signedTransactionInfo": try signer.sign(payload: try JSONSerialization.data(withJSONObject: transaction))]
        if let renewal { data["signedRenewalInfo"] = try signer.sign(payload: try JSONSerialization.data(withJSONObject: renewal)) }
        var payload: [String: Any] = ["notificationType": type, "notificationUUID": uuid, "signedDate": now, "data": data]
        if let subtype { payload["subtype"] = subtype }
        return try JSONSerialization.data(withJSONObject: ["signedPayload": try signer.sign(payload: try JSONSerialization.data(withJSONObject: payload))])
    }

    func testAOneTimePurchaseIsFoundByShowAndSearchAsAPurchase() throws {
        let db = Store.testLocation(file: dir + "/p.db")
        let now = DateText.nowMillis()
        let t: [String: Any] = ["transactionId": "5100000000000077", "originalTransactionId": "5100000000000077",
                                "productId": "app.coins.500", "bundleId": ScenarioBuilder.demoBundleId, "purchaseDate": now - 60_000,
                                "signedDate": now, "environment": "Production", "type": "Consumable", "quantity": 1,
                                "price": 4990, "currency": "EUR", "inAppOwnershipType": "PURCHASED", "storefront": "FRA"]
        let ingested = try run(["ingest", "--db", db] + Self.policyFlags + ["-"], stdin: try Self.signedBody(type: "ONE_TIME_CHARGE", uuid: "otc-1", transaction: t))
        XCTAssertEqual(ingested.status, 0, ingested.stderr)
        let show = try run(["show", "5100000000000077", "--db", db])
        XCTAssertEqual(show.status, 0, show.stderr)
        XCTAssertTrue(show.stdout.contains("Purchase 5100000000000077  app.coins.500  Consumable  purchased"), show.stdout)
        XCTAssertTrue(show.stdout.contains("4.99 EUR"), show.stdout)
        XCTAssertFalse(show.stdout.contains("Subscription"), "a purchase is not shown as a subscription")
        let json = try run(["show", "5100000000000077", "--db", db, "--json"])
        let purchases = try XCTUnwrap((try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])?["purchases"] as? [[String: Any]])
        XCTAssertEqual(purchases.first?["productId"] as? String, "app.coins.500")
        XCTAssertEqual(purchases.first?["isSubscription"] as? Bool, false)
        XCTAssertEqual(purchases.first?["storefront"] as? String, "FRA")
        let search = try run(["search", "51000000000", "--db", db])
        XCTAssertEqual(search.status, 0)
        XCTAssertTrue(search.stdout.contains("Purchase 5100000000000077"), search.stdout)
        let unknown = try run(["show", "5100000000000078", "--db", db, "--json"])
        XCTAssertEqual(unknown.status, 2)
        XCTAssertNotNil((try? JSONSerialization.jsonObject(with: Data(unknown.stdout.utf8)) as? [String: Any])?["error"], unknown.stdout)
    }

    /// Apple's own example transaction (with its 2026 fields: storefrontId, quantity,
    /// advancedCommerceInfo) as a one-time purchase, plus a field no Apple version has yet
    /// and non-ASCII descriptors: `show --json` keeps every field exactly as signed.
    func testAOneTimePurchaseKeepsEveryFieldAppleSigned() throws {
        let db = Store.testLocation(file: dir + "/p.db")
        let fixture = Self.repoRoot + "/Tests/SubscriptionCoreTests/Fixtures/apple-models/signedTransaction.json"
        var t = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: fixture))) as? [String: Any])
        let now = DateText.nowMillis()
        t["transactionId"] = "5100000000000091"
        t["originalTransactionId"] = "5100000000000091"
        t["bundleId"] = ScenarioBuilder.demoBundleId
        t["environment"] = "Production"
        t["type"] = "Consumable"
        t["signedDate"] = now
        t["purchaseDate"] = now - 60_000
        t.removeValue(forKey: "expiresDate")
        t["aFieldFromTheFuture"] = ["nested": [1, 2, 3]]
        var commerce = try XCTUnwrap(t["advancedCommerceInfo"] as? [String: Any])
        commerce["descriptors"] = ["description": "Prémium · 高级", "displayName": "Prémium"]
        t["advancedCommerceInfo"] = commerce
        let ingested = try run(["ingest", "--db", db] + Self.policyFlags + ["-"],
                               stdin: try Self.signedBody(type: "ONE_TIME_CHARGE", uuid: "otc-apple-1", transaction: t))
        XCTAssertEqual(ingested.status, 0, ingested.stderr)
        let json = try run(["show", "5100000000000091", "--db", db, "--json"])
        XCTAssertEqual(json.status, 0, json.stderr)
        let purchase = try XCTUnwrap(((try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])?["purchases"] as? [[String: Any]])?.first)
        let apple = try XCTUnwrap(purchase["apple"] as? [String: Any], json.stdout)
        func canonical(_ value: Any?) throws -> String {
            String(decoding: try JSONSerialization.data(withJSONObject: ["v": value ?? NSNull()], options: [.sortedKeys]), as: UTF8.self)
        }
        for key in t.keys.sorted() {
            XCTAssertEqual(try canonical(apple[key]), try canonical(t[key]), "\(key) as signed")
        }
        XCTAssertEqual(((apple["advancedCommerceInfo"] as? [String: Any])?["descriptors"] as? [String: Any])?["description"] as? String,
                       "Prémium · 高级")
    }

    /// The export is whole unless a limit is asked for (and then says what it left out); a
    /// body alone on its line round-trips to the same bytes; an empty stdin is no body.
    func testTheExportIsWholeAndRoundTripsAndAnEmptyInputIsNoBody() throws {
        let db = Store.testLocation(file: dir + "/d.db")
        XCTAssertEqual(try run(["demo", "--no-dashboard", "--db", db, "--copies", "2"]).status, 0)
        let total = Int(try engineQuery(db, "SELECT count(*) FROM notifications")) ?? 0
        XCTAssertGreaterThan(total, 100, "the demo store holds more than the listing's default of 100")
        let whole = try run(["notifications", "--db", db, "--ndjson"])
        XCTAssertEqual(whole.status, 0, whole.stderr)
        XCTAssertEqual(whole.stdout.split(separator: "\n").count, total)
        XCTAssertFalse(whole.stderr.contains("exported the newest"), whole.stderr)
        let cut = try run(["notifications", "--db", db, "--ndjson", "--limit", "5"])
        XCTAssertEqual(cut.stdout.split(separator: "\n").count, 5)
        XCTAssertTrue(cut.stderr.contains("exported the newest 5 of \(total) notifications (--limit 5)"), cut.stderr)

        // One body alone in a file, with its line end: stored as the line, exported the same.
        let fresh = Store.testLocation(file: dir + "/e.db")
        let line = try XCTUnwrap(whole.stdout.split(separator: "\n").first.map(String.init))
        let file = dir + "/one.ndjson"
        try (line + "\n").write(toFile: file, atomically: true, encoding: .utf8)
        XCTAssertEqual(try run(["ingest", "--db", fresh] + Self.policyFlags + [file]).status, 0)
        XCTAssertEqual(try run(["notifications", "--db", fresh, "--ndjson"]).stdout, line + "\n")

        // Ctrl-D on an empty stdin: nothing is quarantined, and the command says why it did nothing.
        let empty = try run(["ingest", "--db", fresh] + Self.policyFlags + ["-"], stdin: Data())
        XCTAssertEqual(empty.status, 2, empty.stderr)
        XCTAssertTrue(empty.stderr.contains("stdin holds no notification (it is empty)"), empty.stderr)
        XCTAssertEqual(try engineQuery(fresh, "SELECT count(*) FROM quarantine"), "0")
    }
}

extension FidelityCLITests {
    func sqlite(_ db: String, _ sql: String) throws -> String {
        try engineQuery(db, sql)
    }

    /// A store holding V2 bodies and pretty-printed V1 bodies is exported as NDJSON (one
    /// line per notification) and ingested into a fresh store: the two agree row by row.
    func testTheNDJSONExportRoundTripsIntoAnIdenticalStore() throws {
        let a = Store.testLocation(file: dir + "/a.db"), b = Store.testLocation(file: dir + "/b.db")
        XCTAssertEqual(try run(["demo", "--no-dashboard", "--db", a, "--copies", "1"]).status, 0)
        let flags = Self.policyFlags + ["--allow-v1"]
        let now = DateText.nowMillis()
        for (i, type) in ["INITIAL_BUY", "DID_FAIL_TO_RENEW"].enumerated() {
            let v1: [String: Any] = [
                "notification_type": type, "environment": "PROD", "bid": ScenarioBuilder.demoBundleId,
                "unified_receipt": ["status": 0, "environment": "Production", "latest_receipt": "MIIT\(i)",
                                    "latest_receipt_info": [["transaction_id": "3000000\(i)", "original_transaction_id": "30000000",
                                                             "product_id": "app.monthly", "purchase_date_ms": String(now - 86_400_000),
                                                             "expires_date_ms": String(now - 3_600_000)]],
                                    "pending_renewal_info": [["original_transaction_id": "30000000", "auto_renew_status": "1",
                                                              "is_in_billing_retry_period": i == 1 ? "1" : "0"]]] as [String: Any],
            ]
            let pretty = try JSONSerialization.data(withJSONObject: v1, options: [.prettyPrinted, .sortedKeys])
            let r = try run(["ingest", "--db", a] + flags + ["-"], stdin: pretty)
            XCTAssertEqual(r.status, 0, r.stderr)
        }
        let count = Int(try sqlite(a, "SELECT count(*) FROM notifications").trimmingCharacters(in: .whitespacesAndNewlines))!
        let export = try run(["notifications", "--db", a, "--ndjson", "--limit", "1000000"])
        let lines = export.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        XCTAssertEqual(lines.count, count, "one line per notification")
        for line in lines { XCTAssertNotNil(try? JSONSerialization.jsonObject(with: Data(line.utf8)), String(line.prefix(80))) }
        XCTAssertEqual(lines.filter { $0.hasPrefix("{\"subdeskExportedBody\":") }.count, 2, "the two pretty-printed bodies are wrapped")
        let file = dir + "/export.ndjson"
        try export.stdout.write(toFile: file, atomically: true, encoding: .utf8)
        let ingested = try run(["ingest", "--db", b] + flags + [file])
        XCTAssertTrue(ingested.stdout.contains("ingested \(count), duplicates 0, rejected 0"), ingested.stdout + ingested.stderr)
        for query in [
            "SELECT notification_uuid, version, type, subtype, signed_ms, original_transaction_id, transaction_id, product_id, environment, ownership, body_sha256 FROM notifications ORDER BY notification_uuid",
            "SELECT \(TransactionTable.all.list) FROM transactions ORDER BY transaction_id",
            "SELECT \(RenewalTable.all.list) FROM renewal_info ORDER BY original_transaction_id",
            "SELECT original_transaction_id, product_id, status, entitled, expires_ms, purchase_ms, auto_renew, grace_expires_ms, billing_retry, expiration_intent, offer_type, ownership, environment, app_account_token, revoked_transactions, last_event_ms FROM subscriptions ORDER BY original_transaction_id",
            "SELECT original_transaction_id, latest_receipt FROM receipts ORDER BY original_transaction_id",
        ] {
            let left = try sqlite(a, query), right = try sqlite(b, query)
            XCTAssertFalse(left.isEmpty, query)
            XCTAssertEqual(left, right, query)
        }
        // Ingesting the export again is all duplicates.
        let again = try run(["ingest", "--db", b] + flags + [file])
        XCTAssertTrue(again.stdout.contains("ingested 0, duplicates \(count), rejected 0"), again.stdout)
    }
}
