import Foundation
import XCTest
@testable import SubscriptionCore
import SubdeskTestKit

/// Both engines' schemas come from one migration list (`Migrations`), each entry's shared
/// statements spelled with each engine's words and its own parts side by side; this proves
/// that the halves agree: every table, its columns in order (name, kind, nullability,
/// default), its keys, every named index and every trigger, except the differences each
/// engine is documented to have. Without a server, SQLite's real catalogue is compared with
/// the one the list's PostgreSQL statements describe; on the PostgreSQL pass, also with a
/// real PostgreSQL store's.
final class SchemaParityTests: XCTestCase, RunsOnEveryEngine {
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
        // The by-segment aggregates with their deltas, in key order (migration 28): SQLite's
        // table is that order itself (WITHOUT ROWID).
        "index metric_segments.metric_segments_read",
        // One app's aggregates alone (migration 29), for the same reason.
        "index metric_segments.metric_segments_app",
    ]

    /// The PostgreSQL statements of every migration in the list, as a store made now runs them.
    static func postgresDDL(_ migrations: [Migration] = Migrations.all) -> String {
        migrations.map { $0.sql(for: .postgres) }.joined(separator: ";\n")
    }

    /// The default pass: SQLite's catalogue after migrating, against the one the list's
    /// PostgreSQL statements make, read from their text.
    func testTheListMakesTheSameCatalogueOnBothEnginesWithoutAServer() throws {
        let sqlite = try SchemaCatalogue.sqlite(try Store(path: ":memory:").db)
        let postgres = SchemaCatalogue.postgres(ddl: Self.postgresDDL())
        let differences = SchemaCatalogue.differences(sqlite: sqlite, postgres: postgres,
                                                      sqliteOnly: Self.sqliteOnly, postgresOnly: Self.postgresOnly)
        XCTAssertEqual(differences, [], differences.joined(separator: "\n"))
        // The reading is not empty: every table of the roles' list, its columns and keys.
        XCTAssertEqual(Set(postgres.tables.keys), Set(PostgresRoles.tables))
        XCTAssertEqual(postgres.tables["overrides"]?.count, 10)
        XCTAssertTrue(postgres.keys.contains("delivery_gaps: (backfill_run) references backfill_runs(id)"), "\(postgres.keys)")
        XCTAssertTrue(postgres.keys.contains("jws_headers: unique (segment)"), "\(postgres.keys)")
        XCTAssertEqual(postgres.indexes["subscriptions_expires"]?.keys, "coalesce(expires_ms,0),original_transaction_id")
    }

    /// A migration that adds a column, a key or an index on one engine only is found
    /// without a server, whichever engine it is.
    func testAChangeMadeOnOneEngineOnlyIsFoundWithoutAServer() throws {
        let sqlite = try SchemaCatalogue.sqlite(try Store(path: ":memory:").db)
        func differences(adding migration: Migration) throws -> String {
            let store = try Store(path: ":memory:")
            try store.db.execute(migration.sql(for: .sqlite).isEmpty ? "SELECT 1" : migration.sql(for: .sqlite))
            return SchemaCatalogue.differences(sqlite: try SchemaCatalogue.sqlite(store.db),
                                               postgres: SchemaCatalogue.postgres(ddl: Self.postgresDDL(Migrations.all + [migration])),
                                               sqliteOnly: Self.sqliteOnly, postgresOnly: Self.postgresOnly).joined(separator: "\n")
        }
        XCTAssertEqual(SchemaCatalogue.differences(sqlite: sqlite, postgres: SchemaCatalogue.postgres(ddl: Self.postgresDDL()),
                                                   sqliteOnly: Self.sqliteOnly, postgresOnly: Self.postgresOnly), [])
        let pgColumn = try differences(adding: Migration(99, "a note", postgres: "ALTER TABLE overrides ADD COLUMN note TEXT COLLATE \"C\""))
        XCTAssertTrue(pgColumn.contains("table overrides columns differ"), pgColumn)
        let sqliteColumn = try differences(adding: Migration(99, "a note", sqlite: "ALTER TABLE overrides ADD COLUMN note TEXT"))
        XCTAssertTrue(sqliteColumn.contains("table overrides columns differ"), sqliteColumn)
        let kind = try differences(adding: Migration(99, "a typed note", sqlite: "ALTER TABLE overrides ADD COLUMN note INTEGER",
                                                     postgres: "ALTER TABLE overrides ADD COLUMN note TEXT COLLATE \"C\""))
        XCTAssertTrue(kind.contains("note integer null -") && kind.contains("note text null -"), kind)
        let index = try differences(adding: Migration(99, "an index", sqlite: "CREATE INDEX overrides_until ON overrides(until_ms)"))
        XCTAssertTrue(index.contains("index overrides.overrides_until: only on SQLite"), index)
        let key = try differences(adding: Migration(99, "a key", sqlite: "CREATE TABLE notes (id INTEGER, body TEXT)",
                                                    postgres: "CREATE TABLE notes (id BIGINT PRIMARY KEY, body TEXT)"))
        XCTAssertTrue(key.contains("key notes: primary key (id): only on PostgreSQL"), key)
        let shared = try differences(adding: Migration(99, "a shared note") { d in "ALTER TABLE overrides ADD COLUMN note \(d.text)" })
        XCTAssertEqual(shared, "")
    }

    // MARK: The PostgreSQL pass: a real store of each engine

    var postgresBase: String!

    func requirePostgres() throws {
        let base = try TestEngine.requirePostgres()
        postgresBase = base
    }

    /// One engine's schema as comparable lines.
    struct Schema {
        var version = 0
        var objects: Set<String> = []
        /// Per table, its columns in order: `name type-class null|not-null default`.
        var columns: [String: [String]] = [:]
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
                    return "\(r.string(1)) \(SchemaCatalogue.kind(r.string(2))) \(notNull ? "not-null" : "null") "
                        + SchemaCatalogue.normalDefault(r.isNull(4) ? nil : r.string(4))
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
                "\(r.string(0)) \(SchemaCatalogue.kind(r.string(1))) \(r.string(2) == "NO" ? "not-null" : "null") "
                    + SchemaCatalogue.normalDefault(r.isNull(3) ? nil : r.string(3))
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
        try requirePostgres()
        return (try Store(path: ":memory:"), try Store(path: Store.freshPostgresLocation(postgresBase)))
    }

    func testBothEnginesHaveTheSameSchema() throws {
        let (sqlite, postgres) = try freshStores()
        let differences = Self.differences(sqlite: try sqliteSchema(sqlite), postgres: try postgresSchema(postgres))
        XCTAssertEqual(differences, [], differences.joined(separator: "\n"))
        XCTAssertEqual(try sqliteSchema(sqlite).version, Migrations.latestVersion)
        XCTAssertEqual(try postgresSchema(postgres).version, Migrations.latestVersion)
    }

    /// The comparison can fail: a column, an index or a trigger missing on one side, a
    /// column of another type or nullability, or a version apart, is each reported.
    func testADroppedColumnIndexOrTriggerIsFound() throws {
        let (sqlite, postgres) = try freshStores()
        try postgres.db.execute("""
            ALTER TABLE overrides DROP COLUMN lift_reason;
            DROP INDEX transactions_original;
            DROP TRIGGER refund_request_open ON notifications;
            ALTER TABLE quarantine ALTER COLUMN reason DROP NOT NULL;
            UPDATE schema_version SET version = version + 1;
            """)
        let differences = Self.differences(sqlite: try sqliteSchema(sqlite), postgres: try postgresSchema(postgres))
        let text = differences.joined(separator: "\n")
        XCTAssertTrue(text.contains("schema version: SQLite \(Migrations.latestVersion), PostgreSQL \(Migrations.latestVersion + 1)"), text)
        XCTAssertTrue(text.contains("index transactions.transactions_original: only on SQLite"), text)
        XCTAssertTrue(text.contains("trigger notifications.refund_request_open: only on SQLite"), text)
        XCTAssertTrue(text.contains("table overrides columns differ"), text)
        XCTAssertTrue(text.contains("table quarantine columns differ"), text)
    }
}
