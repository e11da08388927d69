import Foundation

/// The certificates a signed payload's chain may end at. Only these confer
/// trust; a root that arrives inside the payload (x5c[2]) never does.
public struct TrustRoots: Sendable {
    public let certificates: [X509Certificate]

    /// Each root's subject, end of validity and short fingerprint, for the on-call
    /// checks: two roots of one subject (a root and its successor) stay two.
    public var expiries: [(subject: String, notAfter: Date, fingerprint: String)] {
        certificates.map { (subject: $0.subjectSummary, notAfter: $0.notAfter, fingerprint: $0.shortFingerprint) }
    }

    public init(certificates: [X509Certificate]) {
        self.certificates = certificates
    }

    /// Apple Root CA - G3 only: what production and sandbox App Store data
    /// chains to.
    public static let appleDefault: TrustRoots = {
        guard let der = Data(base64Encoded: appleRootCAG3Base64, options: .ignoreUnknownCharacters),
              let root = try? X509Certificate(der: der) else {
            preconditionFailure("the embedded Apple Root CA - G3 no longer parses; the source was damaged")
        }
        return TrustRoots(certificates: [root])
    }()

    /// Loads roots from files, each holding one DER certificate or PEM text
    /// with one or more certificates.
    public init(files: [String]) throws {
        guard !files.isEmpty else { throw TrustRootsError.noFiles }
        var certificates: [X509Certificate] = []
        for path in files {
            certificates += try TrustRoots.load(path)
        }
        self.init(certificates: certificates)
    }

    private static func load(_ path: String) throws -> [X509Certificate] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw TrustRootsError.missing(path: path)
        }
        guard !isDirectory.boolValue else {
            throw TrustRootsError.unreadable(path: path, reason: "is a directory")
        }
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw TrustRootsError.unreadable(path: path, reason: Self.reason(error))
        }
        guard !data.isEmpty else { throw TrustRootsError.notACertificate(path: path, reason: "file is empty") }
        do {
            return try X509Certificate.load(data)
        } catch let error as CertificateParseError {
            throw TrustRootsError.notACertificate(path: path, reason: error.description)
        }
    }

    private static func reason(_ error: Error) -> String {
        let nsError = error as NSError
        if let underlying = nsError.userInfo[NSUnderlyingErrorKey] as? NSError,
           underlying.domain == NSPOSIXErrorDomain,
           let message = strerror(Int32(underlying.code)) {
            return String(cString: message)
        }
        return nsError.localizedDescription
    }
}

/// Why configured trust roots could not be loaded; each names the file.
public enum TrustRootsError: Error, CustomStringConvertible, Equatable {
    case noFiles
    case missing(path: String)
    case unreadable(path: String, reason: String)
    case notACertificate(path: String, reason: String)

    public var description: String {
        switch self {
        case .noFiles:
            return "trust roots: no certificate files given"
        case .missing(let path):
            return "trust root \(path.escapingControlCharacters()): no such file"
        case .unreadable(let path, let reason):
            return "trust root \(path.escapingControlCharacters()): cannot be read (\(reason))"
        case .notACertificate(let path, let reason):
            return "trust root \(path.escapingControlCharacters()): not a certificate: \(reason)"
        }
    }
}
