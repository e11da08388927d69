import Foundation

/// Where Apple answers: the App Store Server API and verifyReceipt, each with a
/// production and a sandbox address. They are settings so that tests, proxies and
/// recorded-response servers can stand in for Apple.
public struct AppStoreEndpoints: Equatable, Sendable {
    public var serverAPI: URL
    public var serverAPISandbox: URL
    public var verifyReceipt: URL
    public var verifyReceiptSandbox: URL

    public init(serverAPI: URL, serverAPISandbox: URL, verifyReceipt: URL, verifyReceiptSandbox: URL) {
        self.serverAPI = serverAPI
        self.serverAPISandbox = serverAPISandbox
        self.verifyReceipt = verifyReceipt
        self.verifyReceiptSandbox = verifyReceiptSandbox
    }

    /// Apple's own hosts: the App Store Server API on the hosts Apple recommends since
    /// 2026-05-05 (`api.storekit.apple.com`, `api.storekit-sandbox.apple.com`).
    public static let apple = AppStoreEndpoints(
        serverAPI: URL(string: "https://api.storekit.apple.com")!,
        serverAPISandbox: URL(string: "https://api.storekit-sandbox.apple.com")!,
        verifyReceipt: URL(string: "https://buy.itunes.apple.com/verifyReceipt")!,
        verifyReceiptSandbox: URL(string: "https://sandbox.itunes.apple.com/verifyReceipt")!)

    /// The App Store Server API's hosts before 2026-05-05; they keep working, and
    /// `server_api_url` / `server_api_sandbox_url` can name them.
    public static let appleBefore2026 = (serverAPI: URL(string: "https://api.storekit.itunes.apple.com")!,
                                         serverAPISandbox: URL(string: "https://api.storekit-sandbox.itunes.apple.com")!)

    /// The Server API's address for `environment`: Production and Sandbox only. Anything
    /// else (Xcode, LocalTesting, an unknown value) is refused, so a test purchase never
    /// reaches the production host.
    public func serverAPI(for environment: AppStoreEnvironment) throws -> URL {
        switch environment {
        case .production: return serverAPI
        case .sandbox: return serverAPISandbox
        default: throw RevalidationError.noServerForEnvironment(environment.rawValue)
        }
    }

    /// The hosts an egress allow-list must let through for these endpoints.
    public var hosts: [String] {
        var seen: [String] = []
        for url in [serverAPI, serverAPISandbox, verifyReceipt, verifyReceiptSandbox] {
            let host = (url.host ?? "?") + (url.port.map { ":\($0)" } ?? "")
            if !seen.contains(host) { seen.append(host) }
        }
        return seen
    }

    public func verifyReceipt(for environment: AppStoreEnvironment) -> URL {
        environment == .sandbox ? verifyReceiptSandbox : verifyReceipt
    }

    /// Parses a configured address; `setting` names where it came from in the error.
    public static func url(_ text: String, setting: String) throws -> URL {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard let url = URL(string: trimmed), let scheme = url.scheme?.lowercased(),
              scheme == "https" || scheme == "http", let host = url.host, !host.isEmpty else {
            throw RevalidationError.notConfigured("\(setting): \(trimmed.escapingControlCharacters()) is not an http(s) URL with a host")
        }
        return url
    }
}

/// How patiently subdesk talks to Apple.
public struct HTTPPolicy: Equatable, Sendable {
    /// Seconds one attempt may take, connection included.
    public var timeout: TimeInterval
    /// Attempts per request, the first included; retries are for 429, 5xx and network errors.
    public var maxAttempts: Int
    /// The wait before the first retry; it doubles with each further retry up to `maxBackoff`.
    public var initialBackoff: TimeInterval
    public var maxBackoff: TimeInterval
    /// A Retry-After longer than this is not waited out: the request fails and says how long Apple asked for.
    public var maxRetryAfter: TimeInterval
    /// Up to this fraction is added to each backoff, so that concurrent sweepers do not retry in step.
    public var jitter: Double

    public init(timeout: TimeInterval = 30, maxAttempts: Int = 4, initialBackoff: TimeInterval = 0.5,
                maxBackoff: TimeInterval = 8, maxRetryAfter: TimeInterval = 60, jitter: Double = 0.2) {
        self.timeout = timeout
        self.maxAttempts = max(1, maxAttempts)
        self.initialBackoff = max(0, initialBackoff)
        self.maxBackoff = max(0, maxBackoff)
        self.maxRetryAfter = max(0, maxRetryAfter)
        self.jitter = min(max(0, jitter), 1)
    }

    /// The wait after failed attempt `attempt` (1-based).
    func backoff(afterAttempt attempt: Int) -> TimeInterval {
        let exponent = min(max(attempt - 1, 0), 30)
        let base = min(maxBackoff, initialBackoff * pow(2, Double(exponent)))
        return base + (jitter > 0 ? base * Double.random(in: 0...jitter) : 0)
    }
}

/// Everything revalidation needs besides the store: where Apple is, how to
/// authenticate, and how patient to be.
public struct RevalidationConfiguration: Sendable {
    public var endpoints: AppStoreEndpoints
    public var http: HTTPPolicy
    /// The in-app purchase key for the App Store Server API; without it revalidation
    /// falls back to verifyReceipt with a stored receipt.
    public var apiKey: AppStoreAPIKey?
    /// The app's shared secret, verifyReceipt's `password`.
    public var sharedSecret: String?
    /// With several apps, each app's key by its bundle id (`apiKey` is then unused): every
    /// request is signed for the app it is about (each app's shared secret is its policy's).
    public var appKeys: [String: AppStoreAPIKey] = [:]
    /// Transaction history pages fetched at most per revalidation, so a server that
    /// always says `hasMore` cannot keep us looping.
    public var historyPageLimit: Int
    /// Hears of every wait before a retry (a 429's Retry-After, a backoff), so a command
    /// on a terminal can say why it is quiet.
    public var onRetry: (@Sendable (HTTPRetryNotice) -> Void)?
    /// Where the key settings go, for the message when they are missing.
    public var keyPlace = ServerAPIKeyPlace()

    public init(endpoints: AppStoreEndpoints = .apple, http: HTTPPolicy = HTTPPolicy(), apiKey: AppStoreAPIKey? = nil,
                sharedSecret: String? = nil, historyPageLimit: Int = 100) {
        self.endpoints = endpoints
        self.http = http
        self.apiKey = apiKey
        self.sharedSecret = sharedSecret
        self.historyPageLimit = max(1, historyPageLimit)
    }
}
