import Foundation
@testable import SubscriptionCore

/// What a schema is made of, in terms both engines share: tables with their columns in
/// order (name, kind, nullability, default), keys (primary, unique, foreign), named
/// indexes (table, uniqueness, key expressions, condition) and triggers. Read from a real
/// SQLite store (`sqlite(_:)`) or from PostgreSQL DDL text (`postgres(ddl:)`), so the two
/// engines' halves of the migration list can be compared without a server.
struct SchemaCatalogue: Equatable {
    struct Column: Equatable, CustomStringConvertible {
        var name: String
        var kind: String
        var notNull: Bool
        var defaultValue: String
        var description: String { "\(name) \(kind) \(notNull ? "not-null" : "null") \(defaultValue)" }
    }
    struct Index: Equatable, CustomStringConvertible {
        var table: String
        var unique: Bool
        var keys: String
        var condition: String
        var description: String { "\(table)\(unique ? " unique" : "") (\(keys))\(condition.isEmpty ? "" : " where \(condition)")" }
    }

    var tables: [String: [Column]] = [:]
    /// `table: primary key (a, b)`, `table: unique (a)`, `table: (a) references t(b)`.
    var keys: Set<String> = []
    var indexes: [String: Index] = [:]
    /// `table.trigger`.
    var triggers: Set<String> = []

    /// `table x`, `index t.x`, `trigger t.x`: every object, for the lists of what only one engine has.
    var objects: Set<String> {
        Set(tables.keys.map { "table \($0)" } + indexes.map { "index \($0.value.table).\($0.key)" } + triggers.map { "trigger \($0)" })
    }

    static func kind(_ declared: String) -> String {
        let t = declared.lowercased()
        if t.contains("int") || t == "boolean" { return "integer" }
        if t.contains("char") || t.contains("text") { return "text" }
        if t.contains("blob") || t.contains("bytea") { return "bytes" }
        if t.contains("real") || t.contains("double") || t.contains("numeric") || t.contains("float") { return "real" }
        return t.isEmpty ? "any" : t
    }

    /// `'x'::text` and `('x')` read as `'x'`; no default as `-`.
    static func normalDefault(_ text: String?) -> String {
        guard var d = text?.trimmingCharacters(in: .whitespaces), !d.isEmpty else { return "-" }
        if let cast = d.range(of: "::", options: .backwards) { d = String(d[..<cast.lowerBound]) }
        while d.hasPrefix("(") && d.hasSuffix(")") { d = String(d.dropFirst().dropLast()) }
        return d
    }

    /// An expression as both engines' texts compare: lower case, no spaces, one spelling of
    /// IFNULL (the shared statements' word for COALESCE).
    static func normalExpression(_ text: String) -> String {
        text.lowercased().replacingOccurrences(of: "ifnull(", with: "coalesce(").filter { !$0.isWhitespace }
    }

    // MARK: SQLite, from the store itself

    static func sqlite(_ db: any SQLConnection) throws -> SchemaCatalogue {
        var c = SchemaCatalogue()
        let objects = try db.rows("SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'") {
            ($0.string(0), $0.string(1), $0.string(2), $0.optionalString(3))
        }
        for (type, name, table, sql) in objects {
            switch type {
            case "table":
                var primary: [(Int, String)] = []
                c.tables[name] = try db.rows("PRAGMA table_info(\(name))") { r in
                    if r.int(5) > 0 { primary.append((r.int(5), r.string(1))) }
                    return Column(name: r.string(1), kind: kind(r.string(2)), notNull: r.int(3) == 1 || r.int(5) > 0,
                                  defaultValue: normalDefault(r.optionalString(4)))
                }
                if !primary.isEmpty {
                    c.keys.insert("\(name): primary key (\(primary.sorted { $0.0 < $1.0 }.map(\.1).joined(separator: ", ")))")
                }
                for (index, origin) in try db.rows("PRAGMA index_list(\(name))", [], { ($0.string(1), $0.string(3)) }) where origin == "u" {
                    let columns = try db.rows("PRAGMA index_info(\(index))") { $0.string(2) }
                    c.keys.insert("\(name): unique (\(columns.joined(separator: ", ")))")
                }
                for (from, target, to) in try db.rows("PRAGMA foreign_key_list(\(name))", [], { ($0.string(3), $0.string(2), $0.string(4)) }) {
                    c.keys.insert("\(name): (\(from)) references \(target)(\(to))")
                }
            case "index":
                guard let sql, let parsed = parseIndex(sql) else { continue }
                c.indexes[parsed.name] = parsed.index
            case "trigger":
                c.triggers.insert("\(table).\(name)")
            default: break
            }
        }
        return c
    }

    // MARK: PostgreSQL, from DDL text

