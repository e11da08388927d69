import COpenSSL
import Foundation

/// SHA-256 of bodies, used to dedupe and to tell a retry from a forgery.
public enum ContentDigest {
    public static func sha256(_ data: Data) -> Data {
        var out = Data(count: Int(SHA256_DIGEST_LENGTH))
        out.withUnsafeMutableBytes { o in
            data.withUnsafeBytes { i in
                _ = SHA256(i.baseAddress?.assumingMemoryBound(to: UInt8.self), i.count,
                           o.baseAddress?.assumingMemoryBound(to: UInt8.self))
            }
        }
        return out
    }

    public static func sha256Hex(_ data: Data) -> String {
        let hex: [Character] = Array("0123456789abcdef")
        var s = ""
        s.reserveCapacity(64)
        for b in sha256(data) { s.append(hex[Int(b >> 4)]); s.append(hex[Int(b & 15)]) }
        return s
    }
}
