import Foundation
import COpenSSL

/// What a JWS header declared, once verified.
public struct JWSHeader: Equatable, Sendable {
    public let algorithm: String
    /// Number of `x5c` entries; Apple sends three.
    public let certificateCount: Int
    public let keyID: String?
    public let type: String?
}

/// A JWS whose chain and signature both checked out.
public struct VerifiedJWS: @unchecked Sendable {
    /// The decoded payload: JSON bytes exactly as signed.
    public let payload: Data
    /// The payload parsed once, here, so decoding it into its model (`Verified`) need not
    /// parse it again.
    let payloadObject: [String: Any]
    public let header: JWSHeader
    /// The payload's `signedDate`; the chain was checked at this instant.
    public let signedDate: Date?
    /// Lowercase hex SHA-256 of the concatenated x5c DER bytes.
    public let chainHash: String
    /// Subject of x5c[0], the certificate whose key signed.
    public let signerSubject: String
    /// The header segment exactly as received (base64url text).
    public let headerSegment: String
    /// The raw `r || s` signature.
    public let signature: Data
}

/// A certificate chain that leads to a configured root.
public struct VerifiedChain: Sendable {
    /// Lowercase hex SHA-256 of the concatenated DER bytes given.
    public let chainHash: String
    /// Subjects from the leaf up to and including the configured root that
    /// anchored it.
    public let subjects: [String]
    /// The instants every certificate of the chain is valid between.
    public let validFrom: Date
    public let validUntil: Date
}

/// Verifies App Store signed data: compact JWS, ES256, with an `x5c` chain
/// that must lead to one of the configured roots.
///
/// Thread-safe: the trust store is read-only after `init`, and the cache of
/// verified chains sits behind a lock.
public final class SignedDataVerifier: @unchecked Sendable {
    /// Marks Apple's WWDR intermediate as entitled to issue App Store signing
    /// certificates.
    public static let intermediateMarkerOID = "1.2.840.113635.100.6.2.1"
    /// Marks a leaf as an App Store signed-data certificate.
    public static let leafMarkerOID = "1.2.840.113635.100.6.11.1"
    /// Apple sends three; anything far beyond is not an App Store chain.
    static let maximumCertificateCount = 5

    /// How often verification reused a cached chain or had to check one.
    public struct CacheStatistics: Equatable, Sendable {
        public var hits = 0
        public var chainChecks = 0
        /// Chains found in the `ChainMemory` instead of being checked again.
        public var recalled = 0
        /// Rows found in the `ChainMemory` whose seal did not verify: ignored, and the
        /// chain checked in full.
        public var unsealed = 0
        public var entries = 0
    }

    public let roots: TrustRoots
    private let store: OpaquePointer
    private let cacheCapacity: Int
    private let lock = NSLock()
    /// How many checks a leaf's key makes before it builds its table of multiples (see
    /// `ES256.PublicKey`); `expectMany` lowers it.
    private var keyTableThreshold = ES256.PublicKey.defaultTableThreshold
    /// The threshold once many payloads are expected: ten notifications' worth.
    static let manyTableThreshold = 30

    /// Many payloads follow (a bulk intake): a leaf's key builds its table of multiples after
    /// a few checks instead of hundreds. A 3,000-body `ingest` otherwise verifies its first
    /// hundred bodies at half speed, while the pipeline is still filling.
    public func expectMany() {
        lock.lock()
        keyTableThreshold = Self.manyTableThreshold
        lock.unlock()
    }
    private var cache: [Data: CachedChain] = [:]
    private var cacheOrder: [Data] = []
    /// Parsed headers with their exact base64url bytes, most recently used last: a signing
    /// chain's header is the same kilobytes in every JWS it signs, so parsing (and hashing)
    /// it once saves most of the work. Few chains are live at once, so a short list that
    /// compares lengths first beats hashing kilobytes for a dictionary.
    private var headers: [ParsedHeader] = []
    private var statistics = CacheStatistics()
    /// Chain checks kept beyond this process (the store), the key that seals them, and the
    /// roots' fingerprint they were checked against. Used from the thread that owns it,
    /// like the store itself.
    private let memory: ChainMemory?
    private let memoryKey: ChainMemoryKey?
    private let rootsFingerprint: Data
    /// What the memory's rows are filed under: the roots' fingerprint bound to the key.
    private let memoryRowKey: Data
    /// Asks the chain's OCSP responders about revocation once the chain and signature
    /// verify; nil (the default) keeps verification off the network.
    public let revocation: OCSPRevocationChecker?

