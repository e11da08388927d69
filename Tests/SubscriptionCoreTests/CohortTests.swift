import Foundation
import XCTest
@testable import SubscriptionCore
import SubdeskScenarios
import SubdeskTestKit

/// Cohort retention, realized LTV and trial conversion pinned on hand-made histories, and
/// held to the daily counts on the demo store and a generated one (both engines when
/// SUBDESK_TEST_POSTGRES is set).
final class CohortTests: XCTestCase, RunsOnEveryEngine {
    let day = TestKit.day
    let utc = TimeZone(identifier: "UTC")!
    /// 2026-06-01: day 0 of every history here.
    var d0: Millis { TestKit.anchor }
    var store: Store!
    /// The rules `deliver` derives by: an earlier subdesk's, to write a store as it did.
    var rules = DerivationRules.current

    override func setUpWithError() throws { store = try Store.inMemory() }

    /// Transaction `n` of subscription `otid`, from day `from` to day `to` (plus `hour` hours).
    func period(_ otid: String, _ n: Int, from: Int, to: Int, hour: Int = 0, product: String = "app.monthly",
                trial: Bool = false, reason: String? = nil, extra: [String: Any] = [:]) -> [String: Any] {
        var more: [String: Any] = ["transactionReason": reason ?? (n == 1 ? "PURCHASE" : "RENEWAL"), "originalPurchaseDate": d0]
        if trial { more.merge(["offerType": 1, "offerDiscountType": "FREE_TRIAL", "price": 0]) { $1 } }
        more.merge(extra) { $1 }
        let shift = Millis(hour) * 3_600_000
        return TestKit.transaction(id: "\(otid)\(n)", original: otid, product: product, purchase: d0 + Millis(from) * day + shift,
                                   expires: d0 + Millis(to) * day + shift, signed: d0 + Millis(from) * day + shift, extra: more)
    }

    func deliver(_ type: String, _ subtype: String? = nil, _ transaction: [String: Any], signed: Millis? = nil, source: String? = nil) throws {
        let at = signed ?? (transaction["signedDate"] as! Millis)
        let body = TestKit.body(type: type, subtype: subtype, signed: at, transaction: transaction,
                                renewal: TestKit.renewal(original: transaction["originalTransactionId"] as! String, signed: at))
        guard case .stored = try TestKit.intake(store, rules: rules).ingest(body, source: source, receivedAt: at) else {
            return XCTFail("not stored: \(type)")
        }
    }

    func report(_ metric: CohortMetric, segments: Set<CountSegment> = [.paid], filters: [CohortFilter] = [],
                by: CohortDimension? = nil, now: Millis? = nil) throws -> CohortReport {
        try CohortReport.compute(store: store, metric: metric, period: .month, from: d0 - 400 * day, to: d0 + 200 * day,
                                 filters: filters, segments: segments, by: by, now: now ?? d0 + 150 * day)
    }

    func counts(_ r: CohortReport, row: Int = 0) -> [Int] { r.rows[row].cells.compactMap { $0?.count } }
    func totals(_ r: CohortReport, row: Int = 0) -> [Double] { r.rows[row].cells.compactMap { $0?.total } }

    func testTenMonthlySubscriptionsOfWhichEightRenewOnceAndFiveTwice() throws {
        for i in 0..<10 {
            let otid = "41\(i)0"
            try deliver("SUBSCRIBED", "INITIAL_BUY", period(otid, 1, from: 0, to: 30, hour: i))
            if i < 8 { try deliver("DID_RENEW", nil, period(otid, 2, from: 30, to: 60, hour: i)) }
            if i < 5 { try deliver("DID_RENEW", nil, period(otid, 3, from: 60, to: 90, hour: i)) }
        }
        let retention = try report(.retention)
        XCTAssertEqual(retention.unit, .periods)
        XCTAssertEqual(retention.duration, "P1M")
        XCTAssertEqual(retention.rows.map(\.label), ["2026-06"])
        XCTAssertEqual(retention.rows[0].size, 10)
        XCTAssertEqual(Array(counts(retention).prefix(4)), [10, 8, 5, 0])
        XCTAssertEqual(retention.rows[0].cells[1]?.share, 0.8)
        XCTAssertEqual(retention.rows[0].cells[2]?.share, 0.5)
        let ltv = try report(.ltv)
        XCTAssertEqual(ltv.currency, "USD")
        XCTAssertEqual(Array(totals(ltv).prefix(4)).map { ($0 * 100).rounded() / 100 }, [99.9, 179.82, 229.77, 229.77])
        XCTAssertEqual(ltv.rows[0].cells[2]?.perMember ?? 0, 22.977, accuracy: 1e-9)
        XCTAssertEqual(ltv.rows[0].cells[2]?.perPayer ?? 0, 22.977, accuracy: 1e-9, "every member paid")
        // The cohort is the new paid subscriptions the daily counts count.
        let days = try DailyCountsReport.compute(store: store, from: "2026-06-01", to: "2026-06-30", timeZone: utc)
        XCTAssertEqual(days.reduce(0) { $0 + $1[.newPaidSubscriptions] }, retention.rows[0].size)
    }

