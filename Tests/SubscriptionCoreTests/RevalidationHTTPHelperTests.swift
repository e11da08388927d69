import Foundation
import XCTest
import FakeApple
import SubdeskTestKit
@testable import SubscriptionCore

/// HTTP through the `subdesk-http` helper process: concurrent requests over its one
/// socket, timeouts, a helper that dies, and one that cannot be found. Each test has a
/// helper of its own, so killing it touches no other test.
final class RevalidationHTTPHelperTests: XCTestCase {
    var server: FakeAppleServer!
    var helper: HTTPHelper!

    override func setUpWithError() throws {
        server = try FakeAppleServer()
        helper = HTTPHelper()
    }

    override func tearDown() {
        server.stop()
        helper = nil
    }

    func client(timeout: TimeInterval = 5, maxAttempts: Int = 1, helper: HTTPHelper? = nil) -> HTTPClient {
        HTTPClient(policy: HTTPPolicy(timeout: timeout, maxAttempts: maxAttempts, initialBackoff: 0.01, maxBackoff: 0.01, jitter: 0),
                   maxConnectionsPerHost: 8, helper: helper ?? self.helper)
    }

    func request(_ method: String, _ path: String, headers: [String: String] = [:], body: Data? = nil) -> HTTPRequest {
        HTTPRequest(method: method, url: server.baseURL.appendingPathComponent(path), headers: headers, body: body)
    }

    /// Sends each request on a thread of its own, all at once; the results in the same order.
    func sendConcurrently(_ client: HTTPClient, _ requests: [HTTPRequest]) -> [Result<HTTPResponse, Error>] {
        let results = ResultSlots(count: requests.count)
        let finished = DispatchGroup()
        for (i, request) in requests.enumerated() {
            finished.enter()
            Thread {
                results.set(i, Result { try client.send(request) })
                finished.leave()
            }.start()
        }
        finished.wait()
        return results.all
    }

    /// Results filled in from several threads.
    final class ResultSlots: @unchecked Sendable {
        private let lock = NSLock()
        private var slots: [Result<HTTPResponse, Error>?]

        init(count: Int) { slots = Array(repeating: nil, count: count) }

        func set(_ index: Int, _ result: Result<HTTPResponse, Error>) {
            lock.lock()
            slots[index] = result
            lock.unlock()
        }

        var all: [Result<HTTPResponse, Error>] {
            lock.lock()
            defer { lock.unlock() }
            return slots.map { $0! }
        }
    }

    /// A server that keeps each connection for one answer only and closes it when asked a
    /// second time, without a word: the helper, which kept the connection, sends the request
    /// again on a new one, once, and the caller never sees the closed one.
    func testAKeptConnectionTheServerClosedIsReplacedAndTheRequestSentAgainOnce() throws {
        let (listener, port) = try LoopbackSocket.bound()
        XCTAssertEqual(listen(listener, 8), 0)
        final class Count: @unchecked Sendable { var connections = 0 }
        let count = Count()
        Thread {
            while true {
                let fd = accept(listener, nil, nil)
                guard fd >= 0 else { return }
                count.connections += 1
                let number = count.connections
                Thread {
                    defer { close(fd) }
                    var asked = 0
                    var buffer = [UInt8](repeating: 0, count: 4096)
                    var pending: [UInt8] = []
                    while true {
                        let n = read(fd, &buffer, buffer.count)
                        guard n > 0 else { return }
                        pending += buffer[0..<n]
                        while let end = pending.firstRange(of: Array("\r\n\r\n".utf8)) {
                            pending.removeSubrange(..<end.upperBound)
                            asked += 1
                            // Asked again on a kept connection: closed, unanswered.
                            if asked > 1 { return }
                            let body = "connection \(number)"
                            let answer = "HTTP/1.1 200 OK\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
                            _ = answer.withCString { write(fd, $0, strlen($0)) }
                        }
                    }
                }.start()
            }
        }.start()
        defer { shutdown(listener, Int32(SHUT_RDWR)); close(listener) }
        let http = client()
        let url = URL(string: "http://127.0.0.1:\(port)/ask")!
        XCTAssertEqual(String(decoding: try http.send(HTTPRequest(method: "GET", url: url)).body, as: UTF8.self), "connection 1")
        XCTAssertEqual(String(decoding: try http.send(HTTPRequest(method: "GET", url: url)).body, as: UTF8.self), "connection 2",
                       "sent again on a new connection")
        XCTAssertEqual(String(decoding: try http.send(HTTPRequest(method: "GET", url: url)).body, as: UTF8.self), "connection 3")
    }