    /// - Parameter cacheCapacity: verified chains kept; Apple rotates its
    ///   signing leaf rarely, so a handful covers production and sandbox.
    /// - Parameter memory: where passed chain checks are remembered across processes; used
    ///   only with a `memoryKey`, which seals what is remembered and checks it on recall.
    /// - Parameter revocation: checks the leaf and intermediate with their OCSP responders
    ///   after everything else passed; nil checks nothing online.
    public init(roots: TrustRoots, cacheCapacity: Int = 32, memory: ChainMemory? = nil, memoryKey: ChainMemoryKey? = nil,
                revocation: OCSPRevocationChecker? = nil) {
        guard let store = X509_STORE_new() else {
            preconditionFailure("libcrypto could not allocate an X509_STORE: \(OpenSSL.takeErrors())")
        }
        for root in roots.certificates {
            // Adding the same root twice is harmless; any other failure is
            // an allocation failure.
            if X509_STORE_add_cert(store, root.pointer) != 1 { OpenSSL.clearErrors() }
        }
        self.store = store
        self.roots = roots
        self.cacheCapacity = max(1, cacheCapacity)
        self.memory = memoryKey == nil ? nil : memory
        self.memoryKey = memoryKey
        let fingerprint = ContentDigest.sha256(roots.certificates.map(\.der).sorted { $0.lexicographicallyPrecedes($1) }
                                                .reduce(into: Data()) { $0 += ContentDigest.sha256($1) })
        self.rootsFingerprint = fingerprint
        self.memoryRowKey = memoryKey?.rowKey(roots: fingerprint) ?? Data()
        self.revocation = revocation
    }

    deinit { X509_STORE_free(store) }

    public var cacheStatistics: CacheStatistics {
        lock.lock()
        defer { lock.unlock() }
        var snapshot = statistics
        snapshot.entries = cache.count
        return snapshot
    }

    public func clearCache() {
        lock.lock()
        defer { lock.unlock() }
        cache.removeAll()
        cacheOrder.removeAll()
        headers.removeAll()
    }

    /// Verifies a compact JWS and returns its payload; `verifyNotification`,
    /// `verifyTransaction`, `verifyRenewalInfo` and `verifyAppTransaction` (`Verified.swift`)
    /// also decode it.
    ///
    /// - Parameter field: where the JWS came from (`signedPayload`,
    ///   `signedTransactionInfo`, …); every error names it.
    public func verify(_ compactJWS: String, field: String) throws -> VerifiedJWS {
        var text = compactJWS
        return try text.withUTF8 { try verify(bytes: $0, field: field) }
    }

