import Foundation

/// A login user for a person or a host: a member of one subdesk role, with a connection
/// limit and bounds on its sessions (`subdesk db login`).
///
/// A group role's settings are not inherited by its members, and nothing limits how many
/// connections a login opens: a reader's reports, left to themselves, can take every slot
/// the server has, and intake then answers 503. So each login gets its own `CONNECTION
/// LIMIT` and its own `statement_timeout`, `lock_timeout` and
/// `idle_in_transaction_session_timeout`; the last two bound how long a support or operator
/// session may hold the writers' lock (`store_changes`) that its writes take.
public struct PostgresLogin: Sendable, Equatable {
    public var name: String
    /// The subdesk role it is a member of (`subdesk_read`, ...).
    public var role: String
    /// The most connections it may hold at once; nil for no limit.
    public var connectionLimit: Int?
    public var statementTimeoutMs: Int
    public var lockTimeoutMs: Int
    public var idleInTransactionMs: Int

    /// Each role's bounds unless told otherwise: read and support short (reports and
    /// lookups, a handful of connections); operator generous (a sweep or a backfill runs
    /// long statements); intake without a limit (the web server's processes bound it) and a
    /// lock timeout below its busy wait, so a stalled write gives up before the request does.
    public static let defaults: [String: PostgresLogin] = [
        "subdesk_read": PostgresLogin(name: "", role: "subdesk_read", connectionLimit: 4,
                                      statementTimeoutMs: 120_000, lockTimeoutMs: 5_000, idleInTransactionMs: 30_000),
        "subdesk_support": PostgresLogin(name: "", role: "subdesk_support", connectionLimit: 4,
                                         statementTimeoutMs: 60_000, lockTimeoutMs: 10_000, idleInTransactionMs: 5_000),
        "subdesk_operator": PostgresLogin(name: "", role: "subdesk_operator", connectionLimit: 3,
                                          statementTimeoutMs: 1_800_000, lockTimeoutMs: 60_000, idleInTransactionMs: 60_000),
        "subdesk_intake": PostgresLogin(name: "", role: "subdesk_intake", connectionLimit: nil,
                                        statementTimeoutMs: 30_000, lockTimeoutMs: 8_000, idleInTransactionMs: 30_000),
    ]

    /// The largest connection limit taken, and the longest bound (a day).
    public static let maxConnectionLimit = 10_000
    public static let maxBoundMs = 86_400_000

    /// The defaults of `role` (its short name, `support`, or its full one) for a login `name`.
    public static func defaults(name: String, role: String) -> PostgresLogin? {
        let full = role.hasPrefix("subdesk_") ? role : "subdesk_" + role
        guard var login = defaults[full] else { return nil }
        login.name = name
        return login
    }

    /// What is wrong with `name` as a login's name, or nil: an identifier of letters,
    /// digits, `_`, `-` and `.`, starting with a letter or `_`, at most 63 bytes (what
    /// PostgreSQL keeps of a name), and none of PostgreSQL's (`pg_`) or subdesk's roles.
    public static func problem(name: String) -> String? {
        let allowed = name.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || "_-.".unicodeScalars.contains($0) }
        guard let first = name.unicodeScalars.first, ("a"..."z").contains(first) || ("A"..."Z").contains(first) || first == "_",
              allowed, name.utf8.count <= 63 else {
            return "a login's name is 1 to 63 letters, digits, _, - or ., starting with a letter or _"
        }
        if name.lowercased().hasPrefix("pg_") { return "names starting with pg_ are PostgreSQL's own" }
        if PostgresRoles.all.contains(name) { return "\(name) is one of subdesk's group roles; a login is a member of one" }
        return nil
    }

    /// The name as an SQL identifier.
    var quotedName: String { "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }

    /// The session settings it is given, each in milliseconds.
    public var settings: [(name: String, ms: Int)] {
        [("statement_timeout", statementTimeoutMs), ("lock_timeout", lockTimeoutMs),
         ("idle_in_transaction_session_timeout", idleInTransactionMs)]
    }

    /// How `db login` says what the login is now.
    public var summary: String {
        "a member of \(role), " + (connectionLimit.map { "connection limit \($0)" } ?? "no connection limit") + ", "
            + settings.map { "\($0.name) \(Self.words($0.ms))" }.joined(separator: ", ")
    }

    /// The roles in the order `db login` names them, short.
    public static let roleOrder = ["read", "support", "operator", "intake"]

    /// Each default, said once per bound for `db login --help`: `read 4, support 4, ...`.
    public static func defaultsText(_ value: (PostgresLogin) -> String) -> String {
        roleOrder.compactMap { role in defaults(name: "", role: role).map { "\(role) \(value($0))" } }.joined(separator: ", ")
    }

    /// The README's table of the defaults, checked against it by a test.
    public static var markdown: String {
        var lines = ["| role | connection limit | `statement_timeout` | `lock_timeout` | `idle_in_transaction_session_timeout` |",
                     "|---|---|---|---|---|"]
        for role in roleOrder {
            guard let d = defaults(name: "", role: role) else { continue }
            lines.append("| \(role) | \(d.connectionLimit.map(String.init) ?? "none") | \(words(d.statementTimeoutMs)) | "
                         + "\(words(d.lockTimeoutMs)) | \(words(d.idleInTransactionMs)) |")
        }
        return lines.joined(separator: "\n")
    }

    /// `500ms`, `5s`, `30m`.
    public static func words(_ ms: Int) -> String {
        if ms % 1000 != 0 { return "\(ms)ms" }
        let s = ms / 1000
        return s < 60 || s % 60 != 0 ? "\(s)s" : "\(s / 60)m"
    }
}

