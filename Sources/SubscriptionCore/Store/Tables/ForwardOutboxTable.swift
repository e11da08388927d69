import Foundation

/// The relay's outbox: what intake owes the `[forward]` targets (`forward_owed`), one row per
/// delivery and target (`forward_outbox`) and each attempt (`forward_attempts`). The only code
/// that names these tables' columns (`store.outbox`; its status and readings in
/// `ForwardOutboxTable+Status.swift`). The rules every statement here keeps:
/// - a notification's deliveries are owed in the write that stores it, in one row of
///   `forward_owed` naming its targets (no index but its key: intake's write stays short); a
///   deliverer spreads owed rows into one outbox row per target and removes them, in its own
///   write, in the order they were owed. Until then a delivery owed counts as pending for
///   each target it names (`forward status`, the metrics, `show`);
/// - a delivery is owed once per target (`UNIQUE (target, notification_uuid)`: a
///   redelivery of the body owes nothing more);
/// - for one target, a subscription's pending deliveries go one at a time, in the order
///   they were owed (`id`): one is due only when no earlier one of the same subscription
///   and target is still pending. A dead one holds nothing back;
/// - a deliverer claims what it sends, until `claim_until_ms`: a claim outlives no
///   deliverer (one killed mid-send leaves it to expire, and the delivery is sent again,
///   with the same id), and two deliverers never send one delivery at once (on PostgreSQL
///   the claim skips rows another deliverer is claiming: `SKIP LOCKED`).
public struct ForwardOutboxTable {
    let db: any SQLConnection
    /// Where its writes open.
    let transactions: any WriteTransactions

    enum Column: Int, StoreColumn {
        typealias Record = ForwardDelivery
        case id, target, notificationUuid, originalTransactionId, bundleId, environment, type, owedMs, giveUpMs, state, attempts,
             nextMs, claimUntilMs, claimedBy, deliveredMs, lastAttemptMs, lastStatus, lastError, roundStart

        func value(in d: ForwardDelivery) -> SQLBindable? {
            switch self {
            case .id: return d.id
            case .target: return d.target
            case .notificationUuid: return d.notificationUUID
            case .originalTransactionId: return d.originalTransactionId
            case .bundleId: return d.bundleId
            case .environment: return d.environment
            case .type: return d.type
            case .owedMs: return d.owed
            case .giveUpMs: return d.giveUp
            case .state: return d.state.rawValue
            case .attempts: return d.attempts
            case .nextMs: return d.next
            case .claimUntilMs, .claimedBy: return nil
            case .deliveredMs: return d.delivered
            case .lastAttemptMs: return d.lastAttempt
            case .lastStatus: return d.lastStatus
            case .lastError: return d.lastError
            case .roundStart: return d.roundStart
            }
        }
    }

    enum AttemptColumn: Int, StoreColumn {
        typealias Record = ForwardAttemptRow
        case outboxId, attempt, atMs, tookMs, status, error, answer

        func value(in a: ForwardAttemptRow) -> SQLBindable? {
            switch self {
            case .outboxId: return nil
            case .attempt: return a.attempt
            case .atMs: return a.at
            case .tookMs: return a.tookMs
            case .status: return a.status
            case .error: return a.error
            case .answer: return a.answer
            }
        }
    }

    /// The owed rows' columns, in the table's order (`forward_owed`).
    enum OwedColumn: Int, StoreColumn {
        case id, notificationUuid, originalTransactionId, bundleId, environment, type, owedMs, targets

        func value(in o: Owed) -> SQLBindable? {
            switch self {
            case .id: return o.id
            case .notificationUuid: return o.uuid
            case .originalTransactionId: return o.subscription
            case .bundleId: return o.bundleId
            case .environment: return o.environment
            case .type: return o.type
            case .owedMs: return o.owed
            case .targets: return o.targets
            }
        }
    }

    /// A notification owed to the targets its row names (`owedTargets`), not yet spread.
    struct Owed {
        var id: Int64 = 0
        var uuid: String
        var subscription: String?
        var bundleId: String?
        var environment: String?
        var type: String
        var owed: Millis
        var targets: String
    }

