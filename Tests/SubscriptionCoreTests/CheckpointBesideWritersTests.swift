import Foundation
import XCTest
@testable import SubscriptionCore
@testable import SubdeskScenarios

/// serve keeps its WAL short on a connection beside the committer's
/// (`Store.checkpointBesideWriters`): past the limit the log is copied into the store and
/// restarted, in the writers' turn, and the committer writes over it from its start
/// (`reuseWriteAheadLog`); under it nothing changes in the log; nothing committed is lost.
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

    func newStorePath() throws -> (dir: String, path: String) {
        let dir = NSTemporaryDirectory() + "subdesk-wal-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return (dir, dir + "/store.db")
    }

    /// serve's committer: commits reach the disk, no checkpoint of its own (under SQLite's
    /// default backstop), and the log written over after each checkpoint.
    func committer(_ path: String) throws -> Store {
        let writer = try Store(path: path)
        try writer.upkeep.configureForOneShotWrites()
        try writer.upkeep.reuseWriteAheadLog()
        return writer
    }

    func testTheLogPastItsLimitIsCopiedAndRestartedWhileAnotherConnectionGoesOnWriting() throws {
        let (dir, path) = try newStorePath()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let writer = try committer(path)
        let keeper = try Store(path: path)
        XCTAssertFalse(try Store(path: ":memory:").upkeep.writeAheadLogIsPast(0))

        try store(writer, count: 100, from: 0)
        let small = walBytes(path)
        XCTAssertGreaterThan(small, 0)
        XCTAssertFalse(writer.upkeep.writeAheadLogIsPast(1 << 20))
        keeper.upkeep.checkpointBesideWriters(walLimitBytes: 1 << 20)
        XCTAssertEqual(walBytes(path), small, "under the limit, the log is left as it is")

        try store(writer, count: 300, from: 100)
        let big = walBytes(path)
        XCTAssertGreaterThan(big, 1 << 20)
        XCTAssertTrue(writer.upkeep.writeAheadLogIsPast(1 << 20), "the writer counts what its commits left in the log")
        // The committer goes on writing, on another thread, while the log is kept.
        let done = DispatchSemaphore(value: 0)
        final class Failure: @unchecked Sendable { var error: Error? }
        let failure = Failure()
        Thread {
            do { for round in 0..<10 { try self.store(writer, count: 1, from: 2_000 + round) } } catch { failure.error = error }
            done.signal()
        }.start()
        keeper.upkeep.checkpointBesideWriters(walLimitBytes: 1 << 20)
        done.wait()
        XCTAssertNil(failure.error)
        // A commit after the restart, wherever the ten fell around it.
        try store(writer, count: 1, from: 3_000)
        XCTAssertFalse(writer.upkeep.writeAheadLogIsPast(1 << 20), "the log was restarted; only what was written since is in it")
        XCTAssertGreaterThanOrEqual(walBytes(path), big, "the file was written over from its start, not truncated")
        XCTAssertEqual(try Store(path: path).notifications.count(), 411)
    }

    func testALogThatGrewWhileAReaderHeldItIsCutBackAfterItsRestart() throws {
        let (dir, path) = try newStorePath()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let writer = try committer(path)
        let keeper = try Store(path: path)
        try store(writer, count: 1, from: 0)
        // A reader in the middle of a read keeps the log from restarting (its pages are read
        // from the log): checkpoints copy what they can and the log grows past what is kept.
        let reader = try Store(path: path)
        try reader.db.execute("BEGIN")
        XCTAssertEqual(try reader.db.count("SELECT count(*) FROM notifications"), 1)
        var next = 1
        while walBytes(path) <= WriteAheadLogReuse.keptBytes + (1 << 20) {
            try store(writer, count: 500, from: next)
            next += 500
            keeper.upkeep.checkpointBesideWriters(walLimitBytes: 1 << 20)
        }
        let grown = walBytes(path)
        try reader.db.execute("COMMIT")
        keeper.upkeep.checkpointBesideWriters(walLimitBytes: 1 << 20)
        try store(writer, count: 1, from: next)
        XCTAssertLessThanOrEqual(walBytes(path), WriteAheadLogReuse.keptBytes, "grown to \(grown) bytes, cut back to what is kept")
        XCTAssertFalse(writer.upkeep.writeAheadLogIsPast(1 << 20))
        XCTAssertEqual(try Store(path: path).notifications.count(), next + 1)
    }
}
