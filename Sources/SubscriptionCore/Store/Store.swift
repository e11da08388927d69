import Foundation

/// The subdesk store: the only place that speaks SQL.
///
/// One `Store` wraps one connection, to a SQLite file or a PostgreSQL database
/// (`postgres://...`), and is used from one thread at a time; open another `Store` on the
/// same location for another thread or process. On SQLite, WAL mode lets readers run
/// beside the single writer; on PostgreSQL, intake writers also run side by side
/// (`write(touching:)`). Statements are written once, in SQLite's dialect, and
/// `PostgresConnection` rewrites what PostgreSQL spells otherwise.
public final class Store {
    let db: any SQLConnection
    public let path: String
    /// JWS header segment <-> id, both ways; valid while `headerCacheRollbacks` matches.
    private var headerIds: [LongTextKey: Int64] = [:]
    private var headerSegments: [Int64: String] = [:]
    private var headerCacheRollbacks = 0
    /// Daily-count deltas are summed here while a write transaction runs and written just
    /// before it commits (many notifications of a batch add to the same hour bucket); while
    /// bulk loading, across transactions until `flushMetrics()`.
    private var deferringMetrics = false
    private var pendingMetrics: [MetricRowKey: Int] = [:]
    /// Changes to how many subscriptions have each status, held and written the same way:
    /// at the end of a write, in status order, so concurrent writers (PostgreSQL) hold
    /// these few shared rows only while they commit.
    private var pendingStatusCounts: [Int: Int] = [:]
    /// Intake outcomes counted for the on-call metrics, held the same way: written in key
    /// order just before commit, or concurrent batches taking these shared rows in different
    /// orders deadlock (PostgreSQL).
    private var pendingIntakeCounts: [IntakeCountKey: (count: Int, last: Millis)] = [:]

    struct IntakeCountKey: Hashable, Comparable {
        var environment: String
        var type: String
        var outcome: String
        var reason: String

        static func < (a: Self, b: Self) -> Bool {
            (a.environment, a.type, a.outcome, a.reason) < (b.environment, b.type, b.outcome, b.reason)
        }
    }

    struct MetricRowKey: Hashable {
        var bucket: Millis
        var key: String
        var segment: CountSegment
    }

    /// Sums daily-count deltas in memory until `flushMetrics()`, for bulk loads.
    public func deferMetrics(_ on: Bool) throws {
        if !on { try flushMetrics() }
        deferringMetrics = on
    }

    public func flushMetrics() throws {
        let pending = pendingMetrics.filter { $0.value != 0 }.sorted {
            ($0.key.bucket, $0.key.key, $0.key.segment.rawValue) < ($1.key.bucket, $1.key.key, $1.key.segment.rawValue)
        }
        pendingMetrics.removeAll()
        let statuses = pendingStatusCounts.filter { $0.value != 0 }.sorted { $0.key < $1.key }
        pendingStatusCounts.removeAll()
        let intakeCounts = pendingIntakeCounts.sorted { $0.key < $1.key }
        pendingIntakeCounts.removeAll()
        for (key, held) in intakeCounts { try writeIntakeCount(key, count: held.count, last: held.last) }
        for (status, delta) in statuses {
            try db.run("""
                INSERT INTO status_counts (status, count) VALUES (?, ?)
                ON CONFLICT (status) DO UPDATE SET count = status_counts.count + excluded.count
                """, [status, delta])
        }
        // PostgreSQL answers each statement over the wire: many rows go in one statement.
        let rowsPerStatement = dialect == .postgres ? 100 : 1
        var start = 0
        while start < pending.count {
            let chunk = pending[start..<min(pending.count, start + rowsPerStatement)]
            var values: [SQLBindable?] = []
            values.reserveCapacity(chunk.count * 4)
            for (k, delta) in chunk { values += [k.bucket, k.key, k.segment.rawValue, delta] }
            try db.run("""
                INSERT INTO metric_buckets (bucket, key, segment, delta) VALUES \(Array(repeating: "(?,?,?,?)", count: chunk.count).joined(separator: ","))
                ON CONFLICT (bucket, key, segment) DO UPDATE SET delta = metric_buckets.delta + excluded.delta
                """, values)
            start += chunk.count
        }
    }

    /// How a command may open a store.
    public enum OpenMode: Sendable {
        /// A command that writes and may start a store: creates a missing one (and its folder).
        case createIfMissing
        /// A command that writes to a store that must already exist (CGI intake, operator actions).
        case existing
        /// A command that only reads: the store must exist; one written by a newer subdesk is
        /// opened without touching its schema (`newerSchemaVersion` says so).
        case reading
    }

    /// Set when the store's schema is newer than this build knows and it was opened for reading.
    public private(set) var newerSchemaVersion: Int?
    /// Whether the store was read as a snapshot of its file, without the lock files that
    /// let it see another process's writes (a reader that cannot create them).
    public private(set) var readAsSnapshot = false
    /// Whether this connection cannot write (the file or its folder is not writable).
    public private(set) var isReadOnly = false
    /// The by-segment aggregates' missing part as a reader last summed it, with the change
    /// counter it was summed at (`segmentOverlay`).
    var segmentOverlayCache: (version: Int, overlay: SegmentOverlay)?
    /// Whether opening created the file.
    public private(set) var wasCreated = false

