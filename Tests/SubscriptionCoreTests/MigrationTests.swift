import Foundation
import XCTest
@testable import SubscriptionCore
import SubdeskTestKit

/// Stores an earlier subdesk made, at every version it shipped, migrate to the very catalogue
/// a store made now has. The earlier stores come from the schema text those subdesks ran,
/// kept in `Fixtures/schema` (SQLite's migrations 1-22; PostgreSQL's baseline 15 and its
/// upgrades), not from today's list.
final class MigrationTests: XCTestCase, RunsOnEveryEngine {
    /// A fixture's blocks by the version each brings a store to, in order.
    static func fixture(_ name: String) throws -> [(version: Int, sql: String)] {
        let url = try XCTUnwrap(Bundle.module.url(forResource: "Fixtures/schema/\(name)", withExtension: "sql"), "\(name).sql is missing")
        var blocks: [(version: Int, sql: String)] = []
        for line in try String(contentsOf: url, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("--@ version "), let version = Int(line.dropFirst("--@ version ".count)) {
                blocks.append((version, ""))
            } else if !blocks.isEmpty {
                blocks[blocks.count - 1].sql += line + "\n"
            }
        }
        return blocks
    }

    var directory: String!

    override func setUpWithError() throws {
        directory = NSTemporaryDirectory() + "migrations-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Everything `sqlite_master` holds, as comparable lines: each table's columns, keys and
    /// indexes (PRAGMA), each index's and trigger's statement with its spacing normalised.
    func sqliteCatalogue(_ db: any SQLConnection) throws -> [String] {
        var lines = try db.rows("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name") { r -> String in
            let sql = r.optionalString(3).map { $0.split(whereSeparator: { $0.isWhitespace }).joined(separator: " ") } ?? "-"
            return "\(r.string(0)) \(r.string(1)) on \(r.string(2))" + (r.string(0) == "table" ? "" : ": \(sql)")
        }
        for table in try db.rows("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name", [], { $0.string(0) }) {
            lines += try db.rows("PRAGMA table_xinfo(\(table))") { r in
                "column \(table).\(r.int(0)): \(r.string(1)) \(r.string(2)) notnull=\(r.int(3)) default=\(r.optionalString(4) ?? "-") pk=\(r.int(5)) hidden=\(r.int(6))"
            }
            for (index, unique, origin, partial) in try db.rows("PRAGMA index_list(\(table))", [], {
                ($0.string(1), $0.int(2), $0.string(3), $0.int(4))
            }) {
                let columns = try db.rows("PRAGMA index_xinfo(\(index))") { "\($0.optionalString(2) ?? "<expr>") desc=\($0.int(3)) key=\($0.int(5))" }
                lines.append("index \(table).\(origin == "c" ? index : origin) unique=\(unique) partial=\(partial): \(columns.joined(separator: ", "))")
            }
            lines += try db.rows("PRAGMA foreign_key_list(\(table))") { "foreign key \(table).\($0.string(3)) -> \($0.string(2)).\($0.string(4))" }
        }
        return lines.sorted()
    }

    func assertSame(_ found: [String], _ expected: [String], from version: Int, line: UInt = #line) {
        XCTAssertTrue(found == expected, """
            a store at \(version) migrated to another catalogue than a new store's:
            only after migrating: \(Set(found).subtracting(expected).sorted())
            only when new: \(Set(expected).subtracting(found).sorted())
            """, line: line)
    }

    func testSQLiteStoresOfEveryShippedVersionMigrateToTheCatalogueOfANewStore() throws {
        let fresh = try Store(path: ":memory:")
        let expected = try sqliteCatalogue(fresh.db)
        XCTAssertEqual(fresh.schemaVersion, Migrations.latestVersion)
        let blocks = try Self.fixture("sqlite-1-22")
        XCTAssertEqual(blocks.map(\.version), Array(1...22))
        for version in 1...22 {
            let path = directory + "/v\(version).db"
            do {
                let old = try SQLiteConnection(path: path)
                try old.execute("BEGIN")
                for block in blocks where block.version <= version { try old.execute(block.sql) }
                try old.execute("PRAGMA user_version = \(version); COMMIT")
                old.close()
            }
            let store = try Store(path: path)
            XCTAssertEqual(store.schemaVersion, Migrations.latestVersion, "from \(version)")
            assertSame(try sqliteCatalogue(store.db), expected, from: version)
        }
    }

    /// The runner makes a store at any version of the list, and takes it on from there.
    func testTheRunnerStopsWhereAskedAndGoesOnFromTheVersionTheStoreRecords() throws {
        let path = directory + "/partial.db"
        let connection = try SQLiteConnection(path: path)
        XCTAssertEqual(try Migrations.migrate(connection, upTo: 9), 0)
        XCTAssertEqual(try connection.schemaVersion(), 9)
        XCTAssertEqual(try connection.columns(of: "intake_log").last, "detail", "migration 10 is not made yet")
        XCTAssertEqual(try Migrations.migrate(connection, upTo: 9), 9, "nothing to do")
        XCTAssertEqual(try Migrations.migrate(connection), 9)
        XCTAssertEqual(try connection.schemaVersion(), Migrations.latestVersion)
        XCTAssertEqual(try connection.columns(of: "intake_log").suffix(2), ["source", "reason_kind"])
        connection.close()
    }

    /// A migration that fails says which one, and leaves the store at the version before it.
    func testAFailingMigrationIsNamedAndUndone() throws {
        let path = directory + "/failing.db"
        let connection = try SQLiteConnection(path: path)
        try Migrations.migrate(connection, upTo: 2)
        try connection.execute("CREATE TABLE verified_chains (x INTEGER)")
        XCTAssertThrowsError(try Migrations.migrate(connection)) { error in
            XCTAssertTrue("\(error)".contains("migration 4 (remembered chain checks)"), "\(error)")
        }
        XCTAssertEqual(try connection.schemaVersion(), 2)
        XCTAssertEqual(try connection.columns(of: "quarantine").suffix(2), ["body_sha256", "source"], "migration 3 was undone too")
        connection.close()
    }

    // MARK: PostgreSQL

    /// Everything of a PostgreSQL store's schema that a migration makes, as comparable lines:
    /// columns (type, collation, nullability, default, identity), constraints, indexes,
    /// triggers and functions as the server prints them, the schema's name left out.
    func postgresCatalogue(_ db: any SQLConnection) throws -> [String] {
        let schema = try XCTUnwrap(try db.first("SELECT current_schema()") { $0.string(0) })
        let unqualified = { (text: String) in text.replacingOccurrences(of: schema + ".", with: "").replacingOccurrences(of: "search_path=" + schema, with: "search_path=") }
        var lines = try db.rows("""
            SELECT 'column ' || table_name || '.' || ordinal_position || ': ' || column_name || ' ' || data_type
                   || ' collate=' || COALESCE(collation_name, '-') || ' null=' || is_nullable
                   || ' default=' || COALESCE(column_default, '-') || ' identity=' || is_identity
                   || ' ' || COALESCE(identity_generation, '-')
            FROM information_schema.columns WHERE table_schema = current_schema()
            """) { $0.string(0) }
        lines += try db.rows("""
            SELECT 'constraint ' || c.relname || '.' || k.conname || ': ' || pg_get_constraintdef(k.oid)
            FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid WHERE c.relnamespace = current_schema()::regnamespace
            UNION ALL
            SELECT 'index ' || i.indexname || ': ' || i.indexdef FROM pg_indexes i WHERE i.schemaname = current_schema()
            UNION ALL
            SELECT 'trigger ' || t.tgname || ': ' || pg_get_triggerdef(t.oid) || ' enabled=' || t.tgenabled::text
            FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid WHERE c.relnamespace = current_schema()::regnamespace AND NOT t.tgisinternal
            UNION ALL
            SELECT 'function ' || p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ') ' || p.prosecdef
                   || ' ' || COALESCE(array_to_string(p.proconfig, ','), '-') || ': ' || p.prosrc
                   || ' acl=' || COALESCE(array_to_string(p.proacl, ','), '-')
            FROM pg_proc p WHERE p.pronamespace = current_schema()::regnamespace
            UNION ALL
            SELECT 'relation ' || c.relname || ' ' || c.relkind::text FROM pg_class c WHERE c.relnamespace = current_schema()::regnamespace
            """) { $0.string(0) }
        return lines.map(unqualified).sorted()
    }

    /// PostgreSQL stores made by the subdesk before the one list (its baseline 15, then each
    /// upgrade to 22) migrate to a new store's catalogue. Runs on the PostgreSQL pass.
    func testPostgresStoresOfEveryShippedVersionMigrateToTheCatalogueOfANewStore() throws {
        let base = try TestEngine.requirePostgres()
        let fresh = try Store(path: Store.freshPostgresLocation(base))
        XCTAssertTrue(fresh.opening.created)
        XCTAssertEqual(fresh.schemaVersion, Migrations.latestVersion)
        let expected = try postgresCatalogue(fresh.db)
        let blocks = try Self.fixture("postgres-15-22")
        XCTAssertEqual(blocks.map(\.version), Array(15...22))
        for version in 15...22 {
            let location = Store.freshPostgresLocation(base)
            let place = try PostgresLocation(location)
            do {
                let old = try PostgresConnection(location: place, lockTimeoutMs: 10_000)
                try old.execute("BEGIN; CREATE SCHEMA \(place.schema!)")
                for block in blocks where block.version <= version { try old.execute(block.sql) }
                try old.run("UPDATE schema_version SET version = ?", [version])
                try old.execute("COMMIT")
                old.close()
            }
            let store = try Store(path: location)
            XCTAssertFalse(store.opening.created, "from \(version)")
            XCTAssertEqual(store.schemaVersion, Migrations.latestVersion, "from \(version)")
            assertSame(try postgresCatalogue(store.db), expected, from: version)
        }
    }
}
