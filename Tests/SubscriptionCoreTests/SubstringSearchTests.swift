import Foundation
import XCTest
@testable import SubscriptionCore
import SubdeskScenarios
import SubdeskTestKit

/// The subscribers filter and `subdesk search` find text anywhere in a subscription's ids,
/// product, user id and token, whatever its ASCII case, through either of the two plans
/// (trigram index, or reading in order), and the index follows every change.
final class SubstringSearchTests: XCTestCase, RunsOnEveryEngine {
    /// Every row of the list, in list order.
    func filtered(_ store: Store, _ text: String, sparse: Bool? = nil) throws -> [String] {
        let needle = SubscriptionTable.asciiLowercased(text)
        store.subscriptionMemory.searchPlans[needle] = nil
        if sparse == false { store.subscriptionMemory.searchPlans[needle] = .scan }
        if sparse == true { store.subscriptionMemory.searchPlans[needle] = .glob(SubscriptionTable.globContaining(needle)) }
        var q = SubscriptionQuery()
        q.text = text
        return try store.subscriptions.page(q, limit: 100_000).map(\.state.originalTransactionId)
    }

    /// What a person would count as a match, read off every row.
    func expected(_ rows: [SubscriptionRow], _ text: String) -> [String] {
        let needle = text.lowercased()
        return rows.filter { row in
            [row.state.originalTransactionId, row.state.productId,
             row.subscriber.userId ?? "", row.subscriber.appAccountToken ?? ""].contains { $0.lowercased().contains(needle) }
        }.map(\.state.originalTransactionId)
    }

    func testFilterMatchesAnywhereOnEitherPlanAsABruteForceReadingDoes() throws {
        let store = try Store.inMemory()
        _ = try StoreGenerator(subscribers: 1_500).generate(into: store)
        let all = try store.subscriptions.page(SubscriptionQuery(), limit: 100_000)
        XCTAssertEqual(all.count, 1_500)
        var rng = SystemRandomNumberGenerator()
        var needles = ["premium", "PREMIUM", "Monthly", "yearly", "1", "00", "app.", "zzz", "no such text", "q", "qz", "-", "r-1", "É"]
        for _ in 0..<25 {
            let row = all.randomElement(using: &rng)!
            let field = [row.state.originalTransactionId, row.state.productId, row.subscriber.userId ?? "x",
                         row.subscriber.appAccountToken ?? "y"].randomElement(using: &rng)!
            let length = Int.random(in: 1...min(10, field.count), using: &rng)
            let start = Int.random(in: 0...(field.count - length), using: &rng)
            let piece = String(Array(field)[start..<(start + length)])
            needles.append(Bool.random(using: &rng) ? piece.uppercased() : piece)
        }
        for needle in needles {
            let truth = expected(all, needle)
            XCTAssertEqual(try filtered(store, needle), truth, "plan the store chose, \(needle)")
            XCTAssertEqual(try filtered(store, needle, sparse: false), truth, "read in order, \(needle)")
            if needle.count >= 3 {
                XCTAssertEqual(try filtered(store, needle, sparse: true), truth, "trigram index, \(needle)")
            }
        }
        XCTAssertFalse(expected(all, "premium").isEmpty)
    }

    func testABoundedReadFindsExactlyTheMatchesInTheRowsItReadAndSaysWhenItStopped() throws {
        let store = try Store.inMemory()
        _ = try StoreGenerator(subscribers: 1_500).generate(into: store)
        for sort in SubscriptionQuery.Sort.allCases {
            for descending in [false, true] {
                let list = try store.subscriptions.page(SubscriptionQuery(sort: sort, descending: descending), limit: 100_000)
                for needle in ["premium", "yearly", "app"] {
                    store.subscriptionMemory.searchPlans[needle] = .scan
                    var q = SubscriptionQuery(text: needle, sort: sort, descending: descending)
                    q.scanLimit = 200
                    let read = try store.subscriptions.pageWithin(q, limit: 50)
                    // What a person reading the first 200 rows of the list would have found, up to a page.
                    let expected = Array(expected(Array(list.prefix(200)), needle).prefix(50))
                    XCTAssertEqual(read.rows.map(\.state.originalTransactionId), expected, "\(needle) \(sort) \(descending)")
                    XCTAssertEqual(read.complete, expected.count == 50, "short only because of the bound: \(needle)")
                    // Unbounded, the same query reads on until the page is full.
                    q.scanLimit = nil
                    XCTAssertEqual(try store.subscriptions.pageWithin(q, limit: 50).rows.map(\.state.originalTransactionId),
                                   Array(self.expected(list, needle).prefix(50)))
                }
            }
        }
    }