    /// Verifies a compact JWS given as its ASCII bytes.
    public func verify(bytes: UnsafeBufferPointer<UInt8>, field: String) throws -> VerifiedJWS {
        func fail(_ fault: VerificationError.Fault) -> VerificationError {
            VerificationError(field: field, fault: fault)
        }

        // Byte-level from here on: the header segment alone is kilobytes of
        // certificates, and this runs for every notification.
        var dots: [Int] = []
        if let base = bytes.baseAddress {
            var from = 0
            while dots.count < 3, from < bytes.count, let hit = memchr(base + from, 0x2E, bytes.count - from) {
                let offset = base.distance(to: hit.assumingMemoryBound(to: UInt8.self))
                dots.append(offset)
                from = offset + 1
            }
        }
        guard dots.count == 2 else {
            throw fail(.notCompactJWS(segmentCount: bytes.reduce(1) { $0 + ($1 == UInt8(ascii: ".") ? 1 : 0) }))
        }
        let headerBytes = UnsafeBufferPointer(rebasing: bytes[0..<dots[0]])
        let payloadBytes = UnsafeBufferPointer(rebasing: bytes[(dots[0] + 1)..<dots[1]])
        let signatureBytes = UnsafeBufferPointer(rebasing: bytes[(dots[1] + 1)...])
        let header = try parsedHeader(headerBytes, fail: fail)

        guard let payload = Base64URL.decode(bytes: payloadBytes, allowPadding: true) else { throw fail(.badBase64URL(segment: 2)) }
        let payloadObject = try Self.parsePayload(payload, fail: fail)
        let signedDate = try Self.signedDate(in: payloadObject, fail: fail)

        guard let signature = Base64URL.decode(bytes: signatureBytes, allowPadding: true) else { throw fail(.badBase64URL(segment: 3)) }
        guard signature.count == ES256.signatureLength else { throw fail(.signatureWrongLength(signature.count)) }

        let checkTime: VerificationError.CheckTime = signedDate.map { .signedDate($0) } ?? .currentTime(Date())
        let chain = try trustedChain(header.certificates, hash: header.chainHash, at: checkTime, field: field)

        // The signing input is the first two segments exactly as received, the header's
        // share of the hash already done; base64url decoding above proved them ASCII.
        var digest = [UInt8](repeating: 0, count: 32)
        let hashed = digest.withUnsafeMutableBufferPointer {
            header.signingPrefix.finish(payloadBytes, into: $0.baseAddress!)
        }
        guard hashed else { throw fail(.libcrypto("SHA-256 failed: \(OpenSSL.takeErrors())")) }
        let valid = [UInt8](signature).withUnsafeBufferPointer { ES256.isValidSignature($0, digest: digest, by: chain.key) }
        guard valid else { throw fail(.signatureMismatch) }
        // Last, so a body that fails offline checks never causes a request.
        if let revocation { try revocation.check(header.certificates, field: field) }
        return VerifiedJWS(payload: payload, payloadObject: payloadObject, header: header.info, signedDate: signedDate,
                           chainHash: chain.hashHex, signerSubject: chain.subjects.first ?? "",
                           headerSegment: header.segment, signature: signature)
    }

    /// The parsed header whose base64url text is `bytes`, from the cache or parsed now.
    private func parsedHeader(_ bytes: UnsafeBufferPointer<UInt8>,
                              fail: (VerificationError.Fault) -> VerificationError) throws -> ParsedHeader {
        lock.lock()
        if let index = headers.lastIndex(where: { $0.matches(bytes) }) {
            let known = headers[index]
            if index != headers.count - 1 { headers.remove(at: index); headers.append(known) }
            lock.unlock()
            return known
        }
        lock.unlock()
        guard let decoded = Base64URL.decode(bytes: bytes, allowPadding: true) else { throw fail(.badBase64URL(segment: 1)) }
        let header = try Self.parseHeader(decoded, segment: String(decoding: bytes, as: UTF8.self), fail: fail)
        lock.lock()
        headers.append(header)
        if headers.count > cacheCapacity * 2 { headers.removeFirst() }
        lock.unlock()
        return header
    }

    /// Checks that `ders` (leaf, intermediate, and optionally the sender's
    /// idea of the root, which is ignored) carry Apple's marker OIDs and lead
    /// to a configured root at `date`. Uses and fills the chain cache.
    public func verifyChain(_ ders: [Data], at date: Date, field: String) throws -> VerifiedChain {
        let chain = try trustedChain(ders, hash: nil, at: .requested(date), field: field)
        return VerifiedChain(chainHash: chain.hash.lowercaseHex, subjects: chain.subjects,
                             validFrom: chain.validFrom, validUntil: chain.validUntil)
    }

    // MARK: - Chain

    /// What a successful chain check leaves behind; reusable for any instant
    /// inside `validFrom...validUntil`, as long as the roots do not change
    /// (and they cannot, for one verifier).
    private final class CachedChain: @unchecked Sendable {
        let hash: Data
        let hashHex: String
        let entryLengths: [Int]
        let key: ES256.PublicKey
        let subjects: [String]
        let validFrom: Date
        let validUntil: Date

        init(hash: Data, entryLengths: [Int], key: ES256.PublicKey, subjects: [String],
             validFrom: Date, validUntil: Date) {
            self.hash = hash
            self.hashHex = hash.lowercaseHex
            self.entryLengths = entryLengths
            self.key = key
            self.subjects = subjects
            self.validFrom = validFrom
            self.validUntil = validUntil
        }

