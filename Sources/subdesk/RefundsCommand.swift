import Foundation
import SubscriptionCore
import TerminalUI

enum RefundsCommand {
    static let spec: CommandSpec = CommandSpec(
        name: "refunds", arguments: "[ID | answer ID]",
        abstract: "customers' refund requests: the facts, the deadline, the answer sent to Apple",
        usage: """
        subdesk refunds [--all] [--json]
        subdesk refunds ID [--json]
        subdesk refunds answer ID [--preference DECLINE|GRANT_FULL|GRANT_PRORATED|none]
                       [--delivery STATUS] [--sample yes|no] [--consumed PERCENT] [--consented]
                       [--reason TEXT] [--yes]
        subdesk refunds --auto
        """,
        discussion: """
        The refund-request queue. Every CONSUMPTION_REQUEST notification opens an item: a
        customer asked Apple for a refund, and Apple wants consumption information within 12
        hours (Send Consumption Information). The list shows open items, nearest deadline
        first, with the time left and the customer's reason (--all adds decided ones). ID is a
        request's notification UUID, or a subscription, transaction or user with one.

        `refunds ID` shows what the store knows: whether the purchase was delivered (a local
        revoke override or an outage extension says it was not), whether a free trial came
        first (sampleContentProvided), the customer's tenure and lifetime dollars purchased and
        refunded (for the operator; Apple's current request no longer takes them), and the
        answer the policy suggests. `refunds answer` sends it, with any field changed; Apple's
        rules are checked first (consent required; a consumed share only for consumables,
        non-consumables and non-renewing subscriptions, and 0 when not delivered; GRANT_PRORATED
        needs one), and so is the deadline. `--auto` answers every open request as
        refund_policy says (run it from cron every few minutes). Each answer, refusal and
        missed deadline is audited; the REFUND or REFUND_DECLINED that follows closes the item.

        config keys: refund_consent = yes (customers consent to sharing consumption data,
        as the app's terms collect it; otherwise pass --consented after asking the customer),
        refund_policy = manual | facts | decline-if-delivered | grant | decline (default manual:
        --auto sends nothing).
        """,
        options: [
            .flag(.all, "also the requests already decided"),
            .value(.preference, "DECLINE|GRANT_FULL|GRANT_PRORATED|none", "the refund preference sent, instead of the suggested one"),
            .value(.delivery, "STATUS", "the delivery status sent, instead of the one the store suggests"),
            .value(.sample, "yes|no", "whether sample content was provided, instead of what the store says"),
            .value(.consumed, "PERCENT", "the share consumed, for purchases that are not auto-renewable subscriptions"),
            .flag(.consented, "the customer consented to sharing consumption data (when refund_consent is not yes)"),
            .value(.reason, "TEXT", "why, for the audit log"),
            .flag(.yes, "send without asking for confirmation"),
            .flag(.auto, "answer every open request as refund_policy says (cron)"),
        ],
        groups: [.apple],
        action: .refundAnswers,
        run: run)

    static func policy(_ context: Context) throws -> RefundPolicy {
        try RefundPolicy(configuration: context.config)
    }

    static func run(_ context: Context) throws -> Int32 {
        if context.arguments.has(.auto) { return try auto(context) }
        let positionals = context.arguments.positionals
        if positionals.first == "answer" {
            guard positionals.count == 2 else { throw UsageError("refunds answer takes one ID (a request's UUID, or a subscription with one open)") }
            return try answer(positionals[1], context)
        }
        let store = try context.openStore(mode: .reading)
        let queue = RefundQueue(store: store, operatorName: context.operatorName)
        let now = DateText.nowMillis()
        if let id = positionals.first {
            guard positionals.count == 1 else { throw UsageError("refunds takes one ID") }
            let request: RefundRequest
            do { request = try queue.request(id) } catch let e as OperationError { throw UsageError(e.description) }
            return try show(request, queue: queue, policy: try policy(context), now: now, context)
        }
        let requests = try queue.requests(includeClosed: context.arguments.has(.all), now: now, app: try context.appScope())
        if context.wantsJSON {
            Output.json(try requests.map { try json($0, facts: queue.facts($0, now: now), now: now) })
            return 0
        }
        if requests.isEmpty {
            Output.line(context.arguments.has(.all) ? "no refund requests" : "no open refund requests (--all lists decided ones)")
            return 0
        }
        // A table with a header, each column as wide as its widest cell.
        // The columns of the dashboard's queue, in its order, then the id `refunds answer` takes.
        let header = ["STANDING", "ORIGINAL TX", "REASON", "PRODUCT", "ASKED (UTC)", "NOTIFICATION UUID"]
        let rows = try requests.map { request -> [String] in
            let facts = try queue.facts(request, now: now)
            return [request.standing(now: now), request.originalTransactionId ?? "-", facts.reason ?? "reason not given",
                    facts.productId ?? "-", DateText.minute(request.requested), request.notificationUUID]
                .map(SafeText.sanitize)
        }
        let widths = header.indices.map { column in ([header] + rows).map { TextWidth.width(of: $0[column]) }.max() ?? 0 }
        for row in [header] + rows {
            Output.line(zip(row, widths).map { TextWidth.fit($0, toWidth: $1) }.joined(separator: "  ")
                .trimmingCharacters(in: .whitespaces))
        }
        return 0
    }

