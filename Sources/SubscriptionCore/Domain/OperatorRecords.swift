import Foundation

/// JSON null for report dictionaries.
enum NSNullValue { static let null = NSNull() }

/// A manual override of entitlement, beside (never instead of) the Apple-derived state.
public struct Override: Equatable, Sendable {
    public enum Kind: String, Sendable { case grant, revoke }
    public var id: Int64
    public var originalTransactionId: String
    public var kind: Kind
    /// When it stops applying; nil for a revoke without end.
    public var until: Millis?
    public var reason: String
    public var operatorName: String
    public var created: Millis
    public var lifted: Millis?
    public var liftedBy: String?
    public var liftReason: String?

    /// Whether it decides entitlement at `now`.
    public func isInForce(at now: Millis) -> Bool {
        lifted == nil && created <= now && (until.map { now < $0 } ?? true)
    }

    public var entitles: Bool { kind == .grant }

    public func jsonObject() -> [String: Any] {
        ["id": id, "originalTransactionId": originalTransactionId, "kind": kind.rawValue,
         "until": until.map(DateText.iso) as Any? ?? NSNullValue.null, "reason": reason, "operator": operatorName,
         "created": DateText.iso(created), "lifted": lifted.map(DateText.iso) as Any? ?? NSNullValue.null,
         "liftedBy": liftedBy as Any? ?? NSNullValue.null, "liftReason": liftReason as Any? ?? NSNullValue.null]
    }
}

/// One line of the audit log: who did what to which target, why, and what came of it.
public struct AuditEntry: Equatable, Sendable {
    public var id: Int64
    public var at: Millis
    public var operatorName: String
    /// The action's text as stored: an `AuditAction`'s raw value, or one a newer subdesk wrote.
    public var action: String
    public var target: String?
    public var reason: String?
    public var outcome: String
    public var detail: String?
    /// The app of the record its target names (a subscription or a notification), when it
    /// was read with it (`store.audit.entries(readsApp:)`).
    public var bundleId: String? = nil

    /// An entry to write: its action one of `AuditAction`'s.
    public init(id: Int64 = 0, at: Millis, operatorName: String, action: AuditAction, target: String?, reason: String?,
                outcome: String, detail: String? = nil) {
        self.init(id: id, at: at, operatorName: operatorName, actionText: action.rawValue, target: target, reason: reason,
                  outcome: outcome, detail: detail)
    }

    /// An entry as read from the store, its action's text as it is there.
    init(id: Int64, at: Millis, operatorName: String, actionText action: String, target: String?, reason: String?,
         outcome: String, detail: String?) {
        self.id = id
        self.at = at
        self.operatorName = operatorName
        self.action = action
        self.target = target
        self.reason = reason
        self.outcome = outcome
        self.detail = detail
    }

    /// The action, when this subdesk knows it.
    public var kind: AuditAction? { AuditAction(rawValue: action) }

    public func jsonObject() -> [String: Any] {
        ["id": id, "at": DateText.iso(at), "operator": operatorName, "action": action,
         "target": target as Any? ?? NSNullValue.null, "reason": reason as Any? ?? NSNullValue.null, "outcome": outcome,
         "detail": detail as Any? ?? NSNullValue.null]
    }
}
