import XCTest
@testable import HTTP1

/// HTTP/1.1 responses read from bytes as a server might send them: in any pieces, framed
/// each way RFC 9112 allows, and hostile (too large, malformed, cut short).
final class HTTP1ResponseReaderTests: XCTestCase {
    func read(_ text: String, limit: Int = 1 << 20, method: String = "GET", pieces: Int? = nil, end: Bool = false) throws -> HTTP1ResponseReader {
        try read(Array(text.utf8), limit: limit, method: method, pieces: pieces, end: end)
    }

    /// Fed whole, or `pieces` bytes at a time.
    func read(_ bytes: [UInt8], limit: Int = 1 << 20, method: String = "GET", pieces: Int? = nil, end: Bool = false) throws -> HTTP1ResponseReader {
        var reader = HTTP1ResponseReader(maxBodyBytes: limit, requestMethod: method)
        var index = 0
        let step = pieces ?? max(1, bytes.count)
        while index < bytes.count {
            try reader.feed(bytes[index..<min(bytes.count, index + step)])
            index += step
        }
        if end { try reader.end() }
        return reader
    }

    func failure(_ text: String, limit: Int = 1 << 20, end: Bool = false) -> HTTP1ResponseError? {
        do {
            _ = try read(text, limit: limit, end: end)
            return nil
        } catch {
            return error as? HTTP1ResponseError
        }
    }

