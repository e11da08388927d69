import Foundation
import SubscriptionCore
import TerminalUI

enum ShowCommand {
    static let spec: CommandSpec = CommandSpec(
        name: "show", arguments: "ID", abstract: "a subscriber's subscriptions, state and timeline",
        usage: "subdesk show ID [--apple] [--json]",
        discussion: """
        Shows a subscriber and each of their subscriptions as of now: status, entitlement,
        expiry, renewal preference, grace period, billing retry, expiration intent, offer,
        ownership, environment, and the transaction timeline. ID is a user id, an
        appAccountToken, an originalTransactionId, a transactionId, or the appTransactionId
        (the app download) the customer's purchases carry; the ids of a one-time
        purchase (consumable, non-consumable, non-renewing) show that purchase. With --json,
        each subscription lists every stored field of its transactions and renewal info.

        An order id from the customer's e-mailed receipt (letters and digits, such as
        MTN9T4BRB9) that the store does not know is looked up at Apple (Look Up Order ID,
        with the App Store Server API key settings): the order's transactions are verified
        and stored, its subscription revalidated, and then shown. Exits 2 when unknown,
        including an order id Apple does not know.
        """,
        options: [
            .flag(.apple, "also ask Apple for each subscription's refund history (Get Refund History) and its latest "
                  + "transaction (Get Transaction Info), verify, store and audit them, and list them (under "
                  + "\"appleLookups\" with --json)"),
        ],
        groups: [.apple],
        run: run)

    static func run(_ context: Context) throws -> Int32 {
        guard let id = context.arguments.positionals.first, context.arguments.positionals.count == 1 else {
            throw UsageError("show takes exactly one ID (see subdesk show --help)")
        }
        return try show(id, context)
    }

    static func show(_ id: String, _ context: Context) throws -> Int32 {
        let store = try context.openStore(mode: .reading)
        let now = DateText.nowMillis()
        let app = try context.appScope()
        guard let report = try SubscriberReport.load(store: store, id: id, now: now, app: app) else {
            // A one-time purchase (consumable, non-consumable, non-renewing) is no subscription.
            let purchases = try store.transactions.purchases(id: id, app: app)
            // An order id the store does not know is asked of Apple.
            if purchases.isEmpty, AppStoreServerAPIClient.looksLikeOrderId(id), let found = try lookUpOrder(id, context) {
                return found
            }
            // So may an app transaction id (the app download a RESCIND_CONSENT names).
            if purchases.isEmpty, !id.isEmpty, id.allSatisfy({ $0.isASCII && $0.isNumber }), let found = try lookUpAppTransaction(id, context) {
                return found
            }
            guard !purchases.isEmpty else {
                if context.wantsJSON { Output.json(["error": "no subscriber, subscription, purchase or transaction matches \(id)"]) }
                Output.error("no subscriber, subscription, purchase or transaction matches \(SafeText.sanitize(id))")
                return 2
            }
            if context.wantsJSON {
                Output.json(["purchases": try purchases.map { try $0.purchaseJSON(store: store) }])
            } else {
                for p in purchases { Output.line(describePurchase(p)) }
            }
            return 0
        }
        // --apple: the refund history and the latest transaction as Apple has them now,
        // stored (and so on the detail's timeline) before the report is read again.
        var apple: [String: Any]?
        if context.arguments.has(.apple) {
            let revalidator = try context.makeRevalidator(maxConnections: 2)
            var fetched: [String: Any] = [:]
            for subscription in report.subscriptions {
                let otid = subscription.state.originalTransactionId
                do {
                    let answer = try revalidator.refundsAndTransactionInfo(otid)
                    fetched[otid] = ["refundHistory": answer.refunds.map { $0.jsonObject() },
                                     "transactionInfo": answer.transaction.jsonObject()]
                    if !context.wantsJSON {
                        Output.warn("Apple, for \(otid): \(answer.refunds.count) refunded transaction\(answer.refunds.count == 1 ? "" : "s")"
                                    + (answer.refunds.isEmpty ? "" : " (" + answer.refunds.map(\.transactionId).joined(separator: ", ") + ")")
                                    + "; latest transaction \(answer.transaction.transactionId) signed \(DateText.minute(answer.transaction.signedDate)) UTC")
                    }
                } catch let error as RevalidationError {
                    fetched[otid] = ["error": error.description]
                    Output.warn("Apple, for \(otid): \(error.description)")
                }
            }
            apple = fetched
        }
        let shown = apple == nil ? report : (try SubscriberReport.load(store: store, id: id, now: now, app: app) ?? report)
        if context.wantsJSON {
            var object = shown.jsonObject()
            // Each subscription's app: the bundle id it carries and the configured name.
            let apps = try context.configuredApps()
            object["subscriptions"] = zip(shown.subscriptions, object["subscriptions"] as? [[String: Any]] ?? []).map { sub, json in
                var json = json
                json["app"] = apps.appJSON(ofRecord: sub.state.bundleId)
                return json
            }
            if let apple { object["appleLookups"] = apple }
            Output.json(object)
        } else {
            Output.line(render(shown, now: now))
        }
        return 0
    }

