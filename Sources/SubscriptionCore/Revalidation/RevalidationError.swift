import Foundation

/// What each call to the App Store Server API is for, as messages name it when the key
/// settings are missing: one wording wherever the action starts (CLI, dashboard, core).
public enum ServerAPIAction {
    public static let revalidate = "revalidating with the App Store Server API"
    public static let extend = "extending a renewal date"
    public static let extendAll = "extending renewal dates for every active subscriber"
    public static let followExtension = "following a mass extension"
    public static let refundAnswer = "answering a refund request"
    public static let backfill = "a backfill (Get Notification History)"
    public static let ping = "ping (Request a Test Notification)"
    public static let appleLookup = "asking Apple for refund history and the latest transaction"
    public static let appAccountToken = "setting the app account token at Apple"
    public static let orderLookup = "looking up an order id"
    public static let appTransaction = "looking up an app transaction (Get App Transaction Info)"
    public static let retentionMessaging = "the Retention Messaging API"
}

/// Where the App Store Server API key settings go, for a message that says what to set
/// where: the config file's keys (as `Configuration`'s tables name them), or the flags.
public struct ServerAPIKeyPlace: Sendable, Equatable {
    /// The config file subdesk reads (or would read); nil when not known.
    public var configFile: String?
    /// Whether the apps come from `[app]` sections: the key is then a `[key NAME]` section
    /// that each app's `key` names, and no flag sets it.
    public var sections: Bool

    public init(configFile: String? = nil, sections: Bool = false) {
        self.configFile = configFile
        self.sections = sections
    }

    /// `set api_key_file, api_key_id and api_issuer_id in the config file /etc/subdesk/config
    /// (or pass --api-key-file, --api-key-id, --api-issuer-id)`.
    public var advice: String {
        let file = "the config file" + (configFile.map { " " + $0 } ?? "")
        if sections {
            return "declare the key in a [key NAME] section of \(file) (\(Self.list(Self.keySectionKeys))) "
                + "and set \(Self.appKeyKey) = NAME in each [app] section"
        }
        return "set \(Self.list(Self.flatKeys)) in \(file) (or pass "
            + Self.flatKeys.map { "--" + $0.replacingOccurrences(of: "_", with: "-") }.joined(separator: ", ") + ")"
    }

    /// The same in fewer words, for a line of 80 columns: the keys and that they go in the config file.
    public var brief: String {
        sections ? "needs a [key] section in the config file and \(Self.appKeyKey) = NAME in each [app]"
            : "needs the API key: \(Self.flatKeys.joined(separator: ", ")) in the config file"
    }

    /// The top-level keys of a key, the keys of a `[key]` section, and an `[app]` section's
    /// key naming one, as `Configuration`'s tables name them.
    static var flatKeys: [String] { ConfigurationKey.flatApiKey.map(\.name) }
    static var keySectionKeys: [String] { ConfigurationKey.keySection.map(\.name) }
    static var appKeyKey: String { ConfigurationKey.key.name }

    static func list(_ names: [String]) -> String {
        names.count < 2 ? names.joined() : names.dropLast().joined(separator: ", ") + " and " + names.last!
    }
}

/// When a rate limit lifts, as a 429's Retry-After said.
public enum RateLimitResume: Equatable, Sendable {
    /// The moment the limit lifts.
    case at(Millis)
    /// A year or more away (`HTTPClient.farFutureWait`), however far: not a date worth
    /// naming, and not waited out.
    case farFuture
}

/// Why a revalidation did not complete. Each names the request or setting at fault;
/// none ever carries a secret (key, token or shared secret).
public enum RevalidationError: Error, CustomStringConvertible, Equatable, Sendable {
    /// A setting is missing or unusable.
    case notConfigured(String)
    /// The id names nothing subdesk or Apple knows.
    case unknownSubscription(String)
    /// Each attempt took longer than the timeout.
    case timedOut(request: String, seconds: TimeInterval, attempts: Int)
    /// The connection failed (refused, reset, DNS...) on every attempt.
    case network(request: String, reason: String, attempts: Int)
    /// Apple kept answering 429, or asked for a longer wait than we are willing to make.
    /// `resumeAt` is when Apple said to ask again (its Retry-After), when it said.
    case rateLimited(request: String, resumeAt: RateLimitResume?, attempts: Int)
    /// An action that only the App Store Server API can do was asked for without its key
    /// settings; `action` names it (`extending a renewal date`), `place` where they go.
    case needsServerAPI(action: String, place: ServerAPIKeyPlace = ServerAPIKeyPlace())
    /// An HTTP status we cannot use, with Apple's error code and message when it sent them.
    case http(request: String, status: Int, apiErrorCode: Int?, message: String, attempts: Int)
    /// Neither environment knows the transaction id.
    case transactionNotFound(transactionId: String, environments: [String])
    /// A verifyReceipt status other than 0 (or 21006), with its documented meaning.
    case receiptStatus(status: Int, meaning: String, environment: String, retryable: Bool, attempts: Int)
    /// The answer's body was larger than `limit` bytes: reading stopped there, and the
    /// request was not retried (the same request would bring the same body).
    case responseTooLarge(request: String, limit: Int, detail: String)
    /// The answer did not have the documented shape.
    case malformedResponse(request: String, problem: String)
    /// Apple's answer failed verification or policy; nothing from it was stored.
    case refused(reason: String)
    /// Purchases made in Xcode or in local StoreKit testing exist nowhere at Apple: no
    /// request about them is sent, least of all to the production host.
    case noServerForEnvironment(String)

