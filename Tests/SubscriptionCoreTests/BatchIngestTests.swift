import Foundation
import XCTest
@testable import SubscriptionCore
import SubdeskTestKit

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

    func testBodiesAreCountedAcrossBatchesAndCalls() throws {
        let store = try store()
        var batches = try BatchIngest(intake: TestKit.intake(store), batchSize: 2)
        let bodies = (1...5).map { i in
            TestKit.body(type: "DID_RENEW", transaction: TestKit.transaction(id: "20000009000001\(i)0", original: "20000009000001\(i)0"),
                         renewal: TestKit.renewal(original: "20000009000001\(i)0"))
        }
        var refused: [String] = []
        let counts = try batches.ingest(count: 6, body: { i in
            BatchIngest.Body(i < 5 ? bodies[i] : Data("not a notification".utf8), source: "line \(i + 1)")
        }, rejected: { source, _, _ in refused.append(source) })
        XCTAssertEqual([counts.stored, counts.duplicates, counts.rejected], [5, 0, 1])
        XCTAssertEqual(refused, ["line 6"])
        let again = try batches.ingest(Array(bodies.prefix(2)))
        XCTAssertEqual([again.stored, again.duplicates, again.rejected], [5, 2, 1], "counts run over every call")
    }

    func testAStopKeepsTheBatchesBeforeItAndSaysWhereToResume() throws {
        let store = try store()
        var batches = try BatchIngest(intake: TestKit.intake(store), batchSize: 2)
        struct Unreadable: Error {}
        let bodies = (1...3).map { i in
            TestKit.body(type: "DID_RENEW", transaction: TestKit.transaction(id: "20000009000002\(i)0", original: "20000009000002\(i)0"),
                         renewal: TestKit.renewal(original: "20000009000002\(i)0"))
        }
        XCTAssertThrowsError(try batches.ingest(count: 4, body: { i in
            guard i < 3 else { throw Unreadable() }
            return BatchIngest.Body(bodies[i], source: "line \(i + 1)")
        })) { error in
            let stopped = error as? BatchIngest.Stopped
            XCTAssertEqual(stopped?.firstUncommitted, 2, "the second batch (bodies 3 and 4) is not stored")
            XCTAssertEqual(stopped?.committed.stored, 2)
            XCTAssertTrue(stopped?.cause is Unreadable)
        }
        XCTAssertEqual(batches.committed.stored, 2)
        XCTAssertEqual(try store.notifications.count(), 2)
    }
}
