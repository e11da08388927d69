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
        hex(sha256(data))
    }

    /// HMAC-SHA256 of `message` under `key`; nil only when libcrypto cannot allocate.
    public static func hmacSHA256(key: Data, message: Data) -> Data? {
        var out = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let ok = key.withUnsafeBytes { k in
            message.withUnsafeBytes { m in
                HMAC(EVP_sha256(), k.baseAddress, Int32(k.count),
                     m.baseAddress?.assumingMemoryBound(to: UInt8.self), m.count, &out, &length) != nil
            }
        }
        return ok ? Data(out.prefix(Int(length))) : nil
    }

    /// SHA-256 of a body read in pieces, for bodies too large to hold (CGI reads past the
    /// size limit only to digest and count what arrives).
    public final class Streaming {
        private let context: OpaquePointer?

        public init() {
            context = EVP_MD_CTX_new()
            if let context { EVP_DigestInit_ex(context, EVP_sha256(), nil) }
        }

        deinit { EVP_MD_CTX_free(context) }

        public func update(_ bytes: UnsafeRawBufferPointer) {
            guard let context, !bytes.isEmpty else { return }
            EVP_DigestUpdate(context, bytes.baseAddress, bytes.count)
        }

        public func update(_ data: Data) { data.withUnsafeBytes { update($0) } }

        /// The digest in hex; the hasher is spent afterwards.
        public func finishHex() -> String {
            var out = Data(count: Int(SHA256_DIGEST_LENGTH))
            var length: UInt32 = 0
            out.withUnsafeMutableBytes { o in
                _ = EVP_DigestFinal_ex(context, o.baseAddress?.assumingMemoryBound(to: UInt8.self), &length)
            }
            return ContentDigest.hex(out)
        }
    }

    static func hex(_ digest: Data) -> String {
        String(unsafeUninitializedCapacity: 2 * digest.count) { out in
            for (k, b) in digest.enumerated() {
                out[2 * k] = hexDigits[Int(b >> 4)]
                out[2 * k + 1] = hexDigits[Int(b & 15)]
            }
            return 2 * digest.count
        }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)
}
