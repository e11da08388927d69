import Foundation
import XCTest
@testable import SubscriptionCore
import SubdeskTestKit

/// Apple's 2026 fields, from Apple's own example payloads (signed with the test CA, dates
/// moved into its validity as `AppleExamplesConformanceTests` does): a prorated refund takes
/// back its share, a family revocation is no refund, Advanced Commerce refunds count by their
/// amounts, a commitment reads as support asks about it, and renewal info's token names the
/// owner whichever order the news arrives in. The examples are LocalTesting, so their counts
/// are in the sandbox segment.
final class Wire2026ConformanceTests: XCTestCase, RunsOnEveryEngine {
    typealias Examples = AppleExamplesConformanceTests
    let a = TestKit.anchor, day = TestKit.day
    let utc = TimeZone(identifier: "UTC")!

    /// An example with `changes` applied and `removing` taken out, after the date shift.
    func example(_ name: String, _ changes: [String: Any] = [:], removing: [String] = []) throws -> [String: Any] {
        var o = Examples.shifted(try Examples.example(name)) as! [String: Any]
        for key in removing { o.removeValue(forKey: key) }
        for (k, v) in changes { o[k] = v }
        return o
    }

    /// Apple's example transaction as a plain monthly period that began ten days before the anchor.
    func transaction(_ changes: [String: Any] = [:], removing: [String] = []) throws -> [String: Any] {
        var base: [String: Any] = ["purchaseDate": a - 10 * day, "originalPurchaseDate": a - 10 * day,
                                   "expiresDate": a + 20 * day, "signedDate": a - 10 * day]
        for (k, v) in changes { base[k] = v }
        return try example("signedTransaction", base,
                           removing: ["revocationDate", "revocationReason", "isUpgraded", "advancedCommerceInfo"] + removing)
    }

    /// Apple's example renewal info for a healthy subscription renewing into the same product.
    func renewal(_ changes: [String: Any] = [:]) throws -> [String: Any] {
        var base: [String: Any] = ["signedDate": a - 10 * day, "autoRenewProductId": "com.example.product",
                                   "renewalDate": a + 20 * day, "recentSubscriptionStartDate": a - 10 * day]
        for (k, v) in changes { base[k] = v }
        return try example("signedRenewalInfo", base,
                           removing: ["isInBillingRetryPeriod", "gracePeriodExpiresDate", "expirationIntent", "advancedCommerceInfo"])
    }

    /// Apple's example notification carrying these, signed.
    func body(_ type: String, _ subtype: String? = nil, uuid: String, signed: Millis,
              transaction: [String: Any]?, renewal: [String: Any]?) throws -> Data {
        var payload = try example("signedNotification", ["notificationType": type, "notificationUUID": uuid, "signedDate": signed])
        payload["subtype"] = subtype
        var data = payload["data"] as! [String: Any]
        data["signedTransactionInfo"] = try transaction.map(Examples.sign)
        data["signedRenewalInfo"] = try renewal.map(Examples.sign)
        payload["data"] = data
        return TestKit.json(["signedPayload": try Examples.sign(payload)])
    }

    func ingest(_ intake: Intake, _ bodies: Data...) throws {
        for b in bodies {
            let outcome = try intake.ingest(b, source: "test")
            guard case .stored = outcome else { return XCTFail("not stored: \(outcome)") }
        }
    }

    func counts(_ store: Store, filter: SegmentFilter? = nil) throws -> (days: [String: DayCounts], total: DayCounts) {
        let days = try DailyCountsReport.compute(store: store, from: "2026-05-20", to: "2026-06-01", timeZone: utc,
                                                 segments: [.sandbox], filter: filter)
        return (Dictionary(uniqueKeysWithValues: days.map { ($0.day, $0) }), try XCTUnwrap(DailyCountsReport.total(days)))
    }

    func subscriptionJSON(_ store: Store, _ id: String = "12345") throws -> [String: Any] {
        let report = try XCTUnwrap(try SubscriberReport.load(store: store, id: id, now: a))
        return try XCTUnwrap((report.jsonObject()["subscriptions"] as? [[String: Any]])?.first)
    }

