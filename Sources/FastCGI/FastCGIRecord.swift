/// FastCGI 1.0 records (the wire format a web server speaks to a long-lived responder):
/// an 8-byte header (version, type, request id, content length, padding length), then the
/// content and the padding. Pure Swift, no I/O: `RecordParser` cuts records out of bytes
/// as they arrive, `FastCGIRecord.encode` writes them.
public struct FastCGIRecord: Equatable, Sendable {
    public enum Kind: UInt8, Sendable {
        case beginRequest = 1, abortRequest = 2, endRequest = 3, params = 4, stdin = 5, stdout = 6
        case stderr = 7, data = 8, getValues = 9, getValuesResult = 10, unknownType = 11
    }

    public static let version: UInt8 = 1
    public static let headerLength = 8
    public static let maxContentLength = 65_535
    /// The request id of management records (`FCGI_GET_VALUES`), which belong to no request.
    public static let managementId: UInt16 = 0

    /// The record's type as sent: a type this code does not know is kept as its number, so
    /// the responder can answer `FCGI_UNKNOWN_TYPE` naming it.
    public var type: UInt8
    public var requestId: UInt16
    public var content: [UInt8]

    public init(type: UInt8, requestId: UInt16, content: [UInt8]) {
        self.type = type
        self.requestId = requestId
        self.content = content
    }

    public init(_ kind: Kind, requestId: UInt16, content: [UInt8] = []) {
        self.init(type: kind.rawValue, requestId: requestId, content: content)
    }

    public var kind: Kind? { Kind(rawValue: type) }

    /// The record's bytes, its content padded to a multiple of 8 as the specification advises.
    /// Content longer than one record holds is the caller's to split (`FastCGIRecord.stream`).
    public func encoded() -> [UInt8] {
        precondition(content.count <= Self.maxContentLength, "one FastCGI record holds at most 65535 bytes")
        let padding = (8 - content.count % 8) % 8
        var bytes: [UInt8] = [Self.version, type, UInt8(requestId >> 8), UInt8(requestId & 0xff),
                              UInt8(content.count >> 8), UInt8(content.count & 0xff), UInt8(padding), 0]
        bytes.reserveCapacity(Self.headerLength + content.count + padding)
        bytes += content
        bytes += [UInt8](repeating: 0, count: padding)
        return bytes
    }

    /// The records that carry `bytes` on a stream (`FCGI_STDOUT`, `FCGI_PARAMS`...), split at
    /// the record size; with `end`, followed by the empty record that closes the stream.
    public static func stream(_ kind: Kind, requestId: UInt16, _ bytes: [UInt8], end: Bool) -> [UInt8] {
        var out: [UInt8] = []
        var start = 0
        while start < bytes.count {
            let stop = min(bytes.count, start + maxContentLength)
            out += FastCGIRecord(kind, requestId: requestId, content: Array(bytes[start..<stop])).encoded()
            start = stop
        }
        if end { out += FastCGIRecord(kind, requestId: requestId).encoded() }
        return out
    }

    /// `FCGI_BEGIN_REQUEST`, as a web server opens a request: its role, and whether the
    /// connection stays open after it (`FCGI_KEEP_CONN`).
    public static func beginRequest(requestId: UInt16, role: Role = .responder, keepConnection: Bool) -> FastCGIRecord {
        FastCGIRecord(.beginRequest, requestId: requestId,
                      content: [UInt8(role.rawValue >> 8), UInt8(role.rawValue & 0xff), keepConnection ? 1 : 0, 0, 0, 0, 0, 0])
    }

    /// `FCGI_END_REQUEST`: the application's exit status and the protocol status.
    public static func endRequest(requestId: UInt16, appStatus: UInt32, protocolStatus: ProtocolStatus) -> FastCGIRecord {
        FastCGIRecord(.endRequest, requestId: requestId,
                      content: [UInt8(appStatus >> 24), UInt8((appStatus >> 16) & 0xff), UInt8((appStatus >> 8) & 0xff),
                                UInt8(appStatus & 0xff), protocolStatus.rawValue, 0, 0, 0])
    }

    public enum ProtocolStatus: UInt8, Sendable {
        case requestComplete = 0, cantMultiplexConnections = 1, overloaded = 2, unknownRole = 3
    }