    /// `Purchase 1000000999  app.lifetime.unlock  Non-Consumable  purchased 2026-05-31 00:00 UTC ...`
    static func describePurchase(_ p: TransactionRecord) -> String {
        var text = "Purchase \(SafeText.sanitize(p.transactionId))  \(SafeText.sanitize(p.productId))  "
            + "\(SafeText.sanitize(p.type ?? "one-time purchase"))  purchased \(DateText.minute(p.purchaseDate)) UTC"
        if p.originalTransactionId != p.transactionId { text += "  original \(SafeText.sanitize(p.originalTransactionId))" }
        if let price = p.price, let currency = p.currency {
            text += "  " + String(format: "%.2f", Double(price) / 1000) + " " + SafeText.sanitize(currency)
        }
        if let r = p.revocationDate { text += "  REFUNDED \(DateText.minute(r)) UTC" + (p.revocationReason.map { " (reason \($0))" } ?? "") }
        text += "  \(p.ownershipType) · \(p.environment.rawValue)"
        return text
    }

    static func render(_ report: SubscriberReport, now: Millis) -> String {
        let s = report.subscriber
        var lines: [String] = []
        var who = ["subscriber #\(s.id)"]
        if let u = s.userId { who.append("user \(SafeText.sanitize(u))") }
        if let t = s.appAccountToken { who.append("token \(SafeText.sanitize(t))") }
        lines.append(who.joined(separator: "  "))
        for sub in report.subscriptions {
            lines.append("")
            lines.append(contentsOf: SubscriptionText.describe(sub.state, now: now, accessEnded: sub.accessEnded).map { "  " + $0 })
            lines.append(contentsOf: SubscriptionText.describeRenewal(sub, now: now).map { "  " + $0 })
            if let o = sub.entitlement.override {
                let until = o.until.map { "until \(DateText.minute($0)) UTC" } ?? "until lifted"
                lines.append("  Override #\(o.id) \(o.kind.rawValue) \(until) by \(SafeText.sanitize(o.operatorName)): "
                             + "\(SafeText.sanitize(o.reason))  -> \(sub.entitlement.entitled ? "entitled" : "not entitled")"
                             + " (Apple: \(sub.entitlement.appleEntitled ? "entitled" : "not entitled"))")
            }
            lines.append(contentsOf: SubscriptionText.describeApp(sub).map { "  " + $0 })
            lines.append("  Timeline (UTC)")
            for e in sub.timeline {
                lines.append("    \(DateText.minute(e.date))  \(e.kind.rawValue.padding(toLength: 15, withPad: " ", startingAt: 0)) \(SafeText.sanitize(e.detail))")
            }
        }
        return lines.joined(separator: "\n")
    }