    func testARefundInPeriodTwoIsNotRetainedAndTakesItsMoneyBack() throws {
        try deliver("SUBSCRIBED", "INITIAL_BUY", period("4200", 1, from: 0, to: 30))
        try deliver("DID_RENEW", nil, period("4200", 2, from: 30, to: 60))
        try deliver("DID_RENEW", nil, period("4200", 3, from: 60, to: 90))
        let before = try report(.ltv)
        XCTAssertEqual(Array(totals(before).prefix(3)).map { ($0 * 100).rounded() / 100 }, [9.99, 19.98, 29.97])
        let refunded = period("4200", 3, from: 60, to: 90, extra: ["revocationDate": d0 + 70 * day, "revocationReason": 0])
        try deliver("REFUND", nil, refunded, signed: d0 + 70 * day)
        XCTAssertEqual(Array(counts(try report(.retention)).prefix(3)), [1, 1, 0], "a refunded period is not retained")
        let ltv = try report(.ltv)
        XCTAssertEqual(Array(totals(ltv).prefix(3)).map { ($0 * 100).rounded() / 100 }, [9.99, 19.98, 19.98])
        XCTAssertEqual(ltv.rows[0].cells[2]?.refunds, 1)
        XCTAssertEqual(ltv.rows[0].cells[2]?.refunded, ["USD": 9990])
        XCTAssertEqual(ltv.rows[0].cells[1]?.refunds, 0)
    }

    func testAnUpgradeMidPeriodContinuesThePeriodItReplaced() throws {
        try deliver("SUBSCRIBED", "INITIAL_BUY", period("4300", 1, from: 0, to: 30))
        try deliver("DID_CHANGE_RENEWAL_PREF", "UPGRADE", period("4300", 2, from: 10, to: 40, product: "app.premium.monthly", reason: "PURCHASE"))
        try deliver("DID_RENEW", nil, period("4300", 1, from: 0, to: 30, extra: ["isUpgraded": true]), signed: d0 + 10 * day + 1000)
        try deliver("DID_RENEW", nil, period("4300", 3, from: 40, to: 70, product: "app.premium.monthly"))
        let retention = try report(.retention)
        XCTAssertEqual(Array(counts(retention).prefix(3)), [1, 1, 0], "the upgrade is not a renewal; the premium renewal is period 1")
        XCTAssertEqual(try report(.retention, filters: [CohortFilter(dimension: .product, value: "app.monthly")]).rows[0].size, 1,
                       "the cohort is of the first paid product")
        XCTAssertEqual(Array(totals(try report(.ltv)).prefix(2)).map { ($0 * 100).rounded() / 100 }, [19.98, 29.97])
    }

    func testAFamilySharedSubscriptionIsNotInThePaidCohorts() throws {
        try deliver("SUBSCRIBED", "INITIAL_BUY", period("4400", 1, from: 0, to: 30, extra: ["inAppOwnershipType": "FAMILY_SHARED"]))
        try deliver("DID_RENEW", nil, period("4400", 2, from: 30, to: 60, extra: ["inAppOwnershipType": "FAMILY_SHARED"]))
        XCTAssertTrue(try report(.retention).rows.isEmpty)
        XCTAssertTrue(try report(.ltv).rows.isEmpty)
        let family = try report(.retention, segments: [.familyShared])
        XCTAssertEqual(family.rows.map(\.size), [1])
        XCTAssertEqual(Array(counts(family).prefix(2)), [1, 1])
    }

