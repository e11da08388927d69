import Foundation

/// The people who own subscriptions (`subscribers`): an app account token names one, and
/// an application user id may be linked to one. The only code that names the table's
/// columns (`store.subscribers`); a subscription names its owner (`SubscriptionTable`).
public struct SubscriberTable {
    let db: any SQLConnection
    /// Where its writes open.
    let transactions: any WriteTransactions

    /// The columns, in the table's order.
    enum Column: Int, StoreColumn {
        case id, userId, appAccountToken, createdMs

        func value(in s: (subscriber: Subscriber, created: Millis)) -> SQLBindable? {
            switch self {
            case .id: return nil
            case .userId: return s.subscriber.userId
            case .appAccountToken: return s.subscriber.appAccountToken
            case .createdMs: return s.created
            }
        }
    }

    static let table = StoreTable<Column>("subscribers", key: .id)
    static let insert = table.insert(excluding: [.id])
    /// A subscriber as a read gives it.
    static let columns: [Column] = [.id, .userId, .appAccountToken]
    static let whole = table.selection(columns)
    /// A subscription's owner, from `b`, after the columns of `start` others (`SubscriptionTable.row`).
    static func owner(from start: Int32) -> StoreSelection<Column> { table.selection(columns, prefix: "b.", from: start) }

    /// A subscription's owner read alone.
    static let ownerAlone = owner(from: 0)

    static func subscriber(_ r: ColumnRow<Column>) -> Subscriber {
        Subscriber(id: r.int64(.id), userId: r.optionalString(.userId), appAccountToken: r.optionalString(.appAccountToken))
    }

    public func find(id: Int64) throws -> Subscriber? {
        try db.first("SELECT \(Self.whole.list) FROM subscribers WHERE id = ?", [id]) { Self.subscriber(Self.whole.row($0)) }
    }

    /// The subscriber a subscription owned by `current` belongs to, creating or re-linking as
    /// the token says: a token names one subscriber; a subscription without one keeps its
    /// owner or gets a new one.
    func resolve(current: Int64?, appAccountToken token: String?, now: Millis) throws -> Int64 {
        if let token {
            if let owner = try db.integer("SELECT id FROM subscribers WHERE app_account_token = ?", [token]) {
                return owner
            }
            if let current, let s = try find(id: current), s.appAccountToken == nil {
                try db.run("UPDATE subscribers SET app_account_token = ? WHERE id = ?", [token, current])
                return current
            }
            return try insert(userId: nil, appAccountToken: token, now: now)
        }
        if let current { return current }
        return try insert(userId: nil, appAccountToken: nil, now: now)
    }

    /// Adds a subscriber as given (intake; generated stores); returns its id.
    public func insert(userId: String?, appAccountToken: String?, now: Millis) throws -> Int64 {
        try db.run(Self.insert.sql, Self.insert.values((Subscriber(id: 0, userId: userId, appAccountToken: appAccountToken), now)))
        return try db.lastInsertRowID()
    }

    /// Links an application user id to the subscriber that owns `originalTransactionId`.
    public func link(_ userId: String, originalTransactionId otid: String) throws {
        try transactions.write {
            guard let owner = try db.integer("SELECT subscriber_id FROM subscriptions WHERE original_transaction_id = ?", [otid]) else {
                throw StoreError(operation: "link user \(userId)", message: "no subscription with originalTransactionId \(otid)", code: 0)
            }
            if let other = try db.integer("SELECT id FROM subscribers WHERE user_id = ?", [userId]), other != owner {
                // The user already has a subscriber: move this subscription to it.
                try db.run("UPDATE subscriptions SET subscriber_id = ? WHERE subscriber_id = ?", [other, owner])
                try dropIfEmpty(owner)
                return
            }
            try db.run("UPDATE subscribers SET user_id = ? WHERE id = ?", [userId, owner])
        }
    }

    /// Gives the subscriber `id` an app account token (a UUID), unless another subscriber
    /// already has it.
    public func setAppAccountToken(_ token: String, subscriberId id: Int64) throws {
        try transactions.write {
            if let other = try db.integer("SELECT id FROM subscribers WHERE app_account_token = ?", [token]), other != id {
                throw StoreError(operation: "set token", message: "app account token \(token) belongs to subscriber #\(other)", code: 0)
            }
            try db.run("UPDATE subscribers SET app_account_token = ? WHERE id = ?", [token, id])
        }
    }

    /// A subscriber that owns no subscription and carries no user id is no one (a token
    /// whose subscription moved to the owner a newer version names, say): it goes, so
    /// look-ups and search do not find an owner of nothing. The foreign key keeps any
    /// subscriber that still owns something.
    func dropIfEmpty(_ id: Int64) throws {
        try db.run(db.dialect.dropEmptySubscriber, [id])
    }

    /// Finds the subscriber an id names: a user id, appAccountToken, originalTransactionId,
    /// transactionId, or the appTransactionId (the app download) their purchases carry.
    public func lookup(_ id: String) throws -> Subscriber? {
        if let s = try db.first("SELECT \(Self.whole.list) FROM subscribers WHERE user_id = ? OR app_account_token = ?",
                                [id, id], { Self.subscriber(Self.whole.row($0)) }) {
            return s
        }
        let transactions = TransactionTable(db: db)
        let otid = try db.text("SELECT original_transaction_id FROM subscriptions WHERE original_transaction_id = ?", [id])
            ?? db.text("SELECT original_transaction_id FROM transactions WHERE transaction_id = ?", [id])
            ?? transactions.originalTransactionId(appTransactionId: id)
        guard let otid else { return nil }
        return try db.first("""
            SELECT \(Self.ownerAlone.list) FROM subscriptions s JOIN subscribers b ON b.id = s.subscriber_id
            WHERE s.original_transaction_id = ?
            """, [otid]) { Self.subscriber(Self.ownerAlone.row($0)) }
    }
}

extension Store {
    /// The people who own subscriptions.
    public var subscribers: SubscriberTable { SubscriberTable(db: db, transactions: self) }
}
