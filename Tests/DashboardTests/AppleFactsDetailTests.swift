import Foundation
import XCTest
import SubscriptionCore
import TerminalUI
@testable import Dashboard

/// What support asks about beyond the derived state (storefront, refund type and share, offer
/// period, next renewal and price, win-back eligibility, a consumption request's reason) reaches
/// the detail screen from the signed payloads.
final class AppleFactsDetailTests: XCTestCase {
    func signed(_ object: [String: Any], _ signer: JWSSigner) throws -> String {
        try signer.sign(payload: try JSONSerialization.data(withJSONObject: object))
    }

    func testTheDetailShowsWhatAppleSentBeyondTheState() throws {
        let store = try Store.inMemory()
        let sample = try SampleData.locate(explicit: DashboardFixture.repositoryRoot.appendingPathComponent("sample-data").path)
        let signer = try sample.signer()
        let intake = Intake(store: store, verifier: SignedDataVerifier(roots: try sample.trustRoots()), policy: SampleData.demoPolicy)
        let now = DashboardFixture.anchor, day: Millis = 86_400_000
        func body(_ type: String, uuid: String, signedAt: Millis, transaction: [String: Any], renewal: [String: Any], extra: [String: Any] = [:]) throws -> Data {
            var data: [String: Any] = ["bundleId": ScenarioBuilder.demoBundleId, "environment": "Production",
                                       "appAppleId": ScenarioBuilder.demoAppAppleId,
                                       "signedTransactionInfo": try signed(transaction, signer), "signedRenewalInfo": try signed(renewal, signer)]
            for (k, v) in extra { data[k] = v }
            return try JSONSerialization.data(withJSONObject: ["signedPayload": try signed(["notificationType": type, "notificationUUID": uuid,
                                                                                          "signedDate": signedAt, "data": data], signer)])
        }
        var t: [String: Any] = ["transactionId": "7700", "originalTransactionId": "7700", "productId": "app.monthly",
                                "bundleId": ScenarioBuilder.demoBundleId, "purchaseDate": now - 5 * day, "expiresDate": now + 25 * day,
                                "signedDate": now - 5 * day, "environment": "Production", "type": "Auto-Renewable Subscription",
                                "storefront": "JPN", "offerType": 1, "offerDiscountType": "PAY_AS_YOU_GO", "offerPeriod": "P3M",
                                "price": 4990, "currency": "JPY"]
        let r: [String: Any] = ["originalTransactionId": "7700", "productId": "app.monthly", "autoRenewProductId": "app.monthly",
                                "autoRenewStatus": 1, "signedDate": now - 5 * day, "environment": "Production",
                                "renewalDate": now + 25 * day, "renewalPrice": 9990, "currency": "JPY",
                                "eligibleWinBackOfferIds": ["winback-30"]]
        guard case .stored = try intake.ingest(try body("SUBSCRIBED", uuid: "f-1", signedAt: now - 5 * day, transaction: t, renewal: r)),
              case .stored = try intake.ingest(try body("CONSUMPTION_REQUEST", uuid: "f-2", signedAt: now - day, transaction: t, renewal: r,
                                                         extra: ["consumptionRequestReason": "UNINTENDED_PURCHASE"])) else {
            return XCTFail("not stored")
        }
        let session = DashboardFixture.session(store, width: 160, height: 40)
        session.type(.char("/"))
        session.type("7700")
        session.type(.enter, .enter)
        var screen = session.screenText
        XCTAssertTrue(screen.contains("storefront JPN"), screen)
        XCTAssertTrue(screen.contains("· P3M"), screen)
        XCTAssertTrue(screen.contains("next renewal 2026-12-11 12:00 at 9.99 JPY"), screen)
        // Asked a day ago: the 12 hours Apple gives for an answer ran out 12 hours ago.
        XCTAssertTrue(screen.contains("refund request (UNINTENDED_PURCHASE): missed 12h00m ago"), screen)
        XCTAssertTrue(screen.contains("win-back eligible: winback-30"), screen)

        // Refunded in part: the header says how and how much.
        t["revocationDate"] = now - 1000
        t["revocationReason"] = 0
        t["revocationType"] = "REFUND_PRORATED"
        t["revocationPercentage"] = 50000
        t["signedDate"] = now - 1000
        guard case .stored = try intake.ingest(try body("REFUND", uuid: "f-3", signedAt: now - 1000, transaction: t, renewal: r)) else {
            return XCTFail("refund not stored")
        }
        let again = DashboardFixture.session(store, width: 160, height: 40)
        again.type(.char("/"))
        again.type("7700")
        again.type(.enter, .enter)
        screen = again.screenText
        XCTAssertTrue(screen.contains("(not entitled, revoked "), screen)
        XCTAssertTrue(screen.contains(", REFUND_PRORATED, 50% refunded)"), screen)
        XCTAssertTrue(screen.contains("refund request (UNINTENDED_PURCHASE): refunded"), screen)
    }
}
