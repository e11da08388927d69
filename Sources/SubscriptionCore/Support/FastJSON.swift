import Foundation

/// A strict RFC 8259 JSON reader for the hot path (three signed payloads per notification).
///
/// Produces native values: `String`, `Int` (integers that fit), `Double`, `Bool`, `NSNull`,
/// `[Any]` and `[String: Any]`, without Foundation's bridging. Refuses what Foundation's
/// reader refuses: raw control characters in strings, bad escapes, invalid UTF-8, leading
/// zeros, trailing garbage, and nesting past `maxDepth`. Unlike Foundation's reader it also
/// refuses an object that repeats a key: two readers of such a body may each see another
/// value (one keeps the first, another the last), so what was verified could differ from
/// what is acted on.
public enum FastJSON {
    public enum Failure: Error, Equatable {
        case invalid(offset: Int)
        case tooDeep
        case duplicateKey(String, offset: Int)
        /// A string holds U+0000 (`\u0000`).
        case nulInString(offset: Int)
    }

    public static let maxDepth = 512

    /// What a failure means, for a reason that names the fault.
    public static func describe(_ failure: Error) -> String {
        switch failure as? Failure {
        case .duplicateKey(let key, _):
            let shown = key.count > 64 ? String(key.prefix(64)) + "..." : key
            return "duplicate key \"\(shown.escapingControlCharacters())\""
        case .tooDeep: return "not valid JSON: nested deeper than \(maxDepth) levels"
        case .nulInString(let offset):
            return "a string holds U+0000 (\\u0000, at byte \(offset)), which neither store keeps whole (SQLite text "
                + "ends at it, PostgreSQL text cannot hold it); refused rather than stored cut short"
        default: return "not valid JSON"
        }
    }

    public static func parse(_ data: Data) throws -> Any {
        try data.withUnsafeBytes { raw in
            try parse(raw.bindMemory(to: UInt8.self))
        }
    }

    public static func parse(_ bytes: UnsafeBufferPointer<UInt8>) throws -> Any {
        var reader = Reader(b: bytes, i: 0, depth: 0)
        reader.skipSpace()
        let value = try reader.value()
        reader.skipSpace()
        guard reader.i == bytes.count else { throw Failure.invalid(offset: reader.i) }
        return value
    }

    struct Reader {
        let b: UnsafeBufferPointer<UInt8>
        var i: Int
        var depth: Int

        @inline(__always) mutating func skipSpace() {
            while i < b.count {
                let c = b[i]
                if c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 { i += 1 } else { return }
            }
        }

        func fail() -> Failure { .invalid(offset: i) }

        mutating func value() throws -> Any {
            guard i < b.count else { throw fail() }
            switch b[i] {
            case UInt8(ascii: "{"): return try object()
            case UInt8(ascii: "["): return try array()
            case UInt8(ascii: "\""): return try string()
            case UInt8(ascii: "t"): try literal("true"); return true
            case UInt8(ascii: "f"): try literal("false"); return false
            case UInt8(ascii: "n"): try literal("null"); return NSNull()
            default: return try number()
            }
        }

        mutating func literal(_ word: StaticString) throws {
            let n = word.utf8CodeUnitCount
            guard i + n <= b.count else { throw fail() }
            let w = word.utf8Start
            for k in 0..<n where b[i + k] != w[k] { throw fail() }
            i += n
        }

        mutating func object() throws -> [String: Any] {
            depth += 1
            guard depth <= FastJSON.maxDepth else { throw Failure.tooDeep }
            defer { depth -= 1 }
            i += 1
            skipSpace()
            if i < b.count, b[i] == UInt8(ascii: "}") { i += 1; return [:] }
            // Members are gathered first so the dictionary is built at its final size: grown
            // one member at a time, it would hash every key again at each doubling.
            var members: [(String, Any)] = []
            let objectStart = i
            while true {
                skipSpace()
                guard i < b.count, b[i] == UInt8(ascii: "\"") else { throw fail() }
                let key = try string()
                skipSpace()
                guard i < b.count, b[i] == UInt8(ascii: ":") else { throw fail() }
                i += 1
                skipSpace()
                members.append((key, try value()))
                skipSpace()
                guard i < b.count else { throw fail() }
                if b[i] == UInt8(ascii: ",") { i += 1; continue }
                if b[i] == UInt8(ascii: "}") {
                    i += 1
                    var repeated: String?
                    let object = Dictionary(members, uniquingKeysWith: { first, _ in repeated = repeated ?? ""; return first })
                    if repeated != nil {
                        var seen = Set<String>()
                        let key = members.first { !seen.insert($0.0).inserted }!.0
                        throw Failure.duplicateKey(key, offset: objectStart)
                    }
                    return object
                }
                throw fail()
            }
        }

        mutating func array() throws -> [Any] {
            depth += 1
            guard depth <= FastJSON.maxDepth else { throw Failure.tooDeep }
            defer { depth -= 1 }
            i += 1
            var result: [Any] = []
            skipSpace()
            if i < b.count, b[i] == UInt8(ascii: "]") { i += 1; return result }
            while true {
                skipSpace()
                result.append(try value())
                skipSpace()
                guard i < b.count else { throw fail() }
                if b[i] == UInt8(ascii: ",") { i += 1; continue }
                if b[i] == UInt8(ascii: "]") { i += 1; return result }
                throw fail()
            }
        }

