import Foundation

/// The URL-safe base64 alphabet of RFC 4648 §5, as JWS uses it.
///
/// Decoding is strict: characters outside the alphabet, a length that no
/// encoding can produce, misplaced padding and non-zero leftover bits are all
/// refused, so one byte string has exactly one accepted spelling (padded or not).
public enum Base64URL {
    /// Encodes without `=` padding, as compact JWS requires.
    public static func encode(_ data: Data) -> String {
        var out = [UInt8]()
        out.reserveCapacity((data.count + 2) / 3 * 4)
        var index = data.startIndex
        while index < data.endIndex {
            let remaining = data.endIndex - index
            let b0 = data[index]
            let b1: UInt8 = remaining > 1 ? data[index + 1] : 0
            let b2: UInt8 = remaining > 2 ? data[index + 2] : 0
            out.append(alphabet[Int(b0 >> 2)])
            out.append(alphabet[Int((b0 & 0x03) << 4 | b1 >> 4)])
            if remaining > 1 { out.append(alphabet[Int((b1 & 0x0F) << 2 | b2 >> 6)]) }
            if remaining > 2 { out.append(alphabet[Int(b2 & 0x3F)]) }
            index += min(3, remaining)
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes with or without trailing `=` padding; `nil` if `text` is not
    /// valid base64url.
    public static func decode<S: StringProtocol>(_ text: S) -> Data? {
        var bytes = Array(text.utf8)
        if bytes.count % 4 == 0, bytes.last == UInt8(ascii: "=") {
            bytes.removeLast()
            if bytes.last == UInt8(ascii: "=") { bytes.removeLast() }
            // Padding is only legitimate when it completes a final group of
            // two or three characters.
            if bytes.count % 4 == 0 { return nil }
        }
        return decodeUnpadded(bytes)
    }

    /// Decodes only the unpadded form, which is what RFC 7515 prescribes.
    public static func decodeUnpadded<S: StringProtocol>(_ text: S) -> Data? {
        decodeUnpadded(Array(text.utf8))
    }

    private static func decodeUnpadded(_ bytes: [UInt8]) -> Data? {
        if bytes.count % 4 == 1 { return nil }
        var out = Data()
        out.reserveCapacity(bytes.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bitCount = 0
        for byte in bytes {
            let value = reverse[Int(byte)]
            if value == invalid { return nil }
            accumulator = accumulator << 6 | UInt32(value)
            bitCount += 6
            if bitCount >= 8 {
                bitCount -= 8
                out.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bitCount)))
                accumulator &= (1 << UInt32(bitCount)) - 1
            }
        }
        // Leftover bits must be zero, otherwise two spellings decode alike.
        if accumulator != 0 { return nil }
        return out
    }

    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    private static let invalid: UInt8 = 0xFF
    private static let reverse: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (value, character) in alphabet.enumerated() { table[Int(character)] = UInt8(value) }
        return table
    }()
}
