import CSQLite
import Foundation

/// A store failure that names the operation and the engine's reason.
public struct StoreError: Error, CustomStringConvertible {
    public let operation: String
    public let message: String
    /// SQLite's (extended) result code; 0 for a PostgreSQL error.
    public let code: Int32
    /// PostgreSQL's SQLSTATE, when the error came from PostgreSQL.
    public var sqlState: String? = nil
    /// A privilege the server refused this role, said in the role model's words.
    public var denial: PermissionDenial? = nil

    public init(operation: String, message: String, code: Int32, sqlState: String? = nil) {
        self.operation = operation
        self.message = message
        self.code = code
        self.sqlState = sqlState
    }

    public var description: String { denial?.description ?? "\(operation): \(message)" }

    /// PostgreSQL: this write lost a race with a concurrent one (a deadlock, a serialization
    /// failure, or a row another writer inserted first) and may simply be run again.
    public var isConflict: Bool { ["40P01", "40001", "23505", "23P01"].contains(sqlState ?? "") }

    /// Another connection holds the lock this one needed.
    var isBusy: Bool { sqlState == nil && code & 0xff == SQLITE_BUSY }

    /// Busy, locked, full or read-only, or (PostgreSQL) a serialization failure, a
    /// deadlock, a lost connection or a server short of resources: conditions a caller
    /// may retry later.
    public var isTransient: Bool {
        if let state = sqlState {
            return state == "40001" || state == "40P01" || state.hasPrefix("08") || state.hasPrefix("53")
                || state == "57P01" || state == "57P03" || state == "55P03"
        }
        let primary = code & 0xff
        return primary == SQLITE_BUSY || primary == SQLITE_LOCKED || primary == SQLITE_FULL
            || primary == SQLITE_READONLY || primary == SQLITE_IOERR || primary == SQLITE_CANTOPEN
    }
}

/// A command that reads (or writes without creating) named a store that does not exist.
public struct StoreNotFound: Error, CustomStringConvertible {
    public let path: String
    public var description: String { "no store at \(path)" }
}

/// A value that can be bound to a statement parameter.
public protocol SQLBindable {
    /// Binds to a SQLite statement in place (the hot path: no intermediate value).
    func bind(to statement: OpaquePointer, at index: Int32) -> Int32
    /// The value for an engine that takes parameters as values (PostgreSQL).
    var sqlValue: SQLValue { get }
}

/// A parameter's value, engine-neutral.
public enum SQLValue {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob(Data)
}

private let transientDestructor = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)

extension Int64: SQLBindable {
    public func bind(to s: OpaquePointer, at i: Int32) -> Int32 { sqlite3_bind_int64(s, i, self) }
    public var sqlValue: SQLValue { .integer(self) }
}
extension Int: SQLBindable {
    public func bind(to s: OpaquePointer, at i: Int32) -> Int32 { sqlite3_bind_int64(s, i, Int64(self)) }
    public var sqlValue: SQLValue { .integer(Int64(self)) }
}
extension Bool: SQLBindable {
    public func bind(to s: OpaquePointer, at i: Int32) -> Int32 { sqlite3_bind_int64(s, i, self ? 1 : 0) }
    public var sqlValue: SQLValue { .integer(self ? 1 : 0) }
}
extension Double: SQLBindable {
    public func bind(to s: OpaquePointer, at i: Int32) -> Int32 { sqlite3_bind_double(s, i, self) }
    public var sqlValue: SQLValue { .real(self) }
}
extension String: SQLBindable {
    public var sqlValue: SQLValue { .text(self) }
    public func bind(to s: OpaquePointer, at i: Int32) -> Int32 {
        // Native strings are contiguous UTF-8: bind them in place, with their length.
        if let rc = utf8.withContiguousStorageIfAvailable({ buffer in
            sqlite3_bind_text(s, i, UnsafeRawPointer(buffer.baseAddress ?? UnsafePointer(bitPattern: 1)!)
                                .assumingMemoryBound(to: CChar.self), Int32(buffer.count), transientDestructor)
        }) {
            return rc
        }
        return sqlite3_bind_text(s, i, self, -1, transientDestructor)
    }
}
extension Data: SQLBindable {
    public var sqlValue: SQLValue { .blob(self) }
    public func bind(to s: OpaquePointer, at i: Int32) -> Int32 {
        withUnsafeBytes { raw in
            sqlite3_bind_blob(s, i, raw.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(raw.count), transientDestructor)
        }
    }
}
extension Optional: SQLBindable where Wrapped: SQLBindable {
    public func bind(to s: OpaquePointer, at i: Int32) -> Int32 {
        switch self {
        case .some(let v): return v.bind(to: s, at: i)
        case .none: return sqlite3_bind_null(s, i)
        }
    }
    public var sqlValue: SQLValue { self?.sqlValue ?? .null }
}

/// One row of a result, read by column index: a SQLite statement positioned on a row, or
/// a row of a PostgreSQL result.
public struct SQLRow {
    let statement: OpaquePointer?
    let postgres: PostgresRow?