    func testConcurrentRequestsAreEachAnsweredWithTheirOwnBytes() throws {
        let gauge = RevalidationInFlightGauge()
        server.route("POST", "/echo") { request in
            gauge.enter()
            Thread.sleep(forTimeInterval: 1)
            gauge.leave()
            return .init(status: 200, headers: ["X-Echo-Id": request.headers["x-request-id"] ?? "none",
                                                "Content-Type": "application/octet-stream"], body: request.body)
        }
        let bodies = (0..<8).map { i in Data((0..<(i * 9_000 + 1)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ i) }) }
        let requests = bodies.enumerated().map { i, body in
            request("POST", "/echo", headers: ["X-Request-Id": "r\(i)", "Content-Type": "application/octet-stream"], body: body)
        }
        let results = sendConcurrently(client(), requests)
        XCTAssertEqual(gauge.maximum, 8, "the eight requests were not all in flight at once")
        for (i, result) in results.enumerated() {
            let response = try result.get()
            XCTAssertEqual(response.status, 200)
            XCTAssertEqual(response.body, bodies[i], "request \(i) got another's body or a damaged one")
            XCTAssertEqual(response.header("X-ECHO-ID"), "r\(i)")
            XCTAssertEqual(response.header("x-echo-id"), "r\(i)")
            XCTAssertEqual(response.header("Content-Type"), "application/octet-stream")
        }
        XCTAssertEqual(server.requests("POST", "/echo").count, 8)
    }

    func testARequestPastItsTimeoutTimesOutAndTheNextStillWorks() throws {
        server.route("GET", "/slow", .init(status: 200, body: Data("late".utf8), delay: 3))
        server.route("GET", "/fast", .init(status: 200, body: Data("on time".utf8)))
        let http = client(timeout: 0.5)
        let started = Date()
        XCTAssertThrowsError(try http.send(request("GET", "/slow"))) { error in
            guard case .timedOut(_, let seconds, let attempts)? = error as? RevalidationError else {
                return XCTFail("not a timeout: \(error)")
            }
            XCTAssertEqual(seconds, 0.5)
            XCTAssertEqual(attempts, 1)
        }
        let elapsed = Date().timeIntervalSince(started)
        XCTAssertGreaterThanOrEqual(elapsed, 0.5)
        XCTAssertLessThan(elapsed, 1.5, "the timeout did not cut the wait short")
        let pid = helper.pid
        let response = try http.send(request("GET", "/fast"))
        XCTAssertEqual(String(decoding: response.body, as: UTF8.self), "on time")
        XCTAssertEqual(helper.pid, pid, "a timeout does not cost the helper")
    }

    func testAKilledHelperFailsTheWaitingRequestsAndTheNextStartsAFreshOne() throws {
        server.route("GET", "/slow", .init(status: 200, delay: 8))
        server.route("GET", "/fast", .init(status: 200, body: Data("fresh".utf8)))
        let http = client(timeout: 10)
        _ = try http.send(request("GET", "/fast"))
        let killed = try XCTUnwrap(helper.pid)
        // Kills the helper once all three requests are waiting on the server.
        let server = self.server!
        Thread {
            let arrived = Date(timeIntervalSinceNow: 5)
            while server.requests("GET", "/slow").count < 3 && Date() < arrived { Thread.sleep(forTimeInterval: 0.02) }
            kill(killed, SIGKILL)
        }.start()
        let secret = "Bearer secret-token-value"
        let started = Date()
        let results = sendConcurrently(http, (0..<3).map { _ in request("GET", "/slow", headers: ["Authorization": secret]) })
        XCTAssertLessThan(Date().timeIntervalSince(started), 6, "the waiting requests were not failed when the helper died")
        XCTAssertEqual(server.requests("GET", "/slow").count, 3)
        for result in results {
            XCTAssertThrowsError(try result.get()) { error in
                let text = "\(error)"
                XCTAssertTrue(text.contains("network error: the HTTP helper (pid \(killed)) exited (killed by signal 9)"), text)
                XCTAssertFalse(text.contains("secret"), "an error showed a header: \(text)")
            }
        }
        var status: Int32 = 0
        XCTAssertEqual(waitpid(killed, &status, WNOHANG), -1, "the dead helper was not reaped")
        XCTAssertEqual(errno, ECHILD)

        let response = try http.send(request("GET", "/fast"))
        XCTAssertEqual(String(decoding: response.body, as: UTF8.self), "fresh")
        XCTAssertNotEqual(helper.pid, killed)
    }

    func testAHelperPathThatIsWrongIsNamed() throws {
        let missing = NSTemporaryDirectory() + "no-such-dir-\(UUID().uuidString)/subdesk-http"
        let http = client(helper: HTTPHelper(environment: { ["SUBDESK_HTTP_HELPER": missing, "PATH": "/usr/bin"] }))
        XCTAssertThrowsError(try http.send(request("GET", "/fast"))) { error in
            guard case .network(_, let reason, let attempts)? = error as? RevalidationError else {
                return XCTFail("not a network error: \(error)")
            }
            XCTAssertEqual(attempts, 0, "no attempt can succeed without the helper")
            XCTAssertTrue(reason.contains("$SUBDESK_HTTP_HELPER is \(missing)"), reason)
            XCTAssertTrue(reason.contains("swift build"), reason)
        }
        XCTAssertTrue(server.requests.isEmpty)
    }

    func testTheHelperIsFoundBesideTheRunningProgramAndEndsWithItsInput() throws {
        let found = try HTTPHelper.locate(in: ["PATH": ""])
        let running = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        XCTAssertEqual(found, (running as NSString).deletingLastPathComponent + "/subdesk-http")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: found)
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let ended = Date(timeIntervalSinceNow: 5)
        while process.isRunning && Date() < ended { Thread.sleep(forTimeInterval: 0.02) }
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        XCTAssertEqual(process.terminationReason, .exit)
        XCTAssertEqual(process.terminationStatus, 0, "the helper did not end quietly when its input did")
    }

    /// A helper that has made its requests is replaced: the next request starts a fresh one,
    /// the old one ends once its last answer is in, and no request is lost in the hand-over,
    /// one at a time or forty at once.
    func testAHelperIsReplacedAfterItsRequestsAndNoRequestIsLostInTheHandOver() throws {
        let helper = HTTPHelper(environment: { ProcessInfo.processInfo.environment }, requestsPerProcess: 5)
        let http = client(helper: helper)
        server.route("GET", "/ok", .json(["ok": true]))
        var pids: [pid_t] = []
        for _ in 0..<12 {
            XCTAssertEqual(try http.send(request("GET", "/ok")).status, 200)
            let pid = try XCTUnwrap(helper.pid)
            if pids.last != pid { pids.append(pid) }
        }
        XCTAssertEqual(pids.count, 3, "12 requests, 5 a helper")
        for result in sendConcurrently(http, Array(repeating: request("GET", "/ok"), count: 40)) {
            XCTAssertEqual(try result.get().status, 200)
        }
        if let last = helper.pid, pids.last != last { pids.append(last) }
        XCTAssertGreaterThanOrEqual(pids.count, 4)
        // Every helper but the running one has exited and been reaped.
        let deadline = Date().addingTimeInterval(20)
        let retired = pids.filter { $0 != helper.pid }
        while Date() < deadline && retired.contains(where: { kill($0, 0) == 0 }) { usleep(20_000) }
        XCTAssertEqual(retired.filter { kill($0, 0) == 0 }, [], "a retired helper is still there")
    }
}

