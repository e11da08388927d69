/// What subdesk remembers of one stored notification for state and timelines.
public struct NotificationEvent: Equatable, Sendable {
    public var notificationUUID: String
    /// 1 for legacy JSON notifications, 2 for signed ones.
    public var version: Int
    /// Apple's type and subtype, as they came: a value the table of meanings
    /// (`NotificationMeanings`) does not know is kept and shown all the same.
    public var type: NotificationType
    public var subtype: NotificationSubtype?
    public var signedDate: Millis
    public var originalTransactionId: String?
    public var transactionId: String?
    public var productId: String?
    public var environment: String?
    /// The end of the billing grace period Apple signed in the renewal info this notification
    /// carried (`gracePeriodExpiresDate`), if it carried one: kept with the notification, so
    /// a gap's grace is known after later renewal info replaced the stored one.
    public var graceExpires: Millis?
    /// Whether auto-renew was on, and the product it renews into, in the renewal info this
    /// notification carried (`autoRenewStatus`, `autoRenewProductId`), if it carried one: what
    /// a real-time retention save is read from (`RealtimeSave`), kept with the notification as
    /// the grace period end is.
    public var autoRenew: Bool?
    public var autoRenewProductId: String?

    public init(notificationUUID: String, version: Int, type: NotificationType, subtype: NotificationSubtype?, signedDate: Millis,
                originalTransactionId: String?, transactionId: String?, productId: String?, environment: String?,
                graceExpires: Millis? = nil, autoRenew: Bool? = nil, autoRenewProductId: String? = nil) {
        self.notificationUUID = notificationUUID
        self.version = version
        self.type = type
        self.subtype = subtype
        self.signedDate = signedDate
        self.originalTransactionId = originalTransactionId
        self.transactionId = transactionId
        self.productId = productId
        self.environment = environment
        self.graceExpires = graceExpires
        self.autoRenew = autoRenew
        self.autoRenewProductId = autoRenewProductId
    }

    /// `TYPE/SUBTYPE`, or `TYPE` alone.
    public var typeAndSubtype: String {
        if let subtype, !subtype.rawValue.isEmpty { return "\(type.rawValue)/\(subtype.rawValue)" }
        return type.rawValue
    }

    /// A stable order: by signing time, then by UUID.
    public static func chronological(_ a: NotificationEvent, _ b: NotificationEvent) -> Bool {
        a.signedDate != b.signedDate ? a.signedDate < b.signedDate : a.notificationUUID < b.notificationUUID
    }
}
