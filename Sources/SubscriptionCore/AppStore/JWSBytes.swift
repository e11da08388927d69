import Foundation

/// Byte-level reading of compact JWS text and of the V2 body that carries one, for the
/// paths that must not run a JSON parser over kilobytes of base64url: intake's body fast
/// path, compact storage and reading stored bodies back.
enum JWSBytes {
    /// The JWS of a body that is exactly `{"signedPayload":"<base64url and dots>"}` (as Apple
    /// sends it), found without a JSON parser; nil sends the body down the general path.
    static func signedPayloadFastPath(_ body: Data) -> String? {
        let prefix = Array(CompactBody.signedPayloadPrefix.utf8)
        return body.withUnsafeBytes { (raw: UnsafeRawBufferPointer) -> String? in
            let b = raw.bindMemory(to: UInt8.self)
            var end = b.count
            while end > 0, b[end - 1] == 10 || b[end - 1] == 13 || b[end - 1] == 32 { end -= 1 }
            guard end > prefix.count + 2, b[end - 1] == UInt8(ascii: "}"), b[end - 2] == UInt8(ascii: "\""),
                  prefix.indices.allSatisfy({ b[$0] == prefix[$0] }) else { return nil }
            let range = prefix.count..<(end - 2)
            let jws = UnsafeBufferPointer(rebasing: b[range])
            guard isBase64URLOrDots(jws) else { return nil }
            return String(decoding: jws, as: UTF8.self)
        }
    }

    /// Whether every byte is a base64url character or a dot.
    static func isBase64URLOrDots(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        base64URLOrDot.withUnsafeBufferPointer { table in
            var bad: UInt8 = 0
            for b in bytes { bad |= table[Int(b)] }
            return bad == 0
        }
    }

    /// 0 for base64url characters and `.`, 1 for anything else.
    static let base64URLOrDot: [UInt8] = (0..<256).map { c in
        (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c == 45 || c == 95 || c == 46 ? 0 : 1
    }
}