    /// The catalogue that running `ddl` on an empty PostgreSQL schema makes, as far as
    /// tables, keys, indexes and triggers go (functions, data and grants are not read).
    static func postgres(ddl: String) -> SchemaCatalogue {
        var c = SchemaCatalogue()
        for statement in statements(ddl) {
            let words = statement.split(whereSeparator: { $0.isWhitespace }).map(String.init)
            let upper = words.map { $0.uppercased() }
            func starts(_ prefix: String...) -> Bool { upper.starts(with: prefix) }
            if starts("CREATE", "TABLE") {
                c.createTable(statement)
            } else if starts("ALTER", "TABLE"), upper.count > 5, upper[3] == "ADD", upper[4] == "COLUMN" {
                let table = words[2]
                let definition = words[5...].joined(separator: " ")
                c.addColumn(definition, to: table)
            } else if starts("ALTER", "TABLE"), upper.count > 5, upper[3] == "DROP", upper[4] == "COLUMN" {
                c.tables[words[2]]?.removeAll { $0.name == words[5] }
            } else if starts("CREATE", "INDEX") || starts("CREATE", "UNIQUE", "INDEX") {
                if let parsed = parseIndex(statement) { c.indexes[parsed.name] = parsed.index }
            } else if starts("DROP", "INDEX") {
                c.indexes[words.last!] = nil
            } else if starts("CREATE", "TRIGGER") || starts("CREATE", "OR", "REPLACE", "TRIGGER") {
                let name = words[upper.firstIndex(of: "TRIGGER")! + 1]
                c.triggers.insert("\(words[upper.firstIndex(of: "ON")! + 1]).\(name)")
            } else if starts("DROP", "TRIGGER") {
                let name = words[upper.firstIndex(of: "TRIGGER")! + 1]
                c.triggers.remove("\(words[upper.firstIndex(of: "ON")! + 1]).\(name)")
            } else if starts("DROP", "TABLE") {
                let table = words.last!
                c.tables[table] = nil
                c.keys = c.keys.filter { !$0.hasPrefix(table + ":") }
            }
        }
        return c
    }

    private mutating func createTable(_ statement: String) {
        guard let open = statement.firstIndex(of: "("), let close = statement.lastIndex(of: ")") else { return }
        let table = statement[..<open].split(separator: " ").last.map(String.init) ?? ""
        tables[table] = []
        for item in Self.topLevel(String(statement[statement.index(after: open)..<close]), separator: ",") {
            let upper = item.uppercased()
            if upper.hasPrefix("PRIMARY KEY ") || upper.hasPrefix("PRIMARY KEY(") {
                keys.insert("\(table): primary key (\(Self.parenthesised(item)))")
            } else if upper.hasPrefix("UNIQUE ") || upper.hasPrefix("UNIQUE(") {
                keys.insert("\(table): unique (\(Self.parenthesised(item)))")
            } else if upper.hasPrefix("CONSTRAINT ") {
                // An exclusion constraint on equality (a hash index) is a uniqueness key.
                if upper.contains(" EXCLUDE "), let column = Self.parenthesised(item).split(separator: " ").first {
                    keys.insert("\(table): unique (\(column))")
                }
            } else if !upper.hasPrefix("CHECK ") && !upper.hasPrefix("CHECK(") {
                addColumn(item, to: table)
            }
        }
    }

    private mutating func addColumn(_ definition: String, to table: String) {
        let words = definition.split(whereSeparator: { $0.isWhitespace }).map(String.init)
        guard let name = words.first else { return }
        let constraintWords: Set<String> = ["COLLATE", "NOT", "NULL", "DEFAULT", "PRIMARY", "UNIQUE", "REFERENCES", "CHECK", "GENERATED"]
        let type = words.dropFirst().prefix { !constraintWords.contains($0.uppercased()) }.joined(separator: " ")
        let upper = words.map { $0.uppercased() }
        let primary = definition.uppercased().contains("PRIMARY KEY")
        var defaultValue: String?
        // DEFAULT and its value; not GENERATED BY DEFAULT AS IDENTITY.
        if let d = upper.firstIndex(of: "DEFAULT"), d + 1 < words.count, d == 0 || upper[d - 1] != "BY" { defaultValue = words[d + 1] }
        tables[table, default: []].append(Column(name: name, kind: Self.kind(type), notNull: definition.uppercased().contains("NOT NULL") || primary,
                                                 defaultValue: Self.normalDefault(defaultValue)))
        if primary { keys.insert("\(table): primary key (\(name))") }
        if upper.contains("UNIQUE") { keys.insert("\(table): unique (\(name))") }
        if let r = upper.firstIndex(of: "REFERENCES"), r + 1 < words.count {
            let target = words[r + 1]
            let open = target.firstIndex(of: "(")!
            keys.insert("\(table): (\(name)) references \(target[..<open])(\(target[target.index(after: open)...].dropLast()))")
        }
    }

