import Foundation
import XCTest
@testable import subdesk
@testable import SubdeskScenarios

/// `ingest` reads its input as it takes bodies in (`BodyStream`): the bodies, their lines and
/// whether they are named by line are those the whole input split at once gives
/// (`IngestCommand.splitBodies`), wherever the reads happen to cut the input.
final class BodyStreamTests: XCTestCase {
    static let inputs: [String] = [
        "",
        "\n\n  \r\n",
        "{\"signedPayload\":\"a.b.c\"}",
        "{\"signedPayload\":\"a.b.c\"}\n",
        "\n\n{\"signedPayload\":\"a.b.c\"}\r\n\n",
        "not json at all",
        "not json\n",
        "{\"a\":1}\n{\"b\":2}\n{\"c\":3}",
        "{\"a\":1}\r\n\r\n{\"b\":2}\r\n   \n{\"c\":3}\r\n",
        "{\"a\":1}\nnot json\n{\"c\":3}\n",
        "not json\n{\"b\":2}\n{\"c\":3}\n",
        "{\n  \"signedPayload\" : \"a.b.c\"\n}\n",
        "\n\n{\n  \"notification_type\" : \"RENEWAL\",\n  \"password\" : \"x\"\n}",
        "{\"subdeskExportedBody\":\"{\\n \\\"x\\\": 1\\n}\"}\n{\"b\":2}\n",
        "\"a string\"\n\"another\"\n",
        "12\n13\n",
        "{\"unterminated\n{\"b\":2}\n",
    ]

    func bodies(of text: String, chunk: Int) throws -> (bodies: [(data: Data, line: Int)], several: Bool, lines: [Int]) {
        let data = Data(text.utf8)
        var offset = 0
        let stream = try BodyStream {
            guard offset < data.count else { return nil }
            let piece = data.subdata(in: offset..<min(data.count, offset + chunk))
            offset += piece.count
            return piece
        }
        var found: [(data: Data, line: Int)] = []
        while let body = try stream.next() { found.append(body) }
        XCTAssertNil(try stream.next(), "nothing after the last")
        XCTAssertEqual(stream.isEmpty, found.isEmpty)
        return (found, stream.several, stream.lines)
    }

    func testTheBodiesAreThoseOfTheWholeInputWhereverTheReadsCutIt() throws {
        for text in Self.inputs {
            let whole = IngestCommand.splitBodies(Data(text.utf8))
            for chunk in [1, 2, 3, 7, 64, 1 << 20] {
                let (found, several, lines) = try bodies(of: text, chunk: chunk)
                XCTAssertEqual(found.map(\.data), whole.map(\.data), "\(text.debugDescription) read \(chunk) bytes at a time")
                XCTAssertEqual(found.map(\.line), whole.map(\.line), text.debugDescription)
                XCTAssertEqual(several, whole.count > 1, text.debugDescription)
                XCTAssertEqual(lines, whole.map(\.line))
            }
        }
    }

    /// Signed bodies of a real export, several a chunk and split across chunks.
    func testSignedBodiesSplitAcrossReads() throws {
        let sample = SampleData(directory: SubdeskTestCase.repoRoot + "/sample-data")
        var instance = 600_000
        let signed = try ScenarioBuilder(signer: try sample.signer())
            .bodies(count: 40, cycling: try sample.scenarios(), instance: &instance, anchor: 1_790_000_000_000)
        let text = signed.map { String(decoding: $0, as: UTF8.self) }.joined(separator: "\n\n") + "\n"
        let whole = IngestCommand.splitBodies(Data(text.utf8))
        XCTAssertEqual(whole.count, 40)
        for chunk in [997, 4096, 1 << 20] {
            let (found, _, _) = try bodies(of: text, chunk: chunk)
            XCTAssertEqual(found.map(\.data), signed)
            XCTAssertEqual(found.map(\.line), whole.map(\.line))
        }
    }

    /// A file is read into one buffer the reader hands out each time (`init(handle:)`): over
    /// several such reads the bodies are still the whole file's, none of them overwritten by a
    /// later read, whether the file streams (NDJSON) or is split whole (pretty-printed).
    func testAFileLongerThanSeveralReadsGivesTheWholeFilesBodies() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bodystream-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        // Lines of every length from 1 byte to ~40 KB, with blank lines between some: a read
        // ends inside lines, inside blank runs and right after newlines.
        var lines: [String] = []
        var total = 0, n = 0
        while total < 3 * BodyStream.chunkBytes + 12_345 {
            let body = "{\"n\":\(n),\"pad\":\"" + String(repeating: Character(UnicodeScalar(97 + n % 26)!), count: (n * 7_919) % 40_000) + "\"}"
            lines.append(body)
            if n % 5 == 0 { lines.append(n % 10 == 0 ? "" : "  \r") }
            total += body.utf8.count + 1
            n += 1
        }
        let pretty = "{\n  \"signedPayload\" : \"" + String(repeating: "x", count: 2 * BodyStream.chunkBytes) + "\"\n}\n"
        for (name, text) in [("ndjson", lines.joined(separator: "\n") + "\n"), ("pretty", pretty)] {
            let file = directory.appendingPathComponent(name)
            try Data(text.utf8).write(to: file)
            let handle = try FileHandle(forReadingFrom: file)
            defer { try? handle.close() }
            let stream = try BodyStream(handle: handle)
            var found: [(data: Data, line: Int)] = []
            while let body = try stream.next() { found.append(body) }
            let whole = IngestCommand.splitBodies(Data(text.utf8))
            XCTAssertEqual(found.count, whole.count, name)
            XCTAssertTrue(found.map(\.data) == whole.map(\.data), "\(name): the bodies of the whole file")
            XCTAssertEqual(found.map(\.line), whole.map(\.line), name)
        }
    }

    /// A read that fails is thrown where the body it was reading is asked for.
    func testAFailingReadIsThrownWhenItsBodyIsAsked() throws {
        struct Broken: Error {}
        var reads = 0
        let stream = try BodyStream {
            reads += 1
            switch reads {
            case 1: return Data("{\"a\":1}\n{\"b\":2}\n{\"c\"".utf8)
            default: throw Broken()
            }
        }
        XCTAssertEqual(try stream.next()?.line, 1)
        XCTAssertEqual(try stream.next()?.line, 2)
        XCTAssertThrowsError(try stream.next()) { XCTAssertTrue($0 is Broken) }
    }
}
