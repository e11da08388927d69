import Foundation
import XCTest
@testable import SubscriptionCore

/// `serve --listen unix:PATH` takes a path and never a file: only a socket nothing answers on
/// is replaced, and at exit only the socket it bound is removed. The files put there are what
/// an operator's slip puts there: another store, its own store, a folder, a link, a live socket.
/// Nothing here depends on the engine: the stores are SQLite files.
final class ServeSocketPathTests: SubdeskTestCase {
    var servers: [ServeProcess] = []

    override func tearDownWithError() throws {
        for server in servers { server.stop() }
        try super.tearDownWithError()
    }

    func store(_ name: String) throws -> String {
        let db = dir + "/" + name
        XCTAssertEqual(try run(["init", "--db", db]).status, 0)
        return db
    }

    /// `serve` on `db` listening at `path`: the process, started.
    func serve(_ db: String, at path: String) throws -> ServeProcess {
        let server = try ServeProcess(binary: Self.binary, arguments: ["--db", db] + ServeTests.policyFlags, socket: path,
                                      log: dir + "/serve-\(servers.count).log", environment: ProcessInfo.processInfo.environment)
        servers.append(server)
        return server
    }

    /// Serve refuses within 10 s, exiting non-zero with `expected` in its log.
    func assertRefused(_ server: ServeProcess, saying expected: String, file: StaticString = #filePath, line: UInt = #line) {
        let status = server.waitForExit(timeout: 10)
        XCTAssertNotNil(status, "serve took the path and kept running: \(server.log)", file: file, line: line)
        XCTAssertNotEqual(status ?? 0, 0, server.log, file: file, line: line)
        XCTAssertTrue(server.log.contains(expected), "\(expected) not in: \(server.log)", file: file, line: line)
    }

    func contents(_ path: String) -> Data? { FileManager.default.contents(atPath: path) }

    func testAnotherStoreAtThePathIsRefusedAndKeptByteForByte() throws {
        let other = dir + "/other.db"
        XCTAssertEqual(try run(["demo", "--no-dashboard", "--copies", "1", "--db", other]).status, 0)
        let before = try XCTUnwrap(contents(other))
        let server = try serve(try store("serving.db"), at: other)
        assertRefused(server, saying: "--listen unix:\(other): a regular file of \(before.count) bytes is there (a store?)")
        XCTAssertEqual(contents(other), before, "the other store is untouched")
        XCTAssertEqual(try run(["notifications", "--db", other, "--limit", "1"]).status, 0, "and still opens as a store")
    }

    func testItsOwnStoreAtThePathIsRefusedAndKept() throws {
        let db = try store("own.db")
        let before = try XCTUnwrap(contents(db))
        assertRefused(try serve(db, at: db), saying: "a regular file of")
        XCTAssertEqual(contents(db), before)
        XCTAssertEqual(try run(["notifications", "--db", db, "--limit", "1"]).status, 0, "and still opens as a store")
    }

    func testAFolderALinkAndALiveSocketAreRefused() throws {
        let db = try store("s.db")
        let folder = dir + "/folder"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        assertRefused(try serve(db, at: folder), saying: "a directory is there")
        var isFolder: ObjCBool = false
        XCTAssertTrue(FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder) && isFolder.boolValue)

        let target = dir + "/target.txt"
        try Data("kept".utf8).write(to: URL(fileURLWithPath: target))
        let link = dir + "/link.sock"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        assertRefused(try serve(db, at: link), saying: "a symbolic link is there")
        XCTAssertEqual(try FileManager.default.destinationOfSymbolicLink(atPath: link), target, "the link stays")
        XCTAssertEqual(contents(target), Data("kept".utf8))

        let live = dir + "/live.sock"
        let first = try serve(db, at: live)
        try first.waitUntilAnswering()
        let second = try serve(try store("t.db"), at: live)
        assertRefused(second, saying: "another process answers on this socket")
        XCTAssertNotNil(try? FastCGITestClient(socket: live), "the first serve still answers on its socket")
    }

    func testAStaleSocketIsReplacedAndTheSocketIsRemovedAtExitOnlyIfStillItsOwn() throws {
        let db = try store("s.db")
        let path = dir + "/serve.sock"
        // A socket left by a killed process: bound, never listened on or closed.
        let stale = ServeListenerTestAddress.boundSocket(path)
        XCTAssertGreaterThanOrEqual(stale, 0)
        close(stale)
        let server = try serve(db, at: path)
        try server.waitUntilAnswering()
        server.signal(SIGTERM)
        XCTAssertEqual(server.waitForExit(timeout: 15), 0, server.log)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path), "its own socket is removed at exit")

        // The path replaced while it serves (an operator's file, another serve's socket):
        // at exit that file stays.
        let again = try serve(db, at: path)
        try again.waitUntilAnswering()
        let moved = dir + "/moved.sock"
        XCTAssertEqual(rename(path, moved), 0)
        try Data("not the socket".utf8).write(to: URL(fileURLWithPath: path))
        again.signal(SIGTERM)
        XCTAssertEqual(again.waitForExit(timeout: 15), 0, again.log)
        XCTAssertEqual(contents(path), Data("not the socket".utf8), "the file now at the path is not removed")
    }
}
