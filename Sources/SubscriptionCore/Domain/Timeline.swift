/// One line of a subscription's timeline.
public struct TimelineEvent: Equatable, Sendable {
    /// What a line is: a transaction's place in the history, a refund or revocation, a
    /// notification, or an operator's action from the audit log (an override placed or
    /// lifted, or another action by its text: revalidate, extend, ...).
    public enum Kind: Hashable, Sendable, CustomStringConvertible {
        case purchase, renewal, upgrade, productChange, refund, revoke, notification, override
        case operatorAction(String)

        /// The word shown and printed for it.
        public var rawValue: String {
            switch self {
            case .purchase: return "purchase"
            case .renewal: return "renewal"
            case .upgrade: return "upgrade"
            case .productChange: return "product_change"
            case .refund: return "refund"
            case .revoke: return "revoke"
            case .notification: return "notification"
            case .override: return "override"
            case .operatorAction(let action): return action
            }
        }

        public var description: String { rawValue }

        /// An audit entry's line: overrides placed and lifted as one kind, any other action by its text.
        public static func of(_ entry: AuditEntry) -> Kind {
            switch entry.kind {
            case .overrideGrant?, .overrideRevoke?, .overrideLift?: return .override
            default: return .operatorAction(entry.action)
            }
        }
    }

    public var date: Millis
    public var kind: Kind
    public var detail: String
    /// What the line can expand to: a transaction id, a notification UUID, an audit id.
    public var reference: String?
    /// A notification's line: its type and subtype, as values (the detail is their words).
    public var notificationType: NotificationType?
    public var notificationSubtype: NotificationSubtype?

    public init(date: Millis, kind: Kind, detail: String, reference: String? = nil,
                notificationType: NotificationType? = nil, notificationSubtype: NotificationSubtype? = nil) {
        self.date = date
        self.kind = kind
        self.detail = detail
        self.reference = reference
        self.notificationType = notificationType
        self.notificationSubtype = notificationSubtype
    }
}

/// Builds a subscription's timeline from its history, oldest first.
public enum Timeline {
    public static func build(transactions: [TransactionRecord], events: [NotificationEvent],
                             extra: [TimelineEvent] = [], meanings: NotificationMeanings = .standard) -> [TimelineEvent] {
        let ordered = transactions.sorted(by: StateDerivation.purchaseOrder)
        let superseded = StateDerivation.replacedByUpgrade(ordered, events: events, meanings: meanings)
        var lines: [TimelineEvent] = []
        var previous: TransactionRecord?
        for t in ordered {
            let kind: TimelineEvent.Kind
            if let p = previous {
                if p.productId == t.productId { kind = .renewal }
                else if superseded.contains(p.transactionId) { kind = .upgrade }
                else { kind = .productChange }
            } else {
                kind = .purchase
            }
            lines.append(TimelineEvent(date: t.purchaseDate, kind: kind, detail: describe(t), reference: t.transactionId))
            if let revoked = t.revocationDate {
                let what: TimelineEvent.Kind = t.isFamilyShared ? .revoke : .refund
                let reason = t.revocationReason.map { ", reason: " + $0.words } ?? ""
                lines.append(TimelineEvent(date: revoked, kind: what,
                                           detail: "transaction \(t.transactionId) \(t.productId)\(reason)",
                                           reference: t.transactionId))
            }
            previous = t
        }
        for e in events {
            var detail = e.typeAndSubtype
            if let product = e.productId { detail += "  \(product)" }
            if e.version == 1 { detail += "  (V1)" }
            lines.append(TimelineEvent(date: e.signedDate, kind: .notification, detail: detail, reference: e.notificationUUID,
                                       notificationType: e.type, notificationSubtype: e.subtype))
        }
        lines.append(contentsOf: extra)
        return lines.enumerated().sorted { a, b in
            a.element.date != b.element.date ? a.element.date < b.element.date : a.offset < b.offset
        }.map(\.element)
    }

    static func describe(_ t: TransactionRecord) -> String {
        var parts = [t.productId]
        if let price = t.price, let currency = t.currency {
            parts.append(Money.format(milliunits: price, currency: currency))
        }
        if let offer = offerDescription(type: t.offerType, discount: t.offerDiscountType, identifier: t.offerIdentifier) {
            parts.append(offer)
        }
        if let expires = t.expiresDate { parts.append("until \(DateText.minute(expires))") }
        if t.isFamilyShared { parts.append("family shared") }
        if t.environment != .production { parts.append(t.environment.rawValue) }
        return parts.joined(separator: "  ")
    }

    /// `free trial`, `intro pay as you go`, `promotional offer X`...
    public static func offerDescription(type offer: OfferType?, discount: String?, identifier: String?) -> String? {
        guard let offer else { return nil }
        let discountText = discount.map { d -> String in
            switch d {
            case "FREE_TRIAL": return "free trial"
            case "PAY_AS_YOU_GO": return "pay as you go"
            case "PAY_UP_FRONT": return "pay up front"
            default: return d.lowercased()
            }
        }
        switch offer {
        case .introductory: return discountText.map { $0 == "free trial" ? $0 : "intro offer, \($0)" } ?? "intro offer"
        case .promotional, .offerCode, .winBack: return offer.words + (identifier.map { " \($0)" } ?? "")
        // A save on the cancellation sheet: which offer, and what it gave.
        case .retention: return offer.words + (identifier.map { " \($0)" } ?? "") + (discountText.map { ", \($0)" } ?? "")
        case .unknown: return offer.words
        }
    }
}
