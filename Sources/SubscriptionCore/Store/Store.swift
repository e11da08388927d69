import Foundation

/// The subdesk store: the only place that speaks SQL.
///
/// One `Store` wraps one connection, to a SQLite file or a PostgreSQL database
/// (`postgres://...`), and is used from one thread at a time; open another `Store` on the
/// same location for another thread or process. On SQLite, WAL mode lets readers run
/// beside the single writer; on PostgreSQL, intake writers also run side by side
/// (`write(touching:)`). Statements are written once, in SQLite's dialect, and
/// `PostgresConnection` rewrites what PostgreSQL spells otherwise; what the engines do
/// differently is asked of the connection (`SQLConnection`, `SQLDialect`), never
/// branched on here (see README.md in this folder).
public final class Store {
    let db: any SQLConnection
    public let path: String
    /// The JWS headers compact bodies refer to, and their cache.
    private(set) lazy var headers = JWSHeaderTable(db: db)
    /// The counts a write adds to, held until it commits (`HeldCounts`); while bulk loading
    /// (`deferringMetrics`), across transactions until `flushMetrics()`.
    var held = HeldCounts()
    var deferringMetrics = false

    /// Secondary indexes set aside during a bulk load, by name with the SQL that builds them.
    var suspendedIndexes: [(name: String, sql: String)] = []
    /// What this connection remembers of subscriptions: search plans, UPDATE statements.
    private(set) lazy var subscriptionMemory = SubscriptionMemory()

    /// How a command may open a store.
    public enum OpenMode: Sendable {
        /// A command that writes and may start a store: creates a missing one (and its folder).
        case createIfMissing
        /// A command that writes to a store that must already exist (CGI intake, operator actions).
        case existing
        /// A command that only reads: the store must exist; one written by a newer subdesk is
        /// opened without touching its schema (`opening.newerSchemaVersion` says so).
        case reading
    }

    /// What opening the store found: whether it was made, may be written, is a newer
    /// subdesk's, and the file it was opened from.
    public let opening: StoreOpening
    /// What this connection keeps between reads of the by-segment aggregates.
    private(set) lazy var segmentMemory = SegmentCatchUpMemory()
    /// Told how the catch-ups a report runs first get on (`Store.bringReportsUpToDate`): a
    /// command line shows it on a terminal.
    public var reportProgress: ((ReportCatchUpProgress) -> Void)?
    /// What the retention decisions' reads remember between calls.
    private(set) lazy var retentionDecisionMemory = RetentionDecisionMemory()

    /// Opens the store at `path` as `mode` allows and brings its schema up to date. A new
    /// store file is created readable and writable by its owner only (0600); SQLite gives its
    /// -wal and -shm files the same mode.
    public init(path: String, busyTimeoutMs: Int32 = Store.defaultBusyTimeoutMs, mode: OpenMode = .createIfMissing) throws {
        let opened: OpenedStore
        if PostgresLocation.isPostgres(path) {
            self.path = PostgresLocation.redacted(path)
            #if SUBDESK_NO_POSTGRES
            throw StoreError(operation: "open \(self.path)", message: """
                this subdesk was built without PostgreSQL support (the static deployment build); \
                use one built with `swift build -c release`
                """, code: 0)
            #else
            opened = try PostgresConnection.openStore(try PostgresLocation(path), mode: mode, busyTimeoutMs: busyTimeoutMs)
            #endif
        } else {
            if let problem = PostgresLocation.keywordStringProblem(path) {
                throw StoreError(operation: "open the store named by --db (db =, SUBDESK_DB)", message: problem, code: 0)
            }
            self.path = path
            opened = try SQLiteConnection.openStore(path: path, mode: mode, busyTimeoutMs: busyTimeoutMs)
        }
        db = opened.connection
        opening = opened.opening
    }

    /// The mode a new store file is made with: the owner's only, except in a folder shared with
    /// its group (group-writable and setgid, as the package makes /var/lib/subdesk: 2770,
    /// group subdesk), where the group's services (a web server's CGI user in the group)
    /// write it too. SQLite gives the -wal and -shm files the store's mode.
    static func newFileMode(inFolder dir: String) -> mode_t {
        var st = stat()
        guard stat(dir.isEmpty ? "." : dir, &st) == 0 else { return 0o600 }
        return st.st_mode & S_ISGID != 0 && st.st_mode & 0o070 == 0o070 ? 0o660 : 0o600
    }

    /// How long a writer waits for another process's write to finish before giving up.
    public static let defaultBusyTimeoutMs: Int32 = 10_000

    // MARK: Schema

    public var schemaVersion: Int { (try? db.schemaVersion()) ?? 0 }

