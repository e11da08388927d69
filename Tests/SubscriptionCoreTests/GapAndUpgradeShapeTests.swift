import Foundation
import XCTest
@testable import SubscriptionCore
import SubdeskTestKit

/// Five histories of one monthly subscription at 9.99, each as Apple sends it (signed V2
/// notifications, ingested whole; 12:00 UTC unless said), whose counts and cohorts follow
/// from the README's definitions: a grace recovery keeps its renewal date and continues the
/// run (on a month-end anchor, twice in a row, after an introductory offer), billing retry
/// without grace is a churn and a return, and an upgrade ends the period before it even when
/// its purchase is refunded in full.
final class GapAndUpgradeShapeTests: XCTestCase, RunsOnEveryEngine {
    let day = TestKit.day
    let utc = TimeZone(identifier: "UTC")!
    var store: Store!

    override func setUpWithError() throws { store = try Store.inMemory() }

    /// `y-m-d` at `hour`:00 UTC.
    func at(_ y: Int64, _ m: Int64, _ d: Int64, hour: Int64 = 12) -> Millis {
        CohortCalendar.days(y, m, d) * day + hour * 3_600_000
    }

    func transaction(_ id: String, _ otid: String, from purchase: Millis, to expires: Millis, product: String = "app.monthly",
                     reason: String = "RENEWAL", price: Int64 = 9990, extra: [String: Any] = [:]) -> [String: Any] {
        var more: [String: Any] = ["transactionReason": reason, "price": price, "currency": "USD", "originalPurchaseDate": purchase]
        more.merge(extra) { $1 }
        return TestKit.transaction(id: id, original: otid, product: product, purchase: purchase, expires: expires, signed: purchase,
                                   extra: more)
    }

    func deliver(_ type: String, _ subtype: String?, _ transaction: [String: Any], signed: Millis, renewal: [String: Any] = [:],
                 product: String = "app.monthly") throws {
        let otid = transaction["originalTransactionId"] as! String
        let body = TestKit.body(type: type, subtype: subtype, signed: signed, transaction: transaction,
                                renewal: TestKit.renewal(original: otid, product: product, signed: signed, extra: renewal))
        guard case .stored = try TestKit.intake(store).ingest(body, receivedAt: signed) else { return XCTFail("not stored: \(type)") }
    }

    /// A grace failure of the period `lapsed` (its transaction), signed at its expiry, with the
    /// grace period's end Apple signed in its renewal info.
    func failInGrace(_ lapsed: [String: Any], graceUntil: Millis) throws {
        let at = lapsed["expiresDate"] as! Millis
        try deliver("DID_FAIL_TO_RENEW", "GRACE_PERIOD", lapsed, signed: at,
                    renewal: ["isInBillingRetryPeriod": true, "gracePeriodExpiresDate": graceUntil, "expirationIntent": 2])
    }

    func days(_ from: String, _ to: String) throws -> [DayCounts] {
        try DailyCountsReport.compute(store: store, from: from, to: to, timeZone: utc)
    }

    func sum(_ days: [DayCounts], _ m: Metric) -> Int { days.reduce(0) { $0 + $1[m] } }

    func retention(now: Millis) throws -> CohortReport {
        try CohortReport.compute(store: store, metric: .retention, period: .month, from: at(2025, 1, 1), to: at(2027, 1, 1),
                                 filters: [], segments: [.paid], by: nil, now: now)
    }

