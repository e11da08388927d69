import Foundation
import XCTest
import SubdeskTestKit
@testable import SubscriptionCore
import SubdeskScenarios

/// The relay as on-call sees it: each target's outbox in the on-call reading, its metrics,
/// and the signals `subdesk check` and `:health` judge from them.
final class ForwardOnCallTests: XCTestCase, RunsOnEveryEngine {
    /// The scrape's time against a large outbox is measured on SQLite only: the tests of
    /// what is read run on every engine.
    static let engineTests: Set<String>? = [
        "testTheReadingCountsPendingDeadAndTheLastHourPerTargetAndTheMetricsSayIt",
        "testAConfiguredTargetWithNoDeliveryReadsZeroAndOneTheOutboxStillNamesIsRead",
        "testLagPastTheLimitAndADeliveryDeadInTheLastDayAreWarnings",
        "testTheReconcileGaugeIsTheLastFinishedFailuresBackfillOfEachAppAndEnvironment",
    ]

    var store: Store!
    var intake: Intake!

    override func setUpWithError() throws {
        store = try Store.inMemory()
        intake = TestKit.intake(store)
        var backend = ForwardTarget(name: "backend", url: URL(string: "https://backend.example.com/in")!, secretFile: "/s")
        backend.maxAge = 3_600_000
        intake.forwarding = ForwardTargets([backend])
    }

    func ingest(_ type: String, _ otid: String, at offset: Millis) throws {
        let body = TestKit.body(type: type, uuid: UUID().uuidString.lowercased(), signed: TestKit.anchor + offset,
                                transaction: TestKit.transaction(id: otid + "-\(offset)", original: otid, signed: TestKit.anchor + offset),
                                renewal: TestKit.renewal(original: otid, signed: TestKit.anchor + offset))
        guard case .stored = try intake.ingest(body, receivedAt: TestKit.anchor + offset) else { return XCTFail("not stored") }
    }

    func answer(_ d: ForwardDelivery, _ next: ForwardAttempt.Next, status: Int?, at: Millis) throws {
        try store.outbox.record([(d, ForwardAttempt(at: at, tookMs: 3, status: status, error: status == nil ? "timed out" : nil,
                                                     answer: nil, next: next))])
    }

    func reading(at now: Millis, targets: [String] = ["backend"]) throws -> OnCallReading {
        try OnCallReading.read(from: store, now: now, forwardTargets: targets)
    }

    func testTheReadingCountsPendingDeadAndTheLastHourPerTargetAndTheMetricsSayIt() throws {
        let minute: Millis = 60_000
        // A, B, C, D owed a minute apart; A delivered after one failure, B refused to death,
        // C failing still, D never tried.
        for (i, otid) in ["A", "B", "C", "D"].enumerated() { try ingest("DID_RENEW", otid, at: Millis(i) * minute) }
        let now = TestKit.anchor + 20 * minute
        try store.outbox.spread()
        let due = try store.outbox.claim(target: "backend", now: TestKit.anchor + 5 * minute, limit: 3, lease: minute, claimant: "t")
        XCTAssertEqual(due.count, 3)
        try answer(due[0], .retry(at: TestKit.anchor + 6 * minute), status: 503, at: TestKit.anchor + 5 * minute)
        try answer(due[1], .dead, status: 410, at: TestKit.anchor + 5 * minute)
        try answer(due[2], .retry(at: now + minute), status: nil, at: TestKit.anchor + 5 * minute)
        let again = try store.outbox.claim(target: "backend", now: TestKit.anchor + 6 * minute, limit: 1, lease: minute, claimant: "t")
        XCTAssertEqual(again.map(\.originalTransactionId), ["A"])
        try answer(again[0], .delivered, status: 204, at: TestKit.anchor + 6 * minute)

        let r = try XCTUnwrap(reading(at: now).forwarding.first)
        XCTAssertEqual(r.target, "backend")
        XCTAssertEqual(r.pending, 2)
        // C, owed two minutes after the anchor, is the oldest still pending.
        XCTAssertEqual(r.oldestPending, TestKit.anchor + 2 * minute)
        XCTAssertEqual(r.lag(at: now), 18 * minute)
        XCTAssertEqual(r.dead, 1)
        XCTAssertEqual(r.deadLastDay, 1)
        XCTAssertEqual(r.deliveredLastHour, 1)
        XCTAssertEqual(r.failedAttemptsLastHour, 3)

        let text = OnCallMetrics.exposition(OnCallInputs(reading: try reading(at: now), roots: [], quarantineBudgetBytes: nil))
        for line in ["subdesk_forward_pending{target=\"backend\"} 2", "subdesk_forward_oldest_pending_age_seconds{target=\"backend\"} 1080",
                     "subdesk_forward_delivered_last_hour{target=\"backend\"} 1",
                     "subdesk_forward_failed_attempts_last_hour{target=\"backend\"} 3", "subdesk_forward_dead{target=\"backend\"} 1",
                     "subdesk_forward_dead_last_day{target=\"backend\"} 1", "# TYPE subdesk_forward_pending gauge"] {
            XCTAssertTrue(text.contains(line + "\n"), "exposition lacks \(line)")
        }

        // Two hours on: the last hour saw nothing; the death is still within the day.
        let later = try XCTUnwrap(reading(at: now + 2 * 3_600_000).forwarding.first)
        XCTAssertEqual([later.deliveredLastHour, later.failedAttemptsLastHour, later.dead, later.deadLastDay], [0, 0, 1, 1])
        // Past C and D's max_age a claim gives them up, never tried (D) or not: dead that day.
        XCTAssertEqual(try store.outbox.claim(target: "backend", now: now + 2 * 3_600_000, limit: 10, lease: minute, claimant: "t"), [])
        let given = try XCTUnwrap(reading(at: now + 2 * 3_600_000).forwarding.first)
        XCTAssertEqual([given.pending, given.dead, given.deadLastDay], [0, 3, 3])
        XCTAssertNil(given.oldestPending)
        // A day and more after they died, they are dead still, but not of the last day.
        let dayAfter = try XCTUnwrap(reading(at: now + 30 * 3_600_000).forwarding.first)
        XCTAssertEqual([dayAfter.dead, dayAfter.deadLastDay], [3, 0])

        let none = OnCallMetrics.exposition(OnCallInputs(reading: try reading(at: now + 2 * 3_600_000), roots: [], quarantineBudgetBytes: nil))
        XCTAssertFalse(none.contains("subdesk_forward_oldest_pending_age_seconds{"), "an age with nothing pending")
    }

