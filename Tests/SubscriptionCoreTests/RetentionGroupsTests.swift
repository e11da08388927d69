import Foundation
import XCTest
@testable import SubscriptionCore
import SubdeskTestKit

/// The products' subscription groups the retention rules are checked against: each product's
/// group is the one of its latest stored transaction that names a group, on either engine,
/// against a plain reading of every transaction in purchase order; read by seeks.
final class RetentionGroupsTests: XCTestCase, RunsOnEveryEngine {
    func transaction(_ id: Int, product: String, group: String?, purchased: Millis) -> TransactionRecord {
        TransactionRecord(transactionId: String(5_000_000 + id), originalTransactionId: String(5_000_000 + id / 3 * 3), productId: product,
                          subscriptionGroupIdentifier: group, purchaseDate: purchased, originalPurchaseDate: purchased,
                          expiresDate: purchased + 86_400_000, offerType: nil, offerDiscountType: nil,
                          ownershipType: .purchased, transactionReason: .purchase, price: 990, currency: "USD",
                          environment: .production, appAccountToken: nil, signedDate: purchased,
                          bundleId: "com.example.groups", type: "Auto-Renewable Subscription")
    }

    func testEachProductTakesTheGroupOfItsLatestTransaction() throws {
        let store = try Store.inMemory()
        let t0: Millis = 1_700_000_000_000, day: Millis = 86_400_000
        // moved: g1, then g2 later, then g1 again earlier than g2's last; kept: one group;
        // none: no group at all; back: its latest group stored first.
        let records = [
            transaction(0, product: "moved", group: "g1", purchased: t0),
            transaction(1, product: "moved", group: "g2", purchased: t0 + 10 * day),
            transaction(2, product: "moved", group: "g1", purchased: t0 + 5 * day),
            transaction(3, product: "kept", group: "g7", purchased: t0 + 2 * day),
            transaction(4, product: "kept", group: "g7", purchased: t0 + 20 * day),
            transaction(6, product: "none", group: nil, purchased: t0 + 3 * day),
            transaction(7, product: "back", group: "g3", purchased: t0 + 30 * day),
            transaction(8, product: "back", group: "g4", purchased: t0 + 1 * day),
        ]
        try store.write { for r in records { try store.transactions.put(r) } }

        // The reference: every transaction naming a group, oldest first, the later overwriting.
        var expected: [String: String] = [:]
        for r in records.filter({ $0.subscriptionGroupIdentifier != nil }).sorted(by: { $0.purchaseDate < $1.purchaseDate }) {
            expected[r.productId] = r.subscriptionGroupIdentifier
        }
        XCTAssertEqual(expected, ["moved": "g2", "kept": "g7", "back": "g3"])
        XCTAssertEqual(try store.transactions.subscriptionGroups(), expected)
    }

    /// Two groups at one product's latest millisecond: the larger id by its characters'
    /// order wins on both engines (not by PostgreSQL's collation, which puts "ga" before "Gb").
    func testATieAtTheLatestPurchaseGoesToTheLargerGroupIdOnEitherEngine() throws {
        let store = try Store.inMemory()
        let t0: Millis = 1_700_000_000_000
        try store.write {
            for r in [transaction(0, product: "tied", group: "Gb", purchased: t0), transaction(1, product: "tied", group: "ga", purchased: t0),
                      transaction(2, product: "tied", group: "zz", purchased: t0 - 1)] {
                try store.transactions.put(r)
            }
        }
        XCTAssertEqual(try store.transactions.subscriptionGroups(), ["tied": "ga"])
    }

    /// SQLite's plan: each product found and read by seeks into migration 42's index, no
    /// transaction read beside them (PostgreSQL's planner picks by its statistics, not asked here).
    func testTheGroupsAreReadBySeeksIntoTheProductGroupIndex() throws {
        let store = try Store(path: ":memory:")
        var plan: [String] = []
        try store.db.query("EXPLAIN QUERY PLAN " + TransactionTable.latestGroupsSQL) { plan.append($0.string(3)) }
        let reads = plan.filter { $0.hasPrefix("SCAN") || $0.hasPrefix("SEARCH") }
        XCTAssertFalse(reads.contains { $0.contains("SCAN t") || $0.contains("SCAN l") || $0.contains("SCAN transactions") }, "\(plan)")
        XCTAssertEqual(reads.filter { $0.contains("transactions_product_group") }.count, 4, "\(plan)")
    }
}
