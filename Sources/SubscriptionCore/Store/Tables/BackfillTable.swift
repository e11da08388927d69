import Foundation

/// Backfills from Get Notification History (`backfill_runs`: each run's window, how far it
/// got, what it found) and the notifications Apple says it sent that first reached the store
/// through one (`delivery_gaps`). The only code that names these tables' columns
/// (`store.backfills`).
public struct BackfillTable {
    let db: any SQLConnection
    /// Where its writes open.
    let transactions: any WriteTransactions

    /// A run's columns, in the table's order.
    enum Column: Int, StoreColumn {
        case id, environment, sinceMs, untilMs, onlyFailures, `operator`, startedMs, finishedMs, nextPage, pages, new, duplicates, rejected,
             bundleId

        func value(in r: BackfillRun) -> SQLBindable? {
            switch self {
            case .id: return r.id
            case .environment: return r.environment
            case .sinceMs: return r.since
            case .untilMs: return r.until
            case .onlyFailures: return r.onlyFailures
            case .operator: return r.operatorName
            case .startedMs: return r.started
            case .finishedMs: return r.finished
            case .nextPage: return r.nextPage
            case .pages: return r.pages
            case .new: return r.new
            case .duplicates: return r.duplicates
            case .rejected: return r.rejected
            case .bundleId: return r.bundleId
            }
        }
    }

    /// A gap's columns, in the table's order.
    enum GapColumn: Int, StoreColumn {
        case notificationUuid, backfillRun, sendAttempts, foundMs

        func value(in g: DeliveryGap) -> SQLBindable? {
            switch self {
            case .notificationUuid: return g.notificationUUID
            case .backfillRun: return g.backfillRun
            case .sendAttempts: return SendAttempt.json(g.sendAttempts)
            case .foundMs: return g.found
            }
        }
    }

    static let table = StoreTable<Column>("backfill_runs", key: .id)
    static let insert = table.insert(excluding: [.id])
    static let all = table.selection()
    static let gapTable = StoreTable<GapColumn>("delivery_gaps", key: .notificationUuid)
    static let gap = gapTable.selection(prefix: "g.")
    /// What a gap's notification was, read beside it (`n`, after the gap's columns).
    static let gapNotification = NotificationTable.table.selection([.type, .subtype, .originalTransactionId, .signedMs, .bundleId],
                                                                   prefix: "n.", from: gap.count)
    static let gapInsert = gapTable.insert()
    /// A gap is kept once: a later run finding it again changes nothing.
    static let keepGap = gapInsert.sql + " ON CONFLICT (notification_uuid) DO NOTHING"

    static func run(_ row: SQLRow) -> BackfillRun {
        let r = all.row(row)
        return BackfillRun(id: r.int64(.id), environment: r.string(.environment), since: r.int64(.sinceMs), until: r.int64(.untilMs),
                           onlyFailures: r.bool(.onlyFailures), operatorName: r.string(.operator), started: r.int64(.startedMs),
                           finished: r.optionalInt64(.finishedMs), nextPage: r.optionalString(.nextPage), pages: r.int(.pages),
                           new: r.int(.new), duplicates: r.int(.duplicates), rejected: r.int(.rejected), bundleId: r.optionalString(.bundleId))
    }

    /// Starts a run over `since`–`until`; the run as kept.
    public func start(environment: String, since: Millis, until: Millis, onlyFailures: Bool,
                      operatorName: String, now: Millis, bundleId: String? = nil) throws -> BackfillRun {
        let started = try transactions.write {
            let fresh = BackfillRun(id: 0, environment: environment, since: since, until: until, onlyFailures: onlyFailures,
                                    operatorName: operatorName, started: now, finished: nil, nextPage: nil, pages: 0, new: 0,
                                    duplicates: 0, rejected: 0, bundleId: bundleId)
            try db.run(Self.insert.sql, Self.insert.values(fresh))
            return try run(id: try db.lastInsertRowID())
        }
        guard let started else { throw StoreError(operation: "start a backfill", message: "the new run was not found", code: 0) }
        return started
    }

    public func run(id: Int64) throws -> BackfillRun? {
        try db.first("SELECT \(Self.all.list) FROM backfill_runs WHERE id = ?", [id], Self.run)
    }

    /// The newest run that did not finish, to resume.
    public func unfinished() throws -> BackfillRun? {
        try db.first("SELECT \(Self.all.list) FROM backfill_runs WHERE finished_ms IS NULL ORDER BY id DESC LIMIT 1", [], Self.run)
    }

