import Foundation

/// A statement PostgreSQL refused for want of a privilege, told as the role model tells it:
/// who (the database user and its subdesk roles), what it may not do, and which roles may
/// (`PostgresRoles.rights`), instead of a cut SQL statement.
public struct PermissionDenial: Sendable, CustomStringConvertible {
    public let user: String
    public let roles: [String]
    /// What was refused: `INSERT`, `UPDATE`, `DELETE`, `SELECT`, `LOCK`, ... and on which table.
    public let privilege: String
    public let table: String?

    init(user: String, roles: [String], privilege: String, table: String?) {
        self.user = user
        self.roles = roles
        self.privilege = privilege
        self.table = table
    }

    init(user: String, roles: [String], statement: String, message: String) {
        self.user = user
        self.roles = roles
        let verb = statement.trimmingCharacters(in: .whitespacesAndNewlines).split(whereSeparator: { !$0.isLetter })
            .first.map { $0.uppercased() } ?? "?"
        // A locking read (`SELECT ... FOR UPDATE`) needs UPDATE on the table it locks.
        let locking = verb == "SELECT" && [" FOR UPDATE", " FOR NO KEY UPDATE", " FOR SHARE", " FOR KEY SHARE"]
            .contains { statement.uppercased().contains($0) }
        privilege = verb == "BEGIN" ? "LOCK" : locking ? "UPDATE" : verb
        // PostgreSQL says `permission denied for table overrides` (or schema, or sequence).
        table = message.range(of: "permission denied for table ").map { String(message[$0.upperBound...].prefix { !$0.isWhitespace }) }
    }

    /// The roles whose rights hold `privilege` on `table` (on some column at least).
    public static func rolesThatMay(_ privilege: PostgresRoles.Privilege, on table: String) -> [String] {
        PostgresRoles.all.filter { PostgresRoles.holds($0, privilege, on: table) }
    }

    /// The roles that may do what was refused: the writers' lock is any write.
    public var rolesThatMay: [String] {
        guard let table else { return [] }
        let wanted: PostgresRoles.Privilege? = privilege == "LOCK" ? .update : PostgresRoles.Privilege(rawValue: privilege)
        return wanted.map { Self.rolesThatMay($0, on: table) } ?? []
    }

    public var who: String { roles.isEmpty ? user + " (no subdesk role)" : "\(user) (\(roles.joined(separator: ", ")))" }

    /// `mgr (subdesk_read) may not place overrides: that needs subdesk_support or subdesk_operator`.
    /// `action` is what the command was doing and `needs` the privilege it is about (the
    /// roles that hold it are the ones named); without them, what the server refused.
    public func explain(doing action: String?, needs: (PostgresRoles.Privilege, String)? = nil) -> String {
        let what = action ?? (table.map { "\(privilege) on \($0)" } ?? privilege)
        let may = needs.map { Self.rolesThatMay($0.0, on: $0.1) } ?? rolesThatMay
        let verdict = may.isEmpty ? "no subdesk role may" : "that needs " + Self.either(may)
        return "\(who) may not \(what): \(verdict)"
    }

    /// `explain`'s meaning in fewer words, longest first, for a line too narrow for it: what
    /// may not be done and the roles that may, without who (the desk's header names the
    /// login); then the roles without their `subdesk_` prefix, as the header writes them.
    public static func briefly(doing action: String, needs: (PostgresRoles.Privilege, String)) -> [String] {
        let may = rolesThatMay(needs.0, on: needs.1)
        guard !may.isEmpty else { return ["may not \(action): no subdesk role may"] }
        return ["may not \(action): that needs \(either(may))", "may not \(action): needs \(either(may.map(PostgresRoles.shortName)))"]
    }

    /// `a`, `a or b`, `a, b or c`.
    static func either(_ names: [String]) -> String {
        names.count < 2 ? names.joined() : names.dropLast().joined(separator: ", ") + " or " + names.last!
    }

    public var description: String { explain(doing: nil) }
}
