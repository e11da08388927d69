import Foundation
import XCTest
@testable import SubscriptionCore
import SubdeskScenarios
import SubdeskTestKit

/// Each metric's definition pinned on a hand-made history, and the property that makes
/// them trustworthy: a history delivered whole, or with notifications missing and then
/// repaired by revalidation, gives the same numbers.
final class MetricsDefinitionTests: XCTestCase, RunsOnEveryEngine {
    let day = TestKit.day
    let utc = TimeZone(identifier: "UTC")!
    /// 2026-06-01: day 0 of every history here.
    var d0: Millis { TestKit.anchor }
    var store: Store!

    override func setUpWithError() throws { store = try Store.inMemory() }

    /// A transaction `n` of subscription `otid`, from day `from` to day `to`.
    func period(_ otid: String, _ n: Int, from: Int, to: Int, product: String = "app.monthly", trial: Bool = false,
                reason: String? = nil, extra: [String: Any] = [:]) -> [String: Any] {
        var more: [String: Any] = ["transactionReason": reason ?? (n == 1 ? "PURCHASE" : "RENEWAL"),
                                   "originalPurchaseDate": d0]
        if trial { more.merge(["offerType": 1, "offerDiscountType": "FREE_TRIAL", "price": 0]) { $1 } }
        more.merge(extra) { $1 }
        return TestKit.transaction(id: "\(otid)\(n)", original: otid, product: product, purchase: d0 + Millis(from) * day,
                                   expires: d0 + Millis(to) * day, signed: d0 + Millis(from) * day, extra: more)
    }

    func deliver(_ type: String, _ subtype: String? = nil, _ transaction: [String: Any], signed: Millis? = nil) throws {
        let at = signed ?? (transaction["signedDate"] as! Millis)
        let body = TestKit.body(type: type, subtype: subtype, signed: at, transaction: transaction,
                                renewal: TestKit.renewal(original: transaction["originalTransactionId"] as! String, signed: at))
        guard case .stored = try TestKit.intake(store).ingest(body, receivedAt: at) else { return XCTFail("not stored: \(type)") }
    }

    /// Days 0...`days` by day (or by `period`), in UTC.
    func report(_ days: Int = 100, segments: Set<CountSegment> = [.paid], period: CountPeriod = .day) throws -> [DayCounts] {
        try DailyCountsReport.compute(store: store, from: DateText.format(d0, "yyyy-MM-dd", zone: utc),
                                      to: DateText.format(d0 + Millis(days) * day, "yyyy-MM-dd", zone: utc),
                                      timeZone: utc, segments: segments, period: period)
    }

    /// The days on which `metric` is not 0, with its value.
    func nonZero(_ rows: [DayCounts], _ metric: Metric) -> [Int: Int] {
        var out: [Int: Int] = [:]
        for (i, r) in rows.enumerated() where r[metric] != 0 { out[i] = r[metric] }
        return out
    }

    func testATrialThatConvertsIsANewPaidSubscriptionOnItsConversion() throws {
        let trial = period("3100", 1, from: 0, to: 7, trial: true)
        try deliver("SUBSCRIBED", "INITIAL_BUY", trial)
        try deliver("DID_RENEW", nil, period("3100", 2, from: 7, to: 37))
        try deliver("DID_RENEW", nil, period("3100", 3, from: 37, to: 67))
        let days = try report()
        XCTAssertEqual(nonZero(days, .trialStarts), [0: 1])
        XCTAssertEqual(nonZero(days, .trialConversions), [7: 1])
        XCTAssertEqual(nonZero(days, .newPaidSubscriptions), [7: 1], "the conversion, not the trial, is the new paid subscription")
        XCTAssertEqual(nonZero(days, .renewals), [37: 1])
        XCTAssertEqual(nonZero(days, .churned), [67: 1], "nothing follows the last period")
        XCTAssertEqual(days[0].rates[.trialConversionRate], 1.0, "the day-0 cohort converted")
        XCTAssertEqual(days[3][.activeTrials], 1)
        XCTAssertEqual(days[3][.activePaid], 0)
        XCTAssertEqual(days[40][.activePaid], 1)
        XCTAssertEqual(days[67][.activePaid], 0)
        XCTAssertEqual(nonZero(days, .paidTransactions), [7: 1, 37: 1], "a free trial is not a paid transaction")
    }

