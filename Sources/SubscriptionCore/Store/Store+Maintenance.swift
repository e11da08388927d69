import Foundation

/// Facts `subdesk doctor` reports about a store.
public struct StoreHealth: Sendable {
    public var integrity: [String]
    /// Whether `integrity` is subdesk's check of the store's pages, not left to a server.
    public var pagesChecked: Bool
    public var schemaVersion: Int
    public var latestSchemaVersion: Int
    public var walBytes: Int64?
    public var fileBytes: Int64?
    public var subscriptions: Int
    public var notifications: Int
    public var quarantined: Int
}

extension StoreLocation {
    /// What is at `path`, read without changing it: nothing, a demo store, another subdesk
    /// store (with its notification count), or a file that is no subdesk store.
    public enum FileKind: Equatable { case missing, demo, store(notifications: Int), other(String) }

    public static func kind(ofFileAt path: String) -> FileKind {
        if PostgresLocation.isPostgres(path) {
            do {
                let store = try Store(path: path, mode: .reading)
                return store.upkeep.isDemo ? .demo : .store(notifications: (try? store.notifications.count()) ?? 0)
            } catch is StoreNotFound {
                return .missing
            } catch {
                return .other("not readable (\(error))")
            }
        }
        return SQLiteConnection.kind(ofFileAt: path)
    }
}

/// The store's upkeep: its health, backups, the engine's checkpoints and durability for
/// one kind of writer or another, bulk loading, the audit log's guards, and copying a whole
/// store (`subdesk doctor`, `backup`, `ingest`, `migrate`, `serve`). Nothing here reads or
/// writes a table's rows but to count or copy them.
public struct StoreUpkeep {
    let store: Store
    var db: any SQLConnection { store.db }
}

extension Store {
    /// The store's upkeep.
    public var upkeep: StoreUpkeep { StoreUpkeep(store: self) }
}

extension StoreUpkeep {
    /// Runs the engine's integrity check (SQLite's; a server checks its own pages) and
    /// gathers the store's vital signs.
    public func health() throws -> StoreHealth {
        let integrity = try db.integrityCheck()
        let bytes = try db.storageBytes()
        return StoreHealth(integrity: integrity ?? ["ok"], pagesChecked: integrity != nil, schemaVersion: store.schemaVersion,
                           latestSchemaVersion: Migrations.latestVersion, walBytes: bytes.wal, fileBytes: bytes.store,
                           subscriptions: try store.subscriptions.count(), notifications: try store.notifications.count(),
                           quarantined: try store.quarantine.unresolvedCount())
    }

    /// Marks the store as one `subdesk demo` built (test-CA data, replaceable by the next demo).
    public func markAsDemo() throws {
        try store.write { try store.facts.set("kind", "demo") }
    }

    /// Whether `subdesk demo` built this store.
    public var isDemo: Bool {
        (try? store.facts.value("kind")) == "demo"
    }

    /// Whether the store holds data signed under the test CA (chains it remembers name it).
    public func holdsTestCAData() throws -> Bool {
        try VerifiedChainTable(db: db).holdTestCA()
    }

    /// The triggers that keep the audit log append-only and are not in the store (someone
    /// dropped them with another tool); empty when all are there.
    public func missingAuditGuards() throws -> [String] { try db.missingAuditGuards() }

    /// What keeps the audit log from being append-only, one sentence each; empty when its
    /// guards are whole. On PostgreSQL that covers the trigger functions' bodies and owners.
    public func auditGuardProblems() throws -> [String] { try db.auditGuardProblems() }

    /// What was found in place when `auditGuardProblems` finds nothing, to say so.
    public var auditGuardsWhole: String { db.dialect.auditGuardsWhole }

    /// Copies the store to `destination`, consistent while other processes keep writing:
    /// SQLite's online backup, or pg_dump of the store's schema in its custom format.
    public func backup(to destination: String) throws { try db.backup(to: destination) }
}

extension Store {
    /// Creates `path` for a backup, readable and writable by this user only (a backup holds
    /// the same user ids, tokens and purchases as the store); refuses a path that exists,
    /// atomically, so nothing is ever overwritten.
    static func createBackupFile(_ path: String) throws {
        let fd = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            let code = errno
            throw StoreError(operation: "backup to \(path)",
                             message: code == EEXIST ? "file exists; refusing to overwrite it" : String(cString: strerror(code)), code: 0)
        }
        // The mode asked for is cut by the umask only towards fewer rights; make it exact.
        fchmod(fd, 0o600)
        close(fd)
    }
}

extension StoreUpkeep {
    /// For one short-lived writer per request (CGI): every commit reaches the disk before
    /// it returns (so "stored" survives a power cut), and closing does not checkpoint the
    /// WAL (the next writer's automatic checkpoint does), keeping the answer fast.
    public func configureForOneShotWrites() throws { try db.configureForOneShotWrites() }

    /// Bounds the server's waits for a writer someone is waiting on (CGI, batch intake):
    /// a statement may run at most 20 s past the write lock's timeout, and a transaction
    /// left idle (a client stopped half-way) ends after 30 s, freeing its locks; unless the
    /// connection's settings (URI, PGOPTIONS, the role's) bound them already. SQLite has
    /// no server, and its writers wait only for the busy timeout.
    public func boundServerWaitsForIntake() throws { try db.boundServerWaitsForIntake() }

    /// Ends a one-shot writer's work: past `walLimitBytes`, SQLite's WAL is copied into
    /// the database and truncated (see `SQLiteConnection.finishOneShotWrites`).
    public func finishOneShotWrites(walLimitBytes: Int64 = 1 << 20) { db.finishOneShotWrites(walLimitBytes: walLimitBytes) }

    /// Whether the log beside the store (SQLite's WAL), which a long-lived writer keeps short
    /// with `checkpointBesideWriters` on a connection of its own, is past `bytes`: the frames
    /// this connection's last commit left, once it `reuseWriteAheadLog`s, else the file's size.
    public func writeAheadLogIsPast(_ bytes: Int64 = 1 << 20) -> Bool { db.writeAheadLogIsPast(bytes) }

    /// The WAL is copied into the database beside the writers and, past `walLimitBytes`,
    /// restarted in their turn (see `SQLiteConnection.checkpointBesideWriters`).
    public func checkpointBesideWriters(walLimitBytes: Int64 = 1 << 20) { db.checkpointBesideWriters(walLimitBytes: walLimitBytes) }

    /// For a long-lived writer with `checkpointBesideWriters` beside it (serve's committer):
    /// the log file is written over from its start after each checkpoint instead of truncated
    /// and grown again, and `writeAheadLogIsPast` counts what this connection's commits leave
    /// in it (see `SQLiteConnection.reuseWriteAheadLog`). Nothing on PostgreSQL.
    public func reuseWriteAheadLog() throws { try db.reuseWriteAheadLog() }
}
