import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A small HTTP/1.1 server on 127.0.0.1 (ephemeral port) that plays Apple in the tests
/// and in `subdesk-bench` (in no product): it routes by method and path to scripted
/// responses and records every request. One request per connection (`Connection: close`); bounded header and
/// body sizes; `stop()` ends the accept loop and waits for open connections.
public final class FakeAppleServer: @unchecked Sendable {
    public struct Request {
        public var method: String
        /// The path without the query.
        public var path: String
        public var query: [String: String]
        /// Header names lower-cased.
        public var headers: [String: String]
        public var body: Data

        public var json: [String: Any]? { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] }
    }

    public struct Response {
        public var status: Int
        public var headers: [String: String] = [:]
        public var body: Data = Data()
        /// Seconds to wait before answering (a server that hangs).
        public var delay: TimeInterval = 0
        /// Bytes of filler sent after `body`, made as they are sent (a server that sends
        /// more than anyone should read, without holding it); 0 for none.
        public var filler: Int = 0
        /// Whether Content-Length is sent; without it the body ends when the connection closes.
        public var announcesLength = true

        public init(status: Int, headers: [String: String] = [:], body: Data = Data(), delay: TimeInterval = 0) {
            self.status = status
            self.headers = headers
            self.body = body
            self.delay = delay
        }

        /// A JSON array `bytes` long, streamed: `[0,0,0,...`.
        public static func huge(bytes: Int, announcingLength: Bool) -> Response {
            var response = Response(status: 200, headers: ["Content-Type": "application/json"], body: Data("[0".utf8))
            response.filler = max(0, bytes - 2)
            response.announcesLength = announcingLength
            return response
        }

        public static func json(_ object: Any, status: Int = 200, headers: [String: String] = [:], delay: TimeInterval = 0) -> Response {
            var h = headers
            h["Content-Type"] = "application/json"
            return Response(status: status, headers: h,
                            body: try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), delay: delay)
        }
    }

    public typealias Handler = (Request) -> Response

    static let maxHeaderBytes = 64 * 1024
    static let maxBodyBytes = 4 * 1024 * 1024

    public private(set) var port: UInt16 = 0
    public var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

    private let lock = NSLock()
    private var routes: [String: [Handler]] = [:]
    private var served: [String: Int] = [:]
    private var recorded: [Request] = []
    private var fallback: Handler?
    private var appOfTransaction: [String: String] = [:]
    private var appOfProduct: [String: String] = [:]
    private var stopped = false
    private var filled = 0
    private let listener: Int32
    private let acceptDone = DispatchSemaphore(value: 0)
    private let connections = DispatchGroup()

    public init() throws {
        listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard listener >= 0 else { throw ServerError("socket: \(String(cString: strerror(errno)))") }
        var yes: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(0).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(listener, 64) == 0 else {
            let reason = String(cString: strerror(errno))
            close(listener)
            throw ServerError("bind/listen on 127.0.0.1: \(reason)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        port = UInt16(bigEndian: address.sin_port)
        // Strong captures: the loop and open connections keep the server alive until `stop()`.
        let thread = Thread { self.acceptLoop() }
        thread.name = "test-apple-server"
        thread.start()
    }

    /// Answers `method path` with `responses` in turn; the last one repeats.
    public func route(_ method: String, _ path: String, _ responses: Response...) {
        route(method, path, handlers: responses.map { r in { _ in r } })
    }

    /// Answers `method path` with what `handler` makes of each request.
    public func route(_ method: String, _ path: String, handler: @escaping Handler) {
        route(method, path, handlers: [handler])
    }

    private func route(_ method: String, _ path: String, handlers: [Handler]) {
        lock.lock()
        routes["\(method) \(path)"] = handlers
        served["\(method) \(path)"] = 0
        lock.unlock()
    }

    /// Says which app (bundle id) each of these transaction ids belongs to: a request about one
    /// of them whose bearer token names another app (`bid`) is refused 401, as Apple refuses it.
    public func transactions(_ ids: [String], belongTo bundleId: String) {
        lock.lock()
        for id in ids { appOfTransaction[id] = bundleId }
        lock.unlock()
    }

    /// Says which app (bundle id) sells each of these products: a mass extension of one of
    /// them (its `productId` in the body or the path) whose bearer token names another app is
    /// refused 401, as Apple refuses it.
    public func products(_ ids: [String], belongTo bundleId: String) {
        lock.lock()
        for id in ids { appOfProduct[id] = bundleId }
        lock.unlock()
    }

    /// The `bid` claim of a request's bearer token, or nil.
    public static func tokenBundleId(_ request: Request) -> String? {
        guard let auth = request.headers["authorization"], auth.hasPrefix("Bearer ") else { return nil }
        let segments = auth.dropFirst(7).split(separator: ".", omittingEmptySubsequences: false)
        guard segments.count == 3 else { return nil }
        var text = segments[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while text.count % 4 != 0 { text += "=" }
        guard let data = Data(base64Encoded: text),
              let claims = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else { return nil }
        return claims["bid"] as? String
    }

    /// Answers every request no route names (nil: 404).
    public func routeEverythingElse(handler: @escaping Handler) {
        lock.lock()
        fallback = handler
        lock.unlock()
    }

    public var requests: [Request] {
        lock.lock()
        defer { lock.unlock() }
        return recorded
    }

    public func requests(_ method: String, _ path: String) -> [Request] {
        requests.filter { $0.method == method && $0.path == path }
    }

    /// Filler bytes the clients took (the socket accepted) so far.
    public var fillerBytesSent: Int {
        lock.lock()
        defer { lock.unlock() }
        return filled
    }

    public func stop() {
        lock.lock()
        let wasStopped = stopped
        stopped = true
        lock.unlock()
        guard !wasStopped else { return }
        acceptDone.wait()
        close(listener)
        _ = connections.wait(timeout: .now() + 5)
    }

    private var isStopped: Bool {
        lock.lock()
        defer { lock.unlock() }
        return stopped
    }

    private func acceptLoop() {
        defer { acceptDone.signal() }
        while !isStopped {
            var fds = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            guard poll(&fds, 1, 50) > 0 else { continue }
            let client = accept(listener, nil, nil)
            guard client >= 0 else { continue }
            var timeout = timeval(tv_sec: 5, tv_usec: 0)
            setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            connections.enter()
            let thread = Thread {
                self.serve(client)
                close(client)
                self.connections.leave()
            }
            thread.start()
        }
    }

    private func serve(_ client: Int32) {
        guard let request = readRequest(client) else {
            send(client, Response(status: 400, body: Data("bad request".utf8)))
            return
        }
        lock.lock()
        recorded.append(request)
        let key = "\(request.method) \(request.path)"
        var handler: Handler?
        if let handlers = routes[key], !handlers.isEmpty {
            let index = min(served[key, default: 0], handlers.count - 1)
            served[key, default: 0] += 1
            handler = handlers[index]
        } else {
            handler = fallback
        }
        let owner = request.path.split(separator: "/").lazy.compactMap { self.appOfTransaction[String($0)] ?? self.appOfProduct[String($0)] }.first
            ?? (request.json?["productId"] as? String).flatMap { appOfProduct[$0] }
        lock.unlock()
        if let owner, Self.tokenBundleId(request) != owner {
            // Apple answers a token for another app as an unauthenticated request.
            send(client, Response(status: 401, headers: ["Content-Type": "text/plain"], body: Data("Unauthenticated".utf8)))
            return
        }
        let response = handler?(request)
            ?? Response(status: 404, headers: ["Content-Type": "text/plain"], body: Data("test server: no route for \(key)".utf8))
        var waited: TimeInterval = 0
        while waited < response.delay && !isStopped {
            Thread.sleep(forTimeInterval: 0.02)
            waited += 0.02
        }
        send(client, response)
    }

    private func readRequest(_ client: Int32) -> Request? {
        var buffer = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        let separator: [UInt8] = [13, 10, 13, 10]
        var headerEnd: Int?
        while headerEnd == nil {
            let n = recv(client, &chunk, chunk.count, 0)
            guard n > 0 else { return nil }
            buffer += chunk[0..<n]
            if buffer.count > Self.maxHeaderBytes + Self.maxBodyBytes { return nil }
            if let range = find(separator, in: buffer) { headerEnd = range }
            else if buffer.count > Self.maxHeaderBytes { return nil }
        }
        guard let end = headerEnd, let head = String(bytes: buffer[0..<end], encoding: .utf8) else { return nil }
        let lines = head.components(separatedBy: "\r\n")
        let parts = lines[0].split(separator: " ")
        guard parts.count == 3, parts[2].hasPrefix("HTTP/1.") else { return nil }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { return nil }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        let length = Int(headers["content-length"] ?? "0") ?? -1
        guard length >= 0, length <= Self.maxBodyBytes else { return nil }
        var body = Array(buffer[(end + 4)...])
        while body.count < length {
            let n = recv(client, &chunk, chunk.count, 0)
            guard n > 0 else { return nil }
            body += chunk[0..<n]
        }
        let target = String(parts[1])
        let pathPart = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        var query: [String: String] = [:]
        if pathPart.count == 2 {
            for pair in pathPart[1].split(separator: "&") {
                let kv = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let name = String(kv[0]).removingPercentEncoding ?? String(kv[0])
                query[name] = kv.count > 1 ? (String(kv[1]).removingPercentEncoding ?? String(kv[1])) : ""
            }
        }
        return Request(method: String(parts[0]), path: String(pathPart[0]), query: query, headers: headers,
                       body: Data(body.prefix(length)))
    }

    private func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for i in 0...(haystack.count - needle.count) where haystack[i] == needle[0] {
            if Array(haystack[i..<(i + needle.count)]) == needle { return i }
        }
        return nil
    }

    private func send(_ client: Int32, _ response: Response) {
        var head = "HTTP/1.1 \(response.status) \(Self.reason(response.status))\r\n"
        var headers = response.headers
        if response.announcesLength { headers["Content-Length"] = String(response.body.count + response.filler) }
        headers["Connection"] = "close"
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) { head += "\(name): \(value)\r\n" }
        head += "\r\n"
        guard sendAll(client, Array(head.utf8) + Array(response.body)) else { return }
        let chunk = Array(repeating: Array(",0".utf8), count: 32 * 1024).flatMap { $0 }
        var left = response.filler
        while left > 0 {
            let piece = Array(chunk.prefix(left))
            guard sendAll(client, piece) else { return }
            lock.lock()
            filled += piece.count
            lock.unlock()
            left -= piece.count
        }
    }

    /// False when the client has gone.
    private func sendAll(_ client: Int32, _ bytes: [UInt8]) -> Bool {
        let total = bytes.count
        var offset = 0
        while offset < total {
            // MSG_NOSIGNAL: a client that gave up (the timeout test) must not kill the test run with SIGPIPE.
            let n = bytes.withUnsafeBytes { raw in
                Glibc.send(client, raw.baseAddress! + offset, total - offset, Int32(MSG_NOSIGNAL))
            }
            guard n > 0 else { return false }
            offset += n
        }
        return true
    }

    private static func reason(_ status: Int) -> String {
        switch status {
        case 200: return "OK"
        case 400: return "Bad Request"
        case 401: return "Unauthorized"
        case 404: return "Not Found"
        case 429: return "Too Many Requests"
        case 500: return "Internal Server Error"
        case 503: return "Service Unavailable"
        default: return "Status"
        }
    }

    struct ServerError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
