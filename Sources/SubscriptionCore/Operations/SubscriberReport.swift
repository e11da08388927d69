import Foundation

/// What support sees of one subscriber: each subscription's state as of now, with its timeline.
public struct SubscriberReport: Sendable {
    public var subscriber: Subscriber
    public var subscriptions: [SubscriptionReport]
}

public struct SubscriptionReport: Sendable {
    /// Apple-derived state as of the report's `now`.
    public var state: SubscriptionState
    /// Entitlement after manual overrides, with Apple's beside it.
    public var entitlement: Entitlement
    public var overrides: [Override]
    public var history: SubscriptionHistory
    public var timeline: [TimelineEvent]
}

extension SubscriberReport {
    /// The report for whoever `id` names (user id, appAccountToken, originalTransactionId or
    /// transactionId), with state re-derived at `now`; nil when nothing matches.
    public static func load(store: Store, id: String, now: Millis) throws -> SubscriberReport? {
        guard let subscriber = try store.lookup(id) else { return nil }
        var reports: [SubscriptionReport] = []
        for row in try store.subscriptions(subscriberId: subscriber.id) {
            reports.append(try SubscriptionReport.load(store: store, row: row, now: now))
        }
        // The subscription the id names comes first.
        if let i = reports.firstIndex(where: { r in
            r.state.originalTransactionId == id || r.history.transactions.contains { $0.transactionId == id }
        }), i > 0 {
            reports.insert(reports.remove(at: i), at: 0)
        }
        return SubscriberReport(subscriber: subscriber, subscriptions: reports)
    }
}

extension SubscriptionReport {
    public static func load(store: Store, row: SubscriptionRow, now: Millis) throws -> SubscriptionReport {
        let otid = row.state.originalTransactionId
        let history = try store.history(originalTransactionId: otid)
        let state = StateDerivation.derive(originalTransactionId: history.originalTransactionId,
                                           transactions: history.transactions, renewal: history.renewal,
                                           events: history.events, now: now) ?? row.state
        let overrides = try store.overrides(originalTransactionIds: [otid])
        // Operator actions join the timeline: revalidations, overrides, lifts.
        let actions = try store.audit(targets: [otid]).map { a in
            TimelineEvent(date: a.at, kind: a.action.hasPrefix("override") ? "override" : a.action,
                          detail: "\(a.action.replacingOccurrences(of: "_", with: " ")) by \(a.operatorName): \(a.outcome)"
                              + (a.reason.map { " (\($0))" } ?? ""),
                          reference: "audit:\(a.id)")
        }
        return SubscriptionReport(state: state, entitlement: Entitlement.of(state, overrides: overrides, now: now),
                                  overrides: overrides, history: history,
                                  timeline: Timeline.build(transactions: history.transactions, events: history.events, extra: actions))
    }
}

// MARK: JSON

extension SubscriberReport {
    /// `{"subscriber": {...}, "subscriptions": [...]}` as `subdesk show --json` prints it.
    public func jsonObject() -> [String: Any] {
        [
            "subscriber": [
                "id": subscriber.id,
                "userId": subscriber.userId as Any? ?? NSNull(),
                "appAccountToken": subscriber.appAccountToken as Any? ?? NSNull(),
            ] as [String: Any],
            "subscriptions": subscriptions.map { $0.jsonObject() },
        ]
    }
}

extension SubscriptionReport {
    public func jsonObject() -> [String: Any] {
        var o = state.jsonObject()
        o["entitled"] = entitlement.entitled
        o["appleEntitled"] = entitlement.appleEntitled
        o["override"] = entitlement.override?.jsonObject() ?? NSNull()
        o["transactions"] = history.transactions.sorted(by: StateDerivation.purchaseOrder).map { $0.jsonObject() }
        o["renewalInfo"] = history.renewal?.jsonObject() ?? NSNull()
        o["timeline"] = timeline.map { e -> [String: Any] in
            var line: [String: Any] = ["date": DateText.iso(e.date), "kind": e.kind, "detail": e.detail]
            if let r = e.reference { line["reference"] = r }
            return line
        }
        return o
    }
}

extension SubscriptionState {
    public func jsonObject() -> [String: Any] {
        func date(_ m: Millis?) -> Any { m.map(DateText.iso) ?? NSNull() }
        func opt(_ v: Any?) -> Any { v ?? NSNull() }
        var o: [String: Any] = [
            "originalTransactionId": originalTransactionId,
            "productId": productId,
            "status": status.name,
            "statusCode": status.rawValue,
            "entitled": entitled,
            "expiresDate": date(expiresDate),
            "purchaseDate": date(purchaseDate),
            "originalPurchaseDate": date(originalPurchaseDate),
            "latestTransactionId": opt(latestTransactionId),
            "autoRenewStatus": autoRenewStatus,
            "autoRenewProductId": opt(autoRenewProductId),
            "gracePeriodExpiresDate": date(gracePeriodExpiresDate),
            "isInBillingRetryPeriod": isInBillingRetryPeriod,
            "expirationIntent": opt(expirationIntent),
            "expirationIntentMeaning": opt(expirationIntent.map(ExpirationIntent.meaning)),
            "priceIncreaseStatus": opt(priceIncreaseStatus),
            "offerType": opt(offerType),
            "offerIdentifier": opt(offerIdentifier),
            "offerDiscountType": opt(offerDiscountType),
            "isTrial": isTrial,
            "environment": environment,
            "ownershipType": ownershipType,
            "appAccountToken": opt(appAccountToken),
            "upgradedFrom": upgradedFrom,
            "revokedTransactionIds": revokedTransactionIds,
            "lastNotification": opt(lastNotificationType),
            "lastEventDate": date(lastEventDate),
        ]
        if let p = pendingChange {
            o["pendingChange"] = ["kind": p.kind, "productId": p.productId, "effectiveDate": date(p.effectiveDate)] as [String: Any]
        } else {
            o["pendingChange"] = NSNull()
        }
        return o
    }
}

/// JSON text for `--json` output: sorted keys, no escaped slashes, one trailing newline.
public enum JSONText {
    public static func render(_ object: Any) -> String {
        guard JSONSerialization.isValidJSONObject(object),
              let data = try? JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]),
              let s = String(data: data, encoding: .utf8) else { return "null" }
        return escapeInvisibles(s)
    }

    /// JSON leaves C1 controls and bidi overrides raw, and a terminal acts on them; written
    /// as \u escapes they stay the same JSON string.
    static func escapeInvisibles(_ s: String) -> String {
        guard s.unicodeScalars.contains(where: isInvisible) else { return s }
        var out = String.UnicodeScalarView()
        for scalar in s.unicodeScalars {
            if isInvisible(scalar) {
                out.append(contentsOf: String(format: "\\u%04x", scalar.value).unicodeScalars)
            } else {
                out.append(scalar)
            }
        }
        return String(out)
    }

    static func isInvisible(_ c: Unicode.Scalar) -> Bool {
        c.value >= 0x80 && ((0x80...0x9F).contains(c.value) || c.value == 0x2028 || c.value == 0x2029
            || c.properties.generalCategory == .format)
    }
}
