import Foundation
import XCTest
@testable import SubscriptionCore
import SubdeskTestKit

/// The quarantine keeps every refusal and cannot be used to fill the disk: repeats are
/// counted, oversized bodies keep a prefix, a budget caps what is kept, and only an
/// audited purge deletes.
final class QuarantineTests: XCTestCase, RunsOnEveryEngine {
    var store: Store!
    var intake: Intake!

    override func setUpWithError() throws {
        store = try Store.inMemory()
        intake = TestKit.intake(store)
    }

    func testTheSameJunkAThousandTimesIsKeptOnceAndCounted() throws {
        let junk = Data("{\"hello\":\"this is not a notification\"}".utf8)
        var ids = Set<Int64>()
        for i in 0..<1000 {
            guard case .rejected(_, let id) = try intake.ingest(junk, source: "cgi:10.0.0.\(i % 7)", receivedAt: 1_000 + Millis(i)) else {
                return XCTFail("junk accepted")
            }
            ids.insert(id)
        }
        XCTAssertEqual(ids.count, 1)
        let entry = try XCTUnwrap(try store.quarantine.entries().first)
        XCTAssertEqual(entry.timesSeen, 1000)
        XCTAssertEqual(entry.lastSeen, 1_999)
        XCTAssertEqual(entry.receivedDate, 1_000, "first seen stays")
        XCTAssertEqual(entry.source, "cgi:10.0.0.\(999 % 7)", "the latest sender")
        XCTAssertEqual(try store.quarantine.keptBytes(), Int64(junk.count), "one body kept")
        XCTAssertEqual(try store.quarantine.unresolvedCount(), 1)
        XCTAssertEqual(try store.intakeLog.entries(limit: 2000).count, 1000, "every refusal still reaches the feed")
        // The same body refused for another reason is another entry.
        var strict = TestKit.policy
        strict.maxBodyBytes = 10
        guard case .rejected(let reason, let other) = try TestKit.intake(store, policy: strict).ingest(junk) else { return XCTFail() }
        XCTAssertTrue(reason.description.contains("over the 10-byte limit"), "\(reason)")
        XCTAssertNotEqual(other, entry.id)
    }

    func testAnOversizedBodyKeepsItsPrefixTrueLengthAndDigest() throws {
        let big = Data(repeating: UInt8(ascii: "x"), count: 3 << 20)
        guard case .rejected(let reason, let id) = try intake.ingest(big) else { return XCTFail() }
        XCTAssertEqual(reason, Refusal(.oversized, field: "body", fault: "3145728 bytes is over the 1048576-byte limit"))
        XCTAssertEqual(reason.description, "body: 3145728 bytes is over the 1048576-byte limit")
        let entry = try XCTUnwrap(try store.quarantine.entries(ids: [id]).first)
        XCTAssertEqual(entry.body, big.prefix(Intake.keptPrefixBytes))
        XCTAssertEqual(entry.bodyBytes, big.count)
        XCTAssertFalse(entry.isBodyWhole)
        // Read in part by a caller (CGI), the same body is recognised by its digest.
        let again = try intake.rejectOversized(prefix: big.prefix(100), trueLength: big.count,
                                               digest: ContentDigest.sha256Hex(big), source: "cgi")
        XCTAssertEqual(again, .rejected(reason: reason, quarantineId: id))
        XCTAssertEqual(try store.quarantine.entries(ids: [id]).first?.timesSeen, 2)
    }

    func testPastTheBudgetOnlyDigestLengthAndCountAreKeptAndTheFeedSaysSo() throws {
        var policy = TestKit.policy
        policy.quarantineBudgetBytes = 100
        let small = TestKit.intake(store, policy: policy)
        let first = Data(String(repeating: "a", count: 80).utf8)
        let second = Data(String(repeating: "b", count: 80).utf8)
        guard case .rejected(_, let a) = try small.ingest(first), case .rejected(_, let b) = try small.ingest(second) else {
            return XCTFail()
        }
        let kept = try store.quarantine.entries(ids: [a, b])
        XCTAssertEqual(kept.first { $0.id == a }?.body, first, "within the budget: kept whole")
        let over = try XCTUnwrap(kept.first { $0.id == b })
        XCTAssertEqual(over.body, Data(), "past the budget: nothing of the body")
        XCTAssertEqual(over.bodyBytes, 80)
        XCTAssertEqual(try store.quarantine.entriesWithoutWholeBody(), 1)
        XCTAssertEqual(try store.intakeLog.entries(limit: 1).first?.detail, "body: not valid JSON " + Intake.pastBudgetMark)
        XCTAssertEqual(try store.quarantine.keptBytes(), 80)
    }