    func testABillingRetryRecoveredWithinGraceIsRetainedAndOneAfterItCameBack() throws {
        // Within grace Apple keeps the renewal date: the recovered period begins as the last ended.
        try deliver("SUBSCRIBED", "INITIAL_BUY", period("4500", 1, from: 0, to: 30))
        try deliver("DID_FAIL_TO_RENEW", "GRACE_PERIOD", period("4500", 1, from: 0, to: 30), signed: d0 + 30 * day)
        try deliver("DID_RENEW", nil, period("4500", 2, from: 30, to: 60), signed: d0 + 33 * day)
        // Out of grace, billing retry recovered five days late: a new run.
        try deliver("SUBSCRIBED", "INITIAL_BUY", period("4510", 1, from: 0, to: 30))
        try deliver("DID_FAIL_TO_RENEW", nil, period("4510", 1, from: 0, to: 30), signed: d0 + 30 * day)
        try deliver("DID_RENEW", "BILLING_RECOVERY", period("4510", 2, from: 35, to: 65))
        let retention = try report(.retention, by: .product)
        XCTAssertEqual(retention.rows.count, 1)
        XCTAssertEqual(Array(counts(retention).prefix(2)), [2, 1], "only the one recovered within grace is retained")
        XCTAssertEqual(retention.rows[0].cells[1]?.reactivated, 1, "the other came back, shown apart")
        let days = try DailyCountsReport.compute(store: store, from: "2026-06-01", to: "2026-08-31", timeZone: utc)
        XCTAssertEqual(days.reduce(0) { $0 + $1[.churned] }, 3, "as the counts see it: the one out of grace churned on day 30, then each run ended")
        XCTAssertEqual(days.reduce(0) { $0 + $1[.recoveries] }, 1)
    }

    // MARK: The five rules, each on the example

    func sum(_ days: [DayCounts], _ m: Metric) -> Int { days.reduce(0) { $0 + $1[m] } }

    func testARecoveryWithinGraceContinuesTheRunWithNoGapInTheCountsOrTheCohort() throws {
        // Bought Jun 1 (expires Jul 1), grace until Jul 7, billing recovered Jul 3 with the
        // renewal date kept (expires Aug 1): Apple's shape, with and without a grace date known
        // (without one, the renewal date kept says it).
        for (otid, graceKnown) in [("5100", true), ("5110", false)] {
            try deliver("SUBSCRIBED", "INITIAL_BUY", period(otid, 1, from: 0, to: 30))
            let failed = TestKit.body(type: "DID_FAIL_TO_RENEW", subtype: "GRACE_PERIOD", signed: d0 + 30 * day,
                                      transaction: period(otid, 1, from: 0, to: 30),
                                      renewal: TestKit.renewal(original: otid, signed: d0 + 30 * day, extra: graceKnown
                                          ? ["isInBillingRetryPeriod": true, "gracePeriodExpiresDate": d0 + 36 * day]
                                          : ["isInBillingRetryPeriod": true]))
            _ = try TestKit.intake(store).ingest(failed, receivedAt: d0 + 30 * day)
            var recovered = period(otid, 2, from: 32, to: 61)
            recovered["expiresDate"] = d0 + 61 * day
            try deliver("DID_RENEW", "BILLING_RECOVERY", recovered)
        }
        let retention = try report(.retention)
        XCTAssertEqual(Array(counts(retention).prefix(2)), [2, 2], "retained at period 1")
        XCTAssertEqual(retention.rows[0].cells[1]?.reactivated, 0, "no one came back: no one left")
        let days = try DailyCountsReport.compute(store: store, from: "2026-06-01", to: "2026-07-31", timeZone: utc)
        XCTAssertEqual(sum(days, .churned), 0)
        XCTAssertEqual(sum(days, .recoveries), 0)
        XCTAssertEqual(sum(days, .reactivations), 0)
        XCTAssertEqual(sum(days, .renewals), 2)
        XCTAssertEqual(sum(days, .billingRecoveries), 2, "leaving billing trouble through a renewal still counts")
        XCTAssertEqual(days.map { $0[.activePaid] }, Array(repeating: 2, count: days.count), "the grace days are paid access")
    }

