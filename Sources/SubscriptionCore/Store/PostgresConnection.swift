#if !SUBDESK_NO_POSTGRES
import CLibPQ
#endif
import Foundation

/// One row of a PostgreSQL result, read in text format.
struct PostgresRow {
    static let byteaOID: UInt32 = 17
    let result: OpaquePointer
    let row: Int32

    func isNull(_ i: Int32) -> Bool {
        #if SUBDESK_NO_POSTGRES
        return true
        #else
        return PQgetisnull(result, row, i) == 1
        #endif
    }

    /// The column's text as bytes, without a copy.
    private func withBytes<T>(_ i: Int32, _ body: (UnsafeBufferPointer<UInt8>) -> T) -> T {
        #if SUBDESK_NO_POSTGRES
        return body(UnsafeBufferPointer(start: nil, count: 0))
        #else
        guard let p = PQgetvalue(result, row, i) else { return body(UnsafeBufferPointer(start: nil, count: 0)) }
        let count = Int(PQgetlength(result, row, i))
        return p.withMemoryRebound(to: UInt8.self, capacity: count) { body(UnsafeBufferPointer(start: $0, count: count)) }
        #endif
    }

    func int64(_ i: Int32) -> Int64 {
        withBytes(i) { bytes in
            // Integers are the common case: parse them in place.
            var value: Int64 = 0
            var negative = false
            var index = 0
            if bytes.count > 0 && bytes[0] == UInt8(ascii: "-") { negative = true; index = 1 }
            if index < bytes.count {
                var integral = true
                while index < bytes.count {
                    let b = bytes[index]
                    guard b >= 48 && b <= 57 else { integral = false; break }
                    value = value &* 10 &+ Int64(b - 48)
                    index += 1
                }
                if integral { return negative ? -value : value }
            }
            // Booleans (t/f), and numeric or floating results (sum, avg), as SQLite reads them.
            guard let text = String(bytes: bytes, encoding: .utf8) else { return 0 }
            if text == "t" { return 1 }
            if text == "f" { return 0 }
            return Int64(saturating: Double(text) ?? 0)
        }
    }

    /// The column's value as its type says (integers, floats, bytea; the rest as text).
    func value(_ i: Int32) -> SQLValue {
        #if SUBDESK_NO_POSTGRES
        return .null
        #else
        if isNull(i) { return .null }
        switch PQftype(result, i) {
        case 20, 21, 23, 16: return .integer(int64(i))   // int8, int2, int4, bool
        case 700, 701: return .real(double(i))
        case PostgresRow.byteaOID: return .blob(data(i))
        default: return .text(string(i))
        }
        #endif
    }

    func double(_ i: Int32) -> Double {
        Double(string(i)) ?? 0
    }

    func string(_ i: Int32) -> String {
        withBytes(i) { String(decoding: $0, as: UTF8.self) }
    }

    func data(_ i: Int32) -> Data {
        #if SUBDESK_NO_POSTGRES
        return Data()
        #else
        let isBytea = PQftype(result, i) == PostgresRow.byteaOID
        return withBytes(i) { bytes in
            guard isBytea else { return Data(bytes) }
            // bytea in text format: \x followed by two hex digits per byte.
            guard bytes.count >= 2, bytes[0] == UInt8(ascii: "\\"), bytes[1] == UInt8(ascii: "x") else { return Data(bytes) }
            func nibble(_ c: UInt8) -> UInt8 {
                switch c {
                case 48...57: return c - 48
                case 97...102: return c - 87
                case 65...70: return c - 55
                default: return 0
                }
            }
            var out = Data(count: (bytes.count - 2) / 2)
            out.withUnsafeMutableBytes { raw in
                let dst = raw.bindMemory(to: UInt8.self)
                var j = 2
                for k in 0..<dst.count {
                    dst[k] = nibble(bytes[j]) << 4 | nibble(bytes[j + 1])
                    j += 2
                }
            }
            return out
        }
        #endif
    }
}

/// Where a PostgreSQL store is: a libpq connection URI, and the schema (a store of its own
/// inside the database) when one is named with `?schema=NAME`, which libpq does not know.
public struct PostgresLocation: Equatable, Sendable {
    public let conninfo: String
    public let schema: String?
    /// PostgreSQL's identifier limit (NAMEDATALEN - 1).
    public static let maxSchemaNameBytes = 63