        /// A chain checked before (by this or another process), for which only the
        /// leaf's key is needed now.
        convenience init(hash: Data, remembered: RememberedChain, leaf: Data, tableThreshold: Int,
                         fail: (VerificationError.Fault) -> VerificationError) throws {
            let key: ES256.PublicKey
            do {
                key = try ES256.PublicKey.shared(leaf: leaf, tableThreshold: tableThreshold) { try X509Certificate(der: leaf) }
            } catch {
                throw fail(.x5cEntryNotCertificate(index: 0, reason: String(describing: error)))
            }
            self.init(hash: hash, entryLengths: remembered.entryLengths, key: key, subjects: remembered.subjects,
                      validFrom: remembered.validFrom, validUntil: remembered.validUntil)
        }
    }

    /// The SHA-256 of the demo's test CA root (sample-data/test-ca/root.der), whose private
    /// key ships with subdesk: a chain ending there is signed by the demo, never by Apple.
    public static let demoTestCAFingerprint = "87e120550fb1e88de5f99d4f89b07c3f4125cc4314bd5e0bf304a7c1b033fb00"

    /// An untrusted chain whose x5c ends at the demo's test CA says so: the body was made by
    /// `subdesk demo` or `simulate`, which only a demo store's settings trust.
    static func namingTheDemoCA(_ error: VerificationError, ders: [Data]) -> VerificationError {
        guard case .chainUntrusted(let reason) = error.fault, ders.count >= 3,
              ContentDigest.sha256Hex(ders[ders.count - 1]) == demoTestCAFingerprint else { return error }
        return VerificationError(field: error.field, fault: .chainUntrusted(
            reason: reason + "; signed by the demo's test CA (sample-data/test-ca), which this store's settings do not trust"))
    }

    private func trustedChain(_ ders: [Data], hash knownHash: Data?, at time: VerificationError.CheckTime,
                              field: String) throws -> CachedChain {
        func fail(_ fault: VerificationError.Fault) -> VerificationError {
            VerificationError(field: field, fault: fault)
        }
        guard !ders.isEmpty else { throw fail(.x5cEmpty) }
        guard ders.count >= 2 else { throw fail(.x5cTooShort(count: ders.count)) }
        guard ders.count <= Self.maximumCertificateCount else { throw fail(.x5cTooLong(count: ders.count)) }
        guard Self.isCheckable(time.date) else {
            throw fail(.timeOutOfRange("\(time.date.timeIntervalSince1970) s since 1970"))
        }

        let hash = knownHash ?? Self.chainHash(ders)
        // The same bytes cut up differently (x5c[0] and x5c[1] merged into one
        // entry, say) hash alike but would not parse; on a hit nothing is
        // parsed, so the cut must match too.
        let entryLengths = ders.map(\.count)
        // libcrypto checks validity in whole seconds; so does the cache.
        let instant = Date(timeIntervalSince1970: floor(time.date.timeIntervalSince1970))

        lock.lock()
        if let cached = cache[hash], cached.entryLengths == entryLengths,
           cached.validFrom <= instant, instant <= cached.validUntil {
            statistics.hits += 1
            lock.unlock()
            return cached
        }
        let tableThreshold = keyTableThreshold
        lock.unlock()

        let checked: CachedChain
        if let remembered = recall(hash: hash, entryLengths: entryLengths, instant: instant) {
            checked = try CachedChain(hash: hash, remembered: remembered, leaf: ders[0], tableThreshold: tableThreshold, fail: fail)
            lock.lock()
            statistics.recalled += 1
            lock.unlock()
        } else {
            lock.lock()
            statistics.chainChecks += 1
            lock.unlock()
            do {
                checked = try checkChain(ders, hash: hash, at: time, instant: instant, tableThreshold: tableThreshold, fail: fail)
            } catch let error as VerificationError {
                throw Self.namingTheDemoCA(error, ders: ders)
            }
            if let memory, let memoryKey {
                let seal = memoryKey.seal(chainHash: hash, roots: rootsFingerprint, entryLengths: checked.entryLengths,
                                          subjects: checked.subjects, validFrom: checked.validFrom, validUntil: checked.validUntil)
                memory.rememberChain(RememberedChain(entryLengths: checked.entryLengths, subjects: checked.subjects,
                                                     validFrom: checked.validFrom, validUntil: checked.validUntil, seal: seal),
                                     hash: hash, roots: memoryRowKey)
            }
        }

        lock.lock()
        if cache.updateValue(checked, forKey: hash) == nil {
            cacheOrder.append(hash)
            if cacheOrder.count > cacheCapacity {
                cache.removeValue(forKey: cacheOrder.removeFirst())
            }
        }
        lock.unlock()
        return checked
    }