    /// `subdesk_reconcile_last_success_timestamp_seconds`: the last `backfill --only-failures`
    /// that finished, per app and environment; a full backfill, a run that did not finish and
    /// one dated past the scrape are not it, and before the first there is no sample.
    func testTheReconcileGaugeIsTheLastFinishedFailuresBackfillOfEachAppAndEnvironment() throws {
        let hour: Millis = 3_600_000, now = TestKit.anchor + 10 * hour
        func text() throws -> String {
            OnCallMetrics.exposition(OnCallInputs(reading: try reading(at: now), roots: [], quarantineBudgetBytes: nil))
        }
        XCTAssertFalse(try text().contains("subdesk_reconcile_last_success_timestamp_seconds{"), "a sample before any run")
        func run(_ environment: String, failures: Bool, started: Millis, finished: Millis?, bundleId: String? = ScenarioBuilder.demoBundleId) throws {
            let r = try store.backfills.start(environment: environment, since: started - 24 * hour, until: started, onlyFailures: failures,
                                            operatorName: "subdesk", now: started, bundleId: bundleId)
            if let finished { try store.backfills.finish(r.id, now: finished) }
        }
        try run("Production", failures: true, started: TestKit.anchor + hour, finished: TestKit.anchor + hour + 5_000)
        try run("Production", failures: true, started: TestKit.anchor + 2 * hour, finished: TestKit.anchor + 2 * hour + 7_000)
        try run("Production", failures: true, started: TestKit.anchor + 3 * hour, finished: nil)
        try run("Production", failures: false, started: TestKit.anchor + 4 * hour, finished: TestKit.anchor + 4 * hour + 1_000)
        try run("Production", failures: true, started: now + 2 * hour, finished: now + 2 * hour + 1_000)
        try run("Sandbox", failures: true, started: TestKit.anchor + 5 * hour, finished: TestKit.anchor + 5 * hour + 2_000)
        let r = try reading(at: now)
        XCTAssertEqual(r.lastReconcile, [
            .init(bundleId: ScenarioBuilder.demoBundleId, environment: "Production"): TestKit.anchor + 2 * hour + 7_000,
            .init(bundleId: ScenarioBuilder.demoBundleId, environment: "Sandbox"): TestKit.anchor + 5 * hour + 2_000,
        ])
        let exposition = try text()
        let production = OnCallMetrics.number(Double(TestKit.anchor + 2 * hour + 7_000) / 1000)
        XCTAssertTrue(exposition.contains("subdesk_reconcile_last_success_timestamp_seconds{app=\"default\",environment=\"Production\"} \(production)\n"),
                      exposition.split(separator: "\n").filter { $0.contains("reconcile") }.joined(separator: "\n"))
    }

