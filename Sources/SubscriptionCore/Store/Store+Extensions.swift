/// A renewal-date extension asked of Apple, as the store keeps it.
public struct RenewalExtension: Equatable, Sendable {
    public var id: Int64
    public var requestIdentifier: String
    /// nil for an extension of every active subscriber of `productId`.
    public var originalTransactionId: String?
    public var productId: String?
    public var storefronts: [String]
    public var days: Int
    public var reasonCode: Int
    public var reason: String
    public var operatorName: String
    public var requested: Millis
    /// `extended`, `refused: ...`, `pending` or `complete`.
    public var outcome: String
    public var effective: Millis?
    public var succeeded: Int?
    public var failed: Int?
    public var completed: Millis?
}

extension Store {
    static let extensionColumns = """
        id, request_identifier, original_transaction_id, product_id, storefronts, days, reason_code, reason, operator,
        requested_ms, outcome, effective_ms, succeeded, failed, completed_ms
        """

    static func renewalExtension(_ r: SQLRow) -> RenewalExtension {
        RenewalExtension(id: r.int64(0), requestIdentifier: r.string(1), originalTransactionId: r.optionalString(2),
                         productId: r.optionalString(3),
                         storefronts: r.optionalString(4).map { $0.split(separator: ",").map(String.init) } ?? [],
                         days: r.int(5), reasonCode: r.int(6), reason: r.string(7), operatorName: r.string(8), requested: r.int64(9),
                         outcome: r.string(10), effective: r.optionalInt64(11), succeeded: r.optionalInt(12), failed: r.optionalInt(13),
                         completed: r.optionalInt64(14))
    }

    @discardableResult
    public func recordExtension(_ e: RenewalExtension) throws -> Int64 {
        try db.run("""
            INSERT INTO renewal_extensions (request_identifier, original_transaction_id, product_id, storefronts, days, reason_code,
                reason, operator, requested_ms, outcome, effective_ms, succeeded, failed, completed_ms)
            VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)
            """, [e.requestIdentifier, e.originalTransactionId, e.productId, e.storefronts.isEmpty ? nil : e.storefronts.joined(separator: ","),
                  e.days, e.reasonCode, e.reason, e.operatorName, e.requested, e.outcome, e.effective, e.succeeded, e.failed, e.completed])
        return try db.lastInsertRowID()
    }

    public func updateExtension(requestIdentifier: String, outcome: String, succeeded: Int?, failed: Int?, completed: Millis?) throws {
        try write {
            try db.run("""
                UPDATE renewal_extensions SET outcome = ?, succeeded = ?, failed = ?, completed_ms = ? WHERE request_identifier = ?
                """, [outcome, succeeded, failed, completed, requestIdentifier])
        }
    }

    /// Extensions of one subscription (or, with nil, every mass extension), newest first.
    public func extensions(originalTransactionId: String?, limit: Int = 100) throws -> [RenewalExtension] {
        if let otid = originalTransactionId {
            return try db.rows("SELECT \(Store.extensionColumns) FROM renewal_extensions WHERE original_transaction_id = ? ORDER BY requested_ms DESC LIMIT ?",
                               [otid, limit], Store.renewalExtension)
        }
        return try db.rows("SELECT \(Store.extensionColumns) FROM renewal_extensions WHERE original_transaction_id IS NULL ORDER BY requested_ms DESC LIMIT ?",
                           [limit], Store.renewalExtension)
    }

    /// The apps (the bundle id their subscriptions were signed for; nil for a record that
    /// names none) and environments whose subscriptions in this store are of `productId`:
    /// where a mass extension of the product is asked.
    public func appsSelling(productId: String) throws -> [(bundleId: String?, environment: String)] {
        try db.rows("SELECT DISTINCT bundle_id, environment FROM subscriptions WHERE product_id = ?", [productId]) {
            (bundleId: $0.optionalString(0), environment: $0.string(1))
        }.sorted { ($0.bundleId ?? "", $0.environment) < ($1.bundleId ?? "", $1.environment) }
    }

    public func renewalExtension(requestIdentifier: String) throws -> RenewalExtension? {
        try db.first("SELECT \(Store.extensionColumns) FROM renewal_extensions WHERE request_identifier = ?", [requestIdentifier],
                     Store.renewalExtension)
    }
}
