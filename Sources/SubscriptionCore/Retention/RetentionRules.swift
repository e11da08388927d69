import Foundation

/// What a rule answers the cancellation sheet with: exactly one of Apple's three kinds.
public enum RetentionAnswer: Equatable, Sendable {
    /// A message set up in advance (by its identifier).
    case message(id: String)
    /// A switch-plan suggestion: a product of the same subscription group, with its billing
    /// plan when given, and the message shown with it.
    case alternateProduct(productId: String, billingPlanType: String?, messageId: String?)
    /// A promotional offer (its identifier in App Store Connect), signed when answered.
    case promotionalOffer(offerId: String, messageId: String?)

    /// The kind as the decisions table and the README name it.
    public var kind: String { answerKind.rawValue }

    public var answerKind: RetentionAnswerKind {
        switch self {
        case .message: return .message
        case .alternateProduct: return .alternateProduct
        case .promotionalOffer: return .promotionalOffer
        }
    }

    /// The answer's identifier: the message's, the product's or the offer's.
    public var value: String {
        switch self {
        case .message(let id): return id
        case .alternateProduct(let product, _, _): return product
        case .promotionalOffer(let offer, _): return offer
        }
    }
}

/// Apple's three kinds of answer, as the decisions table stores them (`answer_kind`).
public enum RetentionAnswerKind: String, CaseIterable, Sendable {
    case message
    case alternateProduct = "alternate_product"
    case promotionalOffer = "promotional_offer"
}

/// A subscriber's state as a rule may ask about it.
public enum RetentionStateCondition: String, CaseIterable, Sendable {
    case active, expired
    case billingRetry = "billing_retry"
    case grace
    case revoked

    init(_ status: SubscriptionStatus) {
        switch status {
        case .active: self = .active
        case .expired: self = .expired
        case .billingRetry: self = .billingRetry
        case .gracePeriod: self = .grace
        case .revoked: self = .revoked
        }
    }
}

/// One rule of a rules file: conditions (all must hold; a condition left out holds always)
/// and its answer.
public struct RetentionRule: Equatable, Sendable {
    public var name: String
    public var line: Int
    public var products: [String] = []
    public var locales: [String] = []
    public var states: [RetentionStateCondition] = []
    public var minTenureDays: Int?
    public var maxTenureDays: Int?
    /// Whether the subscription's latest transaction carried an offer.
    public var hadOffer: Bool?
    /// `pending` (price increase not yet agreed), `agreed`, `none`.
    public var priceIncrease: String?
    public var autoRenew: Bool?
    public var answer: RetentionAnswer

    /// Whether the rule needs the subscriber's state from the store.
    public var asksState: Bool {
        !states.isEmpty || minTenureDays != nil || maxTenureDays != nil || hadOffer != nil || priceIncrease != nil || autoRenew != nil
    }

    /// Whether the rule's product and locale conditions hold (a rule locale `en` holds for `en-US`).
    func holds(product: String, locale: String?) -> Bool {
        if !products.isEmpty, !products.contains(product) { return false }
        if !locales.isEmpty {
            guard let locale else { return false }
            return locales.contains { RetentionCoverage.localeCovers($0, locale) }
        }
        return true
    }

    /// Whether the rule answers every request for `product` in `locale`, whatever the
    /// subscriber's state: a rule that asks about the state answers only some of them.
    public func covers(product: String, locale: String) -> Bool { !asksState && holds(product: product, locale: locale) }

    /// Whether the rule holds for `request` and the subscription's stored `state` (nil: the
    /// store does not know it; a rule asking about state then does not hold).
    public func matches(_ request: RealtimeRetentionRequest, state: SubscriptionState?, now: Millis) -> Bool {
        guard holds(product: request.productId, locale: request.userLocale) else { return false }
        guard asksState else { return true }
        guard let state else { return false }
        if !states.isEmpty, !states.contains(RetentionStateCondition(state.status)) { return false }
        if minTenureDays != nil || maxTenureDays != nil {
            guard let since = state.originalPurchaseDate else { return false }
            let days = max(0, (now - since) / 86_400_000)
            if let min = minTenureDays, days < Int64(min) { return false }
            if let max = maxTenureDays, days > Int64(max) { return false }
        }
        if let hadOffer, (state.offerType != nil) != hadOffer { return false }
        if let priceIncrease {
            let actual = state.priceIncreaseStatus.map { $0 == 1 ? "agreed" : "pending" } ?? "none"
            if actual != priceIncrease { return false }
        }
        if let autoRenew, state.autoRenewStatus != autoRenew { return false }
        return true
    }
}