    func testATrialThatDoesNotConvertCountsInItsCohortOnly() throws {
        try deliver("SUBSCRIBED", "INITIAL_BUY", period("3200", 1, from: 0, to: 7, trial: true))
        try deliver("EXPIRED", "VOLUNTARY", period("3200", 1, from: 0, to: 7, trial: true), signed: d0 + 7 * day)
        let days = try report(20)
        XCTAssertEqual(nonZero(days, .trialStarts), [0: 1])
        XCTAssertTrue(nonZero(days, .newPaidSubscriptions).isEmpty)
        XCTAssertTrue(nonZero(days, .churned).isEmpty, "a trial is not paid access, so its end is no churn")
        XCTAssertEqual(days[0].rates[.trialConversionRate], 0)
        XCTAssertNil(days[1].rates[.trialConversionRate], "no trial began that day")
        XCTAssertEqual(days[8][.activeTrials], 0)
        XCTAssertTrue(nonZero(days, .expiredVoluntary).isEmpty, "a trial's end is no churn, whatever ended it")
    }

    func testARefundInALaterMonthIsCountedWhenRefundedAndTheMonthAsNeverBought() throws {
        try deliver("SUBSCRIBED", "INITIAL_BUY", period("3300", 1, from: 0, to: 30))
        let refunded = period("3300", 1, from: 0, to: 30, extra: ["revocationDate": d0 + 40 * day, "revocationReason": 0])
        try deliver("REFUND", nil, refunded, signed: d0 + 40 * day)
        let days = try report(60)
        XCTAssertEqual(nonZero(days, .paidTransactions), [0: 1])
        XCTAssertEqual(nonZero(days, .refunds), [40: 1])
        XCTAssertTrue(nonZero(days, .newPaidSubscriptions).isEmpty, "a refunded purchase is as if never bought")
        XCTAssertEqual(days[10][.activePaid], 0)
        let months = try report(60, period: .month)
        XCTAssertEqual(months.map(\.day), ["2026-06", "2026-07"])
        XCTAssertEqual(months[0].rates[.refundRate], 0, "June: one paid transaction, no refund")
        XCTAssertNil(months[1].rates[.refundRate], "July: a refund but no paid transaction to divide by")
        XCTAssertEqual(months[1][.refunds], 1)
    }

    func testAFamilySharedMemberIsCountedApart() throws {
        try deliver("SUBSCRIBED", "INITIAL_BUY", period("3400", 1, from: 0, to: 30, extra: ["inAppOwnershipType": "FAMILY_SHARED"]))
        XCTAssertTrue(nonZero(try report(40), .newPaidSubscriptions).isEmpty)
        let family = try report(40, segments: [.familyShared])
        XCTAssertEqual(nonZero(family, .newPaidSubscriptions), [0: 1])
        XCTAssertEqual(family[5][.activePaid], 1)
        XCTAssertEqual(nonZero(family, .refunds), [:])
    }

    func testAResubscriptionIsAReactivationAfterChurnAndRetryIsARecovery() throws {
        try deliver("SUBSCRIBED", "INITIAL_BUY", period("3500", 1, from: 0, to: 30))
        try deliver("SUBSCRIBED", "RESUBSCRIBE", period("3500", 2, from: 50, to: 80, reason: "PURCHASE"))
        try deliver("SUBSCRIBED", "INITIAL_BUY", period("3600", 1, from: 0, to: 30))
        try deliver("DID_RENEW", "BILLING_RECOVERY", period("3600", 2, from: 35, to: 65))
        let days = try report()
        XCTAssertEqual(nonZero(days, .newPaidSubscriptions), [0: 2])
        XCTAssertEqual(nonZero(days, .churned), [30: 2, 65: 1, 80: 1])
        XCTAssertEqual(nonZero(days, .reactivations), [50: 1])
        XCTAssertEqual(nonZero(days, .recoveries), [35: 1])
        XCTAssertEqual(days[40][.activePaid], 1)
        XCTAssertEqual(days[30].atStart[.activePaid], 2)
        XCTAssertEqual(days[30].rates[.churnRate], 1.0, "both of the two active at the day's start churned")
        // The movement adds up: active at the end = active at the start + new + back - churned.
        for r in days {
            XCTAssertEqual(r[.activePaid], (r.atStart[.activePaid] ?? 0) + r[.newPaidSubscriptions] + r[.reactivations] + r[.recoveries] - r[.churned], r.day)
        }
    }

