import Foundation
import XCTest
@testable import SubscriptionCore
import SubdeskTestKit

/// Rows written and read by column: each table's columns are declared once (`StoreColumn`),
/// and what is saved is what is read back, on the first save (the upsert) and on later ones
/// (the UPDATE that names an indexed column only when it changes).
final class StoreColumnsTests: XCTestCase, RunsOnEveryEngine {
    func testTheDeclaredColumnsAreTheTablesColumns() throws {
        let store = try Store.inMemory()
        func check<Column: StoreColumn>(_ table: StoreTable<Column>) throws {
            XCTAssertEqual(Set(table.names).count, table.names.count, "\(table.name): a column twice")
            XCTAssertEqual(Set(table.names), Set(try store.db.columns(of: table.name)), table.name)
        }
        try check(SubscriptionTable.table)
        try check(TransactionTable.table)
        try check(RenewalTable.table)
        try check(QuarantineTable.table)
        try check(IntakeLogTable.table)
        try check(IntakeLogTable.countTable)
        try check(RefundRequestTable.table)
        try check(RenewalExtensionTable.table)
        try check(BackfillTable.table)
        try check(BackfillTable.gapTable)
        try check(OverrideTable.table)
        try check(AuditTable.table)
        try check(NotificationTable.table)
        try check(StoreFactsTable.table)
        try check(ForwardOutboxTable.table)
        try check(ForwardOutboxTable.attemptTable)
        try check(ForwardOutboxTable.owedTable)
        try check(RetentionReportTable.table)
        try check(RetentionContentTable.table)
    }

    func testTheInsertOfANewRowLeavesOutTheGeneratedId() {
        XCTAssertEqual(QuarantineTable.insert.sql, "INSERT INTO quarantine (received_ms, reason, body, body_sha256, source, resolved_ms, resolution, "
                       + "body_bytes, times_seen, last_seen_ms, bundle_id, reason_kind) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)")
    }

    func testTheUpsertIsDerivedFromTheColumns() {
        XCTAssertEqual(StoreTable<SubscriptionTable.Column>.snakeCase("originalTransactionId"), "original_transaction_id")
        let upsert = SubscriptionTable.table.upsert
        XCTAssertTrue(upsert.hasPrefix("INSERT INTO subscriptions (original_transaction_id, subscriber_id, product_id, "), upsert)
        XCTAssertEqual(upsert.filter { $0 == "?" }.count, SubscriptionTable.Column.allCases.count, upsert)
        XCTAssertTrue(upsert.contains(" ON CONFLICT (original_transaction_id) DO UPDATE SET subscriber_id = excluded.subscriber_id, "), upsert)
        XCTAssertFalse(upsert.contains("original_transaction_id = excluded"), upsert)
    }

    /// Every field set, each to a value no other field has, so a value written to or read
    /// from another column shows.
    func state(_ n: Int64) -> SubscriptionState {
        SubscriptionState(
            originalTransactionId: "2000000000000001", productId: "product-\(n)", status: n % 2 == 0 ? .gracePeriod : .billingRetry,
            entitled: n % 2 == 0, expiresDate: 1_000 + n, purchaseDate: 2_000 + n, originalPurchaseDate: 3_000 + n,
            latestTransactionId: "latest-\(n)", autoRenewStatus: n % 2 == 1, autoRenewProductId: "auto-\(n)",
            pendingChange: .init(kind: "kind-\(n)", productId: "pending-\(n)", effectiveDate: 1_000 + n),
            gracePeriodExpiresDate: 4_000 + n, isInBillingRetryPeriod: n % 2 == 0, expirationIntent: 10 + Int(n),
            priceIncreaseStatus: 20 + Int(n), offerType: .unknown(30 + Int(n)), offerIdentifier: "offer-\(n)", offerDiscountType: "discount-\(n)",
            isTrial: n % 2 == 1, ownershipType: OwnershipType(rawValue: "ownership-\(n)"), environment: "environment-\(n)", appAccountToken: "token-\(n)",
            upgradedFrom: ["up-\(n)", "up2-\(n)"], revokedTransactionIds: ["revoked-\(n)"], lastEventDate: 5_000 + n,
            lastNotificationType: "type-\(n)")
    }

    func testASavedSubscriptionIsReadBackAsSaved() throws {
        let store = try Store.inMemory()
        for n: Int64 in [1, 2, 2, 3] {
            var saved = state(n)
            if n == 3 { saved.appAccountToken = nil; saved.pendingChange = nil; saved.expiresDate = nil }
            try store.write {
                try store.subscriptions.save(saved, appAccountToken: saved.appAccountToken, now: 9_000 + n, metrics: MetricContributions())
            }
            let read = try XCTUnwrap(try store.subscriptions.find(originalTransactionId: saved.originalTransactionId))
            XCTAssertEqual(read.state, saved, "save \(n)")
            // A subscription without a token keeps the owner it had.
            XCTAssertEqual(read.subscriber.appAccountToken, saved.appAccountToken ?? "token-2", "save \(n)")
            XCTAssertEqual(try store.db.first("SELECT updated_ms FROM subscriptions") { $0.int64(0) }, 9_000 + n)
        }
        XCTAssertEqual(try store.subscriptions.count(), 1)
    }

    /// A save that leaves the indexed columns as they were names none of them in its UPDATE
    /// (SQLite keeps up every index over a column the SET names, changed or not).
    func testASaveNamesOnlyTheIndexedColumnsItChanges() throws {
        let store = try Store.inMemory()
        var saved = state(1)
        func save() throws {
            try store.write { try store.subscriptions.save(saved, appAccountToken: saved.appAccountToken, now: 9_000, metrics: MetricContributions()) }
        }
        try save()
        saved.offerIdentifier = "another offer"
        try save()
        XCTAssertEqual(Array(store.subscriptionMemory.updates.keys), [0], "nothing indexed changed")
        saved.expiresDate = 7_777
        saved.pendingChange?.effectiveDate = 7_777
        try save()
        let expires = try XCTUnwrap(SubscriptionTable.indexed.firstIndex(of: .expiresMs))
        XCTAssertEqual(Set(store.subscriptionMemory.updates.keys), [0, 1 << expires], "the expiry alone")
        XCTAssertEqual(try store.subscriptions.find(originalTransactionId: saved.originalTransactionId)?.state, saved)
    }
}
