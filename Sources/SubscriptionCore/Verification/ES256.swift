import Foundation
import COpenSSL

/// ECDSA on P-256 with SHA-256, with signatures in the raw `r || s` form JOSE
/// uses (RFC 7518 §3.4) rather than the DER form libcrypto speaks.
///
/// Shared by JWS verification, the demo signer and the App Store Server API
/// token (signed with a `.p8` PKCS#8 key).
public enum ES256 {
    /// Length of a raw signature: two 32-byte big-endian integers.
    public static let signatureLength = 64
    static let scalarLength = 32

    /// A P-256 private key.
    public final class PrivateKey: @unchecked Sendable {
        /// The `EVP_PKEY*`; owned. libcrypto allows one key to sign from
        /// several threads as long as nobody modifies it, and nobody does.
        let pointer: OpaquePointer

        /// Loads a PEM key: PKCS#8 `PRIVATE KEY` (the `.p8` form Apple hands
        /// out) or SEC 1 `EC PRIVATE KEY`. Encrypted keys are refused rather
        /// than prompting for a passphrase.
        public convenience init(pem: Data) throws {
            guard pem.range(of: Data("-----BEGIN".utf8)) != nil else {
                throw ES256Error.notAPrivateKey(reason: "no PEM block")
            }
            if pem.range(of: Data("ENCRYPTED".utf8)) != nil { throw ES256Error.encryptedPrivateKey }
            OpenSSL.clearErrors()
            let key = try OpenSSL.withMemoryBIO(pem) { bio in
                PEM_read_bio_PrivateKey(bio, nil, { _, _, _, _ in -1 }, nil)
            }
            guard let key = key ?? nil else {
                throw ES256Error.notAPrivateKey(reason: OpenSSL.takeErrors())
            }
            try self.init(taking: key)
        }

        /// Loads an unencrypted PKCS#8 `PrivateKeyInfo` in DER.
        public convenience init(pkcs8DER: Data) throws {
            OpenSSL.clearErrors()
            let key = pkcs8DER.withUnsafeBytes { raw -> OpaquePointer? in
                var cursor = raw.bindMemory(to: UInt8.self).baseAddress
                return d2i_AutoPrivateKey(nil, &cursor, raw.count)
            }
            guard let key else { throw ES256Error.notAPrivateKey(reason: OpenSSL.takeErrors()) }
            try self.init(taking: key)
        }

        /// Loads PEM text or, failing the PEM marker, PKCS#8 DER.
        public static func load(_ data: Data) throws -> PrivateKey {
            if data.range(of: Data("-----BEGIN".utf8)) != nil { return try PrivateKey(pem: data) }
            return try PrivateKey(pkcs8DER: data)
        }

        init(taking key: OpaquePointer) throws {
            guard OpenSSL.isP256(key) else {
                let found = OpenSSL.keyDescription(key)
                EVP_PKEY_free(key)
                throw ES256Error.notP256(found: found)
            }
            pointer = key
        }

        deinit { EVP_PKEY_free(pointer) }
    }

    /// A P-256 public key.
    public final class PublicKey: @unchecked Sendable {
        let pointer: OpaquePointer

        /// The subject public key of `certificate`, which must be P-256.
        public init(certificate: X509Certificate) throws {
            guard let key = X509_get_pubkey(certificate.pointer) else {
                throw ES256Error.notAPublicKey(reason: OpenSSL.takeErrors())
            }
            guard OpenSSL.isP256(key) else {
                let found = OpenSSL.keyDescription(key)
                EVP_PKEY_free(key)
                throw ES256Error.notP256(found: found)
            }
            pointer = key
        }

        deinit { EVP_PKEY_free(pointer) }
    }

    /// Signs `message` and returns the 64-byte raw `r || s` signature.
    public static func sign(message: Data, key: PrivateKey) throws -> Data {
        guard let context = EVP_MD_CTX_new() else { throw ES256Error.libcrypto(OpenSSL.takeErrors()) }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestSignInit(context, nil, EVP_sha256(), nil, key.pointer) == 1 else {
            throw ES256Error.libcrypto(OpenSSL.takeErrors())
        }
        let der = try message.withUnsafeBytes { raw -> Data in
            let input = raw.bindMemory(to: UInt8.self).baseAddress
            var length = 0
            guard EVP_DigestSign(context, nil, &length, input, raw.count) == 1 else {
                throw ES256Error.libcrypto(OpenSSL.takeErrors())
            }
            var signature = [UInt8](repeating: 0, count: length)
            guard EVP_DigestSign(context, &signature, &length, input, raw.count) == 1 else {
                throw ES256Error.libcrypto(OpenSSL.takeErrors())
            }
            return Data(signature.prefix(length))
        }
        guard let raw = rawSignature(fromDER: der) else {
            throw ES256Error.libcrypto("libcrypto produced a signature that is not a P-256 ECDSA-Sig-Value")
        }
        return raw
    }

