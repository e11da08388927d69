/// A renewal-date extension asked of Apple, as the store keeps it.
public struct RenewalExtension: Equatable, Sendable {
    public var id: Int64
    public var requestIdentifier: String
    /// nil for an extension of every active subscriber of `productId`.
    public var originalTransactionId: String?
    public var productId: String?
    public var storefronts: [String]
    public var days: Int
    public var reasonCode: Int
    public var reason: String
    public var operatorName: String
    public var requested: Millis
    /// `extended`, `refused: ...`, `pending` or `complete`.
    public var outcome: String
    public var effective: Millis?
    public var succeeded: Int?
    public var failed: Int?
    public var completed: Millis?
}
