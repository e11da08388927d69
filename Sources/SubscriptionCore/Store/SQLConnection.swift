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

    /// PostgreSQL: the connection itself is gone (the server restarted or shut down, the
    /// network failed): a new connection may succeed where this one cannot.
    public var isConnectionLoss: Bool {
        guard let state = sqlState else { return false }
        return state.hasPrefix("08") || ["57P01", "57P02", "57P03"].contains(state)
    }

    /// Busy, locked, full or read-only, or (PostgreSQL) a serialization failure, a
    /// deadlock, a lost connection or a server short of resources: conditions a caller
    /// may retry later. Each engine reads its own codes.
    public var isTransient: Bool {
        if let state = sqlState { return StoreError.isTransient(sqlState: state) }
        return StoreError.isTransient(sqliteCode: code)
    }
}

/// The store's path no longer names the file this connection writes: another file was
/// moved there (a restore), or it was deleted (and perhaps made again by `init`). Nothing
/// more is written through this connection; open the store again.
public struct FileReplacedError: Error, CustomStringConvertible {
    public let path: String
    /// Nothing is at the path now.
    public let missing: Bool
    /// The write that found it had committed, into the file no path names any more.
    public let committed: Bool

    public var description: String {
        let what = missing ? "was deleted" : "names another file (a restore, or a new store)"
        return committed
            ? "the store file \(path) \(what) while this write committed: it went to the replaced file, not to the store at \(path)"
            : "the store file \(path) \(what) since it was opened: nothing was written; open it again"
    }
}

/// A command that reads (or writes without creating) named a store that does not exist.
public struct StoreNotFound: Error, CustomStringConvertible {
    public let path: String
    public var description: String { "no store at \(path)" }
}

/// A value that can be bound to a statement parameter, on any engine.
public protocol SQLBindable {
    /// The value, engine-neutral.
    var sqlValue: SQLValue { get }
    /// Hands the value to `sink` as what it is, without making a `SQLValue` of it first:
    /// an engine that binds values in place (SQLite) copies nothing and counts no
    /// references per value.
    func bind<Sink: SQLValueSink>(to sink: inout Sink)
}

/// Where an engine takes a parameter's value; each call hands over one value.
public protocol SQLValueSink {
    mutating func null()
    mutating func integer(_ value: Int64)
    mutating func real(_ value: Double)
    mutating func text(_ value: String)
    mutating func blob(_ value: Data)
}

/// A parameter's value, engine-neutral.
public enum SQLValue {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob(Data)
}

extension Int64: SQLBindable {
    public var sqlValue: SQLValue { .integer(self) }
    public func bind<Sink: SQLValueSink>(to sink: inout Sink) { sink.integer(self) }
}
extension Int: SQLBindable {
    public var sqlValue: SQLValue { .integer(Int64(self)) }
    public func bind<Sink: SQLValueSink>(to sink: inout Sink) { sink.integer(Int64(self)) }
}
extension Bool: SQLBindable {
    public var sqlValue: SQLValue { .integer(self ? 1 : 0) }
    public func bind<Sink: SQLValueSink>(to sink: inout Sink) { sink.integer(self ? 1 : 0) }
}
extension Double: SQLBindable {
    public var sqlValue: SQLValue { .real(self) }
    public func bind<Sink: SQLValueSink>(to sink: inout Sink) { sink.real(self) }
}
extension String: SQLBindable {
    public var sqlValue: SQLValue { .text(self) }
    public func bind<Sink: SQLValueSink>(to sink: inout Sink) { sink.text(self) }
}
extension Data: SQLBindable {
    public var sqlValue: SQLValue { .blob(self) }
    public func bind<Sink: SQLValueSink>(to sink: inout Sink) { sink.blob(self) }
}
extension Optional: SQLBindable where Wrapped: SQLBindable {
    public var sqlValue: SQLValue { self?.sqlValue ?? .null }
    public func bind<Sink: SQLValueSink>(to sink: inout Sink) {
        switch self {
        case .some(let v): v.bind(to: &sink)
        case .none: sink.null()
        }
    }
}
extension SQLValue: SQLBindable {
    public var sqlValue: SQLValue { self }
    public func bind<Sink: SQLValueSink>(to sink: inout Sink) {
        switch self {
        case .null: sink.null()
        case .integer(let v): sink.integer(v)
        case .real(let v): sink.real(v)
        case .text(let v): sink.text(v)
        case .blob(let v): sink.blob(v)
        }
    }
}

