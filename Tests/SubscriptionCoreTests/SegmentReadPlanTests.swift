import XCTest
@testable import SubscriptionCore
import SubdeskTestKit

/// How PostgreSQL plans the read of one app's by-segment aggregates. Runs when
/// SUBDESK_TEST_POSTGRES names a server (`scripts/pg-cluster`).
final class SegmentReadPlanTests: XCTestCase, RunsOnEveryEngine {
    /// The store's statements are prepared once and, after a few runs, PostgreSQL plans them
    /// without their values (a generic plan). One app's year of counts read from the index
    /// of apps' rows alone (migration 29) only if that plan can prove the index's condition,
    /// i.e. if the statement names the dimension itself.
    func testOneAppsBucketsAreReadFromTheAppsIndexUnderAGenericPlan() throws {
        let base = try TestEngine.requirePostgres()
        let store = try Store(path: Store.freshPostgresLocation(base))
        let read = MetricAggregates.segmentBucketsRead(SegmentFilter(dimension: .app, value: "com.example.fitness"),
                                            key: "p:churn", segment: .paid, from: 0, to: 86_400_000)
        var count = 0
        let numbered = read.sql.map { c -> String in
            guard c == "?" else { return String(c) }
            count += 1
            return "$\(count)"
        }.joined()
        XCTAssertEqual(count, read.values.count)
        // An empty table reads cheapest whole: the plan is asked for among the indexes.
        try store.db.execute("""
            SET plan_cache_mode = force_generic_plan; SET enable_seqscan = off; SET enable_bitmapscan = off;
            PREPARE one_part AS \(numbered)
            """)
        let nulls = Array(repeating: "NULL", count: count).joined(separator: ", ")
        let plan = try store.db.rows("EXPLAIN EXECUTE one_part(\(nulls))", []) { $0.string(0) }.joined(separator: "\n")
        XCTAssertTrue(plan.contains("using metric_segments_app"), plan)
    }
}
