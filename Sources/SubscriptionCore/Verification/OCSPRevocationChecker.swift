import Foundation
import COpenSSL

/// Whether intake asks the signing chain's OCSP responders if a certificate was revoked.
/// Off by default: intake must work without a network.
public enum RevocationCheckMode: String, Sendable, Equatable, CaseIterable {
    case off
    case ocsp
}

/// Carries one DER OCSP request to a responder and brings back its DER answer. The
/// verifier knows no network: `HTTPOCSPTransport` is the real one.
public protocol OCSPTransport: Sendable {
    /// Throws when no answer came (unreachable, timed out, an HTTP error status).
    func post(_ request: Data, to url: URL) throws -> Data
}

/// The revocation status of a signing certificate could not be learned: the responder
/// was down, slow, answered something unreadable, unsigned, stale, or "unknown". Not the
/// body's fault, so intake neither stores nor quarantines it: the caller answers 503 and
/// Apple sends it again later.
public struct RevocationStatusUnavailable: Error, CustomStringConvertible, Equatable, Sendable {
    /// The JWS field whose chain was being checked (`signedPayload`, ...).
    public let field: String
    public let position: VerificationError.CertificatePosition
    public let subject: String
    /// The responder's URL, from the certificate's Authority Information Access.
    public let responder: String
    public let reason: String

    public var description: String {
        "\(field.escapingControlCharacters()): revocation status of \(position) (\(subject)) could not be learned from "
            + "OCSP responder \(responder.escapingControlCharacters()): \(reason); not stored, retry later"
    }
}

/// Asks the OCSP responders named in the leaf's and the intermediate's Authority
/// Information Access whether either was revoked. Used only on a chain that already
/// leads to a configured root: a responder's answer can refuse a chain, never admit one.
///
/// A "good" answer is remembered in this process only, by the SHA-256 of the
/// certificate's DER, until the answer's nextUpdate: a store row could be written by
/// anyone with a database login, and a remembered "good" is trust.
public final class OCSPRevocationChecker: @unchecked Sendable {
    /// How far apart this host's clock and the responder's may be.
    static let allowedClockSkew = 300

    public struct Statistics: Equatable, Sendable {
        /// Requests sent to responders.
        public var queries = 0
        /// Certificates whose remembered "good" answer stood in for a request.
        public var remembered = 0
    }

    private let roots: TrustRoots
    private let store: OpaquePointer
    private let transport: OCSPTransport
    private let clock: @Sendable () -> Date
    private let lock = NSLock()
    private var goodUntil: [Data: Date] = [:]
    private var counts = Statistics()

    public init(roots: TrustRoots, transport: OCSPTransport, clock: @escaping @Sendable () -> Date = { Date() }) {
        guard let store = X509_STORE_new() else {
            preconditionFailure("libcrypto could not allocate an X509_STORE: \(OpenSSL.takeErrors())")
        }
        for root in roots.certificates where X509_STORE_add_cert(store, root.pointer) != 1 { OpenSSL.clearErrors() }
        self.store = store
        self.roots = roots
        self.transport = transport
        self.clock = clock
    }

    deinit { X509_STORE_free(store) }

    public var statistics: Statistics {
        lock.lock()
        defer { lock.unlock() }
        return counts
    }

    /// Checks x5c[1] with its issuer's (a configured root's) responder, then x5c[0] with
    /// x5c[1]'s. Throws `VerificationError` when one is revoked or cannot be checked at
    /// all (it names no responder), `RevocationStatusUnavailable` when the answer could
    /// not be had.
    public func check(_ x5c: [Data], field: String) throws {
        guard x5c.count >= 2 else { throw VerificationError(field: field, fault: .x5cTooShort(count: x5c.count)) }
        let now = clock()
        let leafKey = ContentDigest.sha256(x5c[0]), intermediateKey = ContentDigest.sha256(x5c[1])
        lock.lock()
        let leafGood = goodUntil[leafKey].map { now < $0 } ?? false
        let intermediateGood = goodUntil[intermediateKey].map { now < $0 } ?? false
        if leafGood && intermediateGood {
            counts.remembered += 2
            lock.unlock()
            return
        }
        lock.unlock()

        func parse(_ index: Int) throws -> X509Certificate {
            do {
                return try X509Certificate(der: x5c[index])
            } catch let error as CertificateParseError {
                throw VerificationError(field: field, fault: .x5cEntryNotCertificate(index: index, reason: error.description))
            }
        }
        let leaf = try parse(0), intermediate = try parse(1)
        // A revoked intermediate makes the leaf's own status moot, so it is asked first.
        if intermediateGood {
            lock.lock(); counts.remembered += 1; lock.unlock()
        } else {
            guard let root = roots.certificates.first(where: { X509_check_issued($0.pointer, intermediate.pointer) == X509_V_OK }) else {
                OpenSSL.clearErrors()
                throw VerificationError(field: field, fault: .chainUntrusted(reason: "no configured root issued x5c[1]"))
            }
            try checkOne(intermediate, issuer: root, position: .x5c(1), key: intermediateKey, now: now, field: field)
        }
        if leafGood {
            lock.lock(); counts.remembered += 1; lock.unlock()
        } else {
            try checkOne(leaf, issuer: intermediate, position: .x5c(0), key: leafKey, now: now, field: field)
        }
    }

