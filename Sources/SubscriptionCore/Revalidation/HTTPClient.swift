import Foundation

struct HTTPRequest {
    var method: String
    var url: URL
    var headers: [String: String] = [:]
    var body: Data? = nil

    /// How errors name the request: method and URL, never headers or body (they hold secrets).
    var label: String { "\(method) \(url.absoluteString)" }
}

struct HTTPResponse {
    var status: Int
    /// Header names lower-cased.
    var headers: [String: String]
    var body: Data

    func header(_ name: String) -> String? { headers[name.lowercased()] }
}

/// A wait before another attempt, told to whoever watches (a terminal's stderr), so a
/// long retry is never silence.
public struct HTTPRetryNotice: Sendable, CustomStringConvertible {
    /// Method and URL.
    public let request: String
    /// What went wrong with the attempt that failed, in words.
    public let problem: String
    public let wait: TimeInterval
    /// The attempt about to be made, and how many are allowed.
    public let nextAttempt: Int
    public let maxAttempts: Int
    /// True when the wait is the one Apple asked for (Retry-After).
    public let askedByApple: Bool

    public var description: String {
        let waitText = wait < 10 ? String(format: "%.1f s", wait) : "\(Int(wait.rounded(.up))) s"
        return "\(request): \(problem); waiting \(waitText)\(askedByApple ? " as Apple asks" : ""), then attempt \(nextAttempt) of \(maxAttempts)"
    }
}

/// What a caller makes of one response.
enum HTTPVerdict {
    case accept
    /// Try again after `after` seconds (nil: the policy's backoff); when attempts run out, throw `failure`.
    case retry(after: TimeInterval?, failure: RevalidationError)
    case fail(RevalidationError)
}

/// Blocking HTTP (in the `subdesk-http` helper process, started on first
/// use: see `HTTPHelper`) with a timeout, bounded exponential backoff for
/// transient failures, and Retry-After for 429. Blocking on purpose: revalidation runs
/// on the caller's thread (the dashboard's worker, a sweep worker, the command line),
/// each of which owns its own store connection.
final class HTTPClient: @unchecked Sendable {
    /// The largest response body read. Apple's answers are small (a notification history
    /// page is a few hundred KB, a verifyReceipt answer for years of renewals a few MB);
    /// anything past this is a broken or hostile server, and the helper stops reading it
    /// there rather than hold it whole.
    static let maxResponseBytes = 8 << 20

    let policy: HTTPPolicy
    let maxResponseBytes: Int
    private let maxConnectionsPerHost: Int
    private let helper: HTTPHelper
    /// Replaced in tests that count waits instead of making them.
    var sleep: (TimeInterval) -> Void = { Thread.sleep(forTimeInterval: $0) }
    /// Hears of every wait before a retry.
    let onRetry: (@Sendable (HTTPRetryNotice) -> Void)?
    /// Answers each attempt in place of the helper when set: the fuzz target's seam, which
    /// feeds arbitrary responses to every caller's handling of them.
    var exchange: ((HTTPRequest) -> Result<HTTPResponse, TransportProblem>)?

    init(policy: HTTPPolicy, maxConnectionsPerHost: Int = 8, helper: HTTPHelper = .shared,
         maxResponseBytes: Int = HTTPClient.maxResponseBytes, onRetry: (@Sendable (HTTPRetryNotice) -> Void)? = nil) {
        self.onRetry = onRetry
        self.policy = policy
        self.maxResponseBytes = maxResponseBytes
        self.maxConnectionsPerHost = max(1, maxConnectionsPerHost)
        self.helper = helper
    }

    /// The usual verdict: 2xx and 4xx are the caller's to read; 429 waits for Apple's
    /// Retry-After; the error codes Apple marks "try again" (4040002, 4040004, 4040006,
    /// 5000001) and 5xx without a code of Apple's are retried with backoff; a 5xx whose
    /// code Apple says is final (5000000) fails at once.
    static func standardVerdict(_ request: HTTPRequest, _ response: HTTPResponse, attempt: Int, now: Date = Date()) -> HTTPVerdict {
        if response.status == 429 {
            // The wait is bounded by the parse (`retryAfter`): the moment it ends is a
            // date only when it is near enough to be one, never a conversion that traps.
            let wait = HTTPClient.retryAfter(response.header("Retry-After"), now: now)
            let resumeAt = wait.map { $0 >= HTTPClient.farFutureWait ? RateLimitResume.farFuture
                                                                      : .at(DateText.millis(now.addingTimeInterval($0))) }
            return .retry(after: wait, failure: .rateLimited(request: request.label, resumeAt: resumeAt, attempts: attempt))
        }
        guard response.status >= 400 else { return .accept }
        let error = AppStoreAPIErrorBody(response.body)
        let failure = RevalidationError.http(request: request.label, status: response.status, apiErrorCode: error?.errorCode,
                                             message: error?.summary ?? "server error", attempts: attempt)
        if let error {
            if error.isRetryable { return .retry(after: nil, failure: failure) }
            return response.status >= 500 ? .fail(failure) : .accept
        }
        return response.status >= 500 ? .retry(after: nil, failure: failure) : .accept
    }

