import Foundation

/// Makes App Store–shaped compact JWS: ES256 with the signing chain in
/// `x5c`. For the demo store, `subdesk simulate` and tests, signing with the
/// TEST ONLY CA in `sample-data/test-ca`; Apple's own keys are never here.
public final class JWSSigner: @unchecked Sendable {
    /// DER certificates as sent in `x5c`: leaf, intermediate, root.
    public let chain: [Data]
    private let key: ES256.PrivateKey
    private let encodedHeader: String

    /// - Parameters:
    ///   - privateKeyPEM: the P-256 key that signs (PKCS#8 or SEC 1 PEM).
    ///   - chain: DER certificates, leaf first. The key is deliberately not
    ///     matched against the leaf, so tests can make wrongly signed data.
    public convenience init(privateKeyPEM: Data, chain: [Data]) throws {
        try self.init(key: ES256.PrivateKey(pem: privateKeyPEM), chain: chain)
    }

    public init(key: ES256.PrivateKey, chain: [Data]) throws {
        guard !chain.isEmpty else { throw JWSSignerError.emptyChain }
        for (index, der) in chain.enumerated() {
            do {
                _ = try X509Certificate(der: der)
            } catch let error as CertificateParseError {
                throw JWSSignerError.chainEntryNotCertificate(index: index, reason: error.description)
            }
        }
        self.key = key
        self.chain = chain
        // Written by hand to fix the member order to Apple's: alg, then x5c.
        let x5c = chain.map { "\"\($0.base64EncodedString())\"" }.joined(separator: ",")
        encodedHeader = Base64URL.encode(Data("{\"alg\":\"ES256\",\"x5c\":[\(x5c)]}".utf8))
    }

    /// Signs `payload` (JSON bytes) and returns `header.payload.signature`.
    public func sign(payload: Data) throws -> String {
        let signingInput = encodedHeader + "." + Base64URL.encode(payload)
        let signature = try ES256.sign(message: Data(signingInput.utf8), key: key)
        return signingInput + "." + Base64URL.encode(signature)
    }

    /// Loads the TEST ONLY CA laid out as in `sample-data/test-ca`:
    /// `leaf-key.pem`, `leaf.der`, `intermediate.der`, `root.der`.
    public static func testCA(directory: String) throws -> JWSSigner {
        let base = URL(fileURLWithPath: directory, isDirectory: true)
        func read(_ name: String) throws -> Data {
            let url = base.appendingPathComponent(name)
            guard FileManager.default.fileExists(atPath: url.path) else {
                throw JWSSignerError.missingFile(path: url.path)
            }
            do {
                return try Data(contentsOf: url)
            } catch {
                throw JWSSignerError.unreadableFile(path: url.path, reason: error.localizedDescription)
            }
        }
        let keyPEM = try read("leaf-key.pem")
        let chain = try ["leaf.der", "intermediate.der", "root.der"].map(read)
        return try JWSSigner(privateKeyPEM: keyPEM, chain: chain)
    }
}

/// Why a `JWSSigner` could not be made.
public enum JWSSignerError: Error, CustomStringConvertible, Equatable {
    case emptyChain
    case chainEntryNotCertificate(index: Int, reason: String)
    case missingFile(path: String)
    case unreadableFile(path: String, reason: String)

    public var description: String {
        switch self {
        case .emptyChain: return "JWS signer: no certificates given for x5c"
        case .chainEntryNotCertificate(let index, let reason): return "JWS signer: chain[\(index)] is not a certificate: \(reason)"
        case .missingFile(let path): return "JWS signer: \(path): no such file"
        case .unreadableFile(let path, let reason): return "JWS signer: \(path): cannot be read (\(reason))"
        }
    }
}