    func testAnUpgradeMidPeriodContinuesTheSubscription() throws {
        try deliver("SUBSCRIBED", "INITIAL_BUY", period("3700", 1, from: 0, to: 30))
        try deliver("DID_CHANGE_RENEWAL_PREF", "UPGRADE", period("3700", 2, from: 10, to: 40, product: "app.premium.monthly", reason: "PURCHASE"))
        try deliver("DID_RENEW", nil, period("3700", 1, from: 0, to: 30, extra: ["isUpgraded": true]), signed: d0 + 10 * day + 1000)
        let days = try report(60)
        XCTAssertEqual(nonZero(days, .newPaidSubscriptions), [0: 1])
        XCTAssertEqual(nonZero(days, .renewals), [10: 1], "the upgrade continues the run")
        XCTAssertEqual(nonZero(days, .churned), [40: 1])
        XCTAssertEqual(days[20][.activePaid], 1, "counted once through the upgrade")
        XCTAssertEqual(nonZero(days, .paidTransactions), [0: 1, 10: 1])
        XCTAssertEqual(nonZero(days, .upgrades), [10: 1], "the premium period replaced the basic one at once")
        XCTAssertTrue(nonZero(days, .downgrades).isEmpty)
    }

    func testADowngradeTakesEffectAtTheRenewalAndAFamilyRevocationIsNoRefund() throws {
        try deliver("SUBSCRIBED", "INITIAL_BUY", period("3710", 1, from: 0, to: 30, product: "app.premium.monthly"))
        try deliver("DID_CHANGE_RENEWAL_PREF", "DOWNGRADE", period("3710", 1, from: 0, to: 30, product: "app.premium.monthly"),
                    signed: d0 + 5 * day)
        try deliver("DID_RENEW", nil, period("3710", 2, from: 30, to: 60))
        let family: [String: Any] = ["inAppOwnershipType": "FAMILY_SHARED"]
        try deliver("SUBSCRIBED", "INITIAL_BUY", period("3720", 1, from: 0, to: 30, extra: family))
        try deliver("REVOKE", nil, period("3720", 1, from: 0, to: 30, extra: family.merging(["revocationDate": d0 + 12 * day, "revocationReason": 0]) { $1 }),
                    signed: d0 + 12 * day)
        let days = try report(60)
        XCTAssertEqual(nonZero(days, .downgrades), [30: 1], "counted when the cheaper product's period began, not when asked for")
        XCTAssertTrue(nonZero(days, .upgrades).isEmpty)
        let shared = try report(60, segments: [.familyShared])
        XCTAssertEqual(nonZero(shared, .revocations), [12: 1])
        XCTAssertTrue(nonZero(shared, .refunds).isEmpty, "a revoked family member was not refunded")
    }

