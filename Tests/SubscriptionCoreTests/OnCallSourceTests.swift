import XCTest
@testable import SubscriptionCore
import SubdeskTestKit

/// `subdesk_source_up`: each source judged from what is recorded (the store's rows, serve's
/// counts of its 503s), never by asking the source; a source with nothing to judge has no
/// sample, and no sample claims a source that does not exist.
final class OnCallSourceTests: XCTestCase, RunsOnEveryEngine {
    /// The store's reading runs on each engine; the judgements are pure.
    static let engineTests: Set<String>? = ["testTheStoreReadsTheLatestRecordedAppleCall"]
    let now: Millis = 1_790_000_000_000

    func inputs(stored: Millis? = nil, serve: ServeUnavailability? = nil, revocationCheck: Bool = false,
                appleCall: AppleCallRecord? = nil, schema: Int = Migrations.latestVersion) -> OnCallInputs {
        var reading = OnCallReading(now: now, engine: .sqlite)
        if let stored {
            reading.intakeCounts = [.init(environment: "Production", type: "DID_RENEW", outcome: "stored", reason: "", count: 1, last: stored),
                                    .init(environment: "Production", type: "DID_RENEW", outcome: "duplicate", reason: "", count: 1, last: now)]
        }
        reading.schemaVersion = schema
        reading.binarySchemaVersion = Migrations.latestVersion
        reading.lastAppleCall = appleCall
        var i = OnCallInputs(reading: reading, roots: [], quarantineBudgetBytes: nil)
        i.serveUnavailability = serve
        i.revocationCheck = revocationCheck
        return i
    }

    func samples(_ i: OnCallInputs) -> [String: Double] {
        let metric = OnCallMetrics.all.first { $0.name == "subdesk_source_up" }!
        var out: [String: Double] = [:]
        for s in metric.samples(i) { out[s.labels.first { $0.0 == "source" }!.1] = s.value }
        return out
    }

    func testTheStoreIsDownWhenAWriteFailedAfterTheLastStoredNotification() {
        XCTAssertEqual(samples(inputs(stored: now - 60_000)), ["store": 1], "read, and no serve counts: up; nothing else is judged")
        let failedLater = ServeUnavailability(totals: [.locked: 1], lastHour: 1, lastAt: [.locked: now - 30_000])
        XCTAssertEqual(samples(inputs(stored: now - 60_000, serve: failedLater))["store"], 0)
        XCTAssertEqual(samples(inputs(stored: now - 10_000, serve: failedLater))["store"], 1, "a notification stored since")
        // A duplicate arriving later proves nothing of the store's writes: only a stored one does.
        XCTAssertEqual(samples(inputs(stored: now - 60_000, serve: failedLater))["store"], 0)
        let notTheStore = ServeUnavailability(totals: [.incompleteBody: 1, .revocation: 1], lastHour: 2,
                                              lastAt: [.incompleteBody: now - 1000, .revocation: now - 1000])
        XCTAssertEqual(samples(inputs(stored: now - 60_000, serve: notTheStore))["store"], 1, "a body cut short or OCSP is not the store")
        XCTAssertEqual(samples(inputs(stored: now - 60_000, schema: Migrations.latestVersion + 1))["store"], 0,
                       "a store written by a newer subdesk")
    }

    func testOCSPIsJudgedOnlyWithTheCheckOnAndServesCounts() {
        let failed = ServeUnavailability(totals: [.revocation: 2], lastHour: 2, lastAt: [.revocation: now - 5000])
        XCTAssertNil(samples(inputs(stored: now - 60_000, serve: failed))["ocsp"], "revocation_check off: no sample")
        XCTAssertNil(samples(inputs(stored: now - 60_000, revocationCheck: true))["ocsp"], "without serve's counts: no sample")
        XCTAssertEqual(samples(inputs(stored: now - 60_000, serve: failed, revocationCheck: true))["ocsp"], 0)
        XCTAssertEqual(samples(inputs(stored: now - 1000, serve: failed, revocationCheck: true))["ocsp"], 1)
        XCTAssertEqual(samples(inputs(stored: nil, serve: ServeUnavailability(), revocationCheck: true))["ocsp"], 1, "no failure seen")
    }

    func testTheAppleAPIIsTheLatestRecordedCallsOutcome() {
        XCTAssertNil(samples(inputs())["apple_api"], "nothing recorded: no sample")
        XCTAssertEqual(samples(inputs(appleCall: AppleCallRecord(at: now, answered: true, record: .ping)))["apple_api"], 1)
        XCTAssertEqual(samples(inputs(appleCall: AppleCallRecord(at: now, answered: false, record: .revalidation)))["apple_api"], 0)
    }

    func testNoSampleNamesASourceThatIsNotDeclared() {
        let all = inputs(stored: now, serve: ServeUnavailability(), revocationCheck: true,
                         appleCall: AppleCallRecord(at: now, answered: true, record: .ping))
        XCTAssertEqual(Set(samples(all).keys), Set(OnCallSource.allCases.map(\.rawValue)))
        XCTAssertFalse(samples(all).keys.contains("relay"), "the relay does not exist yet")
        let help = OnCallMetrics.all.first { $0.name == "subdesk_source_up" }!.help
        for source in OnCallSource.allCases { XCTAssertTrue(help.contains(source.meaning), "\(source) is documented where it is served") }
    }

    /// The store's records of calls to Apple: the latest of an audited revalidation, a refund
    /// answer and a ping, each read as the value it was recorded with.
    func testTheStoreReadsTheLatestRecordedAppleCall() throws {
        let store = try Store.inMemory()
        XCTAssertNil(try OnCallReading.lastAppleCall(store, now: now))
        try store.write {
            _ = try store.audit.append(AuditEntry(at: now - 50_000, operatorName: "ana", action: .revalidate, target: "1", reason: nil,
                                                 outcome: "failed", detail: "Apple did not answer"))
        }
        XCTAssertEqual(try OnCallReading.lastAppleCall(store, now: now), AppleCallRecord(at: now - 50_000, answered: false, record: .revalidation))
        try store.recordPing(environment: "Production", requested: now - 40_000, arrived: nil)
        XCTAssertEqual(try OnCallReading.lastAppleCall(store, now: now), AppleCallRecord(at: now - 40_000, answered: true, record: .ping))
        try store.write {
            try store.db.run("INSERT INTO refund_requests (notification_uuid, requested_ms, answered_ms, answer_outcome) VALUES (?, ?, ?, ?)",
                             ["r1", now - 100_000, now - 30_000, "failed: timed out"] as [SQLBindable?])
        }
        XCTAssertEqual(try OnCallReading.lastAppleCall(store, now: now), AppleCallRecord(at: now - 30_000, answered: false, record: .refundAnswer))
        try store.write {
            try store.db.run("INSERT INTO refund_requests (notification_uuid, requested_ms, answered_ms, answer_outcome) VALUES (?, ?, ?, ?)",
                             ["r2", now - 100_000, now - 20_000, "refused: 4000001"] as [SQLBindable?])
            _ = try store.audit.append(AuditEntry(at: now + 86_400_000, operatorName: "ana", action: .revalidate, target: "1", reason: nil,
                                                 outcome: "failed", detail: "dated far ahead"))
        }
        XCTAssertEqual(try OnCallReading.lastAppleCall(store, now: now), AppleCallRecord(at: now - 20_000, answered: true, record: .refundAnswer),
                       "Apple's refusal is Apple's answer; an entry dated far ahead is ignored")
    }
}