    func testAProratedRefundOfHalfTakesBackHalfTheRevenueAndCountsAsAProratedRefund() throws {
        let store = try Store.inMemory()
        let intake = TestKit.intake(store, policy: Examples.policy)
        // Apple's revoked example: REFUND_PRORATED, revocationPercentage 50000 (50%, in milliunits).
        let refunded = try example("signedTransactionWithRevocation", [
            "purchaseDate": a - 10 * day, "originalPurchaseDate": a - 10 * day, "expiresDate": a + 20 * day,
            "revocationDate": a - 2 * day, "signedDate": a - 2 * day], removing: ["isUpgraded"])
        var bought = refunded
        for key in ["revocationDate", "revocationReason", "revocationType", "revocationPercentage"] { bought.removeValue(forKey: key) }
        bought["signedDate"] = a - 10 * day
        try ingest(intake, try body("SUBSCRIBED", "INITIAL_BUY", uuid: "p-1", signed: a - 10 * day, transaction: bought, renewal: nil),
                   try body("REFUND", uuid: "p-2", signed: a - 2 * day, transaction: refunded, renewal: nil))

        let (days, total) = try counts(store)
        XCTAssertEqual(total[.paidTransactions], 1)
        XCTAssertEqual(total[.refunds], 1)
        XCTAssertEqual(total[.refundsProrated], 1)
        XCTAssertEqual(total[.refundsFull], 0)
        XCTAssertEqual(try XCTUnwrap(total.rates[.refundRate]), 0.5, accuracy: 1e-9, "half a price refunded is half a refund")
        // 10.99 bought, 5.495 (half) taken back on the refund's day.
        XCTAssertEqual(try XCTUnwrap(days["2026-05-22"]?.money[.revenue]), 10.99, accuracy: 1e-9)
        XCTAssertEqual(try XCTUnwrap(days["2026-05-30"]?.money[.revenue]), -5.495, accuracy: 1e-9)
        XCTAssertEqual(try XCTUnwrap(total.money[.revenue]), 5.495, accuracy: 1e-9)
        // The customer paid for the period until the refund: it was paid access until then.
        XCTAssertEqual(days["2026-05-25"]?[.activePaid], 1)
        XCTAssertEqual(days["2026-05-31"]?[.activePaid], 0)
        XCTAssertEqual(total[.newPaidSubscriptions], 1)

        let json = try subscriptionJSON(store)
        XCTAssertEqual(json["status"] as? String, SubscriptionStatus.revoked.name)
        let t = try XCTUnwrap((json["transactions"] as? [[String: Any]])?.first)
        XCTAssertEqual(t["revocationType"] as? String, "REFUND_PRORATED")
        XCTAssertEqual(t["revocationPercentage"] as? Int, 50000)
    }

    func testAFullRefundStillTakesBackTheWholePrice() throws {
        let store = try Store.inMemory()
        let intake = TestKit.intake(store, policy: Examples.policy)
        let refunded = try example("signedTransactionWithRevocation", [
            "purchaseDate": a - 10 * day, "originalPurchaseDate": a - 10 * day, "expiresDate": a + 20 * day,
            "revocationDate": a - 2 * day, "signedDate": a - 2 * day, "revocationType": "REFUND_FULL", "revocationPercentage": 100000],
            removing: ["isUpgraded"])
        try ingest(intake, try body("REFUND", uuid: "f-1", signed: a - 2 * day, transaction: refunded, renewal: nil))
        let (_, total) = try counts(store)
        XCTAssertEqual(total[.refundsFull], 1)
        XCTAssertEqual(total[.refundsProrated], 0)
        XCTAssertEqual(try XCTUnwrap(total.rates[.refundRate]), 1, accuracy: 1e-9)
        XCTAssertEqual(try XCTUnwrap(total.money[.revenue]), 0, accuracy: 1e-9)
        XCTAssertEqual(total[.newPaidSubscriptions], 0, "a fully refunded period is as if never bought")
    }

    func testAFamilyRevocationIsNotARefund() throws {
        let store = try Store.inMemory()
        let intake = TestKit.intake(store, policy: Examples.policy)
        let revoked = try example("signedTransactionWithRevocation", [
            "purchaseDate": a - 10 * day, "originalPurchaseDate": a - 10 * day, "expiresDate": a + 20 * day,
            "revocationDate": a - 2 * day, "signedDate": a - 2 * day, "revocationType": "FAMILY_REVOKE",
            "inAppOwnershipType": "FAMILY_SHARED"], removing: ["isUpgraded", "revocationPercentage"])
        try ingest(intake, try body("REVOKE", uuid: "r-1", signed: a - 2 * day, transaction: revoked, renewal: nil))
        let (_, total) = try counts(store)
        XCTAssertEqual(total[.revocations], 1)
        XCTAssertEqual(total[.refunds], 0)
        XCTAssertEqual(total[.refundsFull] + total[.refundsProrated], 0)
        XCTAssertEqual(total[.paidTransactions], 0, "a family member paid nothing")
        XCTAssertNil(total.rates[.refundRate], "no paid transaction to take a refund rate over")
    }

