import Foundation

extension ForwardOutboxTable {
    /// Each target and state's deliveries: how many, the oldest owed, and how many were
    /// delivered in the last hour (`status`).
    enum ByTargetAndState: Int, SelectedValues {
        case target, state, count, oldest, lastHour
        var sql: String {
            switch self {
            case .target: return "target"
            case .state: return "state"
            case .count: return "COUNT(*)"
            case .oldest: return "MIN(owed_ms)"
            case .lastHour: return "SUM(CASE WHEN delivered_ms >= ? THEN 1 ELSE 0 END)"
            }
        }
    }

    /// A target and a count of its (`status`'s failed attempts).
    enum TargetCount: Int, SelectedValues {
        case target, count
        var sql: String { self == .target ? "o.target" : "COUNT(*)" }
    }

    /// A target's last error and when (`status`).
    enum LastError: Int, SelectedValues, CodingKey { case target, lastError, lastAttemptMs }

    /// Each target's outbox summed at `now`, in the order of `targets` (and any other target
    /// the outbox still names, after them).
    public func status(targets: [String], now: Millis) throws -> [ForwardTargetStatus] {
        var byTarget: [String: ForwardTargetStatus] = [:]
        for name in targets { byTarget[name] = ForwardTargetStatus(target: name) }
        let hourAgo = now - 3_600_000
        try db.query("""
            SELECT \(ByTargetAndState.list) FROM forward_outbox GROUP BY target, state
            """, [hourAgo]) { row in
            let r = ByTargetAndState.row(row)
            let name = r.string(.target)
            var status = byTarget[name] ?? ForwardTargetStatus(target: name)
            switch ForwardState(rawValue: r.string(.state)) {
            case .pending?:
                status.pending = r.int(.count)
                status.oldestPending = r.optionalInt64(.oldest)
            case .delivered?: status.deliveredLastHour = r.int(.lastHour)
            case .dead?: status.dead = r.int(.count)
            case nil: break
            }
            byTarget[name] = status
        }
        try db.query("""
            SELECT \(TargetCount.list) FROM forward_attempts a JOIN forward_outbox o ON o.id = a.outbox_id
            WHERE a.at_ms >= ? AND (a.status IS NULL OR a.status < 200 OR a.status > 299) GROUP BY o.target
            """, [hourAgo]) { row in
            let r = TargetCount.row(row), name = r.string(.target)
            byTarget[name, default: ForwardTargetStatus(target: name)].failedLastHour = r.int(.count)
        }
        try db.query("""
            SELECT \(LastError.list) FROM forward_outbox o
            WHERE last_error IS NOT NULL AND last_attempt_ms = (SELECT MAX(last_attempt_ms) FROM forward_outbox p
                WHERE p.target = o.target AND p.last_error IS NOT NULL)
            """, []) { row in
            let r = LastError.row(row), name = r.string(.target)
            byTarget[name, default: ForwardTargetStatus(target: name)].lastError = r.string(.lastError)
            byTarget[name]?.lastErrorAt = r.optionalInt64(.lastAttemptMs)
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
                let counts = Reading.row(row)
                r.pending = counts.int(.pending)
                r.oldestPending = counts.optionalInt64(.oldestPending)
                r.dead = counts.int(.dead)
                r.deadLastDay = counts.int(.deadLastDay)
                r.deliveredLastHour = counts.int(.deliveredLastHour)
                r.failedAttemptsLastHour = counts.int(.failedAttemptsLastHour)
            }
            if let owed = owed[name] {
                r.pending += owed.count
                r.oldestPending = [r.oldestPending, owed.oldest].compactMap { $0 }.min()
            }
            return r
        }
    }

    /// A target's reading, each an index range (`readings`).
    enum Reading: Int, SelectedValues {
        case pending, oldestPending, dead, deadLastDay, deliveredLastHour, failedAttemptsLastHour
        var sql: String {
            switch self {
            case .pending: return "(SELECT COUNT(*) FROM forward_outbox WHERE target = ? AND state = 'pending')"
            case .oldestPending:
                return """
                    (SELECT owed_ms FROM forward_outbox WHERE id = (
                        SELECT MIN(id) FROM forward_outbox WHERE target = ? AND state = 'pending'))
                    """
            case .dead: return "(SELECT COUNT(*) FROM forward_outbox WHERE target = ? AND state <> 'pending' AND state = 'dead')"
            case .deadLastDay:
                return """
                    (SELECT COUNT(*) FROM forward_outbox WHERE target = ? AND state <> 'pending' AND state = 'dead'
                        AND (last_attempt_ms >= ? OR (last_attempt_ms IS NULL AND give_up_ms >= ?)))
                    """
            case .deliveredLastHour:
                return "(SELECT COUNT(*) FROM forward_outbox WHERE target = ? AND state <> 'pending' AND state = 'delivered' AND last_attempt_ms >= ?)"
            case .failedAttemptsLastHour:
                return """
                    (SELECT COUNT(*) FROM forward_attempts a
                        WHERE a.at_ms >= ? AND (a.status IS NULL OR a.status < 200 OR a.status > 299) AND a.outbox_id IN (
                            SELECT id FROM forward_outbox WHERE target = ? AND state <> 'pending' AND state IN ('delivered', 'dead')
                                AND last_attempt_ms >= ?
                            UNION ALL
                            SELECT id FROM forward_outbox WHERE target = ? AND state = 'pending' AND last_attempt_ms >= ?))
                    """
            }
        }
    }

    static let readingsSQL = "SELECT \(Reading.list)"

    /// The targets the outbox names, by name: one index seek each, however many rows.
    func targetsNamed() throws -> [String] {
        var names: [String] = []
        while names.count < 1_000, let next = try db.text(
            names.isEmpty ? "SELECT MIN(target) FROM forward_outbox" : "SELECT MIN(target) FROM forward_outbox WHERE target > ?",
            names.last.map { [$0 as SQLBindable?] } ?? []) {
            names.append(next)
        }
        return names
    }
}
