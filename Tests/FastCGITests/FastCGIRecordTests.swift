import XCTest
import FastCGI

final class FastCGIRecordTests: XCTestCase {
    func begin(_ id: UInt16, role: FastCGIRecord.Role = .responder, keep: Bool = true) -> FastCGIRecord {
        FastCGIRecord.beginRequest(requestId: id, role: role, keepConnection: keep)
    }

    /// Records written by `encoded` come back whole from the parser, however the bytes are cut.
    func testRecordsSurviveAnyCutOfTheByteStream() throws {
        let records = [begin(1), FastCGIRecord(.params, requestId: 1, content: Array("abc".utf8)),
                       FastCGIRecord(.stdin, requestId: 1, content: [UInt8](repeating: 7, count: 65_535)),
                       FastCGIRecord(.stdin, requestId: 1)]
        let bytes = records.flatMap { $0.encoded() }
        for cut in [1, 3, 8, 9, 1000, bytes.count] {
            var parser = RecordParser()
            var seen: [FastCGIRecord] = []
            var i = 0
            while i < bytes.count {
                parser.append(bytes[i..<min(bytes.count, i + cut)])
                i += cut
                while let r = try parser.next() { seen.append(r) }
            }
            XCTAssertEqual(seen, records, "cut every \(cut) bytes")
            XCTAssertEqual(parser.pendingCount, 0)
        }
    }

    func testPaddingKeepsRecordsAlignedToEightBytes() {
        XCTAssertEqual(FastCGIRecord(.stdout, requestId: 1, content: [1, 2, 3]).encoded().count, 16)
        XCTAssertEqual(FastCGIRecord(.stdout, requestId: 1, content: []).encoded().count, 8)
        let long = FastCGIRecord.stream(.stdout, requestId: 2, [UInt8](repeating: 1, count: 70_000), end: true)
        var parser = RecordParser()
        parser.append(long)
        var lengths: [Int] = []
        while let r = try? parser.next() { lengths.append(r.content.count) }
        XCTAssertEqual(lengths, [65_535, 70_000 - 65_535, 0])
    }

    func testAnotherVersionIsAProtocolError() {
        var parser = RecordParser()
        parser.append([2, 1, 0, 1, 0, 0, 0, 0])
        XCTAssertThrowsError(try parser.next()) { XCTAssertTrue("\($0)".contains("version 2"), "\($0)") }
    }

    func testNameValuePairsRoundTripShortAndLongLengths() throws {
        let pairs = [("REQUEST_METHOD", "POST"), ("LONG", String(repeating: "x", count: 300)), (String(repeating: "n", count: 200), "")]
        let decoded = try NameValuePairs.decode(NameValuePairs.encode(pairs))
        XCTAssertEqual(decoded.map(\.name), pairs.map(\.0))
        XCTAssertEqual(decoded.map(\.value), pairs.map(\.1))
        // A length past the end of the content is refused, not read beyond.
        XCTAssertThrowsError(try NameValuePairs.decode([0x80, 0, 0, 10, 1, 65]))
        XCTAssertThrowsError(try NameValuePairs.decode([0xff, 0xff, 0xff, 0xff, 0]))
        XCTAssertThrowsError(try NameValuePairs.decode([0x85, 0]))
    }

    /// A whole request: begin, parameters over two records, a body over two, the end.
    func testARequestBecomesParametersAndBody() throws {
        var state = FastCGIConnectionState()
        let params = NameValuePairs.encode([("REQUEST_METHOD", "POST"), ("CONTENT_LENGTH", "5")])
        var events: [FastCGIConnectionState.Event] = []
        for record in [begin(7, keep: true), FastCGIRecord(.params, requestId: 7, content: Array(params.prefix(4))),
                       FastCGIRecord(.params, requestId: 7, content: Array(params.dropFirst(4))), FastCGIRecord(.params, requestId: 7),
                       FastCGIRecord(.stdin, requestId: 7, content: Array("he".utf8)),
                       FastCGIRecord(.stdin, requestId: 7, content: Array("llo".utf8)), FastCGIRecord(.stdin, requestId: 7)] {
            events += try state.take(record)
        }
        XCTAssertEqual(events, [.begin(requestId: 7, keepConnection: true), .params(["REQUEST_METHOD": "POST", "CONTENT_LENGTH": "5"]),
                                .body(Array("he".utf8)), .body(Array("llo".utf8)), .bodyEnd])
        XCTAssertTrue(state.keepConnection)
        XCTAssertTrue(state.isBusy)
        state.finished()
        XCTAssertFalse(state.isBusy)
        XCTAssertEqual(try state.take(begin(8, keep: false)), [.begin(requestId: 8, keepConnection: false)])
    }

    /// FCGI_MPXS_CONNS is 0: a second request on a busy connection is refused with
    /// FCGI_CANT_MPX_CONN, and the open one goes on.
    func testASecondRequestOnTheConnectionIsRefusedAndTheFirstGoesOn() throws {
        var state = FastCGIConnectionState()
        _ = try state.take(begin(1))
        let refusal = try state.take(begin(2))
        XCTAssertEqual(refusal, [.send(FastCGIRecord.endRequest(requestId: 2, appStatus: 0, protocolStatus: .cantMultiplexConnections).encoded())])
        // Records of the refused request are ignored, as the specification asks.
        XCTAssertEqual(try state.take(FastCGIRecord(.params, requestId: 2, content: [1, 1, 65, 66])), [])
        XCTAssertEqual(try state.take(FastCGIRecord(.params, requestId: 1)), [.params([:])])
        XCTAssertThrowsError(try state.take(begin(1)), "the open request begun again")
    }