    /// Billing trouble is counted once per spell, from DID_FAIL_TO_RENEW to the renewal that
    /// ends it; renewal info brought by revalidation repairs a lost DID_FAIL_TO_RENEW.
    func testBillingTroubleIsCountedOncePerSpellAndRepairedByRenewalInfo() throws {
        try deliver("SUBSCRIBED", "INITIAL_BUY", period("3730", 1, from: 0, to: 30))
        try deliver("DID_FAIL_TO_RENEW", "GRACE_PERIOD", period("3730", 1, from: 0, to: 30), signed: d0 + 30 * day)
        try deliver("DID_FAIL_TO_RENEW", "GRACE_PERIOD", period("3730", 1, from: 0, to: 30), signed: d0 + 31 * day)
        try deliver("DID_RENEW", "BILLING_RECOVERY", period("3730", 2, from: 34, to: 64), signed: d0 + 34 * day)
        try deliver("SUBSCRIBED", "INITIAL_BUY", period("3740", 1, from: 0, to: 30))
        _ = try TestKit.intake(store).merge(transactions: [], renewals: [
            RenewalRecord(originalTransactionId: "3740", productId: "app.monthly", isInBillingRetryPeriod: true,
                          gracePeriodExpiresDate: d0 + 46 * day, signedDate: d0 + 31 * day),
        ], now: d0 + 31 * day)
        let days = try report(60)
        XCTAssertEqual(nonZero(days, .renewalFailures), [30: 1, 31: 1], "a repeated notification is the same spell")
        XCTAssertEqual(nonZero(days, .gracePeriodEntries), [30: 1, 31: 1])
        XCTAssertEqual(nonZero(days, .billingRecoveries), [34: 1])
        XCTAssertEqual(days[32][.inGracePeriod], 2)
        XCTAssertEqual(days[35][.inGracePeriod], 1, "3740 is still in its grace period")
    }

    func testAutoRenewOffSplitsTheActivesUntilTurnedOnOrTheAccessEnds() throws {
        let first = period("4700", 1, from: 0, to: 30)
        try deliver("SUBSCRIBED", "INITIAL_BUY", first)
        try deliver("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED", first, signed: d0 + 5 * day)
        try deliver("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_ENABLED", first, signed: d0 + 8 * day)
        try deliver("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED", first, signed: d0 + 20 * day)
        try deliver("SUBSCRIBED", "INITIAL_BUY", period("4800", 1, from: 0, to: 30))
        let days = try report(40)
        XCTAssertEqual(days[3][.setToRenew], 2)
        XCTAssertEqual(days[6][.setToCancel], 1)
        XCTAssertEqual(days[6][.setToRenew], 1)
        XCTAssertEqual(days[10][.setToCancel], 0, "turned back on")
        XCTAssertEqual(days[25][.setToCancel], 1)
        XCTAssertEqual(days[31][.setToCancel], 0, "the access ended")
        XCTAssertEqual(days[31][.activePaid], 0)
        for d in days { XCTAssertEqual(d[.setToRenew] + d[.setToCancel], d[.activePaid], d.day) }
    }

    /// Churn is split by why the paid access ended, and the reasons add up to it.
    func testChurnIsSplitByWhyTheAccessEnded() throws {
        let voluntary = period("5000", 1, from: 0, to: 30)
        try deliver("SUBSCRIBED", "INITIAL_BUY", voluntary)
        try deliver("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED", voluntary, signed: d0 + 5 * day)
        try deliver("SUBSCRIBED", "INITIAL_BUY", period("5100", 1, from: 0, to: 30))
        try deliver("EXPIRED", "BILLING_RETRY", period("5100", 1, from: 0, to: 30), signed: d0 + 90 * day)
        try deliver("SUBSCRIBED", "INITIAL_BUY", period("5200", 1, from: 0, to: 30))
        try deliver("DID_FAIL_TO_RENEW", nil, period("5200", 1, from: 0, to: 30), signed: d0 + 30 * day)
        // Nothing said why 5300 ended until revalidation brought its renewal info.
        try deliver("SUBSCRIBED", "INITIAL_BUY", period("5300", 1, from: 0, to: 20))
        try deliver("SUBSCRIBED", "INITIAL_BUY", period("5400", 1, from: 0, to: 20))
        // 5500 was voluntary the first time (EXPIRED/VOLUNTARY) and came back.
        try deliver("SUBSCRIBED", "INITIAL_BUY", period("5500", 1, from: 0, to: 10))
        try deliver("EXPIRED", "VOLUNTARY", period("5500", 1, from: 0, to: 10), signed: d0 + 10 * day)
        try deliver("SUBSCRIBED", "RESUBSCRIBE", period("5500", 2, from: 40, to: 70, reason: "PURCHASE"))
        var days = try report()
        XCTAssertEqual(nonZero(days, .expiredOther), [20: 2, 70: 1], "none known yet")
        _ = try TestKit.intake(store).merge(transactions: [], renewals: [
            RenewalRecord(originalTransactionId: "5300", productId: "app.monthly", autoRenewStatus: false, expirationIntent: 3,
                          signedDate: d0 + 21 * day),
            RenewalRecord(originalTransactionId: "5400", productId: "app.monthly", autoRenewStatus: false, expirationIntent: 4,
                          signedDate: d0 + 21 * day),
        ], now: d0 + 21 * day)
        days = try report()
        XCTAssertEqual(nonZero(days, .expiredVoluntary), [10: 1, 30: 1], "an EXPIRED/VOLUNTARY; auto-renew off at the end")
        XCTAssertEqual(nonZero(days, .expiredBillingRetry), [30: 2], "an EXPIRED/BILLING_RETRY long after; a failed renewal")
        XCTAssertEqual(nonZero(days, .expiredPriceIncrease), [20: 1], "the renewal info's expiration intent 3")
        XCTAssertEqual(nonZero(days, .expiredProductNotForSale), [20: 1], "expiration intent 4")
        XCTAssertEqual(nonZero(days, .expiredOther), [70: 1], "still active then, with auto-renew on")
        XCTAssertEqual(nonZero(days, .autoRenewOff), [5: 1], "renewal info signed after the access ended turns nothing off")
        for d in days {
            let reasons: [Metric] = [.expiredVoluntary, .expiredBillingRetry, .expiredPriceIncrease, .expiredProductNotForSale, .expiredOther]
            XCTAssertEqual(reasons.map { d[$0] }.reduce(0, +), d[.churned], d.day)
        }
    }

