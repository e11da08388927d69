import Foundation

/// Every accepted notification, its body kept exactly as received (compacted when it
/// decodes back to the same bytes, its JWS headers in `jws_headers`): the only code that
/// names the columns of `notifications` (`store.notifications`). A subscription's history,
/// the consent screen, exports and the dashboard's feed read it through here.
public struct NotificationTable {
    let db: any SQLConnection
    let headers: JWSHeaderTable

    /// The table's columns, in its order.
    enum Column: Int, StoreColumn {
        case id, notificationUuid, version, type, subtype, signedMs, receivedMs, originalTransactionId, transactionId,
             productId, environment, ownership, bodySha256, bodyFormat, body, source, bundleId, graceExpiresMs, autoRenew,
             autoRenewProductId

        func value(in row: Written) -> SQLBindable? {
            let n = row.notification, e = n.event
            switch self {
            case .id: return nil
            case .notificationUuid: return e.notificationUUID
            case .version: return e.version
            case .type: return e.type.rawValue
            case .subtype: return e.subtype?.rawValue
            case .signedMs: return e.signedDate
            case .receivedMs: return n.receivedDate
            case .originalTransactionId: return e.originalTransactionId
            case .transactionId: return e.transactionId
            case .productId: return e.productId
            case .environment: return e.environment
            case .ownership: return n.ownership?.rawValue
            case .bodySha256: return n.bodySHA256
            case .bodyFormat: return row.format
            case .body: return row.stored
            case .source: return n.source
            case .bundleId: return n.bundleId
            case .graceExpiresMs: return e.graceExpires
            case .autoRenew: return e.autoRenew
            case .autoRenewProductId: return e.autoRenewProductId
            }
        }
    }

    /// A notification as written: its body in the form it is stored in.
    struct Written {
        let notification: StoredNotification
        let format: Int
        let stored: Data
    }

    static let table = StoreTable<Column>("notifications", key: .notificationUuid)
    static let insert = table.insert(excluding: [.id])
    /// What a notification's summary reads (`event(_:)`).
    static let eventColumns: [Column] = [.notificationUuid, .version, .type, .subtype, .signedMs, .originalTransactionId,
                                         .transactionId, .productId, .environment]
    static let summary = table.selection(eventColumns)
    static let summaryAndApp = table.selection(eventColumns + [.bundleId])
    /// A notification with its body.
    static let whole = table.selection(eventColumns + [.receivedMs, .bodySha256, .body, .source, .bodyFormat, .bundleId, .id])
    static let uuidAndSubscription = table.selection([.notificationUuid, .originalTransactionId])
    static let uuidAndReceived = table.selection([.notificationUuid, .receivedMs])
    /// A subscription's history reads each event with what its renewal info said.
    static let withRenewal = table.selection(eventColumns + [.graceExpiresMs, .autoRenew, .autoRenewProductId])
    static let selectEventsOf = """
        SELECT \(withRenewal.list) FROM notifications WHERE original_transaction_id = ? ORDER BY signed_ms, notification_uuid
        """

    /// A notification's summary from a row of a selection holding `eventColumns`.
    static func event(_ r: ColumnRow<Column>) -> NotificationEvent {
        NotificationEvent(notificationUUID: r.string(.notificationUuid), version: r.int(.version),
                          type: NotificationType(rawValue: r.string(.type)),
                          subtype: r.optionalString(.subtype).map(NotificationSubtype.init(rawValue:)), signedDate: r.int64(.signedMs),
                          originalTransactionId: r.optionalString(.originalTransactionId),
                          transactionId: r.optionalString(.transactionId), productId: r.optionalString(.productId),
                          environment: r.optionalString(.environment))
    }

    /// A notification with its body, from a row of `whole`; its app only when `withApp`
    /// (the reads that never said it still do not).
    private func stored(_ row: SQLRow, withApp: Bool) throws -> StoredNotification {
        let r = Self.whole.row(row)
        return StoredNotification(event: Self.event(r), receivedDate: r.int64(.receivedMs), bodySHA256: r.string(.bodySha256),
                                  body: try body(format: r.int(.bodyFormat), stored: r.data(.body)),
                                  source: r.optionalString(.source), bundleId: withApp ? r.optionalString(.bundleId) : nil)
    }

    // MARK: Writing

    /// Stores `n`, its body compacted when it decodes back to the very same bytes.
    public func insert(_ n: StoredNotification) throws { try insert(n, compact: nil) }