    /// 1. Bought Jan 10 with a month's pay-as-you-go introductory offer; grace failure Feb 10
    /// (until Feb 16); recovered Feb 13 at the regular price, expiring Mar 10 (the renewal date
    /// kept); renewed Mar 10. The duration is the product's, P1M, from the kept date.
    func testADurationIsThePeriodsFromItsKeptDateNotFromTheRecoverysPurchase() throws {
        let otid = "7100"
        let intro = transaction("71001", otid, from: at(2026, 1, 10), to: at(2026, 2, 10), reason: "PURCHASE", price: 4990,
                                extra: ["offerType": 1, "offerDiscountType": "PAY_AS_YOU_GO", "offerPeriod": "P1M"])
        try deliver("SUBSCRIBED", "INITIAL_BUY", intro, signed: at(2026, 1, 10))
        try failInGrace(intro, graceUntil: at(2026, 2, 16))
        try deliver("DID_RENEW", "BILLING_RECOVERY", transaction("71002", otid, from: at(2026, 2, 13), to: at(2026, 3, 10)),
                    signed: at(2026, 2, 13))
        try deliver("DID_RENEW", nil, transaction("71003", otid, from: at(2026, 3, 10), to: at(2026, 4, 10)), signed: at(2026, 3, 10))

        let cohorts = try retention(now: at(2026, 4, 1))
        XCTAssertEqual(cohorts.duration, "P1M")
        XCTAssertEqual(cohorts.rows.map(\.label), ["2026-01"])
        XCTAssertEqual(cohorts.rows[0].size, 1)
        XCTAssertEqual(Array(cohorts.rows[0].cells.prefix(3).map { $0?.count }), [1, 1, 1], "retained at periods 1 and 2")
        XCTAssertEqual(cohorts.rows[0].cells.compactMap { $0?.reactivated }.reduce(0, +), 0, "no one came back: no one left")
        let byDuration = try CohortReport.compute(store: store, metric: .retention, period: .month, from: at(2025, 1, 1),
                                                  to: at(2027, 1, 1), filters: [], segments: [.paid], by: .duration, now: at(2026, 4, 1))
        XCTAssertEqual(byDuration.rows.map { "\($0.label) \($0.value ?? "")" }, ["2026-01 P1M"])
        let counts = try days("2026-01-01", "2026-04-09")
        XCTAssertEqual(sum(counts, .churned), 0)
        XCTAssertEqual(sum(counts, .recoveries), 0)
        XCTAssertEqual(sum(counts, .reactivations), 0)
        XCTAssertEqual(sum(counts, .billingRecoveries), 1)
    }

    /// 2. Bought Aug 31, expiring Sep 30 (clamped); grace failure Sep 30 (until Oct 6);
    /// recovered Oct 3, expiring Oct 31 (Apple keeps the 31st anniversary): one run.
    func testAGraceRecoveryOnAMonthEndAnchorIsOneRun() throws {
        let otid = "7200"
        let first = transaction("72001", otid, from: at(2026, 8, 31), to: at(2026, 9, 30), reason: "PURCHASE")
        try deliver("SUBSCRIBED", "INITIAL_BUY", first, signed: at(2026, 8, 31))
        try failInGrace(first, graceUntil: at(2026, 10, 6))
        try deliver("DID_RENEW", "BILLING_RECOVERY", transaction("72002", otid, from: at(2026, 10, 3), to: at(2026, 10, 31)),
                    signed: at(2026, 10, 3))

        let counts = try days("2026-09-01", "2026-10-30")
        XCTAssertEqual(sum(counts, .churned), 0)
        XCTAssertEqual(sum(counts, .recoveries), 0)
        XCTAssertEqual(sum(counts, .reactivations), 0)
        XCTAssertEqual(sum(counts, .billingRecoveries), 1)
        XCTAssertEqual(counts.map { $0[.activePaid] }, Array(repeating: 1, count: counts.count), "paid access throughout")
        let cohorts = try retention(now: at(2026, 10, 30))
        XCTAssertEqual(cohorts.rows.map(\.label), ["2026-08"])
        XCTAssertEqual(cohorts.rows[0].cells[1]?.count, 1, "retained at period 1")
        XCTAssertEqual(cohorts.rows[0].cells[1]?.reactivated, 0)
    }

    /// 3. Bought Jan 10; grace failure Feb 10, recovered Feb 13 (to Mar 10); grace failure
    /// Mar 10 (until Mar 16), recovered Mar 12 (to Apr 10): both continue the run.
    func testTwoGraceRecoveriesInARowAreBothContinuations() throws {
        try deliverTwoGraceRecoveries()
        let counts = try days("2026-02-01", "2026-03-31")
        XCTAssertEqual(sum(counts, .churned), 0)
        XCTAssertEqual(sum(counts, .recoveries), 0)
        XCTAssertEqual(sum(counts, .reactivations), 0)
        XCTAssertEqual(sum(counts, .billingRecoveries), 2)
        let cohorts = try retention(now: at(2026, 4, 9))
        XCTAssertEqual(Array(cohorts.rows[0].cells.prefix(3).map { $0?.count }), [1, 1, 1], "retained at periods 1 and 2")
        XCTAssertEqual(cohorts.rows[0].cells.compactMap { $0?.reactivated }.reduce(0, +), 0)
    }

