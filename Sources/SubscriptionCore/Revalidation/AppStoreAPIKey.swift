import Foundation

/// An App Store Connect in-app purchase key and the ids that go with it: what signs
/// the bearer token the App Store Server API requires.
public struct AppStoreAPIKey: Sendable {
    public let keyId: String
    public let issuerId: String
    public let bundleId: String
    let privateKey: ES256.PrivateKey

    /// Apple refuses tokens that live longer than an hour.
    public static let maximumLifetime: TimeInterval = 3600

    public init(keyId: String, issuerId: String, bundleId: String, privateKey: ES256.PrivateKey) throws {
        for (name, value) in [("api_key_id", keyId), ("api_issuer_id", issuerId), ("bundle_id", bundleId)]
        where value.trimmingCharacters(in: .whitespaces).isEmpty {
            throw RevalidationError.notConfigured("\(name) is empty")
        }
        self.keyId = keyId
        self.issuerId = issuerId
        self.bundleId = bundleId
        self.privateKey = privateKey
    }

    /// Loads the `.p8` file (PKCS#8 PEM). `warn` hears about a file others may read.
    public static func load(file: String, keyId: String, issuerId: String, bundleId: String,
                            warn: (String) -> Void) throws -> AppStoreAPIKey {
        let pem = try SecretFile.read(file, what: "API key", warn: warn)
        let key: ES256.PrivateKey
        do {
            key = try ES256.PrivateKey.load(pem)
        } catch {
            // The key's bytes stay out of the message; only the file and the fault are named.
            throw RevalidationError.notConfigured("API key file \(file.escapingControlCharacters()): \(error)")
        }
        return try AppStoreAPIKey(keyId: keyId, issuerId: issuerId, bundleId: bundleId, privateKey: key)
    }

    /// A signed bearer token: ES256 JWT with `kid`, and claims iss, iat, exp, aud, bid.
    public func token(now: Date = Date(), lifetime: TimeInterval = 20 * 60) throws -> String {
        let issuedAt = Int64(now.timeIntervalSince1970.rounded(.down))
        let seconds = Int64(min(max(lifetime, 1), AppStoreAPIKey.maximumLifetime))
        let header: [String: Any] = ["alg": "ES256", "kid": keyId, "typ": "JWT"]
        let claims: [String: Any] = ["iss": issuerId, "iat": issuedAt, "exp": issuedAt + seconds,
                                     "aud": "appstoreconnect-v1", "bid": bundleId]
        let input = Base64URL.encode(try Self.json(header)) + "." + Base64URL.encode(try Self.json(claims))
        let signature = try ES256.sign(message: Data(input.utf8), key: privateKey)
        return input + "." + Base64URL.encode(signature)
    }

    private static func json(_ object: [String: Any]) throws -> Data {
        try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
    }
}
