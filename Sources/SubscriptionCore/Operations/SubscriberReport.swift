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
    /// Apple's signed payload (JSON bytes) of each stored transaction version, by transactionId,
    /// and of the renewal info: every field Apple sent.
    public var transactionPayloads: [String: Data] = [:]
    public var renewalPayload: Data?
    /// Each notification's body as stored, oldest first, for its decoded fields.
    public var notificationBodies: [(event: NotificationEvent, body: Data)] = []
    /// RESCIND_CONSENTs naming the app download this subscription was bought from, newest first.
    public var consentWithdrawals: [ConsentWithdrawal] = []
    /// The app download's facts, when a verified app transaction is at hand (a consent
    /// withdrawal's, or one looked up at Apple).
    public var appTransaction: AppTransaction?
}

extension SubscriberReport {
    /// The report for whoever `id` names (user id, appAccountToken, originalTransactionId or
    /// transactionId), with state re-derived at `now`; nil when nothing matches.
    /// With `app`, only that app's subscriptions: none of them is no report.
    public static func load(store: Store, id: String, now: Millis, app: AppScope? = nil) throws -> SubscriberReport? {
        guard let subscriber = try store.subscribers.lookup(id) else { return nil }
        var reports: [SubscriptionReport] = []
        for row in try store.subscriptions.of(subscriberId: subscriber.id) where app?.contains(row.state.bundleId) ?? true {
            reports.append(try SubscriptionReport.load(store: store, row: row, now: now))
        }
        if app != nil && reports.isEmpty { return nil }
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
        let history = try store.subscriptions.history(originalTransactionId: otid)
        let state = StateDerivation.derive(originalTransactionId: history.originalTransactionId,
                                           transactions: history.transactions, renewal: history.renewal,
                                           events: history.events, now: now).map { derived in
            // The app the stored row carries when no transaction names one (its notifications').
            var state = derived
            state.bundleId = derived.bundleId ?? row.state.bundleId
            return state
        } ?? row.state
        let overrides = try store.overrides.list(originalTransactionIds: [otid])
        // Operator actions join the timeline: revalidations, overrides, lifts.
        let actions = try store.audit.entries(targets: [otid]).map { a in
            TimelineEvent(date: a.at, kind: .of(a),
                          detail: "\(a.action.replacingOccurrences(of: "_", with: " ")) by \(a.operatorName): \(a.outcome)"
                              + (a.reason.map { " (\($0))" } ?? ""),
                          reference: "audit:\(a.id)")
        }
        var report = SubscriptionReport(state: state, entitlement: Entitlement.of(state, overrides: overrides, now: now),
                                        overrides: overrides, history: history,
                                        timeline: Timeline.build(transactions: history.transactions, events: history.events, extra: actions))
        var bodies: [String: Data] = [:]
        for e in history.events {
            if let n = try store.notifications.find(uuid: e.notificationUUID) {
                bodies[e.notificationUUID] = n.body
                report.notificationBodies.append((e, n.body))
            }
        }
        func payload(_ own: Data?, source: String?, field: String) -> Data? {
            own ?? source.flatMap { bodies[$0] }.flatMap { ApplePayloads.nestedPayload(body: $0, field: field) }
        }
        for t in history.transactions {
            report.transactionPayloads[t.transactionId] = payload(t.payload, source: t.sourceNotificationUUID, field: "signedTransactionInfo")
        }
        report.renewalPayload = history.renewal.flatMap {
            payload($0.payload, source: $0.sourceNotificationUUID, field: "signedRenewalInfo")
        }
        report.consentWithdrawals = try ConsentWithdrawal.concerning([otid], store: store)
        report.appTransaction = report.consentWithdrawals.lazy.compactMap(\.appTransaction).first
        return report
    }
}

extension SubscriptionReport {
    /// Where the subscription stands in its commitment; nil for a plan without one.
    public var commitment: CommitmentState? {
        StateDerivation.commitment(transactions: history.transactions, renewal: history.renewal)
    }
}

// MARK: JSON

extension TransactionRecord {
    /// The transaction as Apple signed it (every field, those subdesk does not type
    /// included): its own payload when it came from the App Store Server API, else the
    /// `signedTransactionInfo` of the notification that carried it.
    public func applePayload(store: Store) throws -> Data? {
        if let payload { return payload }
        guard let uuid = sourceNotificationUUID, let notification = try store.notifications.find(uuid: uuid) else { return nil }
        return ApplePayloads.nestedPayload(body: notification.body, field: "signedTransactionInfo")
    }

    /// A one-time purchase as `show --json` prints it: the typed fields and, under `apple`,
    /// every field Apple signed, as a subscription's transactions have them.
    public func purchaseJSON(store: Store) throws -> [String: Any] {
        var o = jsonObject()
        o["apple"] = try applePayload(store: store).flatMap { try? JSONSerialization.jsonObject(with: $0) } ?? NSNull()
        return o
    }
}

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
        o["commitment"] = commitment?.jsonObject() ?? NSNull()
        o["override"] = entitlement.override?.jsonObject() ?? NSNull()
        o["consentWithdrawn"] = !consentWithdrawals.isEmpty
        o["consentWithdrawals"] = consentWithdrawals.map { $0.jsonObject() }
        o["appTransaction"] = appTransaction?.jsonObject() ?? NSNull()
        func apple(_ data: Data?) -> Any { data.flatMap { try? JSONSerialization.jsonObject(with: $0) } ?? NSNull() }
        o["transactions"] = history.transactions.sorted(by: StateDerivation.purchaseOrder).map { t -> [String: Any] in
            var j = t.jsonObject()
            j["apple"] = apple(transactionPayloads[t.transactionId])
            return j
        }
        if let renewal = history.renewal {
            var j = renewal.jsonObject()
            j["apple"] = apple(renewalPayload)
            o["renewalInfo"] = j
        } else {
            o["renewalInfo"] = NSNull()
        }
        o["notifications"] = notificationBodies.map { n -> [String: Any] in
            ["notificationUUID": n.event.notificationUUID, "type": n.event.type.rawValue, "subtype": n.event.subtype?.rawValue as Any? ?? NSNull(),
             "signedDate": DateText.iso(n.event.signedDate), "version": n.event.version,
             "apple": ApplePayloads.notificationObject(body: n.body) ?? NSNull()]
        }
        o["timeline"] = timeline.map { e -> [String: Any] in
            var line: [String: Any] = ["date": DateText.iso(e.date), "kind": e.kind.rawValue, "detail": e.detail]
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
            "offerType": opt(offerType?.rawValue),
            "offerIdentifier": opt(offerIdentifier),
            "offerDiscountType": opt(offerDiscountType),
            "isTrial": isTrial,
            "environment": environment,
            "ownershipType": ownershipType.rawValue,
            "appAccountToken": opt(appAccountToken),
            "upgradedFrom": upgradedFrom,
            "revokedTransactionIds": revokedTransactionIds,
            "lastNotification": opt(lastNotificationType),
            "lastEventDate": date(lastEventDate),
            "bundleId": opt(bundleId),
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
