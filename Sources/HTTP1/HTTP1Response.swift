/// An HTTP/1.1 response's status line and header fields (RFC 9112), names in lower case.
public struct HTTP1ResponseHead: Equatable, Sendable {
    /// The minor version: 1 for HTTP/1.1, 0 for HTTP/1.0.
    public var minorVersion: Int
    public var status: Int
    public var fields: [Field]

    public struct Field: Equatable, Sendable {
        public var name: String
        public var value: String
    }

    /// Every value of field `name` (lower case), joined as a list is (`, `); nil when absent.
    public func value(_ name: String) -> String? {
        let values = fields.filter { $0.name == name }.map(\.value)
        return values.isEmpty ? nil : values.joined(separator: ", ")
    }

    /// The fields once each, in the order first seen, repeated ones joined.
    public var joinedFields: [Field] {
        var order: [String] = []
        var values: [String: [String]] = [:]
        for field in fields {
            if values[field.name] == nil { order.append(field.name) }
            values[field.name, default: []].append(field.value)
        }
        return order.map { Field(name: $0, value: values[$0]!.joined(separator: ", ")) }
    }

    /// Whether `token` is in field `name`'s comma-separated list (case-insensitive).
    func lists(_ name: String, _ token: String) -> Bool {
        fields.contains { field in
            field.name == name && field.value.split(separator: ",").contains { $0.trimmed.lowercased() == token }
        }
    }
}

/// Why a response could not be read.
public enum HTTP1ResponseError: Error, Equatable, Sendable {
    /// The bytes are not an HTTP/1.x response; the reason names what is wrong.
    case malformed(String)
    /// The body is larger than the reader allows; the reason says how that was known.
    case tooLarge(String)
    /// The connection ended before the response did.
    case truncated
}

/// Reads one HTTP/1.x response from bytes as they arrive, with no I/O of its own (the
/// caller reads the socket and says when it ended): the head (interim 1xx answers passed
/// over), then the body framed by Content-Length, chunked transfer coding, or the end of
/// the connection (RFC 9112 section 6.3). Everything it holds is bounded: the head by
/// `maxHeadBytes`, the body by `maxBodyBytes`, refused as soon as a Content-Length says so.
public struct HTTP1ResponseReader: Sendable {
    public static let defaultMaxHeadBytes = 64 << 10
    /// A chunk-size line (with its extensions) longer than this is refused.
    static let maxChunkLine = 4 << 10

    public let maxHeadBytes: Int
    public let maxBodyBytes: Int
    /// A response to HEAD has no body whatever its fields say.
    let requestWasHead: Bool

    public private(set) var head: HTTP1ResponseHead?
    public private(set) var body: [UInt8] = []
    /// Whether the whole response has been read.
    public var isComplete: Bool {
        if case .done = state { return true }
        return false
    }
    /// Bytes received after the response ended (a server that sent more than one answer).
    public private(set) var surplus = 0
    /// Whether any byte of a response has arrived.
    public private(set) var started = false

    private enum State: Sendable {
        case head
        case length(remaining: Int)
        case chunkLine
        case chunkData(remaining: Int)
        case chunkDataEnd
        case trailers
        case untilClose
        case done
    }

    private enum Framing { case none, length(Int), chunked, untilClose }

    private var state = State.head
    /// How the body is framed, as the head said (`.none` until it is read).
    private var framedBy = Framing.none
    private var pending: [UInt8] = []
    private var trailerBytes = 0

    public init(maxBodyBytes: Int, maxHeadBytes: Int = defaultMaxHeadBytes, requestMethod: String = "GET") {
        self.maxBodyBytes = max(0, maxBodyBytes)
        self.maxHeadBytes = max(256, maxHeadBytes)
        requestWasHead = requestMethod == "HEAD"
    }

    /// Whether the connection may carry another request once this response is complete:
    /// HTTP/1.1, no `Connection: close`, a body framed by length or chunks, nothing extra.
    public var connectionReusable: Bool {
        guard isComplete, surplus == 0, let head, head.minorVersion >= 1, !head.lists("connection", "close") else { return false }
        if head.value("transfer-encoding") != nil && head.value("content-length") != nil { return false }
        if case .untilClose = framedBy { return false }
        return true
    }

    /// Takes the next bytes read from the connection.
    public mutating func feed<C: Collection>(_ bytes: C) throws where C.Element == UInt8 {
        guard !bytes.isEmpty else { return }
        started = true
        if case .done = state {
            surplus += bytes.count
            return
        }
        pending.append(contentsOf: bytes)
        try advance()
    }

    /// Says the connection ended: completes a body framed by the end of the connection;
    /// anything else unfinished was cut short.
    public mutating func end() throws {
        switch state {
        case .done: return
        case .untilClose:
            state = .done
        default:
            throw HTTP1ResponseError.truncated
        }
    }

