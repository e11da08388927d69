import Foundation
import XCTest
@testable import SubscriptionCore
@testable import SubdeskScenarios

/// serve keeps its WAL short on a connection beside the committer's
/// (`Store.checkpointBesideWriters`): past the limit the log is copied into the store and
/// truncated, in the writers' turn; under it nothing is done; nothing committed is lost.
final class CheckpointBesideWritersTests: XCTestCase {
    func walBytes(_ path: String) -> Int64 {
        var info = stat()
        return stat(path + "-wal", &info) == 0 ? Int64(info.st_size) : -1
    }

    func store(_ store: Store, count: Int, from first: Int) throws {
        let now = DateText.nowMillis()
        try store.write {
            for i in first..<first + count {
                let uuid = String(format: "wal-%08d", i)
                let event = NotificationEvent(notificationUUID: uuid, version: 2, type: .didRenew, subtype: nil, signedDate: now,
                                              originalTransactionId: String(70_000_000 + i), transactionId: nil,
                                              productId: "app.monthly", environment: "Production")
                let body = Data((#"{"signedPayload":"# + String(repeating: "x", count: 2_000) + #""}"#).utf8)
                try store.notifications.insert(StoredNotification(event: event, receivedDate: now, bodySHA256: uuid, body: body, source: "test",
                                                                bundleId: ScenarioBuilder.demoBundleId))
            }
        }
    }

    func testTheLogPastItsLimitIsCopiedAndTruncatedWhileAnotherConnectionGoesOnWriting() throws {
        let dir = NSTemporaryDirectory() + "subdesk-wal-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/store.db"
        // serve's committer: commits reach the disk, and no checkpoint of its own.
        let writer = try Store(path: path)
        try writer.upkeep.configureForOneShotWrites()
        try writer.upkeep.checkpointEvery(pages: 1_000_000)
        let keeper = try Store(path: path)
        XCTAssertFalse(try Store(path: ":memory:").upkeep.writeAheadLogIsPast(0))

        try store(writer, count: 100, from: 0)
        let small = walBytes(path)
        XCTAssertGreaterThan(small, 0)
        keeper.upkeep.checkpointBesideWriters(walLimitBytes: 1 << 20)
        XCTAssertEqual(walBytes(path), small, "under the limit, the log is left as it is")

        XCTAssertFalse(keeper.upkeep.writeAheadLogIsPast(1 << 20))
        try store(writer, count: 1_000, from: 100)
        XCTAssertGreaterThan(walBytes(path), 1 << 20)
        XCTAssertTrue(keeper.upkeep.writeAheadLogIsPast(1 << 20))
        // The committer goes on writing, on another thread, while the log is kept.
        let done = DispatchSemaphore(value: 0)
        final class Failure: @unchecked Sendable { var error: Error? }
        let failure = Failure()
        Thread {
            // Ten small commits: wherever they land around the truncation, under 1 MiB of log.
            do { for round in 0..<10 { try self.store(writer, count: 1, from: 2_000 + round) } } catch { failure.error = error }
            done.signal()
        }.start()
        keeper.upkeep.checkpointBesideWriters(walLimitBytes: 1 << 20)
        done.wait()
        XCTAssertNil(failure.error)
        XCTAssertLessThan(walBytes(path), 1 << 20, "the log was truncated; only what was written since is in it")
        XCTAssertEqual(try Store(path: path).notifications.count(), 1_110)
    }
}