    func testALengthFramedAnswerReadsTheSameInAnyPieces() throws {
        let text = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\nX-A: 1\r\nx-a: 2\r\n\r\n{\"ok\":true}"
        for size in [1, 2, 3, 7, 1_000] {
            let reader = try read(text, pieces: size)
            XCTAssertTrue(reader.isComplete, "pieces of \(size)")
            XCTAssertEqual(reader.head?.status, 200)
            XCTAssertEqual(String(decoding: reader.body, as: UTF8.self), "{\"ok\":true}")
            XCTAssertEqual(reader.head?.value("x-a"), "1, 2")
            XCTAssertEqual(reader.head?.joinedFields.map(\.name), ["content-type", "content-length", "x-a"])
            XCTAssertTrue(reader.connectionReusable)
        }
    }

    func testAChunkedAnswerWithExtensionsAndTrailersIsJoinedAtEverySplit() throws {
        let text = "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"
            + "5;name=value\r\nhello\r\n1\r\n \r\nA\r\n0123456789\r\n0\r\nExpires: never\r\n\r\n"
        let bytes = Array(text.utf8)
        for split in 1..<bytes.count {
            var reader = HTTP1ResponseReader(maxBodyBytes: 100)
            try reader.feed(bytes[..<split])
            XCTAssertFalse(reader.isComplete)
            try reader.feed(bytes[split...])
            XCTAssertTrue(reader.isComplete, "split at \(split)")
            XCTAssertEqual(String(decoding: reader.body, as: UTF8.self), "hello 0123456789", "split at \(split)")
        }
    }

    func testRandomBodiesInRandomChunksAndPiecesComeBackWhole() throws {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            let body = (0..<Int.random(in: 0...3_000, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            var wire = Array("HTTP/1.1 201 Created\r\ntransfer-encoding: chunked\r\n\r\n".utf8)
            var index = 0
            while index < body.count {
                let size = min(body.count - index, Int.random(in: 1...700, using: &generator))
                wire += Array(String(size, radix: 16, uppercase: Bool.random(using: &generator)).utf8) + [13, 10]
                wire += body[index..<index + size] + [13, 10]
                index += size
            }
            wire += Array("0\r\n\r\n".utf8)
            let reader = try read(wire, pieces: Int.random(in: 1...500, using: &generator))
            XCTAssertTrue(reader.isComplete)
            XCTAssertEqual(reader.body, body)
            XCTAssertEqual(reader.head?.status, 201)
        }
    }

    func testInterimAnswersArePassedOverAndASwitchIsRefused() throws {
        let reader = try read("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n")
        XCTAssertTrue(reader.isComplete)
        XCTAssertEqual(reader.head?.status, 204)
        XCTAssertEqual(reader.head?.value("link"), nil)
        XCTAssertEqual(failure("HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\n\r\n"), .malformed("it switched protocols (101)"))
    }

    func testAContentLengthOverTheLimitIsRefusedAtTheHeadBeforeAnyBody() {
        XCTAssertEqual(failure("HTTP/1.1 200 OK\r\nContent-Length: 104857600\r\n\r\n", limit: 65_536),
                       .tooLarge("its Content-Length is 104857600 bytes"))
        XCTAssertEqual(failure("HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999999\r\n\r\n"),
                       .malformed("its Content-Length is not one number"))
    }

    func testABodyThatGrowsPastTheLimitIsRefusedWhicheverItsFraming() {
        let chunks = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + String(repeating: "8\r\n12345678\r\n", count: 3)
        XCTAssertEqual(failure(chunks, limit: 20), .tooLarge("more than 20 bytes had arrived when reading stopped"))
        XCTAssertEqual(failure("HTTP/1.1 200 OK\r\n\r\n" + String(repeating: "x", count: 21), limit: 20),
                       .tooLarge("more than 20 bytes had arrived when reading stopped"))
        // A chunk that says it is larger than is left is refused at its size line.
        XCTAssertEqual(failure("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nfffffffffffffff\r\n", limit: 20),
                       .tooLarge("more than 20 bytes had arrived when reading stopped"))
    }

    func testAHeadThatNeverEndsIsRefusedAtItsBound() {
        let endless = "HTTP/1.1 200 OK\r\n" + String(repeating: "X-Filler: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n", count: 1_200)
        XCTAssertEqual(failure(endless), .malformed("its header is larger than 65536 bytes"))
    }

    func testAnAnswerFramedByTheConnectionEndsWithItAndOneCutShortIsTruncated() throws {
        var reader = try read("HTTP/1.0 200 OK\r\n\r\nall of it", end: true)
        XCTAssertTrue(reader.isComplete)
        XCTAssertEqual(String(decoding: reader.body, as: UTF8.self), "all of it")
        XCTAssertFalse(reader.connectionReusable)
        reader = try read("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhalf")
        XCTAssertThrowsError(try reader.end()) { XCTAssertEqual($0 as? HTTP1ResponseError, .truncated) }
        reader = try read("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nhalf\r\n")
        XCTAssertThrowsError(try reader.end()) { XCTAssertEqual($0 as? HTTP1ResponseError, .truncated) }
        reader = try read("HTTP/1.1 200")
        XCTAssertThrowsError(try reader.end()) { XCTAssertEqual($0 as? HTTP1ResponseError, .truncated) }
    }

    func testMalformedAnswersAreRefusedNamingWhatIsWrong() {
        let cases: [(String, String)] = [
            ("HTTP/1.1 20 OK\r\n\r\n", "its status line is not HTTP/1.x with a three-digit status (HTTP/1.1 20 OK)"),
            ("HTTP/2 200\r\n\r\n", "its status line is not HTTP/1.x with a three-digit status (HTTP/2 200)"),
            ("HTTP/1.1 2000 OK\r\n\r\n", "its status line is not HTTP/1.x with a three-digit status (HTTP/1.1 2000 OK)"),
            ("HTTP/1.1 099 Low\r\n\r\n", "its status 99 is not an HTTP status"),
            ("SSH-2.0-OpenSSH_9.2\r\n\r\n", "its status line is not HTTP/1.x with a three-digit status (SSH-2.0-OpenSSH_9.2)"),
            ("HTTP/1.1 200 OK\r\nX-A: 1\r\n folded\r\n\r\n", "a header field is folded over lines"),
            ("HTTP/1.1 200 OK\r\nno colon here\r\n\r\n", "a header line is not a field (no colon here)"),
            ("HTTP/1.1 200 OK\r\nBad Name: 1\r\n\r\n", "a header line is not a field (Bad Name: 1)"),
            ("HTTP/1.1 200 OK\r\nX-A: a\u{1}b\r\n\r\n", "a header field's value holds a control character"),
            ("HTTP/1.1 200 OK\r\nContent-Length: 5, 6\r\n\r\n", "its Content-Length is not one number"),
            ("HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", "its Content-Length is not one number"),
            ("HTTP/1.1 200 OK\r\nContent-Length: 0x10\r\n\r\n", "its Content-Length is not one number"),
            ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "a chunk's size is not a hex number"),
            ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n-1\r\n", "a chunk's size is not a hex number"),
            ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabcd\r\n", "a chunk does not end where its size says"),
        ]
        for (text, reason) in cases {
            XCTAssertEqual(failure(text), .malformed(reason), text)
        }
    }

    func testAnswersWithNoBodyEndAtTheirHead() throws {
        for (text, method) in [("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n", "HEAD"), ("HTTP/1.1 304 Not Modified\r\nContent-Length: 100\r\n\r\n", "GET"),
                               ("HTTP/1.1 204 No Content\r\n\r\n", "POST")] {
            let reader = try read(text, method: method)
            XCTAssertTrue(reader.isComplete, text)
            XCTAssertEqual(reader.body, [])
        }
        // A Content-Length repeated with one value is that value.
        XCTAssertEqual(try read("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nok").body, Array("ok".utf8))
    }

    func testAConnectionIsKeptOnlyWhenTheAnswerEndedCleanlyAndSaysNothingAgainstIt() throws {
        XCTAssertTrue(try read("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok").connectionReusable)
        XCTAssertTrue(try read("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n").connectionReusable)
        XCTAssertFalse(try read("HTTP/1.1 200 OK\r\nConnection: keep-alive, Close\r\nContent-Length: 2\r\n\r\nok").connectionReusable)
        XCTAssertFalse(try read("HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok").connectionReusable)
        XCTAssertFalse(try read("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n").connectionReusable)
        let surplus = try read("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 200 OK\r\n")
        XCTAssertTrue(surplus.isComplete)
        XCTAssertEqual(surplus.body, Array("ok".utf8))
        XCTAssertFalse(surplus.connectionReusable)
        XCTAssertFalse(try read("HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nok").connectionReusable)
    }

    func testLineFeedsAloneEndLinesAsCarriageReturnsWithThemDo() throws {
        let reader = try read("HTTP/1.1 200 OK\nContent-Length: 2\n\nok")
        XCTAssertEqual(reader.body, Array("ok".utf8))
        XCTAssertTrue(reader.isComplete)
    }
}

final class HTTP1RequestTests: XCTestCase {
    func testARequestCarriesItsFieldsWithTheFramingItsOwn() throws {
        let bytes = try HTTP1Request.encode(method: "POST", target: "/in/v1?x=1", host: "example.com:8443",
                                            fields: [("Content-Type", " application/json"), ("Host", "evil"), ("content-length", "99"),
                                                     ("Transfer-Encoding", "chunked"), ("Connection", "close"), ("Subdesk-Attempt", "2")],
                                            body: Array("{}".utf8))
        XCTAssertEqual(String(decoding: bytes, as: UTF8.self), "POST /in/v1?x=1 HTTP/1.1\r\nHost: example.com:8443\r\n"
                       + "Content-Type: application/json\r\nSubdesk-Attempt: 2\r\nContent-Length: 2\r\n\r\n{}")
        let empty = try HTTP1Request.encode(method: "PUT", target: "/", host: "h", fields: [], body: [])
        XCTAssertEqual(String(decoding: empty, as: UTF8.self), "PUT / HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n")
        let get = try HTTP1Request.encode(method: "GET", target: "/a", host: "h", fields: [], body: [])
        XCTAssertEqual(String(decoding: get, as: UTF8.self), "GET /a HTTP/1.1\r\nHost: h\r\n\r\n")
    }

    func testNothingThatCouldSplitIntoASecondRequestIsWritten() {
        let refusals: [(String, String, String, [(name: String, value: String)], String)] = [
            ("GET", "/a", "h", [("X-A", "1\r\nGET /admin HTTP/1.1")], "the value of header X-A holds a control character or a line break"),
            ("GET", "/a", "h", [("X-A", "1\nx")], "the value of header X-A holds a control character or a line break"),
            ("GET", "/a", "h", [("X A", "1")], "the header name X A is not a token"),
            ("GET", "/a", "h", [("", "1")], "the header name  is not a token"),
            ("GET", "/a HTTP/1.1\r\nX: y", "h", [], "the request target is not an absolute path of visible ASCII"),
            ("GET", "a", "h", [], "the request target is not an absolute path of visible ASCII"),
            ("GE T", "/", "h", [], "the method is not a token"),
            ("GET", "/", "h\r\nX: 1", [], "the host is not visible ASCII"),
        ]
        for (method, target, host, fields, reason) in refusals {
            XCTAssertThrowsError(try HTTP1Request.encode(method: method, target: target, host: host, fields: fields, body: [])) {
                XCTAssertEqual(($0 as? HTTP1Request.Refused)?.description, reason)
            }
        }
    }
}
