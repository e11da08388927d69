import Foundation
import XCTest
import SubscriptionCore
import SubdeskScenarios
import TerminalUI
@testable import Dashboard
import SubdeskTestKit

/// What support asks about beyond the derived state (storefront, refund type and share, offer
/// period, next renewal and price, win-back eligibility, a consumption request's reason) reaches
/// the detail screen from the signed payloads.
final class AppleFactsDetailTests: XCTestCase, RunsOnEveryEngine {
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

/// A 12-month commitment billed monthly, from Apple's example payloads, on the detail screen:
/// the plan, the month of the total, when it ends, its price, whether it renews, and the next
/// renewal's offer.
final class CommitmentDetailTests: XCTestCase, RunsOnEveryEngine {
    func example(_ name: String) throws -> [String: Any] {
        let url = DashboardFixture.repositoryRoot.appendingPathComponent("Tests/SubscriptionCoreTests/Fixtures/apple-models/\(name).json")
        return try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
    }

    func testTheDetailShowsMonthThreeOfTwelveAndWhenPaymentsStop() throws {
        let store = try Store.inMemory()
        let sample = try SampleData.locate(explicit: DashboardFixture.repositoryRoot.appendingPathComponent("sample-data").path)
        let signer = try sample.signer()
        let intake = Intake(store: store, verifier: SignedDataVerifier(roots: try sample.trustRoots()), policy: SampleData.demoPolicy)
        let now = DashboardFixture.anchor, day: Millis = 86_400_000
        let ends = now + 290 * day
        // Apple's examples as the demo app's, in Production, month 3 of 12 began ten days ago.
        var t = try example("signedTransaction")
        for key in ["revocationDate", "revocationReason", "isUpgraded", "advancedCommerceInfo"] { t.removeValue(forKey: key) }
        let app: [String: Any] = ["bundleId": ScenarioBuilder.demoBundleId, "environment": "Production"]
        for (k, v) in app { t[k] = v }
        t["purchaseDate"] = now - 10 * day
        t["originalPurchaseDate"] = now - 70 * day
        t["expiresDate"] = now + 20 * day
        t["signedDate"] = now - 10 * day
        t["commitmentInfo"] = ["billingPeriodNumber": 3, "totalBillingPeriods": 12, "commitmentExpiresDate": ends, "commitmentPrice": 119880]
        var r = try example("signedRenewalInfo")
        for key in ["isInBillingRetryPeriod", "gracePeriodExpiresDate", "expirationIntent", "advancedCommerceInfo"] { r.removeValue(forKey: key) }
        r["environment"] = "Production"
        r["autoRenewProductId"] = "com.example.product"
        r["signedDate"] = now - 5 * day
        r["renewalDate"] = now + 20 * day
        var commitment = r["commitmentInfo"] as! [String: Any]
        commitment["commitmentAutoRenewStatus"] = 0
        commitment["commitmentRenewalDate"] = ends
        r["commitmentInfo"] = commitment
        let data: [String: Any] = ["bundleId": ScenarioBuilder.demoBundleId, "environment": "Production", "appAppleId": ScenarioBuilder.demoAppAppleId,
                                   "signedTransactionInfo": try signer.sign(payload: try JSONSerialization.data(withJSONObject: t)),
                                   "signedRenewalInfo": try signer.sign(payload: try JSONSerialization.data(withJSONObject: r))]
        let body = try JSONSerialization.data(withJSONObject: ["signedPayload": try signer.sign(payload: try JSONSerialization.data(
            withJSONObject: ["notificationType": "DID_CHANGE_RENEWAL_STATUS", "subtype": "AUTO_RENEW_DISABLED",
                             "notificationUUID": "commit-1", "signedDate": now - 5 * day, "data": data]))])
        guard case .stored = try intake.ingest(body) else { return XCTFail("not stored") }

        let session = DashboardFixture.session(store, width: 200, height: 40)
        session.type(.char("/"))
        session.type("12345")
        session.type(.enter, .enter)
        let screen = session.screenText
        let endText = DateText.format(ends, "yyyy-MM-dd HH:mm", zone: TimeZone(identifier: "UTC")!)
        XCTAssertTrue(screen.contains("Commit   billed monthly · month 3 of 12 · commitment ends \(endText) · 119.88 USD for the commitment"
                                      + " · will not renew: payments stop \(endText)"), screen)
        XCTAssertTrue(screen.contains("at 9.99 USD · offer PAY_AS_YOU_GO P1Y"), screen)
    }
}