    private mutating func advance() throws {
        var index = 0
        defer { pending.removeFirst(index) }
        while index < pending.count {
            switch state {
            case .head:
                guard let end = headEnd(from: index) else {
                    // Past the bound even with the blank line's CR LF still to come.
                    if pending.count - index > maxHeadBytes + 2 {
                        throw HTTP1ResponseError.malformed("its header is larger than \(maxHeadBytes) bytes")
                    }
                    return
                }
                guard end.head - index <= maxHeadBytes else {
                    throw HTTP1ResponseError.malformed("its header is larger than \(maxHeadBytes) bytes")
                }
                let parsed = try Self.parseHead(pending[index..<end.head])
                index = end.next
                if (100...199).contains(parsed.status) {
                    // An interim answer (100 Continue, 103 Early Hints): the final one follows.
                    guard parsed.status != 101 else { throw HTTP1ResponseError.malformed("it switched protocols (101)") }
                    continue
                }
                head = parsed
                guard let framing = framing(of: parsed) else {
                    throw HTTP1ResponseError.malformed("its Content-Length is not one number")
                }
                framedBy = framing
                switch framing {
                case .none: finish()
                case .length(let length):
                    guard length <= maxBodyBytes else { throw HTTP1ResponseError.tooLarge("its Content-Length is \(length) bytes") }
                    if length == 0 { finish() } else { state = .length(remaining: length) }
                case .chunked: state = .chunkLine
                case .untilClose: state = .untilClose
                }
            case .length(let remaining):
                let take = min(remaining, pending.count - index)
                body.append(contentsOf: pending[index..<index + take])
                index += take
                if remaining == take { finish() } else { state = .length(remaining: remaining - take) }
            case .chunkLine:
                guard let lineEnd = lineEnd(from: index) else {
                    if pending.count - index > Self.maxChunkLine + 1 { throw HTTP1ResponseError.malformed("a chunk's size line is too long") }
                    return
                }
                guard lineEnd.line - index <= Self.maxChunkLine else { throw HTTP1ResponseError.malformed("a chunk's size line is too long") }
                let size = try Self.chunkSize(pending[index..<lineEnd.line])
                index = lineEnd.next
                if size == 0 {
                    state = .trailers
                } else {
                    guard size <= maxBodyBytes - body.count else {
                        throw HTTP1ResponseError.tooLarge("more than \(maxBodyBytes) bytes had arrived when reading stopped")
                    }
                    state = .chunkData(remaining: size)
                }
            case .chunkData(let remaining):
                let take = min(remaining, pending.count - index)
                body.append(contentsOf: pending[index..<index + take])
                index += take
                state = remaining == take ? .chunkDataEnd : .chunkData(remaining: remaining - take)
            case .chunkDataEnd:
                guard let lineEnd = lineEnd(from: index) else {
                    if pending.count - index >= 2 { throw HTTP1ResponseError.malformed("a chunk does not end where its size says") }
                    return
                }
                guard lineEnd.line == index else { throw HTTP1ResponseError.malformed("a chunk does not end where its size says") }
                index = lineEnd.next
                state = .chunkLine
            case .trailers:
                guard let lineEnd = lineEnd(from: index) else {
                    // The line's LF still to come counts as it will when it arrives.
                    if trailerBytes + pending.count - index + 1 > maxHeadBytes { throw HTTP1ResponseError.malformed("its trailer is too large") }
                    return
                }
                trailerBytes += lineEnd.next - index
                guard trailerBytes <= maxHeadBytes else { throw HTTP1ResponseError.malformed("its trailer is too large") }
                let empty = lineEnd.line == index
                index = lineEnd.next
                if empty { finish() }
            case .untilClose:
                let take = pending.count - index
                guard body.count + take <= maxBodyBytes else {
                    throw HTTP1ResponseError.tooLarge("more than \(maxBodyBytes) bytes had arrived when reading stopped")
                }
                body.append(contentsOf: pending[index...])
                index = pending.count
            case .done:
                surplus += pending.count - index
                index = pending.count
            }
        }
    }

    private mutating func finish() { state = .done }

