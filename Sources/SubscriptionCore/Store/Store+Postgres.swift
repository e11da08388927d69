import Foundation

/// What opening a PostgreSQL store found.
struct OpenedPostgresStore {
    var connection: any SQLConnection
    var created: Bool
    var readOnly: Bool
    var newerSchemaVersion: Int?
}

extension Store {
    /// Connects, creates the store (and the named PostgreSQL schema) when `mode` allows and
    /// it is not there yet, and brings an older store up to date (`Migrations.migrate`,
    /// as for SQLite); two processes creating or migrating it at once take turns.
    static func openPostgres(_ location: PostgresLocation, mode: OpenMode, busyTimeoutMs: Int32) throws -> OpenedPostgresStore {
        #if SUBDESK_NO_POSTGRES
        throw StoreError(operation: "open \(location.conninfo)", message: """
            this subdesk was built without PostgreSQL support (the static deployment build); \
            use one built with `swift build -c release`
            """, code: 0)
        #else
        let c = try PostgresConnection(location: location, lockTimeoutMs: busyTimeoutMs)
        var version = try c.schemaVersion()
        var created = false
        if version == 0 {
            guard mode == .createIfMissing else {
                throw StoreNotFound(path: PostgresLocation.redacted(location.conninfo) + (location.schema.map { " (schema \($0))" } ?? ""))
            }
            if let schema = location.schema {
                try c.execute("BEGIN; SELECT pg_advisory_xact_lock(hashtext('subdesk:create')); CREATE SCHEMA IF NOT EXISTS \(schema); COMMIT")
            }
        }
        if version > Migrations.latestVersion && mode != .reading {
            throw StoreError(operation: "open \(location.conninfo)", message: """
                schema version \(version) was written by a newer subdesk (this one knows up to \
                \(Migrations.latestVersion)); refusing to change it: use the newer subdesk
                """, code: 0)
        }
        // A reader of an older store reads it as it is.
        if version < Migrations.latestVersion && mode != .reading {
            created = try Migrations.migrate(c) == 0
            version = Migrations.latestVersion
        }
        // A role that may not change the subscriptions (the read-only role) cannot bring
        // derived data up to date either: it reads what is there.
        // Who this is, in the same round trip: a refused statement names the user and roles.
        let canWrite = try c.first("""
            SELECT has_table_privilege('subscriptions', 'UPDATE'), session_user,
                   (SELECT string_agg(rolname, ',' ORDER BY rolname) FROM pg_roles
                    WHERE rolname IN ('\(PostgresRoles.all.joined(separator: "', '"))') AND pg_has_role(session_user, oid, 'MEMBER'))
            """) { row -> Bool in
            c.identity = (row.string(1), row.isNull(2) ? [] : row.string(2).split(separator: ",").map(String.init))
            return row.bool(0)
        } ?? false
        return OpenedPostgresStore(connection: c, created: created, readOnly: !canWrite,
                                   newerSchemaVersion: version > Migrations.latestVersion ? version : nil)
        #endif
    }

    /// A session holding a lock that writes to this store would wait for.
    public struct WriteLockHolder: Sendable {
        public var pid: Int
        public var user: String
        public var application: String
        /// When its transaction began (UTC), nil when this login may not see other sessions.
        public var since: String?
        public var seconds: Int?
        /// The lock it holds, or whom it keeps waiting.
        public var what: String
    }
}

/// The PostgreSQL server's side of a store: the roles and logins `subdesk db roles` makes,
/// the sessions holding the write lock, the connection slots. Every answer is empty or nil
/// on SQLite, which has no server.
public struct StoreServer {
    let db: any SQLConnection

    /// Who holds what a write would wait for, as the server's lock table says: a lock on
    /// `store_changes` that conflicts with a shared write's, or anything a waiting writer
    /// waits for. Empty without a server (SQLite), and when nothing is held.
    public func writeLockHolders() throws -> [Store.WriteLockHolder] { try db.writeLockHolders() }

    /// Whether every login may connect to this store's database (CONNECT left to PUBLIC),
    /// which `db init --roles` revokes. nil without a server (SQLite).
    public func publicMayConnect() throws -> Bool? { try db.publicMayConnect() }

    /// Creates the database roles and grants their rights on this store's schema
    /// (`PostgresRoles`); refused by an engine without roles.
    @discardableResult
    public func installRoles() throws -> [String] { try db.installRoles() }

    /// Creates `login` (or changes it, when it exists) as a member of its role only, with
    /// its connection limit and session bounds, and `password` when given (else it keeps
    /// the one it has, or has none: peer or certificate authentication). True when created.
    @discardableResult
    public func makeLogin(_ login: PostgresLogin, password: String? = nil) throws -> Bool { try db.makeLogin(login, password: password) }

    /// The server's connection slots and its logins' roles and limits; nil without a server.
    public func connectionSlots() throws -> ConnectionSlots? { try db.connectionSlots() }

    /// The subdesk roles the connection's user is a member of (none for the owner or a
    /// superuser that is no member, and none without a server).
    public func databaseRoles() throws -> [String] { try db.databaseRoles() }

    /// The database user this store's connection is; nil without a server (SQLite).
    public func databaseUser() throws -> String? { try db.databaseUser() }
}

extension Store {
    /// The database server's roles, logins and sessions.
    public var server: StoreServer { StoreServer(db: db) }
}
