import CSQLite
import Foundation

private let transientDestructor = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)

/// Binds one parameter of a SQLite statement in place, as the value hands itself over.
struct SQLiteParameter: SQLValueSink {
    let statement: OpaquePointer
    let index: Int32
    var rc: Int32 = SQLITE_OK

    mutating func null() { rc = sqlite3_bind_null(statement, index) }
    mutating func integer(_ value: Int64) { rc = sqlite3_bind_int64(statement, index, value) }
    mutating func real(_ value: Double) { rc = sqlite3_bind_double(statement, index, value) }
    mutating func text(_ value: String) {
        // Native strings are contiguous UTF-8: bind them in place, with their length.
        if let bound = value.utf8.withContiguousStorageIfAvailable({ buffer in
            sqlite3_bind_text(statement, index, UnsafeRawPointer(buffer.baseAddress ?? UnsafePointer(bitPattern: 1)!)
                                .assumingMemoryBound(to: CChar.self), Int32(buffer.count), transientDestructor)
        }) {
            rc = bound
            return
        }
        rc = sqlite3_bind_text(statement, index, value, -1, transientDestructor)
    }
    mutating func blob(_ value: Data) {
        rc = value.withUnsafeBytes { raw in
            sqlite3_bind_blob(statement, index, raw.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(raw.count), transientDestructor)
        }
    }
}

/// A SQLite statement positioned on a result row.
struct SQLiteRow {
    let statement: OpaquePointer

    func isNull(_ i: Int32) -> Bool { sqlite3_column_type(statement, i) == SQLITE_NULL }
    func int64(_ i: Int32) -> Int64 { sqlite3_column_int64(statement, i) }
    func double(_ i: Int32) -> Double { sqlite3_column_double(statement, i) }
    func string(_ i: Int32) -> String {
        guard let p = sqlite3_column_text(statement, i) else { return "" }
        return String(cString: p)
    }
    func data(_ i: Int32) -> Data {
        let count = Int(sqlite3_column_bytes(statement, i))
        guard count > 0, let p = sqlite3_column_blob(statement, i) else { return Data() }
        return Data(bytes: p, count: count)
    }
    func value(_ i: Int32) -> SQLValue {
        switch sqlite3_column_type(statement, i) {
        case SQLITE_NULL: return .null
        case SQLITE_INTEGER: return .integer(int64(i))
        case SQLITE_FLOAT: return .real(double(i))
        case SQLITE_BLOB: return .blob(data(i))
        default: return .text(string(i))
        }
    }
}

extension StoreError {
    /// Another connection holds the lock this one needed.
    var isBusy: Bool { sqlState == nil && code & 0xff == SQLITE_BUSY }

    /// Busy, locked, full, read-only, or the file could not be read or opened.
    static func isTransient(sqliteCode code: Int32) -> Bool {
        let primary = code & 0xff
        return primary == SQLITE_BUSY || primary == SQLITE_LOCKED || primary == SQLITE_FULL
            || primary == SQLITE_READONLY || primary == SQLITE_IOERR || primary == SQLITE_CANTOPEN
    }
}

extension SQLDialect {
    public static let sqlite = SQLDialect(
        name: "sqlite", displayName: "SQLite", find: "instr", greatest: "max", lineFeed: "char(10)",
        // WAL keeps a read transaction's snapshot from its first read.
        beginRead: "BEGIN",
        rowsPerInsert: 1,
        writersRunSideBySide: false, hasSearchIndex: true,
        // A waiting writer polls every few milliseconds however long it has waited
        // (`SQLiteConnection.BusyWait`): a pause of 30 ms takes one of its polls.
        writeTurnPauseMs: 30,
        // A statement's plan is made once, when it is prepared; the index is sought by the
        // sort key's own bound.
        pageSizesWrittenIn: [], pageBoundsSortKeyFirst: true,
        dropEmptySubscriber: """
            DELETE FROM subscribers WHERE id = ?1 AND user_id IS NULL
            AND NOT EXISTS (SELECT 1 FROM subscriptions WHERE subscriber_id = ?1)
            """,
        auditGuardsWhole: "append-only (triggers in place)",
        auditWrittenBy: { _ in "1 = 1" },
        integer: "INTEGER", text: "TEXT", bytes: "BLOB", generatedID: "INTEGER PRIMARY KEY", withoutRowID: " WITHOUT ROWID",
        ifNull: "IFNULL", skipLocked: "", forUpdate: "", insertOrIgnore: "INSERT OR IGNORE INTO", onConflictIgnore: "")
}

