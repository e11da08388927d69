import Foundation

/// What subdesk tells Apple about a refund request: the fields of Apple's
/// `ConsumptionRequest` for Send Consumption Information (the version keyed by the
/// transaction id; the older one with tenure, lifetime dollars and play time is deprecated).
public struct ConsumptionAnswer: Equatable, Sendable {
    public enum Delivery: String, CaseIterable, Sendable {
        case delivered = "DELIVERED"
        case qualityIssue = "UNDELIVERED_QUALITY_ISSUE"
        case wrongItem = "UNDELIVERED_WRONG_ITEM"
        case serverOutage = "UNDELIVERED_SERVER_OUTAGE"
        case other = "UNDELIVERED_OTHER"
    }

    public enum Preference: String, CaseIterable, Sendable {
        case decline = "DECLINE"
        case grantFull = "GRANT_FULL"
        case grantProrated = "GRANT_PRORATED"
    }

    /// Apple refuses an answer whose customer did not consent (InvalidCustomerConsentedError).
    public var customerConsented: Bool
    public var deliveryStatus: Delivery
    /// A free sample or trial, or a description of what it does, came before the purchase.
    public var sampleContentProvided: Bool
    /// Milliunits of a percent (50000 is 50%) of the purchase consumed: for consumables,
    /// non-consumables and non-renewing subscriptions only.
    public var consumptionPercentage: Int?
    public var refundPreference: Preference?

    public init(customerConsented: Bool, deliveryStatus: Delivery, sampleContentProvided: Bool,
                consumptionPercentage: Int? = nil, refundPreference: Preference? = nil) {
        self.customerConsented = customerConsented
        self.deliveryStatus = deliveryStatus
        self.sampleContentProvided = sampleContentProvided
        self.consumptionPercentage = consumptionPercentage
        self.refundPreference = refundPreference
    }

    /// Apple's rules for the fields, checked before Apple is asked. `productType` is the
    /// transaction's `type` (`Auto-Renewable Subscription`, `Consumable`, ...).
    public func check(productType: String?) throws {
        guard customerConsented else {
            throw OperationError("the customer has not consented to share consumption data (refund_consent in the config, or --consented after asking them); Apple refuses an answer without it")
        }
        if let share = consumptionPercentage {
            guard (0...100_000).contains(share) else {
                throw OperationError("the consumed share is 0 to 100% (0 to 100000 milliunits); \(share) is not")
            }
            guard productType != "Auto-Renewable Subscription" else {
                throw OperationError("Apple takes a consumed share only for consumables, non-consumables and non-renewing subscriptions, not for an auto-renewable subscription")
            }
            guard deliveryStatus == .delivered || share == 0 else {
                throw OperationError("a purchase that was not delivered (\(deliveryStatus.rawValue)) was consumed 0%; Apple refuses another share")
            }
        }
        if refundPreference == .grantProrated {
            guard let share = consumptionPercentage, share > 0 else {
                throw OperationError("GRANT_PRORATED needs the consumed share (more than 0%), which Apple takes only for consumables, non-consumables and non-renewing subscriptions")
            }
        }
    }

    /// The request body, keys sorted.
    public var json: Data {
        var object: [String: Any] = ["customerConsented": customerConsented, "deliveryStatus": deliveryStatus.rawValue,
                                     "sampleContentProvided": sampleContentProvided]
        if let share = consumptionPercentage { object["consumptionPercentage"] = share }
        if let preference = refundPreference { object["refundPreference"] = preference.rawValue }
        return (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
    }

    /// `DELIVERED, sample, DECLINE`: the answer in one line.
    public var summary: String {
        [deliveryStatus.rawValue, sampleContentProvided ? "sample provided" : "no sample",
         consumptionPercentage.map { "\(Double($0) / 1000)% consumed" }, refundPreference.map { $0.rawValue } ?? "no preference"]
            .compactMap { $0 }.joined(separator: ", ")
    }
}

/// How subdesk answers refund requests, from the config: whether customers consented
/// (`refund_consent`) and what `subdesk refunds --auto` sends (`refund_policy`).
public struct RefundPolicy: Equatable, Sendable {
    public enum Rule: String, CaseIterable, Sendable {
        /// Nothing automatic: an operator reviews and sends each answer.
        case manual
        /// The facts, without a preference.
        case facts
        /// DECLINE when the store shows the purchase delivered, GRANT_FULL otherwise.
        case declineIfDelivered = "decline-if-delivered"
        case grant
        case decline
    }

    public var consent: Bool
    public var rule: Rule

    public init(consent: Bool = false, rule: Rule = .manual) {
        self.consent = consent
        self.rule = rule
    }

