import Foundation
import XCTest
@testable import SubscriptionCore
import SubdeskTestKit
import SubdeskScenarios

/// Batch intake: bodies committed in batches, counts over every call, and a stop that keeps
/// what came before it.
final class BatchIngestTests: XCTestCase, RunsOnEveryEngine {
    var directory: URL!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("batch-ingest-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: directory)
    }

    func store() throws -> Store {
        try Store(path: Store.testLocation(file: directory.appendingPathComponent("store.db").path))
    }

    /// `count` intakes that check ahead, each on a connection of its own to the store at `location`.
    static func checkers(_ count: Int, at location: String) throws -> [Intake] {
        try (0..<count).map { _ in TestKit.intake(try Store(path: location)) }
    }

    /// `count` DID_RENEW bodies of distinct subscriptions, ids of the given series.
    static func renewals(_ count: Int, series: Int) -> [Data] {
        (1...count).map { i in
            let id = "2000000900000\(series)\(i)0"
            return TestKit.body(type: "DID_RENEW", transaction: TestKit.transaction(id: id, original: id), renewal: TestKit.renewal(original: id))
        }
    }

    func testBodiesAreCountedAcrossBatchesAndCalls() throws {
        let store = try store()
        var batches = try BatchIngest(intake: TestKit.intake(store), batchSize: 2)
        let bodies = Self.renewals(5, series: 1)
        var refused: [String] = []
        let counts = try batches.ingest(count: 6, body: { i in
            BatchIngest.Body(i < 5 ? bodies[i] : Data("not a notification".utf8), source: "line \(i + 1)")
        }, rejected: { source, _, _ in refused.append(source) })
        XCTAssertEqual([counts.stored, counts.duplicates, counts.rejected], [5, 0, 1])
        XCTAssertEqual(refused, ["line 6"])
        let again = try batches.ingest(Array(bodies.prefix(2)))
        XCTAssertEqual([again.stored, again.duplicates, again.rejected], [5, 2, 1], "counts run over every call")
    }

    /// Whether bodies are checked ahead or not (`checkers`), an input that fails stops the
    /// run at its batch, and what was read after it is neither checked nor stored.
    func testAStopKeepsTheBatchesBeforeItAndSaysWhereToResume() throws {
        struct Unreadable: Error {}
        let bodies = Self.renewals(3, series: 2)
        for checkers in [0, 2] {
            let location = Store.testLocation(file: directory.appendingPathComponent("stop-\(checkers).db").path)
            let store = try Store(path: location)
            // Batches end by size alone: on a loaded host the checkers (below everyone's
            // priority) may take longer than the standard batch time for one body.
            var batches = try BatchIngest(intake: TestKit.intake(store),
                                          checkers: try Self.checkers(checkers, at: location), batchSize: 2,
                                          batchTime: .seconds(3600))
            var asked = 0
            XCTAssertThrowsError(try batches.ingest(count: 40, body: { i in
                asked += 1
                guard i < 3 else { throw Unreadable() }
                return BatchIngest.Body(bodies[i], source: "line \(i + 1)")
            })) { error in
                let stopped = error as? BatchIngest.Stopped
                XCTAssertEqual(stopped?.firstUncommitted, 2, "the second batch (bodies 3 and 4) is not stored")
                XCTAssertEqual(stopped?.committed.stored, 2)
                XCTAssertTrue(stopped?.cause is Unreadable)
            }
            XCTAssertEqual(asked, 4, "\(checkers) checkers: nothing is read after the input failed")
            XCTAssertEqual(batches.committed.stored, 2)
            XCTAssertEqual(try store.notifications.count(), 2)
        }
    }

