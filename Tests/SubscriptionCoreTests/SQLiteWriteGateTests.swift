import Foundation
import XCTest
@testable import SubscriptionCore

/// One process's writers of one SQLite file take turns at a gate before SQLite's lock: the
/// same file by two paths shares it, another file does not, every write still lands, and a
/// writer kept waiting past its busy timeout is refused as SQLite would refuse it.
final class SQLiteWriteGateTests: XCTestCase {
    var dir = ""

    override func setUpWithError() throws {
        dir = NSTemporaryDirectory() + "write-gate-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(atPath: dir)
    }

    func testOneFileByTwoPathsSharesAGateAndAnotherFileHasItsOwn() throws {
        _ = try Store(path: dir + "/a.db")
        _ = try Store(path: dir + "/b.db")
        try FileManager.default.createSymbolicLink(atPath: dir + "/link.db", withDestinationPath: dir + "/a.db")
        let a = try XCTUnwrap(SQLiteWriteGate.of(dir + "/a.db"))
        XCTAssertTrue(a === SQLiteWriteGate.of(dir + "/link.db"))
        XCTAssertFalse(a === SQLiteWriteGate.of(dir + "/b.db"))
        XCTAssertNil(SQLiteWriteGate.of(":memory:"))
        XCTAssertNil(SQLiteWriteGate.of(dir + "/none.db"))
    }

    /// Four connections on four threads, 50 writes each, all kept; then a writer whose busy
    /// timeout is 100 ms, while another holds a write for a second, is refused in about that.
    func testWritersTakeTurnsAndOneKeptWaitingIsRefusedAtItsTimeout() throws {
        let path = dir + "/turns.db"
        try Store(path: path).db.execute("CREATE TABLE t (n INTEGER)")
        let group = DispatchGroup()
        let failures = Failures()
        for w in 0..<4 {
            group.enter()
            Thread {
                defer { group.leave() }
                do {
                    let store = try Store(path: path)
                    for i in 0..<50 { try store.write { _ = try store.db.run("INSERT INTO t VALUES (?)", [w * 100 + i]) } }
                } catch {
                    failures.add("\(error)")
                }
            }.start()
        }
        XCTAssertEqual(group.wait(timeout: .now() + 60), .success)
        XCTAssertEqual(failures.all, [])
        XCTAssertEqual(try Store(path: path).db.first("SELECT count(*) FROM t") { $0.int(0) }, 200)

        let holder = try Store(path: path), impatient = try Store(path: path, busyTimeoutMs: 100)
        let holding = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        group.enter()
        Thread {
            defer { group.leave() }
            try? holder.write {
                _ = try holder.db.run("INSERT INTO t VALUES (-1)", [])
                holding.signal()
                _ = release.wait(timeout: .now() + 10)
            }
        }.start()
        holding.wait()
        let started = Date()
        XCTAssertThrowsError(try impatient.write { _ = try impatient.db.run("INSERT INTO t VALUES (-2)", []) }) { error in
            XCTAssertTrue("\(error)".contains("locked"), "\(error)")
        }
        XCTAssertLessThan(Date().timeIntervalSince(started), 5, "waited far past its busy timeout")
        release.signal()
        XCTAssertEqual(group.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(try Store(path: path).db.first("SELECT count(*) FROM t") { $0.int(0) }, 201)
    }

    final class Failures: @unchecked Sendable {
        private let lock = NSLock()
        private var list: [String] = []
        func add(_ text: String) { lock.withLock { list.append(text) } }
        var all: [String] { lock.withLock { list } }
    }
}
