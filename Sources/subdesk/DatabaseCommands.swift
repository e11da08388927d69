import Foundation
import SubscriptionCore

/// `migrate` (copy a store between engines) and `db init` (a PostgreSQL store and its roles).
enum DatabaseCommands {
    static let migrateSpec: CommandSpec = CommandSpec(
        name: "migrate", abstract: "copy a store between SQLite and PostgreSQL (--from STORE --to STORE)",
        usage: "subdesk migrate --from STORE --to STORE [--quiet] [--json]",
        discussion: """
        Copies every row of one store into another, losslessly and with progress: SQLite to
        PostgreSQL, PostgreSQL to SQLite, or between two of one kind. STORE is a SQLite file
        or a postgres:// URI (add ?schema=NAME for a store in its own PostgreSQL schema; the
        password comes from ~/.pgpass, PGPASSFILE or ?passfile=PATH, never the URI). The
        target is created when missing and must hold no data: copying into a store that has
        some would mix two stores, so it is refused. On PostgreSQL the copy runs as the
        tables' owner (it turns their triggers off while it copies). The copy is one
        transaction: stopped half-way, the target is left empty. It reads one consistent state
        of the source, so intake may go on meanwhile; what arrives after the copy began stays
        in the source only. Afterwards each table's rows are digested on both sides (the
        source as copied), and any difference fails the command.
        """,
        options: [
            .value(.from, "STORE", "the store to copy"),
            .value(.to, "STORE", "the store to copy into: missing or empty"),
            .flag(.quiet, "no progress on stderr"),
        ],
        action: StoreAction(words: "write the target store", privilege: .insert, table: "notifications"),
        run: migrate)

    static let dbSpec: CommandSpec = CommandSpec(
        name: "db", arguments: "init", abstract: "create a PostgreSQL store, and with --roles its database roles",
        usage: "subdesk db init [--roles] [--print]",
        discussion: """
        Creates the store named by --db (a postgres:// URI, or a SQLite file) when missing.
        With --roles, on PostgreSQL, also creates the group roles subdesk_read,
        subdesk_intake, subdesk_support and subdesk_operator (when missing) and grants each its
        rights on the store's schema; give people and hosts login users that are members of
        one (CREATE ROLE alice LOGIN IN ROLE subdesk_support). It also takes CONNECT on the
        database from PUBLIC and gives it to those four roles, so a login with no subdesk role
        cannot connect (other applications' logins in the same database need CONNECT granted
        by name). Run it as the store's owner who also owns the database (or a superuser),
        again after an upgrade.
        """,
        options: [
            .flag(.roles, "also create the group roles and grant their rights (PostgreSQL)"),
            .flag(.print, "print the SQL instead of running it"),
        ],
        action: StoreAction(words: "set up the store and its roles", privilege: .insert, table: "schema_version"),
        run: db)

    static func migrate(_ context: Context) throws -> Int32 {
        guard context.arguments.positionals.isEmpty,
              let from = context.arguments.value(.from), let to = context.arguments.value(.to) else {
            throw UsageError("migrate needs --from STORE and --to STORE (see subdesk migrate --help)")
        }
        guard from != to else { throw UsageError("--from and --to name the same store") }
        let source: Store
        do { source = try Store(path: from, mode: .reading) } catch let missing as StoreNotFound {
            throw UsageError("no store at \(missing.path) to copy from")
        }
        if let newer = source.newerSchemaVersion {
            throw UsageError("\(from) was written by a newer subdesk (schema \(newer)); copy it with that subdesk")
        }
        let target = try Store(path: to, mode: .createIfMissing)
        if try target.holdsData() {
            throw UsageError("\(target.path) already holds data; copying \(source.path) into it would mix two stores. "
                             + "Name an empty store (a new file, or a new ?schema=NAME)")
        }
        let json = context.arguments.has(.json)
        let started = Date()
        var copied: [String: Int] = [:]
        // The source's digest is taken from the state that was copied, so writes that reach
        // the source meanwhile do not count as a difference.
        let sourceDigest = try source.snapshot {
            try target.copyAll(from: source) { p in
                if p.tableDone { copied[p.table] = p.rows }
                if !json && !context.arguments.has(.quiet) && (p.tableDone ? p.rows > 0 : true) {
                    Output.progress("\(p.table): \(p.rows) row\(p.rows == 1 ? "" : "s")" + (p.tableDone ? " copied" : "…"))
                }
            }
            return try source.contentDigest()
        }
        let targetDigest = try target.contentDigest()
        let differing = sourceDigest.keys.sorted().filter { sourceDigest[$0] != targetDigest[$0] }
        let seconds = Date().timeIntervalSince(started)
        if json {
            Output.json(["from": source.path, "to": target.path, "tables": copied, "seconds": seconds,
                         "identical": differing.isEmpty, "differing": differing])
        } else if differing.isEmpty {
            let rows = copied.values.reduce(0, +)
            Output.line("copied \(rows) row\(rows == 1 ? "" : "s") in \(copied.count) table\(copied.count == 1 ? "" : "s") from \(source.path) to \(target.path) "
                        + "in \(String(format: "%.1f", seconds)) s; every table's rows are identical on both sides")
        }
        guard differing.isEmpty else {
            Output.error("the copy differs from the source in: \(differing.joined(separator: ", "))")
            return 1
        }
        return 0
    }

    static func db(_ context: Context) throws -> Int32 {
        guard context.arguments.positionals.first == "init", context.arguments.positionals.count == 1 else {
            throw UsageError("usage: subdesk db init [--roles] [--print]")
        }
        let path = context.databasePath
        if let problem = PostgresLocation.keywordStringProblem(path) { throw UsageError(problem) }
        if context.arguments.has(.roles) && !PostgresLocation.isPostgres(path) {
            throw UsageError("--roles is for a PostgreSQL store (--db postgres://...); a SQLite store's access is its file's mode")
        }
        if context.arguments.has(.print) {
            let location = try PostgresLocation(path)
            Output.line(PostgresRoles.sql(schema: location.schema ?? "public"))
            // The database the URI names; libpq's default is the user's name, which only
            // the server knows for sure, so an unnamed one is left for the reader to fill in.
            let database = URLComponents(string: location.conninfo)?.path.trimmingCharacters(in: CharacterSet(charactersIn: "/")) ?? ""
            Output.line(PostgresRoles.databaseSQL(database: database.isEmpty ? "DATABASE" : database))
            return 0
        }
        let store = try Store(path: path, mode: .createIfMissing)
        Output.line(store.wasCreated ? "created an empty store at \(store.path)"
                    : "a store already exists at \(store.path) (schema \(store.schemaVersion)); left as it is")
        if context.arguments.has(.roles) {
            try store.installRoles()
            Output.line("roles \(PostgresRoles.all.joined(separator: ", ")) have their rights on this store")
        }
        return 0
    }
}