    static func show(_ request: RefundRequest, queue: RefundQueue, policy: RefundPolicy, now: Millis, _ context: Context) throws -> Int32 {
        let facts = try queue.facts(request, now: now)
        let suggested = policy.suggestedAnswer(for: facts)
        if context.wantsJSON {
            var object = json(request, facts: facts, now: now)
            object["suggestedAnswer"] = (try? JSONSerialization.jsonObject(with: suggested.json)) ?? [:]
            Output.json(object)
            return 0
        }
        var lines = [
            "refund request \(request.notificationUUID): \(request.standing(now: now))",
            "  subscription    \(request.originalTransactionId ?? "-"), transaction \(request.transactionId ?? "-") (\(facts.productId ?? "?"), \(facts.productType ?? "type not given"))",
            "  asked           \(DateText.minute(request.requested)) UTC; deadline \(DateText.minute(request.deadline)) UTC",
            "  reason          \(facts.reason ?? "not given")",
            "  delivered       \(facts.delivery.rawValue): \(facts.deliveryWhy)",
            "  sample content  \(facts.sampleContentProvided ? "yes" : "no"): \(facts.sampleWhy)",
            "  customer        \(facts.tenureDays.map { "\($0) days since the first purchase" } ?? "no paid purchase known"); purchased \(RefundRequestFacts.amounts(facts.lifetimePurchased)); refunded \(RefundRequestFacts.amounts(facts.lifetimeRefunded))",
        ]
        if let price = facts.price, let currency = facts.currency {
            lines.append("  this purchase   \(currency) \(String(format: "%.2f", Double(price) / 1000))")
        }
        if let sent = request.answer, let at = request.answered {
            lines.append("  last answer     \(DateText.minute(at)) UTC by \(request.answeredBy ?? "?"): \(sent) -> \(request.answerOutcome ?? "?")")
        }
        if let closedBy = request.closedBy, let closed = request.closed {
            lines.append("  Apple decided   \(closedBy) on \(DateText.minute(closed)) UTC")
        }
        if request.stage(now: now) == .open {
            lines.append("  suggested       \(suggested.summary) (refund_policy \(policy.rule.rawValue)\(policy.consent ? "" : "; no consent on record: --consented after asking the customer"))")
            lines.append("  send it with    subdesk refunds answer \(request.notificationUUID)")
        }
        lines.forEach { Output.line(SafeText.sanitize($0)) }
        return 0
    }

    static func json(_ r: RefundRequest, facts: RefundRequestFacts, now: Millis) -> [String: Any] {
        var o: [String: Any] = ["notificationUUID": r.notificationUUID, "stage": r.stage(now: now).rawValue,
                                "requested": DateText.iso(r.requested), "deadline": DateText.iso(r.deadline),
                                "deliveryStatus": facts.delivery.rawValue, "deliveryReason": facts.deliveryWhy,
                                "sampleContentProvided": facts.sampleContentProvided, "sampleReason": facts.sampleWhy,
                                "lifetimePurchased": facts.lifetimePurchased, "lifetimeRefunded": facts.lifetimeRefunded]
        if r.stage(now: now) == .open { o["secondsLeft"] = (r.deadline - now) / 1000 }
        if let otid = r.originalTransactionId { o["originalTransactionId"] = otid }
        if let id = r.transactionId { o["transactionId"] = id }
        if let environment = r.environment { o["environment"] = environment }
        if let reason = facts.reason { o["consumptionRequestReason"] = reason }
        if let product = facts.productId { o["productId"] = product }
        if let tenure = facts.tenureDays { o["tenureDays"] = tenure }
        if let answer = r.answer, let data = answer.data(using: .utf8) {
            o["answer"] = (try? JSONSerialization.jsonObject(with: data)) ?? answer
        }
        if let by = r.answeredBy { o["answeredBy"] = by }
        if let at = r.answered { o["answered"] = DateText.iso(at) }
        if let outcome = r.answerOutcome { o["answerOutcome"] = outcome }
        if let missed = r.missed { o["missedNoted"] = DateText.iso(missed) }
        if let closedBy = r.closedBy { o["decision"] = closedBy }
        if let closed = r.closed { o["decided"] = DateText.iso(closed) }
        return o
    }

