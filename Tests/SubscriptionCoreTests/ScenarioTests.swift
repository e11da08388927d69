import Foundation
import XCTest
@testable import SubscriptionCore
import SubdeskScenarios
import SubdeskTestKit

/// Each sample-data scenario, signed and ingested, ends in the state it declares;
/// and the state never depends on the order the notifications arrived in.
final class ScenarioTests: XCTestCase, RunsOnEveryEngine {
    static let scenarios: [Scenario] = try! TestKit.sample.scenarios()
    static let builder = ScenarioBuilder(signer: TestKit.signer)

    func testScenariosCoverEveryLifecycleOfTheReferenceNotes() {
        let names = Set(Self.scenarios.map(\.name))
        for required in ["free-trial-then-paid", "intro-pay-as-you-go", "intro-pay-up-front", "renewals", "upgrade",
                         "downgrade", "crossgrade", "auto-renew-off-then-on", "grace-then-recovery",
                         "billing-retry-then-expired", "voluntary-expiry", "declined-price-increase",
                         "product-not-for-sale", "refund", "refund-reversed", "family-sharing-revoked",
                         "offer-redeemed", "renewal-extended"] {
            XCTAssertTrue(names.contains(required), "no scenario \(required)")
        }
    }

    func testEachScenarioEndsInItsExpectedState() throws {
        for (index, scenario) in Self.scenarios.enumerated() {
            let store = try Store.inMemory()
            let intake = TestKit.intake(store)
            for body in try Self.builder.bodies(for: scenario, instance: index, anchor: TestKit.anchor) {
                let outcome = try intake.ingest(body, receivedAt: TestKit.anchor)
                guard case .stored = outcome else { XCTFail("\(scenario.name): \(outcome)"); continue }
            }
            let otid = ScenarioBuilder.originalTransactionId(instance: index)
            let state = try XCTUnwrap(try TestKit.state(store, otid), scenario.name)
            assert(state, matches: scenario)
            // The stored row (derived at intake) agrees with a fresh derivation at the same instant.
            XCTAssertEqual(try store.subscriptions.find(originalTransactionId: otid)?.state, state, scenario.name)
        }
    }

    /// Every scenario into one store: a row's later saves set only the indexed columns that
    /// change, so each row must still equal a fresh derivation, and SQLite must find every
    /// index in agreement with the rows.
    func testOneStoreOfEveryScenarioKeepsRowsAndIndexesConsistent() throws {
        let store = try Store.inMemory()
        let intake = TestKit.intake(store)
        for (index, scenario) in Self.scenarios.enumerated() {
            for body in try Self.builder.bodies(for: scenario, instance: index, anchor: TestKit.anchor) {
                _ = try intake.ingest(body, receivedAt: TestKit.anchor)
            }
        }
        XCTAssertEqual(try store.upkeep.health().integrity, ["ok"])
        for (index, scenario) in Self.scenarios.enumerated() {
            let otid = ScenarioBuilder.originalTransactionId(instance: index)
            let row = try XCTUnwrap(try store.subscriptions.find(originalTransactionId: otid), scenario.name)
            XCTAssertEqual(row.state, try TestKit.state(store, otid), scenario.name)
            // Found again through the indexes over status, expiry and product.
            let page = try store.subscriptions.page(SubscriptionQuery(statuses: [row.state.status]), limit: 10_000)
            XCTAssertTrue(page.contains { $0.state.originalTransactionId == otid }, "\(scenario.name) under its status")
        }
    }

    func assert(_ state: SubscriptionState, matches scenario: Scenario, file: StaticString = #filePath, line: UInt = #line) {
        let e = scenario.expect
        let name = scenario.name
        XCTAssertEqual(state.status, e.status, "\(name): status", file: file, line: line)
        XCTAssertEqual(state.entitled, e.entitled, "\(name): entitled", file: file, line: line)
        if let expires = e.expires {
            XCTAssertEqual(state.expiresDate, expires.map { TestKit.anchor + $0 }, "\(name): expiresDate", file: file, line: line)
        }
        if let intent = e.expirationIntent {
            XCTAssertEqual(state.expirationIntent, intent, "\(name): expirationIntent", file: file, line: line)
        }
        if let autoRenew = e.autoRenew {
            XCTAssertEqual(state.autoRenewStatus, autoRenew, "\(name): autoRenewStatus", file: file, line: line)
        }
        if let pending = e.pendingProduct {
            XCTAssertEqual(state.pendingChange?.productId, pending, "\(name): pending product", file: file, line: line)
        }
    }