/// What `doctor` weighs: the server's connection slots and who may take them.
public struct ConnectionSlots: Sendable, Equatable {
    public struct Login: Sendable, Equatable {
        public var name: String
        /// The subdesk roles it is a member of.
        public var roles: [String]
        /// Its connection limit; nil for none.
        public var limit: Int?
        public var superuser: Bool
        /// The store's owner (it owns the audit log, or is a member of the role that does).
        public var owner: Bool

        public init(name: String, roles: [String], limit: Int?, superuser: Bool, owner: Bool = false) {
            self.name = name
            self.roles = roles
            self.limit = limit
            self.superuser = superuser
            self.owner = owner
        }

        /// Whether its connections count against the ordinary slots: every login but a
        /// superuser, the owner and intake's (whose slots the rule keeps free), whatever
        /// else it is a member of.
        var isCounted: Bool { !superuser && !owner && !roles.contains("subdesk_intake") }
    }

    public var maxConnections: Int
    public var superuserReserved: Int
    /// `reserved_connections` (PostgreSQL 16 and later; 0 before).
    public var reserved: Int
    /// Whether subdesk_intake may use the reserved connections (a member of
    /// `pg_use_reserved_connections`, PostgreSQL 16 and later).
    public var intakeUsesReserved: Bool
    public var logins: [Login]

    public init(maxConnections: Int, superuserReserved: Int, reserved: Int, intakeUsesReserved: Bool, logins: [Login]) {
        self.maxConnections = maxConnections
        self.superuserReserved = superuserReserved
        self.reserved = reserved
        self.intakeUsesReserved = intakeUsesReserved
        self.logins = logins
    }

    /// The slots the owner needs (doctor, and a migration or `db` command beside it) and
    /// the fewest intake needs to keep answering; the rule doctor checks is that the limits
    /// of every login but intake's (read, support, operator) together leave at least both
    /// of the ordinary slots.
    public static let ownerSlots = 2
    public static let intakeSlots = 3

    /// The slots a login that is no superuser may take.
    public var ordinary: Int { maxConnections - superuserReserved - reserved }
    public var counted: [Login] { logins.filter(\.isCounted) }
    public var unlimited: [Login] { counted.filter { $0.limit == nil } }
    /// What the counted logins may hold together, counting those with a limit.
    public var countedMayHold: Int { counted.compactMap(\.limit).reduce(0, +) }
    /// What the ordinary slots must keep from them: the owner's and intake's, less what
    /// intake may take of the reserved connections.
    public var needed: Int {
        Self.ownerSlots + Self.intakeSlots - (intakeUsesReserved ? min(reserved, Self.intakeSlots) : 0)
    }
    public var left: Int { ordinary - countedMayHold }

    /// Doctor's verdicts: (level, detail).
    public var verdicts: [(level: String, detail: String)] {
        var out: [(String, String)] = []
        let limited = counted.filter { $0.limit != nil }.map { "\($0.name) \($0.limit!)" }
        let reservedText = "max_connections \(maxConnections), \(superuserReserved) reserved for superusers"
            + (reserved > 0 ? ", \(reserved) reserved_connections" + (intakeUsesReserved ? " (intake may use them)" : "") : "")
        if !unlimited.isEmpty {
            out.append(("warn", "logins other than intake's without a connection limit: \(unlimited.map(\.name).joined(separator: ", ")): "
                        + "their sessions can take every slot and keep intake out (subdesk db login NAME --role ROLE sets one)"))
        }
        if left < needed {
            out.append(("fail", "the read, support and operator logins' limits (\(limited.joined(separator: ", "))) together take \(countedMayHold) "
                        + "of \(ordinary) slots (\(reservedText)), leaving \(max(0, left)): fewer than the \(needed) intake and the owner need; "
                        + "lower their limits (subdesk db login NAME --role ROLE --connection-limit N) or raise max_connections"))
        } else {
            out.append(("ok", "\(reservedText): read, support and operator logins may hold \(countedMayHold)"
                        + (limited.isEmpty ? "" : " (\(limited.joined(separator: ", ")))")
                        + ", leaving \(left) for intake and the owner (\(needed) needed)"))
        }
        return out
    }
}