    public static func isPostgres(_ location: String) -> Bool {
        location.hasPrefix("postgres://") || location.hasPrefix("postgresql://")
    }

    /// Parses `postgres://...`, taking out the `schema` parameter. Refuses a password in the
    /// URI: it would sit in the shell's history and in `ps`; libpq reads one from the file
    /// named by `passfile=` or PGPASSFILE (~/.pgpass by default).
    public init(_ location: String) throws {
        guard PostgresLocation.isPostgres(location), var parts = URLComponents(string: location) else {
            throw StoreError(operation: "open \(PostgresLocation.redacted(location))", message: "not a postgres:// URI", code: 0)
        }
        // Either way of writing a password in the URI (user:secret@ and ?password=) is refused,
        // and every other secret libpq takes as a parameter.
        if parts.password != nil || (parts.queryItems ?? []).contains(where: { $0.name.lowercased() == "password" }) {
            throw StoreError(operation: "open \(PostgresLocation.redacted(location))", message: PostgresLocation.passwordAdvice, code: 0)
        }
        if let secret = (parts.queryItems ?? []).first(where: { PostgresLocation.secretKeywords.contains($0.name.lowercased()) }) {
            throw StoreError(operation: "open \(PostgresLocation.redacted(location))",
                             message: PostgresLocation.secretAdvice(secret.name.lowercased()), code: 0)
        }
        var schema: String?
        var kept: [URLQueryItem] = []
        // Kept as they were encoded: decoded and encoded again, `options=-c%20x%3D1` would
        // come back as `-c%20x=1`, a second `=` libpq refuses.
        for item in parts.percentEncodedQueryItems ?? [] {
            if item.name == "schema" { schema = item.value?.removingPercentEncoding ?? item.value } else { kept.append(item) }
        }
        if let schema, schema.isEmpty || !schema.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }) {
            throw StoreError(operation: "open \(PostgresLocation.redacted(location))", message: "schema name \"\(schema)\" must be letters, digits and _ only", code: 0)
        }
        // PostgreSQL cuts a longer name to its first 63 bytes without a word, so two long
        // names would silently be one store.
        if let schema, schema.utf8.count > PostgresLocation.maxSchemaNameBytes {
            throw StoreError(operation: "open \(PostgresLocation.redacted(location))", message: """
                schema name \(schema.prefix(20))... is \(schema.utf8.count) bytes; PostgreSQL names are at most \
                \(PostgresLocation.maxSchemaNameBytes) bytes (longer ones are cut short, which could make two stores one)
                """, code: 0)
        }
        parts.percentEncodedQueryItems = kept.isEmpty ? nil : kept
        // libpq decodes the query itself, as it was written.
        conninfo = parts.string ?? location
        self.schema = schema
    }

    /// A short name for a screen's header: the database (and schema) and host.
    public static func displayName(_ location: String) -> String {
        guard let parts = URLComponents(string: location) else { return "postgres" }
        let database = parts.path.trimmingCharacters(in: CharacterSet(charactersIn: "/"))
        let schema = parts.queryItems?.first { $0.name == "schema" }?.value
        let host = parts.host.flatMap { $0.isEmpty ? nil : $0 } ?? "local"
        return "pg:" + (database.isEmpty ? "?" : database) + (schema.map { "." + $0 } ?? "") + "@" + host
    }

    static let passwordAdvice = """
        the URI holds a password; keep it out of URIs and command lines (they end up in shell \
        histories, `ps` and logs): put it in a password file (~/.pgpass, or the file PGPASSFILE or \
        ?passfile=PATH names), or use peer authentication over the server's socket
        """

    /// libpq's connection parameters whose value is a secret (libpq's list, "Parameter Key
    /// Words"): the password, the client key's passphrase, and PostgreSQL 18's OAuth
    /// client secret. Refused in a store URI, and masked wherever one is printed.
    static let secretKeywords: Set<String> = ["password", "sslpassword", "oauth_client_secret"]

    static func secretAdvice(_ keyword: String) -> String {
        "the URI holds a secret (\(keyword)=); keep it out of URIs and command lines (they end up in shell histories, "
            + "`ps` and logs): put it in a connection service file (~/.pg_service.conf, or the file PGSERVICEFILE names, "
            + "readable only by its owner) and name that with ?service=NAME"
    }

    /// `location` fit to print: a password in a URI (`user:secret@`, `?password=`), any
    /// other of `secretKeywords` (`?sslpassword=`), or one in a libpq keyword string
    /// (`password=secret`) is replaced by `***`.
    public static func redacted(_ location: String) -> String {
        if isPostgres(location) {
            guard var parts = URLComponents(string: location) else { return "postgres://***" }
            var changed = false
            if parts.password != nil {
                parts.password = "***"
                changed = true
            }
            if let items = parts.queryItems, items.contains(where: { secretKeywords.contains($0.name.lowercased()) }) {
                parts.queryItems = items.map { secretKeywords.contains($0.name.lowercased()) ? URLQueryItem(name: $0.name, value: "***") : $0 }
                changed = true
            }
            return changed ? parts.string ?? "postgres://***" : location
        }
        // A keyword string: every value after a secret's keyword and `=`, quoted or bare,
        // goes (`password` is also the end of `sslpassword`).
        func nextSecret(_ text: Substring) -> Range<Substring.Index>? {
            secretKeywords.compactMap { text.range(of: $0, options: .caseInsensitive) }.min { $0.lowerBound < $1.lowerBound }
        }
        guard nextSecret(Substring(location)) != nil else { return location }
        var out = ""
        var rest = Substring(location)
        while let found = nextSecret(rest) {
            out += rest[..<found.upperBound]
            rest = rest[found.upperBound...]
            let spaces = rest.prefix { $0 == " " || $0 == "\t" }
            guard rest.dropFirst(spaces.count).first == "=" else { continue }
            out += spaces + "="
            rest = rest.dropFirst(spaces.count + 1).drop { $0 == " " || $0 == "\t" }
            if rest.first == "'" {
                var escaped = false
                var end = rest.index(after: rest.startIndex)
                while end < rest.endIndex, escaped || rest[end] != "'" {
                    escaped = !escaped && rest[end] == "\\"
                    end = rest.index(after: end)
                }
                rest = end < rest.endIndex ? rest[rest.index(after: end)...] : ""
            } else {
                rest = rest.drop { !$0.isWhitespace }
            }
            out += "***"
        }
        return out + rest
    }

    /// libpq's connection keywords, to know a keyword string (`host=db dbname=x`) given
    /// where a file path or a URI was expected.
    static let libpqKeywords: Set<String> = [
        "host", "hostaddr", "port", "dbname", "user", "password", "passfile", "connect_timeout", "options",
        "application_name", "sslmode", "sslcert", "sslkey", "sslrootcert", "service", "target_session_attrs",
        "client_encoding", "keepalives", "require_auth", "channel_binding", "gssencmode", "krbsrvname",
        "sslpassword", "oauth_client_secret",
    ]

    /// Why `location`, given as a store's path, is refused: it reads as a libpq keyword
    /// string, which subdesk does not take (and which may hold a password, so it is not
    /// repeated). nil for anything else.
    public static func keywordStringProblem(_ location: String) -> String? {
        guard !isPostgres(location) else { return nil }
        let head = location.drop { $0 == " " }
        let key = head.prefix { $0.isLetter || $0 == "_" }
        guard libpqKeywords.contains(key.lowercased()), head.dropFirst(key.count).drop(while: { $0 == " " }).first == "=" else {
            return nil
        }
        return "this looks like a libpq keyword string (\(key)=...), not a file path; name a PostgreSQL store with a "
            + "postgres:// URI (postgresql://USER@HOST/DATABASE?sslmode=...), and keep its password in ~/.pgpass or "
            + "the file PGPASSFILE names (the value is not repeated here: it may hold a password)"
    }
}