    /// Bodies pulled one by one until the input has no more, as `subdesk ingest` reads a file:
    /// with and without checkers, the same counts; an input with no body commits nothing.
    func testBodiesPulledUntilTheInputEnds() throws {
        let bodies = Self.renewals(7, series: 3)
        for checkers in [0, 1, 2] {
            let location = Store.testLocation(file: directory.appendingPathComponent("pull-\(checkers).db").path)
            let store = try Store(path: location)
            var batches = try BatchIngest(intake: TestKit.intake(store),
                                          checkers: try Self.checkers(checkers, at: location), batchSize: 3)
            // An input that ends at once, many times over: the workers end with the call, and
            // the input's closure with them (it may not outlive the call).
            for _ in 0..<200 {
                var none = 0
                XCTAssertEqual(try batches.ingest(next: { none += 1; return nil }), BatchIngest.Counts())
                XCTAssertEqual(none, 1, "an empty input is asked once")
            }
            var index = 0
            let counts = try batches.ingest(next: {
                guard index < bodies.count else { return nil }
                defer { index += 1 }
                return BatchIngest.Body(bodies[index], source: "line \(index + 1)")
            })
            XCTAssertEqual([counts.stored, counts.duplicates, counts.rejected], [7, 0, 0], "\(checkers) checkers")
            XCTAssertEqual(try store.notifications.count(), 7)
        }
    }