    public var description: String {
        switch self {
        case .notConfigured(let what):
            return "revalidation is not configured: \(what)"
        case .unknownSubscription(let what):
            return what
        case .timedOut(let request, let seconds, let attempts):
            return "\(request): timed out after \(Self.seconds(seconds)) s\(Self.attempts(attempts))"
        case .network(let request, let reason, let attempts):
            return "\(request): network error: \(reason)\(Self.attempts(attempts))"
        case .rateLimited(let request, let resumeAt, let attempts):
            let until: String
            switch resumeAt {
            case .at(let millis)?: until = "; Apple asks to wait until \(Self.resumeText(millis)): try again after then"
            case .farFuture?: until = "; Apple asks to wait until far in the future: not waited out"
            case nil: until = ""
            }
            return "\(request): rate limited by Apple (HTTP 429)\(Self.attempts(attempts))\(until)"
        case .needsServerAPI(let action, let place):
            return "\(action) needs the App Store Server API key: \(place.advice)"
        case .http(let request, let status, let code, let message, let attempts):
            // Apple's own code and what its list says it means, then Apple's message when it adds something.
            let known = code.flatMap(AppStoreAPIErrorCode.lookup)
            let apiCode = code.map { " error \($0)" + (known.map { " (\($0.meaning))" } ?? "") } ?? ""
            let said = known?.meaning == message ? "" : ": \(message)"
            return "\(request): HTTP \(status)\(apiCode)\(said)\(Self.attempts(attempts))"
        case .transactionNotFound(let id, let environments):
            return "transaction id \(id) not found in \(environments.joined(separator: " or ")) (App Store Server API error 4040010)"
        case .receiptStatus(let status, let meaning, let environment, let retryable, let attempts):
            let retry = retryable ? "; retryable later" : ""
            return "verifyReceipt (\(environment)): status \(status): \(meaning)\(retry)\(Self.attempts(attempts))"
        case .responseTooLarge(let request, let limit, let detail):
            return "\(request): the response body is larger than the \(limit)-byte limit for an answer from Apple "
                + "(\(detail)); refused unread and not retried"
        case .malformedResponse(let request, let problem):
            return "\(request): unexpected response: \(problem)"
        case .refused(let reason):
            return "refused Apple's answer, nothing stored: \(reason)"
        case .noServerForEnvironment(let environment):
            return "the App Store Server API knows nothing of the \(environment) environment (purchases made in Xcode or "
                + "local StoreKit testing): nothing was sent to Apple"
        }
    }

    /// Whether trying again later (tomorrow's sweep, say) may succeed.
    public var isTransient: Bool {
        switch self {
        case .timedOut, .network, .rateLimited: return true
        case .http(_, let status, let code, _, _):
            // Apple's "not retryable" 5000000 means not now, in this run; a later run may still succeed.
            if let known = code.flatMap(AppStoreAPIErrorCode.lookup), known.retryable { return true }
            return status >= 500 || status == 429
        case .receiptStatus(_, _, _, let retryable, _): return retryable
        default: return false
        }
    }

    /// When Apple said to ask again, for a stop caused by a rate limit; nil for any other
    /// error, or when Apple named no moment or one far in the future (`rateLimitResume`).
    public var rateLimitResumeAt: Millis? {
        if case .at(let millis)? = rateLimitResume { return millis }
        return nil
    }

    /// What Apple said of when to ask again, for a stop caused by a rate limit.
    public var rateLimitResume: RateLimitResume? {
        if case .rateLimited(_, let resumeAt, _) = self { return resumeAt }
        return nil
    }

    /// Whether Apple's rate limit stopped the request: asking again before it lifts only
    /// adds to the count Apple keeps, so sweeps and backfills stop rather than go on.
    public var isRateLimit: Bool {
        if case .rateLimited = self { return true }
        return false
    }

    /// The same error as one attempt saw it, without the count of attempts.
    var single: RevalidationError {
        switch self {
        case .timedOut(let r, let s, _): return .timedOut(request: r, seconds: s, attempts: 1)
        case .network(let r, let reason, _): return .network(request: r, reason: reason, attempts: 1)
        case .rateLimited(let r, _, _): return .rateLimited(request: r, resumeAt: nil, attempts: 1)
        case .http(let r, let status, let code, let message, _): return .http(request: r, status: status, apiErrorCode: code, message: message, attempts: 1)
        case .receiptStatus(let status, let meaning, let env, let retryable, _):
            return .receiptStatus(status: status, meaning: meaning, environment: env, retryable: retryable, attempts: 1)
        default: return self
        }
    }

    static func attempts(_ n: Int) -> String { n > 1 ? "; failed after \(n) attempts" : "" }

    /// `2026-12-02 18:15 UTC`, rounded up to the minute so that "after then" is never early.
    public static func resumeText(_ millis: Millis) -> String {
        "\(DateText.minute((millis + 59_999) / 60_000 * 60_000)) UTC"
    }

    static func seconds(_ s: TimeInterval) -> String {
        s == s.rounded() ? String(Int(s)) : String(format: "%.1f", s)
    }
}