/// A SQLite connection with a prepared-statement cache. Not thread-safe: one per thread.
final class SQLiteConnection: SQLConnection {
    private(set) var handle: OpaquePointer?
    var dialect: SQLDialect { .sqlite }
    private var statements: [LongTextKey: OpaquePointer] = [:]
    let path: String
    let readOnly: Bool
    /// How long a statement waits for another connection's lock, as opened.
    let busyTimeoutMs: Int32

    /// `immutable` reads the file as a snapshot without SQLite's lock files, for a reader
    /// that cannot create them (see `Store.init`).
    init(path: String, readOnly: Bool = false, immutable: Bool = false, busyTimeoutMs: Int32 = 5000) throws {
        self.path = path
        self.readOnly = readOnly || immutable
        self.busyTimeoutMs = busyTimeoutMs
        var db: OpaquePointer?
        let flags = (readOnly ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE))
            | SQLITE_OPEN_NOMUTEX | (immutable ? SQLITE_OPEN_URI : 0)
        let name = immutable
            ? "file:" + (path.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? path) + "?immutable=1"
            : path
        _ = SQLiteConnection.configured
        let rc = sqlite3_open_v2(name, &db, flags, nil)
        if rc != SQLITE_OK {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            sqlite3_close_v2(db)
            throw StoreError(operation: "open \(path)", message: message, code: rc)
        }
        handle = db
        sqlite3_extended_result_codes(db, 1)
        waitWhenBusy(milliseconds: busyTimeoutMs)
        sqlite3_set_authorizer(db, SQLiteConnection.guardAuditLog, nil)
    }

    /// SQLite's process-wide settings, made once before its first connection: no memory
    /// statistics (subdesk reads none), so an allocation inside SQLite (this build of the
    /// library has no lookaside memory: every row it handles allocates) takes no global lock.
    private static let configured: Void = { _ = subdesk_sqlite_without_memory_statistics() }()

    /// How a statement waits for another connection's lock: polling every `pollMs` until
    /// `limitMs` have passed since its first try. SQLite's own busy timeout polls 100 ms
    /// apart once it has waited about 200 ms, so a writer queued behind a long job that
    /// writes in short transactions (`Store.catchUpSegments`) could miss the job's pauses
    /// several times in a row; this one lands in each pause.
    final class BusyWait {
        var limitMs: Int32 = 0
        var started: UInt64 = 0
        static let pollMs: UInt64 = 4

        static let handler: @convention(c) (UnsafeMutableRawPointer?, Int32) -> Int32 = { context, tries in
            guard let context else { return 0 }
            let wait = Unmanaged<BusyWait>.fromOpaque(context).takeUnretainedValue()
            let now = DispatchTime.now().uptimeNanoseconds
            if tries == 0 { wait.started = now }
            let waitedMs = (now - wait.started) / 1_000_000
            guard waitedMs < UInt64(max(0, wait.limitMs)) else { return 0 }
            usleep(UInt32(min(pollMs, UInt64(wait.limitMs) - waitedMs) * 1000))
            return 1
        }
    }
    private let busyWait = BusyWait()
    /// Set by `reuseWriteAheadLog`: the log's frames after this connection's last commit.
    var logWatch: WriteAheadLogReuse?

    /// Waits up to `milliseconds` for another connection's lock (0: fails at once).
    func waitWhenBusy(milliseconds: Int32) {
        busyWait.limitMs = milliseconds
        if milliseconds > 0 {
            sqlite3_busy_handler(handle, BusyWait.handler, Unmanaged.passUnretained(busyWait).toOpaque())
        } else {
            sqlite3_busy_handler(handle, nil, nil)
        }
    }

    /// Refuses, on every connection subdesk opens, what would get round the audit log's
    /// triggers: dropping them or the table, altering the table, and writing the schema
    /// directly. (REPLACE is refused by a trigger of its own.)
    static let guardAuditLog: @convention(c) (UnsafeMutableRawPointer?, Int32, UnsafePointer<CChar>?, UnsafePointer<CChar>?,
                                              UnsafePointer<CChar>?, UnsafePointer<CChar>?) -> Int32 = { _, action, first, second, _, _ in
        func text(_ p: UnsafePointer<CChar>?) -> String { p.map { String(cString: $0) } ?? "" }
        switch action {
        case SQLITE_DROP_TRIGGER, SQLITE_DROP_TEMP_TRIGGER:
            return text(second) == "audit_log" || text(first).hasPrefix("audit_log") ? SQLITE_DENY : SQLITE_OK
        case SQLITE_DROP_TABLE, SQLITE_ALTER_TABLE:
            return text(first) == "audit_log" || text(second) == "audit_log" ? SQLITE_DENY : SQLITE_OK
        case SQLITE_PRAGMA:
            return text(first).lowercased() == "writable_schema" ? SQLITE_DENY : SQLITE_OK
        default:
            return SQLITE_OK
        }
    }

    deinit { close() }

    /// Closes a connection whose file another has replaced at `path`. SQLite removes the
    /// write-ahead log and shared-memory files by name when the last connection to a file
    /// closes; those names now belong to the replacing store, and removing them under its
    /// open connections would split them from later writers, so they are left alone.
    /// A file moved over the store (`mv backup.db store.db`) finds this connection's
    /// write-ahead log still at its `-wal` name, and SQLite would read the new file through
    /// that log (the old file's pages): so, `emptyingLog`, the log is first emptied into the
    /// old file it belongs to.
    func closeAfterReplacement(emptyingLog: Bool) {
        if emptyingLog { _ = try? execute("PRAGMA wal_checkpoint(TRUNCATE)") }
        if let h = handle {
            var persist: Int32 = 1
            sqlite3_file_control(h, "main", SQLITE_FCNTL_PERSIST_WAL, &persist)
        }
        close()
    }

    func close() {
        for (_, s) in statements { sqlite3_finalize(s) }
        statements.removeAll()
        if let h = handle { sqlite3_close_v2(h) }
        handle = nil
    }

    func error(_ operation: String, _ rc: Int32) -> StoreError {
        var message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "closed"
        switch rc & 0xff {
        case SQLITE_BUSY, SQLITE_LOCKED: message = "database is locked by another process for longer than the busy timeout (\(message))"
        case SQLITE_FULL: message = "disk is full (\(message))"
        case SQLITE_READONLY: message = "database is read-only (\(message))"
        default: break
        }
        return StoreError(operation: operation, message: message, code: rc)
    }

    /// Runs one or more statements that take no parameters.
    func execute(_ sql: String) throws {
        var errorMessage: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &errorMessage)
        if rc != SQLITE_OK {
            let text = errorMessage.map { String(cString: $0) } ?? "error \(rc)"
            sqlite3_free(errorMessage)
            var e = error(String(sql.prefix(60)), rc)
            if rc & 0xff != SQLITE_BUSY { e = StoreError(operation: String(sql.prefix(60)), message: text, code: rc) }
            throw e
        }
    }

    private func prepared(_ sql: String) throws -> OpaquePointer {
        if let s = statements[LongTextKey(text: sql)] {
            sqlite3_reset(s)
            return s
        }
        var s: OpaquePointer?
        let rc = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &s, nil)
        guard rc == SQLITE_OK, let statement = s else { throw error("prepare \(sql.prefix(60))", rc) }
        statements[LongTextKey(text: sql)] = statement
        return statement
    }

    /// Binds every parameter: callers pass one value per `?`, and the rest (if any) are
    /// cleared so nothing from an earlier run is left bound.
    private func bind(_ s: OpaquePointer, _ values: [SQLBindable?], _ sql: String) throws {
        if values.count < Int(sqlite3_bind_parameter_count(s)) { sqlite3_clear_bindings(s) }
        // Each value is bound where it lies in the array: copying an existential out of it
        // (as enumerating or Optional.map would) costs a retain and a release per value.
        let failed = values.withUnsafeBufferPointer { buffer -> (index: Int, rc: Int32)? in
            for i in 0..<buffer.count {
                var parameter = SQLiteParameter(statement: s, index: Int32(i + 1))
                if buffer[i]?.bind(to: &parameter) == nil { parameter.null() }
                if parameter.rc != SQLITE_OK { return (i, parameter.rc) }
            }
            return nil
        }
        if let failed { throw error("bind \(failed.index + 1) of \(sql.prefix(60))", failed.rc) }
    }

    /// Runs a statement with bound parameters; returns the number of changed rows.
    @discardableResult
    func run(_ sql: String, _ values: [SQLBindable?]) throws -> Int {
        let s = try prepared(sql)
        defer { sqlite3_reset(s) }
        try bind(s, values, sql)
        let rc = sqlite3_step(s)
        guard rc == SQLITE_DONE || rc == SQLITE_ROW else { throw error(String(sql.prefix(60)), rc) }
        return Int(sqlite3_changes(handle))
    }

    /// Calls `body` for each result row until it returns false; the rows after are never read.
    func scan(_ sql: String, _ values: [SQLBindable?], _ body: (SQLRow) throws -> Bool) throws {
        let s = try prepared(sql)
        defer { sqlite3_reset(s) }
        try bind(s, values, sql)
        while true {
            let rc = sqlite3_step(s)
            if rc == SQLITE_DONE { return }
            guard rc == SQLITE_ROW else { throw error(String(sql.prefix(60)), rc) }
            guard try body(SQLRow(SQLiteRow(statement: s))) else { return }
        }
    }

    func lastInsertRowID() -> Int64 { sqlite3_last_insert_rowid(handle) }

    var beginWrite: String { "BEGIN IMMEDIATE" }
    var commitWrite: String { "COMMIT" }
    let transactions = TransactionState()

    /// SQLite steps through a result row by row already.
    func stream(_ sql: String, _ body: (SQLRow) throws -> Void) throws {
        try scan(sql, []) { row in
            try body(row)
            return true
        }
    }

    var isInTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    /// This file's gate among the process's connections that write (nil: read-only, in memory).
    private lazy var writeGate: SQLiteWriteGate? = readOnly ? nil : SQLiteWriteGate.of(path)

    /// Waits for this process's other writers of the file at the gate, for the busy timeout,
    /// then runs `body`; one that waited longer is refused as SQLite's lock would refuse it.
    func inWriteTurn<T>(_ body: () throws -> T) throws -> T {
        guard let gate = writeGate else { return try body() }
        guard gate.enter(waitingUpTo: busyTimeoutMs) else {
            throw StoreError(operation: "begin write", message: "database is locked by another writer of this process for longer "
                             + "than the busy timeout (\(busyTimeoutMs) ms)", code: SQLITE_BUSY)
        }
        defer { gate.leave() }
        return try body()
    }
}