    init(statement: OpaquePointer) {
        self.statement = statement
        self.postgres = nil
    }

    init(postgres: PostgresRow) {
        self.statement = nil
        self.postgres = postgres
    }

    public func isNull(_ i: Int32) -> Bool {
        if let statement { return sqlite3_column_type(statement, i) == SQLITE_NULL }
        return postgres!.isNull(i)
    }
    public func int64(_ i: Int32) -> Int64 {
        if let statement { return sqlite3_column_int64(statement, i) }
        return postgres!.int64(i)
    }
    public func int(_ i: Int32) -> Int { Int(int64(i)) }
    public func bool(_ i: Int32) -> Bool { int64(i) != 0 }
    public func double(_ i: Int32) -> Double {
        if let statement { return sqlite3_column_double(statement, i) }
        return postgres!.double(i)
    }
    public func optionalInt64(_ i: Int32) -> Int64? { isNull(i) ? nil : int64(i) }
    public func optionalInt(_ i: Int32) -> Int? { isNull(i) ? nil : int(i) }
    public func string(_ i: Int32) -> String {
        if let statement {
            guard let p = sqlite3_column_text(statement, i) else { return "" }
            return String(cString: p)
        }
        return postgres!.string(i)
    }
    public func optionalString(_ i: Int32) -> String? { isNull(i) ? nil : string(i) }
    public func data(_ i: Int32) -> Data {
        if let statement {
            let count = Int(sqlite3_column_bytes(statement, i))
            guard count > 0, let p = sqlite3_column_blob(statement, i) else { return Data() }
            return Data(bytes: p, count: count)
        }
        return postgres!.data(i)
    }
}

extension SQLValue: SQLBindable {
    public func bind(to s: OpaquePointer, at i: Int32) -> Int32 {
        switch self {
        case .null: return sqlite3_bind_null(s, i)
        case .integer(let v): return v.bind(to: s, at: i)
        case .real(let v): return v.bind(to: s, at: i)
        case .text(let v): return v.bind(to: s, at: i)
        case .blob(let v): return v.bind(to: s, at: i)
        }
    }
    public var sqlValue: SQLValue { self }
}

extension SQLRow {
    /// The column's value as the engine typed it, for copying rows between engines.
    func value(_ i: Int32) -> SQLValue {
        if isNull(i) { return .null }
        if let statement {
            switch sqlite3_column_type(statement, i) {
            case SQLITE_INTEGER: return .integer(int64(i))
            case SQLITE_FLOAT: return .real(double(i))
            case SQLITE_BLOB: return .blob(data(i))
            default: return .text(string(i))
            }
        }
        return postgres!.value(i)
    }
}

/// The SQL engines a store can live in.
public enum SQLDialect: String, Sendable {
    case sqlite
    case postgres
}

/// What `Store` needs of a connection; one implementation per engine. Statements are
/// written with `?` parameters; an engine that numbers them rewrites the text once.
protocol SQLConnection: AnyObject {
    var dialect: SQLDialect { get }
    /// Runs one or more statements that take no parameters.
    func execute(_ sql: String) throws
    /// Runs a statement with bound parameters; returns the number of changed rows.
    @discardableResult func run(_ sql: String, _ values: [SQLBindable?]) throws -> Int
    /// Calls `body` for each result row until it returns false.
    func scan(_ sql: String, _ values: [SQLBindable?], _ body: (SQLRow) throws -> Bool) throws
    /// Calls `body` for every row of a result too large to hold at once (a whole table),
    /// holding only part of it in memory.
    func stream(_ sql: String, _ body: (SQLRow) throws -> Void) throws
    /// The id the last insert into a table with a generated id gave its row.
    func lastInsertRowID() throws -> Int64
    var isInTransaction: Bool { get }
    /// Starts a write transaction that holds the store's write lock from its start, so a
    /// busy writer waits at the start rather than failing mid-way.
    var beginWrite: String { get }
    /// Ends a write transaction that succeeded.
    var commitWrite: String { get }
    var transactions: TransactionState { get }
    /// The database user the server records as acting (PostgreSQL); nil where the engine
    /// has no users (SQLite), and the operator's own name stands.
    var recordedUser: String? { get }
    func close()
}

extension SQLConnection {
    var recordedUser: String? { nil }

    @discardableResult
    func run(_ sql: String) throws -> Int { try run(sql, []) }

    func scan(_ sql: String, _ body: (SQLRow) throws -> Bool) throws { try scan(sql, [], body) }

    /// Counts rollbacks, so caches of rows written inside a transaction can tell when
    /// those rows may have been undone.
    var rollbacks: Int { transactions.rollbacks }

    /// Runs `body` in a write transaction (`beginWrite`, unless `begin` says otherwise):
    /// the store's write lock is taken at once, so a busy writer waits at the start rather
    /// than failing mid-way.
    func writeTransaction<T>(begin: String? = nil, _ body: () throws -> T) throws -> T {
        try writeTransaction(start: { try execute(begin ?? beginWrite) }, body)
    }