extension StoreError {
    /// A serialization failure, a deadlock, a lost connection, a server short of
    /// resources or shutting down, or a lock not granted in time.
    static func isTransient(sqlState state: String) -> Bool {
        state == "40001" || state == "40P01" || state.hasPrefix("08") || state.hasPrefix("53")
            || state == "57P01" || state == "57P03" || state == "55P03"
    }
}

extension SQLDialect {
    public static let postgres = SQLDialect(
        name: "postgres", displayName: "PostgreSQL", find: "strpos", greatest: "greatest", lineFeed: "chr(10)",
        // Repeatable read keeps one snapshot for the whole transaction.
        beginRead: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
        // Each statement is a round trip: many rows go in one.
        rowsPerInsert: 100,
        writersRunSideBySide: true, hasSearchIndex: false,
        // A writer waiting for store_changes is queued and granted it at the next commit.
        writeTurnPauseMs: 0,
        pageSizesWrittenIn: [10] + Array(stride(from: 25, through: 1_000, by: 25)), pageBoundsSortKeyFirst: false,
        dropEmptySubscriber: "SELECT subdesk_drop_empty_subscriber(?)",
        auditGuardsWhole: "append-only (triggers in place), their functions unchanged",
        // Entries written before migration 23 (when a role could write any action) count
        // only when their writer is, now, one that may write them.
        auditWrittenBy: { roles in
            """
            EXISTS (SELECT 1 FROM pg_roles w WHERE w.rolname = audit_log.operator
                AND (pg_has_role(w.oid, (SELECT c.relowner FROM pg_class c WHERE c.oid = 'audit_log'::regclass), 'MEMBER')
                     OR EXISTS (SELECT 1 FROM pg_roles g WHERE g.rolname IN ('\(roles.joined(separator: "', '"))')
                                AND pg_has_role(w.oid, g.oid, 'MEMBER'))))
            """
        },
        // Every text column is COLLATE "C": it sorts and compares bytewise, as in SQLite.
        integer: "BIGINT", text: "TEXT COLLATE \"C\"", bytes: "BYTEA",
        generatedID: "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY", withoutRowID: "",
        ifNull: "COALESCE", skipLocked: " FOR UPDATE SKIP LOCKED", forUpdate: " FOR UPDATE", insertOrIgnore: "INSERT INTO",
        onConflictIgnore: " ON CONFLICT DO NOTHING")
}

