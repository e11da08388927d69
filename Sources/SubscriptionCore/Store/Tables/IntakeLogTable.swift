import Foundation

/// What intake did with each body: a line per outcome (`intake_log`, the live feed and
/// `:feed`), and the outcomes counted by app, environment, type, outcome and refusal kind
/// (`intake_counts`, which the on-call metrics read instead of the log). The only code that
/// names these tables' columns (`store.intakeLog`); `Store.logIntake` writes a line and holds
/// its count until the write commits.
public struct IntakeLogTable {
    let db: any SQLConnection

    /// The log's columns, in the table's order.
    enum Column: Int, StoreColumn {
        case id, receivedMs, result, notificationUuid, type, subtype, originalTransactionId, productId, environment, detail, source,
             reasonKind

        func value(in e: IntakeLogEntry) -> SQLBindable? {
            switch self {
            case .id: return nil
            case .receivedMs: return e.receivedDate
            case .result: return e.result.rawValue
            case .notificationUuid: return e.notificationUUID
            case .type: return e.type
            case .subtype: return e.subtype
            case .originalTransactionId: return e.originalTransactionId
            case .productId: return e.productId
            case .environment: return e.environment
            case .detail: return e.detail
            case .source: return e.source
            case .reasonKind: return e.rejection?.rawValue
            }
        }
    }

    /// The counts' columns, in the table's order.
    enum CountColumn: Int, StoreColumn {
        case bundleId, environment, type, outcome, reason, count, lastMs

        func value(in c: OnCallReading.IntakeCount) -> SQLBindable? {
            switch self {
            case .bundleId: return c.bundleId
            case .environment: return c.environment
            case .type: return c.type
            case .outcome: return c.outcome
            case .reason: return c.reason
            case .count: return c.count
            case .lastMs: return c.last
            }
        }
    }

    static let table = StoreTable<Column>("intake_log", key: .id)
    static let insert = table.insert(excluding: [.id])
    /// A line as the feed reads it, from `l`, the app found beside it (`appOfLine`).
    static let line = table.selection(prefix: "l.")
    static let countTable = StoreTable<CountColumn>("intake_counts", key: .bundleId)
    static let counted = countTable.selection()
    static let countInsert = countTable.insert()

    /// Appends one outcome's line.
    func append(_ e: IntakeLogEntry) throws {
        try db.run(Self.insert.sql, Self.insert.values(e))
    }

    /// Adds `count` outcomes under `key`, the latest at `last`.
    func addCount(_ key: Store.IntakeCountKey, count: Int, last: Millis) throws {
        let latest = "\(db.dialect.greatest)(intake_counts.last_ms, excluded.last_ms)"
        try db.run("""
            \(Self.countInsert.sql)
            ON CONFLICT (bundle_id, environment, type, outcome, reason)
            DO UPDATE SET count = intake_counts.count + excluded.count, last_ms = \(latest)
            """, Self.countInsert.values(OnCallReading.IntakeCount(bundleId: key.bundleId, environment: key.environment, type: key.type,
                                                                   outcome: key.outcome, reason: key.reason, count: Int64(count), last: last)))
    }

    /// Every count (a small table: one row per app, environment, type, outcome and reason).
    func counts() throws -> [OnCallReading.IntakeCount] {
        try db.rows("SELECT \(Self.counted.list) FROM intake_counts") { row in
            let r = Self.counted.row(row)
            return .init(bundleId: r.string(.bundleId), environment: r.string(.environment), type: r.string(.type),
                         outcome: r.string(.outcome), reason: r.string(.reason), count: r.int64(.count), last: r.int64(.lastMs))
        }
    }

    /// The refusals logged from `from` to `to`, both included (through the time index).
    func refusals(from: Millis, to: Millis) throws -> Int {
        Int(try db.integer("""
            SELECT count(*) FROM intake_log WHERE received_ms >= ? AND received_ms <= ? AND result = 'rejected'
            """, [from, to]) ?? 0)
    }

    /// Whether a refusal logged at or after `since` says `mark` (through the time index).
    func hasRefusal(saying mark: String, since: Millis) throws -> Bool {
        try db.integer("""
            SELECT 1 FROM intake_log WHERE received_ms >= ? AND result = 'rejected' AND detail LIKE ? LIMIT 1
            """, [since, "%" + mark + "%"]) != nil
    }

    /// The app a line is about: its notification's bundle id, else its subscription's (each
    /// found by its key); a refused body names neither.
    static let appOfLine = """
        coalesce((SELECT n.bundle_id FROM notifications n WHERE n.notification_uuid = l.notification_uuid),
            (SELECT s.bundle_id FROM subscriptions s WHERE s.original_transaction_id = l.original_transaction_id))
        """

