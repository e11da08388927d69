import Foundation

/// Why a real-time request was refused (answered non-200, counted, logged).
public enum RetentionRefusal: String, Sendable, CaseIterable {
    case malformed, oversized, unsigned, signature
    case unknownApp = "unknown_app"
    case otherAppThanURL = "other_app_than_url"
    case environment, stale
}

/// Why a request got an answer with nothing in it (Apple then falls back to the App Store
/// Connect configuration, then to the default message).
public enum RetentionFallback: String, Sendable, CaseIterable {
    case noRule = "no_rule"
    case storeUnavailable = "store_unavailable"
    case offerKeyUnreadable = "offer_key_unreadable"
}

/// How one request ended, as the decisions log keeps it.
public enum RetentionOutcome: Equatable, Sendable {
    case answered(rule: String, answer: RetentionAnswer)
    case fellBack(RetentionFallback, rule: String?)
    case refused(RetentionRefusal, detail: String)

    /// The key of an answered request: what a real-time save is counted from.
    public static let answeredKey = "answered"

    /// Every outcome's key, in the order metrics list them.
    public static let keys = [answeredKey] + RetentionFallback.allCases.map(\.rawValue)
        + RetentionRefusal.allCases.map { "refused:" + $0.rawValue }

    /// `answered`, `no_rule`, `store_unavailable`, …, `refused:stale`.
    public var key: String {
        switch self {
        case .answered: return Self.answeredKey
        case .fellBack(let why, _): return why.rawValue
        case .refused(let why, _): return "refused:" + why.rawValue
        }
    }
}

/// What the responder answered one request: the HTTP status and JSON body, and the decision.
public struct RetentionResponse: Sendable {
    public var status: Int
    public var body: String
    public var outcome: RetentionOutcome
    public var request: RealtimeRetentionRequest?
    public var app: String?
}

/// One app's part of the responder: its rules and the signer of its offers (or why it has none).
public struct RetentionAppSetup: Sendable {
    public var rules: RetentionRules
    public var offers: Result<PromotionalOfferSigner, ConfigurationError>?

    public init(rules: RetentionRules, offers: Result<PromotionalOfferSigner, ConfigurationError>?) {
        self.rules = rules
        self.offers = offers
    }
}

/// Answers Apple's real-time Retention Messaging request: verifies it as a notification is
/// verified, refuses one for an app or environment not configured or signed too long ago,
/// and picks the answer by the app's rules.
public struct RetentionResponder: Sendable {
    /// A request signed longer ago than this is refused as a replay.
    public static let maximumAge: Millis = 5 * 60 * 1000
    /// A larger body is not Apple's request.
    public static let maximumBodyBytes = 64 * 1024

    public let apps: ConfiguredApps
    public let setups: [String: RetentionAppSetup]
    let verify: @Sendable (String) throws -> RealtimeRetentionRequest

    public init(apps: ConfiguredApps, setups: [String: RetentionAppSetup], verifier: SignedDataVerifier) {
        self.apps = apps
        self.setups = setups
        verify = { try verifier.verify($0, field: "signedPayload", as: RealtimeRetentionRequest.init(json:)).decoded }
    }

    static func json(_ object: [String: Any]) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    func refuse(_ why: RetentionRefusal, _ detail: String, request: RealtimeRetentionRequest? = nil, app: String? = nil) -> RetentionResponse {
        let status: Int
        switch why {
        case .malformed, .unsigned: status = 400
        case .oversized: status = 413
        case .signature, .unknownApp, .otherAppThanURL, .environment, .stale: status = 403
        }
        return RetentionResponse(status: status, body: Self.json(["error": why.rawValue, "detail": detail]),
                                 outcome: .refused(why, detail: detail), request: request, app: app)
    }

    /// Answers `body` (the whole POSTed body; `length` is how many bytes arrived). `postedApp`
    /// is the app the URL names (`?app=`); `state` reads the subscription from the store
    /// (throwing when the store is unavailable).
    public func respond(body: Data, length: Int, postedApp: String?, now: Millis,
                        state: (String) throws -> SubscriptionState?) -> RetentionResponse {
        guard length <= Self.maximumBodyBytes, body.count == length else {
            return refuse(.oversized, "body of \(length) bytes is over the \(Self.maximumBodyBytes)-byte limit")
        }
        guard let object = try? JSONSerialization.jsonObject(with: body), let fields = object as? [String: Any] else {
            return refuse(.malformed, "body: not a JSON object")
        }
        guard let signed = fields["signedPayload"] else { return refuse(.unsigned, "body: no signedPayload") }
        guard let jws = signed as? String else { return refuse(.malformed, "signedPayload: not a string") }
        let segments = jws.split(separator: ".", omittingEmptySubsequences: false)
        guard segments.count == 3, !segments[2].isEmpty else { return refuse(.unsigned, "signedPayload: not a signed JWS") }
        let request: RealtimeRetentionRequest
        do { request = try verify(jws) } catch let fault as DecodingFault {
            return refuse(.malformed, fault.description)
        } catch {
            return refuse(.signature, "\(error)")
        }
        guard let app = apps.app(appleId: request.appAppleId) else {
            return refuse(.unknownApp, "appAppleId \(request.appAppleId) is no configured app's", request: request)
        }
        if let posted = postedApp, apps.app(named: posted)?.name != app.name {
            return refuse(.otherAppThanURL, "signed for \(app.name), posted to ?app=\(posted.escapingControlCharacters())",
                          request: request, app: app.name)
        }
        guard let env = AppStoreEnvironment.parse(request.environment), app.environmentsAsked.contains(env) else {
            return refuse(.environment, "environment \(request.environment.escapingControlCharacters()) is not \(app.name)'s",
                          request: request, app: app.name)
        }
        guard request.signedDate >= now - Self.maximumAge, request.signedDate <= now + Self.maximumAge else {
            return refuse(.stale, "signedDate \(request.signedDate) is more than \(Self.maximumAge / 1000) s from now", request: request, app: app.name)
        }
        func fallBack(_ why: RetentionFallback, rule: String? = nil) -> RetentionResponse {
            RetentionResponse(status: 200, body: "{}", outcome: .fellBack(why, rule: rule), request: request, app: app.name)
        }
        guard let setup = setups[app.name] else { return fallBack(.noRule) }
        var stored: SubscriptionState?
        if setup.rules.asksState {
            do { stored = try state(request.originalTransactionId) } catch { return fallBack(.storeUnavailable) }
        }
        guard let rule = setup.rules.pick(request, state: stored, now: now) else { return fallBack(.noRule) }
        var answer: [String: Any] = [:]
        switch rule.answer {
        case .message(let id):
            answer = ["message": ["messageIdentifier": id]]
        case .alternateProduct(let product, let plan, let message):
            var inner: [String: Any] = ["productId": product]
            if let plan { inner["billingPlanType"] = plan }
            if let message { inner["messageIdentifier"] = message }
            answer = ["alternateProduct": inner]
        case .promotionalOffer(let offer, let message):
            guard case .success(let signer)? = setup.offers,
                  let signature = try? signer.sign(productId: request.productId, offerIdentifier: offer,
                                                   transactionId: request.originalTransactionId) else {
                return fallBack(.offerKeyUnreadable, rule: rule.name)
            }
            var inner: [String: Any] = ["promotionalOfferSignatureV2": signature]
            if let message { inner["messageIdentifier"] = message }
            answer = ["promotionalOffer": inner]
        }
        return RetentionResponse(status: 200, body: Self.json(answer), outcome: .answered(rule: rule.name, answer: rule.answer),
                                 request: request, app: app.name)
    }
}