#if !SUBDESK_NO_POSTGRES
/// A PostgreSQL connection through libpq, with the statements it has prepared. Statements
/// arrive written for SQLite (`?` parameters, `INSERT OR IGNORE`, `IFNULL`) and are
/// rewritten once each (`translate`). What the Store asks of it beyond statements is in
/// PostgresConnection+Store.swift. Not thread-safe: one per thread.
final class PostgresConnection: SQLConnection {
    var dialect: SQLDialect { .postgres }

    private var connection: OpaquePointer?
    let location: PostgresLocation
    /// The session's user and the subdesk roles it is a member of, read at open.
    var identity: (user: String, roles: [String])?
    var recordedUser: String? { identity?.user }
    var loginRoles: [String] { identity?.roles ?? [] }

    func mayWrite(_ privilege: String, on table: String) throws -> Bool {
        try holds("SELECT has_table_privilege(?, ?)", [table, privilege])
    }
    private var statements: [LongTextKey: (name: String, parameters: Int)] = [:]
    let transactions = TransactionState()
    /// How long a writer waits for the write lock, in milliseconds (0: for ever).
    let lockWaitMs: Int

    /// `lockTimeoutMs` bounds how long a writer waits for the write lock (as SQLite's busy
    /// timeout does); past it the write fails as transient (55P03), and CGI answers 503.
    init(location: PostgresLocation, lockTimeoutMs: Int32 = 10_000) throws {
        self.location = location
        let connection = PQconnectdb(PostgresConnection.withConnectTimeout(location.conninfo))
        guard let connection, PQstatus(connection) == CONNECTION_OK else {
            let message = connection.map { String(cString: PQerrorMessage($0)).trimmingCharacters(in: .whitespacesAndNewlines) } ?? "out of memory"
            PQfinish(connection)
            throw StoreError(operation: "connect to \(PostgresLocation.redacted(location.conninfo))", message: PostgresLocation.redacted(message),
                             code: 0, sqlState: "08001")
        }
        self.connection = connection
        // NOTICEs (a schema that exists already, say) are not errors; keep them off stderr.
        PQsetNoticeProcessor(connection, { _, _ in }, nil)
        lockWaitMs = Int(max(0, lockTimeoutMs))
        var setup = "SET client_min_messages = warning; SET TIME ZONE 'UTC'; SET lock_timeout = \(max(0, lockTimeoutMs))"
        if let schema = location.schema { setup += "; SET search_path TO \(schema)" }
        try execute(setup)
    }

    deinit { close() }

    /// How long a connection may take to be made when neither the URI (`connect_timeout=`)
    /// nor PGCONNECT_TIMEOUT says: libpq's own default is to wait for ever, and a server
    /// that accepts connections but never answers (stopped, swapping) would hold every CGI
    /// request until the web server gives up, as processes pile up. Past it a request is
    /// answered 503 and Apple retries.
    static let defaultConnectTimeoutSeconds = 5