        /// The first index at or after `from` whose 8-byte word holds a quote, a backslash, a
        /// control byte or a non-ASCII byte (or the last few bytes), for the byte loop to take over.
        @inline(__always)
        static func plainASCIIRun(_ b: UnsafeBufferPointer<UInt8>, from: Int) -> Int {
            guard let base = UnsafeRawPointer(b.baseAddress) else { return from }
            let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
            var i = from
            while i + 8 <= b.count {
                let w = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: i, as: UInt64.self))
                let quote = w ^ (ones &* 0x22), backslash = w ^ (ones &* 0x5C)
                // A byte is flagged when it is zero after the xor (quote, backslash), below 0x20, or has its top bit set.
                let special = ((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash) | (w &- ones &* 0x20) | w
                if special & highs != 0 { break }
                i += 8
            }
            return i
        }

        mutating func string() throws -> String {
            i += 1
            let start = i
            var ascii = true
            // Fast path: no escapes. Long runs of plain ASCII (nested JWS are kilobytes of
            // base64url) are skipped eight bytes at a time.
            i = Reader.plainASCIIRun(b, from: i)
            while i < b.count {
                let c = b[i]
                if c == UInt8(ascii: "\"") {
                    let slice = UnsafeBufferPointer(rebasing: b[start..<i])
                    i += 1
                    if ascii { return String(decoding: slice, as: UTF8.self) }
                    guard let s = String(validating: slice, as: UTF8.self) else { throw Failure.invalid(offset: start) }
                    return s
                }
                if c == UInt8(ascii: "\\") { break }
                if c < 0x20 { throw fail() }
                if c >= 0x80 { ascii = false }
                i += 1
            }
            guard i < b.count else { throw fail() }
            // Slow path: unescape into a byte buffer.
            var bytes = [UInt8](UnsafeBufferPointer(rebasing: b[start..<i]))
            while i < b.count {
                let c = b[i]
                if c == UInt8(ascii: "\"") {
                    i += 1
                    guard let s = String(validating: bytes, as: UTF8.self) else { throw Failure.invalid(offset: start) }
                    return s
                }
                if c < 0x20 { throw fail() }
                if c != UInt8(ascii: "\\") { bytes.append(c); i += 1; continue }
                i += 1
                guard i < b.count else { throw fail() }
                let e = b[i]
                i += 1
                switch e {
                case UInt8(ascii: "\""): bytes.append(0x22)
                case UInt8(ascii: "\\"): bytes.append(0x5C)
                case UInt8(ascii: "/"): bytes.append(0x2F)
                case UInt8(ascii: "b"): bytes.append(0x08)
                case UInt8(ascii: "f"): bytes.append(0x0C)
                case UInt8(ascii: "n"): bytes.append(0x0A)
                case UInt8(ascii: "r"): bytes.append(0x0D)
                case UInt8(ascii: "t"): bytes.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try hex4()
                    if (0xD800...0xDBFF).contains(scalar) {
                        guard i + 1 < b.count, b[i] == UInt8(ascii: "\\"), b[i + 1] == UInt8(ascii: "u") else { throw fail() }
                        i += 2
                        let low = try hex4()
                        guard (0xDC00...0xDFFF).contains(low) else { throw fail() }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else if (0xDC00...0xDFFF).contains(scalar) {
                        throw fail()
                    }
                    // Stored text would end at it (SQLite) or refuse it (PostgreSQL): a value
                    // that differs from the one signed.
                    if scalar == 0 { throw Failure.nulInString(offset: i - 6) }
                    guard let u = Unicode.Scalar(scalar) else { throw fail() }
                    bytes.append(contentsOf: String(Character(u)).utf8)
                default:
                    throw fail()
                }
            }
            throw fail()
        }

        mutating func hex4() throws -> UInt32 {
            guard i + 4 <= b.count else { throw fail() }
            var v: UInt32 = 0
            for _ in 0..<4 {
                let c = b[i]
                let d: UInt32
                switch c {
                case 48...57: d = UInt32(c - 48)
                case 65...70: d = UInt32(c - 55)
                case 97...102: d = UInt32(c - 87)
                default: throw fail()
                }
                v = v << 4 | d
                i += 1
            }
            return v
        }

        mutating func number() throws -> Any {
            let start = i
            if i < b.count, b[i] == UInt8(ascii: "-") { i += 1 }
            guard i < b.count, b[i] >= 48, b[i] <= 57 else { throw fail() }
            if b[i] == 48 {
                i += 1
                if i < b.count, b[i] >= 48, b[i] <= 57 { throw fail() }   // leading zero
            } else {
                while i < b.count, b[i] >= 48, b[i] <= 57 { i += 1 }
            }
            var integral = true
            if i < b.count, b[i] == UInt8(ascii: ".") {
                integral = false
                i += 1
                guard i < b.count, b[i] >= 48, b[i] <= 57 else { throw fail() }
                while i < b.count, b[i] >= 48, b[i] <= 57 { i += 1 }
            }
            if i < b.count, b[i] == UInt8(ascii: "e") || b[i] == UInt8(ascii: "E") {
                integral = false
                i += 1
                if i < b.count, b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") { i += 1 }
                guard i < b.count, b[i] >= 48, b[i] <= 57 else { throw fail() }
                while i < b.count, b[i] >= 48, b[i] <= 57 { i += 1 }
            }
            // Integers that cannot overflow (dates in milliseconds, ids, prices) are read in place.
            let digitsStart = b[start] == UInt8(ascii: "-") ? start + 1 : start
            if integral && i - digitsStart <= 18 {
                var n = 0
                for k in digitsStart..<i { n = n &* 10 &+ Int(b[k] &- 48) }
                return digitsStart == start ? n : -n
            }
            let text = String(decoding: UnsafeBufferPointer(rebasing: b[start..<i]), as: UTF8.self)
            if integral, let n = Int(text) { return n }
            guard let d = Double(text), d.isFinite else { throw Failure.invalid(offset: start) }
            return d
        }
    }
}
