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

    /// A P-256 public key, ready to verify many signatures.
    public final class PublicKey: @unchecked Sendable {
        let pointer: OpaquePointer
        /// Verify contexts already initialised for this key (`EVP_PKEY_verify_init` fetches
        /// the algorithm from the provider, which costs more than hashing a notification);
        /// one context serves one thread at a time, so they are lent out under a lock.
        private var idleContexts: [OpaquePointer] = []
        /// Signatures checked so far, until the table is built.
        private var verifications = 0
        /// Multiples of this key, built once it has proved busy: see `P256KeyTable`.
        private var table: P256KeyTable?
        private var tableThreshold: Int
        private let lock = NSLock()

        private func lowerTableThreshold(to threshold: Int) {
            lock.lock()
            tableThreshold = min(tableThreshold, threshold)
            lock.unlock()
        }

        /// A table takes some 15-20 ms and 150 KB to build and saves ~25 us a check, so it
        /// pays after several hundred checks: a process that checks one notification (CGI)
        /// never builds one, a batch builds it within its first hundred notifications.
        public static let defaultTableThreshold = 300

        /// The subject public key of `certificate`, which must be P-256. After
        /// `tableThreshold` verifications the key builds its table of multiples.
        public init(certificate: X509Certificate, tableThreshold: Int = PublicKey.defaultTableThreshold) throws {
            guard let key = X509_get_pubkey(certificate.pointer) else {
                throw ES256Error.notAPublicKey(reason: OpenSSL.takeErrors())
            }
            guard OpenSSL.isP256(key) else {
                let found = OpenSSL.keyDescription(key)
                EVP_PKEY_free(key)
                throw ES256Error.notP256(found: found)
            }
            pointer = key
            self.tableThreshold = tableThreshold
        }

        /// The key of the leaf certificate `der`, one object per certificate in the process:
        /// the verifiers of several checkers (each intake has its own) then count their checks
        /// and build the key's table of multiples together, once, instead of once each.
        /// Keyed by the certificate's exact bytes, and holding only its public key, the shared
        /// object decides nothing: each verifier checks the chain before it uses the key.
        /// A key made for a threshold lower than the one it has takes the lower one.
        static func shared(leaf der: Data, tableThreshold: Int = defaultTableThreshold,
                           _ certificate: () throws -> X509Certificate) throws -> PublicKey {
            sharedLock.lock()
            defer { sharedLock.unlock() }
            if let key = sharedKeys[der] {
                key.lowerTableThreshold(to: tableThreshold)
                return key
            }
            let key = try PublicKey(certificate: certificate(), tableThreshold: tableThreshold)
            // Leaf certificates change a few times a year: a full registry is a store of
            // chains nobody sends any more.
            if sharedKeys.count >= sharedLimit { sharedKeys.removeAll() }
            sharedKeys[der] = key
            return key
        }

        private static let sharedLock = NSLock()
        nonisolated(unsafe) private static var sharedKeys: [Data: PublicKey] = [:]
        static let sharedLimit = 32

        /// A P-256 key from its DER SubjectPublicKeyInfo (test vectors give keys this way);
        /// nil when it is not one.
        init?(subjectPublicKeyInfo der: Data, tableThreshold: Int = PublicKey.defaultTableThreshold) {
            let parsed: OpaquePointer? = der.withUnsafeBytes { raw in
                var cursor = raw.baseAddress?.assumingMemoryBound(to: UInt8.self)
                return d2i_PUBKEY(nil, &cursor, raw.count)
            }
            guard let parsed else { OpenSSL.clearErrors(); return nil }
            guard OpenSSL.isP256(parsed) else { EVP_PKEY_free(parsed); return nil }
            pointer = parsed
            self.tableThreshold = tableThreshold
        }

        deinit {
            for context in idleContexts { EVP_PKEY_CTX_free(context) }
            EVP_PKEY_free(pointer)
        }

        /// Whether the key's table of multiples is built (tests and the benchmark look).
        var hasTable: Bool {
            lock.lock()
            defer { lock.unlock() }
            return table != nil
        }

        /// Whether raw `r || s` signs the SHA-256 `digest`: with the table once there is
        /// one, otherwise through libcrypto's ECDSA.
        func verify(raw signature: UnsafeBufferPointer<UInt8>, digest: UnsafeBufferPointer<UInt8>) -> Bool {
            lock.lock()
            var table = self.table
            var build = false
            if table == nil {
                verifications += 1
                build = verifications >= tableThreshold
                // Counted no further: one thread builds it.
                if build { verifications = Int.min / 2 }
            }
            lock.unlock()
            if build {
                // Built outside the lock: the threads that verify with this key meanwhile (the
                // other checkers) go on the ordinary way instead of waiting the milliseconds
                // it takes.
                table = P256KeyTable(key: pointer)
                lock.lock()
                self.table = table
                lock.unlock()
            }
            if let table { return table.verify(raw: signature, digest: digest) }
            var der = [UInt8](repeating: 0, count: 72)
            let length = encodeDER(raw: signature, into: &der)
            return der.withUnsafeBufferPointer { verify(der: UnsafeBufferPointer(rebasing: $0[0..<length]), digest: digest) }
        }

        /// Whether the DER `ECDSA-Sig-Value` signs this SHA-256 `digest`.
        func verify(der: UnsafeBufferPointer<UInt8>, digest: UnsafeBufferPointer<UInt8>) -> Bool {
            lock.lock()
            var context = idleContexts.popLast()
            lock.unlock()
            if context == nil {
                context = EVP_PKEY_CTX_new(pointer, nil)
                if let fresh = context, EVP_PKEY_verify_init(fresh) != 1 {
                    EVP_PKEY_CTX_free(fresh)
                    context = nil
                }
            }
            guard let context else {
                OpenSSL.clearErrors()
                return false
            }
            let result = EVP_PKEY_verify(context, der.baseAddress, der.count, digest.baseAddress, digest.count)
            if result != 1 { OpenSSL.clearErrors() }
            lock.lock()
            idleContexts.append(context)
            lock.unlock()
            return result == 1
        }
    }

    /// SHA-256 of a message, optionally resumed from a saved state: a JWS signing input
    /// starts with its header, the same kilobytes in every JWS one chain signs, so that
    /// prefix is hashed once and the state kept.
    final class Digest: @unchecked Sendable {
        private let context: OpaquePointer

        /// The state after hashing `prefix`.
        init?(prefix: UnsafeBufferPointer<UInt8>) {
            guard let context = EVP_MD_CTX_new() else { return nil }
            self.context = context
            guard EVP_DigestInit_ex(context, EVP_sha256(), nil) == 1,
                  EVP_DigestUpdate(context, prefix.baseAddress, prefix.count) == 1 else {
                OpenSSL.clearErrors()
                return nil
            }
        }

        deinit { EVP_MD_CTX_free(context) }

        /// SHA-256 of `prefix + rest` into `out` (32 bytes).
        func finish(_ rest: UnsafeBufferPointer<UInt8>, into out: UnsafeMutablePointer<UInt8>) -> Bool {
            guard let copy = EVP_MD_CTX_new() else { return false }
            defer { EVP_MD_CTX_free(copy) }
            var length: UInt32 = 0
            let ok = EVP_MD_CTX_copy_ex(copy, context) == 1
                && EVP_DigestUpdate(copy, rest.baseAddress, rest.count) == 1
                && EVP_DigestFinal_ex(copy, out, &length) == 1 && length == 32
            if !ok { OpenSSL.clearErrors() }
            return ok
        }
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
        let digest = [UInt8](ContentDigest.sha256(message))
        return [UInt8](signature).withUnsafeBufferPointer { isValidSignature($0, digest: digest, by: key) }
    }

    /// Whether the raw `r || s` `signature` signs the SHA-256 `digest` by `key`.
    static func isValidSignature(_ signature: UnsafeBufferPointer<UInt8>, digest: [UInt8], by key: PublicKey) -> Bool {
        guard signature.count == signatureLength, digest.count == 32 else { return false }
        return digest.withUnsafeBufferPointer { key.verify(raw: signature, digest: $0) }
    }

    /// DER `ECDSA-Sig-Value` (SEQUENCE of two INTEGERs) of raw `r || s`, written into `out`
    /// (72 bytes at most); returns its length. Each integer is minimal: leading zero bytes
    /// dropped, one put back where the top bit would read as a sign.
    static func encodeDER(raw: UnsafeBufferPointer<UInt8>, into out: inout [UInt8]) -> Int {
        func integer(_ half: Slice<UnsafeBufferPointer<UInt8>>) -> (skip: Int, pad: Bool) {
            var skip = 0
            while skip < scalarLength - 1, half[half.startIndex + skip] == 0 { skip += 1 }
            return (skip, half[half.startIndex + skip] & 0x80 != 0)
        }
        let r = raw[0..<scalarLength], s = raw[scalarLength..<signatureLength]
        let (rSkip, rPad) = integer(r), (sSkip, sPad) = integer(s)
        let rLength = scalarLength - rSkip + (rPad ? 1 : 0), sLength = scalarLength - sSkip + (sPad ? 1 : 0)
        var i = 0
        out[i] = 0x30; out[i + 1] = UInt8(4 + rLength + sLength); i += 2
        for (half, skip, pad, length) in [(r, rSkip, rPad, rLength), (s, sSkip, sPad, sLength)] {
            out[i] = 0x02; out[i + 1] = UInt8(length); i += 2
            if pad { out[i] = 0; i += 1 }
            for k in (half.startIndex + skip)..<half.endIndex { out[i] = half[k]; i += 1 }
        }
        return i
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
