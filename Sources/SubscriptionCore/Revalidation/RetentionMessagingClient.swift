import Foundation

/// A review state Apple gives an uploaded message or image (`messageState`, `imageState`).
/// Apple may add states: an unknown one is kept as Apple spelled it.
public enum RetentionReviewState: Equatable, Sendable, CustomStringConvertible {
    case pending, approved, rejected
    case other(String)

    public init(_ text: String) {
        switch text {
        case "PENDING": self = .pending
        case "APPROVED": self = .approved
        case "REJECTED": self = .rejected
        default: self = .other(text)
        }
    }

    public var rawValue: String {
        switch self {
        case .pending: return "PENDING"
        case .approved: return "APPROVED"
        case .rejected: return "REJECTED"
        case .other(let text): return text
        }
    }

    public var description: String { rawValue }
}

/// An image's size class at Apple (`imageSize`).
public enum RetentionImageKind: String, CaseIterable, Sendable {
    case fullSize = "FULL_SIZE"
    case bulletPoint = "BULLET_POINT"
}

/// One entry of Get Image List or Get Message List.
public struct RetentionListedItem: Equatable, Sendable {
    public var identifier: String
    public var state: RetentionReviewState
    /// An image's size class (images only).
    public var imageKind: String?
}

/// Get Performance Test Results, as Apple answers it.
public struct RetentionPerformanceResult: Sendable {
    public var result: String
    public var target: String?
    public var successRate: Int?
    public var numPending: Int?
    /// average, p50, p90, p95, p99 in milliseconds, as Apple names them.
    public var responseTimes: [String: Int]
    /// Failures by kind (`TIMED_OUT`, `NO_RESPONSE`, ...).
    public var failures: [String: Int]
    /// Apple's own thresholds: responseTimeThreshold (ms), successRateThreshold (%), and the test's shape.
    public var config: [String: Int]

    /// Apple's verdict (`result`): a test still running, passed or failed; another word kept as Apple wrote it.
    public enum Verdict: Equatable, Sendable {
        case pending, pass, fail
        case other(String)
    }

    public var verdict: Verdict {
        switch result {
        case "PENDING": return .pending
        case "PASS": return .pass
        case "FAIL": return .fail
        default: return .other(result)
        }
    }

    public var isPending: Bool { verdict == .pending }