    func testPurgeDeletesOnlyEntriesLastSeenBeforeTheDateAndIsAudited() throws {
        let day = TestKit.day
        _ = try intake.ingest(Data("old".utf8), receivedAt: 10 * day)
        _ = try intake.ingest(Data("seen again".utf8), receivedAt: 10 * day)
        _ = try intake.ingest(Data("seen again".utf8), receivedAt: 30 * day)
        _ = try intake.ingest(Data("new".utf8), receivedAt: 31 * day)
        let ops = Operations(store: store, operatorName: "ana")
        XCTAssertThrowsError(try ops.purgeQuarantine(before: 20 * day, reason: " ", now: 40 * day)) {
            XCTAssertEqual("\($0)", "a reason is required")
        }
        let purged = try ops.purgeQuarantine(before: 20 * day, reason: "junk from a scanner", now: 40 * day)
        XCTAssertEqual(purged.entries, 1)
        XCTAssertEqual(purged.bytes, 3)
        XCTAssertEqual(Set(try store.quarantine.entries().map { String(decoding: $0.body, as: UTF8.self) }), ["seen again", "new"],
                       "an entry seen again after the date stays")
        let audit = try XCTUnwrap(try store.audit.entries().last)
        XCTAssertEqual(audit.action, "quarantine_purge")
        XCTAssertEqual(audit.operatorName, try store.server.databaseUser() ?? "ana")
        XCTAssertEqual(audit.reason, "junk from a scanner")
        XCTAssertEqual(audit.outcome, "1 entries deleted")
        XCTAssertThrowsError(try ops.purgeQuarantine(before: 50 * day, reason: "x", now: 40 * day), "not into the future")
    }

    /// Every way SQL offers to change or remove an audit row fails, from subdesk's own connection.
    func testTheAuditLogRefusesReplaceUpsertAndDroppingItsGuards() throws {
        let ops = Operations(store: store, operatorName: "ana")
        _ = try ops.purgeQuarantine(before: 1, reason: "first entry", now: 2)
        let before = try store.audit.entries()
        XCTAssertEqual(before.count, 1)
        let id = before[0].id
        // On PostgreSQL the owner may still drop or alter a table it owns (that is the
        // owner's power, not ordinary use; doctor reports missing guards): the statements
        // that change rows are the ones tried there.
        let postgresAttempts = [
            "INSERT INTO audit_log (id, at_ms, operator, action, outcome) VALUES (\(id), 0, 'eve', 'x', 'forged') ON CONFLICT (id) DO UPDATE SET operator = 'eve'",
            "UPDATE audit_log SET operator = 'eve'",
            "DELETE FROM audit_log",
            "TRUNCATE audit_log",
            "WITH gone AS (DELETE FROM audit_log RETURNING id) SELECT count(*) FROM gone",
        ]
        let sqliteAttempts = [
            "INSERT OR REPLACE INTO audit_log (id, at_ms, operator, action, outcome) VALUES (\(id), 0, 'eve', 'x', 'forged')",
            "REPLACE INTO audit_log (id, at_ms, operator, action, outcome) VALUES (\(id), 0, 'eve', 'x', 'forged')",
            "INSERT INTO audit_log (id, at_ms, operator, action, outcome) VALUES (\(id), 0, 'eve', 'x', 'forged') ON CONFLICT (id) DO UPDATE SET operator = 'eve'",
            "INSERT INTO audit_log (id, at_ms, operator, action, outcome) VALUES (\(id), 0, 'eve', 'x', 'forged') ON CONFLICT DO NOTHING; DELETE FROM audit_log",
            "UPDATE audit_log SET operator = 'eve'",
            "UPDATE OR REPLACE audit_log SET id = id + 1",
            "DELETE FROM audit_log",
            "DROP TRIGGER audit_log_no_update",
            "DROP TRIGGER audit_log_no_replace",
            "DROP TABLE audit_log",
            "ALTER TABLE audit_log RENAME TO old_log",
            "PRAGMA writable_schema = ON",
        ]
        for sql in store.dialect == .sqlite ? sqliteAttempts : postgresAttempts {
            XCTAssertThrowsError(try store.executeForTesting(sql), sql)
            XCTAssertEqual(try store.audit.entries(), before, sql)
        }
        XCTAssertEqual(try store.upkeep.missingAuditGuards(), [])
        // Appending still works.
        _ = try ops.purgeQuarantine(before: 1, reason: "second entry", now: 3)
        XCTAssertEqual(try store.audit.entries().count, 2)
    }
}
