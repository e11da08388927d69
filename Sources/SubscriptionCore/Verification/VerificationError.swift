import Foundation

/// Why a signed payload was refused: the field it came from and the fault.
///
/// `description` reads `signedTransactionInfo: x5c[1] lacks OID
/// 1.2.840.113635.100.6.2.1`; tests and callers that branch match on `fault`.
public struct VerificationError: Error, CustomStringConvertible, Equatable, Sendable {
    /// The payload field (or other source) the JWS came from, e.g. `signedPayload`.
    public let field: String
    public let fault: Fault

    public init(field: String, fault: Fault) {
        self.field = field
        self.fault = fault
    }

    public var description: String { "\(field.escapingControlCharacters()): \(fault)" }

    /// Which certificate a fault is about.
    public enum CertificatePosition: Equatable, Sendable, CustomStringConvertible {
        /// An entry of the JWS header's `x5c` array.
        case x5c(Int)
        /// One of the configured trust roots, named by subject.
        case configuredRoot(subject: String)

        public var description: String {
            switch self {
            case .x5c(let index): return "x5c[\(index)]"
            case .configuredRoot(let subject): return "configured root (\(subject))"
            }
        }
    }

    /// Where the instant a chain was checked at came from.
    public enum CheckTime: Equatable, Sendable, CustomStringConvertible {
        /// The payload's `signedDate`.
        case signedDate(Date)
        /// The clock, because the payload had no `signedDate`.
        case currentTime(Date)
        /// A caller-chosen instant (`verifyChain(_:at:field:)`).
        case requested(Date)

        public var date: Date {
            switch self {
            case .signedDate(let date), .currentTime(let date), .requested(let date): return date
            }
        }

        public var description: String {
            switch self {
            case .signedDate(let date): return "signedDate \(VerificationError.timestamp(date))"
            case .currentTime(let date): return "current time \(VerificationError.timestamp(date)) (payload has no signedDate)"
            case .requested(let date): return VerificationError.timestamp(date)
            }
        }
    }

    public enum Fault: Equatable, Sendable, CustomStringConvertible {
        case notCompactJWS(segmentCount: Int)
        /// `segment` counts from 1: header, payload, signature.
        case badBase64URL(segment: Int)
        case headerNotJSONObject
        case algorithmMissing
        case algorithmNotES256(String)
        case criticalHeaderParameters
        case x5cMissing
        case x5cNotArrayOfStrings
        case x5cEmpty
        case x5cTooShort(count: Int)
        case x5cTooLong(count: Int)
        case x5cEntryNotBase64(index: Int)
        case x5cEntryNotCertificate(index: Int, reason: String)
        case missingMarkerOID(index: Int, oid: String)
        case leafKeyNotP256(found: String)
        case chainUntrusted(reason: String)
        /// The leaf leads to a configured root without x5c[1] being its issuer.
        case pathBypassesIntermediate
        case certificateExpired(CertificatePosition, at: CheckTime, notAfter: Date)
        case certificateNotYetValid(CertificatePosition, at: CheckTime, notBefore: Date)
        case signatureWrongLength(Int)
        case signatureMismatch
        case payloadNotJSON
        case payloadNotJSONObject
        /// A payload string holds U+0000, which no store keeps whole (the parser's words).
        case payloadHoldsNUL(String)
        /// The header or payload repeats a key (`where` says which).
        case duplicateKey(String, where: String)
        case signedDateNotANumber
        /// A signedDate (in milliseconds) or requested instant (in seconds)
        /// outside 1970 to 9999.
        case timeOutOfRange(String)
        /// libcrypto failed for a reason that is not the input's fault.
        case libcrypto(String)
        /// The certificate's issuer (through its OCSP responder) says it was revoked.
        case certificateRevoked(CertificatePosition, subject: String, at: Date, reason: String?, responder: String)
        /// Revocation checking is on, and the certificate names no OCSP responder to ask.
        case noOCSPResponder(CertificatePosition, subject: String)

        public var description: String {
            switch self {
            case .notCompactJWS(let count):
                return "not a JWS (expected 3 segments, found \(count))"
            case .badBase64URL(let segment):
                return "bad base64url in segment \(segment)"
            case .headerNotJSONObject:
                return "header is not a JSON object"
            case .algorithmMissing:
                return "alg missing from header"
            case .algorithmNotES256(let alg):
                return "alg \(alg.escapingControlCharacters(limit: 40)) is not ES256"
            case .criticalHeaderParameters:
                return "header has crit parameters, none of which are understood"
            case .x5cMissing:
                return "x5c missing"
            case .x5cNotArrayOfStrings:
                return "x5c is not an array of base64 strings"
            case .x5cEmpty:
                return "x5c is empty"
            case .x5cTooShort(let count):
                return "x5c has \(count) certificate, needs at least leaf and intermediate"
            case .x5cTooLong(let count):
                return "x5c has \(count) certificates, more than any App Store chain"
            case .x5cEntryNotBase64(let index):
                return "x5c[\(index)] is not base64"
            case .x5cEntryNotCertificate(let index, let reason):
                return "x5c[\(index)] is not a certificate: \(reason)"
            case .missingMarkerOID(let index, let oid):
                return "x5c[\(index)] lacks OID \(oid)"
            case .leafKeyNotP256(let found):
                return "x5c[0] key is \(found), ES256 needs P-256"
            case .chainUntrusted(let reason):
                return "certificate chain does not lead to a configured root (\(reason))"
            case .pathBypassesIntermediate:
                return "x5c[0] leads to a configured root without x5c[1] as its issuer"
            case .certificateExpired(let position, let time, let notAfter):
                return "certificate \(position) expired at \(time) (notAfter \(VerificationError.timestamp(notAfter)))"
            case .certificateNotYetValid(let position, let time, let notBefore):
                return "certificate \(position) not yet valid at \(time) (notBefore \(VerificationError.timestamp(notBefore)))"
            case .signatureWrongLength(let length):
                return "signature is \(length) bytes, ES256 needs 64 (raw r||s)"
            case .signatureMismatch:
                return "ES256 signature does not match"
            case .duplicateKey(let described, let part):
                return "\(part) has a \(described)"
            case .payloadNotJSON:
                return "payload is not JSON"
            case .payloadNotJSONObject:
                return "payload is JSON but not an object"
            case .payloadHoldsNUL(let described):
                return "payload: \(described)"
            case .signedDateNotANumber:
                return "signedDate is not a number of milliseconds since 1970"
            case .timeOutOfRange(let value):
                return "time \(value) is outside 1970-9999, cannot check a chain at it"
            case .libcrypto(let reason):
                return "libcrypto failed (\(reason))"
            case .certificateRevoked(let position, let subject, let at, let reason, let responder):
                return "certificate \(position) (\(subject)) was revoked at \(VerificationError.timestamp(at))"
                    + (reason.map { " (\($0))" } ?? "") + ", says OCSP responder \(responder.escapingControlCharacters())"
            case .noOCSPResponder(let position, let subject):
                return "certificate \(position) (\(subject)) names no OCSP responder in its Authority Information Access, "
                    + "so its revocation cannot be checked (revocation_check = ocsp)"
            }
        }
    }

    static func timestamp(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: date)
    }
}