    /// `CREATE [UNIQUE] INDEX [IF NOT EXISTS] name ON table(keys) [WHERE condition]`, either engine's text.
    static func parseIndex(_ sql: String) -> (name: String, index: Index)? {
        let words = sql.split(whereSeparator: { $0.isWhitespace }).map(String.init)
        let upper = words.map { $0.uppercased() }
        guard let at = upper.firstIndex(of: "INDEX"), let on = upper.firstIndex(of: "ON") else { return nil }
        let name = upper[at + 1] == "IF" ? words[at + 4] : words[at + 1]
        let rest = words[(on + 1)...].joined(separator: " ")
        guard let open = rest.firstIndex(of: "(") else { return nil }
        var depth = 0
        var close = open
        for i in rest[open...].indices {
            if rest[i] == "(" { depth += 1 }
            if rest[i] == ")" { depth -= 1; if depth == 0 { close = i; break } }
        }
        let table = rest[..<open].trimmingCharacters(in: .whitespaces)
        let keys = normalExpression(String(rest[rest.index(after: open)..<close]))
        var condition = rest[rest.index(after: close)...].trimmingCharacters(in: .whitespaces)
        if condition.uppercased().hasPrefix("WHERE") { condition = String(condition.dropFirst(5)) }
        return (name, Index(table: table, unique: upper.contains("UNIQUE"), keys: keys, condition: normalExpression(condition)))
    }

    /// What is inside the first parentheses of `text`.
    static func parenthesised(_ text: String) -> String {
        guard let open = text.firstIndex(of: "("), let close = text.lastIndex(of: ")") else { return "" }
        return text[text.index(after: open)..<close].split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: ", ")
    }

    /// `text` split at `separator` outside parentheses, each part trimmed.
    static func topLevel(_ text: String, separator: Character) -> [String] {
        var parts: [String] = []
        var current = ""
        var depth = 0
        for ch in text {
            if ch == "(" { depth += 1 }
            if ch == ")" { depth -= 1 }
            if ch == separator && depth == 0 {
                parts.append(current.trimmingCharacters(in: .whitespacesAndNewlines))
                current = ""
            } else {
                current.append(ch)
            }
        }
        let last = current.trimmingCharacters(in: .whitespacesAndNewlines)
        if !last.isEmpty { parts.append(last) }
        return parts
    }

    /// The statements of `sql`, without comments, each on one line: split at semicolons
    /// outside quoted text, comments and dollar-quoted bodies (`$$ ... $$`, `$f$ ... $f$`).
    static func statements(_ sql: String) -> [String] {
        var statements: [String] = []
        var current = ""
        let chars = Array(sql)
        var i = 0
        while i < chars.count {
            let ch = chars[i]
            if ch == "-" && i + 1 < chars.count && chars[i + 1] == "-" {
                while i < chars.count && chars[i] != "\n" { i += 1 }
                current.append(" ")
                continue
            }
            if ch == "'" {
                current.append(ch)
                i += 1
                while i < chars.count {
                    current.append(chars[i])
                    if chars[i] == "'" { break }
                    i += 1
                }
                i += 1
                continue
            }
            if ch == "$", let end = chars[(i + 1)...].firstIndex(of: "$"),
               chars[(i + 1)..<end].allSatisfy({ $0.isLetter || $0 == "_" }) {
                let tag = String(chars[i...end])
                current += tag
                i = end + 1
                // To the same tag again.
                while i < chars.count && !String(chars[i..<min(chars.count, i + tag.count)]).elementsEqual(tag) {
                    current.append(chars[i])
                    i += 1
                }
                current += tag
                i += tag.count
                continue
            }
            if ch == ";" {
                statements.append(current)
                current = ""
                i += 1
                continue
            }
            current.append(ch)
            i += 1
        }
        statements.append(current)
        return statements.map { $0.split(whereSeparator: { $0.isWhitespace }).joined(separator: " ") }.filter { !$0.isEmpty }
    }

    /// Every difference between a SQLite catalogue and a PostgreSQL one, in words, leaving
    /// out the objects each engine is documented to have alone; empty when they agree.
    static func differences(sqlite: SchemaCatalogue, postgres: SchemaCatalogue,
                            sqliteOnly: Set<String>, postgresOnly: Set<String>) -> [String] {
        var found: [String] = []
        for object in sqlite.objects.subtracting(postgres.objects).subtracting(sqliteOnly).sorted() {
            found.append("\(object): only on SQLite")
        }
        for object in postgres.objects.subtracting(sqlite.objects).subtracting(postgresOnly).sorted() {
            found.append("\(object): only on PostgreSQL")
        }
        for (table, columns) in sqlite.tables.sorted(by: { $0.key < $1.key }) {
            guard let other = postgres.tables[table], columns != other else { continue }
            found.append("table \(table) columns differ:\n  SQLite:     \(columns.map(\.description).joined(separator: ", "))\n"
                         + "  PostgreSQL: \(other.map(\.description).joined(separator: ", "))")
        }
        let shared = Set(sqlite.tables.keys).intersection(postgres.tables.keys)
        func keysOfShared(_ keys: Set<String>) -> Set<String> {
            keys.filter { shared.contains(String($0.prefix { $0 != ":" })) }
        }
        for key in keysOfShared(sqlite.keys).subtracting(postgres.keys).sorted() { found.append("key \(key): only on SQLite") }
        for key in keysOfShared(postgres.keys).subtracting(sqlite.keys).sorted() { found.append("key \(key): only on PostgreSQL") }
        for (name, index) in sqlite.indexes.sorted(by: { $0.key < $1.key }) {
            guard let other = postgres.indexes[name], index != other else { continue }
            found.append("index \(name) differs: SQLite \(index), PostgreSQL \(other)")
        }
        return found
    }
}