    /// How far back among the newest lines a read for one app looks: each line's app is found
    /// through its notification or subscription, so a quiet app's read of a long log stays
    /// bounded.
    public static let appScan: Int64 = 50_000

    /// The id of the newest line (0 with none): how far a read has looked.
    public func newestId() throws -> Int64 {
        try db.integer("SELECT coalesce(max(id), 0) FROM intake_log") ?? 0
    }

    /// The lines newer than `afterId`, newest first; with `app`, those about its
    /// notifications and subscriptions among the newest `appScan` lines.
    public func entries(afterId: Int64 = 0, limit: Int = 200, app: AppScope? = nil) throws -> [IntakeLogEntry] {
        let own = Store.appCondition(app)
        let afterId = app == nil ? afterId : max(afterId, try newestId() - Self.appScan)
        return try db.rows("""
            SELECT * FROM (SELECT \(Self.line.list), \(Self.appOfLine) AS bundle_id
                FROM intake_log l WHERE l.id > ?) AS logged WHERE true\(own.sql) ORDER BY id DESC LIMIT ?
            """, [afterId] + own.values + [limit]) { row in
            let r = Self.line.row(row)
            var entry = IntakeLogEntry(id: r.int64(.id), receivedDate: r.int64(.receivedMs),
                                       result: IntakeLogEntry.Result(rawValue: r.string(.result)) ?? .rejected,
                                       notificationUUID: r.optionalString(.notificationUuid), type: r.optionalString(.type),
                                       subtype: r.optionalString(.subtype), originalTransactionId: r.optionalString(.originalTransactionId),
                                       productId: r.optionalString(.productId), environment: r.optionalString(.environment),
                                       detail: r.optionalString(.detail), source: r.optionalString(.source),
                                       rejection: r.optionalString(.reasonKind).flatMap(RejectionClass.init(rawValue:)))
            entry.bundleId = SelectedApp.row(row, from: Self.line.count).optionalString(.bundleId)
            return entry
        }
    }

    /// The lines per minute over the last `minutes` minutes ending at `now`, oldest first;
    /// with `app`, of the lines about it.
    /// A minute's lines (`perMinute`): the minute, counted from the start, and how many.
    enum LinesPerMinute: Int, SelectedValues {
        case bucket, lines
        var sql: String { self == .bucket ? "(received_ms - ?) / 60000 AS bucket" : "count(*) AS lines" }
    }

    public func perMinute(minutes: Int, now: Millis, app: AppScope? = nil) throws -> [Int] {
        let start = now - Millis(minutes) * 60_000
        var buckets = Array(repeating: 0, count: minutes)
        let own = Store.appCondition(app)
        let lines = app == nil ? "intake_log"
            : "(SELECT l.received_ms, \(Self.appOfLine) AS bundle_id FROM intake_log l WHERE l.received_ms >= ? AND l.received_ms < ?) AS logged"
        try db.query("""
            SELECT \(LinesPerMinute.list) FROM \(lines)
            WHERE received_ms >= ? AND received_ms < ?\(own.sql) GROUP BY bucket
            """, [start] + (app == nil ? [] : [start, now]) + [start, now] + own.values) { row in
            let r = LinesPerMinute.row(row)
            let b = r.int(.bucket)
            if b >= 0 && b < minutes { buckets[b] = r.int(.lines) }
        }
        return buckets
    }
}

extension Store {
    /// What intake did with each body, and the counts of its outcomes.
    public var intakeLog: IntakeLogTable { IntakeLogTable(db: db) }

    /// Logs one intake outcome and counts it under `bundleId`, the app the body was signed
    /// for (nil when it could not be read).
    public func logIntake(_ e: IntakeLogEntry, app bundleId: String? = nil) throws {
        try intakeLog.append(e)
        try countIntake(e, app: bundleId)
    }

    /// Adds one outcome to `intake_counts`, the counters the on-call metrics read. Called for
    /// every body intake answers, logged or not (a flood past the quarantine's budget logs
    /// one line a minute but counts every body), under its app (`bundleId`; '' unknown); held
    /// until the write commits when one is open.
    func countIntake(_ e: IntakeLogEntry, app bundleId: String?) throws {
        let key = IntakeCountKey(bundleId: bundleId ?? "", environment: e.environment ?? "", type: e.type ?? "",
                                 outcome: e.result.rawValue, reason: e.result == .rejected ? (e.rejection ?? .other).rawValue : "")
        guard db.isInTransaction else { return try intakeLog.addCount(key, count: 1, last: e.receivedDate) }
        let counted = held.intake[key] ?? (0, e.receivedDate)
        held.intake[key] = (counted.count + 1, max(counted.last, e.receivedDate))
    }
}