/// A refusal of a rules file, naming the file, line and rule.
public struct RetentionRulesError: Error, CustomStringConvertible, Equatable {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// The rules of one app's real-time answers, first match wins, as a file declares them:
///
///     # comment
///     group ID: PRODUCT, ...
///     rule NAME: CONDITION... -> ANSWER...
///
/// each word `key=value` (lists comma-separated). Conditions: `product`, `locale`, `state`
/// (active, expired, billing_retry, grace, revoked), `min_tenure_days`, `max_tenure_days`,
/// `had_offer` (yes/no), `price_increase` (pending, agreed, none), `auto_renew` (on/off).
/// A `group` line declares products' subscription group where the store has none yet.
/// Answers: `message=ID` alone; or `switch_to=PRODUCT` with `billing_plan=TYPE` and
/// `message=ID`; or `offer=OFFER_ID` with `message=ID`.
public struct RetentionRules: Equatable, Sendable {
    public var rules: [RetentionRule]

    public init(rules: [RetentionRule]) { self.rules = rules }

    public static let conditionKeys = ["product", "locale", "state", "min_tenure_days", "max_tenure_days", "had_offer",
                                       "price_increase", "auto_renew"]
    public static let answerKeys = ["message", "switch_to", "billing_plan", "offer"]
    /// A rules file longer than this is not a rules file.
    public static let maximumBytes = 1 << 20

    /// The first rule that holds, or nil.
    public func pick(_ request: RealtimeRetentionRequest, state: SubscriptionState?, now: Millis) -> RetentionRule? {
        rules.first { $0.matches(request, state: state, now: now) }
    }

    /// Whether any rule asks about the subscriber's state (the store is then read).
    public var asksState: Bool { rules.contains { $0.asksState } }

