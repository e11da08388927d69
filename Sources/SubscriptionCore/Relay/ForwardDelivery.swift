import Foundation

/// Where a delivery owed to a forward target stands.
public enum ForwardState: String, Sendable, CaseIterable {
    /// Not yet taken by the target: due at `next`, or claimed by a deliverer sending it.
    case pending
    /// The target answered 2xx.
    case delivered
    /// Given up: past the target's `max_age`, or refused by it (a 4xx but 408 and 429) too often.
    case dead
}

/// One delivery of the outbox (`forward_outbox`): a notification owed to one target.
public struct ForwardDelivery: Sendable, Equatable {
    public var id: Int64
    public var target: String
    public var notificationUUID: String
    /// The subscription whose deliveries go in order (nil: the notification concerns none).
    public var originalTransactionId: String?
    public var bundleId: String?
    public var environment: String?
    public var type: String
    /// When intake stored the notification and owed the delivery.
    public var owed: Millis
    /// Past this a failed delivery is dead (`owed` plus the target's `max_age`).
    public var giveUp: Millis
    public var state: ForwardState
    public var attempts: Int
    /// When it is next due.
    public var next: Millis
    public var delivered: Millis?
    public var lastAttempt: Millis?
    public var lastStatus: Int?
    public var lastError: String?
    /// The attempts made before it was last owed again (`forward replay`, `forward retry`):
    /// a refusal counts towards its death only from there (migration 40).
    public var roundStart: Int = 0

    /// The id every attempt and every replay of it carries (`Subdesk-Delivery`): the same
    /// notification to the same target is the same delivery.
    public var deliveryId: String { "\(notificationUUID)/\(target)" }
}

/// What became of one attempt, and what the delivery does next.
public struct ForwardAttempt: Sendable {
    public enum Next: Sendable, Equatable {
        case delivered
        case retry(at: Millis)
        case dead
    }
    public var at: Millis
    public var tookMs: Int64
    /// The target's status, nil when no answer came (timeout, connection error).
    public var status: Int?
    public var error: String?
    /// The answer's first bytes (`ForwardDeliverer.keptAnswerBytes`).
    public var answer: Data?
    public var next: Next

    public init(at: Millis, tookMs: Int64, status: Int?, error: String?, answer: Data?, next: Next) {
        self.at = at
        self.tookMs = tookMs
        self.status = status
        self.error = error
        self.answer = answer
        self.next = next
    }
}

/// One attempt as `forward_attempts` keeps it.
public struct ForwardAttemptRow: Sendable, Equatable {
    public var attempt: Int
    public var at: Millis
    public var tookMs: Int64
    public var status: Int?
    public var error: String?
    public var answer: Data?
}

/// A target's outbox, summed (`subdesk forward status`).
public struct ForwardTargetStatus: Sendable, Equatable {
    public var target: String
    public var pending = 0
    /// When the oldest pending delivery was owed.
    public var oldestPending: Millis?
    public var deliveredLastHour = 0
    /// Attempts in the last hour that got no 2xx.
    public var failedLastHour = 0
    public var dead = 0
    public var lastError: String?
    public var lastErrorAt: Millis?

    public init(target: String) { self.target = target }
}

/// Which stored notifications a replay owes again.
public struct ForwardReplaySelection: Sendable {
    /// One notification; else those received from `since` to before `until`.
    public var notificationUUID: String?
    public var since: Millis?
    public var until: Millis?
    /// Only notifications of these apps' bundle ids (nil: every app's).
    public var bundleIds: [String]?

    public init(notificationUUID: String? = nil, since: Millis? = nil, until: Millis? = nil, bundleIds: [String]? = nil) {
        self.notificationUUID = notificationUUID
        self.since = since
        self.until = until
        self.bundleIds = bundleIds
    }
}
