import Foundation
#if canImport(Glibc)
import Glibc
#endif

// The wire format between subdesk and its HTTP helper (`subdesk-http`), on a Unix stream
// socket that is the helper's stdin and stdout. Sources/subdesk-http/Wire.swift speaks the
// other side; the two share no code so that subdesk never links URLSession and the
// helper never links SubscriptionCore.
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
enum HTTPHelperWire {
    /// A frame larger than this is a broken helper, not an answer from Apple.
    static let maxFrame = 64 << 20

    static func requestFrame(id: UInt64, _ request: HTTPRequest, timeout: TimeInterval, connectionsPerHost: Int) -> [UInt8] {
        var out: [UInt8] = []
        func integer<T: FixedWidthInteger>(_ value: T) {
            withUnsafeBytes(of: value.bigEndian) { out.append(contentsOf: $0) }
        }
        func bytes<C: Collection>(_ value: C) where C.Element == UInt8 {
            integer(UInt32(value.count))
            out.append(contentsOf: value)
        }
        integer(id)
        integer(UInt32(min(max(0, timeout * 1000), Double(UInt32.max)).rounded(.up)))
        integer(UInt32(clamping: connectionsPerHost))
        bytes(request.method.utf8)
        bytes(request.url.absoluteString.utf8)
        bytes(request.headers.map { "\($0.key): \($0.value)\n" }.joined().utf8)
        bytes(request.body ?? Data())
        return withUnsafeBytes(of: UInt32(out.count).bigEndian) { Array($0) } + out
    }

    /// A response frame's id and what it says; nil when it does not have the response's shape.
    static func response(_ frame: [UInt8]) -> (id: UInt64, outcome: Result<HTTPResponse, HTTPClient.TransportProblem>)? {
        var cursor = frame[...]
        func integer(_ size: Int) -> UInt64? {
            guard cursor.count >= size else { return nil }
            defer { cursor = cursor.dropFirst(size) }
            return cursor.prefix(size).reduce(0) { $0 << 8 | UInt64($1) }
        }
        func bytes() -> ArraySlice<UInt8>? {
            guard let length = integer(4), cursor.count >= Int(length) else { return nil }
            defer { cursor = cursor.dropFirst(Int(length)) }
            return cursor.prefix(Int(length))
        }
        guard let id = integer(8), let rawStatus = integer(4), let headers = bytes(), let body = bytes(), cursor.isEmpty
        else { return nil }
        switch Int32(bitPattern: UInt32(rawStatus)) {
        case -1:
            return (id, .failure(.timedOut))
        case ..<0:
            return (id, .failure(.network(String(decoding: body, as: UTF8.self))))
        case let status:
            var fields: [String: String] = [:]
            for line in String(decoding: headers, as: UTF8.self).split(separator: "\n") {
                guard let colon = line.firstIndex(of: ":") else { continue }
                fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
            return (id, .success(HTTPResponse(status: Int(status), headers: fields, body: Data(body))))
        }
    }

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
            let n = bytes.withUnsafeMutableBytes { recv(fd, $0.baseAddress! + done, count - done, 0) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return nil }
            done += n
        }
        return bytes
    }

    /// Writes all of `bytes`; false when the helper is gone. MSG_NOSIGNAL: a dead helper
    /// must not raise SIGPIPE in subdesk.
    static func sendAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + done, bytes.count - done, Int32(MSG_NOSIGNAL)) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return false }
            done += n
        }
        return true
    }
}
