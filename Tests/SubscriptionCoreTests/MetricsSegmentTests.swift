import Foundation
import XCTest
@testable import SubscriptionCore
import SubdeskScenarios

/// Reports by product, subscription group, storefront and offer type: the parts add up to
/// the whole, a subscription that changes product moves between products, and the
/// by-segment aggregates kept up from what changed equal ones computed from scratch.
extension MetricsDefinitionTests {
    /// The sample histories, plus some in other storefronts, groups, products and offers.
    func fillMixedStore() throws {
        let builder = ScenarioBuilder(signer: TestKit.signer)
        for (index, scenario) in try TestKit.sample.scenarios().enumerated() {
            for body in try builder.bodies(for: scenario, instance: index, anchor: TestKit.anchor) {
                _ = try TestKit.intake(store).ingest(body, receivedAt: TestKit.anchor)
            }
        }
        let france: [String: Any] = ["storefront": "FRA", "subscriptionGroupIdentifier": "21000002", "price": 8990, "currency": "EUR"]
        try deliver("SUBSCRIBED", "INITIAL_BUY", period("6000", 1, from: 0, to: 30, extra: france))
        try deliver("DID_RENEW", nil, period("6000", 2, from: 30, to: 60, product: "app.premium.monthly", extra: france))
        let japan: [String: Any] = ["storefront": "JPN", "price": 1200, "currency": "JPY"]
        try deliver("SUBSCRIBED", "INITIAL_BUY", period("6100", 1, from: 5, to: 12, trial: true, extra: japan))
        try deliver("DID_RENEW", nil, period("6100", 2, from: 12, to: 42, extra: japan.merging(["offerType": 2, "offerIdentifier": "back"]) { $1 }))
        try deliver("SUBSCRIBED", "INITIAL_BUY", period("6200", 1, from: 3, to: 33, extra: ["storefront": "DEU", "offerType": 3, "price": 4990]))
        try deliver("EXPIRED", "VOLUNTARY", period("6200", 1, from: 3, to: 33, extra: ["storefront": "DEU", "offerType": 3]), signed: d0 + 33 * day)
    }

    func mixedReport(filter: SegmentFilter? = nil) throws -> [DayCounts] {
        try DailyCountsReport.compute(store: store, from: DateText.format(d0 - 120 * day, "yyyy-MM-dd", zone: utc),
                                      to: DateText.format(d0 + 70 * day, "yyyy-MM-dd", zone: utc), timeZone: utc,
                                      segments: Set(CountSegment.allCases), filter: filter)
    }

    func testEveryDimensionsPartsAddUpToTheWhole() throws {
        try fillMixedStore()
        let whole = try mixedReport()
        try store.metrics.catchUpSegments()
        let additive = Metric.all.filter { !$0.isRate && !$0.isMoney }
        let expected: [SegmentDimension: Set<String>] = [
            .product: ["app.monthly", "app.premium.monthly"], .storefront: ["USA", "FRA", "JPN", "DEU"],
            .offer: ["none", "free_trial", "promotional", "offer_code"], .group: ["21000002"], .plan: ["none"],
            .app: [ScenarioBuilder.demoBundleId],
        ]
        for dimension in SegmentDimension.allCases {
            let values = try store.metrics.segmentValues(dimension)
            XCTAssertTrue(expected[dimension]!.isSubset(of: Set(values)), "\(dimension): \(values)")
            let parts = try values.map { try mixedReport(filter: SegmentFilter(dimension: dimension, value: $0)) }
            for (i, day) in whole.enumerated() {
                for m in additive {
                    XCTAssertEqual(parts.map { $0[i][m] }.reduce(0, +), day[m], "\(dimension) \(m) on \(day.day)")
                }
                for (code, amounts) in day.moneyByCurrency {
                    for m in [Metric.mrr, .revenue] {
                        XCTAssertEqual(parts.map { $0[i].moneyByCurrency[code]?[m] ?? 0 }.reduce(0, +), amounts[m] ?? 0,
                                       "\(dimension) \(m) in \(code) on \(day.day)")
                    }
                }
            }
        }
    }

    func testASubscriptionThatChangesProductMovesBetweenProducts() throws {
        try fillMixedStore()
        let france = try mixedReport(filter: SegmentFilter(dimension: .storefront, value: "FRA"))
        let monthly = try mixedReport(filter: SegmentFilter(dimension: .product, value: "app.monthly"))
        let premium = try mixedReport(filter: SegmentFilter(dimension: .product, value: "app.premium.monthly"))
        let zero = 120
        XCTAssertEqual(france[zero][.newPaidSubscriptions], 1)
        XCTAssertEqual(nonZero(france, .churned), [zero + 60: 1])
        XCTAssertEqual(france[zero + 40][.activePaid], 1)
        XCTAssertEqual(france[zero + 40].moneyByCurrency["EUR"]?[.mrr], 8990)
        // 6000 renewed into the premium product on day 30: active there from then on, churned there.
        XCTAssertEqual(premium[zero + 30][.activePaid] - premium[zero + 29][.activePaid], 1)
        XCTAssertEqual(monthly[zero + 29][.activePaid] - monthly[zero + 30][.activePaid], 1)
        XCTAssertNil(nonZero(monthly, .churned)[zero + 30], "a move to another product is no churn")
        XCTAssertEqual(nonZero(premium, .churned)[zero + 60], 1)
        let offerCode = try mixedReport(filter: SegmentFilter(dimension: .offer, value: "offer_code"))
        XCTAssertEqual(offerCode[zero + 33][.expiredVoluntary], 1)
        XCTAssertEqual(nonZero(france, .downgrades), [zero + 30: 1], "6000's move to premium came at its renewal")
        XCTAssertEqual(france[zero].text(.newPaidSubscriptions), "1")
    }