    /// Parses and validates `text` (from `file`). `groupOf` gives a product's subscription
    /// group as the store knows it; `canSignOffers`: the app has an offer key.
    public static func parse(_ text: String, file: String, groupOf: (String) -> String?, canSignOffers: Bool) throws -> RetentionRules {
        guard text.utf8.count <= maximumBytes else { throw RetentionRulesError("\(file): over \(maximumBytes) bytes; not a rules file") }
        var rules: [RetentionRule] = []
        // `group ID: PRODUCT, ...` lines declare subscription groups for products the store
        // has not seen yet; one the store knows in another group is refused.
        var declared: [String: String] = [:]
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        for (index, line) in lines.enumerated() where line.hasPrefix("group ") {
            func fail(_ why: String) -> RetentionRulesError { RetentionRulesError("\(file):\(index + 1): \(why)") }
            guard let colon = line.firstIndex(of: ":") else { throw fail("expected `group ID: PRODUCT, ...`") }
            let group = line[line.index(line.startIndex, offsetBy: 6)..<colon].trimmingCharacters(in: .whitespaces)
            let products = line[line.index(after: colon)...].split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            guard !group.isEmpty, !group.contains(" "), !products.isEmpty, !products.contains(where: { $0.isEmpty || $0.contains(" ") }) else {
                throw fail("expected `group ID: PRODUCT, ...` (products comma-separated)")
            }
            for product in products {
                if let stored = groupOf(product), stored != group {
                    throw fail("group \(group): product \(product) is in subscription group \(stored) as the store knows it")
                }
                if let other = declared[product], other != group { throw fail("group \(group): product \(product) is already in group \(other)") }
                declared[product] = group
            }
        }
        func knownGroup(_ product: String) -> String? { groupOf(product) ?? declared[product] }
        for (index, line) in lines.enumerated() {
            let number = index + 1
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix("group ") { continue }
            func fail(_ why: String) -> RetentionRulesError { RetentionRulesError("\(file):\(number): \(why)") }
            guard line.hasPrefix("rule "), let colon = line.firstIndex(of: ":") else {
                throw fail("expected `rule NAME: CONDITION... -> ANSWER...` or `group ID: PRODUCT, ...`")
            }
            let name = line[line.index(line.startIndex, offsetBy: 5)..<colon].trimmingCharacters(in: .whitespaces)
            guard !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || "-_.".contains($0) }) else {
                throw fail("a rule's name is letters, digits, - _ and ., got `\(name.escapingControlCharacters())`")
            }
            func failRule(_ why: String) -> RetentionRulesError { fail("rule \(name): \(why)") }
            if rules.contains(where: { $0.name == name }) { throw failRule("another rule already has this name") }
            let rest = line[line.index(after: colon)...]
            let halves = rest.components(separatedBy: "->")
            guard halves.count == 2 else { throw failRule("needs exactly one `->` between its conditions and its answer") }
            func words(_ half: String, keys: [String], part: String) throws -> [String: String] {
                var seen: [String: String] = [:]
                for word in half.split(separator: " ", omittingEmptySubsequences: true) {
                    let pair = word.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                    guard pair.count == 2, !pair[1].isEmpty else { throw failRule("`\(String(word).escapingControlCharacters())` is not key=value") }
                    let key = String(pair[0])
                    guard keys.contains(key) else {
                        throw failRule("unknown \(part) field `\(key.escapingControlCharacters())` (\(part)s: \(keys.joined(separator: ", ")))")
                    }
                    guard seen[key] == nil else { throw failRule("\(key) is given twice") }
                    seen[key] = String(pair[1])
                }
                return seen
            }
            let when = try words(halves[0], keys: conditionKeys, part: "condition")
            let then = try words(halves[1], keys: answerKeys, part: "answer")
            func list(_ key: String) -> [String] { when[key].map { $0.split(separator: ",").map(String.init) } ?? [] }
            func days(_ key: String) throws -> Int? {
                guard let text = when[key] else { return nil }
                guard let n = Int(text), (0...36_500).contains(n) else { throw failRule("\(key) is a number of days (0 to 36500), got \(text)") }
                return n
            }
            func flag(_ key: String, _ yes: String, _ no: String) throws -> Bool? {
                guard let text = when[key] else { return nil }
                if text == yes { return true }
                if text == no { return false }
                throw failRule("\(key) is \(yes) or \(no), got \(text)")
            }
            let states = try list("state").map { word -> RetentionStateCondition in
                guard let s = RetentionStateCondition(rawValue: word) else {
                    throw failRule("state \(word) is not one of " + RetentionStateCondition.allCases.map(\.rawValue).joined(separator: ", "))
                }
                return s
            }
            if let p = when["price_increase"], !["pending", "agreed", "none"].contains(p) {
                throw failRule("price_increase is pending, agreed or none, got \(p)")
            }
            let kinds = ["switch_to", "offer"].filter { then[$0] != nil }
            if kinds.count > 1 { throw failRule("two answer kinds (switch_to and offer): a rule answers with one") }
            if then["billing_plan"] != nil, then["switch_to"] == nil { throw failRule("billing_plan goes with switch_to only") }
            let answer: RetentionAnswer
            if let product = then["switch_to"] {
                let products = list("product")
                guard !products.isEmpty else { throw failRule("switch_to needs product= (the products it is offered instead of)") }
                guard let group = knownGroup(product) else {
                    throw failRule("switch_to \(product): no subscription group is known for this product (declare it: group ID: PRODUCT, ...)")
                }
                for current in products {
                    guard let own = knownGroup(current) else {
                        throw failRule("product \(current): no subscription group is known for it (declare it: group ID: PRODUCT, ...)")
                    }
                    guard own == group else {
                        throw failRule("switch_to \(product) is in subscription group \(group), outside product \(current)'s (\(own))")
                    }
                }
                if let plan = then["billing_plan"], !plan.allSatisfy({ $0.isUppercase || $0 == "_" }) {
                    throw failRule("billing_plan is Apple's billing plan type in capitals (e.g. BILLED_UPFRONT), got \(plan)")
                }
                answer = .alternateProduct(productId: product, billingPlanType: then["billing_plan"], messageId: then["message"])
            } else if let offer = then["offer"] {
                guard canSignOffers else { throw failRule("offer \(offer) needs the app's offer_key (a [key] section to sign offers with)") }
                answer = .promotionalOffer(offerId: offer, messageId: then["message"])
            } else if let message = then["message"] {
                answer = .message(id: message)
            } else {
                throw failRule("no answer: give message=, switch_to= or offer=")
            }
            var rule = RetentionRule(name: name, line: number, answer: answer)
            rule.products = list("product")
            rule.locales = list("locale")
            rule.states = states
            rule.minTenureDays = try days("min_tenure_days")
            rule.maxTenureDays = try days("max_tenure_days")
            rule.hadOffer = try flag("had_offer", "yes", "no")
            rule.priceIncrease = when["price_increase"]
            rule.autoRenew = try flag("auto_renew", "on", "off")
            rules.append(rule)
        }
        return RetentionRules(rules: rules)
    }
}
