import Foundation

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
    /// a restore), leaving alone what now belongs to the replacing store; with `emptyingLog`,
    /// its write-ahead log is emptied into the file it belongs to first.
    func closeAfterReplacement(emptyingLog: Bool)
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
    /// Copies the log into the store without holding up its writers, then, past
    /// `walLimitBytes`, restarts it in their turn (see the SQLite connection's).
    func checkpointBesideWriters(walLimitBytes: Int64)
    /// For a long-lived writer beside `checkpointBesideWriters`: writes over the log from its
    /// start after each checkpoint instead of growing a truncated file again, and counts what
    /// its commits leave in it; nothing where there is no such log.
    func reuseWriteAheadLog() throws
    /// Bounds how long the server waits for a writer someone waits on; nothing without a server.
    func boundServerWaitsForIntake() throws
    /// Moves the write-ahead log into the store every `pages` pages, where there is one to move.
    func checkpointEvery(pages: Int) throws
    /// Keeps up to `kibibytes` of the store's pages in this connection's memory, where the
    /// connection keeps them (a server keeps its own).
    func cachePages(kibibytes: Int) throws
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
