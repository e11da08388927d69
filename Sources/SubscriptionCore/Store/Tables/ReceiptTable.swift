import Foundation

/// Each subscription's latest App Store receipt (V1: the base64 `latest_receipt` Apple
/// sends), kept for revalidation by receipt (`receipts`): the only code that names the
/// table's columns (`store.receipts`).
public struct ReceiptTable {
    let db: any SQLConnection

    /// The columns, in the table's order.
    enum Column: Int, StoreColumn {
        case originalTransactionId, latestReceipt, updatedMs

        func value(in r: (receipt: String, originalTransactionId: String, at: Millis)) -> SQLBindable? {
            switch self {
            case .originalTransactionId: return r.originalTransactionId
            case .latestReceipt: return r.receipt
            case .updatedMs: return r.at
            }
        }
    }

    static let table = StoreTable<Column>("receipts", key: .originalTransactionId)

    /// Keeps `receipt` as the subscription's latest, in place of any kept.
    public func put(_ receipt: String, originalTransactionId: String, at: Millis) throws {
        try db.run(Self.table.upsert, Self.table.values((receipt, originalTransactionId, at)))
    }

    /// The subscription's latest receipt, if one is kept.
    public func find(originalTransactionId: String) throws -> String? {
        try db.text("SELECT latest_receipt FROM receipts WHERE original_transaction_id = ?", [originalTransactionId])
    }
}

extension Store {
    /// Each subscription's latest App Store receipt.
    public var receipts: ReceiptTable { ReceiptTable(db: db) }
}