    /// A remembered check of this chain that this host's key sealed, for these roots and
    /// this cut, valid at `instant`; nil (check in full) for anything else. What a row
    /// says is believed only through its seal: the store is writable by others.
    private func recall(hash: Data, entryLengths: [Int], instant: Date) -> RememberedChain? {
        guard let memory, let memoryKey,
              let remembered = memory.recallChain(hash: hash, roots: memoryRowKey) else { return nil }
        let expected = memoryKey.seal(chainHash: hash, roots: rootsFingerprint, entryLengths: remembered.entryLengths,
                                      subjects: remembered.subjects, validFrom: remembered.validFrom,
                                      validUntil: remembered.validUntil)
        guard ChainMemoryKey.sealsMatch(expected, remembered.seal) else {
            lock.lock()
            statistics.unsealed += 1
            lock.unlock()
            return nil
        }
        guard remembered.entryLengths == entryLengths, remembered.validFrom <= instant, instant <= remembered.validUntil else {
            return nil
        }
        return remembered
    }

    private func checkChain(_ ders: [Data], hash: Data, at time: VerificationError.CheckTime, instant: Date,
                            tableThreshold: Int, fail: (VerificationError.Fault) -> VerificationError) throws -> CachedChain {
        // Only the leaf and the intermediate are parsed: trust never comes
        // from x5c[2], so it is not even read.
        var certificates: [X509Certificate] = []
        for (index, der) in ders.prefix(2).enumerated() {
            do {
                certificates.append(try X509Certificate(der: der))
            } catch let error as CertificateParseError {
                throw fail(.x5cEntryNotCertificate(index: index, reason: error.description))
            }
        }
        let leaf = certificates[0], intermediate = certificates[1]
        guard intermediate.hasExtension(oid: Self.intermediateMarkerOID) else {
            throw fail(.missingMarkerOID(index: 1, oid: Self.intermediateMarkerOID))
        }
        guard leaf.hasExtension(oid: Self.leafMarkerOID) else {
            throw fail(.missingMarkerOID(index: 0, oid: Self.leafMarkerOID))
        }

        let anchoredChain = try verifyPath(leaf: leaf, intermediate: intermediate, time: time,
                                           instant: instant, fail: fail)

        let key: ES256.PublicKey
        do {
            key = try ES256.PublicKey.shared(leaf: ders[0], tableThreshold: tableThreshold) { leaf }
        } catch ES256Error.notP256(let found) {
            throw fail(.leafKeyNotP256(found: found))
        } catch {
            throw fail(.x5cEntryNotCertificate(index: 0, reason: String(describing: error)))
        }
        return CachedChain(hash: hash, entryLengths: ders.map(\.count), key: key,
                           subjects: anchoredChain.map(\.subject),
                           validFrom: anchoredChain.map(\.notBefore).max() ?? instant,
                           validUntil: anchoredChain.map(\.notAfter).min() ?? instant)
    }

    private struct ChainLink {
        let subject: String
        let notBefore: Date
        let notAfter: Date
    }