    /// Opens the store at `path` as `mode` allows and brings its schema up to date. A new
    /// store file is created readable and writable by its owner only (0600); SQLite gives its
    /// -wal and -shm files the same mode.
    public init(path: String, busyTimeoutMs: Int32 = Store.defaultBusyTimeoutMs, mode: OpenMode = .createIfMissing) throws {
        if PostgresLocation.isPostgres(path) {
            self.path = PostgresLocation.redacted(path)
            let opened = try Store.openPostgres(try PostgresLocation(path), mode: mode, busyTimeoutMs: busyTimeoutMs)
            db = opened.connection
            wasCreated = opened.created
            isReadOnly = opened.readOnly
            newerSchemaVersion = opened.newerSchemaVersion
            return
        }
        if let problem = PostgresLocation.keywordStringProblem(path) {
            throw StoreError(operation: "open the store named by --db (db =, SUBDESK_DB)", message: problem, code: 0)
        }
        self.path = path
        if path != ":memory:" {
            var isDirectory: ObjCBool = false
            let exists = FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory)
            if isDirectory.boolValue {
                throw StoreError(operation: "open \(path)", message: "is a directory, not a store file", code: 14)
            }
            if !exists {
                guard mode == .createIfMissing else { throw StoreNotFound(path: path) }
                try Store.createEmptyFile(path)
                wasCreated = true
            }
        }
        // SQLite needs the file and its folder (for the -wal and -shm files) writable to
        // write; say which is not, rather than SQLite's "attempt to write a readonly database".
        let unwritable = path == ":memory:" ? nil : Store.unwritableReason(path)
        if let unwritable, mode != .reading {
            throw StoreError(operation: "open \(path)", message: "cannot write to it: \(unwritable)", code: 8)
        }
        if let unwritable {
            // A reader without write access reads the file as it is, schema included. A store
            // in WAL mode also needs its -shm file, which this user may not be able to create:
            // then the file is read as a snapshot, and said so.
            let shared = try SQLiteConnection(path: path, readOnly: true, busyTimeoutMs: busyTimeoutMs)
            if (try? shared.first("PRAGMA user_version") { $0.int(0) }) != nil {
                db = shared
            } else {
                db = try SQLiteConnection(path: path, readOnly: true, immutable: true, busyTimeoutMs: busyTimeoutMs)
                readAsSnapshot = true
            }
            let version = schemaVersion
            if version < Migrations.latestVersion {
                throw StoreError(operation: "open \(path)", message: """
                    schema version \(version) needs bringing up to date (to \(Migrations.latestVersion)), which this \
                    user cannot do: \(unwritable); run any subdesk command on it once as a user who can write it
                    """, code: 8)
            }
            if version > Migrations.latestVersion { newerSchemaVersion = version }
            isReadOnly = true
            return
        }
        do {
            db = try SQLiteConnection(path: path, busyTimeoutMs: busyTimeoutMs)
            try enableWAL(busyTimeoutMs: busyTimeoutMs)
            try db.execute("PRAGMA synchronous = NORMAL")
            try db.execute("PRAGMA foreign_keys = ON")
            // Inside a write transaction, every statement that may fail half-way (an upsert,
            // an insert into a table with a unique index) keeps the pages it changes in a
            // statement journal. On disk that is a temporary file and two writes per page:
            // ten system calls per notification on the intake path. Kept in memory instead.
            try db.execute("PRAGMA temp_store = MEMORY")
            let version = schemaVersion
            if version > Migrations.latestVersion {
                guard mode == .reading else {
                    throw StoreError(operation: "open \(path)", message: """
                        schema version \(version) was written by a newer subdesk (this one knows up to \
                        \(Migrations.latestVersion)); refusing to change it: use the newer subdesk (read-only \
                        commands such as show and search still open it)
                        """, code: 0)
                }
                newerSchemaVersion = version
            } else {
                try migrate()
            }
        } catch let e as StoreError {
            throw Store.explained(e, path: path)
        }
    }

    /// Why this process cannot write the store at `path`, or nil when it can.
    static func unwritableReason(_ path: String) -> String? {
        guard access(path, F_OK) == 0 else { return nil }
        if access(path, W_OK) != 0 {
            return errno == EROFS ? "it is on a read-only file system"
                : "the file is not writable by this user (\(String(cString: strerror(errno))))"
        }
        let dir = (path as NSString).deletingLastPathComponent
        if access(dir.isEmpty ? "." : dir, W_OK) != 0 {
            return "its folder \(dir.isEmpty ? "." : dir) is not writable by this user, and SQLite keeps its -wal and -shm files there"
        }
        return nil
    }

    /// Creates an empty store file, and its folder, readable and writable by the owner only.
    private static func createEmptyFile(_ path: String) throws {
        let dir = (path as NSString).deletingLastPathComponent
        if !dir.isEmpty && !FileManager.default.fileExists(atPath: dir) {
            do {
                try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            } catch {
                throw StoreError(operation: "create directory \(dir)", message: "\(error.localizedDescription)", code: 14)
            }
        }
        let fd = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
        if fd < 0 {
            let code = errno
            // Another process may have created it meanwhile; that is fine.
            if code == EEXIST { return }
            throw StoreError(operation: "create \(path)", message: String(cString: strerror(code)), code: 14)
        }
        close(fd)
    }

    /// SQLite says "disk I/O error" for more than one cause; say which one it is when we can.
    static func explained(_ e: StoreError, path: String) -> StoreError {
        let dir = (path as NSString).deletingLastPathComponent
        guard let attributes = try? FileManager.default.attributesOfFileSystem(forPath: dir.isEmpty ? "." : dir),
              let free = (attributes[.systemFreeSize] as? NSNumber)?.int64Value, free < 1 << 20 else { return e }
        return StoreError(operation: e.operation, message: "\(e.message); the disk is full (\(free) bytes free)", code: e.code)
    }

    /// How long a writer waits for another process's write to finish before giving up.
    public static let defaultBusyTimeoutMs: Int32 = 10_000

    /// An in-memory store, for tests. With SUBDESK_TEST_POSTGRES set to a postgres:// URI,
    /// a store in a new schema of that database instead, so the suite runs on both engines.
    public static func inMemory() throws -> Store { try Store(path: testLocation(file: ":memory:")) }

    /// Where a test keeps a store it opens by location: `file`, or with SUBDESK_TEST_POSTGRES
    /// set, a new schema of that database, so such tests run on both engines too.
    public static func testLocation(file: String) -> String {
        if let base = ProcessInfo.processInfo.environment["SUBDESK_TEST_POSTGRES"], !base.isEmpty {
            return freshPostgresLocation(base)
        }
        return file
    }

    /// `base` (a postgres:// URI) with a schema of its own that no store uses yet.
    public static func freshPostgresLocation(_ base: String) -> String {
        let name = "t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(20)
        return base + (base.contains("?") ? "&" : "?") + "schema=" + name
    }

    /// WAL mode is kept in the file, so only the first open of a new store converts it.
    /// Converting needs the write lock while holding a read lock, and SQLite answers BUSY
    /// at once there instead of calling the busy handler (waiting could deadlock two
    /// upgraders). A burst of CGI processes on a new store hits exactly that, so the
    /// conversion is retried here within the same busy timeout.
    private func enableWAL(busyTimeoutMs: Int32) throws {
        let deadline = Date().addingTimeInterval(Double(max(busyTimeoutMs, 0)) / 1000)
        var pause = 0.001
        while true {
            do {
                try db.execute("PRAGMA journal_mode = WAL")
                return
            } catch let error as StoreError where error.isBusy && Date() < deadline {
                Thread.sleep(forTimeInterval: pause)
                pause = min(pause * 2, 0.05)
            }
        }
    }

    // MARK: Schema

    public var schemaVersion: Int {
        if dialect == .postgres { return (try? db.first("SELECT version FROM schema_version") { $0.int(0) }) ?? 0 }
        return (try? db.first("PRAGMA user_version") { $0.int(0) }) ?? 0
    }

    /// The engine the store lives in.
    public var dialect: SQLDialect { db.dialect }

    private func migrate() throws {
        let current = schemaVersion
        guard current < Migrations.latestVersion else { return }
        try db.writeTransaction {
            // Re-read inside the lock: another process may have migrated meanwhile.
            let version = schemaVersion
            for m in Migrations.all where m.version > version {
                try db.execute(m.sql)
                try db.execute("PRAGMA user_version = \(m.version)")
            }
        }
    }

    // MARK: Transactions

    /// Runs `body` as one atomic write; nested calls join the outer write (a throw from
    /// one makes the outer write roll back; use `savepoint` to undo a part alone).
    @discardableResult
    public func write<T>(_ body: () throws -> T) throws -> T {
        if db.isInTransaction { return try db.joined(body) }
        return try transaction(begin: nil, body)
    }

    /// One write transaction started by `begin` (the connection's exclusive start when
    /// nil): the held counts are written before it commits, and dropped if it fails.
    private func transaction<T>(begin: String?, _ body: () throws -> T) throws -> T {
        try transaction(start: { try db.execute(begin ?? db.beginWrite) }, body)
    }

    private func transaction<T>(start: () throws -> Void, _ body: () throws -> T) throws -> T {
        do {
            return try db.writeTransaction(start: start) {
                let result = try body()
                if !deferringMetrics { try flushMetrics() }
                return result
            }
        } catch {
            if !deferringMetrics {
                pendingMetrics.removeAll()
                pendingStatusCounts.removeAll()
                pendingIntakeCounts.removeAll()
            }
            throw error
        }
    }

    /// Runs `body` as one atomic write that changes only the subscriptions `keys` names
    /// (original transaction ids) besides what every write adds to (notifications, counts).
    /// On SQLite that is `write`. On PostgreSQL such writes run side by side, each holding
    /// its subscriptions' locks; a write that lost a race for a shared row (a deadlock, a
    /// subscriber two writers created at once) is run again, up to five times. `body` must
    /// be safe to run again: it reads what it decides on inside the write.
    @discardableResult
    public func write<T>(touching keys: [String], _ body: () throws -> T) throws -> T {
        #if SUBDESK_NO_POSTGRES
        return try write(body)
        #else
        guard let postgres = db as? PostgresConnection, !db.isInTransaction else { return try write(body) }
        var attempt = 0
        while true {
            attempt += 1
            do {
                return try transaction(start: { try postgres.beginWrite(touching: keys) }, body)
            } catch let e as StoreError where e.isConflict && attempt < 5 && !deferringMetrics {
                continue
            }
        }
        #endif
    }

    /// Runs `body` so that its writes are undone alone if it throws, inside or outside a write.
    public func savepoint<T>(_ body: () throws -> T) throws -> T {
        let pendingBefore = (pendingMetrics, pendingStatusCounts, pendingIntakeCounts)
        do {
            if db.isInTransaction { return try db.savepoint(body) }
            return try write { try db.savepoint(body) }
        } catch {
            (pendingMetrics, pendingStatusCounts, pendingIntakeCounts) = pendingBefore
            throw error
        }
    }

    /// Closes a store whose file another file has replaced at its path (a new demo, a
    /// restore), leaving the files SQLite keeps beside that path to the replacing store.
    /// The store cannot be used afterwards. Does nothing for PostgreSQL, which has no file.
    public func closeAfterReplacement() {
        (db as? SQLiteConnection)?.closeAfterReplacement()
    }

    /// Changes whenever another connection commits to this database.
    public func dataVersion() throws -> Int {
        #if !SUBDESK_NO_POSTGRES
        if let postgres = db as? PostgresConnection { return try postgres.changeVersion() }
        #endif
        return try db.first("PRAGMA data_version") { $0.int(0) } ?? 0
    }

    // MARK: Notifications

    /// The body digest of the stored notification with this UUID, if one is stored.
    public func notificationDigest(uuid: String) throws -> String? {
        try db.first("SELECT body_sha256 FROM notifications WHERE notification_uuid = ?", [uuid]) { $0.string(0) }
    }

    /// The UUID of a stored notification whose body is byte-identical to one with this digest.
    public func notificationUUID(bodySHA256: String) throws -> String? {
        try db.first("SELECT notification_uuid FROM notifications WHERE body_sha256 = ? LIMIT 1", [bodySHA256]) { $0.string(0) }
    }

    /// - Parameter pieces: the body's JWS pieces as verification decoded them, when the
    ///   caller has them (the compact form is then built without decoding the body again).
    public func insertNotification(_ n: StoredNotification, pieces: NotificationPieces? = nil) throws {
        let e = n.event
        var format = 0
        var stored = n.body
        // Compact only what decodes back to the very same bytes; the rest is kept as it came.
        if let compact = try pieces.flatMap({ try CompactBody.encode(n.body, pieces: $0, headerId: headerId) })
            ?? CompactBody.encode(n.body, headerId: headerId) {
            format = 1
            stored = compact
        }
        try db.run("""
            INSERT INTO notifications (notification_uuid, version, type, subtype, signed_ms, received_ms,
                original_transaction_id, transaction_id, product_id, environment, ownership, body_sha256, body_format,
                body, source)
            VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)
            """, [e.notificationUUID, e.version, e.type, e.subtype, e.signedDate, n.receivedDate,
                  e.originalTransactionId, e.transactionId, e.productId, e.environment, n.ownership, n.bodySHA256,
                  format, stored, n.source])
    }

    /// Adds `delta` to an aggregate; written when the write around it commits.
    func addToMetric(bucket: Millis, key: String, segment: CountSegment, delta: Int) throws {
        pendingMetrics[MetricRowKey(bucket: bucket, key: key, segment: segment), default: 0] += delta
        if !deferringMetrics && !db.isInTransaction { try flushMetrics() }
    }

    private func validateHeaderCache() {
        if headerCacheRollbacks != db.rollbacks {
            headerIds.removeAll()
            headerSegments.removeAll()
            headerCacheRollbacks = db.rollbacks
        }
    }

    /// The id of a JWS header segment, stored on first sight.
    /// Stores JWS header segments not stored yet, each in a write of its own, before a
    /// batch that needs them. Every body signed with one certificate chain carries the
    /// same header: PostgreSQL writers storing side by side would otherwise all insert it
    /// in their batches at once and wait on one another. Outside a write only; SQLite
    /// needs none of this.
    public func registerHeaders(_ segments: [String]) throws {
        guard dialect == .postgres, !db.isInTransaction else { return }
        validateHeaderCache()
        for segment in segments where headerIds[LongTextKey(text: segment)] == nil {
            try db.run("INSERT OR IGNORE INTO jws_headers (segment) VALUES (?)", [segment])
            if let id = try db.first("SELECT id FROM jws_headers WHERE segment = ?", [segment], { $0.int64(0) }) {
                headerIds[LongTextKey(text: segment)] = id
                headerSegments[id] = segment
            }
        }
    }

    func headerId(_ segment: String) throws -> Int64 {
        validateHeaderCache()
        if let id = headerIds[LongTextKey(text: segment)] { return id }
        let id: Int64
        if let existing = try db.first("SELECT id FROM jws_headers WHERE segment = ?", [segment], { $0.int64(0) }) {
            id = existing
        } else {
            try db.run("INSERT INTO jws_headers (segment) VALUES (?)", [segment])
            id = try db.lastInsertRowID()
        }
        headerIds[LongTextKey(text: segment)] = id
        headerSegments[id] = segment
        return id
    }

    func headerSegment(_ id: Int64) throws -> String {
        validateHeaderCache()
        if let s = headerSegments[id] { return s }
        guard let s = try db.first("SELECT segment FROM jws_headers WHERE id = ?", [id], { $0.string(0) }) else {
            throw StoreError(operation: "read body", message: "JWS header #\(id) is missing", code: 0)
        }
        headerSegments[id] = s
        headerIds[LongTextKey(text: s)] = id
        return s
    }

    /// The body exactly as received, whatever form it is stored in.
    func body(format: Int, stored: Data) throws -> Data {
        switch format {
        case 0: return stored
        case 1: return try CompactBody.decode(stored, header: headerSegment)
        default: throw StoreError(operation: "read body", message: "unknown body format \(format)", code: 0)
        }
    }

    static let eventColumns = "notification_uuid, version, type, subtype, signed_ms, original_transaction_id, transaction_id, product_id, environment"

    static func event(_ r: SQLRow, from i: Int32 = 0) -> NotificationEvent {
        NotificationEvent(notificationUUID: r.string(i), version: r.int(i + 1), type: r.string(i + 2),
                          subtype: r.optionalString(i + 3), signedDate: r.int64(i + 4),
                          originalTransactionId: r.optionalString(i + 5), transactionId: r.optionalString(i + 6),
                          productId: r.optionalString(i + 7), environment: r.optionalString(i + 8))
    }

    /// Stored notifications received at or after `since`, newest first.
    public func notifications(since: Millis? = nil, limit: Int = 100) throws -> [StoredNotification] {
        try db.rows("""
            SELECT \(Store.eventColumns), received_ms, body_sha256, body, source, body_format FROM notifications
            WHERE received_ms >= ? ORDER BY received_ms DESC, id DESC LIMIT ?
            """, [since ?? 0, limit]) { r in
            StoredNotification(event: Store.event(r), receivedDate: r.int64(9), bodySHA256: r.string(10),
                               body: try body(format: r.int(13), stored: r.data(11)), source: r.optionalString(12))
        }
    }

    /// Notifications received at or after `since` with a row id above `afterId`, in the
    /// order they were stored, `count` at a time: an export walks a store of any size in
    /// pages, holding one page in memory.
    public func notificationPage(since: Millis? = nil, afterId: Int64, count: Int) throws -> [(id: Int64, notification: StoredNotification)] {
        try db.rows("""
            SELECT \(Store.eventColumns), received_ms, body_sha256, body, source, body_format, id FROM notifications
            WHERE received_ms >= ? AND id > ? ORDER BY id LIMIT ?
            """, [since ?? 0, afterId, count]) { r in
            (r.int64(14), StoredNotification(event: Store.event(r), receivedDate: r.int64(9), bodySHA256: r.string(10),
                                              body: try body(format: r.int(13), stored: r.data(11)), source: r.optionalString(12)))
        }
    }

    /// How many notifications were received at or after `since`.
    public func notificationCount(since: Millis) throws -> Int {
        try db.first("SELECT count(*) FROM notifications WHERE received_ms >= ?", [since]) { $0.int(0) } ?? 0
    }

    /// A stored notification's summary, without reading its body.
    public func notificationEvent(uuid: String) throws -> NotificationEvent? {
        try db.first("SELECT \(Store.eventColumns) FROM notifications WHERE notification_uuid = ?", [uuid]) { Store.event($0) }
    }

    public func notification(uuid: String) throws -> StoredNotification? {
        try db.first("""
            SELECT \(Store.eventColumns), received_ms, body_sha256, body, source, body_format FROM notifications
            WHERE notification_uuid = ?
            """, [uuid]) { r in
            StoredNotification(event: Store.event(r), receivedDate: r.int64(9), bodySHA256: r.string(10),
                               body: try body(format: r.int(13), stored: r.data(11)), source: r.optionalString(12))
        }
    }

    public func notificationCount() throws -> Int {
        try db.first("SELECT count(*) FROM notifications") { $0.int(0) } ?? 0
    }

    // MARK: Quarantine and intake log

    /// Keeps a rejected body. The same body refused for the same reason again (a retrying
    /// sender, a flood of identical junk) is counted on its first entry, not stored again.
    /// - Parameters:
    ///   - body: what is kept of the body: all of it, or a prefix when `trueLength` is larger.
    ///   - trueLength: the body's length when `body` is only a prefix.
    ///   - budgetBytes: the most body bytes the quarantine keeps in all; past it, only the
    ///     digest, length and count of a new body are kept.
    @discardableResult
    public func quarantine(body: Data, reason: String, source: String?, receivedDate: Millis, bodySHA256: String,
                           trueLength: Int? = nil, budgetBytes: Int64? = nil) throws -> (id: Int64, bodyKept: Bool) {
        if let seen = try db.first("""
            SELECT id FROM quarantine WHERE body_sha256 = ? AND resolved_ms IS NULL AND reason = ? ORDER BY id LIMIT 1
            """, [bodySHA256, reason], { $0.int64(0) }) {
            try db.run("UPDATE quarantine SET times_seen = times_seen + 1, last_seen_ms = ?, source = ? WHERE id = ?",
                       [receivedDate, source, seen])
            return (seen, true)
        }
        let kept = body
        if let budgetBytes, try quarantineKeptBytes() + Int64(body.count) > budgetBytes {
            // Past the budget a new body keeps nothing of itself, so a row for each would still
            // grow the store with every request: they are counted on one row instead.
            return (try countPastBudget(reason: reason, source: source, receivedDate: receivedDate, bytes: trueLength ?? body.count), false)
        }
        try db.run("""
            INSERT INTO quarantine (received_ms, reason, body, body_sha256, source, body_bytes, times_seen, last_seen_ms)
            VALUES (?,?,?,?,?,?,1,?)
            """, [receivedDate, reason, kept, bodySHA256, source, trueLength ?? body.count, receivedDate])
        return (try db.lastInsertRowID(), kept.count == body.count)
    }

    /// What stands for a body's digest on the row that counts bodies refused past the budget.
    static let pastBudgetDigest = "past-budget"

    /// Counts one more body refused past the budget on the row that counts them (times
    /// seen, their bytes, the latest reason and sender); its id.
    private func countPastBudget(reason: String, source: String?, receivedDate: Millis, bytes: Int) throws -> Int64 {
        let summary = "past the quarantine budget: refused bodies counted here, not kept; the latest: "
            + String(reason.prefix(200))
        if let row = try db.first("""
            SELECT id FROM quarantine WHERE body_sha256 = ? AND resolved_ms IS NULL ORDER BY id LIMIT 1
            """, [Store.pastBudgetDigest], { $0.int64(0) }) {
            try db.run("""
                UPDATE quarantine SET times_seen = times_seen + 1, body_bytes = body_bytes + ?, last_seen_ms = ?, source = ?,
                    reason = ? WHERE id = ?
                """, [bytes, receivedDate, source, summary, row])
            return row
        }
        try db.run("""
            INSERT INTO quarantine (received_ms, reason, body, body_sha256, source, body_bytes, times_seen, last_seen_ms)
            VALUES (?,?,?,?,?,?,1,?)
            """, [receivedDate, summary, Data(), Store.pastBudgetDigest, source, bytes, receivedDate])
        return try db.lastInsertRowID()
    }

    /// The body bytes the quarantine keeps, resolved entries included.
    public func quarantineKeptBytes() throws -> Int64 {
        try db.first("SELECT coalesce(sum(length(body)), 0) FROM quarantine") { $0.int64(0) } ?? 0
    }

    /// Entries whose body was not kept whole (over the size limit, or past the budget).
    public func quarantineEntriesWithoutWholeBody() throws -> Int {
        try db.first("SELECT count(*) FROM quarantine WHERE length(body) < body_bytes") { $0.int(0) } ?? 0
    }

    /// Deletes quarantine entries last seen before `before`; returns how many and their body bytes.
    public func purgeQuarantine(before: Millis) throws -> (entries: Int, bytes: Int64) {
        let predicate = "coalesce(last_seen_ms, received_ms) < ?"
        let bytes = try db.first("SELECT coalesce(sum(length(body)), 0) FROM quarantine WHERE \(predicate)", [before]) { $0.int64(0) } ?? 0
        let entries = try db.run("DELETE FROM quarantine WHERE \(predicate)", [before])
        return (entries, bytes)
    }

    /// Quarantined bodies, newest first; resolved ones only when asked.
    public func quarantined(limit: Int = 100, includeResolved: Bool = false, ids: [Int64]? = nil) throws -> [QuarantineEntry] {
        var sql = """
            SELECT id, received_ms, reason, body, source, resolved_ms, resolution, coalesce(body_bytes, length(body)),
                times_seen, coalesce(last_seen_ms, received_ms) FROM quarantine WHERE true
            """
        var values: [SQLBindable?] = []
        if !includeResolved { sql += " AND resolved_ms IS NULL" }
        if let ids {
            sql += " AND id IN (\(ids.map { _ in "?" }.joined(separator: ",")))"
            values += ids.map { $0 as SQLBindable? }
        }
        values.append(limit)
        return try db.rows(sql + " ORDER BY id DESC LIMIT ?", values) { r in
            QuarantineEntry(id: r.int64(0), receivedDate: r.int64(1), reason: r.string(2), body: r.data(3),
                            source: r.optionalString(4), resolved: r.optionalInt64(5), resolution: r.optionalString(6),
                            bodyBytes: r.int(7), timesSeen: r.int(8), lastSeen: r.int64(9))
        }
    }

    public func resolveQuarantine(id: Int64, resolution: String, at: Millis) throws {
        try db.run("UPDATE quarantine SET resolved_ms = ?, resolution = ? WHERE id = ?", [at, resolution, id])
    }

    /// Quarantined bodies not yet resolved by a replay.
    public func quarantineCount() throws -> Int {
        try db.first("SELECT count(*) FROM quarantine WHERE resolved_ms IS NULL") { $0.int(0) } ?? 0
    }

    public func logIntake(_ e: IntakeLogEntry) throws {
        try db.run("""
            INSERT INTO intake_log (received_ms, result, notification_uuid, type, subtype,
                original_transaction_id, product_id, environment, detail, source) VALUES (?,?,?,?,?,?,?,?,?,?)
            """, [e.receivedDate, e.result.rawValue, e.notificationUUID, e.type, e.subtype,
                  e.originalTransactionId, e.productId, e.environment, e.detail, e.source])
        try countIntake(e)
    }

    /// Adds one outcome to `intake_counts`, the counters the on-call metrics read. Called for
    /// every body intake answers, logged or not (a flood past the quarantine's budget logs
    /// one line a minute but counts every body).
    func countIntake(_ e: IntakeLogEntry) throws {
        let key = IntakeCountKey(environment: e.environment ?? "", type: e.type ?? "", outcome: e.result.rawValue,
                                 reason: e.result == .rejected ? RejectionClass.of(reason: e.detail).rawValue : "")
        guard db.isInTransaction else { return try writeIntakeCount(key, count: 1, last: e.receivedDate) }
        let held = pendingIntakeCounts[key] ?? (0, e.receivedDate)
        pendingIntakeCounts[key] = (held.count + 1, max(held.last, e.receivedDate))
    }

    private func writeIntakeCount(_ key: IntakeCountKey, count: Int, last: Millis) throws {
        let latest = dialect == .sqlite ? "max(intake_counts.last_ms, excluded.last_ms)" : "greatest(intake_counts.last_ms, excluded.last_ms)"
        try db.run("""
            INSERT INTO intake_counts (environment, type, outcome, reason, count, last_ms) VALUES (?,?,?,?,?,?)
            ON CONFLICT (environment, type, outcome, reason) DO UPDATE SET count = intake_counts.count + excluded.count, last_ms = \(latest)
            """, [key.environment, key.type, key.outcome, key.reason, count, last])
    }

    /// Whether a refusal logged at or after `since` says `mark` (through the time index).
    func hasIntakeLine(containing mark: String, since: Millis) throws -> Bool {
        try db.first("""
            SELECT 1 FROM intake_log WHERE received_ms >= ? AND result = 'rejected' AND detail LIKE ? LIMIT 1
            """, [since, "%" + mark + "%"]) { _ in true } ?? false
    }

    /// Intake outcomes newer than `afterId`, newest first.
    public func intakeLog(afterId: Int64 = 0, limit: Int = 200) throws -> [IntakeLogEntry] {
        try db.rows("""
            SELECT id, received_ms, result, notification_uuid, type, subtype, original_transaction_id,
                product_id, environment, detail, source FROM intake_log WHERE id > ? ORDER BY id DESC LIMIT ?
            """, [afterId, limit]) { r in
            IntakeLogEntry(id: r.int64(0), receivedDate: r.int64(1),
                           result: IntakeLogEntry.Result(rawValue: r.string(2)) ?? .rejected,
                           notificationUUID: r.optionalString(3), type: r.optionalString(4),
                           subtype: r.optionalString(5), originalTransactionId: r.optionalString(6),
                           productId: r.optionalString(7), environment: r.optionalString(8), detail: r.optionalString(9),
                           source: r.optionalString(10))
        }
    }

    /// Count of intake outcomes per minute over the last `minutes` minutes ending at `now`, oldest first.
    public func intakeRate(minutes: Int, now: Millis) throws -> [Int] {
        let start = now - Millis(minutes) * 60_000
        var buckets = Array(repeating: 0, count: minutes)
        try db.query("""
            SELECT (received_ms - ?) / 60000 AS bucket, count(*) FROM intake_log
            WHERE received_ms >= ? AND received_ms < ? GROUP BY bucket
            """, [start, start, now]) { r in
            let b = r.int(0)
            if b >= 0 && b < minutes { buckets[b] = r.int(1) }
        }
        return buckets
    }

    // MARK: Transactions and renewal info

    static let transactionColumns = """
        transaction_id, original_transaction_id, product_id, subscription_group, purchase_ms, original_purchase_ms,
        expires_ms, revocation_ms, revocation_reason, is_upgraded, offer_type, offer_identifier, offer_discount_type,
        ownership, transaction_reason, price, currency, environment, app_account_token, signed_ms,
        web_order_line_item_id, bundle_id, type, storefront, notification_signed_ms, source_uuid, payload, app_transaction_id
        """

    static func transaction(_ r: SQLRow) -> TransactionRecord {
        var t = TransactionRecord(
            transactionId: r.string(0), originalTransactionId: r.string(1), productId: r.string(2),
            subscriptionGroupIdentifier: r.optionalString(3), purchaseDate: r.int64(4),
            originalPurchaseDate: r.optionalInt64(5), expiresDate: r.optionalInt64(6),
            revocationDate: r.optionalInt64(7), revocationReason: r.optionalInt(8), isUpgraded: r.bool(9),
            offerType: r.optionalInt(10), offerIdentifier: r.optionalString(11),
            offerDiscountType: r.optionalString(12), ownershipType: r.string(13),
            transactionReason: r.optionalString(14), price: r.optionalInt64(15), currency: r.optionalString(16),
            environment: AppStoreEnvironment(rawValue: r.string(17)), appAccountToken: r.optionalString(18),
            signedDate: r.int64(19), webOrderLineItemId: r.optionalString(20), bundleId: r.optionalString(21),
            type: r.optionalString(22), storefront: r.optionalString(23), notificationSignedDate: r.optionalInt64(24),
            sourceNotificationUUID: r.optionalString(25), payload: r.isNull(26) ? nil : r.data(26))
        t.appTransactionId = r.optionalString(27)
        t.adoptPayloadFields()
        return t
    }

    public func transaction(id: String) throws -> TransactionRecord? {
        try db.first(Store.selectTransaction, [id], Store.transaction)
    }

    /// Inserts or replaces the stored version of a transaction. Callers decide which version wins.
    public func putTransaction(_ t: TransactionRecord) throws {
        try db.run(Store.upsertTransaction, [t.transactionId, t.originalTransactionId, t.productId, t.subscriptionGroupIdentifier,
                  t.purchaseDate, t.originalPurchaseDate, t.expiresDate, t.revocationDate, t.revocationReason,
                  t.isUpgraded, t.offerType, t.offerIdentifier, t.offerDiscountType, t.ownershipType,
                  t.transactionReason, t.price, t.currency, t.environment.rawValue, t.appAccountToken,
                  t.signedDate, t.webOrderLineItemId, t.bundleId, t.type, t.storefront, t.notificationSignedDate,
                  t.sourceNotificationUUID, t.payload, t.appTransactionId])
    }

    // Statements built once: interpolating the column lists on every call costs more than running them.
    static let selectTransaction = "SELECT \(transactionColumns) FROM transactions WHERE transaction_id = ?"
    static let selectTransactionsOf = "SELECT \(transactionColumns) FROM transactions WHERE original_transaction_id = ?"
    static let upsertTransaction = """
        INSERT INTO transactions (\(transactionColumns))
        VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)
        ON CONFLICT (transaction_id) DO UPDATE SET \(transactionUpdates)
        """
    static let selectRenewal = "SELECT \(renewalColumns) FROM renewal_info WHERE original_transaction_id = ?"
    static let upsertRenewal = """
        INSERT INTO renewal_info (\(renewalColumns)) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)
        ON CONFLICT (original_transaction_id) DO UPDATE SET \(renewalUpdates)
        """
    static let selectEventsOf = """
        SELECT \(eventColumns) FROM notifications WHERE original_transaction_id = ? ORDER BY signed_ms, notification_uuid
        """

    static let renewalColumns = """
        original_transaction_id, product_id, auto_renew_product_id, auto_renew, expiration_intent, billing_retry,
        grace_expires_ms, price_increase_status, offer_type, offer_identifier, renewal_ms, renewal_price, currency,
        environment, signed_ms, notification_signed_ms, source_uuid, payload
        """

    public func renewal(originalTransactionId: String) throws -> RenewalRecord? {
        try db.first(Store.selectRenewal, [originalTransactionId]) { r in
            var renewal = RenewalRecord(originalTransactionId: r.string(0), productId: r.optionalString(1),
                          autoRenewProductId: r.optionalString(2), autoRenewStatus: r.bool(3),
                          expirationIntent: r.optionalInt(4), isInBillingRetryPeriod: r.bool(5),
                          gracePeriodExpiresDate: r.optionalInt64(6), priceIncreaseStatus: r.optionalInt(7),
                          offerType: r.optionalInt(8), offerIdentifier: r.optionalString(9),
                          renewalDate: r.optionalInt64(10), renewalPrice: r.optionalInt64(11),
                          currency: r.optionalString(12), environment: AppStoreEnvironment(rawValue: r.string(13)),
                          signedDate: r.int64(14), notificationSignedDate: r.optionalInt64(15),
                          sourceNotificationUUID: r.optionalString(16), payload: r.isNull(17) ? nil : r.data(17))
            renewal.adoptPayloadFields()
            return renewal
        }
    }

    public func putRenewal(_ r: RenewalRecord) throws {
        try db.run(Store.upsertRenewal, [r.originalTransactionId, r.productId, r.autoRenewProductId, r.autoRenewStatus, r.expirationIntent,
                  r.isInBillingRetryPeriod, r.gracePeriodExpiresDate, r.priceIncreaseStatus, r.offerType,
                  r.offerIdentifier, r.renewalDate, r.renewalPrice, r.currency, r.environment.rawValue, r.signedDate,
                  r.notificationSignedDate, r.sourceNotificationUUID, r.payload])
    }

    /// Everything stored about one subscription.
    public func history(originalTransactionId otid: String) throws -> SubscriptionHistory {
        let transactions = try db.rows(Store.selectTransactionsOf, [otid], Store.transaction)
        let events = try db.rows(Store.selectEventsOf, [otid]) { Store.event($0) }
        return SubscriptionHistory(originalTransactionId: otid, transactions: transactions,
                                   renewal: try renewal(originalTransactionId: otid), events: events)
    }

    // MARK: Subscribers

    static func subscriber(_ r: SQLRow, from i: Int32 = 0) -> Subscriber {
        Subscriber(id: r.int64(i), userId: r.optionalString(i + 1), appAccountToken: r.optionalString(i + 2))
    }

    public func subscriber(id: Int64) throws -> Subscriber? {
        try db.first("SELECT id, user_id, app_account_token FROM subscribers WHERE id = ?", [id]) { Store.subscriber($0) }
    }

    /// The subscriber a subscription owned by `current` belongs to, creating or re-linking as
    /// the token says: a token names one subscriber; a subscription without one keeps its
    /// owner or gets a new one.
    private func resolveSubscriber(current: Int64?, appAccountToken token: String?, now: Millis) throws -> Int64 {
        if let token {
            if let owner = try db.first("SELECT id FROM subscribers WHERE app_account_token = ?", [token], { $0.int64(0) }) {
                return owner
            }
            if let current, let s = try subscriber(id: current), s.appAccountToken == nil {
                try db.run("UPDATE subscribers SET app_account_token = ? WHERE id = ?", [token, current])
                return current
            }
            try db.run("INSERT INTO subscribers (app_account_token, created_ms) VALUES (?, ?)", [token, now])
            return try db.lastInsertRowID()
        }
        if let current { return current }
        try db.run("INSERT INTO subscribers (created_ms) VALUES (?)", [now])
        return try db.lastInsertRowID()
    }

    /// Adds a subscriber as given, for generated stores.
    public func insertSubscriber(userId: String?, appAccountToken: String?, now: Millis) throws -> Int64 {
        try db.run("INSERT INTO subscribers (user_id, app_account_token, created_ms) VALUES (?,?,?)", [userId, appAccountToken, now])
        return try db.lastInsertRowID()
    }

    /// Secondary indexes set aside during a bulk load, by name with the SQL that builds them.
    private var suspendedIndexes: [(name: String, sql: String)] = []
    /// Whether a search text (lower-cased) is answered from the trigram index: see `textCondition`.
    var searchPlans: [String: SearchPlan] = [:]
    /// UPDATE statements for a subscription row by which indexed columns change (a bit each).
    private var subscriptionUpdates: [Int: (sql: String, columns: [Int])] = [:]

    /// The checkpoint interval `subdesk ingest` uses: 40 MB of WAL.
    public static let batchCheckpointPages = 10_000

    /// For a process that writes many batches in a row (`subdesk ingest` of a file): move
    /// the WAL's pages into the database every `pages` pages instead of SQLite's 1,000.
    ///
    /// A batch of 500 notifications changes about 1,000 pages, so by default every batch
    /// ends in a checkpoint: pages the next batch changes again are copied each time, and
    /// both files are synced each time. The WAL grows to `pages` × 4 KB meanwhile, and the
    /// last connection to close checkpoints what is left.
    public func checkpointEvery(pages: Int) throws {
        guard dialect == .sqlite else { return }
        try db.execute("PRAGMA wal_autocheckpoint = \(max(1, pages))")
    }

    /// Trades durability for speed while bulk-loading a store that can be rebuilt.
    ///
    /// Indexes that only speed up reads (not the unique ones, which keep rows apart) are
    /// dropped while loading and built again at the end: building one from all rows at once
    /// sorts them in a single pass, where keeping it up to date sends every insert to a
    /// random page of it.
    public func setBulkLoading(_ on: Bool) throws {
        guard dialect == .sqlite else { return }
        if on {
            // No journal and a large page cache: each page is written once, at the end.
            try db.execute("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA cache_size = -524288")
            let indexes = try db.rows("""
                SELECT name, sql FROM sqlite_schema WHERE type = 'index' AND sql IS NOT NULL AND sql NOT LIKE 'CREATE UNIQUE%'
                """) { (name: $0.string(0), sql: $0.string(1)) }
            try write { for index in indexes { try db.execute("DROP INDEX \"\(index.name)\"") } }
            suspendedIndexes += indexes
        } else {
            let indexes = suspendedIndexes
            try write { for index in indexes { try db.execute(index.sql) } }
            suspendedIndexes.removeAll()
            // The search index takes in the loaded subscriptions at once, as the indexes did.
            try refreshSearchIndex()
            try db.execute("PRAGMA cache_size = -2000; PRAGMA synchronous = NORMAL; PRAGMA journal_mode = WAL")
        }
    }

    /// Links an application user id to the subscriber that owns `originalTransactionId`.
    public func linkUser(_ userId: String, originalTransactionId otid: String) throws {
        try write {
            guard let owner = try db.first("SELECT subscriber_id FROM subscriptions WHERE original_transaction_id = ?", [otid], { $0.int64(0) }) else {
                throw StoreError(operation: "link user \(userId)", message: "no subscription with originalTransactionId \(otid)", code: 0)
            }
            if let other = try db.first("SELECT id FROM subscribers WHERE user_id = ?", [userId], { $0.int64(0) }), other != owner {
                // The user already has a subscriber: move this subscription to it.
                try db.run("UPDATE subscriptions SET subscriber_id = ? WHERE subscriber_id = ?", [other, owner])
                try dropSubscriberIfEmpty(owner)
                return
            }
            try db.run("UPDATE subscribers SET user_id = ? WHERE id = ?", [userId, owner])
        }
    }

    // MARK: Derived state

    /// Saves a subscription's derived state and moves the daily-count aggregates from its
    /// previous share to `metrics`.
    public func saveState(_ s: SubscriptionState, subscriberId: Int64, now: Millis, metrics: MetricContributions) throws {
        try saveState(s, subscriberId: subscriberId, stored: try storedShare(s.originalTransactionId), now: now, metrics: metrics)
    }

    /// Saves a subscription's derived state with the subscriber `appAccountToken` names (see
    /// `resolveSubscriber`), reading the stored row once for both.
    public func saveState(_ s: SubscriptionState, appAccountToken token: String?, now: Millis, metrics: MetricContributions) throws {
        let stored = try storedShare(s.originalTransactionId)
        let subscriber = try resolveSubscriber(current: stored?.subscriberId, appAccountToken: token, now: now)
        try saveState(s, subscriberId: subscriber, stored: stored, now: now, metrics: metrics)
    }

    /// What a saved subscription row already holds: its owner, status, share of the counts,
    /// and the values of its other indexed columns.
    private typealias StoredShare = (subscriberId: Int64, status: Int, metrics: MetricContributions, blob: Data?, indexed: [SQLBindable?])

    /// Reads `metrics` and then the columns of `indexedSubscriptionColumnNames`, in that order.
    private func storedShare(_ otid: String) throws -> StoredShare? {
        try db.first("""
            SELECT metrics, subscriber_id, product_id, status, expires_ms, app_account_token, last_event_ms
            FROM subscriptions WHERE original_transaction_id = ?
            """, [otid]) {
            let blob = $0.isNull(0) ? nil : $0.data(0)
            return ($0.int64(1), $0.int(3), blob.map(MetricContributions.init(encoded:)) ?? MetricContributions(), blob,
                    [$0.int64(1), $0.string(2), $0.int(3), $0.optionalInt64(4), $0.optionalString(5), $0.optionalInt64(6)])
        }
    }

    private func saveState(_ s: SubscriptionState, subscriberId: Int64, stored: StoredShare?, now: Millis,
                           metrics: MetricContributions) throws {
        let previous = stored?.metrics ?? MetricContributions()
        if stored?.status != s.status.rawValue {
            if let old = stored?.status { pendingStatusCounts[old, default: 0] -= 1 }
            pendingStatusCounts[s.status.rawValue, default: 0] += 1
        }
        let share = try moveShare(s.originalTransactionId, to: metrics, from: stored?.blob, decoded: previous)
        let values: [SQLBindable?] = [s.originalTransactionId, subscriberId, s.productId, s.status.rawValue, s.entitled, s.expiresDate,
                  s.purchaseDate, s.originalPurchaseDate, s.latestTransactionId, s.autoRenewStatus,
                  s.autoRenewProductId, s.pendingChange?.kind, s.pendingChange?.productId, s.gracePeriodExpiresDate,
                  s.isInBillingRetryPeriod, s.expirationIntent, s.priceIncreaseStatus, s.offerType,
                  s.offerIdentifier, s.offerDiscountType, s.isTrial, s.ownershipType, s.environment,
                  s.appAccountToken, s.upgradedFrom.joined(separator: ","), s.revokedTransactionIds.joined(separator: ","),
                  s.lastEventDate, s.lastNotificationType, now, share]
        guard let stored else {
            try db.run(Store.upsertSubscription, values)
            return
        }
        // SQLite keeps up every index over a column the SET names, changed or not: name an
        // indexed column only when its value changes (a renewal moves the expiry and the
        // last event, and leaves owner, product and token as they were).
        var changed = 0
        for (bit, column) in Store.indexedSubscriptionColumns.enumerated()
            where !Store.sameValue(values[column], stored.indexed[bit]) { changed |= 1 << bit }
        let update: (sql: String, columns: [Int])
        if let known = subscriptionUpdates[changed] {
            update = known
        } else {
            update = Store.subscriptionUpdate(changing: changed)
            subscriptionUpdates[changed] = update
        }
        try db.run(update.sql, update.columns.map { values[$0] } + [s.originalTransactionId])
        if stored.subscriberId != subscriberId { try dropSubscriberIfEmpty(stored.subscriberId) }
    }

    /// A subscriber that owns no subscription and carries no user id is no one (a token
    /// whose subscription moved to the owner a newer version names, say): it goes, so
    /// look-ups and search do not find an owner of nothing. The foreign key keeps any
    /// subscriber that still owns something.
    func dropSubscriberIfEmpty(_ id: Int64) throws {
        try db.run("""
            DELETE FROM subscribers WHERE id = ? AND user_id IS NULL
            AND NOT EXISTS (SELECT 1 FROM subscriptions WHERE subscriber_id = ?)
            """, [id, id])
    }

    /// The columns an index other than the key's covers, in the order `storedShare` reads them.
    static let indexedSubscriptionColumnNames = ["subscriber_id", "product_id", "status", "expires_ms",
                                                 "app_account_token", "last_event_ms"]
    static let subscriptionColumnNames = columnNames(subscriptionColumns)
    /// Their positions in `subscriptionColumns`.
    static let indexedSubscriptionColumns = indexedSubscriptionColumnNames.map { subscriptionColumnNames.firstIndex(of: $0)! }

    /// The UPDATE for a stored subscription row, and the positions in `subscriptionColumns`
    /// of the values it binds before the key: every column but the key, and of the indexed
    /// ones only those whose bit is set in `changing`.
    static func subscriptionUpdate(changing: Int) -> (sql: String, columns: [Int]) {
        let columns = (1..<subscriptionColumnNames.count).filter { column in
            guard let bit = indexedSubscriptionColumns.firstIndex(of: column) else { return true }
            return changing & (1 << bit) != 0
        }
        let sql = "UPDATE subscriptions SET " + columns.map { "\(subscriptionColumnNames[$0]) = ?" }.joined(separator: ", ")
            + " WHERE original_transaction_id = ?"
        return (sql, columns)
    }

    /// Whether a value about to be bound equals one read back from the store.
    static func sameValue(_ a: SQLBindable?, _ b: SQLBindable?) -> Bool {
        switch (a, b) {
        case (nil, nil): return true
        case let (x as Int64, y as Int64): return x == y
        case let (x as Int, y as Int): return x == y
        case let (x as String, y as String): return x == y
        default: return false
        }
    }

    static let upsertSubscription = """
        INSERT INTO subscriptions (\(subscriptionColumns))
        VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)
        ON CONFLICT (original_transaction_id) DO UPDATE SET \(subscriptionUpdates)
        """

    static let subscriptionColumns = """
        original_transaction_id, subscriber_id, product_id, status, entitled, expires_ms, purchase_ms, original_purchase_ms,
        latest_transaction_id, auto_renew, auto_renew_product_id, pending_change_kind, pending_change_product_id,
        grace_expires_ms, billing_retry, expiration_intent, price_increase_status, offer_type, offer_identifier,
        offer_discount_type, is_trial, ownership, environment, app_account_token, upgraded_from, revoked_transactions,
        last_event_ms, last_notification_type, updated_ms, metrics
        """

    /// `a = excluded.a, b = excluded.b, ...` for an upsert that updates a row in place
    /// (REPLACE would delete and re-insert it, touching every index twice).
    static func updateAll(_ columns: String, except key: String) -> String {
        columnNames(columns).filter { $0 != key }.map { "\($0) = excluded.\($0)" }.joined(separator: ", ")
    }

    /// The names in a comma-separated column list.
    static func columnNames(_ columns: String) -> [String] {
        columns.split(separator: ",").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
    }

    static let transactionUpdates = updateAll(transactionColumns, except: "transaction_id")
    static let renewalUpdates = updateAll(renewalColumns, except: "original_transaction_id")
    static let subscriptionUpdates = updateAll(subscriptionColumns, except: "original_transaction_id")

    static let stateColumns = """
        s.original_transaction_id, s.product_id, s.status, s.entitled, s.expires_ms, s.purchase_ms,
        s.original_purchase_ms, s.latest_transaction_id, s.auto_renew, s.auto_renew_product_id, s.pending_change_kind,
        s.pending_change_product_id, s.grace_expires_ms, s.billing_retry, s.expiration_intent, s.price_increase_status,
        s.offer_type, s.offer_identifier, s.offer_discount_type, s.is_trial, s.ownership, s.environment,
        s.app_account_token, s.upgraded_from, s.revoked_transactions, s.last_event_ms, s.last_notification_type,
        b.id, b.user_id, b.app_account_token
        """

    static func row(_ r: SQLRow) -> SubscriptionRow {
        func list(_ i: Int32) -> [String] { r.string(i).split(separator: ",").map(String.init) }
        let pending = r.optionalString(10).map {
            SubscriptionState.PendingChange(kind: $0, productId: r.string(11), effectiveDate: r.optionalInt64(4))
        }
        let state = SubscriptionState(
            originalTransactionId: r.string(0), productId: r.string(1),
            status: SubscriptionStatus(rawValue: r.int(2)) ?? .expired, entitled: r.bool(3),
            expiresDate: r.optionalInt64(4), purchaseDate: r.optionalInt64(5), originalPurchaseDate: r.optionalInt64(6),
            latestTransactionId: r.optionalString(7), autoRenewStatus: r.bool(8), autoRenewProductId: r.optionalString(9),
            pendingChange: pending, gracePeriodExpiresDate: r.optionalInt64(12), isInBillingRetryPeriod: r.bool(13),
            expirationIntent: r.optionalInt(14), priceIncreaseStatus: r.optionalInt(15), offerType: r.optionalInt(16),
            offerIdentifier: r.optionalString(17), offerDiscountType: r.optionalString(18), isTrial: r.bool(19),
            ownershipType: r.string(20), environment: r.string(21), appAccountToken: r.optionalString(22),
            upgradedFrom: list(23), revokedTransactionIds: list(24), lastEventDate: r.optionalInt64(25),
            lastNotificationType: r.optionalString(26))
        return SubscriptionRow(subscriber: Store.subscriber(r, from: 27), state: state)
    }

    static let rowSource = "subscriptions s JOIN subscribers b ON b.id = s.subscriber_id"

    public func subscription(originalTransactionId otid: String) throws -> SubscriptionRow? {
        try db.first("SELECT \(Store.stateColumns) FROM \(Store.rowSource) WHERE s.original_transaction_id = ?", [otid], Store.row)
    }

    public func subscriptions(subscriberId: Int64) throws -> [SubscriptionRow] {
        try db.rows("SELECT \(Store.stateColumns) FROM \(Store.rowSource) WHERE s.subscriber_id = ? ORDER BY s.original_purchase_ms",
                    [subscriberId], Store.row)
    }

    public func subscriptionCount() throws -> Int {
        try db.first("SELECT count(*) FROM subscriptions") { $0.int(0) } ?? 0
    }

    /// Finds the subscriber an id names: a user id, appAccountToken, originalTransactionId,
    /// transactionId, or the appTransactionId (the app download) their purchases carry.
    public func lookup(_ id: String) throws -> Subscriber? {
        if let s = try db.first("SELECT id, user_id, app_account_token FROM subscribers WHERE user_id = ? OR app_account_token = ?",
                                [id, id], { Store.subscriber($0) }) {
            return s
        }
        let otid = try db.first("SELECT original_transaction_id FROM subscriptions WHERE original_transaction_id = ?", [id]) { $0.string(0) }
            ?? db.first("SELECT original_transaction_id FROM transactions WHERE transaction_id = ?", [id]) { $0.string(0) }
            ?? originalTransactionId(appTransactionId: id)
        guard let otid else { return nil }
        return try db.first("""
            SELECT b.id, b.user_id, b.app_account_token FROM subscriptions s JOIN subscribers b ON b.id = s.subscriber_id
            WHERE s.original_transaction_id = ?
            """, [otid]) { Store.subscriber($0) }
    }

    /// The subscription an app transaction (the app's download) bought, by the newest
    /// stored transaction that names it.
    public func originalTransactionId(appTransactionId: String) throws -> String? {
        try db.first("""
            SELECT original_transaction_id FROM transactions WHERE app_transaction_id = ? ORDER BY purchase_ms DESC LIMIT 1
            """, [appTransactionId]) { $0.string(0) }
    }

    /// Transactions that belong to no subscription (consumables, non-consumables, non-renewing
    /// purchases) whose transactionId or originalTransactionId is `id`.
    public func purchases(id: String) throws -> [TransactionRecord] {
        try db.rows("""
            SELECT \(Store.transactionColumns) FROM transactions t
            WHERE (t.transaction_id = ?1 OR t.original_transaction_id = ?1)
              AND NOT EXISTS (SELECT 1 FROM subscriptions s WHERE s.original_transaction_id = t.original_transaction_id)
            ORDER BY t.purchase_ms, t.transaction_id
            """, [id], Store.transaction)
    }

    /// Purchases (as `purchases(id:)`) whose transactionId starts with `prefix`.
    public func searchPurchases(_ prefix: String, limit: Int = 50) throws -> [TransactionRecord] {
        try db.rows("""
            SELECT \(Store.transactionColumns) FROM transactions t
            WHERE t.transaction_id >= ?1 AND t.transaction_id < ?2
              AND NOT EXISTS (SELECT 1 FROM subscriptions s WHERE s.original_transaction_id = t.original_transaction_id)
            ORDER BY t.transaction_id LIMIT ?3
            """, [prefix, prefix + "\u{10FFFF}", limit], Store.transaction)
    }

    /// Subscriptions with `text` anywhere in their ids, product, or owner's user id or
    /// token (ASCII case ignored), those holding a transaction whose id starts with
    /// `text`, and those bought from the app download (appTransactionId) `text`. Every character in `text` means itself (`%` and `_` too).
    public func search(_ text: String, limit: Int = 50) throws -> [SubscriptionRow] {
        let match = try textCondition(text, placeholder: "?1")
        return try db.rows("""
            SELECT \(Store.stateColumns) FROM \(Store.rowSource)
            WHERE s.original_transaction_id IN (
                SELECT s.original_transaction_id FROM \(Store.rowSource) WHERE \(match.sql)
                UNION SELECT original_transaction_id FROM transactions WHERE transaction_id >= ?2 AND transaction_id < ?3
                UNION SELECT original_transaction_id FROM transactions WHERE app_transaction_id = ?2
                LIMIT ?4)
            ORDER BY s.original_transaction_id LIMIT ?4
            """,
            [match.value, text, text + "\u{10FFFF}", limit], Store.row)
    }
}