    static let owedTable = StoreTable<OwedColumn>("forward_owed", key: .id)
    static let owedInsert = owedTable.insert(excluding: [.id])
    static let owedRow = owedTable.selection()

    static func owed(_ row: SQLRow) -> Owed {
        let r = owedRow.row(row)
        return Owed(id: r.int64(.id), uuid: r.string(.notificationUuid), subscription: r.optionalString(.originalTransactionId),
                    bundleId: r.optionalString(.bundleId), environment: r.optionalString(.environment), type: r.string(.type),
                    owed: r.int64(.owedMs), targets: r.string(.targets))
    }

    /// What is owed by the list of targets a row names: how many rows, and the oldest.
    enum OwedByTargets: Int, SelectedValues {
        case targets, count, oldest
        var sql: String {
            switch self {
            case .targets: return "targets"
            case .count: return "COUNT(*)"
            case .oldest: return "MIN(owed_ms)"
            }
        }
    }

    static let table = StoreTable<Column>("forward_outbox", key: .id)
    static let delivery = table.selection(excluding: [.claimUntilMs, .claimedBy], prefix: "o.")

    static func delivery(_ row: SQLRow) -> ForwardDelivery {
        let r = delivery.row(row)
        return ForwardDelivery(
            id: r.int64(.id), target: r.string(.target), notificationUUID: r.string(.notificationUuid),
            originalTransactionId: r.optionalString(.originalTransactionId), bundleId: r.optionalString(.bundleId),
            environment: r.optionalString(.environment), type: r.string(.type), owed: r.int64(.owedMs), giveUp: r.int64(.giveUpMs),
            state: ForwardState(rawValue: r.string(.state)) ?? .pending, attempts: r.int(.attempts), next: r.int64(.nextMs),
            delivered: r.optionalInt64(.deliveredMs), lastAttempt: r.optionalInt64(.lastAttemptMs),
            lastStatus: r.optionalInt(.lastStatus), lastError: r.optionalString(.lastError), roundStart: r.int(.roundStart))
    }

    /// Marks a target's pending deliveries past their give-up time dead (claims under way
    /// aside): an index range (`forward_outbox_give_up`), as it runs inside every claim.
    static let markOverdueDead = """
        UPDATE forward_outbox SET state = 'dead', last_error = COALESCE(last_error, 'past max_age before an attempt')
        WHERE target = ? AND state = 'pending' AND give_up_ms <= ? AND (claim_until_ms IS NULL OR claim_until_ms <= ?)
        """

    static func insertForward(_ d: SQLDialect) -> String {
        """
        \(d.insertOrIgnore) forward_outbox (target, notification_uuid, original_transaction_id, bundle_id, environment,
            type, owed_ms, give_up_ms, state, attempts, next_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending', 0, ?)\(d.onConflictIgnore)
        """
    }

    /// Owes `event` to each of `targets`, inside the write that stores it: one row naming them
    /// (`forward_owed`), which a deliverer spreads into the outbox (`spread`).
    public func owe(_ event: NotificationEvent, bundleId: String?, to targets: [ForwardTarget], now: Millis) throws {
        guard !targets.isEmpty else { return }
        try transactions.write {
            try db.run(Self.owedInsert.sql, Self.owedInsert.values(
                Owed(uuid: event.notificationUUID, subscription: event.originalTransactionId, bundleId: bundleId,
                     environment: event.environment, type: event.type.rawValue, owed: now, targets: Self.owedTargets(targets))))
        }
    }

    /// How an owed row names its targets: `name=max_age` (milliseconds) each, apart by
    /// spaces (a target's name holds neither).
    static func owedTargets(_ targets: [ForwardTarget]) -> String {
        targets.map { "\($0.name)=\($0.maxAge)" }.joined(separator: " ")
    }

    /// The targets an owed row names, with their `max_age`.
    static func owedTargets(_ text: String) -> [(name: String, maxAge: Millis)] {
        text.split(separator: " ").compactMap { part in
            guard let eq = part.firstIndex(of: "=") else { return nil }
            return (String(part[..<eq]), Millis(part[part.index(after: eq)...]) ?? ForwardTarget.defaultMaxAge)
        }
    }

