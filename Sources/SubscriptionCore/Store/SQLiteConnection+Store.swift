import CSQLite
import Foundation

/// What the Store asks of a SQLite connection that it does its own way: a file with a
/// write-ahead log beside it, writers that take turns, no server and no users.
extension SQLiteConnection {
    /// Writers take turns on SQLite: a write of a few subscriptions is any write.
    func beginWrite(touching keys: [String]) throws { try execute(beginWrite) }

    func schemaVersion() throws -> Int { Int(try integer("PRAGMA user_version") ?? 0) }

    func recordSchemaVersion(_ version: Int) throws { try execute("PRAGMA user_version = \(version)") }

    /// The write lock: a new store is an empty file, locked as any other.
    func beginMigration() throws { try execute(beginWrite) }



    func changeVersion() throws -> Int { Int(try integer("PRAGMA data_version") ?? 0) }

    func storageBytes() throws -> (store: Int64?, wal: Int64?) {
        guard path != ":memory:" else { return (nil, nil) }
        func size(_ p: String) -> Int64? {
            (try? FileManager.default.attributesOfItem(atPath: p)[.size] as? NSNumber)?.int64Value
        }
        return (size(path), size(path + "-wal") ?? 0)
    }

    func integrityCheck() throws -> [String]? { try texts("PRAGMA integrity_check") }

    func missingAuditGuards() throws -> [String] {
        let present = Set(try texts("SELECT name FROM sqlite_schema WHERE type = 'trigger' AND tbl_name = 'audit_log'"))
        return AuditGuards.sqlite.filter { !present.contains($0) }
    }

    func auditGuardProblems() throws -> [String] {
        try missingAuditGuards().map { "trigger \($0) is missing" }
    }