    /// Runs libcrypto's path validation: leaf, then x5c[1] as the only
    /// untrusted helper, up to a root in the store, at `instant`.
    private func verifyPath(leaf: X509Certificate, intermediate: X509Certificate,
                            time: VerificationError.CheckTime, instant: Date,
                            fail: (VerificationError.Fault) -> VerificationError) throws -> [ChainLink] {
        OpenSSL.clearErrors()
        guard let context = X509_STORE_CTX_new(), let untrusted = OPENSSL_sk_new_null() else {
            throw fail(.libcrypto(OpenSSL.takeErrors()))
        }
        defer {
            X509_STORE_CTX_free(context)
            // The stack borrows the certificate; freeing it leaves it alone.
            OPENSSL_sk_free(untrusted)
        }
        guard OPENSSL_sk_push(untrusted, UnsafeRawPointer(intermediate.pointer)) > 0,
              X509_STORE_CTX_init(context, store, leaf.pointer, untrusted) == 1 else {
            throw fail(.libcrypto(OpenSSL.takeErrors()))
        }
        X509_VERIFY_PARAM_set_time(X509_STORE_CTX_get0_param(context), time_t(instant.timeIntervalSince1970))

        let verified = X509_verify_cert(context) == 1
        OpenSSL.clearErrors()
        guard verified else {
            let code = X509_STORE_CTX_get_error(context)
            let culprit = X509_STORE_CTX_get_current_cert(context)
            let position = self.position(of: culprit, leaf: leaf, intermediate: intermediate)
            switch code {
            case X509_V_ERR_CERT_HAS_EXPIRED:
                let notAfter = OpenSSL.date(X509_get0_notAfter(culprit)) ?? instant
                throw fail(.certificateExpired(position, at: time, notAfter: notAfter))
            case X509_V_ERR_CERT_NOT_YET_VALID:
                let notBefore = OpenSSL.date(X509_get0_notBefore(culprit)) ?? instant
                throw fail(.certificateNotYetValid(position, at: time, notBefore: notBefore))
            default:
                let reason = X509_verify_cert_error_string(Int(code)).map { String(cString: $0) }
                    ?? "libcrypto error \(code)"
                throw fail(.chainUntrusted(reason: "\(reason) at \(position)"))
            }
        }

        guard let chain = X509_STORE_CTX_get0_chain(context) else {
            throw fail(.libcrypto("verified chain not available"))
        }
        // libcrypto is content with any path to a root. A leaf issued straight
        // by a root would skip x5c[1], and with it the intermediate marker
        // OID that was checked there, so the path must go through x5c[1].
        guard OPENSSL_sk_num(chain) >= 3,
              X509_cmp(OpaquePointer(OPENSSL_sk_value(chain, 1)), intermediate.pointer) == 0 else {
            throw fail(.pathBypassesIntermediate)
        }
        var links: [ChainLink] = []
        for index in 0..<OPENSSL_sk_num(chain) {
            let certificate = OpaquePointer(OPENSSL_sk_value(chain, index))
            let subject: String
            if certificate == leaf.pointer {
                subject = leaf.subjectSummary
            } else if certificate == intermediate.pointer {
                subject = intermediate.subjectSummary
            } else {
                subject = roots.certificates.first { $0.pointer == certificate }?.subjectSummary ?? "?"
            }
            guard let notBefore = OpenSSL.date(X509_get0_notBefore(certificate)),
                  let notAfter = OpenSSL.date(X509_get0_notAfter(certificate)) else {
                throw fail(.libcrypto("validity of a verified certificate cannot be read"))
            }
            links.append(ChainLink(subject: subject, notBefore: notBefore, notAfter: notAfter))
        }
        return links
    }

    private func position(of certificate: OpaquePointer?, leaf: X509Certificate,
                          intermediate: X509Certificate) -> VerificationError.CertificatePosition {
        guard let certificate else { return .x5c(0) }
        if certificate == leaf.pointer { return .x5c(0) }
        if certificate == intermediate.pointer { return .x5c(1) }
        let subject = roots.certificates.first { $0.pointer == certificate }?.subjectSummary ?? "unknown"
        return .configuredRoot(subject: subject)
    }

    // MARK: - Header and payload

    private struct ParsedHeader {
        /// The base64url segment exactly as received.
        let segment: String
        let info: JWSHeader
        let certificates: [Data]
        let chainHash: Data
        /// SHA-256 state after `segment` and the dot that follows it.
        let signingPrefix: ES256.Digest

        func matches(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
            var text = segment
            return text.utf8.count == bytes.count && text.withUTF8 { memcmp($0.baseAddress!, bytes.baseAddress!, bytes.count) == 0 }
        }
    }

    static func chainHash(_ ders: [Data]) -> Data {
        ContentDigest.sha256(ders.reduce(into: Data()) { $0.append($1) })
    }