    func testSearchFindsTailsProductsUsersAndTokensAndFollowsChanges() throws {
        let store = try Store.inMemory()
        let intake = TestKit.intake(store)
        let token = "6F1C2D3E-4A5B-4C6D-8E9F-0A1B2C3D4E5F"
        guard case .stored = try intake.ingest(TestKit.body(
            type: "SUBSCRIBED", transaction: TestKit.transaction(id: "2000000912345678", original: "2000000912345678",
                                                                 product: "com.example.Premium.Monthly",
                                                                 extra: ["appAccountToken": token]),
            renewal: TestKit.renewal(original: "2000000912345678", product: "com.example.Premium.Monthly"))) else { return XCTFail() }
        func search(_ text: String) throws -> [String] { try store.subscriptions.search(text).map(\.state.originalTransactionId) }
        func pending() throws -> Int { try store.db.first("SELECT count(*) FROM search_pending") { $0.int(0) } ?? -1 }
        // PostgreSQL has no search index to keep up: the index's bookkeeping is SQLite's alone.
        let indexed = store.dialect == .sqlite
        if indexed { XCTAssertEqual(try pending(), 1, "intake only notes the new subscription for the index") }
        XCTAssertEqual(try search("premium"), ["2000000912345678"], "a product word in any case")
        if indexed { XCTAssertEqual(try pending(), 0, "the first search brought the index up to date") }
        XCTAssertEqual(try search("345678"), ["2000000912345678"], "an id's tail")
        XCTAssertEqual(try search("4a5b-4c6d"), ["2000000912345678"], "the middle of a token, lower case")
        XCTAssertEqual(try search("yearly"), [])
        XCTAssertEqual(try search("alice"), [])

        try store.subscribers.link("user-Alice-7", originalTransactionId: "2000000912345678")
        XCTAssertEqual(try search("alice"), ["2000000912345678"], "a user id linked after intake is found")
        XCTAssertEqual(try filtered(store, "ALICE-7"), ["2000000912345678"])

        // A renewal names a new latest transaction: search finds it by its start (a renewal
        // leaves the substring index alone), and the first transaction's id still finds it.
        guard case .stored = try intake.ingest(TestKit.body(
            type: "DID_RENEW", signed: TestKit.anchor,
            transaction: TestKit.transaction(id: "2000000987654321", original: "2000000912345678",
                                             product: "com.example.Premium.Monthly", purchase: TestKit.anchor,
                                             expires: TestKit.anchor + 30 * TestKit.day, signed: TestKit.anchor,
                                             extra: ["appAccountToken": token]),
            renewal: TestKit.renewal(original: "2000000912345678", product: "com.example.Premium.Monthly",
                                     signed: TestKit.anchor))) else { return XCTFail() }
        if indexed { XCTAssertEqual(try pending(), 0, "a renewal changes nothing searched") }
        XCTAssertEqual(try search("2000000987654321"), ["2000000912345678"], "search finds any transaction id whole")
        XCTAssertEqual(try search("20000009876"), ["2000000912345678"], "or by its start")
        // A field shorter than a trigram is found by one or two of its characters.
        try store.subscribers.link("Zo", originalTransactionId: "2000000912345678")
        XCTAssertEqual(try search("zo"), ["2000000912345678"])
        XCTAssertEqual(try filtered(store, "Z"), ["2000000912345678"])
        XCTAssertEqual(try filtered(store, "alice"), [], "the old user id is no longer found")
        XCTAssertEqual(try filtered(store, "87654321"), [], "the list's filter matches original transaction ids, not renewals'")
        XCTAssertEqual(try search("2000000912345678"), ["2000000912345678"])
    }

    func testAStoreFromBeforeTheIndexGetsItFilledWhenOpened() throws {
        let path = NSTemporaryDirectory() + "search-migration-\(UUID().uuidString).db"
        defer { try? FileManager.default.removeItem(atPath: path) }
        do {
            let store = try Store(path: path)
            _ = try StoreGenerator(subscribers: 200).generate(into: store)
        }
        // Undo migration 9 as a store written before it would be, then open it again.
        try SQLiteConnection(path: path).execute("""
            DROP TABLE subscription_search_terms; DROP TABLE subscription_search; DROP TABLE search_pending; DROP TRIGGER IF EXISTS subscription_search_insert;
            DROP TRIGGER IF EXISTS subscription_search_update; DROP TRIGGER IF EXISTS subscription_search_delete;
            DROP TRIGGER IF EXISTS subscriber_search_update;
            DROP TABLE delivery_gaps; DROP TABLE backfill_runs; ALTER TABLE intake_log DROP COLUMN source;
            DROP TABLE renewal_extensions;
            DROP TRIGGER refund_request_open; DROP TRIGGER refund_request_close; DROP TABLE refund_requests;
            DROP TABLE metrics_pending; DROP TABLE metric_segments; DROP TABLE metric_segments_pending; DROP TABLE metric_segments_catchup;
            ALTER TABLE verified_chains DROP COLUMN seal; DROP INDEX notifications_rescind; ALTER TABLE notifications DROP COLUMN grace_expires_ms;
            DROP TABLE intake_counts; DROP INDEX audit_log_action;
            ALTER TABLE quarantine DROP COLUMN reason_kind; ALTER TABLE intake_log DROP COLUMN reason_kind;
            \(TestKit.undoAppColumns(tables: ["subscriptions", "notifications", "quarantine"]))
            \(TestKit.undoLaterTables)
            PRAGMA user_version = 8;
            """)
        let store = try Store(path: path)
        let all = try store.subscriptions.page(SubscriptionQuery(), limit: 10_000)
        XCTAssertEqual(try filtered(store, "premium", sparse: true), expected(all, "premium"))
        XCTAssertFalse(expected(all, "premium").isEmpty)
    }
}