    /// Sends `request` until `judge` accepts or fails a response, or attempts run out.
    /// `judge` receives the attempt count so its failures can report it.
    func send(_ request: HTTPRequest, judge: ((HTTPResponse, Int) -> HTTPVerdict)? = nil) throws -> HTTPResponse {
        // Without the HTTP helper no attempt can succeed: say so at once.
        if exchange == nil, case .failure(let unavailable) = helper.process() {
            throw RevalidationError.network(request: request.label, reason: unavailable.reason, attempts: 0)
        }
        var attempt = 0
        while true {
            attempt += 1
            let isLast = attempt >= policy.maxAttempts
            switch perform(request) {
            case .success(let response):
                let verdict = judge?(response, attempt) ?? HTTPClient.standardVerdict(request, response, attempt: attempt)
                switch verdict {
                case .accept:
                    return response
                case .fail(let error):
                    throw error
                case .retry(let after, let failure):
                    if isLast { throw failure }
                    // A wait longer than the policy's bound is not made here: the caller
                    // stops with the time Apple named, and a later run goes on from there.
                    if let after, after > policy.maxRetryAfter { throw failure }
                    let wait = after ?? policy.backoff(afterAttempt: attempt)
                    notify(request, problem: failure, wait: wait, attempt: attempt, askedByApple: after != nil)
                    sleep(wait)
                }
            case .failure(.tooLarge(let detail)):
                // The same request would bring the same body: asking again only downloads it again.
                throw RevalidationError.responseTooLarge(request: request.label, limit: maxResponseBytes, detail: detail)
            case .failure(let problem):
                if isLast {
                    switch problem {
                    case .timedOut: throw RevalidationError.timedOut(request: request.label, seconds: policy.timeout, attempts: attempt)
                    case .network(let reason): throw RevalidationError.network(request: request.label, reason: reason, attempts: attempt)
                    case .tooLarge(let detail):
                        throw RevalidationError.responseTooLarge(request: request.label, limit: maxResponseBytes, detail: detail)
                    }
                }
                let wait = policy.backoff(afterAttempt: attempt)
                let failure: RevalidationError
                switch problem {
                case .timedOut: failure = .timedOut(request: request.label, seconds: policy.timeout, attempts: 1)
                case .network(let reason), .tooLarge(let reason): failure = .network(request: request.label, reason: reason, attempts: 1)
                }
                notify(request, problem: failure, wait: wait, attempt: attempt, askedByApple: false)
                sleep(wait)
            }
        }
    }

    private func notify(_ request: HTTPRequest, problem: RevalidationError, wait: TimeInterval, attempt: Int, askedByApple: Bool) {
        guard let onRetry else { return }
        // The problem as one attempt saw it: the request is named once, at the front.
        var text = problem.single.description
        if text.hasPrefix(request.label + ": ") { text.removeFirst(request.label.count + 2) }
        onRetry(HTTPRetryNotice(request: request.label, problem: text, wait: wait, nextAttempt: attempt + 1,
                                maxAttempts: policy.maxAttempts, askedByApple: askedByApple))
    }

    enum TransportProblem: Error {
        case timedOut
        case network(String)
        /// The body went past the request's limit; what the helper saw.
        case tooLarge(String)
    }

    /// One attempt, bounded by `policy.timeout` whatever the helper does.
    private func perform(_ request: HTTPRequest) -> Result<HTTPResponse, TransportProblem> {
        if let exchange { return exchange(request) }
        return helper.exchange(request, timeout: policy.timeout, connectionsPerHost: maxConnectionsPerHost,
                               maxResponseBytes: maxResponseBytes)
    }

    /// A number at least this large is a moment, in milliseconds since 1970 (from
    /// 1973-03 on), not a delay: no server asks for a wait of three thousand years.
    static let epochMillisThreshold = 100_000_000_000.0

    /// A wait of a year or more is "far in the future": no rate limit of Apple's lasts
    /// that long, and the moment it ends is not worth a date. `retryAfter` answers no more
    /// than this, so whatever a server sends (`1e300`, twenty digits) the wait and the
    /// moment it ends stay numbers a date can hold.
    static let farFutureWait: TimeInterval = 366 * 86_400

    /// The seconds to wait that Retry-After asks for, at most `farFutureWait`: Apple's App
    /// Store Server API sends the moment the limit lifts as UNIX time in milliseconds
    /// ("Identifying rate limits"); other servers send delay-seconds or an HTTP-date (RFC
    /// 9110 §10.2.3), told apart by magnitude. A moment already past is no wait; nil when
    /// absent or unreadable. Every comparison is made on the Double as read, before any
    /// conversion.
    static func retryAfter(_ value: String?, now: Date = Date()) -> TimeInterval? {
        guard let text = value?.trimmingCharacters(in: .whitespaces), !text.isEmpty, text.utf8.count <= 64 else { return nil }
        let wait: TimeInterval
        if let number = Double(text), number.isFinite, number >= 0 {
            wait = number < epochMillisThreshold ? number : number / 1000 - now.timeIntervalSince1970
        } else {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
            guard let date = formatter.date(from: text) else { return nil }
            wait = date.timeIntervalSince(now)
        }
        guard wait.isFinite else { return wait.isNaN ? nil : (wait > 0 ? farFutureWait : 0) }
        return min(max(0, wait), farFutureWait)
    }
}
