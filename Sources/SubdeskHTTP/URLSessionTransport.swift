import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// HTTP for subdesk over URLSession, behind a C interface that `SubscriptionCore` loads
// with dlopen the first time it sends a request. On Linux, URLSession comes with libcurl
// and some thirty libraries behind it; loading them costs every process about 12 ms at
// start, which a CGI process answering one notification cannot afford and never needs.
//
// Only C types cross the boundary: this library has no Swift types in common with its host.

/// One URLSession, with its connection pool.
final class TransportSession: @unchecked Sendable {
    let session: URLSession

    init(maxConnectionsPerHost: Int, timeout: TimeInterval) {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        configuration.timeoutIntervalForResource = timeout
        configuration.httpMaximumConnectionsPerHost = max(1, maxConnectionsPerHost)
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        session = URLSession(configuration: configuration)
    }

    deinit { session.finishTasksAndInvalidate() }
}

private final class ResultBox: @unchecked Sendable {
    private let lock = NSLock()
    private var value: (status: Int32, headers: String, body: Data, error: String)?
    var result: (status: Int32, headers: String, body: Data, error: String)? {
        get { lock.lock(); defer { lock.unlock() }; return value }
        set { lock.lock(); value = newValue; lock.unlock() }
    }
}

/// A URLSession for `maxConnections` connections per host whose own timeout is `timeout`
/// seconds (a backstop: each request also carries its exact deadline). Free with
/// `subdesk_http_close`.
@_cdecl("subdesk_http_open")
public func subdesk_http_open(_ maxConnections: Int32, _ timeout: Double) -> UnsafeMutableRawPointer {
    Unmanaged.passRetained(TransportSession(maxConnectionsPerHost: Int(maxConnections), timeout: timeout)).toOpaque()
}

@_cdecl("subdesk_http_close")
public func subdesk_http_close(_ session: UnsafeMutableRawPointer) {
    Unmanaged<TransportSession>.fromOpaque(session).release()
}

/// Sends one request and waits at most `deadline` seconds. Returns the HTTP status, or -1
/// when the deadline passed and -2 when there was no HTTP answer (then `error` says why).
/// `headers` is `Name: value` lines; the answer's headers come back the same way, names in
/// lower case. Every returned buffer is malloc'd: free it with `subdesk_http_free`.
@_cdecl("subdesk_http_perform")
public func subdesk_http_perform(_ session: UnsafeMutableRawPointer, _ method: UnsafePointer<CChar>,
                                 _ url: UnsafePointer<CChar>, _ headers: UnsafePointer<CChar>,
                                 _ body: UnsafePointer<UInt8>?, _ bodyLength: Int, _ deadline: Double,
                                 _ responseBody: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>,
                                 _ responseLength: UnsafeMutablePointer<Int>,
                                 _ responseHeaders: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>,
                                 _ error: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    let owner = Unmanaged<TransportSession>.fromOpaque(session).takeUnretainedValue()
    responseBody.pointee = nil
    responseLength.pointee = 0
    responseHeaders.pointee = nil
    error.pointee = nil
    guard let target = URL(string: String(cString: url)) else {
        error.pointee = strdup("not a URL")
        return -2
    }
    var request = URLRequest(url: target, cachePolicy: .reloadIgnoringLocalCacheData,
                             timeoutInterval: owner.session.configuration.timeoutIntervalForRequest)
    request.httpMethod = String(cString: method)
    for line in String(cString: headers).split(separator: "\n") {
        guard let colon = line.firstIndex(of: ":") else { continue }
        request.setValue(line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces),
                         forHTTPHeaderField: String(line[..<colon]))
    }
    if let body { request.httpBody = Data(bytes: body, count: bodyLength) }

    let done = DispatchSemaphore(value: 0)
    let box = ResultBox()
    let task = owner.session.dataTask(with: request) { data, response, failure in
        if let failure {
            let (status, reason) = classify(failure)
            box.result = (status, "", Data(), reason)
        } else if let http = response as? HTTPURLResponse {
            var lines = ""
            for (key, value) in http.allHeaderFields {
                if let k = key as? String, let v = value as? String { lines += "\(k.lowercased()): \(v)\n" }
            }
            box.result = (Int32(http.statusCode), lines, data ?? Data(), "")
        } else {
            box.result = (-2, "", Data(), "no HTTP response")
        }
        done.signal()
    }
    task.resume()
    if done.wait(timeout: .now() + deadline) == .timedOut {
        task.cancel()
        _ = done.wait(timeout: .now() + 1)
        return -1
    }
    guard let result = box.result else {
        error.pointee = strdup("no result")
        return -2
    }
    if result.status < 0 {
        error.pointee = strdup(result.error)
        return result.status
    }
    let bytes = malloc(max(1, result.body.count))!.assumingMemoryBound(to: UInt8.self)
    result.body.copyBytes(to: bytes, count: result.body.count)
    responseBody.pointee = bytes
    responseLength.pointee = result.body.count
    responseHeaders.pointee = strdup(result.headers)
    return result.status
}

@_cdecl("subdesk_http_free")
public func subdesk_http_free(_ pointer: UnsafeMutableRawPointer?) {
    free(pointer)
}

/// -1 for a timeout, -2 with a reason for anything else.
private func classify(_ error: Error) -> (Int32, String) {
    if let urlError = error as? URLError {
        switch urlError.code {
        case .timedOut: return (-1, "timed out")
        case .cannotConnectToHost: return (-2, "connection refused")
        case .cannotFindHost, .dnsLookupFailed: return (-2, "host not found")
        case .networkConnectionLost: return (-2, "connection lost")
        case .notConnectedToInternet: return (-2, "not connected")
        case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate,
             .serverCertificateNotYetValid, .serverCertificateHasUnknownRoot:
            return (-2, "TLS failed (\(urlError.code.rawValue))")
        default: return (-2, "\(urlError.localizedDescription) (URLError \(urlError.code.rawValue))")
        }
    }
    return (-2, (error as NSError).localizedDescription)
}