    func testTheSignedGracePeriodDecidesWhetherARecoveryWasWithinIt() {
        func share(recoveredOn dayNumber: Int) -> MetricContributions {
            let first = TransactionRecord(transactionId: "1", originalTransactionId: "1", productId: "app.monthly",
                                          purchaseDate: d0, expiresDate: d0 + 30 * day, transactionReason: .purchase,
                                          price: 9990, currency: "USD", signedDate: d0)
            var second = first
            second.transactionId = "2"
            second.transactionReason = .renewal
            second.purchaseDate = d0 + Millis(dayNumber) * day
            second.expiresDate = d0 + 61 * day   // the renewal date kept either way
            let renewal = RenewalRecord(originalTransactionId: "1", isInBillingRetryPeriod: true,
                                        gracePeriodExpiresDate: d0 + 36 * day, signedDate: d0 + 30 * day)
            return MetricContributions.of(transactions: [first, second], events: [], renewal: renewal)
        }
        func total(_ c: MetricContributions, _ key: MetricContributions.PeriodKey) -> Int {
            c.counts.filter { $0.key.key == key }.values.reduce(0, +)
        }
        XCTAssertEqual(total(share(recoveredOn: 35), .recovery), 0, "before the grace period's end")
        XCTAssertEqual(total(share(recoveredOn: 37), .recovery), 1, "after it: a churn and a recovery")
        XCTAssertEqual(total(share(recoveredOn: 37), .churn), 2)
    }

    func testAComebackCountsInEachPeriodItsAccessOverlapsAndOnABoundaryInTheLaterOne() throws {
        // Bought Jun 1 for a month, expired Jul 1; bought again Jul 24 to Aug 24: periods 1 and 2.
        try deliver("SUBSCRIBED", "INITIAL_BUY", period("5200", 1, from: 0, to: 30))
        try deliver("SUBSCRIBED", "RESUBSCRIBE", period("5200", 2, from: 53, to: 84, reason: "PURCHASE"))
        // Another bought again exactly as its period 3 begins (two nominal months after its end).
        try deliver("SUBSCRIBED", "INITIAL_BUY", period("5210", 1, from: 0, to: 30, hour: 1))
        var again = period("5210", 2, from: 0, to: 0, reason: "PURCHASE")
        let boundary = d0 + 30 * day + 3_600_000 + 2 * 2_629_800_000
        again["purchaseDate"] = boundary
        again["signedDate"] = boundary
        again["expiresDate"] = boundary + 20 * day
        try deliver("SUBSCRIBED", "RESUBSCRIBE", again)
        let split = try report(.retention, by: .storefront)
        XCTAssertEqual(split.rows[0].cells.prefix(5).map { $0?.reactivated }, [0, 1, 1, 1, 0],
                       "5200 in periods 1 and 2, 5210 in period 3 alone")
    }

    func testAProratedRefundTakesItsMoneyOutInThePeriodItHappened() throws {
        // Bought Jun 1, renewed Jul 1, half refunded Jul 6.
        try deliver("SUBSCRIBED", "INITIAL_BUY", period("5300", 1, from: 0, to: 30))
        try deliver("DID_RENEW", nil, period("5300", 2, from: 30, to: 60))
        let refunded = period("5300", 2, from: 30, to: 60, extra: ["revocationDate": d0 + 35 * day, "revocationReason": 0,
                                                                  "revocationType": "REFUND_PRORATED", "revocationPercentage": 50000])
        try deliver("REFUND", nil, refunded, signed: d0 + 35 * day)
        let ltv = try report(.ltv)
        XCTAssertEqual(Array(ltv.rows[0].cells.prefix(3)).map { (($0?.perMember ?? 0) * 1000).rounded() / 1000 }, [9.99, 14.985, 14.985])
        XCTAssertEqual(ltv.rows[0].cells[1]?.refunds, 1)
        XCTAssertEqual(Array(counts(try report(.retention)).prefix(3)), [1, 1, 0], "paid through period 1 until the refund")
    }