    public init(configuration: Configuration) throws {
        self.init()
        if let text = configuration.string(.refundConsent) {
            guard let value = configuration.bool(.refundConsent) else {
                throw ConfigurationError("refund_consent is yes or no, not \(text)")
            }
            consent = value
        }
        if let text = configuration.string(.refundPolicy) {
            guard let value = Rule(rawValue: text) else {
                throw ConfigurationError("refund_policy is one of \(Rule.allCases.map(\.rawValue).joined(separator: ", ")), not \(text)")
            }
            rule = value
        }
    }

    /// The preference this rule gives for `facts` (nil for manual and facts).
    public func preference(for facts: RefundRequestFacts) -> ConsumptionAnswer.Preference? {
        switch rule {
        case .manual, .facts: return nil
        case .declineIfDelivered: return facts.delivery == .delivered ? .decline : .grantFull
        case .grant: return .grantFull
        case .decline: return .decline
        }
    }

    /// The answer this policy suggests for `facts`; an operator may change any field.
    public func suggestedAnswer(for facts: RefundRequestFacts) -> ConsumptionAnswer {
        ConsumptionAnswer(customerConsented: consent, deliveryStatus: facts.delivery, sampleContentProvided: facts.sampleContentProvided,
                          refundPreference: rule == .manual ? (facts.delivery == .delivered ? .decline : .grantFull) : preference(for: facts))
    }
}

/// What the store knows that Apple asks about a refund request, each with the reason in
/// words, plus the customer's history an operator weighs (the deprecated request's
/// tenure and lifetime dollars, shown but not sent).
public struct RefundRequestFacts: Equatable, Sendable {
    /// Why the customer asked (`UNINTENDED_PURCHASE`, `FULFILLMENT_ISSUE`,
    /// `UNSATISFIED_WITH_PURCHASE`, `LEGAL`, `OTHER`), when Apple said.
    public var reason: String?
    public var productId: String?
    /// The transaction's `type` as Apple sent it.
    public var productType: String?
    public var price: Int64?
    public var currency: String?
    public var delivery: ConsumptionAnswer.Delivery
    public var deliveryWhy: String
    public var sampleContentProvided: Bool
    public var sampleWhy: String
    /// Days since the subscriber's first purchase this store knows of.
    public var tenureDays: Int?
    /// Milliunits by currency, every purchase and every refunded one of the subscriber.
    public var lifetimePurchased: [String: Int64]
    public var lifetimeRefunded: [String: Int64]

    /// `USD 12.99, EUR 4.99`.
    public static func amounts(_ byCurrency: [String: Int64]) -> String {
        byCurrency.isEmpty ? "none"
            : byCurrency.sorted { $0.key < $1.key }.map { "\($0.key) \(String(format: "%.2f", Double($0.value) / 1000))" }
                .joined(separator: ", ")
    }
}

/// The refund-request queue over one store: what each request is about and what the store
/// knows, the deadline noticed, and (through `Revalidator`) answers sent.
public struct RefundQueue {
    public let store: Store
    public let operatorName: String

    public init(store: Store, operatorName: String) {
        self.store = store
        self.operatorName = store.audit.operatorOfRecord(operatorName)
    }

    /// Requests by queue order, after noting (and auditing, once) every deadline that
    /// passed unanswered; a read-only store is only read.
    public func requests(includeClosed: Bool, now: Millis, limit: Int = 500, app: AppScope? = nil) throws -> [RefundRequest] {
        if !store.opening.readOnly { try noteMissedDeadlines(now: now) }
        return try store.refundRequests.queue(includeClosed: includeClosed, limit: limit, app: app)
    }

    /// Audits each open request whose deadline passed without an accepted answer.
    @discardableResult
    public func noteMissedDeadlines(now: Millis) throws -> Int {
        var noted = 0
        for request in try store.refundRequests.queue(includeClosed: false) where request.stage(now: now) == .missed && request.missed == nil {
            try store.write {
                guard try store.refundRequests.markMissed(uuid: request.notificationUUID, at: now) else { return }
                try store.audit.append(AuditEntry(
                    at: now, operatorName: operatorName, action: .refundMissed, target: request.originalTransactionId ?? request.notificationUUID,
                    reason: nil,
                    outcome: "no answer reached Apple by the deadline, \(DateText.minute(request.deadline)) UTC"
                        + (request.answerOutcome.map { "; the last attempt was \($0)" } ?? ""),
                    detail: "refund request \(request.notificationUUID), transaction \(request.transactionId ?? "?")"))
                noted += 1
            }
        }
        return noted
    }

    /// The request `id` names: a CONSUMPTION_REQUEST's UUID, or a subscription, transaction
    /// or subscriber with one request still open (the newest, when several are).
    public func request(_ id: String) throws -> RefundRequest {
        if let request = try store.refundRequests.request(uuid: id) { return request }
        let otid = try Operations(store: store, operatorName: operatorName).resolveSubscription(id)
        let all = try store.refundRequests.requests(originalTransactionId: otid)
        guard let request = all.first(where: { $0.closed == nil }) ?? all.first else {
            throw OperationError("\(otid) has no refund request (Apple opens one with a CONSUMPTION_REQUEST notification)")
        }
        return request
    }

