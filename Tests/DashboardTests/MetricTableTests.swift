import Foundation
import XCTest
import SubdeskTestKit
@testable import SubscriptionCore
import TerminalUI
@testable import Dashboard

/// A daily metric is one entry of `Metric.all`: given one more entry, the report computes it
/// and every place that shows metrics shows it (JSON, CSV, `:daily`, the README's lists).
final class MetricTableTests: XCTestCase, RunsOnEveryEngine {
    let utc = TimeZone(identifier: "UTC")!

    /// A level from two keys of the shares.
    static let inTrouble = Metric("inTrouble", "in trouble", .level, .keys(plus: [.graceLevel, .retryLevel], minus: []), .notifications,
                                  definition: "subscriptions in the grace period or billing retry at the end of the period")
    /// A rate of two metrics of the table.
    static let renewalShare = Metric("renewalShare", "renewal share", .rate, .ratio(.metric(.renewals), .metric(.paidTransactions)),
                                     .transactions, definition: "renewals divided by paid transactions")

    func testAMetricAddedAsOneTableEntryAppearsInJSONCSVDailyAndTheReadme() throws {
        let store = try DashboardFixture.demoStore()
        let table = Metric.all + [Self.inTrouble, Self.renewalShare]
        let standard = try DailyCountsReport.compute(store: store, from: "2026-10-18", to: "2026-11-16", timeZone: utc)
        let days = try DailyCountsReport.compute(store: store, from: "2026-10-18", to: "2026-11-16", timeZone: utc, metrics: table)

        // Computed from its definition, the table's own metrics unchanged.
        for (extended, day) in zip(days, standard) {
            XCTAssertEqual(extended[Self.inTrouble], day[.inGracePeriod] + day[.inBillingRetry], day.day)
            XCTAssertEqual(extended.rates[Self.renewalShare],
                           day[.paidTransactions] > 0 ? Double(day[.renewals]) / Double(day[.paidTransactions]) : nil, day.day)
            for m in Metric.all { XCTAssertEqual(extended.text(m), day.text(m), "\(m) on \(day.day)") }
        }
        XCTAssertTrue(days.contains { $0[Self.inTrouble] > 0 }, "the demo store has subscriptions in trouble")
        XCTAssertTrue(days.contains { ($0.rates[Self.renewalShare] ?? 0) > 0 }, "and renewals")

        // counts --json and --csv.
        let last = try XCTUnwrap(days.last)
        XCTAssertEqual(last.jsonObject()["inTrouble"] as? Int, last[Self.inTrouble])
        XCTAssertNotNil(last.jsonObject()["renewalShare"])
        let header = DayCounts.csvHeader(.day, metrics: table).split(separator: ",").map(String.init)
        let line = last.csvLine().split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        XCTAssertEqual(header.count, line.count)
        XCTAssertEqual(line[try XCTUnwrap(header.firstIndex(of: "inTrouble"))], String(last[Self.inTrouble]))
        XCTAssertEqual(line[try XCTUnwrap(header.firstIndex(of: "renewalShare"))], last.csvValue(Self.renewalShare))

        // :daily: a row each, and the selected one's chart and definition.
        var state = DashboardFixture.state(width: 120, height: 70)
        _ = DashboardReducer.switchTo(.daily, &state)
        state.daily.days = days
        state.daily.loaded = true
        state.daily.metric = table.count - 2
        DashboardReducer.clampDailyScroll(&state)
        let screen = DashboardRenderer.render(state).lines()
        let row = try XCTUnwrap(screen.first { $0.hasPrefix(" in trouble at end of day ") }, screen.joined(separator: "\n"))
        XCTAssertTrue(row.trimmingCharacters(in: .whitespaces).hasSuffix(" " + String(last[Self.inTrouble])), row)
        XCTAssertNotNil(screen.first { $0.hasPrefix(" renewal share ") }, screen.joined(separator: "\n"))
        XCTAssertTrue(screen.contains { $0.contains("in trouble at the end of each day") }, screen.joined(separator: "\n"))
        XCTAssertTrue(screen.contains { $0.contains(Self.inTrouble.definition) }, screen.joined(separator: "\n"))

        // The README's lists, as `counts --definitions-markdown` prints them.
        let lists = Metric.readmeLists(table)
        XCTAssertTrue(lists[1].hasSuffix("\n- **in trouble** (`inTrouble`): \(Self.inTrouble.definition)."), lists[1])
        XCTAssertTrue(lists[0].hasSuffix("\n- **renewal share** (`renewalShare`): \(Self.renewalShare.definition)."), lists[0])
    }

    /// Scripts read these names: a change to the table must not rename or reorder them (a new
    /// metric comes after the rest).
    func testTheJSONAndCSVNamesStayAsTheyWere() {
        XCTAssertEqual(DayCounts.csvHeader(.day), "day,activePaid,activeTrials,activeSubscriptions,newPaidSubscriptions,renewals,reactivations,recoveries,churned,churnRate,expiredVoluntary,expiredBillingRetry,expiredPriceIncrease,expiredProductNotForSale,expiredOther,trialStarts,trialConversions,trialConversionRate,paidTransactions,refunds,refundsFull,refundsProrated,refundRate,mrr,revenue,revocations,upgrades,downgrades,inGracePeriod,inBillingRetry,setToRenew,setToCancel,autoRenewOff,autoRenewOn,renewalFailures,gracePeriodEntries,billingRecoveries,saved,currency")
    }

    /// Every metric a source refers to is in the table, and names are unique.
    func testTheTableIsWhole() {
        XCTAssertEqual(Set(Metric.all.map(\.key)).count, Metric.all.count, "a key twice")
        XCTAssertEqual(Set(Metric.all.map(\.label)).count, Metric.all.count, "a label twice")
        func referred(_ source: Metric.Source) -> [Metric] {
            switch source {
            case .sum(let terms): return terms
            case .within(let inner, let cap): return referred(inner) + [cap]
            case .remainder(let a, let b): return [a, b]
            case .ratio(let n, let d):
                return [n, d].compactMap { term -> Metric? in
                    switch term {
                    case .metric(let metric), .atStart(let metric): return metric
                    case .key, .weighedRefunds: return nil
                    }
                }
            case .keys, .money: return []
            }
        }
        for m in Metric.all {
            for other in referred(m.source) { XCTAssertTrue(Metric.all.contains(other), "\(m.key) refers to \(other), which is not in the table") }
        }
    }

    /// Each metric is a case of `MetricName` (its JSON name) whose row is declared once
    /// (`static let churned = Metric(.churned, …)`); the compiler holds every case to a row
    /// and every row to a case, and the table is the cases' rows, in their order.
    func testEachDeclaredMetricIsInTheTable() throws {
        XCTAssertEqual(Metric.all.map(\.key), MetricName.allCases.map(\.rawValue), "each case's row is named by its case, in its order")
        XCTAssertEqual(Set(Metric.all).count, Metric.all.count, "no row twice")
    }
}