    /// The writer comes first: the input is read and the bodies checked on threads at a lower
    /// CPU priority (`CheckAhead.niceness`), while the thread that commits keeps its own.
    func testCheckersRunBelowTheWriter() throws {
        let location = Store.testLocation(file: directory.appendingPathComponent("nice.db").path)
        let store = try Store(path: location)
        let bodies = Self.renewals(9, series: 5)
        var batches = try BatchIngest(intake: TestKit.intake(store), checkers: try Self.checkers(2, at: location), batchSize: 2)
        let own = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
        var seen: Set<Int32> = []
        var index = 0
        let counts = try batches.ingest(next: {
            // Called on a checker's thread: on Linux, getpriority(PRIO_PROCESS, 0) is this thread's.
            seen.insert(getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0))
            guard index < bodies.count else { return nil }
            defer { index += 1 }
            return BatchIngest.Body(bodies[index], source: "line \(index + 1)")
        })
        XCTAssertEqual(counts.stored, 9)
        XCTAssertEqual(seen, [min(19, own + CheckAhead.niceness)], "every read on a checker, below the writer's \(own)")
        XCTAssertEqual(getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0), own, "the writer's priority is its own")
    }

    /// With checkers, a batch is committed when its time is up even while the input has not
    /// given the next body (a pipe whose writer pauses): the bodies before the pause are stored
    /// while it lasts, and the rest after it.
    func testABatchIsCommittedOnTimeWhileTheInputWaits() throws {
        let bodies = Self.renewals(4, series: 4)
        let location = Store.testLocation(file: directory.appendingPathComponent("pause.db").path)
        let store = try Store(path: location)
        let watcher = try Store(path: location)
        /// The run on its own thread, and what it ended with.
        final class Run: @unchecked Sendable {
            var batches: BatchIngest
            var outcome: Result<BatchIngest.Counts, Error>?
            init(_ batches: BatchIngest) { self.batches = batches }
        }
        let run = Run(try BatchIngest(intake: TestKit.intake(store), checkers: try Self.checkers(1, at: location),
                                      batchSize: 100, batchTime: .milliseconds(50)))
        let resume = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        Thread {
            var index = 0
            run.outcome = Result {
                try run.batches.ingest(next: {
                    defer { index += 1 }
                    guard index < bodies.count else { return nil }
                    if index == 3 { resume.wait() }
                    return BatchIngest.Body(bodies[index], source: "line \(index + 1)")
                })
            }
            done.signal()
        }.start()
        // However slow the machine, the first three are stored before the fourth is given.
        var seen = 0
        for _ in 0..<400 where seen < 3 {
            seen = try watcher.notifications.count()
            if seen < 3 { Thread.sleep(forTimeInterval: 0.05) }
        }
        resume.signal()
        done.wait()
        XCTAssertEqual(seen, 3, "the bodies before the pause were stored while it lasted")
        XCTAssertEqual(try run.outcome?.get().stored, 4)
        XCTAssertEqual(try store.notifications.count(), 4)
    }

    /// Checkers register the JWS headers they meet on connections of their own (PostgreSQL):
    /// one that meets a header another registered first takes nothing, so the next new
    /// header's id is the one a single connection gives it (an insert that found the row
    /// there used to take an id from the server's counter all the same).
    func testAHeaderRegisteredTwiceTakesNoIdFromTheNext() throws {
        let location = Store.testLocation(file: directory.appendingPathComponent("headers.db").path)
        let first = try Store(path: location), second = try Store(path: location)
        let (x, y) = ("eyJhbGciOiJFUzI1NiIsIng1YyI6WyJBIl19", "eyJhbGciOiJFUzI1NiIsIng1YyI6WyJCIl19")
        try first.headers.register([x])
        try second.headers.register([x])
        try first.headers.register([y])
        for store in [first, second] {
            // Ids as the writer reads them (registered or, on SQLite, stored on first sight).
            let ids = try store.write { (try store.headers.id(x), try store.headers.id(y)) }
            XCTAssertEqual([ids.0, ids.1], [1, 2])
        }
    }

    /// Bodies checked ahead on other connections (`BatchIngest.checkers`) give the store that
    /// checking each batch on the writer's own gives, row for row: the demo's scenarios and a
    /// generated history of more subscriptions, each a lifecycle of the demo's
    /// (SUBDESK_PIPELINE_SUBSCRIPTIONS, default 440: some 1,200 bodies; 10,000 take 28,000 and
    /// about two minutes on SQLite), shuffled, with a tenth sent twice and a few bodies no
    /// intake accepts.
    func testCheckingAheadOnOtherConnectionsGivesTheStoreSequentialIntakeGives() throws {
        let count = Int(ProcessInfo.processInfo.environment["SUBDESK_PIPELINE_SUBSCRIPTIONS"] ?? "").map { min(max($0, 25), 100_000) } ?? 440
        let anchor = DateText.nowMillis()
        let scenarios = try TestKit.sample.scenarios()
        let builder = ScenarioBuilder(signer: try TestKit.sample.signer())
        var bodies: [Data] = []
        for (n, scenario) in scenarios.enumerated() { bodies += try builder.bodies(for: scenario, instance: 800_000 + n, anchor: anchor) }
        for n in 0..<count {
            bodies += try builder.bodies(for: scenarios[n % scenarios.count], instance: 810_000 + n, anchor: anchor)
        }
        var random = StoreGenerator.Random(state: 49_50)
        bodies += bodies.indices.filter { $0 % 10 == 3 }.map { bodies[$0] }
        bodies += [Data("not a notification".utf8), Data("{\"signedPayload\": \"a.b.c\"}".utf8)]
        bodies.shuffle(using: &random)

        func ingest(into name: String, checkers: Int) throws -> (Store, BatchIngest.Counts, [String]) {
            let location = Store.testLocation(file: directory.appendingPathComponent(name).path)
            let store = try Store(path: location)
            var batches = try BatchIngest(intake: TestKit.intake(store),
                                          checkers: try Self.checkers(checkers, at: location), batchSize: 97)
            batches.clock = { anchor }
            var refused: [String] = []
            let counts = try batches.ingest(count: bodies.count, body: { BatchIngest.Body(bodies[$0], source: "line \($0 + 1)") },
                                            rejected: { source, reason, _ in refused.append("\(source): \(reason)") })
            return (store, counts, refused)
        }
        let (sequential, expected, expectedRefusals) = try ingest(into: "sequential.db", checkers: 0)
        XCTAssertGreaterThanOrEqual(try sequential.subscriptions.count(), count, "a subscription for each lifecycle at least")
        XCTAssertGreaterThan(expected.stored, count)
        XCTAssertGreaterThan(expected.duplicates, count / 20)
        XCTAssertEqual(expected.rejected, 2)
        let reference = try sequential.upkeep.contentDigest()
        for checkers in [1, 3] {
            let (ahead, counts, refusals) = try ingest(into: "ahead-\(checkers).db", checkers: checkers)
            XCTAssertEqual(counts, expected, "\(checkers) checkers")
            XCTAssertEqual(refusals, expectedRefusals, "refusals are heard in input order")
            let digest = try ahead.upkeep.contentDigest()
            XCTAssertEqual(reference.keys.sorted().filter { reference[$0] != digest[$0] }, [], "\(checkers) checkers: tables that differ")
        }
    }
}

