import Foundation
#if canImport(Glibc)
import Glibc
#endif

// The wire format between subdesk and this helper, on a Unix stream socket that is the
// helper's stdin and stdout. SubscriptionCore's HTTPHelperWire.swift speaks the other
// side; the two share no code so that this program never links SubscriptionCore and
// subdesk never links URLSession.
//
// Every message is a frame: a u32 length, then that many bytes. Integers are big-endian;
// a `bytes` field is a u32 length followed by that many bytes.
//   request  (subdesk -> helper): u64 id, u32 timeout in milliseconds, u32 connections
//            per host, bytes method, bytes URL, bytes headers ("Name: value\n" lines),
//            bytes body
//   response (helper -> subdesk): u64 id, i32 status (the HTTP status; -1 timed out,
//            -2 no HTTP answer), bytes headers ("name: value\n" lines, names in lower
//            case), bytes body (with -2, the reason)
// Responses are written as requests complete, in any order; the id pairs them up.

enum Wire {
    /// A frame larger than this is a broken peer, not an answer from Apple.
    static let maxFrame = 64 << 20

    enum Read {
        case frame([UInt8])
        case closed
        case oversized(Int)
    }

    /// The next frame on `fd`; `.closed` at the end of the stream or on an error.
    static func readFrame(_ fd: Int32) -> Read {
        guard let head = readExactly(fd, 4) else { return .closed }
        let length = head.reduce(0) { $0 << 8 | Int($1) }
        guard length <= maxFrame else { return .oversized(length) }
        return readExactly(fd, length).map { .frame($0) } ?? .closed
    }

    private static func readExactly(_ fd: Int32, _ count: Int) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let n = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + done, count - done) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return nil }
            done += n
        }
        return bytes
    }

    /// Writes all of `bytes`; false when the peer is gone.
    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + done, bytes.count - done) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return false }
            done += n
        }
        return true
    }
}

/// One request as subdesk sent it.
struct HelperRequest {
    var id: UInt64
    var timeout: TimeInterval
    var connectionsPerHost: Int
    var method: String
    var url: String
    var headers: String
    var body: [UInt8]

    /// Nil when the frame does not have the request's shape.
    init?(frame: [UInt8]) {
        var cursor = frame[...]
        func integer(_ size: Int) -> UInt64? {
            guard cursor.count >= size else { return nil }
            defer { cursor = cursor.dropFirst(size) }
            return cursor.prefix(size).reduce(0) { $0 << 8 | UInt64($1) }
        }
        func bytes() -> [UInt8]? {
            guard let length = integer(4), cursor.count >= Int(length) else { return nil }
            defer { cursor = cursor.dropFirst(Int(length)) }
            return Array(cursor.prefix(Int(length)))
        }
        guard let id = integer(8), let milliseconds = integer(4), let connections = integer(4),
              let method = bytes(), let url = bytes(), let headers = bytes(), let body = bytes(), cursor.isEmpty
        else { return nil }
        self.id = id
        timeout = TimeInterval(milliseconds) / 1000
        connectionsPerHost = Int(connections)
        self.method = String(decoding: method, as: UTF8.self)
        self.url = String(decoding: url, as: UTF8.self)
        self.headers = String(decoding: headers, as: UTF8.self)
        self.body = body
    }
}

/// One answer for subdesk.
struct HelperResponse {
    static let timedOut: Int32 = -1
    static let noAnswer: Int32 = -2

    var id: UInt64
    var status: Int32
    var headers = ""
    var body: [UInt8] = []

    static func failure(_ id: UInt64, _ status: Int32, _ reason: String) -> HelperResponse {
        HelperResponse(id: id, status: status, body: Array(reason.utf8))
    }

    var frame: [UInt8] {
        var out: [UInt8] = []
        func integer<T: FixedWidthInteger>(_ value: T) {
            withUnsafeBytes(of: value.bigEndian) { out.append(contentsOf: $0) }
        }
        func bytes(_ value: [UInt8]) {
            integer(UInt32(value.count))
            out.append(contentsOf: value)
        }
        integer(id)
        integer(status)
        bytes(Array(headers.utf8))
        bytes(body)
        return withUnsafeBytes(of: UInt32(out.count).bigEndian) { Array($0) } + out
    }
}