    func testAnUpgradeRefundedInPartStillReplacedThePeriodBeforeIt() throws {
        // Basic bought Jun 1 for a month, upgraded to premium Jun 11 (Apple's notifications
        // alone: the basic transaction never arrives marked upgraded), the premium purchase
        // refunded in part Jun 21 12:00 (the 19.5 days left of 30). 5320 then comes back to
        // the basic plan Jun 26, while the basic period it left would still have run.
        let refundedAt = d0 + 20 * day + 12 * 3_600_000
        for otid in ["5310", "5320"] {
            try deliver("SUBSCRIBED", "INITIAL_BUY", period(otid, 1, from: 0, to: 30))
            let premium: [String: Any] = ["price": 14990]
            try deliver("DID_CHANGE_RENEWAL_PREF", "UPGRADE",
                        period(otid, 2, from: 10, to: 40, product: "app.premium.monthly", reason: "PURCHASE", extra: premium))
            let refunded = period(otid, 2, from: 10, to: 40, product: "app.premium.monthly", reason: "PURCHASE",
                                  extra: premium.merging(["revocationDate": refundedAt, "revocationReason": 0,
                                                          "revocationType": "REFUND_PRORATED", "revocationPercentage": 65000]) { $1 })
            try deliver("REFUND", nil, refunded, signed: refundedAt)
        }
        try deliver("SUBSCRIBED", "RESUBSCRIBE", period("5320", 3, from: 25, to: 55, reason: "PURCHASE"))

        let state = try XCTUnwrap(try TestKit.state(store, "5310", now: d0 + 22 * day))
        XCTAssertEqual(state.productId, "app.premium.monthly")
        XCTAssertEqual(state.upgradedFrom, ["53101"], "the premium purchase replaced the basic period at once")
        XCTAssertEqual(state.status, .revoked, "the refund ended the premium access, and the basic period was replaced")
        XCTAssertFalse(state.entitled)

        let days = try DailyCountsReport.compute(store: store, from: "2026-06-01", to: "2026-07-31", timeZone: utc)
        XCTAssertEqual(sum(days, .upgrades), 2)
        XCTAssertEqual(sum(days, .downgrades), 0)
        XCTAssertEqual(days.map { $0[.activePaid] }, Array(repeating: 2, count: 20) + Array(repeating: 0, count: 5)
                       + Array(repeating: 1, count: 30) + Array(repeating: 0, count: 6),
                       "paid until the refund of the upgrade; 5320 again from Jun 26 to Jul 26")
        XCTAssertEqual(days[20][.churned], 2, "both runs end at the refund, on Jun 21")
        XCTAssertEqual(sum(days, .churned), 3)
        XCTAssertEqual(sum(days, .reactivations), 1, "5320 came back after a gap")
        XCTAssertEqual(sum(days, .renewals), 2, "the upgrades continue the runs, the comeback does not")
        let mrr = days.map { $0.moneyByCurrency["USD"]?[.mrr] ?? 0 }
        XCTAssertEqual(mrr[5], 2 * 9990, "Jun 6: the basic plans")
        XCTAssertEqual(mrr[15], 2 * 14990, "Jun 16: the premium plans alone")
        XCTAssertEqual(mrr[22], 0, "Jun 23: nothing paid")
        XCTAssertEqual(mrr[27], 9990, "Jun 28: 5320's basic plan again")

        let retention = try report(.retention)
        XCTAssertEqual(retention.rows.map(\.size), [2])
        XCTAssertEqual(Array(counts(retention).prefix(2)), [2, 0])
        XCTAssertEqual(retention.rows[0].cells[1]?.reactivated, 1, "5320 came back, in the period after the premium one")
    }

    func testATrialPaidForOnlyAfterBillingRetryStartedWithTheTrial() throws {
        // A 7-day trial from Jun 1, billing failed at its end, recovered Jun 18.
        try deliver("SUBSCRIBED", "INITIAL_BUY", period("5400", 1, from: 0, to: 7, trial: true))
        try deliver("DID_FAIL_TO_RENEW", nil, period("5400", 1, from: 0, to: 7, trial: true), signed: d0 + 7 * day)
        try deliver("DID_RENEW", "BILLING_RECOVERY", period("5400", 2, from: 17, to: 47))
        XCTAssertEqual(try report(.retention, filters: [CohortFilter(dimension: .start, value: "free_trial")]).rows.map(\.size), [1])
        XCTAssertThrowsError(try report(.retention, filters: [CohortFilter(dimension: .start, value: "none")]))
    }

