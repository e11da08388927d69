import Foundation
import XCTest
import SubdeskTestKit
@testable import SubscriptionCore
import SubdeskScenarios

/// The by-segment catch-up in short writes, each aggregate row written once: at every
/// commit, the stored aggregates plus what a report sums in memory equal every
/// subscription's share summed from scratch, whether the catch-up is stopped half-way,
/// intake changes subscriptions meanwhile, or two connections catch up at once. On SQLite,
/// and on PostgreSQL when SUBDESK_TEST_POSTGRES names a server (`scripts/pg-cluster`).
final class SegmentCatchUpTests: XCTestCase, RunsOnEveryEngine {
    struct Stopped: Error {}
    var directory: String!

    override func setUpWithError() throws {
        directory = NSTemporaryDirectory() + "segment-catch-up-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(atPath: directory) }

    /// A new store on each engine there is: a SQLite file, and a fresh PostgreSQL schema.
    func locations() -> [String] {
        var out = [directory + "/store-\(UUID().uuidString).db"]
        if let base = TestEngine.postgres() {
            out.append(Store.freshPostgresLocation(base))
        }
        return out
    }

    /// The sample histories (instances `from`..<`from + count` of each scenario), in the
    /// order they arrive.
    func bodies(instances: Range<Int>) throws -> [Data] {
        let builder = ScenarioBuilder(signer: TestKit.signer)
        var out: [Data] = []
        for instance in instances {
            for (index, scenario) in try TestKit.sample.scenarios().enumerated() {
                out += try builder.bodies(for: scenario, instance: instance * 100 + index, anchor: TestKit.anchor)
            }
        }
        return out
    }

    /// A store holding the first sample histories, with every by-segment share pending.
    func filledStore(_ location: String, instances: Range<Int> = 0..<1) throws -> Store {
        let store = try Store(path: location)
        for body in try bodies(instances: instances) { _ = try TestKit.intake(store).ingest(body, receivedAt: TestKit.anchor) }
        try store.metrics.forgetSegments()
        return store
    }

    /// The stored aggregates plus the overlay equal every subscription's share summed.
    func assertExact(_ store: Store, _ what: String, file: StaticString = #filePath, line: UInt = #line) throws {
        var sums = SegmentSums()
        try store.db.query("SELECT metrics FROM subscriptions WHERE metrics IS NOT NULL") { sums.add(encoded: $0.data(0), sign: 1) }
        var expected: [SegmentRowKey: Int] = [:], found: [SegmentRowKey: Int] = [:]
        for row in sums.rows() { expected[SegmentRowKey(row), default: 0] += row.delta }
        try store.db.query("SELECT dimension, value, key, segment, bucket, delta FROM metric_segments") { r in
            found[SegmentRowKey(dimension: r.string(0), value: r.string(1), key: r.string(2), segment: r.string(3), bucket: r.int64(4)),
                  default: 0] += r.int(5)
        }
        for row in try store.metrics.pendingSegmentRows() { found[SegmentRowKey(row), default: 0] += row.delta }
        XCTAssertFalse(expected.isEmpty, what, file: file, line: line)
        XCTAssertEqual(found.filter { $0.value != 0 }, expected, what, file: file, line: line)
    }

    func catchUpPhase(_ store: Store) throws -> SegmentCatchUpPhase? { try store.metrics.segmentCatchUpState()?.phase }

    /// Stopped after each of its writes while another connection's intake adds and changes
    /// subscriptions between them, the catch-up stays exact at every stop, passes through
    /// its three phases, and the next call goes on where it stopped until nothing is pending.
    func testACatchUpStoppedAfterEachWriteWithIntakeBetweenStaysExact() throws {
        for location in locations() {
            let store = try filledStore(location)
            let intake = TestKit.intake(try Store(path: location))
            var arriving = try bodies(instances: 1..<2)[...]
            XCTAssertGreaterThan(try store.metrics.pendingSegmentCount(), 8)
            try assertExact(store, "all pending")
            var phases: [SegmentCatchUpPhase] = [], stops = 0
            while true {
                do {
                    let taken = try store.metrics.catchUpSegments(batch: 2, turnMs: 1e-9) { progress in
                        if phases.last != progress.phase { phases.append(progress.phase) }
                        throw Stopped()
                    }
                    XCTAssertNotNil(taken)
                    if arriving.isEmpty { break }
                } catch is Stopped {
                    stops += 1
                }
                try assertExact(store, "stop \(stops) in \(phases.last.map(\.rawValue) ?? "-")")
                for body in arriving.prefix(3) { _ = try intake.ingest(body, receivedAt: TestKit.anchor) }
                arriving = arriving.dropFirst(3)
                try assertExact(store, "intake after stop \(stops)")
            }
            XCTAssertEqual(Array(phases.prefix(3)), [.claiming, .writing, .releasing], location)
            XCTAssertGreaterThan(stops, 6)
            XCTAssertEqual(try store.metrics.catchUpSegments(), 0, "\(location): the last call took in everything noted")
            XCTAssertEqual(try store.metrics.pendingSegmentCount(), 0)
            XCTAssertNil(try catchUpPhase(store))
            try assertExact(try Store(path: location), "caught up, read by another connection")
        }
    }

    /// While one connection's catch-up runs, a second finds it running and does none of its
    /// work; once the first has not written for longer than the bound, the second takes it
    /// over from where it stopped, and the first stops at its next write.
    func testTwoCatchUpsAtOnceDoNotDoTheSameWork() throws {
        for location in locations() {
            let first = try filledStore(location), second = try Store(path: location)
            let pending = try first.metrics.pendingSegmentCount()
            var secondSaw: [Int?] = []
            XCTAssertEqual(try first.metrics.catchUpSegments(batch: 4, turnMs: 1e-9) { progress in
                guard secondSaw.isEmpty else { return }
                // Between two of the first catch-up's writes.
                secondSaw.append(try second.metrics.catchUpSegments())
                XCTAssertEqual(try second.metrics.pendingSegmentCount(), pending, "the second took nothing")
                try self.assertExact(second, "while the first runs")
            }, pending, location)
            XCTAssertEqual(secondSaw, [nil], "the second left the work to the first")

            // Stopped half-way, then stale: the second takes over.
            try first.metrics.forgetSegments()
            var writes = 0
            XCTAssertThrowsError(try first.metrics.catchUpSegments(batch: 4, turnMs: 1e-9) { progress in
                writes += 1
                if progress.phase == .writing { throw Stopped() }
            })
            XCTAssertEqual(try catchUpPhase(first), .writing)
            XCTAssertNil(try second.metrics.catchUpSegments(), "the first wrote just now")
            try second.executeForTesting("UPDATE metric_segments_catchup SET heartbeat_ms = heartbeat_ms - \(MetricAggregates.segmentCatchUpStaleMs + 1)")
            var secondPhases: [SegmentCatchUpPhase] = []
            XCTAssertEqual(try second.metrics.catchUpSegments(batch: 4, turnMs: 1e-9) { progress in
                if secondPhases.last != progress.phase { secondPhases.append(progress.phase) }
            }, pending)
            XCTAssertEqual(secondPhases.first, .writing, "\(location): went on from the first's phase")
            XCTAssertEqual(try second.metrics.pendingSegmentCount(), 0)
            try assertExact(first, "taken over and finished")
            XCTAssertEqual(try first.metrics.catchUpSegments(), 0, "nothing left for the first")
        }
    }

    /// Each write of a catch-up reads from the notes only the part it takes or releases,
    /// found by key: not the notes taken before it (a catch-up going on from half-way
    /// through claiming), nor, on PostgreSQL, the dead rows a finished catch-up left (the
    /// next one, for what intake noted meanwhile). Counted on PostgreSQL by the write's own
    /// statistics (index entries and rows its scans returned from the notes), with
    /// sequential scans off so the planner walks the index as on a large table; SQLite
    /// keeps no such count, and runs the same catch-ups for their sums.
    func testEachWriteReadsOnlyTheNotesItTakes() throws {
        for location in locations() {
            let store = try filledStore(location, instances: 0..<4)
            let onServer = !location.hasSuffix(".db")
            if onServer { try store.executeForTesting("SET enable_seqscan = off") }
            let notes = try store.metrics.pendingSegmentCount()
            XCTAssertGreaterThan(notes, 32)
            var reads: [(phase: SegmentCatchUpPhase, size: Int, read: Int)] = []
            // The counts are the connection's since it last reported them, which it does
            // only between transactions: read before the part and after it, in the write.
            var before = 0
            store.segmentMemory.writeProbe = { phase, size, done in
                guard onServer else { return }
                let read = try store.db.first("""
                    SELECT coalesce(sum(pg_stat_get_xact_tuples_returned(oid)), 0) FROM pg_class
                    WHERE oid = 'metric_segments_pending'::regclass
                       OR oid IN (SELECT indexrelid FROM pg_index WHERE indrelid = 'metric_segments_pending'::regclass)
                    """) { $0.int(0) } ?? 0
                if done { reads.append((phase, size, read - before)) } else { before = read }
            }
            // Stopped half-way through claiming, then going on.
            XCTAssertThrowsError(try store.metrics.catchUpSegments(batch: 2, turnMs: 1e-9) { progress in
                if progress.phase == .claiming && progress.done >= notes / 2 { throw Stopped() }
            })
            XCTAssertEqual(try catchUpPhase(store), .claiming)
            XCTAssertEqual(try store.metrics.catchUpSegments(batch: 2, turnMs: 1e-9), notes)
            try assertExact(store, "caught up after a stop")
            // A few notes more, caught up right after the catch-up struck every other note.
            let intake = TestKit.intake(try Store(path: location))
            for body in try bodies(instances: 4..<5).prefix(6) { _ = try intake.ingest(body, receivedAt: TestKit.anchor) }
            XCTAssertGreaterThan(try store.metrics.pendingSegmentCount(), 0)
            XCTAssertNotNil(try store.metrics.catchUpSegments(batch: 2, turnMs: 1e-9))
            XCTAssertEqual(try store.metrics.pendingSegmentCount(), 0)
            try assertExact(store, "caught up again")
            guard onServer else { continue }
            XCTAssertFalse(reads.isEmpty)
            for write in reads {
                XCTAssertLessThanOrEqual(write.read, 8 * write.size, "\(location): a \(write.phase.rawValue) write of \(write.size) notes read \(write.read)")
            }
        }
    }

    /// A first catch-up stopped half-way (and stale); the report by segment brings the
    /// aggregates up to date itself, and answers as one on a store caught up in one go.
    func testAReportBySegmentCatchesUpItselfAndGoesOnFromAStoppedCatchUp() throws {
        for location in locations() {
            let store = try filledStore(location)
            let day = { (offset: Millis) in DateText.format(TestKit.anchor + offset * TestKit.day, "yyyy-MM-dd", zone: TimeZone(identifier: "UTC")!) }
            func report(_ store: Store) throws -> [[String]] {
                let product = try XCTUnwrap(try store.metrics.segmentValues(.product).first)
                return try DailyCountsReport.compute(store: store, from: day(-90), to: day(30), timeZone: TimeZone(identifier: "UTC")!,
                                                     segments: Set(CountSegment.allCases),
                                                     filter: SegmentFilter(dimension: .product, value: product))
                    .map { r in Metric.all.map { r.text($0) } }
            }
            XCTAssertThrowsError(try store.metrics.catchUpSegments(batch: 2, turnMs: 1e-9) { progress in
                if progress.phase == .writing { throw Stopped() }
            })
            try store.executeForTesting("UPDATE metric_segments_catchup SET heartbeat_ms = heartbeat_ms - \(MetricAggregates.segmentCatchUpStaleMs + 1)")
            let other = try Store(path: location)
            var seen: [ReportCatchUpProgress] = []
            other.reportProgress = { seen.append($0) }
            let answered = try report(other)
            XCTAssertEqual(try other.metrics.pendingSegmentCount(), 0, "\(location): the report caught up")
            XCTAssertTrue(seen.contains { if case .segments(let p) = $0 { return p.phase == .releasing } else { return false } })
            try store.metrics.forgetSegments()
            XCTAssertNotNil(try store.metrics.catchUpSegments(batch: 1 << 20))
            XCTAssertEqual(answered, try report(store))
        }
    }
}