    static func withConnectTimeout(_ conninfo: String, environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        let named = URLComponents(string: conninfo)?.queryItems?.contains { $0.name == "connect_timeout" } ?? false
        guard !named, (environment["PGCONNECT_TIMEOUT"] ?? "").isEmpty else { return conninfo }
        return conninfo + (conninfo.contains("?") ? "&" : "?") + "connect_timeout=\(defaultConnectTimeoutSeconds)"
    }

    /// Bounds how long the server lets one statement run and a transaction sit idle, for a
    /// writer that answers someone waiting (intake), unless the URI (`options=-c ...`),
    /// PGOPTIONS or the role's or database's settings chose a bound already. The statement
    /// bound stays above the lock timeout, so a wait for the write lock still reports as
    /// one; the idle bound frees the locks of a client that stopped mid-transaction.
    func boundServerWaits(statementMs: Int, idleInTransactionMs: Int) throws {
        // One round trip: a CGI request pays it on every notification.
        try execute([("statement_timeout", statementMs), ("idle_in_transaction_session_timeout", idleInTransactionMs)].map {
            "SELECT set_config('\($0.0)', '\(max(1, $0.1))', false) WHERE current_setting('\($0.0)') = '0'"
        }.joined(separator: "; "))
    }


    /// `password` as the server will keep it (SCRAM-SHA-256, or what password_encryption
    /// says), computed here as psql's \\password does, so the password itself is never in a
    /// statement the server could log.
    func encryptedPassword(_ password: String, user: String) throws -> String {
        guard let hashed = PQencryptPasswordConn(connection, password, user, nil) else {
            throw StoreError(operation: "encrypt the password of \(user)", message: connection.map { String(cString: PQerrorMessage($0)) } ?? "no connection",
                             code: 0)
        }
        defer { PQfreemem(hashed) }
        return String(cString: hashed)
    }

    func close() {
        if let connection { PQfinish(connection) }
        connection = nil
        statements.removeAll()
    }

    /// `statement`: the whole statement, when a refusal must be told from its end too (a
    /// locking read's `FOR UPDATE` needs UPDATE); `operation` is its start.
    private func error(_ operation: String, _ result: OpaquePointer?, statement: String? = nil) -> StoreError {
        var message = result.map { String(cString: PQresultErrorMessage($0)) } ?? ""
        if message.isEmpty, let connection { message = String(cString: PQerrorMessage(connection)) }
        var state: String? = nil
        if let result, let field = PQresultErrorField(result, Int32(UInt8(ascii: "C"))) { state = String(cString: field) }
        if state == nil, PQstatus(connection) != CONNECTION_OK { state = "08006" }
        message = message.trimmingCharacters(in: .whitespacesAndNewlines)
        if message.hasPrefix("ERROR:") { message = String(message.dropFirst(6)).trimmingCharacters(in: .whitespaces) }
        // A lock held past lock_timeout (the busy timeout): said as SQLite says it.
        if state == "55P03" { message = "database is locked by another session for longer than the busy timeout (\(message))" }
        // A conflicting key is repeated in full in the detail; a JWS header is kilobytes long.
        if message.count > 400 { message = String(message.prefix(400)) + "…" }
        var failure = StoreError(operation: operation, message: message, code: 0, sqlState: state ?? "XX000")
        if state == "42501", let identity { failure.denial = PermissionDenial(user: identity.user, roles: identity.roles, statement: statement ?? operation,
                                                                                message: message) }
        return failure
    }

    private func check(_ result: OpaquePointer?, _ operation: @autoclosure () -> String, statement: String? = nil) throws {
        let status = result.map { PQresultStatus($0) } ?? PGRES_FATAL_ERROR
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK || status == PGRES_EMPTY_QUERY else {
            let e = error(operation(), result, statement: statement)
            PQclear(result)
            throw e
        }
    }

    /// Runs statements as they are written (no rewriting: DDL, SET, LISTEN).
    func execute(_ sql: String) throws {
        let result = PQexec(connection, sql)
        try check(result, String(sql.prefix(60)))
        PQclear(result)
    }

