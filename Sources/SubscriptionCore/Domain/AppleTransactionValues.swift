/// Apple's closed sets on a transaction, each a value that keeps a raw value Apple adds later
/// as sent (as `NotificationType` does): compared by value, never by its text. `description`
/// is the raw value, so a record's content key (`RecordVersionOrder.contentKey`) and anything
/// printed read as Apple's field did.

/// `inAppOwnershipType`: whether the customer bought the product or a family member shares it.
public struct OwnershipType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    public static let purchased = OwnershipType(rawValue: "PURCHASED")
    public static let familyShared = OwnershipType(rawValue: "FAMILY_SHARED")
}

/// `transactionReason`: whether the customer bought it or Apple renewed it.
public struct TransactionReason: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    public static let purchase = TransactionReason(rawValue: "PURCHASE")
    public static let renewal = TransactionReason(rawValue: "RENEWAL")
}

/// `revocationReason` (a version 1 receipt's `cancellation_reason`): why the App Store
/// refunded or revoked a transaction.
public struct RevocationReason: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    public var description: String { String(rawValue) }

    /// 0: refunded for another reason (an accidental purchase, say).
    public static let other = RevocationReason(rawValue: 0)
    /// 1: refunded for an actual or perceived issue in the app.
    public static let issueInApp = RevocationReason(rawValue: 1)

    /// How the timeline and the detail say it (every reason but 1 is "other", as Apple's
    /// documentation reads).
    public var words: String { self == .issueInApp ? "issue in the app" : "other" }
    /// The detail's short form.
    public var shortWords: String { self == .issueInApp ? "app issue" : "other reason" }
}
