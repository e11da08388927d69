import XCTest
@testable import FastCGI

/// The deadlines and bounds of one connection, in time given by the test: nothing here
/// waits on a clock.
final class FastCGIConnectionGuardTests: XCTestCase {
    let limits = FastCGIConnectionGuard.Limits(requestSeconds: 10, idleSeconds: 15, writeSeconds: 10, replyBurst: 4,
                                               repliesPerSecond: 2, maxOutputBytes: 1024)

    func request(body: [UInt8] = Array("{}".utf8), keep: Bool = true) -> [UInt8] {
        var out = FastCGIRecord.beginRequest(requestId: 1, keepConnection: keep).encoded()
        out += FastCGIRecord.stream(.params, requestId: 1, NameValuePairs.encode([("CONTENT_LENGTH", "\(body.count)")]), end: true)
        out += FastCGIRecord(.stdin, requestId: 1, content: body).encoded()
        out += FastCGIRecord(.stdin, requestId: 1).encoded()
        return out
    }

    let ask = FastCGIRecord(.getValues, requestId: 0, content: NameValuePairs.encode([("FCGI_MPXS_CONNS", "")])).encoded()
    var end: [UInt8] { FastCGIRecord.endRequest(requestId: 1, appStatus: 0, protocolStatus: .requestComplete).encoded() }

    func testAnIdleConnectionIsClosedAtItsDeadlineAndNotBefore() {
        let c = FastCGIConnectionGuard(limits: limits, now: 100)
        XCTAssertTrue(c.isIdle)
        XCTAssertEqual(c.nextDeadline, 115)
        XCTAssertNil(c.expired(now: 115))
        XCTAssertEqual(c.expired(now: 115.01), .idle(seconds: 15))
    }

    func testARequestTrickledPastItsDeadlineIsClosedThoughEachByteCameInTime() throws {
        var c = FastCGIConnectionGuard(limits: limits, now: 0)
        let bytes = request()
        for (i, byte) in bytes.prefix(12).enumerated() {
            _ = try c.received([byte], now: Double(i))
            if Double(i) <= 10 { XCTAssertNil(c.expired(now: Double(i))) }
        }
        XCTAssertEqual(c.requestBegan, 0, "the first byte starts the clock")
        XCTAssertEqual(c.expired(now: 11), .requestTooSlow(seconds: 10))
        XCTAssertFalse(c.isIdle, "a request begun is never the idle one to close first")
    }

    func testAWholeRequestIsAnsweredThenTheNextTaken() throws {
        var c = FastCGIConnectionGuard(limits: limits, now: 0)
        let events = try c.received(request() + request(), now: 1)
        XCTAssertEqual(events.last, .bodyEnd)
        XCTAssertEqual(c.phase, .answering)
        XCTAssertFalse(c.wantsRead, "nothing is read while a request is answered")
        XCTAssertNil(c.expired(now: 1_000), "answering has no deadline of the client's")
        try c.answered(end, now: 1_000)
        XCTAssertEqual(Array(c.pendingOutput), end)
        XCTAssertEqual(try c.resume(now: 1_000).last, .bodyEnd, "the request read behind the first")
        c.wrote(end.count, now: 1_000)
        XCTAssertFalse(c.wantsWrite)
    }

    func testAnAnswerNotReadIsClosedAtTheWriteDeadline() throws {
        var c = FastCGIConnectionGuard(limits: limits, now: 0)
        _ = try c.received(request(), now: 0)
        try c.answered(end, now: 1)
        c.wrote(3, now: 2)
        XCTAssertEqual(c.nextDeadline, 12, "ten seconds from the last bytes that moved")
        XCTAssertNil(c.expired(now: 12))
        XCTAssertEqual(c.expired(now: 12.5), .notReading(seconds: 10))
    }

    func testManagementAnswersPastTheirRateCloseTheConnection() throws {
        var c = FastCGIConnectionGuard(limits: limits, now: 0)
        for _ in 0..<4 { _ = try c.received(ask, now: 0) }
        XCTAssertThrowsError(try c.received(ask, now: 0)) { XCTAssertEqual($0 as? FastCGIConnectionGuard.Close, .tooManyReplies) }
        var patient = FastCGIConnectionGuard(limits: limits, now: 0)
        for i in 0..<40 {
            _ = try patient.received(ask, now: Double(i) * 0.5)
            XCTAssertTrue(patient.wantsWrite, "two a second are answered, as long as they come")
            patient.wrote(patient.pendingOutput.count, now: Double(i) * 0.5)
        }
    }

    func testBytesOwedPastTheLimitCloseTheConnection() {
        var c = FastCGIConnectionGuard(limits: .init(replyBurst: 1_000, repliesPerSecond: 0, maxOutputBytes: 100), now: 0)
        XCTAssertThrowsError(try { for _ in 0..<20 { _ = try c.received(self.ask, now: 0) } }()) { error in
            guard case .outputTooLarge = error as? FastCGIConnectionGuard.Close else { return XCTFail("\(error)") }
        }
    }

    func testAConnectionAskedClosedFinishesOnceItsAnswerIsWrittenAndTakesNothingMore() throws {
        var c = FastCGIConnectionGuard(limits: limits, now: 0)
        _ = try c.received(request(keep: false), now: 0)
        try c.answered(end, now: 0)
        XCTAssertFalse(c.finished)
        c.wrote(end.count, now: 0)
        XCTAssertTrue(c.finished)
        XCTAssertEqual(try c.received(request(), now: 0), [], "nothing more is taken from it")
    }

    func testThePeerClosingIsSaidWithWhetherARequestWasOpen() throws {
        var c = FastCGIConnectionGuard(limits: limits, now: 0)
        XCTAssertThrowsError(try c.received([UInt8](), now: 0)) { XCTAssertEqual($0 as? FastCGIConnectionGuard.Close, .peerClosed(midRequest: false)) }
        _ = try c.received(request().prefix(5), now: 0)
        XCTAssertThrowsError(try c.received([UInt8](), now: 0)) { XCTAssertEqual($0 as? FastCGIConnectionGuard.Close, .peerClosed(midRequest: true)) }
        var junk = FastCGIConnectionGuard(limits: limits, now: 0)
        XCTAssertThrowsError(try junk.received(Array("GET / HTTP/1.1\r\n".utf8), now: 0)) { error in
            guard case .malformed = error as? FastCGIConnectionGuard.Close else { return XCTFail("\(error)") }
        }
    }
}