    func testAConfiguredTargetWithNoDeliveryReadsZeroAndOneTheOutboxStillNamesIsRead() throws {
        try ingest("DID_RENEW", "A", at: 0)
        // "backend" left the config: its pending delivery is still read, after the configured ones.
        let r = try reading(at: TestKit.anchor + 1_000, targets: ["warehouse", "crm"])
        XCTAssertEqual(r.forwarding.map(\.target), ["warehouse", "crm", "backend"])
        XCTAssertEqual(r.forwarding.map(\.pending), [0, 0, 1])
        XCTAssertEqual(try OnCallReading.read(from: store, now: TestKit.anchor).forwarding.map(\.target), ["backend"])
        XCTAssertEqual(try OnCallReading.read(from: Store.inMemory(), now: TestKit.anchor).forwarding, [])
    }

    func testLagPastTheLimitAndADeliveryDeadInTheLastDayAreWarnings() throws {
        var r = OnCallReading(now: TestKit.anchor, engine: store.dialect)
        var lagging = ForwardReading(target: "crm")
        lagging.pending = 4
        lagging.oldestPending = TestKit.anchor - 11 * 60_000
        var dying = ForwardReading(target: "warehouse")
        dying.deadLastDay = 2
        r.forwarding = [lagging, dying]
        let signals = OnCallHealth.signals(OnCallInputs(reading: r, roots: [], quarantineBudgetBytes: nil), environments: [])
        let forward = signals.filter { $0.name.hasPrefix("forward ") }
        XCTAssertEqual(forward.map(\.name), ["forward crm lag", "forward crm dead, 1 day", "forward warehouse lag", "forward warehouse dead, 1 day"])
        XCTAssertEqual(forward.map(\.level), [.warning, .ok, .ok, .warning])
        XCTAssertEqual(forward[0].problem, "forward target crm: the oldest of 4 pending deliveries has waited 11m (limit 10m); see subdesk forward status")
        XCTAssertEqual(forward[2].value, "nothing pending")
        XCTAssertEqual(forward[3].problem, "forward target warehouse: 2 deliveries died in the last day, never taken; subdesk forward retry --dead sends them again")
        var patient = OnCallThresholds.standard
        patient.maxForwardLag = 20 * 60_000
        let relaxed = OnCallHealth.signals(OnCallInputs(reading: r, roots: [], quarantineBudgetBytes: nil), environments: [], thresholds: patient)
        XCTAssertEqual(relaxed.first { $0.name == "forward crm lag" }?.level, .ok)
    }
}

/// The forwarding part of a scrape against a large SQLite outbox, timed.
/// What each claim runs inside its write, where the writers that answer Apple wait behind
/// it: marking overdue deliveries dead reads the give-up index's range, not every pending row.
final class ForwardClaimPlanTests: XCTestCase {
    /// SQLite's plan (PostgreSQL's planner picks by its statistics, not asked here).
    func testMarkingOverdueDeliveriesDeadReadsTheGiveUpIndexRange() throws {
        let store = try Store(path: ":memory:")
        var plan: [String] = []
        try store.db.query("EXPLAIN QUERY PLAN " + ForwardOutboxTable.markOverdueDead, ["backend", TestKit.anchor, TestKit.anchor]) { row in
            plan.append(row.string(3))
        }
        XCTAssertTrue(plan.contains { $0.contains("USING INDEX forward_outbox_give_up (target=? AND give_up_ms<?)") }, "\(plan)")
    }

    /// The on-call readings read index ranges, the delivered and dead through the state index
    /// that leaves pending deliveries out (migration 43), never the whole outbox.
    func testTheReadingsReadTheOutboxByItsIndexes() throws {
        let store = try Store(path: ":memory:")
        var plan: [String] = []
        let now = TestKit.anchor, hour: Millis = 3_600_000, day: Millis = 86_400_000
        try store.db.query("EXPLAIN QUERY PLAN " + ForwardOutboxTable.readingsSQL,
                           ["t", "t", "t", "t", now - day, now - day, "t", now - hour, now - hour, "t", now - hour, "t", now - hour]) { row in
            plan.append(row.string(3))
        }
        let outboxReads = plan.filter { $0.contains("forward_outbox") || $0.hasPrefix("SCAN o") || $0.hasPrefix("SEARCH o") }
        XCTAssertFalse(outboxReads.contains { $0.hasPrefix("SCAN") }, "\(plan)")
        XCTAssertEqual(outboxReads.filter { $0.contains("forward_outbox_state") }.count, 4, "\(plan)")
    }

