import Foundation

/// A person or account that owns subscriptions: known by the app's user id, by the
/// appAccountToken the app set at purchase, or only by its subscriptions.
public struct Subscriber: Equatable, Sendable {
    public var id: Int64
    public var userId: String?
    public var appAccountToken: String?
}

/// A notification as stored: its summary plus the raw body, byte for byte.
public struct StoredNotification: Equatable, Sendable {
    public var event: NotificationEvent
    public var receivedDate: Millis
    public var bodySHA256: String
    public var body: Data
    public var source: String?
    /// The ownership of the notification's transaction (PURCHASED, FAMILY_SHARED), for counting apart.
    public var ownership: OwnershipType? = nil
    /// The app the body was signed for: its bundle id.
    public var bundleId: String? = nil

    /// Package-wide for the store generator, which stores notifications without intake.
    package init(event: NotificationEvent, receivedDate: Millis, bodySHA256: String, body: Data, source: String?,
                 ownership: OwnershipType? = nil, bundleId: String? = nil) {
        self.bundleId = bundleId
        self.event = event
        self.receivedDate = receivedDate
        self.bodySHA256 = bodySHA256
        self.body = body
        self.source = source
        self.ownership = ownership
    }
}

/// A rejected body, kept with the reason it was refused.
public struct QuarantineEntry: Equatable, Sendable {
    public var id: Int64
    public var receivedDate: Millis
    public var reason: String
    public var body: Data
    public var source: String?
    /// Set once a replay stored the body or found it a duplicate.
    public var resolved: Millis? = nil
    public var resolution: String? = nil
    /// The body's true length; `body` holds less when it was over the size limit (a prefix)
    /// or arrived past the quarantine's budget (nothing).
    public var bodyBytes: Int = 0
    /// How many times this body was refused for this reason, and when it was last.
    public var timesSeen: Int = 1
    public var lastSeen: Millis = 0
    /// What kind of refusal it was, as intake stated it (for rows stored before intake
    /// stated it, as their reason's words gave it).
    public var kind: RejectionClass = .other
    /// The bundle id the body was signed for, when intake could read it.
    public var bundleId: String? = nil

    /// Whether `body` is the whole body, so a replay can ingest it.
    public var isBodyWhole: Bool { body.count >= bodyBytes }
}

/// One body's intake outcome, as the live feed shows it.
public struct IntakeLogEntry: Equatable, Sendable {
    public enum Result: String, Sendable { case stored, duplicate, rejected }
    public var id: Int64
    public var receivedDate: Millis
    public var result: Result
    public var notificationUUID: String?
    public var type: String?
    public var subtype: String?
    public var originalTransactionId: String?
    public var productId: String?
    public var environment: String?
    public var detail: String?
    /// Where the body came from, as intake was told (`backfill`, `simulate`, a CGI's address…).
    public var source: String?
    /// A refusal's kind; nil for a body stored or found a duplicate.
    public var rejection: RejectionClass?
    /// The app the entry is about: its notification's bundle id, else its subscription's
    /// (nil for a refused body, which neither names).
    public var bundleId: String? = nil

    public init(id: Int64 = 0, receivedDate: Millis, result: Result, notificationUUID: String? = nil,
                type: String? = nil, subtype: String? = nil, originalTransactionId: String? = nil,
                productId: String? = nil, environment: String? = nil, detail: String? = nil, source: String? = nil,
                rejection: RejectionClass? = nil) {
        self.source = source
        self.rejection = rejection
        self.id = id
        self.receivedDate = receivedDate
        self.result = result
        self.notificationUUID = notificationUUID
        self.type = type
        self.subtype = subtype
        self.originalTransactionId = originalTransactionId
        self.productId = productId
        self.environment = environment
        self.detail = detail
    }
}

/// Everything stored about one subscription, from which its state is derived.
public struct SubscriptionHistory: Sendable {
    public var originalTransactionId: String
    public var transactions: [TransactionRecord]
    public var renewal: RenewalRecord?
    public var events: [NotificationEvent]
    /// The real-time retention requests the responder answered for it, oldest first.
    public var realtime: [RealtimeRetentionAnswer] = []
}

/// A row of the subscribers list: one subscription and who owns it.
public struct SubscriptionRow: Equatable, Sendable {
    public var subscriber: Subscriber
    public var state: SubscriptionState
}