    /// Prepares `sql` once per connection. A statement whose parameters the server cannot
    /// type from their context alone (`? IS NULL`) is prepared with the types of the
    /// values it first runs with.
    private func prepared(_ sql: String, _ values: [SQLBindable?]) throws -> (name: String, parameters: Int) {
        if let s = statements[LongTextKey(text: sql)] { return s }
        let translated = PostgresConnection.translate(sql)
        let name = "s\(statements.count + 1)"
        var result = PQprepare(connection, name, translated.text, 0, nil)
        if result.map({ PQresultStatus($0) }) != PGRES_COMMAND_OK,
           let field = result.flatMap({ PQresultErrorField($0, Int32(UInt8(ascii: "C"))) }), String(cString: field) == "42P18" {
            PQclear(result)
            let types: [UInt32] = (0..<translated.parameters).map { i in
                guard i < values.count, let value = values[i] else { return 25 }
                switch value.sqlValue {
                case .integer: return 20
                case .real: return 701
                case .blob: return PostgresRow.byteaOID
                case .text, .null: return 25
                }
            }
            result = PQprepare(connection, name, translated.text, Int32(types.count), types)
        }
        try check(result, "prepare \(sql.prefix(60))")
        PQclear(result)
        let entry = (name: name, parameters: translated.parameters)
        statements[LongTextKey(text: sql)] = entry
        return entry
    }

    /// Runs a prepared statement with `values` (text format, bytea in binary).
    private func execute(_ sql: String, _ values: [SQLBindable?]) throws -> OpaquePointer? {
        let statement = try prepared(sql, values)
        guard values.count <= statement.parameters else {
            throw StoreError(operation: String(sql.prefix(60)), message: "\(values.count) values for \(statement.parameters) parameters", code: 0, sqlState: "08P01")
        }
        // Each value is copied once, into a buffer of its own that libpq reads during the
        // call; text is sent as text, bytea in binary.
        var pointers: [UnsafePointer<CChar>?] = []
        var lengths: [Int32] = []
        var formats: [Int32] = []
        var owned: [UnsafeMutablePointer<CChar>] = []
        defer { owned.forEach { free($0) } }
        func send(_ buffer: UnsafeMutablePointer<CChar>?, length: Int, format: Int32) {
            if let buffer { owned.append(buffer) }
            pointers.append(buffer.map { UnsafePointer($0) })
            lengths.append(Int32(length))
            formats.append(format)
        }
        for i in 0..<statement.parameters {
            switch i < values.count ? values[i]?.sqlValue ?? .null : .null {
            case .null: send(nil, length: 0, format: 0)
            case .integer(let v): send(strdup(String(v)), length: 0, format: 0)
            case .real(let v): send(strdup(PostgresConnection.text(v)), length: 0, format: 0)
            case .text(let v): send(strdup(v), length: 0, format: 0)
            case .blob(let v):
                let buffer = malloc(max(v.count, 1))!
                v.copyBytes(to: buffer.assumingMemoryBound(to: UInt8.self), count: v.count)
                send(buffer.assumingMemoryBound(to: CChar.self), length: v.count, format: 1)
            }
        }
        let result = PQexecPrepared(connection, statement.name, Int32(statement.parameters), pointers, lengths, formats, 0)
        try check(result, String(sql.prefix(60)), statement: sql)
        return result
    }

    /// How a double is written for the server (which spells infinity and NaN its own way).
    static func text(_ v: Double) -> String {
        if v.isNaN { return "NaN" }
        if v.isInfinite { return v < 0 ? "-Infinity" : "Infinity" }
        return "\(v)"
    }

    @discardableResult
    func run(_ sql: String, _ values: [SQLBindable?]) throws -> Int {
        // A write outside a transaction commits on its own: it too bumps the change counter
        // and tells listeners, as every write transaction's commit does.
        if !isInTransaction && PostgresConnection.changesRows(sql) {
            return try writeTransaction(begin: "BEGIN") { try runStatement(sql, values) }
        }
        return try runStatement(sql, values)
    }

    private func runStatement(_ sql: String, _ values: [SQLBindable?]) throws -> Int {
        let result = try execute(sql, values)
        defer { PQclear(result) }
        return Int(String(cString: PQcmdTuples(result))) ?? 0
    }

    /// Whether `sql` is an INSERT, UPDATE or DELETE.
    static func changesRows(_ sql: String) -> Bool {
        let head = sql.drop { $0.isWhitespace }.prefix(6).uppercased()
        return head == "INSERT" || head == "UPDATE" || head == "DELETE"
    }