    /// Auto-renew turned off and on again is counted once per change during paid access, and
    /// renewal info that says it is off repairs a lost notification from when it was signed.
    func testAutoRenewChangesAreCountedOnceAndRepairedByRenewalInfo() throws {
        let first = period("5600", 1, from: 0, to: 30)
        try deliver("SUBSCRIBED", "INITIAL_BUY", first)
        try deliver("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED", first, signed: d0 + 5 * day)
        try deliver("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED", first, signed: d0 + 6 * day)
        try deliver("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_ENABLED", first, signed: d0 + 8 * day)
        try deliver("SUBSCRIBED", "INITIAL_BUY", period("5700", 1, from: 0, to: 30))
        _ = try TestKit.intake(store).merge(transactions: [], renewals: [
            RenewalRecord(originalTransactionId: "5700", productId: "app.monthly", autoRenewStatus: false, signedDate: d0 + 12 * day),
        ], now: d0 + 12 * day)
        let days = try report(40)
        XCTAssertEqual(nonZero(days, .autoRenewOff), [5: 1, 12: 1], "a repeated notification changes nothing")
        XCTAssertEqual(nonZero(days, .autoRenewOn), [8: 1])
        XCTAssertEqual(days[7][.setToCancel], 1)
        XCTAssertEqual(days[9][.setToCancel], 0)
        XCTAssertEqual(days[12][.setToCancel], 1, "off from when the renewal info was signed")
        XCTAssertEqual(nonZero(days, .expiredVoluntary), [30: 1])
        XCTAssertEqual(nonZero(days, .expiredOther), [30: 1])
    }

    func testWeeksStartOnMondayAndKeepLevelsAndRatesAsAWhole() throws {
        try deliver("SUBSCRIBED", "INITIAL_BUY", period("3800", 1, from: 0, to: 9))
        let weeks = try report(13, period: .week)
        // 2026-06-01 is a Monday.
        XCTAssertEqual(weeks.map(\.day), ["2026-06-01", "2026-06-08"])
        XCTAssertEqual(weeks[0][.newPaidSubscriptions], 1)
        XCTAssertEqual(weeks[0][.activePaid], 1, "a level is the week's last day's")
        XCTAssertEqual(weeks[1][.churned], 1)
        XCTAssertEqual(weeks[1].rates[.churnRate], 1.0)
        XCTAssertEqual(weeks[1][.activePaid], 0)
    }

