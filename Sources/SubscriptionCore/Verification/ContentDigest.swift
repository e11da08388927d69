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
        var digest = [UInt8](repeating: 0, count: Int(SHA256_DIGEST_LENGTH))
        data.withUnsafeBytes { i in
            _ = SHA256(i.baseAddress?.assumingMemoryBound(to: UInt8.self), i.count, &digest)
        }
        return String(unsafeUninitializedCapacity: 64) { out in
            for (k, b) in digest.enumerated() {
                out[2 * k] = hexDigits[Int(b >> 4)]
                out[2 * k + 1] = hexDigits[Int(b & 15)]
            }
            return 64
        }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)
}
