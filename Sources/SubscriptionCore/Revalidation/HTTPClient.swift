import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

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

/// Blocking HTTP over URLSession with a timeout, bounded exponential backoff for
/// transient failures, and Retry-After for 429. Blocking on purpose: revalidation runs
/// on the caller's thread (the dashboard's worker, a sweep worker, the command line),
/// each of which owns its own store connection.
final class HTTPClient: @unchecked Sendable {
    let policy: HTTPPolicy
    private let session: URLSession
    /// Replaced in tests that count waits instead of making them.
    var sleep: (TimeInterval) -> Void = { Thread.sleep(forTimeInterval: $0) }

    init(policy: HTTPPolicy, maxConnectionsPerHost: Int = 8) {
        self.policy = policy
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = HTTPClient.sessionTimeout(policy.timeout)
        configuration.timeoutIntervalForResource = HTTPClient.sessionTimeout(policy.timeout)
        configuration.httpMaximumConnectionsPerHost = max(1, maxConnectionsPerHost)
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        session = URLSession(configuration: configuration)
    }

    deinit { session.finishTasksAndInvalidate() }

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
            case .failure(let problem):
                if isLast {
                    switch problem {
                    case .timedOut: throw RevalidationError.timedOut(request: request.label, seconds: policy.timeout, attempts: attempt)
                    case .network(let reason): throw RevalidationError.network(request: request.label, reason: reason, attempts: attempt)
                    }
                }
                sleep(policy.backoff(afterAttempt: attempt))
            }
        }
    }

    enum TransportProblem: Error {
        case timedOut
        case network(String)
    }

    /// URLSession's own timeout, kept a little beyond ours: on Linux it is truncated to
    /// whole seconds (0.5 s would time out at once), so the exact deadline is the
    /// semaphore's in `perform`, and URLSession's only a backstop.
    static func sessionTimeout(_ timeout: TimeInterval) -> TimeInterval {
        max(1, timeout.rounded(.up)) + 1
    }

    /// One attempt, bounded by `policy.timeout` whatever URLSession does.
    private func perform(_ request: HTTPRequest) -> Result<HTTPResponse, TransportProblem> {
        var urlRequest = URLRequest(url: request.url, cachePolicy: .reloadIgnoringLocalCacheData,
                                    timeoutInterval: HTTPClient.sessionTimeout(policy.timeout))
        urlRequest.httpMethod = request.method
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        urlRequest.httpBody = request.body
        let done = DispatchSemaphore(value: 0)
        let box = ResultBox()
        let task = session.dataTask(with: urlRequest) { data, response, error in
            if let error {
                box.result = .failure(HTTPClient.classify(error))
            } else if let http = response as? HTTPURLResponse {
                var headers: [String: String] = [:]
                for (key, value) in http.allHeaderFields {
                    if let k = key as? String, let v = value as? String { headers[k.lowercased()] = v }
                }
                box.result = .success(HTTPResponse(status: http.statusCode, headers: headers, body: data ?? Data()))
            } else {
                box.result = .failure(.network("no HTTP response"))
            }
            done.signal()
        }
        task.resume()
        if done.wait(timeout: .now() + policy.timeout) == .timedOut {
            task.cancel()
            _ = done.wait(timeout: .now() + 1)
            return .failure(.timedOut)
        }
        return box.result ?? .failure(.network("no result"))
    }

    private final class ResultBox: @unchecked Sendable {
        private let lock = NSLock()
        private var value: Result<HTTPResponse, TransportProblem>?
        var result: Result<HTTPResponse, TransportProblem>? {
            get { lock.lock(); defer { lock.unlock() }; return value }
            set { lock.lock(); value = newValue; lock.unlock() }
        }
    }

    static func classify(_ error: Error) -> TransportProblem {
        if let urlError = error as? URLError {
            switch urlError.code {
            case .timedOut: return .timedOut
            case .cannotConnectToHost: return .network("connection refused")
            case .cannotFindHost, .dnsLookupFailed: return .network("host not found")
            case .networkConnectionLost: return .network("connection lost")
            case .notConnectedToInternet: return .network("not connected")
            case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate,
                 .serverCertificateNotYetValid, .serverCertificateHasUnknownRoot:
                return .network("TLS failed (\(urlError.code.rawValue))")
            default: return .network("\(urlError.localizedDescription) (URLError \(urlError.code.rawValue))")
            }
        }
        return .network((error as NSError).localizedDescription)
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