    /// A delivery owed (intake's insert) is not in the state index: only the pending indexes
    /// take it; it enters the state index when it is delivered.
    func testAnOwedDeliveryEntersTheStateIndexOnlyWhenDelivered() throws {
        let store = try Store(path: ":memory:")
        try store.write {
            try store.db.run(ForwardOutboxTable.insertForward(store.dialect), ["t", "n1", "otid1", "com.example.app", "Production", "DID_RENEW",
                                                                 TestKit.anchor, TestKit.anchor + 3_600_000, TestKit.anchor])
        }
        func inStateIndex() throws -> Int {
            try store.db.first("SELECT count(*) FROM forward_outbox INDEXED BY forward_outbox_state WHERE target = 't' AND state <> 'pending' AND state >= ''") { $0.int(0) } ?? -1
        }
        XCTAssertEqual(try inStateIndex(), 0)
        let claimed = try store.outbox.claim(target: "t", now: TestKit.anchor, limit: 10, lease: 60_000, claimant: "test")
        XCTAssertEqual(claimed.count, 1)
        try store.outbox.record(claimed.map { ($0, ForwardAttempt(at: TestKit.anchor + 1, tookMs: 1, status: 200, error: nil, answer: nil, next: .delivered)) })
        XCTAssertEqual(try inStateIndex(), 1)
    }
}

final class ForwardScrapeTimeTests: XCTestCase {
    /// 100,000 deliveries, nearly all delivered long ago, some dead, a backlog pending: the
    /// scrape reads index ranges only, so its forwarding part stays a few milliseconds.
    func testAScrapeOfALargeOutboxReadsIndexRangesOnly() throws {
        let total = 100_000, dead = 500, pending = 2_000
        let now = TestKit.anchor + Millis(total) * 2_000 + 60_000
        let folder = NSTemporaryDirectory() + "forward-scrape-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let store = try Store(path: folder + "/store.db")
        let sql = ForwardOutboxTable.insertForward(store.dialect)
        try store.write {
            for i in 0..<total {
                let owed = TestKit.anchor + Millis(i) * 2_000
                try store.db.run(sql, ["backend", "n\(i)", "otid\(i)", "com.example.app", "Production", "DID_RENEW",
                                       owed, owed + 72 * 3_600_000, owed])
            }
        }
        let claimed = try store.outbox.claim(target: "backend", now: now, limit: total, lease: 60_000, claimant: "bench")
        // Claimed in owed order: the first 500 die, the last 2,000 stay pending, the rest are delivered.
        var answers: [(delivery: ForwardDelivery, attempt: ForwardAttempt)] = []
        for (i, d) in claimed.enumerated() where i < claimed.count - pending {
            let next: ForwardAttempt.Next = i < dead ? .dead : .delivered
            answers.append((d, ForwardAttempt(at: d.owed + 1_000, tookMs: 5, status: i < dead ? 410 : 200, error: nil, answer: nil, next: next)))
        }
        try store.outbox.record(answers)

        var best = Double.infinity
        var reading: [ForwardReading] = []
        for _ in 0..<5 {
            let start = Date()
            reading = try store.outbox.readings(targets: ["backend"], now: now)
            best = min(best, Date().timeIntervalSince(start) * 1000)
        }
        let r = try XCTUnwrap(reading.first)
        XCTAssertEqual(r.dead, dead)
        XCTAssertEqual(claimed.count, total)
        XCTAssertEqual(r.pending, pending)
        let start = Date()
        _ = try OnCallReading.read(from: store, now: now, forwardTargets: ["backend"])
        let whole = Date().timeIntervalSince(start) * 1000
        print("forward on-call reading of \(total) outbox rows (\(r.pending) pending, \(r.dead) dead): "
              + String(format: "%.2f ms (best of 5); the whole on-call reading %.2f ms", best, whole))
        XCTAssertLessThan(best, 50, "the forwarding part of a scrape should read index ranges only")

        // A target down for days: its 100,000 deliveries all pending, counted in its partial index.
        try store.write {
            for i in 0..<total {
                let owed = TestKit.anchor + Millis(i) * 2_000
                try store.db.run(sql, ["down", "n\(i)", "otid\(i)", "com.example.app", "Production", "DID_RENEW",
                                       owed, owed + 72 * 3_600_000, owed])
            }
        }
        var backlog = Double.infinity
        for _ in 0..<5 {
            let start = Date()
            reading = try store.outbox.readings(targets: ["backend", "down"], now: now)
            backlog = min(backlog, Date().timeIntervalSince(start) * 1000)
        }
        XCTAssertEqual(reading.map(\.pending), [pending, total])
        XCTAssertEqual(reading.last?.oldestPending, TestKit.anchor)
        print("forward on-call reading with a second target's \(total) deliveries pending: " + String(format: "%.2f ms (best of 5)", backlog))
        XCTAssertLessThan(backlog, 200)
    }
}