    func testAnAdvancedCommerceItemRefundTakesBackItsAmountNotThePrice() throws {
        let store = try Store.inMemory()
        let intake = TestKit.intake(store, policy: Examples.policy)
        // Apple's example item: price 9.99, one PRORATED refund of 5.00.
        var t = try transaction()
        var info = (Examples.shifted(try Examples.example("signedTransaction")) as! [String: Any])["advancedCommerceInfo"] as! [String: Any]
        var items = info["items"] as! [[String: Any]]
        var refunds = items[0]["refunds"] as! [[String: Any]]
        refunds[0]["refundDate"] = a - 2 * day
        items[0]["refunds"] = refunds
        items[0].removeValue(forKey: "revocationDate")
        info["items"] = items
        t["advancedCommerceInfo"] = info
        t["signedDate"] = a - 2 * day
        try ingest(intake, try body("SUBSCRIBED", uuid: "ac-1", signed: a - 10 * day, transaction: try transaction(), renewal: nil),
                   try body("REFUND", uuid: "ac-2", signed: a - 2 * day, transaction: t, renewal: nil))
        let (days, total) = try counts(store)
        XCTAssertEqual(total[.refunds], 1)
        XCTAssertEqual(total[.refundsProrated], 1)
        XCTAssertEqual(try XCTUnwrap(days["2026-05-30"]?.money[.revenue]), -5.0, accuracy: 1e-9, "the refundAmount, not the item's 9.99")
        XCTAssertEqual(try XCTUnwrap(total.money[.revenue]), 10.99 - 5.0, accuracy: 1e-9)
        let json = try subscriptionJSON(store)
        let refund = try XCTUnwrap(((json["transactions"] as? [[String: Any]])?.first?["advancedCommerceRefunds"] as? [[String: Any]])?.first)
        XCTAssertEqual(refund["refundAmount"] as? Int64, 5000)
        XCTAssertEqual(refund["refundType"] as? String, "PRORATED")
    }

    /// Month 3 of 12 of a commitment billed monthly, from Apple's examples.
    func commitmentStore(commitmentRenews: Bool) throws -> Store {
        let store = try Store.inMemory()
        let intake = TestKit.intake(store, policy: Examples.policy)
        let ends = a + 20 * day + 9 * 30 * day
        let t = try transaction(["commitmentInfo": ["billingPeriodNumber": 3, "totalBillingPeriods": 12,
                                                    "commitmentExpiresDate": ends, "commitmentPrice": 119880]])
        var commitment = (try Examples.example("signedRenewalInfo"))["commitmentInfo"] as! [String: Any]
        commitment["commitmentRenewalDate"] = ends
        commitment["commitmentAutoRenewStatus"] = commitmentRenews ? 1 : 0
        let r = try renewal(["commitmentInfo": commitment])
        try ingest(intake, try body("DID_RENEW", uuid: "c-1", signed: a - 10 * day, transaction: t, renewal: r))
        if !commitmentRenews {
            // The customer turned the commitment's renewal off five days ago; the monthly
            // billing goes on until the commitment ends (auto-renew stays 1).
            var off = r
            off["signedDate"] = a - 5 * day
            try ingest(intake, try body("DID_CHANGE_RENEWAL_STATUS", uuid: "c-2", signed: a - 5 * day, transaction: nil, renewal: off))
        }
        return store
    }

    func testACommitmentInMonthThreeOfTwelveInShowJSONAndCounts() throws {
        let store = try commitmentStore(commitmentRenews: true)
        let json = try subscriptionJSON(store)
        let c = try XCTUnwrap(json["commitment"] as? [String: Any])
        XCTAssertEqual(c["billingPlanType"] as? String, "MONTHLY")
        XCTAssertEqual(c["billingPeriodNumber"] as? Int, 3)
        XCTAssertEqual(c["totalBillingPeriods"] as? Int, 12)
        XCTAssertEqual(c["commitmentPrice"] as? Int64, 119880)
        XCTAssertEqual(c["commitmentExpiresDate"] as? String, DateText.iso(a + 290 * day))
        XCTAssertEqual(c["willRenew"] as? Bool, true)
        XCTAssertTrue(c["stopsPayingAfter"] is NSNull)
        let report = try XCTUnwrap(try SubscriberReport.load(store: store, id: "12345", now: a)).subscriptions[0]
        let words = try XCTUnwrap(report.commitment).phrases(date: { DateText.minute($0) })
        XCTAssertEqual(Array(words.prefix(2)), ["billed monthly", "month 3 of 12"])
        XCTAssertTrue(words.contains("119.88 USD for the commitment"), "\(words)")

        let (days, _) = try counts(store)
        let today = try XCTUnwrap(days["2026-06-01"])
        XCTAssertEqual(today[.activePaid], 1)
        XCTAssertEqual(today[.setToRenew], 1)
        // The month's 10.99, not the commitment's 119.88 over its length.
        XCTAssertEqual(try XCTUnwrap(today.money[.mrr]), 10.99, accuracy: 1e-9)
        XCTAssertEqual(try counts(store, filter: SegmentFilter(dimension: .plan, value: "monthly")).days["2026-06-01"]?[.activePaid], 1)
        // No subscription here is without a plan: asking for that part is refused, naming the plans there are.
        XCTAssertThrowsError(try counts(store, filter: SegmentFilter(dimension: .plan, value: "none"))) { error in
            XCTAssertTrue("\(error)".contains("no subscription has plan none: the plan values there are monthly"), "\(error)")
        }
    }

