import Foundation

/// OCSP over HTTP POST (RFC 6960 appendix A), through the `subdesk-http` helper like
/// every other request subdesk makes.
///
/// Patient only briefly: the check runs while Apple (or a CGI web server) waits for the
/// answer to a notification, and a responder that cannot answer now costs nothing but a
/// 503 that Apple retries later.
public struct HTTPOCSPTransport: OCSPTransport {
    public static let defaultTimeout: TimeInterval = 5
    /// OCSP answers are a few kilobytes; anything far larger is not one.
    static let maxAnswerBytes = 256 << 10

    private let client: HTTPClient

    /// - Parameter timeout: seconds per attempt; two attempts are made.
    public init(timeout: TimeInterval = HTTPOCSPTransport.defaultTimeout) {
        client = HTTPClient(policy: HTTPPolicy(timeout: timeout, maxAttempts: 2, initialBackoff: 0.25, maxBackoff: 0.25,
                                               maxRetryAfter: 0, jitter: 0),
                            maxConnectionsPerHost: 2, maxResponseBytes: Self.maxAnswerBytes)
    }

    public func post(_ request: Data, to url: URL) throws -> Data {
        let http = HTTPRequest(method: "POST", url: url,
                               headers: ["Content-Type": "application/ocsp-request", "Accept": "application/ocsp-response"],
                               body: request)
        let response = try client.send(http) { response, attempt in
            if (200..<300).contains(response.status) { return .accept }
            let failure = RevalidationError.http(request: http.label, status: response.status, apiErrorCode: nil,
                                                 message: "not an OCSP answer", attempts: attempt)
            return response.status >= 500 ? .retry(after: nil, failure: failure) : .fail(failure)
        }
        return response.body
    }
}
