import SubscriptionCore

/// The `o` dialog: an override to place on, or lift from, the subscription on screen.
///
/// Only what the operator typed lives here; turning it into an `OverrideRequest`
/// (parsing the date, checking the override number) is the reducer's, so the same
/// checks run whatever the terminal.
public struct OverrideDialogState: Equatable, Sendable {
    public enum Action: String, CaseIterable, Sendable {
        case grant, revoke, lift
    }

    public enum Field: Equatable, Sendable {
        case action, overrideNumber, until, reason
    }

    /// Where keys go: a field, or one of the two buttons.
    public enum Focus: Equatable, Sendable {
        case field(Field)
        case confirm
        case cancel
    }

    public var originalTransactionId: String
    public var action: Action
    public var overrideNumber: String
    public var until = ""
    public var reason = ""
    public var focus: Focus = .field(.action)
    /// What was wrong the last time Confirm was pressed; cleared by editing.
    public var error: String?
    /// A checked request waiting for y or n.
    public var pending: OverrideRequest?
    /// Whether an override is in force to lift: without one, lift is not offered.
    public var canLift = true

    /// The actions the dialog offers, in the order ←/→ go through them.
    public var actions: [Action] { canLift ? Action.allCases : [.grant, .revoke] }

    public init(originalTransactionId: String, action: Action = .grant, overrideNumber: String = "") {
        self.originalTransactionId = originalTransactionId
        self.action = action
        self.overrideNumber = overrideNumber
    }

    /// The fields the chosen action uses, top to bottom: lifting names an override, the others a date.
    public var fields: [Field] {
        action == .lift ? [.action, .overrideNumber, .reason] : [.action, .until, .reason]
    }

    /// Tab order.
    var stops: [Focus] { fields.map(Focus.field) + [.confirm, .cancel] }
}

/// An override action the operator confirmed, for the runtime to carry out through `Operations`.
public struct OverrideRequest: Equatable, Sendable {
    public enum Kind: Equatable, Sendable {
        case grant(until: Millis)
        /// nil: until lifted.
        case revoke(until: Millis?)
        case lift(overrideId: Int64)
    }

    public var originalTransactionId: String
    public var kind: Kind
    public var reason: String

    public init(originalTransactionId: String, kind: Kind, reason: String) {
        self.originalTransactionId = originalTransactionId
        self.kind = kind
        self.reason = reason
    }
}

/// The `:audit` screen: operator actions, newest first.
public struct AuditState: Sendable {
    public var entries: [AuditEntry] = []
    /// A target id (or user id, token, transaction id) the entries must be about; empty for all.
    public var filter = ""
    public var selection = 0
    public var scrollOffset = 0
    public var loaded = false

    /// The most entries the screen loads; the command line's `subdesk audit` reaches further back.
    public static let limit = 500

    public init() {}
}