/// One row of a result, read by column index. Each engine reads its own rows (`SQLiteRow`,
/// `PostgresRow`); the row says once, here, which one it holds, and every accessor hands
/// the read to it: no allocation and no dynamic dispatch per column.
public struct SQLRow {
    enum Source {
        case sqlite(SQLiteRow)
        case postgres(PostgresRow)
    }
    let source: Source

    init(_ row: SQLiteRow) { source = .sqlite(row) }
    init(_ row: PostgresRow) { source = .postgres(row) }

    public func isNull(_ i: Int32) -> Bool {
        switch source {
        case .sqlite(let r): return r.isNull(i)
        case .postgres(let r): return r.isNull(i)
        }
    }
    public func int64(_ i: Int32) -> Int64 {
        switch source {
        case .sqlite(let r): return r.int64(i)
        case .postgres(let r): return r.int64(i)
        }
    }
    public func double(_ i: Int32) -> Double {
        switch source {
        case .sqlite(let r): return r.double(i)
        case .postgres(let r): return r.double(i)
        }
    }
    public func string(_ i: Int32) -> String {
        switch source {
        case .sqlite(let r): return r.string(i)
        case .postgres(let r): return r.string(i)
        }
    }
    public func data(_ i: Int32) -> Data {
        switch source {
        case .sqlite(let r): return r.data(i)
        case .postgres(let r): return r.data(i)
        }
    }
    /// The column's value as the engine typed it, for copying rows between engines.
    func value(_ i: Int32) -> SQLValue {
        switch source {
        case .sqlite(let r): return r.value(i)
        case .postgres(let r): return r.value(i)
        }
    }

    public func int(_ i: Int32) -> Int { Int(int64(i)) }
    public func bool(_ i: Int32) -> Bool { int64(i) != 0 }
    public func optionalInt64(_ i: Int32) -> Int64? { isNull(i) ? nil : int64(i) }
    public func optionalInt(_ i: Int32) -> Int? { isNull(i) ? nil : int(i) }
    public func optionalString(_ i: Int32) -> String? { isNull(i) ? nil : string(i) }
}

