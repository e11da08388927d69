import Foundation
import FastCGI
import XCTest
@testable import SubscriptionCore

/// Clients that try to starve `serve`, each run while a legitimate request is made, on the
/// unix socket and on TCP: connections that say nothing, a slowloris trickling bytes,
/// clients that ask for management answers and never read them. The legitimate request is
/// answered within 2 s through each, and SIGTERM ends serve within 10 s whatever they do.
final class ServeAttackTests: SubdeskTestCase {
    var servers: [ServeProcess] = []
    var attackers: [FastCGITestClient] = []

    override func tearDownWithError() throws {
        attackers.removeAll()
        for server in servers { server.stop() }
        try super.tearDownWithError()
    }

    enum Transport { case unix, tcp }

    struct Running {
        let server: ServeProcess
        let connect: () throws -> FastCGITestClient
    }

    func start(_ transport: Transport, _ extra: [String] = []) throws -> Running {
        let db = dir + "/store.db"
        if !FileManager.default.fileExists(atPath: db) { XCTAssertEqual(try run(["init", "--db", db]).status, 0) }
        var env = ProcessInfo.processInfo.environment
        env["XDG_DATA_HOME"] = dir + "/data"
        env["XDG_CONFIG_HOME"] = dir + "/config"
        env.removeValue(forKey: "SUBDESK_DB")
        env.removeValue(forKey: "SUBDESK_CONFIG")
        let socket = dir + "/serve.sock"
        let port = transport == .tcp ? try WebServerTests.freeLoopbackPort() : 0
        let server = try ServeProcess(binary: Self.binary, arguments: ["--db", db] + ServeTests.policyFlags + extra, socket: socket,
                                      log: dir + "/serve-\(servers.count).log", environment: env,
                                      listen: transport == .tcp ? "127.0.0.1:\(port)" : nil)
        servers.append(server)
        let connect: () throws -> FastCGITestClient = transport == .tcp
            ? { try FastCGITestClient(port: port) } : { try FastCGITestClient(socket: socket) }
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            if server.log.contains("answering FastCGI on"), (try? connect()) != nil { break }
            guard server.process.isRunning else { break }
            usleep(50_000)
        }
        // The first request pays for the chain's first check: made before any attack.
        let warm = try connect().post(try ServeTests.signedBodies(1, firstInstance: 882_000 + servers.count * 10)[0].body)
        XCTAssertEqual(warm?.status, 200, server.log)
        return Running(server: server, connect: connect)
    }

    /// A new connection's request, answered within 2 s.
    func assertAnsweredQuickly(_ running: Running, instance: Int, _ what: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let signed = try ServeTests.signedBodies(1, firstInstance: instance)[0]
        let started = Date()
        let client = try running.connect()
        let answer = client.post(signed.body)
        let took = Date().timeIntervalSince(started)
        XCTAssertEqual(answer?.text, "stored \(signed.uuid)", "\(what): \(running.server.log.suffix(2000))", file: file, line: line)
        XCTAssertLessThan(took, 2, "\(what): answered in \(took) s", file: file, line: line)
    }

    /// SIGTERM with the attackers still connected: serve exits 0 within 10 s.
    func assertStopsQuickly(_ running: Running, _ what: String, file: StaticString = #filePath, line: UInt = #line) {
        let started = Date()
        running.server.signal(SIGTERM)
        XCTAssertEqual(running.server.waitForExit(timeout: 30), 0, "\(what): \(running.server.log.suffix(2000))", file: file, line: line)
        XCTAssertLessThan(Date().timeIntervalSince(started), 10, "\(what): exited \(Date().timeIntervalSince(started)) s after SIGTERM",
                          file: file, line: line)
    }

    /// More connections than serve holds, each saying nothing: the one idle longest makes
    /// room for the legitimate one, which no worker waits behind.
    func testConnectionsThatSayNothingStarveNoOne() throws {
        for (index, transport) in [Transport.unix, .tcp].enumerated() {
            let running = try start(transport)
            for _ in 0..<300 { attackers.append(try running.connect()) }
            usleep(200_000)
            try assertAnsweredQuickly(running, instance: 882_100 + index, "past 300 idle connections on \(transport)")
            assertStopsQuickly(running, "idle connections on \(transport)")
            attackers.removeAll()
        }
    }

    /// 500 connections each trickling a request a byte at a time: each costs a descriptor,
    /// not a worker; the legitimate request is answered at once.
    func testASlowlorisStarvesNoOne() throws {
        let begin = FastCGIRecord.beginRequest(requestId: 1, keepConnection: true).encoded()
        for (index, transport) in [Transport.unix, .tcp].enumerated() {
            let running = try start(transport)
            for _ in 0..<500 {
                let c = try running.connect()
                XCTAssertTrue(c.send([begin[0]]))
                attackers.append(c)
            }
            usleep(500_000)
            for (i, c) in attackers.enumerated() { _ = c.send([begin[1 + i % 2]]) }
            try assertAnsweredQuickly(running, instance: 882_200 + index, "during a slowloris of 500 on \(transport)")
            assertStopsQuickly(running, "a slowloris on \(transport)")
            attackers.removeAll()
        }
    }

    /// Clients that ask FCGI_GET_VALUES again and again and never read the answers: the
    /// loop never waits on them, and a flood past the rate closes them.
    func testClientsThatDoNotReadTheirAnswersStarveNoOne() throws {
        let ask = FastCGIRecord(.getValues, requestId: 0,
                                content: NameValuePairs.encode([("FCGI_MAX_CONNS", ""), ("FCGI_MAX_REQS", ""), ("FCGI_MPXS_CONNS", "")]))
            .encoded()
        let flood = Array([[UInt8]](repeating: ask, count: 2_000).joined())
        for (index, transport) in [Transport.unix, .tcp].enumerated() {
            let running = try start(transport)
            var closed = 0
            for _ in 0..<32 {
                let c = try running.connect()
                var nonblocking = fcntl(c.fd, F_GETFL)
                nonblocking |= O_NONBLOCK
                _ = fcntl(c.fd, F_SETFL, nonblocking)
                _ = flood.withUnsafeBytes { send(c.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                attackers.append(c)
            }
            try assertAnsweredQuickly(running, instance: 882_300 + index, "beside 32 clients that read nothing on \(transport)")
            // A client that asks a few times, within the rate, and never reads: kept, harmless.
            let polite = try running.connect()
            XCTAssertTrue(polite.send(Array([[UInt8]](repeating: ask, count: 3).joined())))
            attackers.append(polite)
            let deadline = Date().addingTimeInterval(10)
            while Date() < deadline && !running.server.log.contains("faster than a web server does") { usleep(50_000) }
            XCTAssertTrue(running.server.log.contains("faster than a web server does"), running.server.log.suffix(2000).description)
            for c in attackers.prefix(32) {
                _ = fcntl(c.fd, F_SETFL, fcntl(c.fd, F_GETFL) & ~O_NONBLOCK)
                var timeout = timeval(tv_sec: 5, tv_usec: 0)
                setsockopt(c.fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
                var bytes = [UInt8](repeating: 0, count: 1 << 16)
                var n = 0
                repeat { n = read(c.fd, &bytes, bytes.count) } while n > 0
                if n == 0 || errno == ECONNRESET { closed += 1 }
            }
            XCTAssertEqual(closed, 32, "each flooding client was closed")
            assertStopsQuickly(running, "clients that read nothing on \(transport)")
            attackers.removeAll()
        }
    }
}