    func testACommitmentWhoseRenewalIsTurnedOffIsSetToCancelAndSaysWhenPaymentsStop() throws {
        let store = try commitmentStore(commitmentRenews: false)
        let json = try subscriptionJSON(store)
        XCTAssertEqual(json["autoRenewStatus"] as? Bool, true, "the monthly billing goes on")
        let c = try XCTUnwrap(json["commitment"] as? [String: Any])
        XCTAssertEqual(c["willRenew"] as? Bool, false)
        XCTAssertEqual(c["stopsPayingAfter"] as? String, DateText.iso(a + 290 * day))
        let report = try XCTUnwrap(try SubscriberReport.load(store: store, id: "12345", now: a)).subscriptions[0]
        XCTAssertEqual(try XCTUnwrap(report.commitment).phrases(date: { DateText.minute($0) }).last,
                       "will not renew: payments stop \(DateText.minute(a + 290 * day))")
        let (days, _) = try counts(store)
        XCTAssertEqual(days["2026-05-26"]?[.setToCancel], 0)
        XCTAssertEqual(days["2026-05-27"]?[.setToCancel], 1)
        XCTAssertEqual(days["2026-06-01"]?[.setToRenew], 0)
    }

    func testRenewalInfosTokenDecidesTheOwnerInBothArrivalOrders() throws {
        // The app set a new token after the purchase (Set App Account Token): the renewal
        // info, signed later, carries it; the transaction keeps Apple's example token.
        let newToken = "5a0c7d1e-0000-4000-8000-00000000beef"
        let purchase = try body("SUBSCRIBED", "INITIAL_BUY", uuid: "o-1", signed: a - 10 * day, transaction: try transaction(), renewal: nil)
        let renewalInfo = try body("DID_CHANGE_RENEWAL_PREF", uuid: "o-2", signed: a - 5 * day, transaction: nil,
                                   renewal: try renewal(["signedDate": a - 5 * day, "appAccountToken": newToken]))
        for order in [[purchase, renewalInfo], [renewalInfo, purchase]] {
            let store = try Store.inMemory()
            let intake = TestKit.intake(store, policy: Examples.policy)
            for b in order { try ingest(intake, b) }
            let owner = try XCTUnwrap(try SubscriberReport.load(store: store, id: newToken, now: a), "nobody owns \(newToken)")
            XCTAssertEqual(owner.subscriber.appAccountToken, newToken)
            XCTAssertEqual(owner.subscriptions.map(\.state.originalTransactionId), ["12345"])
            XCTAssertEqual(try XCTUnwrap(try SubscriberReport.load(store: store, id: "12345", now: a)).subscriber.appAccountToken, newToken)
        }
        // Without a newer renewal info the transaction's token names the owner, as before.
        let store = try Store.inMemory()
        try ingest(TestKit.intake(store, policy: Examples.policy), purchase)
        XCTAssertEqual(try SubscriberReport.load(store: store, id: "12345", now: a)?.subscriber.appAccountToken,
                       "7e3fb20b-4cdb-47cc-936d-99d65f608138")
    }

    func testRenewalInfoOfferAndAppTransactionAreRead() throws {
        let store = try Store.inMemory()
        try ingest(TestKit.intake(store, policy: Examples.policy),
                   try body("DID_RENEW", uuid: "n-1", signed: a - 10 * day, transaction: try transaction(), renewal: try renewal()))
        let report = try XCTUnwrap(try SubscriberReport.load(store: store, id: "12345", now: a)).subscriptions[0]
        let r = try XCTUnwrap(report.history.renewal)
        XCTAssertEqual(r.appTransactionId, "71134")
        XCTAssertEqual(r.offerDiscountType, "PAY_AS_YOU_GO")
        XCTAssertEqual(r.offerPeriod, "P1Y")
        XCTAssertEqual(report.appleFacts.nextRenewal(date: { DateText.minute($0) }),
                       "next renewal \(DateText.minute(a + 20 * day)) at 9.99 USD · offer PAY_AS_YOU_GO P1Y")
    }
}
