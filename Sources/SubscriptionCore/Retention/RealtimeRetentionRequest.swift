import Foundation

/// Apple's real-time Retention Messaging request, decoded from the `signedPayload` it POSTs
/// (a JWS like a notification's) when a subscriber opens the cancellation sheet.
public struct RealtimeRetentionRequest: Equatable, Sendable {
    public var originalTransactionId: String
    public var appAppleId: Int64
    public var productId: String
    public var userLocale: String?
    public var requestIdentifier: String
    public var environment: String
    public var signedDate: Millis

    public init(originalTransactionId: String, appAppleId: Int64, productId: String, userLocale: String?,
                requestIdentifier: String, environment: String, signedDate: Millis) {
        self.originalTransactionId = originalTransactionId
        self.appAppleId = appAppleId
        self.productId = productId
        self.userLocale = userLocale
        self.requestIdentifier = requestIdentifier
        self.environment = environment
        self.signedDate = signedDate
    }

    /// Every field but `userLocale` is required; a missing or mistyped one is an error naming it.
    public init(json: JSONFields) throws {
        guard let appAppleId = try json.int64("appAppleId") else {
            throw DecodingFault(path: json.fieldPath("appAppleId"), problem: "is missing")
        }
        guard let signedDate = try json.millis("signedDate") else {
            throw DecodingFault(path: json.fieldPath("signedDate"), problem: "is missing")
        }
        self.init(originalTransactionId: try json.requiredString("originalTransactionId"), appAppleId: appAppleId,
                  productId: try json.requiredString("productId"), userLocale: try json.string("userLocale"),
                  requestIdentifier: try json.requiredString("requestIdentifier"), environment: try json.requiredString("environment"),
                  signedDate: signedDate)
    }
}