    private static func parseHeader(_ bytes: Data, segment: String,
                                    fail: (VerificationError.Fault) -> VerificationError) throws -> ParsedHeader {
        let object: Any
        do {
            object = try FastJSON.parse(bytes)
        } catch FastJSON.Failure.duplicateKey(let key, let offset) {
            throw fail(.duplicateKey(FastJSON.describe(FastJSON.Failure.duplicateKey(key, offset: offset)), where: "header"))
        } catch {
            throw fail(.headerNotJSONObject)
        }
        guard let header = object as? [String: Any] else { throw fail(.headerNotJSONObject) }
        guard let algValue = header["alg"] else { throw fail(.algorithmMissing) }
        guard let alg = algValue as? String, alg == "ES256" else {
            throw fail(.algorithmNotES256(algValue as? String ?? String(describing: algValue)))
        }
        // RFC 7515 §4.1.11: a recipient must refuse crit parameters it does
        // not implement, and this one implements none.
        guard header["crit"] == nil else { throw fail(.criticalHeaderParameters) }
        guard let x5cValue = header["x5c"] else { throw fail(.x5cMissing) }
        guard let entries = x5cValue as? [Any] else { throw fail(.x5cNotArrayOfStrings) }
        guard !entries.isEmpty else { throw fail(.x5cEmpty) }
        guard entries.count <= maximumCertificateCount else { throw fail(.x5cTooLong(count: entries.count)) }
        var certificates: [Data] = []
        for (index, entry) in entries.enumerated() {
            guard let text = entry as? String else { throw fail(.x5cNotArrayOfStrings) }
            // x5c is standard base64 with padding (RFC 7515 §4.1.6), not base64url.
            guard let der = Data(base64Encoded: text), !der.isEmpty else {
                throw fail(.x5cEntryNotBase64(index: index))
            }
            certificates.append(der)
        }
        let info = JWSHeader(algorithm: alg, certificateCount: certificates.count,
                             keyID: header["kid"] as? String, type: header["typ"] as? String)
        var signingStart = segment + "."
        guard let prefix = signingStart.withUTF8({ ES256.Digest(prefix: $0) }) else {
            throw fail(.libcrypto("SHA-256 failed: \(OpenSSL.takeErrors())"))
        }
        return ParsedHeader(segment: segment, info: info, certificates: certificates, chainHash: chainHash(certificates),
                            signingPrefix: prefix)
    }

    /// libcrypto takes a `time_t`, and certificates cannot express years
    /// past 9999 anyway.
    private static let latestCheckableSecond: TimeInterval = 253_402_300_799

    static func isCheckable(_ date: Date) -> Bool {
        let seconds = date.timeIntervalSince1970
        return seconds.isFinite && seconds >= 0 && seconds <= latestCheckableSecond
    }

    private static func parsePayload(_ payload: Data,
                                     fail: (VerificationError.Fault) -> VerificationError) throws -> [String: Any] {
        let object: Any
        do {
            object = try FastJSON.parse(payload)
        } catch let failure as FastJSON.Failure {
            if case .duplicateKey = failure { throw fail(.duplicateKey(FastJSON.describe(failure), where: "payload")) }
            if case .nulInString = failure { throw fail(.payloadHoldsNUL(FastJSON.describe(failure))) }
            throw fail(.payloadNotJSON)
        } catch {
            throw fail(.payloadNotJSON)
        }
        guard let dictionary = object as? [String: Any] else { throw fail(.payloadNotJSONObject) }
        return dictionary
    }

    private static func signedDate(in payload: [String: Any],
                                   fail: (VerificationError.Fault) -> VerificationError) throws -> Date? {
        guard let value = payload["signedDate"], !JSONFields.isNull(value) else { return nil }
        let milliseconds: Double
        if value is Bool { throw fail(.signedDateNotANumber) }
        if let n = value as? Int { milliseconds = Double(n) }
        else if let d = value as? Double { milliseconds = d }
        else { throw fail(.signedDateNotANumber) }
        let date = Date(timeIntervalSince1970: milliseconds / 1000)
        guard isCheckable(date) else { throw fail(.timeOutOfRange("signedDate \(milliseconds)")) }
        return date
    }
}
