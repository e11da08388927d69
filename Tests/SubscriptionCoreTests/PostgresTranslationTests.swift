#if !SUBDESK_NO_POSTGRES
import XCTest
@testable import SubscriptionCore

/// Statements are written once, in SQLite's spelling, and `PostgresConnection.translate`
/// rewrites the little PostgreSQL spells otherwise. Each rewrite it makes is listed here:
/// one that is added belongs in this list (and in Store/README.md).
final class PostgresTranslationTests: XCTestCase {
    func translated(_ sql: String) -> String { PostgresConnection.translate(sql).text }

    func testParametersAreNumberedInOrderOrByTheirOwnNumber() {
        XCTAssertEqual(PostgresConnection.translate("SELECT a FROM t WHERE b = ? AND c = ?").text, "SELECT a FROM t WHERE b = $1 AND c = $2")
        XCTAssertEqual(PostgresConnection.translate("SELECT a FROM t WHERE b = ? AND c = ?").parameters, 2)
        let numbered = PostgresConnection.translate("WHERE x = ?1 OR y = ?1 LIMIT ?3")
        XCTAssertEqual(numbered.text, "WHERE x = $1 OR y = $1 LIMIT $3")
        XCTAssertEqual(numbered.parameters, 3)
    }

    func testInsertOrIgnoreBecomesOnConflictDoNothing() {
        XCTAssertEqual(translated("INSERT OR IGNORE INTO jws_headers (segment) VALUES (?);"),
                       "INSERT INTO jws_headers (segment) VALUES ($1) ON CONFLICT DO NOTHING")
    }

    func testIfnullBecomesCoalesce() {
        XCTAssertEqual(translated("SELECT IFNULL(sum(x), 0), ifnull(y, 1) FROM t"), "SELECT COALESCE(sum(x), 0), COALESCE(y, 1) FROM t")
    }

    func testIndexHintsAreDropped() {
        XCTAssertEqual(translated("SELECT bucket FROM metric_buckets INDEXED BY metric_buckets_key WHERE key = ?"),
                       "SELECT bucket FROM metric_buckets  WHERE key = $1")
    }

    func testEmptyListsBecomeEmptyArrays() {
        XCTAssertEqual(translated("WHERE id IN () AND other NOT IN ()"), "WHERE id = ANY('{}') AND other <> ALL('{}')")
    }

    func testQuotedTextAndCommentsAreLeftAlone() {
        XCTAssertEqual(translated("SELECT 'IFNULL(?) IN ()', \"INDEXED BY x\" -- why? IN ()\nFROM t WHERE a = ?"),
                       "SELECT 'IFNULL(?) IN ()', \"INDEXED BY x\" -- why? IN ()\nFROM t WHERE a = $1")
    }
}
#endif