    /// SQLite's online backup: consistent, and safe while other processes keep writing
    /// (it restarts its pass if they do).
    func backup(to destination: String) throws {
        try Store.createBackupFile(destination)
        var target: OpaquePointer?
        var rc = sqlite3_open_v2(destination, &target, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil)
        defer { sqlite3_close_v2(target) }
        guard rc == SQLITE_OK, let target else {
            throw StoreError(operation: "backup to \(destination)", message: target.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open", code: rc)
        }
        guard let backup = sqlite3_backup_init(target, "main", handle, "main") else {
            throw StoreError(operation: "backup to \(destination)", message: String(cString: sqlite3_errmsg(target)), code: sqlite3_errcode(target))
        }
        repeat {
            rc = sqlite3_backup_step(backup, 256)
            if rc == SQLITE_BUSY || rc == SQLITE_LOCKED { sqlite3_sleep(20) }
        } while rc == SQLITE_OK || rc == SQLITE_BUSY || rc == SQLITE_LOCKED
        let finish = sqlite3_backup_finish(backup)
        guard rc == SQLITE_DONE, finish == SQLITE_OK else {
            try? FileManager.default.removeItem(atPath: destination)
            throw StoreError(operation: "backup to \(destination)", message: String(cString: sqlite3_errmsg(target)), code: rc)
        }
    }

    func columns(of table: String) throws -> [String] {
        try texts("SELECT name FROM pragma_table_info(?) ORDER BY cid", [table])
    }

    /// SQLite takes copied rows as they come: its ids continue after the largest there.
    func copyStarts(into tables: [String]) throws {}
    func copyEnded(into tables: [String]) throws {}

    /// Every commit reaches the disk before it returns (so "stored" survives a power cut),
    /// and closing does not checkpoint the WAL (the next writer's automatic checkpoint
    /// does), keeping the answer fast.
    func configureForOneShotWrites() throws {
        try execute("PRAGMA synchronous = FULL")
        _ = subdesk_sqlite_no_checkpoint_on_close(handle)
    }

    /// A process that opens the store while no other has it open rebuilds the WAL index by
    /// reading the whole WAL, and knows nothing of what earlier checkpoints copied, so with
    /// one process per request the WAL would only grow and every request read all of it.
    /// Past `walLimitBytes` the WAL is copied into the database and truncated; when another
    /// connection is busy that is left to a later request (or, for `serve`, a later group).
    func finishOneShotWrites(walLimitBytes: Int64) {
        guard writeAheadLogIsPast(walLimitBytes) else { return }
        waitWhenBusy(milliseconds: 0)
        try? execute("PRAGMA wal_checkpoint(TRUNCATE)")
        // A long-lived writer (serve) goes on writing through this connection.
        waitWhenBusy(milliseconds: busyTimeoutMs)
    }

    /// On a connection that reuses the log (`reuseWriteAheadLog`), the frames its last commit
    /// left in it, counted by SQLite as it commits; otherwise the log file's size, by stat(2)
    /// alone, cheap enough to ask after every commit: not FileManager's attributes, which also
    /// look up the owner's name and cost a one-shot process the whole user database.
    func writeAheadLogIsPast(_ bytes: Int64) -> Bool {
        if let logWatch { return logWatch.bytes > bytes }
        guard !readOnly, !path.isEmpty, path != ":memory:" else { return false }
        var info = stat()
        return stat(path + "-wal", &info) == 0 && Int64(info.st_size) > bytes
    }

    /// For a long-lived writer with `checkpointBesideWriters` beside it (serve's committer):
    /// after each checkpoint the log file is written over from its start, not truncated and
    /// grown again. Each commit into a truncated log extended the file, so the file system
    /// allocated its blocks and `fdatasync` wrote the file's new size as well as the frames:
    /// without that, serve's committer spends a fifth less CPU on a group of one
    /// (BENCHMARKS.md). A log that grew
    /// past `WriteAheadLogReuse.keptBytes` while a checkpoint could not restart it (a reader
    /// held its frames) is cut back to that by the first commit after a restart. The
    /// connection counts the log's frames after each of its commits (`writeAheadLogIsPast`),
    /// since the file's size no longer says; SQLite's automatic checkpoint, which counting
    /// replaces, is kept at its default as a backstop.
    func reuseWriteAheadLog() throws {
        guard logWatch == nil, !readOnly, path != ":memory:" else { return }
        try execute("PRAGMA journal_size_limit = \(WriteAheadLogReuse.keptBytes)")
        let pageSize = try integer("PRAGMA page_size") ?? 4096
        let watch = WriteAheadLogReuse(frameBytes: Int64(pageSize) + 24)
        logWatch = watch
        sqlite3_wal_hook(handle, WriteAheadLogReuse.hook, Unmanaged.passUnretained(watch).toOpaque())
    }

    /// For a long-lived writer (serve), on a connection of its own beside the one that
    /// commits: the WAL's frames are copied into the database without holding up the
    /// writers (PASSIVE); then, when the log held more than `walLimitBytes`, in the writers'
    /// turn among this process's connections, the frames committed meanwhile are copied and
    /// the log restarted: the next commit writes over it from its start (a writer that
    /// `reuseWriteAheadLog`s keeps the file; others leave it at its size). A commit then never
    /// pays for a checkpoint (with the copy in the committer's path, serve's p99 per request
    /// was some 60% higher while a deliverer wrote beside it: BENCHMARKS.md). A writer of
    /// another process holding the lock, or a reader still on the log's frames, leaves the
    /// restart to a later call.
    func checkpointBesideWriters(walLimitBytes: Int64) {
        guard !readOnly, let handle else { return }
        var frames: Int32 = 0, copied: Int32 = 0
        let frameBytes = ((try? integer("PRAGMA page_size")).flatMap { $0 } ?? 4096) + 24
        guard sqlite3_wal_checkpoint_v2(handle, nil, SQLITE_CHECKPOINT_PASSIVE, &frames, &copied) == SQLITE_OK,
              Int64(frames) * frameBytes > walLimitBytes else { return }
        waitWhenBusy(milliseconds: 0)
        defer { waitWhenBusy(milliseconds: busyTimeoutMs) }
        _ = try? inWriteTurn { try execute("PRAGMA wal_checkpoint(RESTART)") }
    }

    /// No server: writers wait only for the busy timeout.
    func boundServerWaitsForIntake() throws {}

    func checkpointEvery(pages: Int) throws {
        try execute("PRAGMA wal_autocheckpoint = \(max(1, pages))")
    }

    func cachePages(kibibytes: Int) throws {
        try execute("PRAGMA cache_size = -\(max(1, kibibytes))")
    }

    var bulkLoad: BulkLoadSettings? {
        BulkLoadSettings(
            // No journal and a large page cache: each page is written once, at the end.
            start: "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA cache_size = -524288",
            end: "PRAGMA cache_size = -2000; PRAGMA synchronous = NORMAL; PRAGMA journal_mode = WAL",
            setAsideIndexes: """
                SELECT \(IndexDefinition.list) FROM sqlite_schema WHERE type = 'index' AND sql IS NOT NULL AND sql NOT LIKE 'CREATE UNIQUE%'
                """)
    }

    // No server, so no locks held by sessions, no logins and no database roles.

    func writeLockHolders() throws -> [Store.WriteLockHolder] { [] }
    func endOverdueWriteLockHolders() throws -> [(login: String, pid: Int)] { [] }
    func publicMayConnect() throws -> Bool? { nil }
    func databaseRoles() throws -> [String] { [] }
    func databaseUser() throws -> String? { nil }
    func installRoles() throws -> [String] {
        throw StoreError(operation: "install roles", message: "a SQLite store has no database roles", code: 0)
    }
    func makeLogin(_ login: PostgresLogin, password: String?) throws -> Bool {
        throw StoreError(operation: "make the login \(login.name)", message: "a SQLite store has no database logins", code: 0)
    }
    func connectionSlots() throws -> ConnectionSlots? { nil }
}

extension SQLiteConnection {
    /// What the SQLite file at `path` is, read without changing it (`StoreLocation.kind(ofFileAt:)`).
    static func kind(ofFileAt path: String) -> StoreLocation.FileKind {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { return .missing }
        if isDirectory.boolValue { return .other("a directory") }
        guard let db = try? SQLiteConnection(path: path, readOnly: true, busyTimeoutMs: 2000) else { return .other("not readable") }
        guard let tables = try? db.texts("SELECT name FROM sqlite_schema WHERE type = 'table'") else {
            return .other("not a SQLite database")
        }
        guard tables.contains("notifications") else { return .other(tables.isEmpty ? "an empty or foreign SQLite file" : "a SQLite database of another program") }
        if tables.contains("store_facts"), (try? StoreFactsTable(db: db).value("kind")) == "demo" {
            return .demo
        }
        return .store(notifications: (try? db.count("SELECT count(*) FROM notifications")) ?? 0)
    }
}

extension SQLiteConnection {
    /// Opens (creating it when `mode` allows) the store file at `path` (or `:memory:`) and
    /// brings its schema up to date: a file this user cannot write is read as it is, as a
    /// snapshot when its -shm file cannot be made either. A new file is created readable
    /// and writable by its owner only (0600; `Store.newFileMode`); SQLite gives its -wal and
    /// -shm files the same mode.
    static func openStore(path: String, mode: Store.OpenMode, busyTimeoutMs: Int32) throws -> OpenedStore {
        var created = false
        if path != ":memory:" {
            var isDirectory: ObjCBool = false
            let exists = FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory)
            if isDirectory.boolValue {
                throw StoreError(operation: "open \(path)", message: "is a directory, not a store file", code: 14)
            }
            if !exists {
                guard mode == .createIfMissing else { throw StoreNotFound(path: path) }
                try createEmptyFile(path)
                created = true
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
            let snapshot = (try? shared.schemaVersion()) == nil
            let connection = snapshot
                ? try SQLiteConnection(path: path, readOnly: true, immutable: true, busyTimeoutMs: busyTimeoutMs) : shared
            let version = (try? connection.schemaVersion()) ?? 0
            if version < Migrations.latestVersion {
                throw StoreError(operation: "open \(path)", message: """
                    schema version \(version) needs bringing up to date (to \(Migrations.latestVersion)), which this \
                    user cannot do: \(unwritable); run any subdesk command on it once as a user who can write it
                    """, code: 8)
            }
            return OpenedStore(connection: connection, created: created, readOnly: true, readAsSnapshot: snapshot,
                               newerSchemaVersion: try Migrations.newer(version, opening: path, for: .reading))
        }
        do {
            let db = try SQLiteConnection(path: path, busyTimeoutMs: busyTimeoutMs)
            let file = FileIdentity(path: path)
            try db.enableWAL(busyTimeoutMs: busyTimeoutMs)
            try db.execute("PRAGMA synchronous = NORMAL")
            try db.execute("PRAGMA foreign_keys = ON")
            // Inside a write transaction, every statement that may fail half-way (an upsert,
            // an insert into a table with a unique index) keeps the pages it changes in a
            // statement journal. On disk that is a temporary file and two writes per page:
            // ten system calls per notification on the intake path. Kept in memory instead.
            try db.execute("PRAGMA temp_store = MEMORY")
            let version = (try? db.schemaVersion()) ?? 0
            let newer = try Migrations.newer(version, opening: path, for: mode)
            if newer == nil { try Migrations.migrate(db) }
            return OpenedStore(connection: db, created: created, newerSchemaVersion: newer, openedFile: file)
        } catch let e as StoreError {
            throw explained(e, path: path)
        }
    }

