import Foundation
import SubscriptionCore
import TerminalUI

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
        name: "db", arguments: "init | login NAME", abstract: "create a PostgreSQL store, its database roles (--roles) and logins",
        usage: """
        subdesk db init [--roles] [--print]
        subdesk db login NAME --role read|support|operator|intake [--connection-limit N] [--password-file FILE]
          [--statement-timeout DURATION] [--lock-timeout DURATION] [--idle-timeout DURATION]
        """,
        discussion: """
        `init` creates the store named by --db (a postgres:// URI, or a SQLite file) when
        missing. With --roles, on PostgreSQL, also creates the group roles subdesk_read,
        subdesk_intake, subdesk_support and subdesk_operator (when missing) and grants each its
        rights on the store's schema. It also takes CONNECT on the database from PUBLIC and
        gives it to those four roles, so a login with no subdesk role cannot connect (other
        applications' logins in the same database need CONNECT granted by name); on
        PostgreSQL 16 and later it lets subdesk_intake use the reserved connections. Run it
        as the store's owner who also owns the database (or a superuser), again after an
        upgrade.

        `login NAME` creates the login user NAME (or changes it, when it exists) for a person
        or a host: a member of the one role --role names (any other subdesk role is taken
        away), with a connection limit (defaults: \(PostgresLogin.defaultsText { $0.connectionLimit.map(String.init) ?? "none" }))
        and its own session bounds, which a group role's settings would not give its members:
        statement_timeout (\(PostgresLogin.defaultsText { PostgresLogin.words($0.statementTimeoutMs) })), lock_timeout
        (\(PostgresLogin.defaultsText { PostgresLogin.words($0.lockTimeoutMs) })) and idle_in_transaction_session_timeout
        (\(PostgresLogin.defaultsText { PostgresLogin.words($0.idleInTransactionMs) })), so a support or operator
        session cannot hold the writers' lock for longer. The password is read from
        --password-file and sent hashed (SCRAM); without it the login keeps the password it
        has, or has none (peer or certificate authentication). Run it as the store's owner,
        after `db init --roles`; `doctor` checks the logins' limits against the server's
        connection slots.
        """,
        options: [
            .flag(.roles, "init: also create the group roles and grant their rights (PostgreSQL)"),
            .flag(.print, "init: print the SQL instead of running it"),
            .value(.role, "ROLE", "login: read, support, operator or intake"),
            .value(.connectionLimit, "N", "login: the most connections it may hold at once (1 to \(PostgresLogin.maxConnectionLimit))"),
            .value(.passwordFile, "FILE", "login: its password, FILE's one line as written (only a final newline is dropped; never on the command line)"),
            .value(.statementTimeout, "DURATION", "login: the longest a statement may run (90s, 5m; at most 1d)"),
            .value(.lockTimeout, "DURATION", "login: the longest a statement waits for a lock"),
            .value(.idleTimeout, "DURATION", "login: the longest a transaction may sit idle, holding its locks"),
        ],
        action: StoreAction(words: "set up the store, its roles and logins", privilege: .insert, table: "schema_version"),
        argumentCompletion: .words(["init", "login"]),
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
        if let newer = source.opening.newerSchemaVersion {
            throw UsageError("\(from) was written by a newer subdesk (schema \(newer)); copy it with that subdesk")
        }
        let target = try Store(path: to, mode: .createIfMissing)
        if try target.upkeep.holdsData() {
            throw UsageError("\(target.path) already holds data; copying \(source.path) into it would mix two stores. "
                             + "Name an empty store (a new file, or a new ?schema=NAME)")
        }
        let json = context.arguments.has(.json)
        let started = Date()
        var copied: [String: Int] = [:]
        // The source's digest is taken from the state that was copied, so writes that reach
        // the source meanwhile do not count as a difference.
        let sourceDigest = try source.inOneSnapshot {
            try target.upkeep.copyAll(from: source) { p in
                if p.tableDone { copied[p.table] = p.rows }
                if !json && !context.arguments.has(.quiet) && (p.tableDone ? p.rows > 0 : true) {
                    Output.progress("\(p.table): \(p.rows) row\(p.rows == 1 ? "" : "s")" + (p.tableDone ? " copied" : "…"))
                }
            }
            return try source.upkeep.contentDigest()
        }
        let targetDigest = try target.upkeep.contentDigest()
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
        if context.arguments.positionals.first == "login" { return try login(context) }
        guard context.arguments.positionals.first == "init", context.arguments.positionals.count == 1 else {
            throw UsageError("usage: subdesk db init [--roles] [--print], or subdesk db login NAME --role ROLE (see subdesk db --help)")
        }
        for option: OptionName in [.role, .connectionLimit, .passwordFile, .statementTimeout, .lockTimeout, .idleTimeout]
        where context.arguments.value(option) != nil {
            throw UsageError("--\(option) is for db login")
        }
        let path = context.databasePath
        if let problem = StoreLocation(path).problem { throw UsageError(problem) }
        if context.arguments.has(.roles) && !StoreLocation(path).isPostgres {
            throw UsageError("--roles is for a PostgreSQL store (--db postgres://...); a SQLite store's access is its file's mode")
        }
        if context.arguments.has(.print) {
            let location = try PostgresLocation(path)
            Output.line(PostgresRoles.sql(schema: location.schema ?? "public"))
            // The database the URI names; libpq's default is the user's name, which only
            // the server knows for sure, so an unnamed one is left for the reader to fill in.
            let database = URLComponents(string: location.conninfo)?.path.trimmingCharacters(in: CharacterSet(charactersIn: "/")) ?? ""
            Output.line(PostgresRoles.databaseSQL(database: database.isEmpty ? "DATABASE" : database))
            Output.line("-- PostgreSQL 16 and later, as a superuser: " + PostgresRoles.reservedConnectionsGrant + ";")
            return 0
        }
        let store = try Store(path: path, mode: .createIfMissing)
        Output.line(store.opening.created ? "created an empty store at \(store.path)"
                    : "a store already exists at \(store.path) (schema \(store.schemaVersion)); left as it is")
        if context.arguments.has(.roles) {
            let notes = try store.server.installRoles()
            Output.line("roles \(PostgresRoles.all.joined(separator: ", ")) have their rights on this store")
            for note in notes { Output.warn(note) }
        }
        return 0
    }

    /// `db login NAME --role ROLE`: a login user with its limit and session bounds.
    static func login(_ context: Context) throws -> Int32 {
        let positionals = context.arguments.positionals
        guard positionals.count == 2 else { throw UsageError("usage: subdesk db login NAME --role read|support|operator|intake") }
        let name = positionals[1]
        if let problem = PostgresLogin.problem(name: name) { throw UsageError("db login \(SafeText.sanitize(name)): \(problem)") }
        if context.arguments.has(.roles) || context.arguments.has(.print) { throw UsageError("--roles and --print are for db init") }
        guard let role = context.arguments.value(.role) else { throw UsageError("db login needs --role read, support, operator or intake") }
        guard var login = PostgresLogin.defaults(name: name, role: role), !role.hasPrefix("subdesk_") else {
            throw UsageError("--role is read, support, operator or intake, got \(SafeText.sanitize(role))")
        }
        if let text = context.arguments.value(.connectionLimit) {
            guard let n = Int(text), (1...PostgresLogin.maxConnectionLimit).contains(n) else {
                throw UsageError("--connection-limit is a number from 1 to \(PostgresLogin.maxConnectionLimit), got \(SafeText.sanitize(text))")
            }
            login.connectionLimit = n
        }
        for (option, keyPath) in [(OptionName.statementTimeout, \PostgresLogin.statementTimeoutMs), (.lockTimeout, \.lockTimeoutMs),
                                  (.idleTimeout, \.idleInTransactionMs)] {
            guard let text = context.arguments.value(option) else { continue }
            let ms = try MetricsCommand.duration(text, option: option.rawValue)
            guard ms >= 1, ms <= Millis(PostgresLogin.maxBoundMs) else {
                throw UsageError("--\(option) must be from 1ms to 1d, got \(SafeText.sanitize(text))")
            }
            login[keyPath: keyPath] = Int(ms)
        }
        var password: String?
        if let file = context.arguments.value(.passwordFile) {
            password = try SecretFile.readLine(file, what: "password", warn: Output.warn)
            guard let text = password, !text.isEmpty, !text.contains("\0"), !text.contains("\n"), text.utf8.count <= 1024 else {
                throw UsageError("--password-file \(file): a password is one line of 1 to 1024 bytes (only its final newline is dropped)")
            }
        }
        let path = context.databasePath
        guard StoreLocation(path).isPostgres else {
            throw UsageError("db login is for a PostgreSQL store (--db postgres://...); a SQLite store has no logins")
        }
        let store = try Store(path: path, mode: .existing)
        let created = try store.server.makeLogin(login, password: password)
        Output.line("\(created ? "created" : "changed") the login \(name): \(login.summary)"
                    + (password != nil ? "; password set" : created ? "; no password (peer or certificate authentication)" : "; password unchanged"))
        return 0
    }
}
