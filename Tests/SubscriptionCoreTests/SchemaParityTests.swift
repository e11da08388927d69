import Foundation
import XCTest
@testable import SubscriptionCore
import SubdeskTestSupport

/// The two engines' schemas are written twice (`Migrations`, `PostgresSchema`); this proves
/// them equal after a fresh store is made on each: the version, every table, its columns in
/// order (name, type class, nullability, default), every named index and every trigger,
/// except the differences each engine is documented to have. Runs on the PostgreSQL pass.
final class SchemaParityTests: XCTestCase {
    /// What only one engine has, and why.
    static let sqliteOnly: Set<String> = [
        // The trigram search index (migration 9): PostgreSQL tests each row's search text instead.
        "table subscription_search", "table subscription_search_config", "table subscription_search_content",
        "table subscription_search_data", "table subscription_search_idx", "table subscription_search_terms",
        "table search_pending", "trigger subscriptions.subscription_search_insert",
        "trigger subscriptions.subscription_search_update", "trigger subscriptions.subscription_search_delete",
        "trigger subscribers.subscriber_search_update",
        // SQLite's INSERT OR REPLACE would delete an audit row; PostgreSQL has no such statement.
        "trigger audit_log.audit_log_no_replace",
    ]
    static let postgresOnly: Set<String> = [
        // SQLite keeps the version in PRAGMA user_version and counts changes in the file itself.
        "table schema_version", "table store_changes",
        // TRUNCATE and the server-recorded operator exist only on PostgreSQL.
        "trigger audit_log.audit_log_no_truncate", "trigger audit_log.audit_log_operator",
        // The server's time and the role's actions (migration 23): SQLite has no roles.
        "trigger audit_log.audit_log_stamp",
    ]

    var postgresBase: String!

    override func setUpWithError() throws {
        guard let base = ProcessInfo.processInfo.environment["SUBDESK_TEST_POSTGRES"], !base.isEmpty else {
            throw XCTSkip("SUBDESK_TEST_POSTGRES is not set (scripts/pg-cluster start)")
        }
        postgresBase = base
    }

    /// One engine's schema as comparable lines.
    struct Schema {
        var version = 0
        var objects: Set<String> = []
        /// Per table, its columns in order: `name type-class null|not-null default`.
        var columns: [String: [String]] = [:]
    }