/// An engine's dialect: its name, how it spells the few things the engines spell
/// differently, and the facts about its schema that the Store's SQL depends on. Each
/// engine gives one (`SQLDialect.sqlite` beside `SQLiteConnection`, `.postgres` beside
/// `PostgresConnection`); the Store reads from it rather than asking which engine it has.
public struct SQLDialect: Sendable, Equatable, CustomStringConvertible {
    /// The engine's short name, for labels (`engine="sqlite"`).
    public let name: String
    /// The engine as people call it, for messages.
    public let displayName: String
    /// The function that finds a text in another, `find(haystack, needle)`: 1-based, 0 when absent.
    let find: String
    /// The function that gives the larger of two values.
    let greatest: String
    /// A line end, as an SQL expression.
    let lineFeed: String
    /// How a read transaction that keeps one snapshot starts.
    let beginRead: String
    /// Rows a multi-row INSERT of small rows carries: where each statement is a round
    /// trip (a server), many; where it is a call (a library), one, so the statement is
    /// prepared once and reused.
    let rowsPerInsert: Int
    /// Whether writes of different subscriptions run side by side (`Store.write(touching:)`).
    let writersRunSideBySide: Bool
    /// Whether the store keeps a trigram index for search (`Store.textCondition`).
    let hasSearchIndex: Bool
    /// How long a long job that writes in short transactions (`Store.catchUpSegments`)
    /// pauses between them, in milliseconds, so a writer waiting meanwhile gets its turn:
    /// where waiters poll for the lock, long enough for a poll to land in the pause; where
    /// the server queues them and hands the lock over in order, none.
    let writeTurnPauseMs: Int
    /// The page sizes a page of subscriptions is read with, its limit written in the
    /// statement (a page of `limit` rows reads the first size at or over it, and the rows
    /// past `limit` are dropped); empty: the limit is a parameter. Where a statement whose
    /// limit is a parameter is planned anew at each run (a plan made without the limit reads
    /// the whole list, in parallel, and planning one app's page, which weighs every index
    /// that leads with the bundle id, took longer than reading it), a limit written in keeps
    /// one plan after its first runs. Few sizes, so that a process prepares few statements
    /// whatever its windows' heights.
    let pageSizesWrittenIn: [Int]
    /// Whether a page after a cursor bounds the sort key alone before the row value: where
    /// the engine seeks the list's index by it, and reads the row value alone (over an
    /// expression) as a test of each entry from the list's start, so that a page deep in the
    /// list would read every entry before it. An engine that seeks by the row value goes
    /// without: the bound beside it has its plan for a prepared page start parallel workers
    /// (12 ms a page at 1M, for 0.7).
    let pageBoundsSortKeyFirst: Bool
    /// Drops the subscriber `?1` when it owns no subscription and carries no user id. On a
    /// server, through a function the store's owner defines (`subdesk_drop_empty_subscriber`),
    /// so the roles that call it need no DELETE on the table (with which they could lock it).
    let dropEmptySubscriber: String
    /// What `doctor` says was checked when the audit log's guards are whole.
    public let auditGuardsWhole: String
    /// A condition on an `audit_log` row: its writer (the `operator` the server recorded)
    /// is the store's owner or a member of one of the roles given. On an engine without
    /// roles, always true.
    let auditWrittenBy: @Sendable ([String]) -> String

    // The schema's words: how the migrations (`Migrations.swift`) spell what the engines
    // spell otherwise, so a statement both engines run is written once.

    /// A whole-number column.
    let integer: String
    /// A text column: compared and sorted bytewise on both engines.
    let text: String
    /// A column of bytes.
    let bytes: String
    /// A generated row id, the table's primary key.
    let generatedID: String
    /// What ends a table that needs no separate row id (its primary key is the row's key).
    let withoutRowID: String
    /// The function that gives its second argument where the first is NULL, as a shared
    /// statement spells it (an expression index matches only the very same expression).
    let ifNull: String
    /// What ends a SELECT that claims rows for the writer: rows another writer is claiming
    /// at the same moment are skipped, not waited for, where writers run side by side
    /// (PostgreSQL's `FOR UPDATE SKIP LOCKED`); nothing where they take turns.
    let skipLocked: String
    /// What ends a SELECT whose rows the writer takes in turn with any other writer taking
    /// them: waited for, not skipped (PostgreSQL's `FOR UPDATE`); nothing where writers take
    /// turns anyway.
    let forUpdate: String
    /// An insert that skips rows whose key is already there: the statement's start, and
    /// what ends it.
    let insertOrIgnore: String
    let onConflictIgnore: String

    public var description: String { name }
    public static func == (a: SQLDialect, b: SQLDialect) -> Bool { a.name == b.name }
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
    /// Runs `body`, a whole write transaction, in its turn among this process's writers of
    /// the same database where the engine makes writers take turns and would otherwise have
    /// them poll for the lock (SQLite: `SQLiteWriteGate`); as it is elsewhere.
    func inWriteTurn<T>(_ body: () throws -> T) throws -> T
    var transactions: TransactionState { get }
    /// The database user the server records as acting (PostgreSQL); nil where the engine
    /// has no users (SQLite), and the operator's own name stands.
    var recordedUser: String? { get }
    /// The subdesk roles the database user is a member of (PostgreSQL); empty for SQLite.
    var loginRoles: [String] { get }
    /// Whether the database user holds `privilege` (`INSERT`, `UPDATE`...) on `table`;
    /// true where the engine has no users (SQLite: the file's mode decides).
    func mayWrite(_ privilege: String, on table: String) throws -> Bool
    func close()