    /// Stores `n`. - Parameter compact: the body's compact form prepared from the JWS pieces
    /// verification decoded (`CompactBody.prepare`), when the caller has it; else the body is
    /// decoded again here to compact it.
    func insert(_ n: StoredNotification, compact prepared: CompactBody.Prepared?) throws {
        var format = 0
        var stored = n.body
        // Compact only what decodes back to the very same bytes; the rest is kept as it came.
        if let compact = try prepared.map({ try $0.assemble(headerId: headers.id) })
            ?? CompactBody.encode(n.body, headerId: headers.id) {
            format = 1
            stored = compact
        }
        try db.run(Self.insert.sql, Self.insert.values(Written(notification: n, format: format, stored: stored)))
    }

    /// The body exactly as received, whatever form it is stored in.
    func body(format: Int, stored: Data) throws -> Data {
        switch format {
        case 0: return stored
        case 1: return try CompactBody.decode(stored, header: headers.segment)
        default: throw StoreError(operation: "read body", message: "unknown body format \(format)", code: 0)
        }
    }

    // MARK: One notification

    /// The body digest of the stored notification with this UUID, if one is stored.
    public func digest(uuid: String) throws -> String? {
        try db.text("SELECT body_sha256 FROM notifications WHERE notification_uuid = ?", [uuid])
    }

    /// The UUID of a stored notification whose body is byte-identical to one with this digest.
    public func uuid(bodySHA256: String) throws -> String? {
        try db.text("SELECT notification_uuid FROM notifications WHERE body_sha256 = ? LIMIT 1", [bodySHA256])
    }

    /// Whether a notification with this UUID is stored.
    public func contains(uuid: String) throws -> Bool {
        try db.first("SELECT 1 FROM notifications WHERE notification_uuid = ?", [uuid]) { _ in true } ?? false
    }

    /// When the notification `uuid` was stored, if it is.
    public func received(uuid: String) throws -> Millis? {
        try db.integer("SELECT received_ms FROM notifications WHERE notification_uuid = ?", [uuid])
    }

    /// A stored notification's summary, without reading its body.
    public func event(uuid: String) throws -> NotificationEvent? {
        try db.first("SELECT \(Self.summary.list) FROM notifications WHERE notification_uuid = ?", [uuid]) {
            Self.event(Self.summary.row($0))
        }
    }

    /// A stored notification's event and the bundle id it was signed for (nil when unknown).
    func eventAndApp(uuid: String) throws -> (NotificationEvent, String?)? {
        try db.first("SELECT \(Self.summaryAndApp.list) FROM notifications WHERE notification_uuid = ?", [uuid]) {
            let r = Self.summaryAndApp.row($0)
            return (Self.event(r), r.optionalString(.bundleId))
        }
    }

    /// The notification `uuid` with its body, if it is stored.
    public func find(uuid: String) throws -> StoredNotification? {
        try db.first("SELECT \(Self.whole.list) FROM notifications WHERE notification_uuid = ?", [uuid]) {
            try stored($0, withApp: false)
        }
    }

    /// The app the newest stored notification about a subscription was signed for, if any says.
    public func bundleId(originalTransactionId otid: String) throws -> String? {
        try db.text("""
            SELECT bundle_id FROM notifications WHERE original_transaction_id = ? AND bundle_id IS NOT NULL
            ORDER BY signed_ms DESC LIMIT 1
            """, [otid])
    }

    // MARK: Many

    /// Stored notifications received at or after `since`, newest first; with `app`, only its.
    public func list(since: Millis? = nil, limit: Int = 100, app: AppScope? = nil) throws -> [StoredNotification] {
        let own = Store.appCondition(app)
        return try db.rows("""
            SELECT \(Self.whole.list) FROM notifications
            WHERE received_ms >= ?\(own.sql) ORDER BY received_ms DESC, id DESC LIMIT ?
            """, [since ?? 0] + own.values + [limit]) { try stored($0, withApp: true) }
    }

    /// Notifications received at or after `since` with a row id above `afterId`, in the
    /// order they were stored, `count` at a time: an export walks a store of any size in
    /// pages, holding one page in memory.
    public func page(since: Millis? = nil, afterId: Int64, count: Int,
                     app: AppScope? = nil) throws -> [(id: Int64, notification: StoredNotification)] {
        let own = Store.appCondition(app)
        return try db.rows("""
            SELECT \(Self.whole.list) FROM notifications
            WHERE received_ms >= ? AND id > ?\(own.sql) ORDER BY id LIMIT ?
            """, [since ?? 0, afterId] + own.values + [count]) { row in
            (Self.whole.row(row).int64(.id), try stored(row, withApp: false))
        }
    }