    /// Intake notes what changed; the by-segment aggregates catch up when asked and equal
    /// ones built from scratch.
    func testBySegmentAggregatesKeptUpEqualOnesBuiltFromScratch() throws {
        try fillMixedStore()
        let usa = SegmentFilter(dimension: .storefront, value: "USA")
        _ = try mixedReport(filter: usa)
        XCTAssertEqual(try store.metrics.pendingSegmentCount(), 0)
        try deliver("REFUND", nil, period("6000", 2, from: 30, to: 60, product: "app.premium.monthly",
                                          extra: ["storefront": "FRA", "price": 8990, "currency": "EUR", "revocationDate": d0 + 45 * day]),
                    signed: d0 + 45 * day)
        try deliver("SUBSCRIBED", "INITIAL_BUY", period("6300", 1, from: 20, to: 50, extra: ["storefront": "USA"]))
        XCTAssertEqual(try store.metrics.pendingSegmentCount(), 2, "intake only notes the two subscriptions")
        try store.metrics.catchUpSegments()
        let dimensionsKept = try everySegmentsReport()
        try store.metrics.forgetSegments()
        try store.metrics.catchUpSegments()
        XCTAssertEqual(dimensionsKept, try everySegmentsReport())
    }

    /// Every value's report of every dimension, each day's every metric as shown.
    func everySegmentsReport() throws -> [[[[String]]]] {
        try SegmentDimension.allCases.map { d in
            try store.metrics.segmentValues(d).map { try mixedReport(filter: SegmentFilter(dimension: d, value: $0)).map { r in Metric.all.map { r.text($0) } } }
        }
    }

    /// The catch-up writes in short parts, committing each: stopped after its first write,
    /// the next catch-up goes on from there, and the reports equal those of one write of
    /// everything (SegmentCatchUpTests holds every stop to a recomputation).
    func testSegmentCatchUpInShortWritesResumesAfterAStopAndEqualsOneWrite() throws {
        try fillMixedStore()
        try store.metrics.forgetSegments()
        let total = try store.metrics.pendingSegmentCount()
        XCTAssertGreaterThan(total, 4)
        XCTAssertEqual(try store.metrics.catchUpSegments(batch: 1 << 20), total)
        let inOneWrite = try everySegmentsReport()

        try store.metrics.forgetSegments()
        struct Stopped: Error {}
        var parts: [SegmentCatchUpProgress] = []
        XCTAssertThrowsError(try store.metrics.catchUpSegments(batch: 2, turnMs: 1e-9) { progress in
            parts.append(progress)
            throw Stopped()
        })
        XCTAssertEqual(parts, [SegmentCatchUpProgress(phase: .claiming, done: 2, total: total)])
        parts = []
        XCTAssertEqual(try store.metrics.catchUpSegments(batch: 3, turnMs: 1e-9) { parts.append($0) }, total)
        XCTAssertEqual(parts.first, SegmentCatchUpProgress(phase: .claiming, done: 3, total: total), "each part its own write")
        XCTAssertGreaterThan(parts.filter { $0.phase == .writing }.count, 2, "the rows in several writes")
        XCTAssertEqual(parts.last?.phase, .releasing)
        XCTAssertEqual(try store.metrics.pendingSegmentCount(), 0)
        XCTAssertEqual(try everySegmentsReport(), inOneWrite)
    }

    func testAShareKeepsItsVariantsThroughTheStoredForm() throws {
        try fillMixedStore()
        let history = try store.subscriptions.history(originalTransactionId: "6100")
        let share = MetricContributions.of(transactions: history.transactions, events: history.events, renewal: history.renewal)
        XCTAssertEqual(share.attributes.map { $0[.offer] }, ["free_trial", "promotional"])
        XCTAssertEqual(MetricContributions(encoded: share.encoded()), share)
        // A share stored before variants (format 2) reads with every entry of an unknown part.
        var v2: [UInt8] = [2, 1, 0, MetricContributions.PeriodKey.start.rawValue, 0, 2]
        v2 += [0]
        let old = MetricContributions(encoded: Data(v2))
        XCTAssertEqual(old.counts.values.first, 1)
        var sums = SegmentSums()
        sums.add(old, sign: 1)
        XCTAssertEqual(sums.rows().map(\.value), [], "start and end are not reported, so not summed by segment")
        var renewal = old
        renewal.counts = [MetricContributions.Key(bucket: 0, key: .renewal, segment: .paid): 1]
        sums.add(renewal, sign: 1)
        XCTAssertEqual(sums.rows().map(\.value), Array(repeating: "unknown", count: SegmentDimension.allCases.count), "one row per dimension")
    }

    func testASegmentIsReadFromDimensionEqualsValue() throws {
        XCTAssertEqual(try SegmentFilter.parse("product=app.monthly").filter, SegmentFilter(dimension: .product, value: "app.monthly"))
        XCTAssertEqual(try SegmentFilter.parse("environment=sandbox").segments, [.sandbox])
        XCTAssertEqual(try SegmentFilter.parse("ownership=FAMILY_SHARED").segments, [.familyShared])
        XCTAssertThrowsError(try SegmentFilter.parse("colour=red")) { XCTAssertTrue("\($0)".contains("no segment dimension colour"), "\($0)") }
        XCTAssertThrowsError(try SegmentFilter.parse("product")) { XCTAssertTrue("\($0)".contains("DIMENSION=VALUE"), "\($0)") }
        XCTAssertThrowsError(try SegmentFilter.parse("environment=staging")) { XCTAssertTrue("\($0)".contains("Production or Sandbox"), "\($0)") }
    }
}