    func testFamilySharedAccessMovesNoMoneyUnderAnySegment() throws {
        try deliver("SUBSCRIBED", "INITIAL_BUY", period("5500", 1, from: 0, to: 30, extra: ["inAppOwnershipType": "FAMILY_SHARED"]))
        try deliver("SUBSCRIBED", "INITIAL_BUY", period("5510", 1, from: 0, to: 30))
        for segments: Set<CountSegment> in [[.familyShared], [.paid, .familyShared]] {
            let days = try DailyCountsReport.compute(store: store, from: "2026-06-01", to: "2026-06-30", timeZone: utc, segments: segments)
            let family = segments == [.familyShared]
            XCTAssertEqual(days.reduce(0) { $0 + ($1.moneyByCurrency["USD"]?[.revenue] ?? 0) }, family ? 0 : 9990, "\(segments)")
            XCTAssertEqual(days.last?.moneyByCurrency["USD"]?[.mrr] ?? 0, family ? 0 : 9990, "\(segments)")
            XCTAssertEqual(sum(days, .paidTransactions), family ? 0 : 1, "\(segments)")
            XCTAssertEqual(sum(days, .newPaidSubscriptions), family ? 1 : 2, "the family member's access is still counted")
            XCTAssertEqual(days.last?[.activePaid], family ? 1 : 2)
        }
        let ltv = try report(.ltv, segments: [.familyShared])
        XCTAssertEqual(ltv.rows.map(\.size), [1])
        XCTAssertEqual(ltv.rows[0].cells[0]?.total ?? 0, 0)
    }

    func testAStoreWrittenBeforeTheseRulesIsRepairedByMigrationTwenty() throws {
        let dir = NSTemporaryDirectory() + "cohort-tests-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let location = Store.testLocation(file: dir + "/old.db")
        store = try Store(path: location)
        // As an earlier subdesk counted it: the family member's price as revenue.
        rules = .turningBack(.familyMoney)
        try deliver("SUBSCRIBED", "INITIAL_BUY", period("5600", 1, from: 0, to: 30, extra: ["inAppOwnershipType": "FAMILY_SHARED"]))
        rules = .current
        func revenue() throws -> Int64 {
            try DailyCountsReport.compute(store: store, from: "2026-06-01", to: "2026-06-30", timeZone: utc, segments: [.familyShared])
                .reduce(0) { $0 + ($1.moneyByCurrency["USD"]?[.revenue] ?? 0) }
        }
        XCTAssertEqual(try revenue(), 9990)
        try TestKit.rollBack(store, to: 19)
        store = nil
        store = try Store(path: location)
        XCTAssertEqual(store.schemaVersion, Migrations.latestVersion)
        XCTAssertEqual(try store.metrics.pendingShareCount(), 1, "the migration queues every share")
        XCTAssertEqual(try store.metrics.catchUpShares(), 1)
        XCTAssertEqual(try revenue(), 0)
    }

    func testAStoreWrittenBeforeTheUpgradeRuleIsRepairedByMigrationTwentyFour() throws {
        let dir = NSTemporaryDirectory() + "cohort-tests-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let location = Store.testLocation(file: dir + "/old.db")
        store = try Store(path: location)
        // As an earlier subdesk counted it: the upgrade's purchase refunded in part replaced nothing.
        rules = .turningBack(.upgradeRefundedInPart)
        let refundedAt = d0 + 20 * day
        try deliver("SUBSCRIBED", "INITIAL_BUY", period("5410", 1, from: 0, to: 30))
        try deliver("SUBSCRIBED", "INITIAL_BUY", period("5420", 1, from: 0, to: 30))
        let premium: [String: Any] = ["price": 14990]
        try deliver("DID_CHANGE_RENEWAL_PREF", "UPGRADE",
                    period("5410", 2, from: 10, to: 40, product: "app.premium.monthly", reason: "PURCHASE", extra: premium))
        let refunded = period("5410", 2, from: 10, to: 40, product: "app.premium.monthly", reason: "PURCHASE",
                              extra: premium.merging(["revocationDate": refundedAt, "revocationReason": 0,
                                                      "revocationType": "REFUND_PRORATED", "revocationPercentage": 66667]) { $1 })
        try deliver("REFUND", nil, refunded, signed: refundedAt)
        rules = .current
        func upgrades() throws -> Int {
            sum(try DailyCountsReport.compute(store: store, from: "2026-06-01", to: "2026-07-31", timeZone: utc), .upgrades)
        }
        XCTAssertEqual(try upgrades(), 0)
        try TestKit.rollBack(store, to: 23)
        // Migration 24 alone (later ones recompute every share for reasons of their own).
        try Migrations.migrate(store.db, upTo: 24)
        XCTAssertEqual(try store.metrics.pendingShareCount(), 1, "the migration queues the share of the one subscription with a refund")
        store = nil
        store = try Store(path: location)
        XCTAssertEqual(store.schemaVersion, Migrations.latestVersion)
        try store.metrics.catchUpShares()
        XCTAssertEqual(try upgrades(), 1)
    }