    /// The result in lines, each figure beside Apple's threshold for it: what
    /// `retention performance-test` prints and `:retention` shows.
    public var summaryLines: [String] {
        var lines = ["result \(result)" + (target.map { " for \($0)" } ?? "")]
        lines.append("success rate \(successRate.map(String.init) ?? "?")% (Apple's threshold \(config["successRateThreshold"].map(String.init) ?? "?")%), "
                     + "pending \(numPending.map(String.init) ?? "?")"
                     + (failures.isEmpty ? "" : ", failures " + failures.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")))
        let times = ["average", "p50", "p90", "p95", "p99"].map { "\($0) \(responseTimes[$0].map { "\($0) ms" } ?? "?")" }
        lines.append("response times " + times.joined(separator: ", ") + " (Apple's threshold \(config["responseTimeThreshold"].map { "\($0) ms" } ?? "?"))")
        return lines
    }
}

/// Spaces the calls made for one app so that Apple's per-app rate limits ("Identifying rate
/// limits": 1 request a second per endpoint, 10 for Configure Default Message; a tenth of
/// that in the sandbox) are kept by this process rather than learnt from 429s.
public final class RetentionPacer: @unchecked Sendable {
    public static let shared = RetentionPacer()
    private let lock = NSLock()
    private var next: [String: Date] = [:]
    /// Replaced in tests.
    var sleep: (TimeInterval) -> Void = { Thread.sleep(forTimeInterval: $0) }

    /// Waits until a call of `endpoint` for `app` may be made at `perSecond`, and books it.
    public func wait(app: String, endpoint: String, perSecond: Double) {
        let key = app + " " + endpoint
        let interval = 1 / max(perSecond, 0.01)
        lock.lock()
        let now = Date()
        let at = max(now, next[key] ?? now)
        next[key] = at.addingTimeInterval(interval)
        lock.unlock()
        let wait = at.timeIntervalSince(now)
        if wait > 0 { sleep(wait) }
    }
}

/// The Retention Messaging API (`/inApps/v1/messaging/...` on the App Store Server API's
/// hosts), signed with the app's App Store Server API key like every other call. Retries
/// are made here, not by the HTTP layer: a 429 is waited out as Apple's Retry-After asks
/// (a UNIX time in milliseconds) when the wait is within the policy's bound, a 5xx is
/// retried with backoff, and a timeout of a call that is not idempotent at Apple (an
/// upload) is never simply repeated: the caller is told, and reads the list first.
public final class RetentionMessagingClient: @unchecked Sendable {
    public let key: AppStoreAPIKey
    public let environment: AppStoreEnvironment
    let base: URL
    let policy: HTTPPolicy
    let http: HTTPClient
    let pacer: RetentionPacer
    let onRetry: (@Sendable (HTTPRetryNotice) -> Void)?

    /// The calls, each with its rate limit in production (requests a second per app).
    public enum Endpoint: String, Sendable {
        case uploadImage, deleteImage, imageList, uploadMessage, deleteMessage, messageList
        case configureDefault, getDefault, deleteDefault, configureRealtimeURL, getRealtimeURL, deleteRealtimeURL
        case initiatePerformanceTest, performanceTestResult

        public var perSecond: Double { self == .configureDefault ? 10 : 1 }
        /// Whether sending it twice may do it twice at Apple.
        var repeatable: Bool { ![.uploadImage, .uploadMessage, .initiatePerformanceTest].contains(self) }
    }

    /// A call that timed out or lost its connection, and was not repeated because Apple
    /// may have done it.
    public struct Unanswered: Error, CustomStringConvertible {
        public let request: String
        public let problem: RevalidationError
        public var description: String { "\(request): no answer (\(problem.description)); Apple may or may not have done it" }
    }

    public init(key: AppStoreAPIKey, endpoints: AppStoreEndpoints, environment: AppStoreEnvironment, policy: HTTPPolicy,
                pacer: RetentionPacer = .shared, onRetry: (@Sendable (HTTPRetryNotice) -> Void)? = nil) throws {
        self.key = key
        self.environment = environment
        base = try endpoints.serverAPI(for: environment).appendingPathComponent("inApps/v1/messaging")
        self.policy = policy
        var single = policy
        single.maxAttempts = 1
        http = HTTPClient(policy: single, maxConnectionsPerHost: 1)
        self.pacer = pacer
        self.onRetry = onRetry
    }

    // MARK: images

    public func images() throws -> [RetentionListedItem] {
        let json = try call(.imageList, "GET", "image/list")
        return try Self.list(json, "imageIdentifiers", id: "imageIdentifier", state: "imageState", kind: "imageSize")
    }

    public func uploadImage(id: String, kind: RetentionImageKind, png: Data) throws {
        _ = try call(.uploadImage, "PUT", "image/\(try RetentionText.identifier(id))", query: ["imageSize": kind.rawValue],
                     body: png, contentType: "image/png")
    }

    public func deleteImage(id: String) throws {
        _ = try call(.deleteImage, "DELETE", "image/\(try RetentionText.identifier(id))")
    }

    // MARK: messages

    public func messages() throws -> [RetentionListedItem] {
        let json = try call(.messageList, "GET", "message/list")
        return try Self.list(json, "messageIdentifiers", id: "messageIdentifier", state: "messageState", kind: nil)
    }

    public func uploadMessage(id: String, body: Data) throws {
        _ = try call(.uploadMessage, "PUT", "message/\(try RetentionText.identifier(id))", body: body, contentType: "application/json")
    }

    public func deleteMessage(id: String) throws {
        _ = try call(.deleteMessage, "DELETE", "message/\(try RetentionText.identifier(id))")
    }

    // MARK: default messages

    /// The default message's identifier, or nil when none is configured (404).
    public func defaultMessage(product: String, locale: String) throws -> String? {
        let path = "default/\(try RetentionText.productId(product))/\(try RetentionText.locale(locale))"
        guard let json = try call(.getDefault, "GET", path, notFoundIsNil: true) else { return nil }
        return json["messageIdentifier"] as? String
    }

    public func setDefaultMessage(product: String, locale: String, messageId: String) throws {
        let path = "default/\(try RetentionText.productId(product))/\(try RetentionText.locale(locale))"
        let body = try JSONSerialization.data(withJSONObject: ["messageIdentifier": try RetentionText.identifier(messageId)])
        _ = try call(.configureDefault, "PUT", path, body: body, contentType: "application/json")
    }

    public func deleteDefaultMessage(product: String, locale: String) throws {
        let path = "default/\(try RetentionText.productId(product))/\(try RetentionText.locale(locale))"
        _ = try call(.deleteDefault, "DELETE", path)
    }

    // MARK: real-time URL

    public func realtimeURL() throws -> String? {
        guard let json = try call(.getRealtimeURL, "GET", "realtime/url", notFoundIsNil: true) else { return nil }
        return json["realtimeURL"] as? String
    }

    public func setRealtimeURL(_ url: String) throws {
        let body = try JSONSerialization.data(withJSONObject: ["realtimeURL": try RetentionText.realtimeURL(url)])
        _ = try call(.configureRealtimeURL, "PUT", "realtime/url", body: body, contentType: "application/json")
    }

    public func deleteRealtimeURL() throws {
        _ = try call(.deleteRealtimeURL, "DELETE", "realtime/url")
    }

    // MARK: performance test (sandbox)

    /// Starts Apple's performance test of the sandbox real-time URL with a sandbox purchase;
    /// the request id to follow, and Apple's thresholds.
    public func startPerformanceTest(originalTransactionId: String) throws -> (requestId: String, config: [String: Int]) {
        let id = try AppStoreServerAPIClient.checkedTransactionId(originalTransactionId)
        let body = try JSONSerialization.data(withJSONObject: ["originalTransactionId": id])
        guard let json = try call(.initiatePerformanceTest, "POST", "performanceTest", body: body, contentType: "application/json"),
              let requestId = json["requestId"] as? String, !requestId.isEmpty else {
            throw RevalidationError.malformedResponse(request: "POST \(base.absoluteString)/performanceTest", problem: "no requestId")
        }
        return (requestId, Self.integers(json["config"]))
    }

    public func performanceTestResult(requestId: String) throws -> RetentionPerformanceResult {
        let id = try RetentionText.identifier(requestId)
        guard let json = try call(.performanceTestResult, "GET", "performanceTest/result/\(id)") else {
            throw RevalidationError.malformedResponse(request: "GET performanceTest/result/\(id)", problem: "no answer")
        }
        guard let result = json["result"] as? String else {
            throw RevalidationError.malformedResponse(request: "GET performanceTest/result/\(id)", problem: "no result")
        }
        return RetentionPerformanceResult(result: result, target: json["target"] as? String, successRate: Self.integer(json["successRate"]),
                                          numPending: Self.integer(json["numPending"]), responseTimes: Self.integers(json["responseTimes"]),
                                          failures: Self.integers(json["failures"]), config: Self.integers(json["config"]))
    }

    // MARK: the exchange

    /// One call, paced and retried as the type says; the answer's JSON object (nil for an
    /// empty answer, or a 404 when `notFoundIsNil`).
    func call(_ endpoint: Endpoint, _ method: String, _ path: String, query: [String: String] = [:], body: Data? = nil,
              contentType: String? = nil, notFoundIsNil: Bool = false) throws -> [String: Any]? {
        var components = URLComponents(url: base.appendingPathComponent(path), resolvingAgainstBaseURL: false)
        if !query.isEmpty { components?.queryItems = query.sorted { $0.key < $1.key }.map { URLQueryItem(name: $0.key, value: $0.value) } }
        guard let url = components?.url else { throw RevalidationError.notConfigured("cannot form a URL for \(path)") }
        let rate = endpoint.perSecond * (environment == .sandbox ? 0.1 : 1)
        var attempt = 0
        while true {
            attempt += 1
            pacer.wait(app: key.bundleId + " " + environment.rawValue, endpoint: endpoint.rawValue, perSecond: rate)
            let token: String
            do { token = try key.token() } catch {
                throw RevalidationError.notConfigured("cannot sign the App Store Server API token: \(error)")
            }
            var headers = ["Authorization": "Bearer \(token)", "Accept": "application/json"]
            if let contentType { headers["Content-Type"] = contentType }
            let request = HTTPRequest(method: method, url: url, headers: headers, body: body)
            let response: HTTPResponse
            do {
                response = try http.send(request) { _, _ in .accept }
            } catch let problem as RevalidationError {
                switch problem {
                case .timedOut, .network:
                    guard endpoint.repeatable else { throw Unanswered(request: request.label, problem: problem) }
                    guard attempt < policy.maxAttempts else { throw problem }
                    wait(request, problem, policy.backoff(afterAttempt: attempt), attempt, askedByApple: false)
                    continue
                default: throw problem
                }
            }
            if (200..<300).contains(response.status) {
                if response.body.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D }) { return nil }
                guard let object = (try? JSONSerialization.jsonObject(with: response.body)) as? [String: Any] else {
                    throw RevalidationError.malformedResponse(request: request.label, problem: "the answer is not a JSON object")
                }
                return object
            }
            if response.status == 404 && notFoundIsNil { return nil }
            if response.status == 429 {
                let after = HTTPClient.retryAfter(response.header("Retry-After"))
                let now = Date()
                let resume = after.map { $0 >= HTTPClient.farFutureWait ? RateLimitResume.farFuture : .at(DateText.millis(now.addingTimeInterval($0))) }
                let failure = RevalidationError.rateLimited(request: request.label, resumeAt: resume, attempts: attempt)
                guard attempt < policy.maxAttempts, (after ?? 0) <= policy.maxRetryAfter else { throw failure }
                wait(request, failure, after ?? policy.backoff(afterAttempt: attempt), attempt, askedByApple: after != nil)
                continue
            }
            let error = AppStoreAPIErrorBody(response.body)
            let failure = RevalidationError.http(request: request.label, status: response.status, apiErrorCode: error?.errorCode,
                                                 message: response.status == 401 ? "unauthorized: Apple refused the token" : (error?.summary ?? "no error body"),
                                                 attempts: attempt)
            if response.status >= 500 && endpoint.repeatable && attempt < policy.maxAttempts {
                wait(request, failure, policy.backoff(afterAttempt: attempt), attempt, askedByApple: false)
                continue
            }
            throw failure
        }
    }