    public enum Role: UInt16, Sendable {
        case responder = 1, authorizer = 2, filter = 3
    }
}

/// A byte stream that is not FastCGI as this responder takes it: the connection it came on
/// is closed, and only that one.
public struct FastCGIProtocolError: Error, CustomStringConvertible, Equatable, Sendable {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Cuts records out of a connection's bytes as they arrive, in bounded memory: it never
/// holds more than one record and the start of the next.
public struct RecordParser: Sendable {
    private var buffer: [UInt8] = []
    private var start = 0

    public init() {}

    /// Bytes received and not yet part of a whole record.
    public var pendingCount: Int { buffer.count - start }

    public mutating func append<Bytes: Collection>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        if start > 0 && start >= buffer.count / 2 {
            buffer.removeFirst(start)
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next whole record, or nil until more bytes arrive. Throws on a header no FastCGI
    /// 1.0 peer sends (another version); what follows such a header cannot be framed.
    public mutating func next() throws -> FastCGIRecord? {
        guard pendingCount >= FastCGIRecord.headerLength else { return nil }
        let h = start
        guard buffer[h] == FastCGIRecord.version else {
            throw FastCGIProtocolError("record header: version \(buffer[h]), expected 1 (is this FastCGI?)")
        }
        let contentLength = Int(buffer[h + 4]) << 8 | Int(buffer[h + 5])
        let paddingLength = Int(buffer[h + 6])
        let total = FastCGIRecord.headerLength + contentLength + paddingLength
        guard pendingCount >= total else { return nil }
        let contentStart = h + FastCGIRecord.headerLength
        let record = FastCGIRecord(type: buffer[h + 1], requestId: UInt16(buffer[h + 2]) << 8 | UInt16(buffer[h + 3]),
                                   content: Array(buffer[contentStart..<(contentStart + contentLength)]))
        start += total
        if start == buffer.count {
            buffer.removeAll(keepingCapacity: buffer.count <= 1 << 17)
            start = 0
        }
        return record
    }
}

/// FastCGI name-value pairs (`FCGI_PARAMS`, `FCGI_GET_VALUES`): each length one byte below
/// 128, else four bytes with the top bit set.
public enum NameValuePairs {
    public static func encode(_ pairs: [(String, String)]) -> [UInt8] {
        var out: [UInt8] = []
        func length(_ n: Int) {
            if n < 128 {
                out.append(UInt8(n))
            } else {
                out += [UInt8((n >> 24) & 0x7f) | 0x80, UInt8((n >> 16) & 0xff), UInt8((n >> 8) & 0xff), UInt8(n & 0xff)]
            }
        }
        for (name, value) in pairs {
            let n = Array(name.utf8), v = Array(value.utf8)
            length(n.count)
            length(v.count)
            out += n
            out += v
        }
        return out
    }

    /// The pairs in `bytes`, in order; names and values that are not UTF-8 are decoded with
    /// replacement characters (they are only compared with ASCII names).
    public static func decode(_ bytes: [UInt8]) throws -> [(name: String, value: String)] {
        var pairs: [(name: String, value: String)] = []
        var i = 0
        func length(_ what: String) throws -> Int {
            guard i < bytes.count else { throw FastCGIProtocolError("name-value pair: the \(what) length is missing") }
            if bytes[i] < 128 {
                i += 1
                return Int(bytes[i - 1])
            }
            guard bytes.count - i >= 4 else { throw FastCGIProtocolError("name-value pair: the \(what) length is cut short") }
            let n = Int(bytes[i] & 0x7f) << 24 | Int(bytes[i + 1]) << 16 | Int(bytes[i + 2]) << 8 | Int(bytes[i + 3])
            i += 4
            return n
        }
        while i < bytes.count {
            let nameLength = try length("name")
            let valueLength = try length("value")
            guard nameLength <= bytes.count - i, valueLength <= bytes.count - i - nameLength else {
                throw FastCGIProtocolError("name-value pair: \(nameLength)+\(valueLength) bytes announced, \(bytes.count - i) left")
            }
            let name = String(decoding: bytes[i..<(i + nameLength)], as: UTF8.self)
            i += nameLength
            let value = String(decoding: bytes[i..<(i + valueLength)], as: UTF8.self)
            i += valueLength
            pairs.append((name, value))
        }
        return pairs
    }
}
