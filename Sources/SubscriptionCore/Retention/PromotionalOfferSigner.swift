import Foundation

/// Mints promotional offers' V2 signatures for one app with its dedicated offer key (an
/// In-App Purchase key used for nothing else, so it can be revoked alone): a JWS, ES256,
/// header `kid`; claims `iss`, `iat`, `aud` "promotional-offer", `bid`, `nonce`,
/// `productId`, `offerIdentifier` and `transactionId`.
public struct PromotionalOfferSigner: Sendable {
    public static let audience = "promotional-offer"
    public let keyId: String
    public let issuerId: String
    public let bundleId: String
    let privateKey: ES256.PrivateKey

    public init(keyId: String, issuerId: String, bundleId: String, privateKey: ES256.PrivateKey) {
        self.keyId = keyId
        self.issuerId = issuerId
        self.bundleId = bundleId
        self.privateKey = privateKey
    }

    /// Reads the key `settings` names (a `.p8`); an error names the file, never the key's bytes.
    public static func load(_ settings: AppStoreKeySettings, bundleId: String, warn: (String) -> Void) throws -> PromotionalOfferSigner {
        let pem = try SecretFile.read(settings.keyFile, what: "offer key", warn: warn)
        do {
            return PromotionalOfferSigner(keyId: settings.keyId, issuerId: settings.issuerId, bundleId: bundleId,
                                          privateKey: try ES256.PrivateKey.load(pem))
        } catch {
            throw ConfigurationError("offer key file \(settings.keyFile.escapingControlCharacters()): \(error)")
        }
    }

    /// The signature for `offerIdentifier` of `productId`, bound to the subscription's
    /// `transactionId` (Apple requires the request's originalTransactionId).
    public func sign(productId: String, offerIdentifier: String, transactionId: String, now: Date = Date(),
                     nonce: String = UUID().uuidString.lowercased()) throws -> String {
        let header: [String: Any] = ["alg": "ES256", "kid": keyId, "typ": "JWT"]
        let claims: [String: Any] = ["iss": issuerId, "iat": Int64(now.timeIntervalSince1970.rounded(.down)), "aud": Self.audience,
                                     "bid": bundleId, "nonce": nonce, "productId": productId, "offerIdentifier": offerIdentifier,
                                     "transactionId": transactionId]
        let options: JSONSerialization.WritingOptions = [.sortedKeys, .withoutEscapingSlashes]
        let input = Base64URL.encode(try JSONSerialization.data(withJSONObject: header, options: options)) + "."
            + Base64URL.encode(try JSONSerialization.data(withJSONObject: claims, options: options))
        return input + "." + Base64URL.encode(try ES256.sign(message: Data(input.utf8), key: privateKey))
    }
}