    /// Creates an empty store file, and its folder, readable and writable by the owner only
    /// (and the group, in a folder shared with it: `newFileMode`).
    private static func createEmptyFile(_ path: String) throws {
        let dir = (path as NSString).deletingLastPathComponent
        if !dir.isEmpty && !FileManager.default.fileExists(atPath: dir) {
            do {
                try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            } catch {
                throw StoreError(operation: "create directory \(dir)", message: "\(error.localizedDescription)", code: 14)
            }
        }
        let mode = Store.newFileMode(inFolder: dir)
        let fd = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, mode)
        if fd < 0 {
            let code = errno
            // Another process may have created it meanwhile; that is fine.
            if code == EEXIST { return }
            throw StoreError(operation: "create \(path)", message: String(cString: strerror(code)), code: 14)
        }
        // The umask may only have taken rights away (a unit's UMask=0077); make it exact.
        fchmod(fd, mode)
        Glibc.close(fd)
    }

    /// SQLite says "disk I/O error" for more than one cause; say which one it is when we can.
    static func explained(_ e: StoreError, path: String) -> StoreError {
        let dir = (path as NSString).deletingLastPathComponent
        guard let attributes = try? FileManager.default.attributesOfFileSystem(forPath: dir.isEmpty ? "." : dir),
              let free = (attributes[.systemFreeSize] as? NSNumber)?.int64Value, free < 1 << 20 else { return e }
        return StoreError(operation: e.operation, message: "\(e.message); the disk is full (\(free) bytes free)", code: e.code)
    }

