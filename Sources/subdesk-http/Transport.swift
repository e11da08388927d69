import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One URLSession, with its connection pool. A body larger than its request allows is
/// refused while it streams, never read whole first: at once when its Content-Length says
/// so, else when the delegate counts past the limit; the refusal is answered then and
/// the transfer cancelled. The delegate hears of each chunk through its queue, which
/// libcurl does not wait for; the queue makes it wait (`BoundedDelegateQueue`), or on a
/// fast link the whole body would arrive, queued in memory, before the delegate had
/// counted the first megabytes.
///
/// On Linux a cancel waits for URLSession's work queue, which a transfer streaming at
/// full speed can hold until its body ends: a refused body is slowed to a trickle, and
/// when its transfer still runs `refusalGrace` later, the helper exits, which closes the
/// connection (subdesk starts a new helper; requests in flight fail as network errors,
/// which subdesk retries).
final class TransportSession: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private var session: URLSession!
    private let lock = NSLock()
    /// The transfers under way, by task identifier.
    private var transfers: [Int: Transfer] = [:]

    /// One request's progress: its body so far (read only on the delegate queue), and why
    /// it was refused, if it was.
    private final class Transfer: @unchecked Sendable {
        let id: UInt64
        let limit: Int
        let answer: (HelperResponse) -> Void
        var body = Data()
        private let lock = NSLock()
        private var refusalReason: String?
        private var answered = false

        init(id: UInt64, limit: Int, answer: @escaping (HelperResponse) -> Void) {
            self.id = id
            self.limit = limit
            self.answer = answer
        }

        var refusal: String? {
            lock.lock()
            defer { lock.unlock() }
            return refusalReason
        }

        /// Records the first reason only and answers with it; true when this was it.
        func refuse(_ reason: String) -> Bool {
            lock.lock()
            guard refusalReason == nil else {
                lock.unlock()
                return false
            }
            refusalReason = reason
            lock.unlock()
            finish(.failure(id, HelperResponse.tooLarge, reason))
            return true
        }

        /// Answers once: a refused transfer has been answered before it completes.
        func finish(_ response: HelperResponse) {
            lock.lock()
            let first = !answered
            answered = true
            lock.unlock()
            if first { answer(response) }
        }
    }

    /// How long each chunk of a refused body holds the delegate queue: some 16 MB a second.
    static let refusedChunkPause: TimeInterval = 0.001
    /// How long a refused transfer may go on before the helper exits to end it.
    static let refusalGrace: TimeInterval = 2

    init(maxConnectionsPerHost: Int) {
        super.init()
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = max(1, maxConnectionsPerHost)
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        session = URLSession(configuration: configuration, delegate: self, delegateQueue: BoundedDelegateQueue())
    }

    /// Cancels a refused transfer, off the delegate queue (cancel() waits for URLSession's
    /// work queue, which may itself be waiting for room on the delegate queue), and exits
    /// when it still runs after `refusalGrace`.
    private func stop(_ task: URLSessionTask) {
        DispatchQueue.global().async { task.cancel() }
        DispatchQueue.global().asyncAfter(deadline: .now() + Self.refusalGrace) { [self] in
            guard transfer(task) != nil else { return }
            FileHandle.standardError.write(Data("""
                subdesk-http: a response refused for its size still streams \(Self.refusalGrace) s later \
                and cannot be cancelled; exiting to close its connection (subdesk starts a new helper)

                """.utf8))
            exit(4)
        }
    }

    /// Starts `request` and calls `answer` once, when it completes, its timeout passes or
    /// its body goes past `request.maxResponseBytes`.
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

        let task = session.dataTask(with: urlRequest)
        let transfer = Transfer(id: request.id, limit: request.maxResponseBytes, answer: answer)
        lock.lock()
        transfers[task.taskIdentifier] = transfer
        lock.unlock()
        task.resume()
        // subdesk stops waiting at the same moment; cancelling frees the connection slot.
        DispatchQueue.global().asyncAfter(deadline: .now() + request.timeout) { task.cancel() }
    }

    private func transfer(_ task: URLSessionTask) -> Transfer? {
        lock.lock()
        defer { lock.unlock() }
        return transfers[task.taskIdentifier]
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping (URLSession.ResponseDisposition) -> Void) {
        // corelibs ignores the disposition given to the handler: only cancel() stops the transfer.
        if let transfer = transfer(dataTask), response.expectedContentLength > Int64(transfer.limit),
           transfer.refuse("its Content-Length is \(response.expectedContentLength) bytes") {
            stop(dataTask)
        }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        guard let transfer = transfer(dataTask) else { return }
        if transfer.refusal != nil {
            // Until the cancel lands, hold libcurl back to a trickle (it waits for room on
            // this queue), rather than let it drain a fast sender at full speed.
            return Thread.sleep(forTimeInterval: Self.refusedChunkPause)
        }
        guard transfer.body.count + data.count <= transfer.limit else {
            transfer.body = Data()
            if transfer.refuse("more than that had arrived when reading stopped") { stop(dataTask) }
            return
        }
        transfer.body.append(data)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
        lock.lock()
        let transfer = transfers.removeValue(forKey: task.taskIdentifier)
        lock.unlock()
        guard let transfer, transfer.refusal == nil else { return }
        if let error {
            let (status, reason) = Self.classify(error)
            transfer.finish(.failure(transfer.id, status, reason))
        } else if let http = task.response as? HTTPURLResponse, !(100...999).contains(http.statusCode) {
            // Three digits, as RFC 9110 says; anything else is no answer (and no Int32 to trap on).
            transfer.finish(.failure(transfer.id, HelperResponse.noAnswer, "the answer's status \(http.statusCode) is not an HTTP status"))
        } else if let http = task.response as? HTTPURLResponse {
            var lines = ""
            for (key, value) in http.allHeaderFields {
                if let k = key as? String, let v = value as? String { lines += "\(k.lowercased()): \(v)\n" }
            }
            transfer.finish(HelperResponse(id: transfer.id, status: Int32(http.statusCode), headers: lines, body: Array(transfer.body)))
        } else {
            transfer.finish(.failure(transfer.id, HelperResponse.noAnswer, "no HTTP response"))
        }
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

/// The delegate's queue, one operation at a time, with room for only so many waiting: a
/// caller adding one more waits until one has run. URLSession adds each chunk of a body
/// from the thread that drives libcurl, so while the delegate is behind, libcurl reads no
/// more from the socket and what is held stays bounded.
final class BoundedDelegateQueue: OperationQueue, @unchecked Sendable {
    /// Chunks waiting at most; libcurl hands over at most some tens of KB at a time.
    static let room = 64
    private let slots = DispatchSemaphore(value: BoundedDelegateQueue.room)

    override init() {
        super.init()
        maxConcurrentOperationCount = 1
    }

    override func addOperation(_ block: @escaping @Sendable () -> Void) {
        // An operation that adds another would wait for itself.
        if OperationQueue.current !== self { slots.wait() } else { return super.addOperation(block) }
        super.addOperation { [slots] in
            block()
            slots.signal()
        }
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