    func testALateNotificationAndABackfillRepairTheCohort() throws {
        try deliver("SUBSCRIBED", "INITIAL_BUY", period("4600", 1, from: 0, to: 30))
        try deliver("SUBSCRIBED", "INITIAL_BUY", period("4610", 1, from: 0, to: 30))
        XCTAssertEqual(Array(counts(try report(.retention)).prefix(2)), [2, 0])
        // The renewal notification arrives late, and another is taken in by a backfill.
        try deliver("DID_RENEW", nil, period("4600", 2, from: 30, to: 60), signed: d0 + 30 * day)
        try deliver("DID_RENEW", nil, period("4610", 2, from: 30, to: 60), signed: d0 + 30 * day, source: "backfill")
        let repaired = try report(.retention)
        XCTAssertEqual(Array(counts(repaired).prefix(3)), [2, 2, 0])
        // A revalidation that brings the history whole changes nothing more.
        let history = try store.subscriptions.history(originalTransactionId: "4600")
        try store.write { _ = try TestKit.intake(store).merge(transactions: history.transactions, renewals: [], now: d0 + 80 * day) }
        XCTAssertEqual(try report(.retention), repaired)
    }

    func testTrialCohortsShowConversionDayByDay() throws {
        try deliver("SUBSCRIBED", "INITIAL_BUY", period("4700", 1, from: 0, to: 7, trial: true))
        try deliver("DID_RENEW", nil, period("4700", 2, from: 7, to: 37))
        try deliver("SUBSCRIBED", "INITIAL_BUY", period("4710", 1, from: 0, to: 7, trial: true))
        let trial = try report(.trial)
        XCTAssertEqual(trial.unit, .days)
        XCTAssertEqual(trial.rows.map(\.size), [2])
        XCTAssertEqual(Array(counts(trial).prefix(9)), [0, 0, 0, 0, 0, 0, 0, 1, 1])
        XCTAssertEqual(trial.rows[0].cells[7]?.share, 0.5)
        let retention = try report(.retention)
        XCTAssertEqual(retention.rows.map(\.size), [1], "a trial that never converted is in no paid cohort")
        XCTAssertEqual(try report(.retention, filters: [CohortFilter(dimension: .start, value: "free_trial")]).rows.map(\.size), [1])
    }

    func testMixedDurationsAreReadInMonthsOrEachInItsOwnPeriods() throws {
        try deliver("SUBSCRIBED", "INITIAL_BUY", period("4800", 1, from: 0, to: 30))
        try deliver("DID_RENEW", nil, period("4800", 2, from: 30, to: 60))
        try deliver("SUBSCRIBED", "INITIAL_BUY", period("4810", 1, from: 0, to: 365, product: "app.yearly"))
        let months = try report(.retention)
        XCTAssertEqual(months.unit, .months)
        XCTAssertEqual(Array(counts(months).prefix(3)), [2, 2, 1], "the yearly one is paid through month 2")
        let split = try report(.retention, by: .duration)
        XCTAssertEqual(split.unit, .periods)
        XCTAssertEqual(split.rows.compactMap(\.value), ["P1M", "P1Y"])
        XCTAssertEqual(Array(counts(split, row: 0).prefix(3)), [1, 1, 0])
    }

    func testAnUnknownFilterValueIsRefused() throws {
        try deliver("SUBSCRIBED", "INITIAL_BUY", period("4900", 1, from: 0, to: 30))
        XCTAssertThrowsError(try report(.retention, filters: [CohortFilter(dimension: .product, value: "app.montly")])) { error in
            XCTAssertTrue("\(error)".contains("app.monthly"), "\(error)")
        }
    }

