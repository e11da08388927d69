import Foundation

/// The URL-safe base64 alphabet of RFC 4648 §5, as JWS uses it.
///
/// Decoding is strict: characters outside the alphabet, a length that no
/// encoding can produce, misplaced padding and non-zero leftover bits are all
/// refused, so one byte string has exactly one accepted spelling (padded or not).
public enum Base64URL {
    /// Length of the unpadded base64url text of `byteCount` bytes.
    static func unpaddedLength(of byteCount: Int) -> Int { (byteCount * 4 + 2) / 3 }

    /// Encodes without `=` padding, as compact JWS requires.
    public static func encode(_ data: Data) -> String {
        data.withUnsafeBytes { raw in encode(bytes: raw.bindMemory(to: UInt8.self)) }
    }

    /// Works on raw bytes: stored bodies are rebuilt through here, kilobytes each.
    static func encode(bytes input: UnsafeBufferPointer<UInt8>) -> String {
        let full = input.count / 3, rest = input.count % 3
        let length = unpaddedLength(of: input.count)
        guard length > 0 else { return "" }
        return alphabet.withUnsafeBufferPointer { table in
            String(unsafeUninitializedCapacity: length) { out in
                var o = 0, i = 0
                for _ in 0..<full {
                    let b0 = input[i], b1 = input[i + 1], b2 = input[i + 2]
                    out[o] = table[Int(b0 >> 2)]
                    out[o + 1] = table[Int((b0 & 0x03) << 4 | b1 >> 4)]
                    out[o + 2] = table[Int((b1 & 0x0F) << 2 | b2 >> 6)]
                    out[o + 3] = table[Int(b2 & 0x3F)]
                    i += 3
                    o += 4
                }
                if rest > 0 {
                    let b0 = input[i], b1: UInt8 = rest > 1 ? input[i + 1] : 0
                    out[o] = table[Int(b0 >> 2)]
                    out[o + 1] = table[Int((b0 & 0x03) << 4 | b1 >> 4)]
                    if rest > 1 { out[o + 2] = table[Int((b1 & 0x0F) << 2)] }
                }
                return length
            }
        }
    }

    /// Decodes with or without trailing `=` padding; `nil` if `text` is not
    /// valid base64url.
    public static func decode<S: StringProtocol>(_ text: S) -> Data? {
        withUTF8(text) { decode(bytes: $0, allowPadding: true) }
    }

    /// Decodes only the unpadded form, which is what RFC 7515 prescribes.
    public static func decodeUnpadded<S: StringProtocol>(_ text: S) -> Data? {
        withUTF8(text) { decode(bytes: $0, allowPadding: false) }
    }

    private static func withUTF8<S: StringProtocol>(_ text: S, _ body: (UnsafeBufferPointer<UInt8>) -> Data?) -> Data? {
        if let result = text.utf8.withContiguousStorageIfAvailable(body) { return result }
        return Array(text.utf8).withUnsafeBufferPointer(body)
    }

    /// Works on raw bytes because JWS headers carry kilobytes of certificates
    /// and this runs for every notification.
    static func decode(bytes input: UnsafeBufferPointer<UInt8>, allowPadding: Bool) -> Data? {
        var count = input.count
        if allowPadding, count % 4 == 0, count > 0, input[count - 1] == UInt8(ascii: "=") {
            count -= input[count - 2] == UInt8(ascii: "=") ? 2 : 1
            // Padding is only legitimate when it completes a final group of
            // two or three characters.
            if count % 4 < 2 { return nil }
        }
        let tail = count % 4
        if tail == 1 { return nil }
        let outputCount = count / 4 * 3 + (tail == 0 ? 0 : tail - 1)
        guard let base = input.baseAddress else { return Data() }
        var output = Data(count: outputCount)
        let valid = reverse.withUnsafeBufferPointer { t -> Bool in
            output.withUnsafeMutableBytes { raw -> Bool in
                guard let out = raw.bindMemory(to: UInt8.self).baseAddress else { return outputCount == 0 }
                // Four characters to three bytes per step; an invalid character's table
                // entry has its top bit set, caught once per step by the OR.
                var bad: UInt32 = 0
                var i = 0, o = 0
                let whole = count / 4 * 4
                while i < whole {
                    let a = UInt32(t[Int(base[i])]), b = UInt32(t[Int(base[i + 1])])
                    let c = UInt32(t[Int(base[i + 2])]), d = UInt32(t[Int(base[i + 3])])
                    bad |= a | b | c | d
                    let v = a << 18 | b << 12 | c << 6 | d
                    out[o] = UInt8(truncatingIfNeeded: v >> 16)
                    out[o + 1] = UInt8(truncatingIfNeeded: v >> 8)
                    out[o + 2] = UInt8(truncatingIfNeeded: v)
                    i += 4
                    o += 3
                }
                // Leftover bits must be zero, otherwise two spellings decode alike.
                switch count - whole {
                case 2:
                    let a = UInt32(t[Int(base[i])]), b = UInt32(t[Int(base[i + 1])])
                    bad |= a | b
                    guard b & 0x0F == 0 else { return false }
                    out[o] = UInt8(truncatingIfNeeded: a << 2 | b >> 4)
                case 3:
                    let a = UInt32(t[Int(base[i])]), b = UInt32(t[Int(base[i + 1])]), c = UInt32(t[Int(base[i + 2])])
                    bad |= a | b | c
                    guard c & 0x03 == 0 else { return false }
                    let v = a << 12 | b << 6 | c
                    out[o] = UInt8(truncatingIfNeeded: v >> 10)
                    out[o + 1] = UInt8(truncatingIfNeeded: v >> 2)
                default:
                    break
                }
                return bad & 0x80 == 0
            }
        }
        return valid ? output : nil
    }

    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    private static let invalid: UInt8 = 0xFF
    private static let reverse: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (value, character) in alphabet.enumerated() { table[Int(character)] = UInt8(value) }
        return table
    }()
}