    func testGetValuesIsAnsweredWithoutMultiplexing() throws {
        var state = FastCGIConnectionState(limits: .init(maxConnections: 12))
        let ask = FastCGIRecord(.getValues, requestId: 0,
                                content: NameValuePairs.encode([("FCGI_MPXS_CONNS", ""), ("FCGI_MAX_CONNS", ""), ("OTHER", "")]))
        guard case .send(let bytes) = try XCTUnwrap(try state.take(ask).first) else { return XCTFail("no answer") }
        var parser = RecordParser()
        parser.append(bytes)
        let answer = try XCTUnwrap(try parser.next())
        XCTAssertEqual(answer.kind, .getValuesResult)
        let pairs = try NameValuePairs.decode(answer.content)
        XCTAssertEqual(pairs.map(\.name), ["FCGI_MPXS_CONNS", "FCGI_MAX_CONNS"])
        XCTAssertEqual(pairs.map(\.value), ["0", "12"])
        // Another management type is answered FCGI_UNKNOWN_TYPE, naming it.
        XCTAssertEqual(try state.take(FastCGIRecord(type: 42, requestId: 0, content: [])),
                       [.send(FastCGIRecord(.unknownType, requestId: 0, content: [42, 0, 0, 0, 0, 0, 0, 0]).encoded())])
    }

    /// The application's own values are answered when asked for, read at the time of the
    /// question; the standard ones cannot be overridden by them.
    func testGetValuesAnswersTheApplicationsOwnValues() throws {
        let asked = ManagedCounter()
        var state = FastCGIConnectionState(limits: .init(maxConnections: 3)) {
            ["APP_COUNT": String(asked.next()), "FCGI_MAX_CONNS": "999"]
        }
        func answer(_ names: [String]) throws -> [String: String] {
            let ask = FastCGIRecord(.getValues, requestId: 0, content: NameValuePairs.encode(names.map { ($0, "") }))
            guard case .send(let bytes) = try XCTUnwrap(try state.take(ask).first) else { throw NSError(domain: "no answer", code: 1) }
            var parser = RecordParser()
            parser.append(bytes)
            var values: [String: String] = [:]
            for pair in try NameValuePairs.decode(try XCTUnwrap(try parser.next()).content) { values[pair.name] = pair.value }
            return values
        }
        XCTAssertEqual(try answer(["FCGI_MAX_CONNS"]), ["FCGI_MAX_CONNS": "3"])
        XCTAssertEqual(asked.count, 0, "standard names alone do not read the application's values")
        XCTAssertEqual(try answer(["APP_COUNT", "FCGI_MAX_CONNS"]), ["APP_COUNT": "1", "FCGI_MAX_CONNS": "3"])
        XCTAssertEqual(try answer(["APP_COUNT"]), ["APP_COUNT": "2"])
    }

    func testOtherRolesAreRefusedAndMisorderedStreamsAreProtocolErrors() throws {
        var state = FastCGIConnectionState()
        XCTAssertEqual(try state.take(begin(3, role: .authorizer)),
                       [.send(FastCGIRecord.endRequest(requestId: 3, appStatus: 0, protocolStatus: .unknownRole).encoded())])
        XCTAssertFalse(state.isBusy)
        _ = try state.take(begin(4))
        XCTAssertThrowsError(try state.take(FastCGIRecord(.stdin, requestId: 4, content: [1])), "body before the parameters ended")
        var other = FastCGIConnectionState()
        XCTAssertThrowsError(try other.take(FastCGIRecord(.beginRequest, requestId: 1, content: [0, 1])), "short begin")
        XCTAssertThrowsError(try other.take(FastCGIRecord(.stdout, requestId: 1, content: [])), "a responder never receives stdout")
    }

    func testParametersAreBounded() throws {
        var state = FastCGIConnectionState(limits: .init(maxParamsBytes: 100))
        _ = try state.take(begin(1))
        _ = try state.take(FastCGIRecord(.params, requestId: 1, content: [UInt8](repeating: 1, count: 90)))
        XCTAssertThrowsError(try state.take(FastCGIRecord(.params, requestId: 1, content: [UInt8](repeating: 1, count: 20))))
    }

    func testAbortEndsTheOpenRequest() throws {
        var state = FastCGIConnectionState()
        _ = try state.take(begin(5))
        XCTAssertEqual(try state.take(FastCGIRecord(.abortRequest, requestId: 5)), [.abort])
        XCTAssertEqual(try state.take(FastCGIRecord(.abortRequest, requestId: 9)), [])
    }
}

/// Counts the calls of a value closure.
final class ManagedCounter: @unchecked Sendable {
    private let lock = NSLock()
    private(set) var count = 0
    func next() -> Int {
        lock.lock()
        defer { lock.unlock() }
        count += 1
        return count
    }
}