    private func checkOne(_ certificate: X509Certificate, issuer: X509Certificate, position: VerificationError.CertificatePosition,
                          key: Data, now: Date, field: String) throws {
        guard let responder = Self.responderURL(of: certificate) else {
            throw VerificationError(field: field, fault: .noOCSPResponder(position, subject: certificate.subjectSummary))
        }
        func unavailable(_ reason: String) -> RevocationStatusUnavailable {
            RevocationStatusUnavailable(field: field, position: position, subject: certificate.subjectSummary,
                                        responder: responder.absoluteString, reason: reason)
        }
        let request = try Self.request(for: certificate, issuer: issuer, field: field)
        lock.lock(); counts.queries += 1; lock.unlock()
        let answer: Data
        do {
            answer = try transport.post(request, to: responder)
        } catch {
            throw unavailable("\(error)")
        }
        let status = try readAnswer(answer, about: certificate, issuer: issuer, now: now, fail: unavailable)
        switch status {
        case .good(let nextUpdate):
            if let nextUpdate {
                lock.lock()
                goodUntil[key] = nextUpdate
                lock.unlock()
            }
        case .revoked(let at, let reason):
            throw VerificationError(field: field, fault: .certificateRevoked(position, subject: certificate.subjectSummary, at: at,
                                                                             reason: reason, responder: responder.absoluteString))
        }
    }

    private enum Status {
        /// Good until `nextUpdate` (nil: the responder promised nothing, so nothing is remembered).
        case good(nextUpdate: Date?)
        case revoked(at: Date, reason: String?)
    }

