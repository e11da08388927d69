import Foundation
import XCTest
@testable import SubscriptionCore

/// A SQLite store replaced under a running `serve`: a backup moved over it (its old
/// write-ahead log left beside it, as `mv` leaves it), or the file deleted and made again.
/// Nothing is answered 200 that is not in the file the path names, and the single-writer
/// lock follows the path. (A SQLite matter: a PostgreSQL store has no file.)
final class ServeReplacedStoreTests: SubdeskTestCase {
    var servers: [ServeProcess] = []
    var socketPath: String { dir + "/serve.sock" }

    override func tearDownWithError() throws {
        for server in servers { server.stop() }
        try super.tearDownWithError()
    }

    @discardableResult
    func startServe(_ db: String) throws -> ServeProcess {
        var env = ProcessInfo.processInfo.environment
        env["XDG_DATA_HOME"] = dir + "/data"
        env["XDG_CONFIG_HOME"] = dir + "/config"
        env.removeValue(forKey: "SUBDESK_DB")
        env.removeValue(forKey: "SUBDESK_CONFIG")
        let server = try ServeProcess(binary: Self.binary, arguments: ["--db", db] + ServeTests.policyFlags, socket: socketPath,
                                      log: dir + "/serve-\(servers.count).log", environment: env)
        servers.append(server)
        try server.waitUntilAnswering()
        return server
    }

    func sqliteStore(_ name: String = "store.db") throws -> String {
        let db = dir + "/" + name
        XCTAssertEqual(try run(["init", "--db", db]).status, 0)
        return db
    }

    func stored(_ db: String) throws -> Set<String> {
        Set(try engineQuery(db, "SELECT notification_uuid FROM notifications").split(separator: "\n").map(String.init))
    }

    /// Whether another process could take the single-writer lock on the file at `path` now.
    func lockIsFree(_ path: String) -> Bool {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else { return false }
        flock(fd, LOCK_UN)
        return true
    }

    /// A backup moved over the store while serve runs: the bodies answered after the move
    /// are in the file the path names, which reads as the backup plus them (not through the
    /// old file's log); those answered between the backup and the move are only in the
    /// replaced file, as the README says. No SIGHUP is needed.
    func testABackupMovedOverTheStoreIsWrittenFromTheNextRequest() throws {
        let db = try sqliteStore()
        let server = try startServe(db)
        let signed = try ServeTests.signedBodies(4, firstInstance: 881_100)
        let client = try FastCGITestClient(socket: socketPath)
        XCTAssertEqual(client.post(signed[0].body)?.status, 200)
        XCTAssertEqual(try run(["backup", "--db", db, dir + "/backup.db"]).status, 0)
        XCTAssertEqual(client.post(signed[1].body)?.status, 200)
        XCTAssertEqual(client.post(signed[2].body)?.status, 200)
        XCTAssertEqual(rename(dir + "/backup.db", db), 0, "restored as mv restores: the -wal and -shm stay")

        XCTAssertEqual(client.post(signed[3].body)?.text, "stored \(signed[3].uuid)", server.log)
        XCTAssertEqual(try stored(db), [signed[0].uuid, signed[3].uuid],
                       "the file at the path: the backup's body and the one answered after the move")
        XCTAssertEqual(try engineQuery(db, "PRAGMA integrity_check"), "ok")
        XCTAssertFalse(lockIsFree(db), "serve holds the file it now writes")
        XCTAssertEqual(try secondServe(db), 2, "a second serve on the restored file refuses")
    }

    /// How a second `serve` on `db` ended: its status, or nil when it was still running
    /// after 20 s (it took the store) and was stopped.
    func secondServe(_ db: String) throws -> Int32? {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Self.binary)
        p.arguments = ["serve", "--db", db, "--listen", "unix:" + dir + "/other.sock"] + ServeTests.policyFlags
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        let deadline = Date().addingTimeInterval(20)
        while p.isRunning && Date() < deadline { usleep(20_000) }
        guard !p.isRunning else {
            p.terminate()
            p.waitUntilExit()
            return nil
        }
        return p.terminationStatus
    }

    /// Between requests serve looks at the path itself: the lock is on the new file within
    /// seconds, with no request to make it look.
    func testTheSingleWriterLockFollowsTheStoresPathWithoutARequest() throws {
        let db = try sqliteStore()
        try startServe(db)
        let replacement = try sqliteStore("replacement.db")
        XCTAssertTrue(lockIsFree(replacement))
        XCTAssertEqual(rename(replacement, db), 0)
        let deadline = Date().addingTimeInterval(30)
        while lockIsFree(db) && Date() < deadline { usleep(50_000) }
        XCTAssertFalse(lockIsFree(db), "serve took the lock on the file now at the path")
    }

    /// The store deleted under serve: requests are answered 503 (counted as a replaced
    /// store) and stored nowhere; once `init` makes a store there, the next is stored in it.
    func testADeletedStoreIsAnswered503UntilAStoreIsThereAgain() throws {
        let db = try sqliteStore()
        let server = try startServe(db)
        let signed = try ServeTests.signedBodies(3, firstInstance: 881_200)
        let client = try FastCGITestClient(socket: socketPath)
        XCTAssertEqual(client.post(signed[0].body)?.status, 200)
        for suffix in ["", "-wal", "-shm"] { unlink(db + suffix) }

        XCTAssertEqual(client.post(signed[1].body)?.status, 503, server.log)
        XCTAssertFalse(FileManager.default.fileExists(atPath: db), "serve made no store of its own")
        XCTAssertEqual(try run(["init", "--db", db]).status, 0)
        XCTAssertEqual(client.post(signed[2].body)?.text, "stored \(signed[2].uuid)", server.log)
        XCTAssertEqual(try stored(db), [signed[2].uuid])
        XCTAssertTrue(server.log.contains("was deleted"), server.log)
    }
}