    /// WAL mode is kept in the file, so only the first open of a new store converts it.
    /// Converting needs the write lock while holding a read lock, and SQLite answers BUSY
    /// at once there instead of calling the busy handler (waiting could deadlock two
    /// upgraders). A burst of CGI processes on a new store hits exactly that, so the
    /// conversion is retried here within the same busy timeout.
    func enableWAL(busyTimeoutMs: Int32) throws {
        let deadline = Date().addingTimeInterval(Double(max(busyTimeoutMs, 0)) / 1000)
        var pause = 0.001
        while true {
            do {
                try execute("PRAGMA journal_mode = WAL")
                return
            } catch let error as StoreError where error.isBusy && Date() < deadline {
                Thread.sleep(forTimeInterval: pause)
                pause = min(pause * 2, 0.05)
            }
        }
    }
}

extension Store {
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
}

/// A connection's count of the frames in the log after each of its commits, for a writer
/// that reuses the log (`SQLiteConnection.reuseWriteAheadLog`); SQLite calls `hook` as each
/// commit ends, in place of its own automatic checkpoint, which the hook carries on.
final class WriteAheadLogReuse {
    /// How large a log file is kept for reuse: a larger one is cut back to this at the first
    /// commit after a restart. Four times serve's checkpoint limit (1 MiB).
    static let keptBytes: Int64 = 4 << 20
    /// SQLite's default automatic checkpoint: a commit that leaves more frames than this
    /// copies them itself (when the checkpoint beside the writer cannot keep up).
    static let backstopFrames: Int32 = 1000

    let frameBytes: Int64
    private(set) var frames: Int32 = 0
    var bytes: Int64 { Int64(frames) * frameBytes }

    init(frameBytes: Int64) { self.frameBytes = frameBytes }

    static let hook: @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UnsafePointer<CChar>?, Int32) -> Int32 = { context, db, name, frames in
        guard let context else { return SQLITE_OK }
        Unmanaged<WriteAheadLogReuse>.fromOpaque(context).takeUnretainedValue().frames = frames
        if frames >= backstopFrames { _ = sqlite3_wal_checkpoint(db, name) }
        return SQLITE_OK
    }
}