    func testScenarioDetailsBeyondStatus() throws {
        func run(_ name: String) throws -> SubscriptionState {
            let index = try XCTUnwrap(Self.scenarios.firstIndex { $0.name == name })
            let store = try Store.inMemory()
            let intake = TestKit.intake(store)
            for body in try Self.builder.bodies(for: Self.scenarios[index], instance: index, anchor: TestKit.anchor) {
                _ = try intake.ingest(body)
            }
            return try XCTUnwrap(try TestKit.state(store, ScenarioBuilder.originalTransactionId(instance: index)))
        }
        let upgrade = try run("upgrade")
        XCTAssertEqual(upgrade.productId, "app.premium.monthly")
        XCTAssertEqual(upgrade.upgradedFrom.count, 1, "the basic transaction is superseded at once")
        let downgrade = try run("downgrade")
        XCTAssertEqual(downgrade.productId, "app.premium.monthly", "a downgrade waits for the renewal")
        XCTAssertEqual(downgrade.pendingChange?.kind, "downgrade")
        XCTAssertEqual(downgrade.pendingChange?.effectiveDate, downgrade.expiresDate)
        let trial = try run("in-free-trial")
        XCTAssertTrue(trial.isTrial)
        XCTAssertEqual(trial.offerDiscountType, "FREE_TRIAL")
        let grace = try run("in-grace-period")
        XCTAssertEqual(grace.gracePeriodExpiresDate, TestKit.anchor + 11 * TestKit.day)
        XCTAssertTrue(grace.isInBillingRetryPeriod)
        let family = try run("family-sharing-active")
        XCTAssertTrue(family.isFamilyShared)
        let refund = try run("refund")
        XCTAssertEqual(refund.revokedTransactionIds.count, 1)
        let priceIncrease = try run("price-increase-accepted")
        XCTAssertEqual(priceIncrease.priceIncreaseStatus, 1)
        let promo = try run("offer-redeemed")
        XCTAssertEqual(promo.offerType, .promotional)
        XCTAssertEqual(promo.offerIdentifier, "loyal-50")
    }

    /// Billing recovered within grace continues the run (Apple kept the renewal date); after
    /// grace, the renewal date moved and the customer churned and came back from billing retry.
    func testGraceScenariosCountAsTheirRenewalDatesSay() throws {
        func totals(_ name: String) throws -> [Metric: Int] {
            let index = try XCTUnwrap(Self.scenarios.firstIndex { $0.name == name })
            let store = try Store.inMemory()
            let intake = TestKit.intake(store)
            for body in try Self.builder.bodies(for: Self.scenarios[index], instance: index, anchor: TestKit.anchor) {
                _ = try intake.ingest(body, receivedAt: TestKit.anchor)
            }
            let utc = TimeZone(identifier: "UTC")!
            let from = DateText.format(TestKit.anchor - 70 * TestKit.day, "yyyy-MM-dd", zone: utc)
            let days = try DailyCountsReport.compute(store: store, from: from, to: DateText.format(TestKit.anchor, "yyyy-MM-dd", zone: utc), timeZone: utc)
            var sums: [Metric: Int] = [:]
            for m in [Metric.churned, .recoveries, .billingRecoveries, .renewals] { sums[m] = days.reduce(0) { $0 + $1[m] } }
            sums[.activePaid] = days.map { $0[.activePaid] }.filter { $0 > 0 }.count
            return sums
        }
        let within = try totals("grace-then-recovery")
        XCTAssertEqual(within[.churned], 0)
        XCTAssertEqual(within[.recoveries], 0)
        XCTAssertEqual(within[.renewals], 1)
        XCTAssertEqual(within[.billingRecoveries], 1)
        XCTAssertEqual(within[.activePaid], 41, "paid every day from its purchase 40 days ago, the grace days too")
        let after = try totals("billing-recovered-after-grace")
        XCTAssertEqual(after[.churned], 1)
        XCTAssertEqual(after[.recoveries], 1)
        XCTAssertEqual(after[.renewals], 0)
        XCTAssertEqual(after[.billingRecoveries], 1)
    }

    /// Every permutation of each multi-step scenario's notifications, with a duplicate
    /// thrown in, derives exactly the state in-order delivery derives.
    func testEveryArrivalOrderDerivesTheSameState() throws {
        var checked = 0
        for (index, scenario) in Self.scenarios.enumerated() where scenario.steps.count >= 2 && scenario.steps.count <= 4 {
            let bodies = try Self.builder.bodies(for: scenario, instance: index, anchor: TestKit.anchor)
            let otid = ScenarioBuilder.originalTransactionId(instance: index)
            var reference: SubscriptionState?
            var referenceMetrics: [String]?
            for order in permutations(Array(bodies.indices)) {
                let store = try Store.inMemory()
                let intake = TestKit.intake(store)
                for i in order { _ = try intake.ingest(bodies[i]) }
                XCTAssertEqual(try intake.ingest(bodies[order[0]]),
                               .duplicate(notificationUUID: try XCTUnwrap(try store.notifications.uuid(bodySHA256: ContentDigest.sha256Hex(bodies[order[0]])))))
                let state = try TestKit.state(store, otid)
                // The daily-count aggregates, too, are the same whatever the order.
                let metrics = try store.metrics.buckets(from: 0, to: Millis.max).map { "\($0.bucketStart) \($0.key) \($0.segment) \($0.count)" }.sorted()
                if let referenceMetrics { XCTAssertEqual(metrics, referenceMetrics, "\(scenario.name): aggregates for order \(order)") }
                else { referenceMetrics = metrics }
                if let reference {
                    XCTAssertEqual(state, reference, "\(scenario.name): order \(order) differs")
                } else {
                    reference = state
                    assert(try XCTUnwrap(state), matches: scenario)
                }
                checked += 1
            }
        }
        XCTAssertGreaterThan(checked, 100, "permutations actually ran")
    }

    func permutations(_ items: [Int]) -> [[Int]] {
        guard items.count > 1 else { return [items] }
        return items.indices.flatMap { i -> [[Int]] in
            var rest = items
            let first = rest.remove(at: i)
            return permutations(rest).map { [first] + $0 }
        }
    }
}