    // MARK: Consistency with the daily counts

    /// Properties every report must have: cohort sizes add up to the new paid subscriptions
    /// counted over the same days and part; period 0 is 100%; retention never rises;
    /// LTV falls only through refunds.
    func assertConsistent(_ store: Store, now: Millis, filter: SegmentFilter? = nil, file: StaticString = #filePath, line: UInt = #line) throws {
        let from = CohortPeriod.month.start(of: now - 800 * day)
        let filters = filter.map { [CohortFilter(dimension: CohortDimension(rawValue: $0.dimension.rawValue)!, value: $0.value)] } ?? []
        let retention = try CohortReport.compute(store: store, metric: .retention, from: from, to: now, filters: filters, now: now)
        let ltv = try CohortReport.compute(store: store, metric: .ltv, from: from, to: now, filters: filters, now: now)
        let days = try DailyCountsReport.compute(store: store, from: DateText.format(from, "yyyy-MM-dd", zone: utc),
                                                 to: DateText.format(CohortPeriod.month.next(CohortPeriod.month.start(of: now)) - day, "yyyy-MM-dd", zone: utc),
                                                 timeZone: utc, period: .month, filter: filter)
        let newPaid = days.reduce(0) { $0 + $1[.newPaidSubscriptions] }
        XCTAssertGreaterThan(newPaid, 0, file: file, line: line)
        XCTAssertEqual(retention.rows.reduce(0) { $0 + $1.size }, newPaid, "cohort sizes add up to new paid subscriptions", file: file, line: line)
        for (row, month) in retention.rows.map({ ($0, $0.label) }) {
            XCTAssertEqual(row.size, days.first { $0.day == month }?[.newPaidSubscriptions], month, file: file, line: line)
            XCTAssertEqual(row.cells[0]?.share, 1, "period 0 is every member: \(month)", file: file, line: line)
            let retained = row.cells.compactMap { $0?.count }
            XCTAssertEqual(retained, retained.sorted(by: >), "retention never rises: \(month)", file: file, line: line)
        }
        for row in ltv.rows {
            let cells = row.cells.compactMap { $0 }
            for (a, b) in zip(cells, cells.dropFirst()) {
                if let x = a.total, let y = b.total, y < x - 1e-9 {
                    XCTAssertGreaterThan(b.refunds, a.refunds, "LTV fell without a refund: \(row.label)", file: file, line: line)
                }
            }
        }
    }

    func testCohortsAgreeWithTheDailyCountsOnTheDemoStore() throws {
        let dir = NSTemporaryDirectory() + "cohort-tests-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        store = try Store(path: Store.testLocation(file: dir + "/demo.db"))
        _ = try DemoStoreBuilder(sample: TestKit.sample, copies: 2).build(into: store, anchor: TestKit.anchor)
        let now = TestKit.anchor + 30 * day
        try assertConsistent(store, now: now)
        try store.metrics.catchUpSegments()
        try assertConsistent(store, now: now, filter: SegmentFilter(dimension: .product, value: "app.monthly"))
    }

    func testCohortsAgreeWithTheDailyCountsOnAGeneratedStore() throws {
        let now = TestKit.anchor
        _ = try StoreGenerator(subscribers: 800, now: now).generate(into: store)
        try assertConsistent(store, now: now)
        try store.metrics.catchUpSegments()
        let product = try XCTUnwrap(try store.metrics.segmentValues(.product).first)
        try assertConsistent(store, now: now, filter: SegmentFilter(dimension: .product, value: product))
    }

    func testAShareKeepsItsCohortsThroughTheStoredForm() throws {
        try deliver("SUBSCRIBED", "INITIAL_BUY", period("5000", 1, from: 0, to: 7, trial: true))
        try deliver("DID_RENEW", nil, period("5000", 2, from: 7, to: 37))
        let history = try store.subscriptions.history(originalTransactionId: "5000")
        let share = MetricContributions.of(transactions: history.transactions, events: history.events, renewal: history.renewal)
        XCTAssertEqual(share.cohorts.memberships.map(\.kind), [.paid, .trial])
        XCTAssertEqual(MetricContributions(encoded: share.encoded()), share)
    }
}