    /// The engine the store lives in.
    public var dialect: SQLDialect { db.dialect }


    // MARK: Transactions

    /// Runs `body` as one atomic write; nested calls join the outer write (a throw from
    /// one makes the outer write roll back; use `savepoint` to undo a part alone).
    @discardableResult
    public func write<T>(_ body: () throws -> T) throws -> T {
        if db.isInTransaction { return try db.joined(body) }
        return try endingOverdueLockHolders { try transaction(begin: nil, body) }
    }

    /// One write transaction started by `begin` (the connection's exclusive start when
    /// nil): the held counts are written before it commits, and dropped if it fails.
    private func transaction<T>(begin: String?, _ body: () throws -> T) throws -> T {
        try transaction(start: { try db.execute(begin ?? db.beginWrite) }, body)
    }

    /// Runs `write`, a whole write transaction; when it could not have the writers' lock in
    /// time (PostgreSQL's lock timeout), a support or operator session that holds it past
    /// its login's bound is ended (the owner's function decides and audits it:
    /// `LockHolderEnding`), and the write is run once more.
    private func endingOverdueLockHolders<T>(_ write: () throws -> T) throws -> T {
        do {
            return try write()
        } catch let e as StoreError where e.sqlState == "55P03" && !deferringMetrics {
            guard let ended = try? db.endOverdueWriteLockHolders(), !ended.isEmpty else { throw e }
            for holder in ended { lockHolderEnded(holder.login, holder.pid) }
            return try write()
        }
    }

    private func transaction<T>(start: () throws -> Void, _ body: () throws -> T) throws -> T {
        // SQLite's change counter does not move for this connection's own commits.
        defer { segmentMemory.overlayCache = nil }
        do {
            try checkFileAtPath(committed: false)
            let result = try db.writeTransaction(start: start) {
                let result = try body()
                if !deferringMetrics { try flushMetrics() }
                return result
            }
            // Replaced while this write ran: it went to the file no path names any more, and
            // the caller must not say it was stored.
            try checkFileAtPath(committed: true)
            return result
        } catch {
            if !deferringMetrics {
                held = HeldCounts()
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
        guard !db.isInTransaction else { return try write(body) }
        var attempt = 0
        return try endingOverdueLockHolders {
            while true {
                attempt += 1
                do {
                    return try transaction(start: { try db.beginWrite(touching: keys) }, body)
                } catch let e as StoreError where e.isConflict && attempt < 5 && !deferringMetrics {
                    continue
                }
            }
        }
    }

    /// Told of each session a write had ended for holding the writers' lock past its bound
    /// (`endingOverdueLockHolders`); by default said on standard error (the web server's or
    /// serve's log).
    public var lockHolderEnded: (String, Int) -> Void = { login, pid in
        FileHandle.standardError.write(Data(("subdesk: ended the session of \(login) (pid \(pid)), which held the writers' lock "
                                             + "(store_changes) past its login's bound; audited as lock_holder_ended\n").utf8))
    }

    /// Runs `body` so that its writes are undone alone if it throws, inside or outside a write.
    public func savepoint<T>(_ body: () throws -> T) throws -> T {
        let heldBefore = held
        do {
            if db.isInTransaction { return try db.savepoint(body) }
            return try write { try db.savepoint(body) }
        } catch {
            held = heldBefore
            throw error
        }
    }

    /// Closes a store whose file another file has replaced at its path (a new demo, a
    /// restore), leaving the files SQLite keeps beside that path to the replacing store.
    /// The store cannot be used afterwards. Does nothing for PostgreSQL, which has no file.
    /// The write-ahead log of a file this connection wrote is emptied into that file first;
    /// one at the name that is not this connection's is not touched.
    public func closeAfterReplacement() {
        db.closeAfterReplacement(emptyingLog: opening.file != nil)
    }

    /// What the store's path names now, against the file this connection writes: nil while
    /// it is the same file (always, for PostgreSQL, memory and read-only stores).
    public func fileReplacedAtPath(committed: Bool = false) -> FileReplacedError? {
        guard let opened = opening.file else { return nil }
        let now = FileIdentity(path: path)
        return now == opened ? nil : FileReplacedError(path: path, missing: now == nil, committed: committed)
    }

    private func checkFileAtPath(committed: Bool) throws {
        if let replaced = fileReplacedAtPath(committed: committed) { throw replaced }
    }

    /// Changes whenever another connection commits to this database.
    public func dataVersion() throws -> Int {
        try db.changeVersion()
    }

    /// Runs `body` with every read it makes in one snapshot of the store (one read
    /// transaction, however many of its reads would open their own).
    public func inOneSnapshot<T>(_ body: () throws -> T) throws -> T {
        try db.readTransaction(body)
    }
}