    private func wait(_ request: HTTPRequest, _ problem: RevalidationError, _ seconds: TimeInterval, _ attempt: Int, askedByApple: Bool) {
        onRetry?(HTTPRetryNotice(request: request.label, problem: problem.single.description, wait: seconds, nextAttempt: attempt + 1,
                                 maxAttempts: policy.maxAttempts, askedByApple: askedByApple))
        http.sleep(seconds)
    }

    static func list(_ json: [String: Any]?, _ field: String, id: String, state: String, kind: String?) throws -> [RetentionListedItem] {
        guard let entries = json?[field] as? [Any] ?? (json == nil ? [] : nil) else {
            throw RevalidationError.malformedResponse(request: field, problem: "\(field) is not a list")
        }
        return entries.compactMap { entry in
            guard let object = entry as? [String: Any], let identifier = object[id] as? String else { return nil }
            return RetentionListedItem(identifier: identifier, state: RetentionReviewState(object[state] as? String ?? "?"),
                                       imageKind: kind.flatMap { object[$0] as? String })
        }
    }

    /// An integer Apple sent, or nil: a number outside Int's range or with a fraction is not
    /// one, nor is true or false. (`is Bool` would not say: Foundation's 0 and 1 answer yes.)
    static func integer(_ value: Any?) -> Int? {
        guard let number = value as? NSNumber, !JSONFields.isBool(number) else { return nil }
        let double = number.doubleValue
        guard double.isFinite, double.rounded() == double, abs(double) < 9e15 else { return nil }
        return Int(double)
    }

    static func integers(_ value: Any?) -> [String: Int] {
        guard let object = value as? [String: Any] else { return [:] }
        var out: [String: Int] = [:]
        for (k, v) in object { if let n = integer(v) { out[k] = n } }
        return out
    }
}