    /// How many owed rows one spread takes: a deliverer's claim (`ForwardDeliverer.Pacing`),
    /// so that spreading keeps pace with the claims while each write that spreads stays short
    /// for the writers that answer Apple to wait behind (a backlog owed while no deliverer
    /// ran is spread a batch per claim, not in one long write).
    public static let spreadBatch = 64

    /// Spreads up to `limit` owed rows (`forward_owed`), oldest first, into one pending
    /// delivery per target each names (given up at the `max_age` it names), and removes them,
    /// in one write; a delivery already in the outbox (a replay got there first) is left as it
    /// is. Returns how many rows were spread.
    ///
    /// On PostgreSQL the rows are locked as they are read (`FOR UPDATE`, not skipping): two
    /// deliverers spreading at once take turns, so the outbox's ids keep the order the
    /// notifications were owed in, which each subscription's deliveries go by.
    @discardableResult
    public func spread(limit: Int = ForwardOutboxTable.spreadBatch) throws -> Int {
        // Nothing owed (a read, outside any write of its own): no write taken at all.
        if !db.isInTransaction, try !db.holds("SELECT EXISTS (SELECT 1 FROM forward_owed)") { return 0 }
        return try transactions.write {
            let owed = try db.rows("""
                SELECT \(Self.owedRow.list) FROM forward_owed ORDER BY id LIMIT ?\(db.dialect.forUpdate)
                """, [limit], Self.owed)
            guard !owed.isEmpty else { return 0 }
            let insert = Self.insertForward(db.dialect)
            for o in owed {
                for (name, maxAge) in Self.owedTargets(o.targets) {
                    try db.run(insert, [name, o.uuid, o.subscription, o.bundleId, o.environment, o.type, o.owed, o.owed + maxAge, o.owed])
                }
            }
            for start in stride(from: 0, to: owed.count, by: 500) {
                let slice = owed[start..<min(start + 500, owed.count)]
                try db.run("DELETE FROM forward_owed WHERE id IN (" + SQLText.placeholders(slice.count) + ")",
                           slice.map { $0.id as SQLBindable? })
            }
            return owed.count
        }
    }

    /// What is owed and not yet spread, by the target named: how many rows, and when the
    /// oldest was owed. One read, grouped by the list a row names (a handful of lists: one per
    /// configuration intake ran with); a few rows while a deliverer runs.
    func owedNotSpread() throws -> [String: (count: Int, oldest: Millis?)] {
        var byTarget: [String: (count: Int, oldest: Millis?)] = [:]
        try db.query("SELECT \(OwedByTargets.list) FROM forward_owed GROUP BY targets", []) { row in
            let r = OwedByTargets.row(row)
            for target in Self.owedTargets(r.string(.targets)) {
                let seen = byTarget[target.name]
                byTarget[target.name] = ((seen?.count ?? 0) + r.int(.count), [seen?.oldest, r.optionalInt64(.oldest)].compactMap { $0 }.min())
            }
        }
        return byTarget
    }

    /// Claims up to `limit` of `target`'s deliveries that are due at `now`, in the order
    /// they were owed, for `lease` milliseconds, as `claimant`. Deliveries past their
    /// `giveUp` that were never answered are marked dead first.
    public func claim(target: String, now: Millis, limit: Int, lease: Millis, claimant: String) throws -> [ForwardDelivery] {
        try transactions.write {
            try db.run(Self.markOverdueDead, [target, now, now])
            let due = try db.rows("""
                SELECT \(Self.delivery.list) FROM forward_outbox o
                WHERE o.target = ? AND o.state = 'pending' AND o.next_ms <= ? AND (o.claim_until_ms IS NULL OR o.claim_until_ms <= ?)
                  AND (o.original_transaction_id IS NULL OR NOT EXISTS (
                      SELECT 1 FROM forward_outbox p WHERE p.target = o.target AND p.original_transaction_id = o.original_transaction_id
                          AND p.state = 'pending' AND p.id < o.id))
                ORDER BY o.id LIMIT ?\(db.dialect.skipLocked)
                """, [target, now, now, limit], Self.delivery)
            for start in stride(from: 0, to: due.count, by: 500) {
                let slice = due[start..<min(start + 500, due.count)]
                try db.run("UPDATE forward_outbox SET claim_until_ms = ?, claimed_by = ? WHERE id IN ("
                           + SQLText.placeholders(slice.count) + ")",
                           [now + lease, claimant] + slice.map { $0.id as SQLBindable? })
            }
            return due
        }
    }