    /// Reads the responder's DER answer about `certificate`: its signature must verify
    /// to the issuer (or a responder the issuer delegated to) and up to a configured root,
    /// and it must be current.
    private func readAnswer(_ der: Data, about certificate: X509Certificate, issuer: X509Certificate, now: Date,
                            fail: (String) -> RevocationStatusUnavailable) throws -> Status {
        OpenSSL.clearErrors()
        let parsed = der.withUnsafeBytes { raw -> OpaquePointer? in
            guard let base = raw.bindMemory(to: UInt8.self).baseAddress else { return nil }
            var cursor: UnsafePointer<UInt8>? = base
            return d2i_OCSP_RESPONSE(nil, &cursor, raw.count)
        }
        guard let response = parsed else {
            throw fail("the answer (\(der.count) bytes) is not a DER OCSP response: \(OpenSSL.takeErrors())")
        }
        defer { OCSP_RESPONSE_free(response) }
        let responseStatus = OCSP_response_status(response)
        guard responseStatus == OCSP_RESPONSE_STATUS_SUCCESSFUL else {
            let name = OCSP_response_status_str(Int(responseStatus)).map { String(cString: $0) } ?? "status \(responseStatus)"
            throw fail("the responder answered \(name)")
        }
        guard let basic = OCSP_response_get1_basic(response) else {
            throw fail("the answer holds no basic OCSP response: \(OpenSSL.takeErrors())")
        }
        defer { OCSP_BASICRESP_free(basic) }

        // The issuer is offered as a signer: an issuer may sign its own answers, and
        // libcrypto then checks it up to the roots like any responder certificate.
        guard let helpers = OPENSSL_sk_new_null() else { throw fail("libcrypto: \(OpenSSL.takeErrors())") }
        defer { OPENSSL_sk_free(helpers) }
        guard OPENSSL_sk_push(helpers, UnsafeRawPointer(issuer.pointer)) > 0 else { throw fail("libcrypto: \(OpenSSL.takeErrors())") }
        guard OCSP_basic_verify(basic, helpers, store, 0) == 1 else {
            throw fail("the answer's signature does not verify to \(issuer.subjectSummary) or a responder it authorised "
                       + "(\(OpenSSL.takeErrors()))")
        }

        guard let id = OCSP_cert_to_id(nil, certificate.pointer, issuer.pointer) else {
            throw fail("libcrypto could not make a certificate id: \(OpenSSL.takeErrors())")
        }
        defer { OCSP_CERTID_free(id) }
        var status: Int32 = -1, reason: Int32 = -1
        var revokedAt: UnsafeMutablePointer<ASN1_GENERALIZEDTIME>?
        var thisUpdate: UnsafeMutablePointer<ASN1_GENERALIZEDTIME>?
        var nextUpdate: UnsafeMutablePointer<ASN1_GENERALIZEDTIME>?
        guard OCSP_resp_find_status(basic, id, &status, &reason, &revokedAt, &thisUpdate, &nextUpdate) == 1 else {
            OpenSSL.clearErrors()
            throw fail("the answer says nothing about this certificate (serial \(Self.serial(of: certificate)))")
        }
        // What OCSP_check_validity checks, but at this checker's instant rather than the
        // system clock's, so the answer and the remembered "good" agree on what now is.
        let issued = OpenSSL.date(thisUpdate), expires = OpenSSL.date(nextUpdate)
        let skew = TimeInterval(Self.allowedClockSkew)
        guard let issued, issued <= now + skew, expires.map({ now - skew <= $0 && issued <= $0 }) ?? true else {
            let from = issued.map(VerificationError.timestamp) ?? "unreadable"
            let until = nextUpdate == nil ? "none" : expires.map(VerificationError.timestamp) ?? "unreadable"
            throw fail("the answer is not current at \(VerificationError.timestamp(now)) (thisUpdate \(from), nextUpdate \(until))")
        }
        OpenSSL.clearErrors()
        switch status {
        case V_OCSP_CERTSTATUS_GOOD:
            return .good(nextUpdate: OpenSSL.date(nextUpdate))
        case V_OCSP_CERTSTATUS_REVOKED:
            let name = reason >= 0 ? OCSP_crl_reason_str(Int(reason)).map { String(cString: $0) } : nil
            return .revoked(at: OpenSSL.date(revokedAt) ?? now, reason: name)
        default:
            throw fail("the responder does not know this certificate (status unknown, serial \(Self.serial(of: certificate)))")
        }
    }

    /// The DER OCSP request for one certificate: no nonce, since responders that serve
    /// pre-signed answers (Apple's among them, RFC 5019) ignore it, and then a nonce check
    /// would refuse every answer.
    static func request(for certificate: X509Certificate, issuer: X509Certificate, field: String) throws -> Data {
        func fail() -> VerificationError { VerificationError(field: field, fault: .libcrypto("OCSP request: \(OpenSSL.takeErrors())")) }
        guard let request = OCSP_REQUEST_new() else { throw fail() }
        defer { OCSP_REQUEST_free(request) }
        guard let id = OCSP_cert_to_id(nil, certificate.pointer, issuer.pointer) else { throw fail() }
        // The request owns the id once added; until then it is ours to free.
        guard OCSP_request_add0_id(request, id) != nil else {
            OCSP_CERTID_free(id)
            throw fail()
        }
        let length = i2d_OCSP_REQUEST(request, nil)
        guard length > 0 else { throw fail() }
        var bytes = [UInt8](repeating: 0, count: Int(length))
        let written = bytes.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
            return i2d_OCSP_REQUEST(request, &cursor)
        }
        guard written == length else { throw fail() }
        return Data(bytes)
    }

    /// The first http(s) OCSP responder the certificate's Authority Information Access names.
    static func responderURL(of certificate: X509Certificate) -> URL? {
        guard let list = X509_get1_ocsp(certificate.pointer) else {
            OpenSSL.clearErrors()
            return nil
        }
        defer { X509_email_free(list) }
        for index in 0..<OPENSSL_sk_num(list) {
            guard let raw = OPENSSL_sk_value(list, index) else { continue }
            let text = String(cString: raw.assumingMemoryBound(to: CChar.self))
            if let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https", url.host != nil {
                return url
            }
        }
        return nil
    }

    static func serial(of certificate: X509Certificate) -> String {
        guard let number = ASN1_INTEGER_to_BN(X509_get0_serialNumber(certificate.pointer), nil) else { return "?" }
        defer { BN_free(number) }
        guard let hex = BN_bn2hex(number) else { return "?" }
        defer { subdesk_openssl_free(hex) }
        return String(cString: hex)
    }
}