    func testMRRAndRevenueFollowPricesPerMonthAndRefunds() throws {
        try deliver("SUBSCRIBED", "INITIAL_BUY", period("4100", 1, from: 0, to: 30, extra: ["price": 9990]))
        try deliver("SUBSCRIBED", "INITIAL_BUY", period("4200", 1, from: 0, to: 365, product: "app.yearly", extra: ["price": 99990]))
        try deliver("SUBSCRIBED", "INITIAL_BUY", period("4300", 1, from: 2, to: 9, product: "app.weekly", extra: ["price": 2990]))
        try deliver("REFUND", nil, period("4100", 1, from: 0, to: 30, extra: ["price": 9990, "revocationDate": d0 + 20 * day, "revocationReason": 0]),
                    signed: d0 + 20 * day)
        let days = try report(40)
        XCTAssertEqual(days[0].currency, "USD")
        XCTAssertEqual(days[0].money[.revenue], 109.98)
        XCTAssertEqual(days[2].money[.revenue], 2.99)
        XCTAssertEqual(days[20].money[.revenue], -9.99, "the refund is taken back on its day")
        // The refunded month is as if never bought: only the yearly (99.99 / 12) and the
        // weekly (2.99 x 52 / 12) count.
        XCTAssertEqual(days[5].money[.mrr] ?? 0, 8.333 + 12.957, accuracy: 0.002)
        XCTAssertEqual(days[12].money[.mrr] ?? 0, 8.333, accuracy: 0.001)
        XCTAssertEqual(days[5].text(.mrr), "21")
        let month = try report(29, period: .month)
        XCTAssertEqual(month[0].money[.revenue] ?? 0, 102.98, accuracy: 0.001, "June's purchases less June's refund")
        XCTAssertEqual(month[0].money[.mrr] ?? 0, 8.333, accuracy: 0.001, "MRR as at the month's end")
    }

    func testMoneyInSeveralCurrenciesNeedsRatesToBeAddedUp() throws {
        try deliver("SUBSCRIBED", "INITIAL_BUY", period("4400", 1, from: 0, to: 30, extra: ["price": 9990]))
        try deliver("SUBSCRIBED", "INITIAL_BUY", period("4500", 1, from: 0, to: 30, extra: ["price": 1200000, "currency": "JPY"]))
        let plain = try report(5)
        XCTAssertNil(plain[0].currency)
        XCTAssertNil(plain[0].money[.revenue], "USD and JPY are not added up without rates")
        XCTAssertEqual(plain[0].text(.revenue), "-")
        XCTAssertEqual(plain[0].moneyByCurrency["JPY"]?[.revenue], 1_200_000)
        let rates = try ExchangeRates(text: "# per unit\nreporting EUR\nUSD 0.9\nJPY = 0.006\n", source: "rates")
        let converted = try DailyCountsReport.compute(store: store, from: "2026-06-01", to: "2026-06-02", timeZone: utc, rates: rates)
        XCTAssertEqual(converted[0].currency, "EUR")
        XCTAssertEqual(converted[0].money[.revenue] ?? 0, 9.99 * 0.9 + 1200 * 0.006, accuracy: 0.0001)
        XCTAssertThrowsError(try DailyCountsReport.compute(store: store, from: "2026-06-01", to: "2026-06-02", timeZone: utc,
                                                           rates: try ExchangeRates(text: "reporting USD\n", source: "rates"))) { error in
            XCTAssertTrue("\(error)".contains("no rate for JPY"), "\(error)")
        }
        XCTAssertThrowsError(try ExchangeRates(text: "EUR 1.1\n", source: "rates")) { error in
            XCTAssertTrue("\(error)".contains("no `reporting CODE` line"), "\(error)")
        }
        XCTAssertThrowsError(try ExchangeRates(text: "reporting USD\neuro 1.1\n", source: "rates")) { error in
            XCTAssertEqual("\(error)", "rates:2: the first word is neither `reporting` nor a currency code (three capitals)")
        }
    }

