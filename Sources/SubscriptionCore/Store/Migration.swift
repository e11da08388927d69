/// One change to the schema: the number a store records once the change is made, a name
/// for messages, and its statements for each engine. `Migrations.all` lists them in order;
/// `Migrations.migrate` applies those a store has not recorded, each once.
///
/// The statements both engines run are written once, spelled with the engine's words for
/// what the engines spell otherwise (`SQLDialect`'s schema words: `\(d.integer)`,
/// `\(d.text)`, `\(d.bytes)`, `\(d.generatedID)`...). What one engine does its own way (a
/// trigger, a function, a table only it has) is that engine's part, run after the shared
/// statements; an engine with nothing to do for a change records its number all the same,
/// so a schema version means the same change on both.
struct Migration: Sendable {
    let version: Int
    let name: String
    let shared: @Sendable (SQLDialect) -> String
    let sqlite: String
    let postgres: String
    /// What the statements cannot do, run after them in the same transaction: a new column
    /// filled from what only the stored bodies say (read back, never verified again: they
    /// were verified when they came).
    let fill: MigrationFill?

    /// A change both engines make (`shared`, spelled with each engine's words), then what
    /// each does on its own (`sqlite`, `postgres`; empty when nothing), then `fill`.
    init(_ version: Int, _ name: String, _ shared: @escaping @Sendable (SQLDialect) -> String = { _ in "" },
         sqlite: String = "", postgres: String = "", fill: MigrationFill? = nil) {
        self.version = version
        self.name = name
        self.shared = shared
        self.sqlite = sqlite
        self.postgres = postgres
        self.fill = fill
    }

    /// The statements `dialect`'s engine runs for this change; empty when it has none.
    func sql(for dialect: SQLDialect) -> String {
        let own = dialect == .postgres ? postgres : sqlite
        return [shared(dialect), own].filter { !$0.isEmpty }.joined(separator: "\n")
    }
}

/// A migration's fill (`Migration.fill`). A type of its own, not a bare closure: a migration
/// written with a trailing closure (its statements) must never be taken for its fill.
struct MigrationFill: Sendable {
    let run: @Sendable (any SQLConnection) throws -> Void
}

extension Migrations {
    /// The schema version this build brings every store to.
    static var latestVersion: Int { all.last?.version ?? 0 }

    /// Brings the store behind `db` up to `last` (the latest version unless a test asks for
    /// an earlier store): every migration after the version the store records, in order,
    /// each recorded as it is made, all in one transaction that holds the store's migration
    /// lock (two processes opening an old store take turns, and the second finds it done).
    /// Returns the version the store had, read under that lock: 0 for a store made now.
    @discardableResult
    static func migrate(_ db: any SQLConnection, upTo last: Int = latestVersion) throws -> Int {
        let before = try db.schemaVersion()
        guard before < last else { return before }
        return try db.writeTransaction(start: { try db.beginMigration() }) {
            let found = try db.schemaVersion()
            for migration in all where migration.version > found && migration.version <= last {
                let sql = migration.sql(for: db.dialect)
                do {
                    if !sql.isEmpty { try db.execute(sql) }
                    try migration.fill?.run(db)
                    try db.recordSchemaVersion(migration.version)
                } catch let e as StoreError {
                    var named = StoreError(operation: "migration \(migration.version) (\(migration.name)): \(e.operation)",
                                           message: e.message, code: e.code, sqlState: e.sqlState)
                    named.denial = e.denial
                    throw named
                }
            }
            return found
        }
    }
}

/// What opening a store found, on either engine (`SQLiteConnection.openStore`,
/// `PostgresConnection.openStore`): the connection, and the facts the store keeps.
struct OpenedStore {
    var connection: any SQLConnection
    var opening: StoreOpening

    init(connection: any SQLConnection, created: Bool = false, readOnly: Bool = false, readAsSnapshot: Bool = false,
         newerSchemaVersion: Int? = nil, openedFile: FileIdentity? = nil) {
        self.connection = connection
        opening = StoreOpening(created: created, readOnly: readOnly, readAsSnapshot: readAsSnapshot,
                               newerSchemaVersion: newerSchemaVersion, file: openedFile)
    }
}

/// What opening a store found (`Store.opening`).
public struct StoreOpening: Sendable {
    /// Opening created the store (its file, or its PostgreSQL schema).
    public let created: Bool
    /// This connection cannot write: the file or its folder is not writable, or the login
    /// may not change the subscriptions. It reads the store as it is.
    public let readOnly: Bool
    /// The store was read as a snapshot of its file, without the lock files that let it
    /// see another process's writes (a reader that cannot create them).
    public let readAsSnapshot: Bool
    /// The store's schema version, when a newer subdesk wrote it and it was opened to read.
    public let newerSchemaVersion: Int?
    /// The file a writable SQLite store was opened from: each write checks that its path
    /// still names it (`FileReplacedError`), so nothing is written to, and acknowledged
    /// from, a file a restore or a new `init` replaced. Nil for PostgreSQL, memory, readers.
    public let file: FileIdentity?
}

extension Migrations {
    /// The version policy both engines open a store by: a store written by a newer subdesk
    /// (its `version` past `latestVersion`) is opened to read only, as it is; a command
    /// that writes refuses it. Returns that version, or nil for a store this build knows.
    static func newer(_ version: Int, opening store: String, for mode: Store.OpenMode) throws -> Int? {
        guard version > latestVersion else { return nil }
        guard mode == .reading else {
            throw StoreError(operation: "open \(store)", message: """
                schema version \(version) was written by a newer subdesk (this one knows up to \
                \(latestVersion)); refusing to change it: use the newer subdesk (read-only \
                commands such as show and search still open it)
                """, code: 0)
        }
        return version
    }
}