    func scan(_ sql: String, _ values: [SQLBindable?], _ body: (SQLRow) throws -> Bool) throws {
        guard let result = try execute(sql, values) else { return }
        defer { PQclear(result) }
        let count = PQntuples(result)
        var row: Int32 = 0
        while row < count {
            guard try body(SQLRow(PostgresRow(result: result, row: row))) else { return }
            row += 1
        }
    }

    /// A result is otherwise read whole: here it comes through a cursor, `streamChunk`
    /// rows per fetch, inside the open transaction or a read transaction of its own.
    func stream(_ sql: String, _ body: (SQLRow) throws -> Void) throws {
        try readTransaction {
            cursors += 1
            let name = "subdesk_stream_\(cursors)"
            try execute("DECLARE \(name) NO SCROLL CURSOR FOR " + PostgresConnection.translate(sql).text)
            while true {
                let fetched = PQexec(connection, "FETCH \(PostgresConnection.streamChunk) FROM \(name)")
                try check(fetched, "FETCH from " + String(sql.prefix(40)))
                guard let result = fetched else { break }
                defer { PQclear(result) }
                let count = PQntuples(result)
                if count == 0 { break }
                for row in 0..<count { try body(SQLRow(PostgresRow(result: result, row: row))) }
            }
            try execute("CLOSE \(name)")
        }
    }

    /// Rows per fetch when streaming a large result.
    static let streamChunk = 2_000
    private var cursors = 0

    func lastInsertRowID() throws -> Int64 {
        try integer("SELECT lastval()") ?? 0
    }

    var isInTransaction: Bool { PQtransactionStatus(connection) != PQTRANS_IDLE }

    /// The server queues writers itself, and hands its locks over without polling.
    func inWriteTurn<T>(_ body: () throws -> T) throws -> T { try body() }

    /// A write transaction first takes the store's write lock, so writers take turns as
    /// they do on SQLite (BEGIN IMMEDIATE) and every ordering argument made there holds
    /// here; the commit bumps the change counter and tells listeners.
    ///
    /// The lock is `store_changes` itself, locked EXCLUSIVE. An advisory lock would need no
    /// grant at all, so any login could hold it and stall intake; a table lock in this mode
    /// needs UPDATE on the table, which only writer roles have (every commit updates it).
    /// EXCLUSIVE conflicts with itself and with ROW EXCLUSIVE (the shared form below), not
    /// with the ACCESS SHARE a plain SELECT takes, so readers never wait for it or make it
    /// wait. (VACUUM's lock conflicts too; autovacuum gives way to a waiting lock.)
    var beginWrite: String { "BEGIN; LOCK TABLE store_changes IN EXCLUSIVE MODE" }

    /// The start of a write that changes only the subscriptions `keys` name (and the
    /// shared counts, at its end): it shares the store's lock with other such writes (ROW
    /// EXCLUSIVE on `store_changes`, which needs a write privilege on it) and takes each
    /// subscription's own advisory lock, so writers on several hosts store side by side.
    ///
    /// Advisory locks need no grant, so any login could hold a subscription's. Hence they
    /// are only tried, never waited for: when one is held (by another writer of the same
    /// subscription, or by anyone else), this write lets go of everything and runs alone
    /// under the exclusive lock instead, which waits only for writers. Whoever holds
    /// advisory locks can then slow those subscriptions' writes to SQLite's one-at-a-time,
    /// never stop them. No writer waits while holding a lock another waits for: the shared
    /// path waits only for the table lock before it holds anything, and the exclusive path
    /// starts afresh; so writers cannot wait for each other in a cycle.
    func beginWrite(touching keys: [String]) throws {
        let sorted = Array(Set(keys)).sorted()
        try execute("BEGIN; LOCK TABLE store_changes IN ROW EXCLUSIVE MODE")
        guard !sorted.isEmpty else { return }
        // Ids are digits in practice; quoting keeps anything else literal.
        let list = sorted.map { "'" + $0.replacingOccurrences(of: "'", with: "''") + "'" }.joined(separator: ",")
        // Not prepared: each batch names other keys, and a prepared statement is kept for good.
        let tried = PQexec(connection, "SELECT bool_and(pg_try_advisory_xact_lock(hashtext(current_schema()), hashtext(k))) "
                           + "FROM (SELECT unnest(ARRAY[\(list)]::text[]) AS k ORDER BY 1) AS keys")
        try check(tried, "lock subscriptions")
        let all = PQntuples(tried) == 1 && PostgresRow(result: tried!, row: 0).string(0) == "t"
        PQclear(tried)
        if all { return }
        try execute("ROLLBACK")
        try execute(beginWrite)
    }

