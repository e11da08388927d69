import Foundation

/// What a command or a dashboard key does to a store, in words a refused login is told it
/// may not do, and the privilege it is about (the roles holding it are the ones named as able to).
public struct StoreWrite: Sendable, Hashable {
    public let words: String
    public let privilege: PostgresRoles.Privilege
    public let table: String

    public init(words: String, privilege: PostgresRoles.Privilege, table: String) {
        self.words = words
        self.privilege = privilege
        self.table = table
    }

    // The writes an operator makes from the dashboard as from the command line.
    public static let overrides = StoreWrite(words: "place or lift overrides", privilege: .insert, table: "overrides")
    public static let revalidation = StoreWrite(words: "revalidate subscriptions", privilege: .update, table: "transactions")
    public static let extension_ = StoreWrite(words: "extend renewal dates", privilege: .insert, table: "renewal_extensions")
    public static let refundAnswers = StoreWrite(words: "answer refund requests", privilege: .update, table: "refund_requests")
    public static let consentHandling = StoreWrite(words: "mark consent withdrawals handled", privilege: .insert, table: "audit_log")
    public static let linking = StoreWrite(words: "link user ids", privilege: .update, table: "subscribers")
    public static let ping = StoreWrite(words: "record a ping", privilege: .insert, table: "store_facts")
    public static let backfill = StoreWrite(words: "backfill notifications", privilege: .insert, table: "backfill_runs")
    public static let retentionImport = StoreWrite(words: "import retention messaging reports", privilege: .insert,
                                                   table: "retention_messaging")
    public static let retentionConsole = StoreWrite(words: "keep the retention console's records", privilege: .insert,
                                                    table: "retention_content")

    /// The dashboard's writes, checked once when it opens.
    public static let desk: [StoreWrite] = [.overrides, .revalidation, .extension_, .refundAnswers, .consentHandling, .linking,
                                            .ping, .backfill]
}

/// Who the store's login is and which writes it may not make, as the dashboard's header
/// and its refusals say it: the CLI's words, before any dialog opens.
public struct StoreLogin: Sendable, Equatable {
    /// The database user (PostgreSQL); nil for a SQLite file.
    public var user: String?
    /// The subdesk roles the user is a member of.
    public var roles: [String]
    /// Why this SQLite file may only be read (not writable by this user); nil when it may be written.
    public var readOnlyReason: String?
    /// The writes this login may not make, each with what it is told.
    public var refusals: [StoreWrite: String]

    public init(user: String? = nil, roles: [String] = [], readOnlyReason: String? = nil, refusals: [StoreWrite: String] = [:]) {
        self.user = user
        self.roles = roles
        self.readOnlyReason = readOnlyReason
        self.refusals = refusals
    }

    /// What pressing a key that makes `write` is told, or nil when the login may make it.
    public func refusal(_ write: StoreWrite) -> String? { refusals[write] }

    /// The same refusal in fewer words, longest first, for a line too narrow for it: never
    /// without what may not be done and which roles may (or that the file is read-only).
    public func briefRefusal(_ write: StoreWrite) -> [String] {
        guard refusals[write] != nil else { return [] }
        if user == nil { return ["read-only store: may not \(write.words)"] }
        return PermissionDenial.briefly(doing: write.words, needs: (write.privilege, write.table))
    }

    /// The header's words: `pg: mgr (read)` (the roles without their `subdesk_` prefix),
    /// `read-only` for a file this user may only read; nil for a SQLite file that may be written.
    public var headerText: String? {
        if let user {
            let short = roles.map(PostgresRoles.shortName)
            return "pg: " + user + (short.isEmpty ? "" : " (\(short.joined(separator: ", ")))")
        }
        return readOnlyReason == nil ? nil : "read-only"
    }

    /// The header's words where room is short: `mgr (read)`.
    public var shortHeaderText: String? {
        guard let text = headerText, text.hasPrefix("pg: ") else { return nil }
        return String(text.dropFirst(4))
    }
}

extension Store {
    /// Who this store's login is and which of `writes` it may not make: asked of the server
    /// (PostgreSQL's own privileges, so an owner without a subdesk role may write), or of the
    /// file (SQLite: a file this user cannot write refuses every write).
    public func login(checking writes: [StoreWrite] = StoreWrite.desk) -> StoreLogin {
        var login = StoreLogin(user: db.recordedUser, roles: db.loginRoles)
        if login.user == nil {
            guard opening.readOnly else { return login }
            let reason = path == ":memory:" ? "opened read-only" : (Store.unwritableReason(path) ?? "opened read-only")
            login.readOnlyReason = reason
            for write in writes {
                login.refusals[write] = "the store \(URL(fileURLWithPath: path).lastPathComponent) is read-only for this user "
                    + "(\(reason)): may not \(write.words)"
            }
            return login
        }
        for write in writes where !((try? db.mayWrite(write.privilege.rawValue, on: write.table)) ?? true) {
            let denial = PermissionDenial(user: login.user ?? "?", roles: login.roles, privilege: write.privilege.rawValue,
                                          table: write.table)
            login.refusals[write] = denial.explain(doing: write.words, needs: (write.privilege, write.table))
        }
        return login
    }
}