    /// A file that is not a rates file (`--rates` naming a secret by mistake) is refused
    /// by line and fault, its content never repeated; a currency given twice is refused.
    func testARatesFileErrorNamesTheLineNotItsContent() {
        let secret = "s3cr3t-\(UUID().uuidString.prefix(6))"
        for (text, expected) in [
            ("reporting USD\nroot:\(secret):19000:0:99999:7:::\n", "rates:2: expected `reporting CODE` or `CODE RATE` (two words), found 1"),
            ("reporting USD\n\(secret) is here\n", "rates:2: expected `reporting CODE` or `CODE RATE` (two words), found 3"),
            ("reporting USD\n\(secret) 1.1\n", "rates:2: the first word is neither `reporting` nor a currency code (three capitals)"),
            ("reporting \(secret)\n", "rates:1: the reporting currency is not a currency code (three capitals)"),
            ("reporting USD\nEUR \(secret)\n", "rates:2: EUR's rate is not a positive number"),
            ("reporting USD\nEUR 1.08\nJPY 0.0066\nEUR 1.10\n", "rates:4: EUR is given again (first on line 2)"),
            ("reporting USD\nEUR 1.08\nreporting EUR\n", "rates:3: a second `reporting` line (the first is line 1)"),
        ] {
            XCTAssertThrowsError(try ExchangeRates(text: text, source: "rates")) { error in
                XCTAssertEqual("\(error)", expected)
                XCTAssertFalse("\(error)".contains(secret.prefix(6)), "\(error)")
            }
        }
    }

    /// Money in two currencies on days of their own is not added up either: without rates,
    /// no day, week or total of the report gives an amount, not only the days that hold both.
    func testEveryPeriodOfAReportWithSeveralCurrenciesIsConvertedAlike() throws {
        try deliver("SUBSCRIBED", "INITIAL_BUY", period("4900", 1, from: 0, to: 5, extra: ["price": 9990]))
        try deliver("SUBSCRIBED", "INITIAL_BUY", period("5000", 1, from: 10, to: 15, extra: ["price": 1200000, "currency": "JPY"]))
        let days = try report(20)
        XCTAssertTrue(days.allSatisfy { $0.currency == nil && $0.money.isEmpty }, "\(days.map { ($0.day, $0.currency ?? "-") })")
        XCTAssertEqual(days[2].moneyByCurrency["USD"]?[.mrr] ?? 0, MetricContributions.monthly(price: 9990, periodMs: 5 * day))
        XCTAssertNil(DailyCountsReport.total(days)?.money[.revenue])
        XCTAssertTrue(try report(20, period: .week).allSatisfy { $0.money.isEmpty })
        let rates = try ExchangeRates(text: "reporting USD\nJPY 0.0066\n", source: "rates")
        let converted = try DailyCountsReport.compute(store: store, from: "2026-06-01", to: "2026-06-21", timeZone: utc, rates: rates)
        XCTAssertEqual(DailyCountsReport.total(converted)?.money[.revenue] ?? 0, 9.99 + 1200 * 0.0066, accuracy: 0.0001)
        XCTAssertEqual(DailyCountsReport.total(converted)?.currency, "USD")
    }

    func testAShareKeepsItsMoneyThroughTheStoredForm() throws {
        try deliver("SUBSCRIBED", "INITIAL_BUY", period("4600", 1, from: 0, to: 30, extra: ["price": 9990]))
        let history = try store.subscriptions.history(originalTransactionId: "4600")
        let share = MetricContributions.of(transactions: history.transactions, events: history.events, renewal: history.renewal)
        XCTAssertFalse(share.amounts.isEmpty)
        XCTAssertEqual(MetricContributions(encoded: share.encoded()), share)
        // A share stored before money (format 1) still reads its counts.
        var v1: [UInt8] = [1]
        v1 += [0, MetricContributions.PeriodKey.start.rawValue, 0, 2]
        XCTAssertEqual(MetricContributions(encoded: Data(v1)).counts.values.first, 1)
    }