    private func framing(of head: HTTP1ResponseHead) -> Framing? {
        if requestWasHead || (100...199).contains(head.status) || head.status == 204 || head.status == 304 { return Framing.none }
        if let codings = head.value("transfer-encoding") {
            let last = codings.split(separator: ",").last.map { $0.trimmed.lowercased() }
            return last == "chunked" ? .chunked : .untilClose
        }
        if let length = head.value("content-length") {
            // A list of one value repeated (`5, 5`) is that value; anything else is refused.
            let values = Set(length.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmed })
            guard values.count == 1, let text = values.first, !text.isEmpty, text.count <= 18,
                  text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let n = Int(text) else { return nil }
            return .length(n)
        }
        return .untilClose
    }

    /// Where the head ends: the index of its blank line's start and of the byte after it.
    private func headEnd(from start: Int) -> (head: Int, next: Int)? {
        var i = start
        while i < pending.count {
            if pending[i] == 0x0A {
                // A line ending CRLF or LF alone; the blank line that ends the head likewise.
                if i + 1 < pending.count && pending[i + 1] == 0x0A { return (i + 1, i + 2) }
                if i + 2 < pending.count && pending[i + 1] == 0x0D && pending[i + 2] == 0x0A { return (i + 1, i + 3) }
            }
            i += 1
        }
        return nil
    }

    /// The end of the line starting at `start` (its CR or LF) and the start of the next.
    private func lineEnd(from start: Int) -> (line: Int, next: Int)? {
        guard let lf = pending[start...].firstIndex(of: 0x0A) else { return nil }
        return (lf > start && pending[lf - 1] == 0x0D ? lf - 1 : lf, lf + 1)
    }

    static func parseHead(_ bytes: ArraySlice<UInt8>) throws -> HTTP1ResponseHead {
        var lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false).map { line -> ArraySlice<UInt8> in
            line.last == 0x0D ? line.dropLast() : line
        }
        while lines.last?.isEmpty == true { lines.removeLast() }
        guard let statusLine = lines.first else { throw HTTP1ResponseError.malformed("it has no status line") }
        let status = try parseStatusLine(statusLine)
        var fields: [HTTP1ResponseHead.Field] = []
        for line in lines.dropFirst() {
            guard let first = line.first else { continue }
            if first == 0x20 || first == 0x09 { throw HTTP1ResponseError.malformed("a header field is folded over lines") }
            guard let colon = line.firstIndex(of: 0x3A), colon > line.startIndex,
                  line[line.startIndex..<colon].allSatisfy(isToken) else {
                throw HTTP1ResponseError.malformed("a header line is not a field (\(printable(line.prefix(40))))")
            }
            let value = line[(colon + 1)...]
            guard value.allSatisfy({ $0 == 0x09 || ($0 >= 0x20 && $0 != 0x7F) || $0 >= 0x80 }) else {
                throw HTTP1ResponseError.malformed("a header field's value holds a control character")
            }
            fields.append(.init(name: String(decoding: line[line.startIndex..<colon], as: UTF8.self).lowercased(),
                                value: String(decoding: value, as: UTF8.self).trimmed))
        }
        return HTTP1ResponseHead(minorVersion: status.minor, status: status.code, fields: fields)
    }

    /// `HTTP/1.x SSS reason`: the status must be three digits (RFC 9110 section 15).
    static func parseStatusLine(_ line: ArraySlice<UInt8>) throws -> (minor: Int, code: Int) {
        let bytes = Array(line)
        let prefix = Array("HTTP/1.".utf8)
        guard bytes.count >= 12, Array(bytes[0..<7]) == prefix, bytes[7] == 0x30 || bytes[7] == 0x31, bytes[8] == 0x20,
              bytes[9...11].allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), bytes.count == 12 || bytes[12] == 0x20 else {
            throw HTTP1ResponseError.malformed("its status line is not HTTP/1.x with a three-digit status (\(printable(line.prefix(40))))")
        }
        let code = bytes[9...11].reduce(0) { $0 * 10 + Int($1 - 0x30) }
        guard code >= 100 else { throw HTTP1ResponseError.malformed("its status \(code) is not an HTTP status") }
        return (Int(bytes[7] - 0x30), code)
    }

    /// A chunk-size line: hex digits, then optional extensions after `;` (ignored).
    static func chunkSize(_ line: ArraySlice<UInt8>) throws -> Int {
        let digits = line.prefix { $0 != 0x3B && $0 != 0x20 && $0 != 0x09 }
        guard !digits.isEmpty, digits.count <= 15 else { throw HTTP1ResponseError.malformed("a chunk's size is not a hex number") }
        var size = 0
        for byte in digits {
            let value: Int
            switch byte {
            case 0x30...0x39: value = Int(byte - 0x30)
            case 0x41...0x46: value = Int(byte - 0x41 + 10)
            case 0x61...0x66: value = Int(byte - 0x61 + 10)
            default: throw HTTP1ResponseError.malformed("a chunk's size is not a hex number")
            }
            size = size * 16 + value
        }
        return size
    }
}

/// RFC 9110's tchar.
func isToken(_ byte: UInt8) -> Bool {
    switch byte {
    case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: return true
    case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"), UInt8(ascii: "'"),
         UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "_"),
         UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"): return true
    default: return false
    }
}

/// Bytes quoted in a message: printable ASCII as it is, anything else as `?`.
func printable<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
    String(decoding: bytes.map { $0 >= 0x20 && $0 < 0x7F ? $0 : UInt8(ascii: "?") }, as: UTF8.self)
}

extension StringProtocol {
    /// Without the spaces and tabs at either end (HTTP's optional white space).
    var trimmed: String {
        var s = Substring(self)
        while let f = s.first, f == " " || f == "\t" { s = s.dropFirst() }
        while let l = s.last, l == " " || l == "\t" { s = s.dropLast() }
        return String(s)
    }
}