    /// Every stored RESCIND_CONSENT, newest signed first, with its body; with `app`, its.
    /// The type is written into the statement, not bound: the partial index on these rows
    /// (migration 17) is used only for a condition the planner can see implies its own.
    public func consentWithdrawals(app: AppScope? = nil) throws -> [StoredNotification] {
        let own = Store.appCondition(app)
        return try db.rows("""
            SELECT \(Self.whole.list) FROM notifications
            WHERE type = 'RESCIND_CONSENT'\(own.sql) ORDER BY signed_ms DESC, notification_uuid
            """, own.values) { try stored($0, withApp: false) }
    }

    /// Every stored RESCIND_CONSENT's UUID and subscription, newest signed first, without
    /// the bodies, through the same partial index; with `app`, its.
    public func consentWithdrawalKeys(app: AppScope? = nil) throws -> [(uuid: String, originalTransactionId: String?)] {
        let own = Store.appCondition(app)
        return try db.rows("""
            SELECT \(Self.uuidAndSubscription.list) FROM notifications
            WHERE type = 'RESCIND_CONSENT'\(own.sql) ORDER BY signed_ms DESC, notification_uuid
            """, own.values) { row in
            let r = Self.uuidAndSubscription.row(row)
            return (uuid: r.string(.notificationUuid), originalTransactionId: r.optionalString(.originalTransactionId))
        }
    }

    /// Notifications of `type` received at or after `since`, oldest first.
    public func received(type: NotificationType, since: Millis) throws -> [(uuid: String, received: Millis)] {
        return try db.rows("""
            SELECT \(Self.uuidAndReceived.list) FROM notifications WHERE type = ? AND received_ms >= ? ORDER BY received_ms, id
            """, [type.rawValue, since]) { row in
            let r = Self.uuidAndReceived.row(row)
            return (uuid: r.string(.notificationUuid), received: r.int64(.receivedMs))
        }
    }

    /// A subscription's notifications for its history, each with what its renewal info said
    /// (the grace period's end: a gap's grace, `MetricContributions.recoveredWithinGrace`).
    func events(originalTransactionId otid: String) throws -> [NotificationEvent] {
        try db.rows(Self.selectEventsOf, [otid]) { row in
            let r = Self.withRenewal.row(row)
            var event = Self.event(r)
            event.graceExpires = r.optionalInt64(.graceExpiresMs)
            event.autoRenew = r.optionalInt64(.autoRenew).map { $0 != 0 }
            event.autoRenewProductId = r.optionalString(.autoRenewProductId)
            return event
        }
    }

    // MARK: Counts

    /// What `bodyStatistics` sums over rows of `size`: how many, and their bytes.
    enum CountAndBytes: Int, SelectedValues {
        case count, bytes
        var sql: String { self == .count ? "count(*)" : "IFNULL(sum(size), 0)" }
    }

    /// Stored size of V2 notification bodies against their size as received.
    public func bodyStatistics() throws -> (count: Int, storedBytes: Int64, jwsHeaders: Int, headerBytes: Int64) {
        let read = { (sizes: String) in
            try db.first("SELECT \(CountAndBytes.list) FROM (\(sizes)) AS sized") { row -> (Int, Int64) in
                let r = CountAndBytes.row(row)
                return (r.int(.count), r.int64(.bytes))
            } ?? (0, 0)
        }
        let bodies = try read("""
            SELECT length(body) AS size FROM notifications WHERE version = 2 AND source IS DISTINCT FROM 'generate'
            """)
        let headers = try read("SELECT length(segment) AS size FROM jws_headers")
        return (bodies.0, bodies.1, headers.0, headers.1)
    }

    /// How long after signing the notifications received in [since, until] arrived, newest
    /// first, at most `atMost` of them, in order (a clock ahead of Apple's reads 0).
    public func lags(since: Millis, until: Millis, atMost: Int) throws -> [Millis] {
        try db.integers("""
            SELECT received_ms - signed_ms FROM notifications WHERE received_ms >= ? AND received_ms <= ?
            ORDER BY received_ms DESC LIMIT ?
            """, [since, until, atMost]).map { max(0, $0) }.sorted()
    }