    /// Runs `body` in a write transaction that `start` opens and locks.
    func writeTransaction<T>(start: () throws -> Void, _ body: () throws -> T) throws -> T {
        do {
            try start()
        } catch {
            // A lock that timed out leaves the transaction begun but failed: end it, or the
            // connection's next write would meet an aborted transaction.
            if isInTransaction { try? execute("ROLLBACK") }
            throw error
        }
        transactions.joinedWriteFailed = false
        do {
            let result = try body()
            if transactions.joinedWriteFailed {
                throw StoreError(operation: "commit", message: "a write inside this transaction failed, so none of it was kept", code: 0)
            }
            try execute(commitWrite)
            return result
        } catch {
            try? execute("ROLLBACK")
            transactions.rollbacks += 1
            transactions.joinedWriteFailed = false
            throw error
        }
    }

    /// Runs `body` reading one consistent state of the database, whatever other
    /// connections commit meanwhile: SQLite's WAL keeps a read transaction's snapshot, and
    /// PostgreSQL's repeatable read does the same. Inside an open transaction, joins it.
    func readTransaction<T>(_ body: () throws -> T) throws -> T {
        guard !isInTransaction else { return try body() }
        try execute(dialect == .postgres ? "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY" : "BEGIN")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    /// Runs `body` as part of the open transaction, without a savepoint of its own (a
    /// savepoint copies every page it touches aside). If `body` throws, the enclosing
    /// transaction or savepoint is rolled back when it ends, even if its caller went on.
    func joined<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch {
            transactions.joinedWriteFailed = true
            throw error
        }
    }

    /// Runs `body` inside a savepoint: its writes are undone alone if it throws.
    func savepoint<T>(_ body: () throws -> T) throws -> T {
        transactions.savepointDepth += 1
        let name = "sp\(transactions.savepointDepth)"
        let failedBefore = transactions.joinedWriteFailed
        defer { transactions.savepointDepth -= 1 }
        try execute("SAVEPOINT \(name)")
        do {
            let result = try body()
            if transactions.joinedWriteFailed && !failedBefore {
                throw StoreError(operation: "release savepoint", message: "a write inside it failed, so none of it was kept", code: 0)
            }
            try execute("RELEASE \(name)")
            return result
        } catch {
            try? execute("ROLLBACK TO \(name)")
            try? execute("RELEASE \(name)")
            transactions.rollbacks += 1
            // Rolling back to the savepoint undid whatever a failed joined write left.
            transactions.joinedWriteFailed = failedBefore
            throw error
        }
    }

    /// Calls `body` for each result row.
    func query(_ sql: String, _ values: [SQLBindable?] = [], _ body: (SQLRow) throws -> Void) throws {
        try scan(sql, values) { row in
            try body(row)
            return true
        }
    }

    func rows<T>(_ sql: String, _ values: [SQLBindable?] = [], _ map: (SQLRow) throws -> T) throws -> [T] {
        var result: [T] = []
        try query(sql, values) { result.append(try map($0)) }
        return result
    }

    func first<T>(_ sql: String, _ values: [SQLBindable?] = [], _ map: (SQLRow) throws -> T) throws -> T? {
        var result: T?
        try scan(sql, values) { row in
            result = try map(row)
            return false
        }
        return result
    }
}

/// A SQLite connection with a prepared-statement cache. Not thread-safe: one per thread.
final class SQLiteConnection: SQLConnection {
    private(set) var handle: OpaquePointer?
    var dialect: SQLDialect { .sqlite }
    private var statements: [LongTextKey: OpaquePointer] = [:]
    let path: String

    /// `immutable` reads the file as a snapshot without SQLite's lock files, for a reader
    /// that cannot create them (see `Store.init`).
    init(path: String, readOnly: Bool = false, immutable: Bool = false, busyTimeoutMs: Int32 = 5000) throws {
        self.path = path
        var db: OpaquePointer?
        let flags = (readOnly ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE))
            | SQLITE_OPEN_NOMUTEX | (immutable ? SQLITE_OPEN_URI : 0)
        let name = immutable
            ? "file:" + (path.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? path) + "?immutable=1"
            : path
        let rc = sqlite3_open_v2(name, &db, flags, nil)
        if rc != SQLITE_OK {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            sqlite3_close_v2(db)
            throw StoreError(operation: "open \(path)", message: message, code: rc)
        }
        handle = db
        sqlite3_extended_result_codes(db, 1)
        sqlite3_busy_timeout(db, busyTimeoutMs)
        sqlite3_set_authorizer(db, SQLiteConnection.guardAuditLog, nil)
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
    func closeAfterReplacement() {
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
                let rc = buffer[i]?.bind(to: s, at: Int32(i + 1)) ?? sqlite3_bind_null(s, Int32(i + 1))
                if rc != SQLITE_OK { return (i, rc) }
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
            guard try body(SQLRow(statement: s)) else { return }
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
}

