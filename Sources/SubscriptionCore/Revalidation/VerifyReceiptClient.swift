import Foundation

/// The legacy verifyReceipt endpoint: production first, the sandbox on 21007.
public final class VerifyReceiptClient: @unchecked Sendable {
    public let endpoints: AppStoreEndpoints
    let sharedSecret: String?
    /// Where to start; a sandbox-only store starts (and stays) in the sandbox.
    public let startEnvironment: AppStoreEnvironment
    let http: HTTPClient
    var now: () -> Millis = { DateText.nowMillis() }

    public init(endpoints: AppStoreEndpoints, policy: HTTPPolicy, sharedSecret: String?,
                startEnvironment: AppStoreEnvironment = .production, maxConnections: Int = 8,
                onRetry: (@Sendable (HTTPRetryNotice) -> Void)? = nil) {
        self.endpoints = endpoints
        self.sharedSecret = sharedSecret
        self.startEnvironment = startEnvironment
        http = HTTPClient(policy: policy, maxConnectionsPerHost: maxConnections, onRetry: onRetry)
    }

    /// Posts `receipt` (base64 receipt data) and returns a response with status 0 or 21006;
    /// any other status throws with its documented meaning.
    public func verify(receipt: String, excludeOldTransactions: Bool = false) throws -> VerifyReceiptResponse {
        let first = try post(receipt, to: startEnvironment, excludeOld: excludeOldTransactions)
        if first.status == VerifyReceiptStatus.sandboxReceiptSentToProduction && startEnvironment == .production {
            return try accept(try post(receipt, to: .sandbox, excludeOld: excludeOldTransactions), environment: .sandbox)
        }
        return try accept(first, environment: startEnvironment)
    }

    private func accept(_ response: VerifyReceiptResponse, environment: AppStoreEnvironment) throws -> VerifyReceiptResponse {
        guard response.isValid else {
            throw RevalidationError.receiptStatus(status: response.status, meaning: VerifyReceiptStatus.meaning(response.status),
                                                  environment: environment.rawValue,
                                                  retryable: Self.isRetryable(response), attempts: 1)
        }
        return response
    }

    static func isRetryable(_ response: VerifyReceiptResponse) -> Bool {
        if VerifyReceiptStatus.isInternalError(response.status) { return response.isRetryable ?? false }
        return VerifyReceiptStatus.isTemporary(response.status)
    }

    private func post(_ receipt: String, to environment: AppStoreEnvironment, excludeOld: Bool) throws -> VerifyReceiptResponse {
        var fields: [String: Any] = ["receipt-data": receipt, "exclude-old-transactions": excludeOld]
        if let sharedSecret { fields["password"] = sharedSecret }
        let body = try JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys])
        let request = HTTPRequest(method: "POST", url: endpoints.verifyReceipt(for: environment),
                                  headers: ["Content-Type": "application/json", "Accept": "application/json"], body: body)
        let label = "verifyReceipt (\(environment.rawValue)) \(request.label)"
        var decoded: VerifyReceiptResponse?
        _ = try http.send(request) { response, attempt in
            if response.status == 429 || response.status >= 500 {
                return HTTPClient.standardVerdict(request, response, attempt: attempt)
            }
            guard response.status == 200 else {
                return .fail(.http(request: label, status: response.status, apiErrorCode: nil,
                                   message: "expected 200 with a JSON status (is the verifyReceipt URL right?)", attempts: attempt))
            }
            let parsed: VerifyReceiptResponse
            do {
                parsed = try VerifyReceiptResponse(json: try JSONFields(data: response.body, path: "response"), receivedAt: self.now())
            } catch {
                return .fail(.malformedResponse(request: label, problem: "\(error)"))
            }
            decoded = parsed
            // Statuses Apple marks as worth another try are retried like a 5xx; `is-retryable`
            // decides for 21100-21199 and is never overridden.
            if !parsed.isValid && parsed.status != VerifyReceiptStatus.sandboxReceiptSentToProduction
                && VerifyReceiptClient.isRetryable(parsed) {
                return .retry(after: nil, failure: .receiptStatus(status: parsed.status, meaning: VerifyReceiptStatus.meaning(parsed.status),
                                                                  environment: environment.rawValue, retryable: true, attempts: attempt))
            }
            return .accept
        }
        guard let decoded else {
            throw RevalidationError.malformedResponse(request: label, problem: "no body")
        }
        return decoded
    }
}
