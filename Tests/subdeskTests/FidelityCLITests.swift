import Foundation
import XCTest
@testable import SubscriptionCore

/// Intake fidelity as a support agent meets it on the command line.
final class FidelityCLITests: SubdeskTestCase {
    static let policyFlags = HardeningTests.policyFlags

    func signedBody(type: String, uuid: String, transaction: [String: Any]) throws -> Data {
        let signer = try SampleData(directory: Self.repoRoot + "/sample-data").signer()
        let now = DateText.nowMillis()
        let payload: [String: Any] = ["notificationType": type, "notificationUUID": uuid, "signedDate": now,
                                      "data": ["bundleId": ScenarioBuilder.demoBundleId, "environment": "Production",
                                               "appAppleId": ScenarioBuilder.demoAppAppleId,
                                               "signedTransactionInfo": try signer.sign(payload: try JSONSerialization.data(withJSONObject: transaction))]]
        return try JSONSerialization.data(withJSONObject: ["signedPayload": try signer.sign(payload: try JSONSerialization.data(withJSONObject: payload))])
    }

    func testAOneTimePurchaseIsFoundByShowAndSearchAsAPurchase() throws {
        let db = dir + "/p.db"
        let now = DateText.nowMillis()
        let t: [String: Any] = ["transactionId": "5100000000000077", "originalTransactionId": "5100000000000077",
                                "productId": "app.coins.500", "bundleId": ScenarioBuilder.demoBundleId, "purchaseDate": now - 60_000,
                                "signedDate": now, "environment": "Production", "type": "Consumable", "quantity": 1,
                                "price": 4990, "currency": "EUR", "inAppOwnershipType": "PURCHASED", "storefront": "FRA"]
        let ingested = try run(["ingest", "--db", db] + Self.policyFlags + ["-"], stdin: try signedBody(type: "ONE_TIME_CHARGE", uuid: "otc-1", transaction: t))
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
}