    /// What the store knows about `request`'s purchase and customer.
    public func facts(_ request: RefundRequest, now: Millis) throws -> RefundRequestFacts {
        var facts = RefundRequestFacts(delivery: .delivered, deliveryWhy: "nothing in the store says it was withheld",
                                       sampleContentProvided: false, sampleWhy: "no free trial in the store's history",
                                       lifetimePurchased: [:], lifetimeRefunded: [:])
        if let n = try store.notifications.find(uuid: request.notificationUUID),
           let data = ApplePayloads.notificationObject(body: n.body)?["data"] as? [String: Any] {
            facts.reason = data["consumptionRequestReason"] as? String
        }
        guard let otid = request.originalTransactionId, let row = try store.subscriptions.find(originalTransactionId: otid) else {
            facts.deliveryWhy = "the store has no subscription for this request"
            return facts
        }
        let report = try SubscriptionReport.load(store: store, row: row, now: now)
        let transaction = report.history.transactions.first { $0.transactionId == request.transactionId }
        facts.productId = transaction?.productId ?? row.state.productId
        facts.productType = transaction?.type
        facts.price = transaction?.price
        facts.currency = transaction?.currency
        let start = transaction?.purchaseDate ?? request.requested
        let end = transaction?.expiresDate ?? request.requested
        if let withheld = report.overrides.first(where: { o in
            o.kind == .revoke && o.created < end && (o.lifted ?? Millis.max) > start && (o.until ?? Millis.max) > start
        }) {
            facts.delivery = .other
            facts.deliveryWhy = "a local override withheld access from \(DateText.minute(max(withheld.created, start))) UTC (\(withheld.reason))"
        } else if let outage = try store.extensions.list(originalTransactionId: otid).first(where: { e in
            e.reasonCode == 3 && e.outcome == "extended" && e.requested >= start && e.requested <= end + RefundRequest.answerWindow
        }) {
            facts.delivery = .serverOutage
            facts.deliveryWhy = "renewal extended for a service issue or outage on \(DateText.minute(outage.requested)) UTC (\(outage.reason))"
        } else if transaction != nil {
            facts.deliveryWhy = "entitled from \(DateText.minute(start)) UTC" + (transaction?.expiresDate.map { " to \(DateText.minute($0)) UTC" } ?? "")
                + "; no override withheld it and no outage was recorded"
        }
        if let trial = report.history.transactions.first(where: { $0.offerDiscountType == "FREE_TRIAL" && $0.purchaseDate <= start }) {
            facts.sampleContentProvided = true
            facts.sampleWhy = "a free trial from \(DateText.minute(trial.purchaseDate)) UTC"
        }
        // The customer: every subscription of the subscriber.
        var first: Millis?
        for sub in try store.subscriptions.of(subscriberId: row.subscriber.id) {
            for t in try store.subscriptions.history(originalTransactionId: sub.state.originalTransactionId).transactions
            where t.ownershipType != .familyShared && t.offerDiscountType != "FREE_TRIAL" {
                first = min(first ?? t.purchaseDate, t.purchaseDate)
                guard let price = t.price, let currency = t.currency else { continue }
                facts.lifetimePurchased[currency, default: 0] += price
                // What came back, as revenue counts it: a prorated refund's share, not the price.
                if let kind = t.revocationKind {
                    let back = t.advancedCommerceRefunds.isEmpty ? kind.refunded(of: price) : t.advancedCommerceRefunds.reduce(0) { $0 + $1.amount }
                    facts.lifetimeRefunded[currency, default: 0] += back
                }
            }
        }
        facts.tenureDays = first.map { Int(max(0, now - $0) / 86_400_000) }
        return facts
    }
}

extension Revalidator {
    /// Sends `answer` for `request` to Apple (Send Consumption Information) after checking
    /// Apple's rules and the deadline; keeps what was sent and what Apple said, and audits it.
    @discardableResult
    public func answerRefundRequest(_ id: String, answer: ConsumptionAnswer, reason: String?) throws -> RefundRequest {
        let queue = RefundQueue(store: try openStore(), operatorName: operatorName)
        let request = try queue.request(id)
        return try send(answer, for: request, facts: try queue.facts(request, now: clock()), reason: reason, queue: queue)
    }

