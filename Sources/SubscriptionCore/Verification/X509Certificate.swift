import Foundation
import COpenSSL

/// An X.509 certificate parsed by libcrypto, immutable once made.
public final class X509Certificate: @unchecked Sendable {
    /// The `X509*`; owned, freed in `deinit`. libcrypto's certificate objects
    /// lock their lazily computed caches, so concurrent reads are safe.
    let pointer: OpaquePointer
    /// The certificate's DER encoding, exactly as it was received.
    public let der: Data
    public let notBefore: Date
    public let notAfter: Date
    /// `CN=…, OU=…, O=…, C=…` in the certificate's own order, control
    /// characters escaped.
    public let subjectSummary: String
    public let issuerSummary: String

    /// Parses one DER certificate; trailing bytes after it are an error.
    public convenience init(der: Data) throws {
        let parsed = der.withUnsafeBytes { raw -> (OpaquePointer?, Int) in
            guard let base = raw.bindMemory(to: UInt8.self).baseAddress else { return (nil, 0) }
            var cursor: UnsafePointer<UInt8>? = base
            let certificate = d2i_X509(nil, &cursor, raw.count)
            return (certificate, cursor.map { $0 - base } ?? 0)
        }
        guard let certificate = parsed.0 else {
            throw CertificateParseError.notDER(reason: OpenSSL.takeErrors())
        }
        guard parsed.1 == der.count else {
            X509_free(certificate)
            throw CertificateParseError.trailingBytes(count: der.count - parsed.1)
        }
        try self.init(taking: certificate, der: der)
    }

    /// Takes ownership of `certificate`, freeing it if it cannot be described.
    init(taking certificate: OpaquePointer, der: Data) throws {
        guard let notBefore = OpenSSL.date(X509_get0_notBefore(certificate)),
              let notAfter = OpenSSL.date(X509_get0_notAfter(certificate)) else {
            X509_free(certificate)
            throw CertificateParseError.unreadableValidity
        }
        self.pointer = certificate
        self.der = der
        self.notBefore = notBefore
        self.notAfter = notAfter
        self.subjectSummary = X509Certificate.summary(of: X509_get_subject_name(certificate))
        self.issuerSummary = X509Certificate.summary(of: X509_get_issuer_name(certificate))
    }

    deinit { X509_free(pointer) }

    /// Parses every certificate in `data`, which holds either one DER
    /// certificate or PEM text with one or more `CERTIFICATE` blocks.
    public static func load(_ data: Data) throws -> [X509Certificate] {
        if data.range(of: Data("-----BEGIN".utf8)) != nil {
            return try loadPEM(data)
        }
        return [try X509Certificate(der: data)]
    }

    /// Parses every `CERTIFICATE` block in PEM text, in order.
    public static func loadPEM(_ data: Data) throws -> [X509Certificate] {
        OpenSSL.clearErrors()
        let certificates = try OpenSSL.withMemoryBIO(data) { bio -> [X509Certificate] in
            var found: [X509Certificate] = []
            while let certificate = PEM_read_bio_X509(bio, nil, nil, nil) {
                found.append(try X509Certificate(taking: certificate, der: try derEncoding(of: certificate)))
            }
            // The loop always ends on an error: running out of PEM blocks is
            // the expected one, anything else means a block was damaged.
            let code = ERR_peek_last_error()
            let reason = OpenSSL.takeErrors()
            let ranOut = ERR_GET_LIB(code) == ERR_LIB_PEM && ERR_GET_REASON(code) == PEM_R_NO_START_LINE
            if code != 0 && !ranOut { throw CertificateParseError.badPEM(reason: reason) }
            return found
        }
        guard let certificates else { throw CertificateParseError.badPEM(reason: OpenSSL.takeErrors()) }
        guard !certificates.isEmpty else { throw CertificateParseError.noPEMCertificate }
        return certificates
    }

    /// SHA-256 of the DER encoding: the certificate's usual fingerprint.
    public var sha256: Data { ContentDigest.sha256(der) }

    /// The first 16 hex digits (64 bits) of `sha256`: enough to tell a root from its
    /// successor of the same subject, short enough for a label.
    public var shortFingerprint: String { String(ContentDigest.sha256Hex(der).prefix(16)) }

    /// Whether the certificate has an extension with this dotted OID, critical
    /// or not, whatever its value.
    public func hasExtension(oid: String) -> Bool {
        guard let object = OBJ_txt2obj(oid, 1) else {
            OpenSSL.clearErrors()
            return false
        }
        defer { ASN1_OBJECT_free(object) }
        return X509_get_ext_by_OBJ(pointer, object, -1) >= 0
    }

    /// Whether the validity period contains `date` (bounds included, as
    /// libcrypto counts them).
    public func isValid(at date: Date) -> Bool {
        notBefore <= date && date <= notAfter
    }

    private static func derEncoding(of certificate: OpaquePointer) throws -> Data {
        let length = i2d_X509(certificate, nil)
        guard length > 0 else {
            X509_free(certificate)
            throw CertificateParseError.notDER(reason: OpenSSL.takeErrors())
        }
        var bytes = [UInt8](repeating: 0, count: Int(length))
        _ = bytes.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor = buffer.baseAddress
            return i2d_X509(certificate, &cursor)
        }
        return Data(bytes)
    }

    private static func summary(of name: OpaquePointer?) -> String {
        guard let name else { return "" }
        var parts: [String] = []
        for index in 0..<X509_NAME_entry_count(name) {
            guard let entry = X509_NAME_get_entry(name, index) else { continue }
            let nid = OBJ_obj2nid(X509_NAME_ENTRY_get_object(entry))
            let key = OBJ_nid2sn(nid).map { String(cString: $0) } ?? "?"
            var utf8: UnsafeMutablePointer<UInt8>?
            let length = ASN1_STRING_to_UTF8(&utf8, X509_NAME_ENTRY_get_data(entry))
            guard length >= 0, let utf8 else {
                OpenSSL.clearErrors()
                parts.append("\(key)=?")
                continue
            }
            let value = String(decoding: UnsafeBufferPointer(start: utf8, count: Int(length)), as: UTF8.self)
            subdesk_openssl_free(utf8)
            parts.append("\(key)=\(value.escapingControlCharacters())")
        }
        return parts.joined(separator: ", ")
    }
}

/// Why bytes could not be read as a certificate.
public enum CertificateParseError: Error, CustomStringConvertible, Equatable {
    case notDER(reason: String)
    case trailingBytes(count: Int)
    case noPEMCertificate
    case badPEM(reason: String)
    case unreadableValidity

    public var description: String {
        switch self {
        case .notDER(let reason): return "not a DER certificate (\(reason))"
        case .trailingBytes(let count): return "DER certificate followed by \(count) unexpected bytes"
        case .noPEMCertificate: return "PEM text holds no CERTIFICATE block"
        case .badPEM(let reason): return "damaged PEM CERTIFICATE block (\(reason))"
        case .unreadableValidity: return "certificate validity dates cannot be read"
        }
    }
}