    // MARK: What each engine does its own way
    //
    // The Store asks these of whichever connection it has; nothing outside the engines'
    // own files tells the engines apart.

    /// Starts a write that changes only the subscriptions `keys` names (see
    /// `Store.write(touching:)`); an engine whose writers take turns starts `beginWrite`.
    func beginWrite(touching keys: [String]) throws
    /// The store's schema version as the store records it (0 for a store not made yet).
    func schemaVersion() throws -> Int
    /// Records that the store's schema is at `version` (inside the migration's transaction).
    func recordSchemaVersion(_ version: Int) throws
    /// Starts the transaction that migrates the store, holding what keeps two processes
    /// from migrating it at once (the store may not exist yet).
    func beginMigration() throws
    /// A number that changes whenever another connection commits to this store.
    func changeVersion() throws -> Int
    /// Closes a connection whose store another has replaced at its location (a new demo,
    /// a restore), leaving alone what now belongs to the replacing store.
    func closeAfterReplacement()
    /// The store's size and its write-ahead log's, where the engine can tell (nil where not).
    func storageBytes() throws -> (store: Int64?, wal: Int64?)
    /// The engine's check of the store's pages, one line a problem (`["ok"]` when sound);
    /// nil where the server checks its own pages.
    func integrityCheck() throws -> [String]?
    /// The audit log's guards that are missing from the store.
    func missingAuditGuards() throws -> [String]
    /// What keeps the audit log from being append-only, one sentence each.
    func auditGuardProblems() throws -> [String]
    /// Copies the store, consistent while others write, to a new file at `destination`.
    func backup(to destination: String) throws
    /// The columns of `table`, in order.
    func columns(of table: String) throws -> [String]
    /// Readies `tables` to take rows copied from another store as they are, inside the
    /// copy's write (`Store.copyAll`), and puts them back once the rows are in.
    func copyStarts(into tables: [String]) throws
    func copyEnded(into tables: [String]) throws
    /// Settings for one short-lived writer per request (CGI), and its end.
    func configureForOneShotWrites() throws
    func finishOneShotWrites(walLimitBytes: Int64)
    /// Whether the log file beside the store that a writer must keep short is larger than
    /// `bytes` (false where there is none).
    func writeAheadLogIsPast(_ bytes: Int64) -> Bool
    /// Past `walLimitBytes`, copies the log into the store without holding up its writers,
    /// then truncates it in their turn (see the SQLite connection's).
    func checkpointBesideWriters(walLimitBytes: Int64)
    /// Bounds how long the server waits for a writer someone waits on; nothing without a server.
    func boundServerWaitsForIntake() throws
    /// Moves the write-ahead log into the store every `pages` pages, where there is one to move.
    func checkpointEvery(pages: Int) throws
    /// The statements that make a bulk load fast (`start`) and undo that (`end`), and the
    /// query listing the indexes it may set aside; nil where a bulk load changes nothing.
    var bulkLoad: BulkLoadSettings? { get }

    // Facts only a database server has: empty or nil on an engine without one.

