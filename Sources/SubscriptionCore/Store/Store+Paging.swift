/// Which subscriptions a list shows, and in what order.
public struct SubscriptionQuery: Equatable, Sendable {
    public enum Sort: String, CaseIterable, Sendable {
        case expires, lastEvent
        var column: String { self == .expires ? "IFNULL(s.expires_ms, 0)" : "IFNULL(s.last_event_ms, 0)" }
    }

    public var statuses: Set<SubscriptionStatus>
    /// A prefix of an originalTransactionId, latest transactionId, product, user id or appAccountToken.
    public var text: String
    public var sort: Sort
    public var descending: Bool

    public init(statuses: Set<SubscriptionStatus> = [], text: String = "", sort: Sort = .expires, descending: Bool = false) {
        self.statuses = statuses
        self.text = text
        self.sort = sort
        self.descending = descending
    }
}

/// A position in a sorted list: the sort key and id of a row, exclusive.
public struct PageCursor: Equatable, Sendable {
    public var key: Int64
    public var originalTransactionId: String
}

extension Store {
    /// Up to `limit` rows after (or before) `cursor`, in query order. Keyset paging: the
    /// cost of any page is that of the first, however deep it is.
    public func page(_ q: SubscriptionQuery, after cursor: PageCursor? = nil, backward: Bool = false,
                     limit: Int) throws -> [SubscriptionRow] {
        var conditions: [String] = []
        var values: [SQLBindable?] = []
        if !q.statuses.isEmpty {
            conditions.append("s.status IN (\(q.statuses.map { String($0.rawValue) }.sorted().joined(separator: ",")))")
        }
        if !q.text.isEmpty {
            let p = Store.likeLiteral(q.text) + "%"
            conditions.append("""
                (s.original_transaction_id LIKE ? ESCAPE '\\' OR s.latest_transaction_id LIKE ? ESCAPE '\\'
                 OR s.product_id LIKE ? ESCAPE '\\' OR b.user_id LIKE ? ESCAPE '\\' OR b.app_account_token LIKE ? ESCAPE '\\')
                """)
            values += [p, p, p, p, p]
        }
        // Reading forward in a descending list is reading backward in key order, and so on.
        let ascendingScan = q.descending == backward
        if let cursor {
            conditions.append("(\(q.sort.column), s.original_transaction_id) \(ascendingScan ? ">" : "<") (?, ?)")
            values += [cursor.key, cursor.originalTransactionId]
        }
        let order = ascendingScan ? "ASC" : "DESC"
        let sql = """
            SELECT \(Store.stateColumns) FROM \(Store.rowSource)
            \(conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND "))
            ORDER BY \(q.sort.column) \(order), s.original_transaction_id \(order) LIMIT ?
            """
        values.append(limit)
        let rows = try db.rows(sql, values, Store.row)
        return backward ? rows.reversed() : rows
    }

    /// The cursor that stands for `row` in `query`'s order.
    public static func cursor(for row: SubscriptionRow, in query: SubscriptionQuery) -> PageCursor {
        let key = query.sort == .expires ? (row.state.expiresDate ?? 0) : (row.state.lastEventDate ?? 0)
        return PageCursor(key: key, originalTransactionId: row.state.originalTransactionId)
    }

    /// How many subscriptions have each status.
    public func statusCounts() throws -> [SubscriptionStatus: Int] {
        var result: [SubscriptionStatus: Int] = [:]
        try db.query("SELECT status, count FROM status_counts WHERE count <> 0") { r in
            if let s = SubscriptionStatus(rawValue: r.int(0)) { result[s] = r.int(1) }
        }
        return result
    }
}