    /// Whether `signature` (raw `r || s`) is a valid signature of `message`
    /// by `key`. A signature of the wrong length is simply not valid.
    public static func isValidSignature(_ signature: Data, of message: Data, by key: PublicKey) -> Bool {
        guard let der = derSignature(fromRaw: signature) else { return false }
        guard let context = EVP_MD_CTX_new() else {
            OpenSSL.clearErrors()
            return false
        }
        defer {
            EVP_MD_CTX_free(context)
            OpenSSL.clearErrors()
        }
        guard EVP_DigestVerifyInit(context, nil, EVP_sha256(), nil, key.pointer) == 1 else { return false }
        let result = der.withUnsafeBytes { signatureBytes in
            message.withUnsafeBytes { messageBytes in
                EVP_DigestVerify(context,
                                 signatureBytes.bindMemory(to: UInt8.self).baseAddress, signatureBytes.count,
                                 messageBytes.bindMemory(to: UInt8.self).baseAddress, messageBytes.count)
            }
        }
        return result == 1
    }

    /// Converts raw `r || s` to the DER `ECDSA-Sig-Value` libcrypto verifies.
    static func derSignature(fromRaw raw: Data) -> Data? {
        guard raw.count == signatureLength, let signature = ECDSA_SIG_new() else { return nil }
        defer { ECDSA_SIG_free(signature) }
        let bytes = [UInt8](raw)
        guard let r = BN_bin2bn(bytes, Int32(scalarLength), nil) else { return nil }
        guard let s = BN_bin2bn(Array(bytes[scalarLength...]), Int32(scalarLength), nil) else {
            BN_free(r)
            return nil
        }
        // set0 takes ownership of r and s.
        guard ECDSA_SIG_set0(signature, r, s) == 1 else {
            BN_free(r)
            BN_free(s)
            return nil
        }
        let length = i2d_ECDSA_SIG(signature, nil)
        guard length > 0 else { return nil }
        var der = [UInt8](repeating: 0, count: Int(length))
        let written = der.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor = buffer.baseAddress
            return i2d_ECDSA_SIG(signature, &cursor)
        }
        return written == length ? Data(der) : nil
    }

    /// Converts a DER `ECDSA-Sig-Value` to raw `r || s`, each left-padded
    /// to 32 bytes.
    static func rawSignature(fromDER der: Data) -> Data? {
        let parsed = der.withUnsafeBytes { raw -> OpaquePointer? in
            var cursor = raw.bindMemory(to: UInt8.self).baseAddress
            return d2i_ECDSA_SIG(nil, &cursor, raw.count)
        }
        guard let signature = parsed else {
            OpenSSL.clearErrors()
            return nil
        }
        defer { ECDSA_SIG_free(signature) }
        var out = [UInt8](repeating: 0, count: signatureLength)
        let ok = out.withUnsafeMutableBufferPointer { buffer -> Bool in
            guard let base = buffer.baseAddress else { return false }
            return BN_bn2binpad(ECDSA_SIG_get0_r(signature), base, Int32(scalarLength)) == scalarLength
                && BN_bn2binpad(ECDSA_SIG_get0_s(signature), base + scalarLength, Int32(scalarLength)) == scalarLength
        }
        return ok ? Data(out) : nil
    }
}

/// Why an ES256 key could not be used or a signature not be made.
public enum ES256Error: Error, CustomStringConvertible, Equatable {
    case notAPrivateKey(reason: String)
    case notAPublicKey(reason: String)
    case encryptedPrivateKey
    case notP256(found: String)
    case libcrypto(String)

    public var description: String {
        switch self {
        case .notAPrivateKey(let reason): return "not an unencrypted PEM or PKCS#8 private key (\(reason))"
        case .encryptedPrivateKey: return "private key is encrypted; give it unencrypted (PKCS#8 or SEC 1 PEM)"
        case .notAPublicKey(let reason): return "certificate has no usable public key (\(reason))"
        case .notP256(let found): return "ES256 needs a P-256 key, found \(found)"
        case .libcrypto(let reason): return "libcrypto failed to sign (\(reason))"
        }
    }
}