    /// 4. Bought Jan 6, expiring Feb 6 (31 days); DID_FAIL_TO_RENEW without a subtype (billing
    /// retry, no grace) Feb 6; recovered Feb 9, expiring Mar 9 (a new renewal date): a churn
    /// and a return from billing retry.
    func testABillingRetryRecoveryWithoutGraceIsAChurnAndARecovery() throws {
        try deliverRetryWithoutGrace()
        let counts = try days("2026-02-01", "2026-02-28")
        XCTAssertEqual(sum(counts, .churned), 1)
        XCTAssertEqual(counts[5][.churned], 1, "on Feb 6")
        XCTAssertEqual(sum(counts, .recoveries), 1)
        XCTAssertEqual(counts[8][.recoveries], 1, "on Feb 9")
        XCTAssertEqual(sum(counts, .renewals), 0)
        let cohorts = try retention(now: at(2026, 3, 5))
        XCTAssertEqual(cohorts.rows[0].cells[1]?.count, 0, "not retained at period 1")
        XCTAssertEqual(cohorts.rows[0].cells[1]?.reactivated, 1, "came back from period 1 on")
    }

    /// 5. Monthly bought Jan 16; upgraded to premium (14.99) Jan 21; the premium purchase
    /// refunded in full Jan 22; premium bought again Feb 9. Access ended at the upgrade, and
    /// Feb 9 is a comeback; the refunded purchase moves no money.
    func testARefundedUpgradeEndsThePeriodBeforeItAndALaterPurchaseIsAComeback() throws {
        let otid = "7500"
        let monthly = transaction("75001", otid, from: at(2026, 1, 16), to: at(2026, 2, 16), reason: "PURCHASE")
        try deliver("SUBSCRIBED", "INITIAL_BUY", monthly, signed: at(2026, 1, 16))
        let premium = transaction("75002", otid, from: at(2026, 1, 21), to: at(2026, 2, 21), product: "app.premium.monthly",
                                  reason: "PURCHASE", price: 14990)
        try deliver("DID_CHANGE_RENEWAL_PREF", "UPGRADE", premium, signed: at(2026, 1, 21), product: "app.premium.monthly")
        var refunded = premium
        refunded["revocationDate"] = at(2026, 1, 22)
        refunded["revocationReason"] = 0
        refunded["revocationType"] = "REFUND_FULL"
        try deliver("REFUND", nil, refunded, signed: at(2026, 1, 22), product: "app.premium.monthly")
        try deliver("SUBSCRIBED", "RESUBSCRIBE",
                    transaction("75003", otid, from: at(2026, 2, 9), to: at(2026, 3, 9), product: "app.premium.monthly",
                                reason: "PURCHASE", price: 14990),
                    signed: at(2026, 2, 9), product: "app.premium.monthly")

        let january = try days("2026-01-01", "2026-01-31")
        XCTAssertEqual(sum(january, .churned), 1)
        XCTAssertEqual(january[20][.churned], 1, "on Jan 21")
        let february = try days("2026-02-01", "2026-02-28")
        XCTAssertEqual(sum(february, .reactivations), 1)
        XCTAssertEqual(february[8][.reactivations], 1, "on Feb 9")
        XCTAssertEqual(sum(february, .renewals), 0)
        XCTAssertEqual(january.reduce(0) { $0 + ($1.moneyByCurrency["USD"]?[.revenue] ?? 0) }, 9990,
                       "the premium purchase refunded in full is as if never bought")

        // The subscriber's page says the same: the monthly period was upgraded from (its
        // notification says so), the premium purchase after it was an upgrade, not a change.
        let history = try store.subscriptions.history(originalTransactionId: otid)
        let beforeComeback = history.transactions.filter { $0.transactionId != "75003" }
        let state = try XCTUnwrap(StateDerivation.derive(originalTransactionId: otid, transactions: beforeComeback,
                                                         renewal: nil, events: history.events, now: at(2026, 1, 25)))
        XCTAssertEqual(state.upgradedFrom, ["75001"])
        XCTAssertEqual(state.latestTransactionId, "75002")
        XCTAssertFalse(state.entitled, "access ended at the upgrade, whose purchase was refunded")
        let timeline = Timeline.build(transactions: beforeComeback, events: history.events)
        XCTAssertEqual(timeline.first { $0.reference == "75002" }?.kind, .upgrade)
    }

