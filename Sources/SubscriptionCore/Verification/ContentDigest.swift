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
        let digest = sha256(data)
        return String(unsafeUninitializedCapacity: 2 * digest.count) { out in
            for (k, b) in digest.enumerated() {
                out[2 * k] = hexDigits[Int(b >> 4)]
                out[2 * k + 1] = hexDigits[Int(b & 15)]
            }
            return 2 * digest.count
        }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)
}
