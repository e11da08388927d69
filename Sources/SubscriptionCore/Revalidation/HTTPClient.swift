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

/// What a caller makes of one response.
enum HTTPVerdict {
    case accept
    /// Try again after `after` seconds (nil: the policy's backoff); when attempts run out, throw `failure`.
    case retry(after: TimeInterval?, failure: RevalidationError)
    case fail(RevalidationError)
}

/// Blocking HTTP over URLSession (in the `subdesk-http` helper process, started on first
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

    init(policy: HTTPPolicy, maxConnectionsPerHost: Int = 8, helper: HTTPHelper = .shared,
         maxResponseBytes: Int = HTTPClient.maxResponseBytes) {
        self.policy = policy
        self.maxResponseBytes = maxResponseBytes
        self.maxConnectionsPerHost = max(1, maxConnectionsPerHost)
        self.helper = helper
    }

    /// The usual verdict: 2xx and 4xx are the caller's to read; 429 and 5xx are retried.
    static func standardVerdict(_ request: HTTPRequest, _ response: HTTPResponse, attempt: Int) -> HTTPVerdict {
        if response.status == 429 {
            let wait = HTTPClient.retryAfter(response.header("Retry-After"))
            return .retry(after: wait, failure: .rateLimited(request: request.label, retryAfter: wait, attempts: attempt))
        }
        if response.status >= 500 {
            let error = AppStoreAPIErrorBody(response.body)
            return .retry(after: nil, failure: .http(request: request.label, status: response.status, apiErrorCode: error?.errorCode,
                                                     message: error?.summary ?? "server error", attempts: attempt))
        }
        return .accept
    }

    /// Sends `request` until `judge` accepts or fails a response, or attempts run out.
    /// `judge` receives the attempt count so its failures can report it.
    func send(_ request: HTTPRequest, judge: ((HTTPResponse, Int) -> HTTPVerdict)? = nil) throws -> HTTPResponse {
        // Without the HTTP helper no attempt can succeed: say so at once.
        if case .failure(let unavailable) = helper.process() {
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
                    if let after, after > policy.maxRetryAfter { throw failure }
                    sleep(after ?? policy.backoff(afterAttempt: attempt))
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
                sleep(policy.backoff(afterAttempt: attempt))
            }
        }
    }

    enum TransportProblem: Error {
        case timedOut
        case network(String)
        /// The body went past the request's limit; what the helper saw.
        case tooLarge(String)
    }

    /// One attempt, bounded by `policy.timeout` whatever the helper does.
    private func perform(_ request: HTTPRequest) -> Result<HTTPResponse, TransportProblem> {
        switch helper.process() {
        case .success(let process):
            return process.exchange(request, timeout: policy.timeout, connectionsPerHost: maxConnectionsPerHost,
                                    maxResponseBytes: maxResponseBytes)
        case .failure(let unavailable):
            return .failure(.network(unavailable.reason))
        }
    }

    /// Retry-After as delay-seconds or an HTTP-date (RFC 9110 §10.2.3); nil when absent or unreadable.
    static func retryAfter(_ value: String?, now: Date = Date()) -> TimeInterval? {
        guard let text = value?.trimmingCharacters(in: .whitespaces), !text.isEmpty else { return nil }
        if let seconds = Double(text), seconds.isFinite, seconds >= 0 { return seconds }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        guard let date = formatter.date(from: text) else { return nil }
        return max(0, date.timeIntervalSince(now))
    }
}
