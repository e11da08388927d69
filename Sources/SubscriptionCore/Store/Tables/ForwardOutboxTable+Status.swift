import Foundation

extension ForwardOutboxTable {
    /// Each target's outbox summed at `now`, in the order of `targets` (and any other target
    /// the outbox still names, after them).
    public func status(targets: [String], now: Millis) throws -> [ForwardTargetStatus] {
        var byTarget: [String: ForwardTargetStatus] = [:]
        for name in targets { byTarget[name] = ForwardTargetStatus(target: name) }
        let hourAgo = now - 3_600_000
        try db.query("""
            SELECT target, state, COUNT(*), MIN(owed_ms), SUM(CASE WHEN delivered_ms >= ? THEN 1 ELSE 0 END)
            FROM forward_outbox GROUP BY target, state
            """, [hourAgo]) { row in
            let name = row.string(0)
            var status = byTarget[name] ?? ForwardTargetStatus(target: name)
            switch ForwardState(rawValue: row.string(1)) {
            case .pending?:
                status.pending = row.int(2)
                status.oldestPending = row.optionalInt64(3)
            case .delivered?: status.deliveredLastHour = row.int(4)
            case .dead?: status.dead = row.int(2)
            case nil: break
            }
            byTarget[name] = status
        }
        try db.query("""
            SELECT o.target, COUNT(*) FROM forward_attempts a JOIN forward_outbox o ON o.id = a.outbox_id
            WHERE a.at_ms >= ? AND (a.status IS NULL OR a.status < 200 OR a.status > 299) GROUP BY o.target
            """, [hourAgo]) { row in
            byTarget[row.string(0), default: ForwardTargetStatus(target: row.string(0))].failedLastHour = row.int(1)
        }
        try db.query("""
            SELECT target, last_error, last_attempt_ms FROM forward_outbox o
            WHERE last_error IS NOT NULL AND last_attempt_ms = (SELECT MAX(last_attempt_ms) FROM forward_outbox p
                WHERE p.target = o.target AND p.last_error IS NOT NULL)
            """, []) { row in
            byTarget[row.string(0), default: ForwardTargetStatus(target: row.string(0))].lastError = row.string(1)
            byTarget[row.string(0)]?.lastErrorAt = row.optionalInt64(2)
        }
        for (name, owed) in try owedNotSpread() {
            var status = byTarget[name] ?? ForwardTargetStatus(target: name)
            status.pending += owed.count
            status.oldestPending = [status.oldestPending, owed.oldest].compactMap { $0 }.min()
            byTarget[name] = status
        }
        let others = byTarget.keys.filter { !targets.contains($0) }.sorted()
        return (targets + others).compactMap { byTarget[$0] }
    }

    /// Each target's outbox as the on-call metrics and `subdesk check` read it at `now`: the
    /// targets named, then any other the outbox names. Every count is an index range
    /// (`forward_outbox_pending`, and `forward_outbox_state`, which holds only the delivered
    /// and the dead: each of its counts says `state <> 'pending'` as the index does, for
    /// SQLite to use it): the pending and dead deliveries,
    /// few while targets take what they are sent, and the rows tried in the last hour or day,
    /// never the delivered history, which grows with every notification. What is owed and not
    /// yet spread (`forward_owed`, a few rows while a deliverer runs) is read whole and added
    /// to the pending.
    public func readings(targets: [String], now: Millis) throws -> [ForwardReading] {
        let hourAgo = now - 3_600_000, dayAgo = now - 86_400_000
        let named = Set(targets)
        let owed = try owedNotSpread()
        let others = Set(try targetsNamed() + owed.keys).filter { !named.contains($0) }.sorted()
        // The oldest pending delivery is the one with the lowest id: ids are given in the
        // order deliveries are owed, and the partial index finds it without reading the rest.
        return try (targets + others).map { name in
            var r = ForwardReading(target: name)
            try db.query(Self.readingsSQL, [name, name, name, name, dayAgo, dayAgo, name, hourAgo, hourAgo, name, hourAgo, name, hourAgo]) { row in
                r.pending = row.int(0)
                r.oldestPending = row.optionalInt64(1)
                r.dead = row.int(2)
                r.deadLastDay = row.int(3)
                r.deliveredLastHour = row.int(4)
                r.failedAttemptsLastHour = row.int(5)
            }
            if let owed = owed[name] {
                r.pending += owed.count
                r.oldestPending = [r.oldestPending, owed.oldest].compactMap { $0 }.min()
            }
            return r
        }
    }

    static let readingsSQL = """
        SELECT
            (SELECT COUNT(*) FROM forward_outbox WHERE target = ? AND state = 'pending'),
            (SELECT owed_ms FROM forward_outbox WHERE id = (
                SELECT MIN(id) FROM forward_outbox WHERE target = ? AND state = 'pending')),
            (SELECT COUNT(*) FROM forward_outbox WHERE target = ? AND state <> 'pending' AND state = 'dead'),
            (SELECT COUNT(*) FROM forward_outbox WHERE target = ? AND state <> 'pending' AND state = 'dead'
                AND (last_attempt_ms >= ? OR (last_attempt_ms IS NULL AND give_up_ms >= ?))),
            (SELECT COUNT(*) FROM forward_outbox WHERE target = ? AND state <> 'pending' AND state = 'delivered' AND last_attempt_ms >= ?),
            (SELECT COUNT(*) FROM forward_attempts a
                WHERE a.at_ms >= ? AND (a.status IS NULL OR a.status < 200 OR a.status > 299) AND a.outbox_id IN (
                    SELECT id FROM forward_outbox WHERE target = ? AND state <> 'pending' AND state IN ('delivered', 'dead')
                        AND last_attempt_ms >= ?
                    UNION ALL
                    SELECT id FROM forward_outbox WHERE target = ? AND state = 'pending' AND last_attempt_ms >= ?))
        """

    /// The targets the outbox names, by name: one index seek each, however many rows.
    func targetsNamed() throws -> [String] {
        var names: [String] = []
        while names.count < 1_000, let next = try db.first(
            names.isEmpty ? "SELECT MIN(target) FROM forward_outbox" : "SELECT MIN(target) FROM forward_outbox WHERE target > ?",
            names.last.map { [$0 as SQLBindable?] } ?? [], { $0.optionalString(0) }) ?? nil {
            names.append(next)
        }
        return names
    }
}
