import Foundation

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
    case rateLimited(request: String, retryAfter: TimeInterval?, attempts: Int)
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
        case .rateLimited(let request, let retryAfter, let attempts):
            let wait = retryAfter.map { ", Apple asked to wait \(Self.seconds($0)) s" } ?? ""
            return "\(request): rate limited (HTTP 429\(wait))\(Self.attempts(attempts))"
        case .http(let request, let status, let code, let message, let attempts):
            let apiCode = code.map { " error \($0)" } ?? ""
            return "\(request): HTTP \(status)\(apiCode): \(message)\(Self.attempts(attempts))"
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
        }
    }

    /// Whether trying again later (tomorrow's sweep, say) may succeed.
    public var isTransient: Bool {
        switch self {
        case .timedOut, .network, .rateLimited: return true
        case .http(_, let status, _, _, _): return status >= 500 || status == 429
        case .receiptStatus(_, _, _, let retryable, _): return retryable
        default: return false
        }
    }

    static func attempts(_ n: Int) -> String { n > 1 ? " (\(n) attempts)" : "" }

    static func seconds(_ s: TimeInterval) -> String {
        s == s.rounded() ? String(Int(s)) : String(format: "%.1f", s)
    }
}