    /// The policy's suggestion with the fields the operator gave changed.
    static func answer(_ id: String, _ context: Context) throws -> Int32 {
        let policy = try policy(context)
        let store = try context.openStore(mode: .existing)
        let queue = RefundQueue(store: store, operatorName: context.operatorName)
        let request: RefundRequest
        do { request = try queue.request(id) } catch let e as OperationError { throw UsageError(e.description) }
        let facts = try queue.facts(request, now: DateText.nowMillis())
        var answer = policy.suggestedAnswer(for: facts)
        if context.arguments.has(.consented) { answer.customerConsented = true }
        if let text = context.arguments.value(.preference) {
            if text.lowercased() == "none" {
                answer.refundPreference = nil
            } else {
                guard let preference = ConsumptionAnswer.Preference(rawValue: text.uppercased()) else {
                    throw UsageError("--preference is DECLINE, GRANT_FULL, GRANT_PRORATED or none, not \(text)")
                }
                answer.refundPreference = preference
            }
        }
        if let text = context.arguments.value(.delivery) {
            guard let delivery = ConsumptionAnswer.Delivery(rawValue: text.uppercased()) else {
                throw UsageError("--delivery is one of \(ConsumptionAnswer.Delivery.allCases.map(\.rawValue).joined(separator: ", ")), not \(text)")
            }
            answer.deliveryStatus = delivery
        }
        if let text = context.arguments.value(.sample) {
            switch text.lowercased() {
            case "yes", "true": answer.sampleContentProvided = true
            case "no", "false": answer.sampleContentProvided = false
            default: throw UsageError("--sample is yes or no, not \(text)")
            }
        }
        if let text = context.arguments.value(.consumed) {
            guard let percent = Double(text.hasSuffix("%") ? String(text.dropLast()) : text), percent.isFinite, (0...100).contains(percent) else {
                throw UsageError("--consumed is a percentage from 0 to 100, not \(text)")
            }
            answer.consumptionPercentage = Int((percent * 1000).rounded())
        }
        do { try answer.check(productType: facts.productType) } catch let e as OperationError { throw UsageError(e.description) }
        try ExtendCommand.confirm("Send Apple \(answer.summary) for refund request \(request.notificationUUID) (\(request.originalTransactionId ?? "?"))?", context)
        let revalidator = try context.makeRevalidator(maxConnections: 1)
        do {
            let answered = try revalidator.answerRefundRequest(request.notificationUUID, answer: answer,
                                                               reason: context.arguments.value(.reason))
            if context.wantsJSON {
                Output.json(json(answered, facts: facts, now: DateText.nowMillis()))
            } else {
                Output.line("Apple accepted the answer for \(answered.notificationUUID): \(answer.summary)")
            }
            return 0
        } catch let e as OperationError {
            if context.wantsJSON { Output.json(["error": e.description]) }
            Output.error(e.description)
            return 1
        }
    }

    static func auto(_ context: Context) throws -> Int32 {
        let policy = try policy(context)
        guard policy.rule != .manual else {
            throw UsageError("refund_policy is manual (the default): set refund_policy in the config for --auto to answer (facts, decline-if-delivered, grant or decline)")
        }
        _ = try context.openStore(mode: .existing)
        let results = try context.makeRevalidator(maxConnections: 1).answerRefundRequests(policy: policy)
        if context.wantsJSON {
            Output.json(results.map { r -> [String: Any] in
                var o: [String: Any] = ["notificationUUID": r.request.notificationUUID, "sent": r.error == nil]
                if let answer = r.answer { o["answer"] = (try? JSONSerialization.jsonObject(with: answer.json)) ?? [:] }
                if let error = r.error { o["error"] = error }
                return o
            })
        } else if results.isEmpty {
            Output.line("no open refund requests to answer")
        } else {
            for r in results {
                Output.line(SafeText.sanitize("\(r.request.notificationUUID) \(r.request.originalTransactionId ?? "-"): "
                                              + (r.error.map { "not sent: \($0)" } ?? "sent \(r.answer?.summary ?? "")")))
            }
        }
        return results.contains { $0.error != nil } ? 1 : 0
    }
}
