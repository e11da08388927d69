import Foundation
import XCTest
@testable import SubscriptionCore

/// Many processes opening one new store at once: the first burst a CGI deployment sees.
final class StoreOpenRaceTests: XCTestCase {
    func testConcurrentFirstOpensOfANewStoreAllSucceed() throws {
        let dir = NSTemporaryDirectory() + "subdesk-open-race-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let openers = 8
        final class Failures: @unchecked Sendable {
            let lock = NSLock()
            var list: [String] = []
            func add(_ text: String) { lock.lock(); list.append(text); lock.unlock() }
        }
        let failures = Failures()
        // Before the fix about one round in twenty lost an open; sixty make a miss unlikely.
        for round in 0..<60 {
            let path = "\(dir)/race-\(round).db"
            let start = DispatchSemaphore(value: 0)
            let group = DispatchGroup()
            for _ in 0..<openers {
                group.enter()
                Thread.detachNewThread {
                    defer { group.leave() }
                    start.wait()
                    do {
                        let store = try Store(path: path)
                        XCTAssertEqual(store.schemaVersion, Migrations.latestVersion)
                    } catch {
                        failures.add("round \(round): \(error)")
                    }
                }
            }
            for _ in 0..<openers { start.signal() }
            XCTAssertEqual(group.wait(timeout: .now() + 60), .success, "round \(round) hung")
        }
        XCTAssertEqual(failures.list, [], "\(failures.list.count) opens failed")
        let mode = try Store(path: "\(dir)/race-0.db").db.first("PRAGMA journal_mode") { $0.string(0) }
        XCTAssertEqual(mode, "wal")
    }
}
