import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One URLSession, with its connection pool.
final class TransportSession: @unchecked Sendable {
    let session: URLSession

    init(maxConnectionsPerHost: Int) {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = max(1, maxConnectionsPerHost)
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        session = URLSession(configuration: configuration)
    }

    /// Starts `request` and calls `answer` once, when it completes or its timeout passes.
    func perform(_ request: HelperRequest, answer: @escaping (HelperResponse) -> Void) {
        guard let url = URL(string: request.url) else {
            return answer(.failure(request.id, HelperResponse.noAnswer, "not a URL"))
        }
        var urlRequest = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData,
                                    timeoutInterval: Self.backstop(request.timeout))
        urlRequest.httpMethod = request.method
        for line in request.headers.split(separator: "\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            urlRequest.setValue(line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces),
                                forHTTPHeaderField: String(line[..<colon]))
        }
        if !request.body.isEmpty { urlRequest.httpBody = Data(request.body) }

        let id = request.id
        let task = session.dataTask(with: urlRequest) { data, response, failure in
            if let failure {
                let (status, reason) = Self.classify(failure)
                answer(.failure(id, status, reason))
            } else if let http = response as? HTTPURLResponse {
                var lines = ""
                for (key, value) in http.allHeaderFields {
                    if let k = key as? String, let v = value as? String { lines += "\(k.lowercased()): \(v)\n" }
                }
                answer(HelperResponse(id: id, status: Int32(http.statusCode), headers: lines, body: Array(data ?? Data())))
            } else {
                answer(.failure(id, HelperResponse.noAnswer, "no HTTP response"))
            }
        }
        task.resume()
        // subdesk stops waiting at the same moment; cancelling frees the connection slot.
        DispatchQueue.global().asyncAfter(deadline: .now() + request.timeout) { task.cancel() }
    }

    /// URLSession's own timeout, kept a little beyond the request's: on Linux it is
    /// truncated to whole seconds (0.5 s would time out at once), so the exact deadline is
    /// the cancellation in `perform`, and URLSession's only a backstop.
    static func backstop(_ timeout: TimeInterval) -> TimeInterval {
        max(1, timeout.rounded(.up)) + 1
    }

    /// -1 for a timeout (ours, which cancels, or URLSession's), -2 with a reason for anything else.
    static func classify(_ error: Error) -> (Int32, String) {
        if let urlError = error as? URLError {
            switch urlError.code {
            case .timedOut, .cancelled: return (HelperResponse.timedOut, "timed out")
            case .cannotConnectToHost: return (HelperResponse.noAnswer, "connection refused")
            case .cannotFindHost, .dnsLookupFailed: return (HelperResponse.noAnswer, "host not found")
            case .networkConnectionLost: return (HelperResponse.noAnswer, "connection lost")
            case .notConnectedToInternet: return (HelperResponse.noAnswer, "not connected")
            case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate,
                 .serverCertificateNotYetValid, .serverCertificateHasUnknownRoot:
                return (HelperResponse.noAnswer, "TLS failed (\(urlError.code.rawValue))")
            default:
                return (HelperResponse.noAnswer, "\(urlError.localizedDescription) (URLError \(urlError.code.rawValue))")
            }
        }
        return (HelperResponse.noAnswer, (error as NSError).localizedDescription)
    }
}

/// A session for each connection limit subdesk asks for (in practice one per process).
final class TransportSessions: @unchecked Sendable {
    private let lock = NSLock()
    private var sessions: [Int: TransportSession] = [:]

    func session(connectionsPerHost: Int) -> TransportSession {
        lock.lock()
        defer { lock.unlock() }
        if let session = sessions[connectionsPerHost] { return session }
        let session = TransportSession(maxConnectionsPerHost: connectionsPerHost)
        sessions[connectionsPerHost] = session
        return session
    }
}
