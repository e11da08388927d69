import Foundation

extension Store {
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