    /// Newest first.
    public func runs(limit: Int = 20) throws -> [BackfillRun] {
        try db.rows("SELECT \(Self.all.list) FROM backfill_runs ORDER BY id DESC LIMIT ?", [limit], Self.run)
    }

    /// Records a page as done: what it found and where the next starts. Called inside the
    /// write that stored the page's notifications, so a run stopped at any point resumes
    /// from the first page not wholly stored.
    public func recordPage(_ run: Int64, nextPage: String?, new: Int, duplicates: Int, rejected: Int) throws {
        try db.run("""
            UPDATE backfill_runs SET next_page = ?, pages = pages + 1, new = new + ?, duplicates = duplicates + ?,
                rejected = rejected + ? WHERE id = ?
            """, [nextPage, new, duplicates, rejected, run])
    }

    public func finish(_ run: Int64, now: Millis) throws {
        try transactions.write { try db.run("UPDATE backfill_runs SET finished_ms = ?, next_page = NULL WHERE id = ?", [now, run]) }
    }

    /// Keeps a notification found by run `run` that Apple says it sent (once: a later run
    /// finding it again changes nothing).
    public func recordGap(notificationUUID: String, run: Int64, attempts: [SendAttempt], now: Millis) throws {
        try db.run(Self.keepGap, Self.gapInsert.values(DeliveryGap(notificationUUID: notificationUUID, backfillRun: run,
                                                                   sendAttempts: attempts, found: now)))
    }

    /// Newest found first, with what the notification was (a read of the notification
    /// beside each gap); with `app`, its notifications'.
    public func gaps(limit: Int = 500, app: AppScope? = nil) throws -> [DeliveryGap] {
        let own: (sql: String, values: [SQLBindable?]) = app.map { (" WHERE " + $0.condition("n.bundle_id"), [$0.bundleId]) } ?? ("", [])
        let notification = Self.gapNotification
        return try db.rows("""
            SELECT \(Self.gap.list), \(notification.list)
            FROM delivery_gaps g LEFT JOIN notifications n ON n.notification_uuid = g.notification_uuid\(own.sql)
            ORDER BY g.found_ms DESC, n.signed_ms DESC LIMIT ?
            """, own.values + [limit]) { row in
            let r = Self.gap.row(row), n = notification.row(row)
            return DeliveryGap(notificationUUID: r.string(.notificationUuid), backfillRun: r.int64(.backfillRun),
                               sendAttempts: SendAttempt.parse(r.string(.sendAttempts)), found: r.int64(.foundMs),
                               type: n.optionalString(.type), subtype: n.optionalString(.subtype),
                               originalTransactionId: n.optionalString(.originalTransactionId), signedDate: n.optionalInt64(.signedMs),
                               bundleId: n.optionalString(.bundleId))
        }
    }

    /// What the gaps-by-type read selects.
    enum GapsOfType: Int, SelectedValues {
        case type, count
        var sql: String { self == .type ? "coalesce(n.type, '')" : "count(*)" }
    }

    /// What the last-reconcile read selects.
    enum LastReconcile: Int, SelectedValues {
        case bundleId, environment, finished
        var sql: String {
            switch self {
            case .bundleId: return "coalesce(bundle_id, '')"
            case .environment: return "environment"
            case .finished: return "max(finished_ms)"
            }
        }
    }

    /// The backfills' part of the on-call reading at `now`: the gaps found, by type and in
    /// the last day, and each app and environment's last reconcile (a run of failures only).
    func read(into r: inout OnCallReading, now: Millis) throws {
        try db.query("""
            SELECT \(GapsOfType.list) FROM delivery_gaps g LEFT JOIN notifications n ON n.notification_uuid = g.notification_uuid
            GROUP BY 1 ORDER BY 1
            """) { row in
            let gaps = GapsOfType.row(row)
            r.gapsByType.append((type: gaps.string(.type), count: gaps.int(.count)))
        }
        r.gapsFoundLastDay = try db.count("SELECT count(*) FROM delivery_gaps WHERE found_ms >= ?", [now - 86_400_000])
        try db.query("""
            SELECT \(LastReconcile.list) FROM backfill_runs
            WHERE only_failures = 1 AND finished_ms IS NOT NULL AND finished_ms <= ? GROUP BY 1, 2
            """, [now + AuditTable.futureToleranceMillis]) { row in
            let last = LastReconcile.row(row)
            r.lastReconcile[OnCallReading.AppEnvironment(bundleId: last.string(.bundleId), environment: last.string(.environment))]
                = last.int64(.finished)
        }
    }
}

extension Store {
    /// Backfills from Get Notification History and the gaps they found.
    public var backfills: BackfillTable { BackfillTable(db: db, transactions: self) }
}