    /// The same history delivered whole, or with every renewal notification lost and then
    /// repaired by revalidation (the transactions merged as Apple's answer brings them),
    /// gives the same numbers for every metric derived from transactions.
    func testAHistoryRepairedByRevalidationCountsAsOneDeliveredWhole() throws {
        let scenarios = try TestKit.sample.scenarios()
        let builder = ScenarioBuilder(signer: TestKit.signer)
        let whole = try Store.inMemory(), repaired = try Store.inMemory()
        var lost = 0
        for (index, scenario) in scenarios.enumerated() {
            for body in try builder.bodies(for: scenario, instance: index, anchor: TestKit.anchor) {
                _ = try TestKit.intake(whole).ingest(body, receivedAt: TestKit.anchor)
                let type = ApplePayloads.notificationObject(body: body)?["notificationType"] as? String
                if ["DID_RENEW", "REFUND", "EXPIRED"].contains(type) { lost += 1; continue }
                _ = try TestKit.intake(repaired).ingest(body, receivedAt: TestKit.anchor)
            }
        }
        XCTAssertGreaterThan(lost, 5)
        let from = DateText.format(TestKit.anchor - 120 * day, "yyyy-MM-dd", zone: utc)
        let to = DateText.format(TestKit.anchor + 60 * day, "yyyy-MM-dd", zone: utc)
        let transactionMetrics = Metric.all.filter(\.isFromTransactions)
        func numbers(_ store: Store) throws -> [[String]] {
            try DailyCountsReport.compute(store: store, from: from, to: to, timeZone: utc, segments: Set(CountSegment.allCases))
                .map { d in transactionMetrics.map { d.text($0) } }
        }
        XCTAssertNotEqual(try numbers(whole), try numbers(repaired), "the lost notifications are missed before the repair")
        // Revalidation: Apple's answer holds every transaction; intake merges them.
        for row in try whole.subscriptions.page(SubscriptionQuery(), limit: 10_000) {
            let history = try whole.subscriptions.history(originalTransactionId: row.state.originalTransactionId)
            _ = try Intake(store: repaired, verifier: SignedDataVerifier(roots: TestKit.roots), policy: TestKit.policy)
                .merge(transactions: history.transactions, renewals: history.renewal.map { [$0] } ?? [], now: TestKit.anchor)
        }
        XCTAssertEqual(try numbers(whole), try numbers(repaired))
    }

    /// A store written before these metrics catches up: its shares are recomputed and the
    /// numbers become those of a store that had them from the start. The report does it
    /// itself when it may write; a reader counts the store as it stands.
    func testAStoreFromBeforeTheseMetricsCatchesUp() throws {
        try deliver("SUBSCRIBED", "INITIAL_BUY", period("3900", 1, from: 0, to: 30))
        func numbers() throws -> [[String]] { try report(40).map { d in Metric.all.map { d.text($0) } } }
        let expected = try numbers()
        // As the older version stored it: no movement keys, and the subscription pending.
        let old = MetricContributions(counts: MetricContributions.of(transactions: try store.subscriptions.history(originalTransactionId: "3900").transactions, events: [])
            .counts.filter { [.start, .end, .trialStart, .trialEnd, .conversion].contains($0.key.key) })
        try store.db.run("UPDATE subscriptions SET metrics = ?", [old.encoded()])
        try store.db.run("""
            DELETE FROM metric_buckets WHERE key NOT IN ('p:start', 'p:end', 'p:trial_start', 'p:trial_end', 'p:conversion') AND key NOT LIKE 'n:%'
            """)
        try store.db.run("INSERT INTO metrics_pending VALUES ('3900')")
        XCTAssertEqual(try store.metrics.pendingShareCount(), 1)
        var seen: [ReportCatchUpProgress] = []
        store.reportProgress = { seen.append($0) }
        XCTAssertEqual(try numbers(), expected, "the report recomputed the share first")
        XCTAssertEqual(seen, [.recomputing(done: 1, total: 1)])
        XCTAssertEqual(try store.metrics.pendingShareCount(), 0)
    }
}

/// The README defines every metric in the words the dashboard shows under its chart: its
/// two lists are `subdesk counts --definitions-markdown`, generated from `Metric.all`.
final class MetricsReadmeTests: XCTestCase {
    func testTheReadmeListsAreGeneratedFromTheMetricTable() throws {
        let readme = try String(contentsOfFile: TestKit.repoRoot + "/README.md", encoding: .utf8)
        for list in Metric.readmeLists() {
            XCTAssertTrue(readme.contains("\n\n" + list + "\n\n"),
                          "README.md's metric definitions differ from Metric.all; paste `subdesk counts --definitions-markdown`:\n\(list)")
        }
    }
}