    /// Asks Apple about an app transaction id the store does not know; nil when there is no
    /// API key to ask with, or Apple has no such app transaction (the id is then unknown as usual).
    static func lookUpAppTransaction(_ id: String, _ context: Context) throws -> Int32? {
        let revalidator = try context.makeRevalidator(maxConnections: 2)
        guard revalidator.hasServerAPIKey else { return nil }
        if !context.wantsJSON { Output.warn("\(id) is not in the store; asking Apple whether it is an app transaction (Get App Transaction Info)") }
        let found: AppTransactionLookup
        do {
            guard let answer = try revalidator.resolveAppTransaction(id, reason: "show \(id)", app: try context.appScope()?.bundleId) else {
                return nil
            }
            found = answer
        } catch let error as RevalidationError {
            if context.wantsJSON { Output.json(["error": error.description]) }
            Output.error(error.description)
            return 1
        }
        let store = try context.openStore(mode: .reading)
        let now = DateText.nowMillis()
        var report = try SubscriberReport.load(store: store, id: id, now: now)
        if report != nil {
            for i in report!.subscriptions.indices where report!.subscriptions[i].appTransaction == nil {
                report!.subscriptions[i].appTransaction = found.appTransaction
            }
        }
        if context.wantsJSON {
            var object = report?.jsonObject() ?? ["subscriber": NSNull(), "subscriptions": [Any]()]
            object["appTransaction"] = found.appTransaction.jsonObject()
            Output.json(object)
        } else {
            Output.line(SafeText.sanitize("App      " + found.appTransaction.phrases.joined(separator: " · ") + " (from Apple)"))
            if let report { Output.line(render(report, now: now)) } else { Output.line("no subscription bought from this app download") }
        }
        return 0
    }

    /// Asks Apple about an order id the store does not know, stores what it bought, and
    /// shows it; nil when there is no API key to ask with (the id is then unknown as usual).
    static func lookUpOrder(_ orderId: String, _ context: Context) throws -> Int32? {
        let revalidator = try context.makeRevalidator(maxConnections: 2)
        guard revalidator.hasServerAPIKey else { return nil }
        if !context.wantsJSON { Output.warn("\(orderId) is not in the store; asking Apple (Look Up Order ID)") }
        let order: (originalTransactionIds: [String], results: [RevalidationResult])
        do {
            order = try revalidator.lookUpOrder(orderId, app: try context.appScope()?.bundleId)
        } catch let error as RevalidationError {
            if context.wantsJSON { Output.json(["error": error.description]) }
            Output.error(error.description)
            if case .unknownSubscription = error { return 2 }
            return 1
        }
        guard !order.originalTransactionIds.isEmpty else {
            Output.error("Apple's answer for order \(orderId) holds no transaction")
            return 2
        }
        return try showOrder(orderId, originalTransactionIds: order.originalTransactionIds, context)
    }

    /// Everything one order bought: an order may hold several purchases (a non-consumable
    /// and a subscription, say), each shown, subscriptions with their subscriber.
    static func showOrder(_ orderId: String, originalTransactionIds: [String], _ context: Context) throws -> Int32 {
        let store = try context.openStore(mode: .reading)
        let now = DateText.nowMillis()
        var reports: [SubscriberReport] = []
        var purchases: [TransactionRecord] = []
        for otid in originalTransactionIds {
            if let report = try SubscriberReport.load(store: store, id: otid, now: now) {
                if !reports.contains(where: { $0.subscriber.id == report.subscriber.id }) { reports.append(report) }
            } else {
                purchases += try store.transactions.purchases(id: otid).filter { p in !purchases.contains { $0.transactionId == p.transactionId } }
            }
        }
        let subscriptions = reports.reduce(0) { $0 + $1.subscriptions.count }
        if context.wantsJSON {
            Output.json(["orderId": orderId, "subscribers": reports.map { $0.jsonObject() },
                         "purchases": try purchases.map { try $0.purchaseJSON(store: store) }])
            return 0
        }
        func count(_ n: Int, _ word: String) -> String { "\(n) \(word)\(n == 1 ? "" : "s")" }
        Output.line("Order \(SafeText.sanitize(orderId)): \(count(subscriptions, "subscription")), \(count(purchases.count, "one-time purchase"))")
        for p in purchases { Output.line(describePurchase(p)) }
        for report in reports {
            Output.line("")
            Output.line(render(report, now: now))
        }
        return 0
    }
}