    /// When `target`'s next pending delivery falls due (nil: none is pending), claims aside:
    /// how long a deliverer may sleep.
    /// An owed row not yet spread is due at once.
    public func nextDue(target: String) throws -> Millis? {
        let owed = try db.optionalInteger("SELECT MIN(owed_ms) FROM forward_owed")
        let pending = try db.optionalInteger("""
            SELECT MIN(CASE WHEN claim_until_ms IS NOT NULL AND claim_until_ms > next_ms THEN claim_until_ms ELSE next_ms END)
            FROM forward_outbox WHERE target = ? AND state = 'pending'
            """, [target])
        return [owed, pending].compactMap { $0 }.min()
    }

    /// Records what became of attempts at the deliveries claimed (`claim`), in one
    /// write: each attempt is kept, and its delivery is delivered, due again, or dead.
    public func record(_ attempts: [(delivery: ForwardDelivery, attempt: ForwardAttempt)]) throws {
        guard !attempts.isEmpty else { return }
        try transactions.write {
            for (d, a) in attempts {
                let number = d.attempts + 1
                try db.run("""
                    \(db.dialect.insertOrIgnore) forward_attempts (outbox_id, attempt, at_ms, took_ms, status, error, answer)
                    VALUES (?, ?, ?, ?, ?, ?, ?)\(db.dialect.onConflictIgnore)
                    """, [d.id, number, a.at, a.tookMs, a.status, a.error, a.answer])
                let state: ForwardState, next: Millis
                switch a.next {
                case .delivered: (state, next) = (.delivered, d.next)
                case .retry(let at): (state, next) = (.pending, at)
                case .dead: (state, next) = (.dead, d.next)
                }
                try db.run("""
                    UPDATE forward_outbox SET state = ?, attempts = ?, next_ms = ?, claim_until_ms = NULL, claimed_by = NULL,
                        delivered_ms = ?, last_attempt_ms = ?, last_status = ?, last_error = ?
                    WHERE id = ?
                    """, [state.rawValue, number, next, a.next == .delivered ? a.at : d.delivered, a.at, a.status, a.error, d.id])
            }
        }
    }

    /// Owes the notifications `selection` names to `target` again (those of its apps,
    /// environments and types: `targetBundleIds` nil for every app), due at `now` with the
    /// same delivery ids: a delivery already owed becomes pending again where it stands in
    /// its subscription's order (a claim under way is left to end), with its refusals counted
    /// afresh; one never owed is owed now. Returns how many.
    public func requeue(_ selection: ForwardReplaySelection, to target: ForwardTarget, targetBundleIds: [String]?,
                                  now: Millis) throws -> Int {
        var conditions: [String] = []
        var values: [SQLBindable?] = [target.name, now, now + target.maxAge, now]
        if let uuid = selection.notificationUUID {
            conditions.append("notification_uuid = ?")
            values.append(uuid)
        }
        if let since = selection.since {
            conditions.append("received_ms >= ?")
            values.append(since)
        }
        if let until = selection.until {
            conditions.append("received_ms < ?")
            values.append(until)
        }
        for list in [selection.bundleIds, targetBundleIds].compactMap({ $0 }) {
            conditions.append(list.isEmpty ? "1 = 0" : "bundle_id IN (" + SQLText.placeholders(list.count) + ")")
            values += list.map { $0 as SQLBindable? }
        }
        if !target.environments.isEmpty {
            conditions.append("environment IN (" + SQLText.placeholders(target.environments.count) + ")")
            values += target.environments.map { $0.rawValue as SQLBindable? }
        }
        if !target.types.isEmpty {
            conditions.append("type IN (" + SQLText.placeholders(target.types.count) + ")")
            values += target.types.map { $0.rawValue as SQLBindable? }
        }
        return try transactions.write {
            try db.run("""
                INSERT INTO forward_outbox (target, notification_uuid, original_transaction_id, bundle_id, environment, type,
                    owed_ms, give_up_ms, state, attempts, next_ms)
                SELECT ?, notification_uuid, original_transaction_id, bundle_id, environment, type, ?, ?, 'pending', 0, ?
                FROM notifications WHERE \((conditions.isEmpty ? ["1 = 1"] : conditions).joined(separator: " AND ")) ORDER BY id
                ON CONFLICT (target, notification_uuid) DO UPDATE SET state = 'pending', next_ms = excluded.next_ms,
                    give_up_ms = excluded.give_up_ms, round_start = forward_outbox.attempts
                """, values)
        }
    }