/// Where one process's writers of one SQLite file take turns before they take SQLite's write
/// lock. SQLite gives a writer that finds the lock taken nothing to wait on: it polls
/// (`SQLiteConnection.BusyWait`, every 4 ms), so a writer that loses to another of the same
/// process, as serve's group commit does to its deliverers, waits up to a poll longer than
/// the other's write. Here the turn is handed over the moment the other commits. Writers in
/// other processes still meet only at SQLite's lock.
final class SQLiteWriteGate: @unchecked Sendable {
    private let condition = NSCondition()
    private var taken = false

    private static let lock = NSLock()
    /// Each file's gate, by its device and inode: two paths to one file share a gate. A gate
    /// outlives its file; a new file given the number of an old one shares its gate, which
    /// costs nothing.
    nonisolated(unsafe) private static var gates: [FileIdentity: SQLiteWriteGate] = [:]

    /// The gate of the file at `path`; nil for an in-memory database or a file not there.
    static func of(_ path: String) -> SQLiteWriteGate? {
        guard !path.isEmpty, let key = FileIdentity(path: path) else { return nil }
        lock.lock()
        defer { lock.unlock() }
        if let gate = gates[key] { return gate }
        let gate = SQLiteWriteGate()
        gates[key] = gate
        return gate
    }

    /// Takes the turn, waiting up to `milliseconds` for it; false when it did not come.
    func enter(waitingUpTo milliseconds: Int32) -> Bool {
        let deadline = Date().addingTimeInterval(Double(max(0, milliseconds)) / 1000)
        condition.lock()
        defer { condition.unlock() }
        while taken {
            if !condition.wait(until: deadline) && taken { return false }
        }
        taken = true
        return true
    }

    /// Gives the turn to the next writer.
    func leave() {
        condition.lock()
        taken = false
        condition.signal()
        condition.unlock()
    }
}