    /// Sends `answer` for `request`, whose `facts` the caller has read from `queue`'s store.
    private func send(_ answer: ConsumptionAnswer, for request: RefundRequest, facts: RefundRequestFacts, reason: String?,
                      queue: RefundQueue) throws -> RefundRequest {
        let store = queue.store
        let now = clock()
        switch request.stage(now: now) {
        case .refunded, .declined:
            throw OperationError("Apple already decided refund request \(request.notificationUUID): \(request.closedBy ?? "?") on \(DateText.minute(request.closed ?? 0)) UTC")
        case .answered:
            throw OperationError("Apple accepted an answer to refund request \(request.notificationUUID) on \(DateText.minute(request.answered ?? 0)) UTC; it takes one")
        case .missed:
            try queue.noteMissedDeadlines(now: now)
            throw OperationError("the deadline for refund request \(request.notificationUUID) passed at \(DateText.minute(request.deadline)) UTC; Apple decides without an answer")
        case .open:
            break
        }
        guard let transactionId = request.transactionId else {
            throw OperationError("refund request \(request.notificationUUID) names no transaction to answer for")
        }
        try answer.check(productType: facts.productType)
        let app = try appLookup(forRefund: request, store: store)
        let body = answer.json
        let bodyText = String(decoding: body, as: UTF8.self)
        // The outcome says what happened, not only that it did not work: an answer never
        // sent (no key) or lost on the way is not one Apple refused.
        var outcome = "accepted"
        do {
            let client = try app.lookup.serverAPI(for: ServerAPIAction.refundAnswer)
            try client.sendConsumptionInformation(transactionId: transactionId, body: body,
                                                  environment: AppStoreEnvironment(rawValue: request.environment ?? "Production"))
        } catch let error as RevalidationError {
            switch error {
            case .needsServerAPI: outcome = "not sent: \(error)"
            case .http: outcome = "refused: \(error)"
            default: outcome = "failed: \(error)"
            }
        }
        try store.write {
            try store.refundRequests.recordAnswer(uuid: request.notificationUUID, answer: bodyText, by: operatorName, at: now, outcome: outcome)
            try store.audit.append(AuditEntry(at: now, operatorName: operatorName, action: .refundAnswer,
                                             target: request.originalTransactionId ?? request.notificationUUID, reason: reason,
                                             outcome: outcome == "accepted" ? "sent to Apple: \(answer.summary)" : outcome,
                                             detail: "refund request \(request.notificationUUID), transaction \(transactionId), body \(bodyText)"))
        }
        guard outcome == "accepted" else {
            if outcome.hasPrefix("refused: ") { throw OperationError("Apple did not take the answer: \(outcome)") }
            throw OperationError("the answer to refund request \(request.notificationUUID) was \(outcome)")
        }
        return try store.refundRequests.request(uuid: request.notificationUUID) ?? request
    }

    /// The app an answer to `request` is signed for: the one its CONSUMPTION_REQUEST was
    /// signed for, else its subscription's, else the only configured app. A request of an app
    /// no configuration has is refused by name before anything is sent.
    private func appLookup(forRefund request: RefundRequest, store: Store) throws -> AppLookup {
        do {
            if request.bundleId == nil, let otid = request.originalTransactionId { return try appLookup(forSubscription: otid, store: store) }
            let app = try appLookup(bundleId: request.bundleId)
            guard let bundleId = request.bundleId, let own = app.bundleId, own != bundleId else { return app }
            throw RevalidationError.notConfigured(bundleId)
        } catch RevalidationError.notConfigured {
            throw OperationError("refund request \(request.notificationUUID) is app \(request.bundleId ?? "(no bundle id)")'s, which no configured app is "
                                 + "(apps: \(appLookups.map(\.label).joined(separator: ", "))): its answer cannot be signed for it")
        }
    }

    /// What `subdesk refunds --auto` does: notes missed deadlines, then answers every open
    /// request the policy answers (not `manual`), each audited. Returns what was sent and
    /// what failed, by request.
    public func answerRefundRequests(policy: RefundPolicy) throws -> [(request: RefundRequest, answer: ConsumptionAnswer?, error: String?)] {
        guard policy.rule != .manual else { throw OperationError("refund_policy is manual: an operator answers each request (subdesk refunds answer ID)") }
        let store = try openStore()
        let queue = RefundQueue(store: store, operatorName: operatorName)
        var results: [(request: RefundRequest, answer: ConsumptionAnswer?, error: String?)] = []
        for request in try queue.requests(includeClosed: false, now: clock()) where request.stage(now: clock()) == .open {
            // The facts are read once, for the suggestion and for Apple's rules alike.
            let facts = try queue.facts(request, now: clock())
            let answer = policy.suggestedAnswer(for: facts)
            do {
                results.append((try send(answer, for: request, facts: facts, reason: "refund_policy \(policy.rule.rawValue)", queue: queue),
                                answer, nil))
            } catch {
                results.append((try store.refundRequests.request(uuid: request.notificationUUID) ?? request, answer, "\(error)"))
            }
        }
        return results
    }
}