    /// Owes `target`'s dead deliveries again, due at `now` and tried until `maxAge` from
    /// now, with the same delivery ids and their refusals counted afresh. Returns how many.
    public func retryDead(target: String, maxAge: Millis, now: Millis) throws -> Int {
        try transactions.write {
            try db.run("""
                UPDATE forward_outbox SET state = 'pending', next_ms = ?, give_up_ms = ?, round_start = attempts
                WHERE target = ? AND state = 'dead'
                """, [now, now + maxAge, target])
        }
    }

    /// The deliveries of one subscription's notifications, oldest first: the outbox's, then
    /// those owed and not yet spread (id 0, pending since owed).
    public func deliveries(originalTransactionId: String) throws -> [ForwardDelivery] {
        try db.rows("SELECT \(Self.delivery.list) FROM forward_outbox o WHERE o.original_transaction_id = ? ORDER BY o.id",
                    [originalTransactionId], Self.delivery)
            + owedDeliveries(where: "original_transaction_id = ?", originalTransactionId)
    }

    /// Every delivery of one notification, by target (owed ones not yet spread included).
    public func deliveries(notificationUUID: String) throws -> [ForwardDelivery] {
        try (db.rows("SELECT \(Self.delivery.list) FROM forward_outbox o WHERE o.notification_uuid = ? ORDER BY o.target",
                     [notificationUUID], Self.delivery)
             + owedDeliveries(where: "notification_uuid = ?", notificationUUID)).sorted { $0.target < $1.target }
    }

    /// The deliveries owed rows not yet spread stand for, one per target named, as the spread
    /// will write them.
    private func owedDeliveries(where condition: String, _ value: String) throws -> [ForwardDelivery] {
        try db.rows("SELECT \(Self.owedRow.list) FROM forward_owed WHERE \(condition) ORDER BY id", [value], Self.owed).flatMap { o in
            Self.owedTargets(o.targets).map { target in
                ForwardDelivery(id: 0, target: target.name, notificationUUID: o.uuid, originalTransactionId: o.subscription,
                                bundleId: o.bundleId, environment: o.environment, type: o.type,
                                owed: o.owed, giveUp: o.owed + target.maxAge, state: .pending, attempts: 0, next: o.owed)
            }
        }
    }

    static let attemptTable = StoreTable<AttemptColumn>("forward_attempts", key: .attempt)
    static let attemptSelection = attemptTable.selection(excluding: [.outboxId])

    /// The attempts at one delivery, in order.
    public func attempts(deliveryId id: Int64) throws -> [ForwardAttemptRow] {
        try db.rows("SELECT \(Self.attemptSelection.list) FROM forward_attempts WHERE outbox_id = ? ORDER BY attempt", [id]) { row in
            let r = Self.attemptSelection.row(row)
            return ForwardAttemptRow(attempt: r.int(.attempt), at: r.int64(.atMs), tookMs: r.int64(.tookMs), status: r.optionalInt(.status),
                                     error: r.optionalString(.error), answer: r.optionalData(.answer))
        }
    }
}

extension Store {
    /// The relay's outbox: what is owed to the `[forward]` targets, and what became of it.
    public var outbox: ForwardOutboxTable { ForwardOutboxTable(db: db, transactions: self) }
}
