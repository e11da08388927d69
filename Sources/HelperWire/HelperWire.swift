#if canImport(Glibc)
import Glibc
#endif

// The wire format between subdesk and its HTTP helper (`subdesk-http`), on a Unix stream
// socket that is the helper's stdin and stdout. Both sides build on this module alone: it
// needs neither the helper's HTTP and TLS nor SubscriptionCore, so subdesk never links
// libssl and the helper never links the core.
//
// Every message is a frame: a u32 length, then that many bytes. Integers are big-endian;
// a `bytes` field is a u32 length followed by that many bytes.
//   request  (subdesk -> helper): u64 id, u32 timeout in milliseconds, u32 connections
//            per host, u32 largest response body in bytes, bytes method, bytes URL,
//            bytes headers ("Name: value\n" lines), bytes body
//   response (helper -> subdesk): u64 id, i32 status (the HTTP status; `timedOut`,
//            `noAnswer`, `tooLarge`), bytes headers ("name: value\n" lines, names in lower case),
//            bytes body (with `noAnswer` and `tooLarge`, the reason)
// Responses are written as requests complete, in any order; the id pairs them up.
public enum HelperWire {
    /// A frame larger than this is a broken peer, not an answer from Apple.
    public static let maxFrame = 64 << 20
    /// Response statuses that are not HTTP statuses.
    public static let timedOut: Int32 = -1
    public static let noAnswer: Int32 = -2
    /// The response body was larger than the request allowed: the helper stopped reading it.
    public static let tooLarge: Int32 = -3

    /// Builds one frame field by field.
    public struct Writer {
        private var out: [UInt8] = []

        public init() {}

        public mutating func integer<T: FixedWidthInteger>(_ value: T) {
            withUnsafeBytes(of: value.bigEndian) { out.append(contentsOf: $0) }
        }

        public mutating func bytes<C: Collection>(_ value: C) where C.Element == UInt8 {
            integer(UInt32(value.count))
            out.append(contentsOf: value)
        }

        /// The frame: its length, then the fields.
        public var frame: [UInt8] { withUnsafeBytes(of: UInt32(out.count).bigEndian) { Array($0) } + out }
    }

    /// Reads one frame's fields in order; each read is nil once the frame is too short.
    public struct Reader {
        private var cursor: ArraySlice<UInt8>

        public init(_ frame: [UInt8]) { cursor = frame[...] }

        /// Whether every byte was read: a frame with bytes left over has the wrong shape.
        public var isAtEnd: Bool { cursor.isEmpty }

        /// A big-endian integer of `size` bytes.
        public mutating func integer(_ size: Int) -> UInt64? {
            guard cursor.count >= size else { return nil }
            defer { cursor = cursor.dropFirst(size) }
            return cursor.prefix(size).reduce(0) { $0 << 8 | UInt64($1) }
        }

        public mutating func bytes() -> ArraySlice<UInt8>? {
            guard let length = integer(4), cursor.count >= Int(length) else { return nil }
            defer { cursor = cursor.dropFirst(Int(length)) }
            return cursor.prefix(Int(length))
        }
    }

    public enum Read {
        case frame([UInt8])
        case closed
        case oversized(Int)
    }

    /// The next frame on `fd`; `.closed` at the end of the stream or on an error.
    public static func readFrame(_ fd: Int32) -> Read {
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

    /// Writes all of `bytes`; false when the peer is gone. On a socket with MSG_NOSIGNAL,
    /// so a dead peer never raises SIGPIPE; anything else (a pipe) with write(2).
    public static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { raw -> Int in
                let sent = send(fd, raw.baseAddress! + done, bytes.count - done, Int32(MSG_NOSIGNAL))
                return sent < 0 && errno == ENOTSOCK ? write(fd, raw.baseAddress! + done, bytes.count - done) : sent
            }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return false }
            done += n
        }
        return true
    }
}