    /// Who holds what a write would wait for.
    func writeLockHolders() throws -> [Store.WriteLockHolder]
    /// Ends the sessions that hold the writers' lock past their login's bound (PostgreSQL;
    /// none on SQLite, whose lock ends with its process): the logins ended and their pids.
    func endOverdueWriteLockHolders() throws -> [(login: String, pid: Int)]
    /// Whether every login may connect to the store's database.
    func publicMayConnect() throws -> Bool?
    /// The subdesk roles the connection's user is a member of.
    func databaseRoles() throws -> [String]
    /// The database user the connection is.
    func databaseUser() throws -> String?
    /// Creates the database roles and grants their rights on the store; what it could not
    /// do that a superuser should, said as notes.
    func installRoles() throws -> [String]
    /// Creates or changes a login user (`PostgresLogin`); true when it was created.
    func makeLogin(_ login: PostgresLogin, password: String?) throws -> Bool
    /// The server's connection slots and the logins that may take them.
    func connectionSlots() throws -> ConnectionSlots?
}

/// How an engine bulk-loads: see `SQLConnection.bulkLoad`.
struct BulkLoadSettings {
    var start: String
    var end: String
    /// Names and SQL of the indexes that only speed up reads, which a bulk load drops and
    /// builds again at its end: a query selecting `IndexDefinition.list`.
    var setAsideIndexes: String
}

/// An index as the engine's catalog gives it: its name and the SQL that builds it.
enum IndexDefinition: Int, SelectedValues {
    case name, definition
    var sql: String { self == .name ? "name" : "sql" }
}

extension SQLConnection {
    var recordedUser: String? { nil }
    var loginRoles: [String] { [] }
    func mayWrite(_ privilege: String, on table: String) throws -> Bool { true }

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
        // Inside an open transaction `start` fails as it always has, with no turn to wait for.
        if isInTransaction { return try openedWriteTransaction(start: start, body) }
        return try inWriteTurn { try openedWriteTransaction(start: start, body) }
    }

    private func openedWriteTransaction<T>(start: () throws -> Void, _ body: () throws -> T) throws -> T {
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
        try execute(dialect.beginRead)
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

    /// The one column of the first row a query of one column returns, as an integer (nil
    /// with no row; 0 for NULL): a count, a sum, an id.
    func integer(_ sql: String, _ values: [SQLBindable?] = []) throws -> Int64? {
        try first(sql, values) { $0.int64(0) }
    }

    /// The one column of the first row a query of one column returns, as text: nil with no
    /// row or a NULL.
    func text(_ sql: String, _ values: [SQLBindable?] = []) throws -> String? {
        try first(sql, values) { $0.optionalString(0) } ?? nil
    }

    /// The one column of the first row a query of one column returns, as bytes: nil with no
    /// row or a NULL.
    func bytes(_ sql: String, _ values: [SQLBindable?] = []) throws -> Data? {
        try first(sql, values) { $0.isNull(0) ? nil : $0.data(0) } ?? nil
    }

    /// The one column of every row a query of one column returns, as integers (a NULL as 0).
    func integers(_ sql: String, _ values: [SQLBindable?] = []) throws -> [Int64] {
        try rows(sql, values) { $0.int64(0) }
    }

    /// The one column of every row a query of one column returns, as text (a NULL as "").
    func texts(_ sql: String, _ values: [SQLBindable?] = []) throws -> [String] {
        try rows(sql, values) { $0.string(0) }
    }

    /// The one column of the first row a query of one column returns, as a count (0 with
    /// no row or a NULL): `SELECT count(*) …`.
    func count(_ sql: String, _ values: [SQLBindable?] = []) throws -> Int {
        try first(sql, values) { $0.int(0) } ?? 0
    }

    /// Whether a query of one column (`SELECT EXISTS (…)`) answers true.
    func holds(_ sql: String, _ values: [SQLBindable?] = []) throws -> Bool {
        try first(sql, values) { $0.bool(0) } ?? false
    }

    /// The one column of the first row a query of one column returns, as an integer that
    /// may be NULL (nil with no row or a NULL): `SELECT max(…)`.
    func optionalInteger(_ sql: String, _ values: [SQLBindable?] = []) throws -> Int64? {
        try first(sql, values) { $0.optionalInt64(0) } ?? nil
    }
}