    var commitWrite: String { "UPDATE store_changes SET version = version + 1 WHERE id = 1; NOTIFY subdesk_changes; COMMIT" }

    private var listening = false
    private var knownVersion: Int?

    /// The store's change counter, read from the server only when a commit notice
    /// (NOTIFY subdesk_changes) has arrived since the last read: a live view that asks
    /// every tick costs a look at the socket, not a query.
    func changeVersion() throws -> Int {
        if !listening {
            try execute("LISTEN subdesk_changes")
            listening = true
        } else if let knownVersion {
            PQconsumeInput(connection)
            if !consumeNotices() { return knownVersion }
        }
        let version = Int(try integer("SELECT version FROM store_changes WHERE id = 1") ?? 0)
        knownVersion = version
        return version
    }

    private func consumeNotices() -> Bool {
        var any = false
        while let notice = PQnotifies(connection) {
            any = true
            PQfreemem(notice)
        }
        return any
    }

    /// Rewrites SQLite's dialect into PostgreSQL's: numbered parameters, `INSERT OR IGNORE`
    /// as `ON CONFLICT DO NOTHING`, `IFNULL` as `COALESCE`, index hints dropped, empty
    /// lists as empty arrays. Quoted text and comments are left alone. Shared statements
    /// are written in SQLite's spelling on purpose (Store/README.md); every rewrite is
    /// listed in `PostgresTranslationTests`.
    static func translate(_ sql: String) -> (text: String, parameters: Int) {
        var out = ""
        out.reserveCapacity(sql.utf8.count + 16)
        var parameters = 0
        var quote: Character? = nil
        var ignoreConflicts = false
        var rest = Substring(sql)
        while let c = rest.first {
            if let q = quote {
                out.append(c)
                if c == q { quote = nil }
                rest = rest.dropFirst()
                continue
            }
            if c == "-" && rest.hasPrefix("--") {
                let line = rest.prefix { $0 != "\n" }
                out += line
                rest = rest.dropFirst(line.count)
                continue
            }
            if c == "'" || c == "\"" {
                quote = c
                out.append(c)
                rest = rest.dropFirst()
                continue
            }
            if c == "?" {
                // `?NNN` names its parameter; a bare `?` is the one after the largest so far.
                rest = rest.dropFirst()
                let digits = rest.prefix { $0.isASCII && $0.isNumber }
                if let number = Int(digits) {
                    parameters = max(parameters, number)
                    out += "$\(number)"
                    rest = rest.dropFirst(digits.count)
                } else {
                    parameters += 1
                    out += "$\(parameters)"
                }
                continue
            }
            if c == "N" && rest.hasPrefix("NOT IN ()") {
                // SQLite takes an empty list; PostgreSQL takes an empty array.
                out += "<> ALL('{}')"
                rest = rest.dropFirst("NOT IN ()".count)
                continue
            }
            if c == "I" && rest.hasPrefix("IN ()") {
                out += "= ANY('{}')"
                rest = rest.dropFirst("IN ()".count)
                continue
            }
            if c == "I" && rest.hasPrefix("INDEXED BY ") {
                // SQLite's index hint; PostgreSQL's planner chooses for itself.
                rest = rest.dropFirst("INDEXED BY ".count)
                rest = rest.drop { !$0.isWhitespace }
                continue
            }
            if c == "I" || c == "i" {
                if rest.hasPrefix("INSERT OR IGNORE INTO") {
                    out += "INSERT INTO"
                    ignoreConflicts = true
                    rest = rest.dropFirst("INSERT OR IGNORE INTO".count)
                    continue
                }
                if rest.hasPrefix("IFNULL(") || rest.hasPrefix("ifnull(") {
                    out += "COALESCE("
                    rest = rest.dropFirst(7)
                    continue
                }
            }
            out.append(c)
            rest = rest.dropFirst()
        }
        if ignoreConflicts {
            while out.last == ";" || out.last?.isWhitespace == true { out.removeLast() }
            out += " ON CONFLICT DO NOTHING"
        }
        return (out, parameters)
    }
}
#endif

/// The bookkeeping of nested writes that both engines share.
final class TransactionState {
    var rollbacks = 0
    /// Set when a write that joined the open transaction threw: that transaction may hold
    /// half of the failed write, so it must not commit.
    var joinedWriteFailed = false
    var savepointDepth = 0
}