    public func count() throws -> Int {
        try db.count("SELECT count(*) FROM notifications")
    }

    /// How many notifications were received at or after `since`.
    public func count(since: Millis, app: AppScope? = nil) throws -> Int {
        let own = Store.appCondition(app)
        return try db.count("SELECT count(*) FROM notifications WHERE received_ms >= ?\(own.sql)", [since] + own.values)
    }

    /// When the newest notification of `app` was received; nil when it has none.
    public func lastReceived(app: AppScope) throws -> Millis? {
        let own = Store.appCondition(app)
        return try db.optionalInteger("SELECT max(received_ms) FROM notifications WHERE 1 = 1\(own.sql)", own.values)
    }

    /// What `lastReceivedByEnvironment` selects.
    enum NewestByEnvironment: Int, SelectedValues {
        case environment, newest
        var sql: String {
            switch self {
            case .environment: return "environment"
            case .newest: return "max(received_ms)"
            }
        }
    }

    /// When `app`'s newest stored notification of each environment was received.
    public func lastReceivedByEnvironment(app: AppScope) throws -> [String: Millis] {
        let own = Store.appCondition(app)
        var last: [String: Millis] = [:]
        try db.query("""
            SELECT \(NewestByEnvironment.list) FROM notifications WHERE environment IS NOT NULL\(own.sql) GROUP BY environment
            """, own.values) {
            let r = NewestByEnvironment.row($0)
            last[r.string(.environment)] = r.int64(.newest)
        }
        return last
    }
}

/// The JWS header segments compact bodies refer to by id (`jws_headers`), cached both ways:
/// every body signed with one certificate chain carries the same header. The cache is
/// dropped whenever the connection rolls back, as an id it holds may be one the rollback
/// undid.
final class JWSHeaderTable {
    let db: any SQLConnection
    private var ids: [LongTextKey: Int64] = [:]
    private var segments: [Int64: String] = [:]
    private var rollbacks = 0

    init(db: any SQLConnection) { self.db = db }

    private func validate() {
        if rollbacks != db.rollbacks {
            ids.removeAll()
            segments.removeAll()
            rollbacks = db.rollbacks
        }
    }

    private func remember(_ id: Int64, _ segment: String) {
        ids[LongTextKey(text: segment)] = id
        segments[id] = segment
    }

    /// Stores JWS header segments not stored yet, each in a write of its own, before a
    /// batch that needs them. PostgreSQL writers storing side by side would otherwise all
    /// insert the one header in their batches at once and wait on one another. Outside a
    /// write only; SQLite needs none of this. A segment already stored is not inserted at
    /// all: PostgreSQL takes an id from the column's counter for an insert that then finds
    /// the row there, and the next new header's id would depend on how many connections
    /// had met this one (ingest's checkers would store other ids than a single writer).
    func register(_ segments: [String]) throws {
        guard db.dialect.writersRunSideBySide, !db.isInTransaction else { return }
        validate()
        for segment in segments where ids[LongTextKey(text: segment)] == nil {
            try db.run("INSERT OR IGNORE INTO jws_headers (segment) SELECT ? WHERE NOT EXISTS (SELECT 1 FROM jws_headers WHERE segment = ?)",
                       [segment, segment])
            if let id = try db.integer("SELECT id FROM jws_headers WHERE segment = ?", [segment]) { remember(id, segment) }
        }
    }

    /// The id of a JWS header segment, stored on first sight.
    func id(_ segment: String) throws -> Int64 {
        validate()
        if let id = ids[LongTextKey(text: segment)] { return id }
        let id: Int64
        if let existing = try db.integer("SELECT id FROM jws_headers WHERE segment = ?", [segment]) {
            id = existing
        } else {
            try db.run("INSERT INTO jws_headers (segment) VALUES (?)", [segment])
            id = try db.lastInsertRowID()
        }
        remember(id, segment)
        return id
    }

    /// The segment stored as `id`.
    func segment(_ id: Int64) throws -> String {
        validate()
        if let s = segments[id] { return s }
        guard let s = try db.text("SELECT segment FROM jws_headers WHERE id = ?", [id]) else {
            throw StoreError(operation: "read body", message: "JWS header #\(id) is missing", code: 0)
        }
        remember(id, s)
        return s
    }
}

extension Store {
    /// Every accepted notification.
    public var notifications: NotificationTable { NotificationTable(db: db, headers: headers) }
}