/// An answer far larger than any Apple sends is refused while it streams.
final class RevalidationResponseLimitTests: XCTestCase {
    /// The helper's peak resident memory, from /proc (kB).
    func peakMemoryKB(_ pid: pid_t) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = try XCTUnwrap(status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") })
        return try XCTUnwrap(Int(line.split(separator: " ").dropFirst().first ?? ""))
    }

    /// 256 MB, with and without a Content-Length: each is refused at the limit, the error
    /// names the limit and the URL, the request is made once although four attempts are
    /// allowed, reading stops near the limit, and the helper never holds the body (before,
    /// it read all of it, four times, to 1 GB of memory).
    func testAHugeAnswerIsRefusedAtTheLimitWhileItStreamsAndIsNotAskedAgain() throws {
        let helper = HTTPHelper()
        let http = HTTPClient(policy: HTTPPolicy(timeout: 30, maxAttempts: 4, initialBackoff: 0.01, maxBackoff: 0.01, jitter: 0),
                              helper: helper)
        let huge = 256 << 20
        var peak = 0
        for announced in [true, false] {
            let server = try FakeAppleServer()
            defer { server.stop() }
            server.route("POST", "/inApps/v1/notifications/history", .huge(bytes: huge, announcingLength: announced))
            let url = server.baseURL.appendingPathComponent("inApps/v1/notifications/history")
            XCTAssertThrowsError(try http.send(HTTPRequest(method: "POST", url: url, body: Data("{}".utf8)))) { error in
                guard case .responseTooLarge(let request, let limit, _)? = error as? RevalidationError else {
                    return XCTFail("not a size refusal: \(error)")
                }
                XCTAssertEqual(request, "POST \(url.absoluteString)")
                XCTAssertEqual(limit, HTTPClient.maxResponseBytes)
                XCTAssertTrue("\(error)".contains("larger than the \(HTTPClient.maxResponseBytes)-byte limit"), "\(error)")
                XCTAssertTrue("\(error)".contains("not retried"), "\(error)")
                XCTAssertFalse((error as? RevalidationError)?.isTransient ?? true, "a sweep would ask again")
            }
            XCTAssertEqual(server.requests("POST", "/inApps/v1/notifications/history").count, 1, "a size refusal is not retried")
            let pid = try XCTUnwrap(helper.pid)
            peak = max(peak, (try? peakMemoryKB(pid)) ?? 0)
            // The connection is closed soon after (by the cancel, or by the helper exiting
            // when the cancel cannot land): the sender is stopped well short of its body.
            server.stop()
            print("Content-Length sent: \(announced); the server sent \(server.fillerBytesSent >> 20) MB of \(huge >> 20) MB")
            XCTAssertLessThan(server.fillerBytesSent, huge / 4, "the helper went on reading far past the limit")
        }
        print("subdesk-http peak resident memory during two 256 MB answers: \(peak / 1024) MB")
        XCTAssertGreaterThan(peak, 0)
        XCTAssertLessThan(peak, 96 * 1024, "the helper held far more than the limit")
        // What is within the limit is answered, by the same helper or a fresh one.
        let server = try FakeAppleServer()
        defer { server.stop() }
        server.route("GET", "/small", .json(["ok": true]))
        XCTAssertEqual(try http.send(HTTPRequest(method: "GET", url: server.baseURL.appendingPathComponent("small"))).status, 200)
    }
}