    /// A store written before each notification kept its grace (migration 30) gets it from
    /// the stored bodies' signed renewal info, and its shares recomputed: the same grace
    /// dates, counts and cohorts as a fresh ingest of the same bodies.
    func testAStoreWrittenBeforeTheGraceWasKeptIsFilledFromItsBodies() throws {
        let dir = NSTemporaryDirectory() + "gap-shapes-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let location = Store.testLocation(file: dir + "/old.db")
        store = try Store(path: location)
        try deliverTwoGraceRecoveries()
        try deliverRetryWithoutGrace()
        func graces() throws -> [Millis?] {
            try ["7300", "7400"].flatMap { try store.subscriptions.history(originalTransactionId: $0).events.map(\.graceExpires) }
        }
        let fresh = (graces: try graces(), days: try days("2026-01-01", "2026-04-30"), cohorts: try retention(now: at(2026, 4, 9)))
        XCTAssertEqual(fresh.graces.compactMap { $0 }, [at(2026, 2, 16), at(2026, 3, 16)], "each grace failure keeps its grace")

        try TestKit.rollBack(store, to: 29)
        store = nil
        store = try Store(path: location)
        XCTAssertEqual(store.schemaVersion, Migrations.latestVersion)
        XCTAssertEqual(try store.metrics.pendingShareCount(), 2, "the migration queues every share")
        XCTAssertEqual(try store.metrics.catchUpShares(), 2)
        XCTAssertEqual(try graces(), fresh.graces, "filled from the bodies")
        XCTAssertEqual(try days("2026-01-01", "2026-04-30"), fresh.days)
        XCTAssertEqual(try retention(now: at(2026, 4, 9)), fresh.cohorts)
    }

    func deliverTwoGraceRecoveries() throws {
        let otid = "7300"
        let first = transaction("73001", otid, from: at(2026, 1, 10), to: at(2026, 2, 10), reason: "PURCHASE")
        try deliver("SUBSCRIBED", "INITIAL_BUY", first, signed: at(2026, 1, 10))
        try failInGrace(first, graceUntil: at(2026, 2, 16))
        let second = transaction("73002", otid, from: at(2026, 2, 13), to: at(2026, 3, 10))
        try deliver("DID_RENEW", "BILLING_RECOVERY", second, signed: at(2026, 2, 13))
        try failInGrace(second, graceUntil: at(2026, 3, 16))
        try deliver("DID_RENEW", "BILLING_RECOVERY", transaction("73003", otid, from: at(2026, 3, 12), to: at(2026, 4, 10)),
                    signed: at(2026, 3, 12))
    }

    func deliverRetryWithoutGrace() throws {
        let otid = "7400"
        let first = transaction("74001", otid, from: at(2026, 1, 6), to: at(2026, 2, 6), reason: "PURCHASE")
        try deliver("SUBSCRIBED", "INITIAL_BUY", first, signed: at(2026, 1, 6))
        try deliver("DID_FAIL_TO_RENEW", nil, first, signed: at(2026, 2, 6),
                    renewal: ["isInBillingRetryPeriod": true, "expirationIntent": 2])
        try deliver("DID_RENEW", "BILLING_RECOVERY", transaction("74002", otid, from: at(2026, 2, 9), to: at(2026, 3, 9)),
                    signed: at(2026, 2, 9))
    }
}