    static func typeClass(_ declared: String) -> String {
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

    func sqliteSchema(_ store: Store) throws -> Schema {
        var schema = Schema()
        schema.version = try store.db.first("PRAGMA user_version") { $0.int(0) } ?? 0
        let objects = try store.db.rows("SELECT type, name, tbl_name FROM sqlite_master WHERE type IN ('table', 'index', 'trigger')") {
            ($0.string(0), $0.string(1), $0.string(2))
        }
        for (type, name, table) in objects {
            switch type {
            case "table":
                schema.objects.insert("table \(name)")
                guard !name.hasPrefix("subscription_search") else { continue }
                schema.columns[name] = try store.db.rows("PRAGMA table_info(\(name))") { r in
                    let notNull = r.int(3) == 1 || r.int(5) > 0
                    return "\(r.string(1)) \(Self.typeClass(r.string(2))) \(notNull ? "not-null" : "null") "
                        + Self.normalDefault(r.isNull(4) ? nil : r.string(4))
                }
            case "index" where !name.hasPrefix("sqlite_autoindex_"):
                schema.objects.insert("index \(table).\(name)")
            case "trigger":
                schema.objects.insert("trigger \(table).\(name)")
            default: break
            }
        }
        return schema
    }

    func postgresSchema(_ store: Store) throws -> Schema {
        var schema = Schema()
        schema.version = try store.db.first("SELECT version FROM schema_version") { $0.int(0) } ?? 0
        for table in try store.db.rows("""
            SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'
            """, [], { $0.string(0) }) {
            schema.objects.insert("table \(table)")
            schema.columns[table] = try store.db.rows("""
                SELECT column_name, data_type, is_nullable, column_default FROM information_schema.columns
                WHERE table_schema = current_schema() AND table_name = ? ORDER BY ordinal_position
                """, [table]) { r in
                "\(r.string(0)) \(Self.typeClass(r.string(1))) \(r.string(2) == "NO" ? "not-null" : "null") "
                    + Self.normalDefault(r.isNull(3) ? nil : r.string(3))
            }
        }
        // Named indexes; those a primary key or unique constraint makes are the constraint's.
        for (table, name) in try store.db.rows("""
            SELECT t.relname, i.relname FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
            JOIN pg_namespace n ON n.oid = t.relnamespace
            WHERE n.nspname = current_schema() AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = x.indexrelid)
            """, [], { ($0.string(0), $0.string(1)) }) {
            schema.objects.insert("index \(table).\(name)")
        }
        for (table, name) in try store.db.rows("""
            SELECT c.relname, g.tgname FROM pg_trigger g JOIN pg_class c ON c.oid = g.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = current_schema() AND NOT g.tgisinternal
            """, [], { ($0.string(0), $0.string(1)) }) {
            schema.objects.insert("trigger \(table).\(name)")
        }
        return schema
    }

    /// Every difference between the two, in words; empty when they agree.
    static func differences(sqlite: Schema, postgres: Schema) -> [String] {
        var found: [String] = []
        if sqlite.version != postgres.version {
            found.append("schema version: SQLite \(sqlite.version), PostgreSQL \(postgres.version)")
        }
        for object in sqlite.objects.subtracting(postgres.objects).subtracting(sqliteOnly).sorted() {
            found.append("\(object): only on SQLite")
        }
        for object in postgres.objects.subtracting(sqlite.objects).subtracting(postgresOnly).sorted() {
            found.append("\(object): only on PostgreSQL")
        }
        for (table, columns) in sqlite.columns.sorted(by: { $0.key < $1.key }) {
            guard let other = postgres.columns[table] else { continue }
            if columns != other {
                found.append("table \(table) columns differ:\n  SQLite:     \(columns.joined(separator: ", "))\n"
                             + "  PostgreSQL: \(other.joined(separator: ", "))")
            }
        }
        return found
    }

    func freshStores() throws -> (sqlite: Store, postgres: Store) {
        (try Store(path: ":memory:"), try Store(path: Store.freshPostgresLocation(postgresBase)))
    }

    func testBothEnginesHaveTheSameSchema() throws {
        let (sqlite, postgres) = try freshStores()
        let differences = Self.differences(sqlite: try sqliteSchema(sqlite), postgres: try postgresSchema(postgres))
        XCTAssertEqual(differences, [], differences.joined(separator: "\n"))
        XCTAssertEqual(try sqliteSchema(sqlite).version, Migrations.latestVersion)
        XCTAssertEqual(try postgresSchema(postgres).version, PostgresSchema.version)
    }

    /// The comparison can fail: a column, an index or a trigger missing on one side, a
    /// column of another type or nullability, or a version apart, is each reported.
    func testADroppedColumnIndexOrTriggerIsFound() throws {
        let (sqlite, postgres) = try freshStores()
        try postgres.db.execute("""
            ALTER TABLE overrides DROP COLUMN lift_reason;
            DROP INDEX transactions_purchase;
            DROP TRIGGER refund_request_open ON notifications;
            ALTER TABLE quarantine ALTER COLUMN reason DROP NOT NULL;
            UPDATE schema_version SET version = version + 1;
            """)
        let differences = Self.differences(sqlite: try sqliteSchema(sqlite), postgres: try postgresSchema(postgres))
        let text = differences.joined(separator: "\n")
        XCTAssertTrue(text.contains("schema version: SQLite \(Migrations.latestVersion), PostgreSQL \(PostgresSchema.version + 1)"), text)
        XCTAssertTrue(text.contains("index transactions.transactions_purchase: only on SQLite"), text)
        XCTAssertTrue(text.contains("trigger notifications.refund_request_open: only on SQLite"), text)
        XCTAssertTrue(text.contains("table overrides columns differ"), text)
        XCTAssertTrue(text.contains("table quarantine columns differ"), text)
    }
}
