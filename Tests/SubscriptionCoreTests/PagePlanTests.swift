import XCTest
@testable import SubscriptionCore
import SubdeskScenarios
import SubdeskTestKit

/// How PostgreSQL plans the first page of the list. Runs when SUBDESK_TEST_POSTGRES names a
/// server (`scripts/pg-cluster`).
final class PagePlanTests: XCTestCase, RunsOnEveryEngine {
    /// The store's statements are prepared once and, after a few runs, PostgreSQL may keep a
    /// plan made without their values (a generic plan). The page's statement has its limit
    /// written in, so that plan still reads the list's index up to the page, for every app
    /// and for one; with the limit a parameter it read the whole list and sorted it.
    func testFirstPagesAreIndexReadsUnderAGenericPlan() throws {
        let base = try TestEngine.requirePostgres()
        let store = try Store(path: Store.freshPostgresLocation(base))
        let apps = ["com.example.fitness", "com.example.notes", "com.example.photos"]
        _ = try StoreGenerator(subscribers: 3_000, bundleIds: apps).generate(into: store)
        // A plan without the limit takes the page for a tenth of the list. In 3,000 rows an
        // index reads that tenth cheaper than a scan and sort, where at 1M it does not; a
        // dearer random read weighs the small list as a large one.
        try store.db.execute("ANALYZE; SET plan_cache_mode = force_generic_plan; SET random_page_cost = 20")
        let scopes: [AppScope?] = [nil, AppScope(bundleId: apps[0], includesUnknown: false)]
        for (n, scope) in scopes.enumerated() {
            let q = SubscriptionQuery(sort: .expires, app: scope)
            let bounds = SubscriptionTable.pageBounds(q, after: nil, backward: false, dialect: .postgres)
            let read = SubscriptionTable.pageRead(bounds.conditions, order: bounds.order, limit: 50, dialect: .postgres)
            let values = bounds.values + read.values
            // The statement as the store sends it: PostgreSQL's spelling, numbered parameters.
            let sent = PostgresConnection.translate(read.sql)
            XCTAssertEqual(sent.parameters, values.count)
            try store.db.execute("PREPARE page_\(n) AS \(sent.text)")
            let arguments = values.map { v in (v as? String).map { "'\($0)'" } ?? "\(v!)" }
            let execute = arguments.isEmpty ? "page_\(n)" : "page_\(n)(\(arguments.joined(separator: ", ")))"
            let plan = try store.db.rows("EXPLAIN EXECUTE \(execute)", []) { $0.string(0) }.joined(separator: "\n")
            XCTAssertTrue(plan.contains("Index Scan"), plan)
            XCTAssertFalse(plan.contains("Sort"), plan)
            XCTAssertFalse(plan.contains("Gather"), plan)
        }
    }
}