/// Words for a subscription's state, shared by `show` and the dashboard header.
enum SubscriptionText {
    /// `accessEnded` is when a revoked subscription's access ended (its refund), said instead
    /// of the refunded period's end.
    static func describe(_ st: SubscriptionState, now: Millis, accessEnded: Millis? = nil) -> [String] {
        func safe(_ s: String) -> String { SafeText.sanitize(s) }
        var lines: [String] = []
        lines.append("Subscription \(safe(st.originalTransactionId))")
        var status = "Status   \(st.status.label)  (\(st.entitled ? "entitled" : "not entitled")"
        if st.status == .gracePeriod, let g = st.gracePeriodExpiresDate {
            status += ", \(DateText.duration(g - now)) left, until \(DateText.minute(g)) UTC"
        }
        lines.append(status + ")")
        var product = "Product  \(safe(st.productId))"
        if st.status == .revoked {
            if let ended = accessEnded { product += "   Access ended \(DateText.minute(ended)) UTC (revoked)" }
        } else if let e = st.expiresDate {
            product += "   \(e > now ? "Expires" : "Expired") \(DateText.minute(e)) UTC"
        }
        lines.append(product)
        var renewal = "Renewal  auto-renew \(st.autoRenewStatus ? "ON" : "OFF")"
        if let p = st.autoRenewProductId { renewal += " -> \(safe(p))" }
        if let change = st.pendingChange {
            renewal += "  (pending \(change.kind) to \(safe(change.productId))"
            if let d = change.effectiveDate { renewal += " at \(DateText.minute(d)) UTC" }
            renewal += ")"
        }
        lines.append(renewal)
        if st.isInBillingRetryPeriod { lines.append("Billing  in billing retry") }
        if let intent = st.expirationIntent {
            lines.append("Intent   \(intent) · \(ExpirationIntent.meaning(intent))")
        }
        if let p = st.priceIncreaseStatus {
            lines.append("Price    increase \(p == 1 ? "consented" : "awaiting consent")")
        }
        if let offer = Timeline.offerDescription(type: st.offerType, discount: st.offerDiscountType, identifier: st.offerIdentifier) {
            lines.append("Offer    \(safe(offer))")
        }
        lines.append("Owner    \(st.ownershipType) · \(safe(st.environment))")
        if !st.upgradedFrom.isEmpty { lines.append("Upgraded from transaction \(st.upgradedFrom.joined(separator: ", "))") }
        return lines
    }

    /// The app download the subscription was bought from, and any withdrawal of consent
    /// for it, with whether an operator has handled it.
    static func describeApp(_ sub: SubscriptionReport) -> [String] {
        var lines: [String] = []
        if let app = sub.appTransaction { lines.append("App      " + SafeText.sanitize(app.phrases.joined(separator: " · "))) }
        for w in sub.consentWithdrawals {
            lines.append(SafeText.sanitize("Consent  WITHDRAWN \(DateText.minute(w.signedDate)) UTC (RESCIND_CONSENT \(w.notificationUUID)) · \(w.statusText)"))
        }
        return lines
    }

    /// The commitment (plan, period of the total, when it ends, its price, whether it
    /// renews) and the next renewal with its offer: support's "when can I stop paying?".
    static func describeRenewal(_ sub: SubscriptionReport, now: Millis) -> [String] {
        func utc(_ m: Millis) -> String { DateText.minute(m) + " UTC" }
        var lines: [String] = []
        if let commitment = sub.commitment {
            lines.append("Commit   " + SafeText.sanitize(commitment.phrases(date: utc).joined(separator: " · ")))
        }
        if let next = sub.appleFacts.renewalFact(sub.state, now: now, date: utc) {
            lines.append("Next     " + SafeText.sanitize(next))
        }
        return lines
    }
}
