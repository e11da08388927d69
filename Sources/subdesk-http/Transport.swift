import Foundation
import HTTP1
import CLibSSL
#if canImport(Glibc)
import Glibc
#endif

/// HTTP/1.1 over the helper's own sockets, with TLS from OpenSSL's libssl: each request
/// on a thread of its own, on a connection kept open between requests (a pool for each
/// scheme, host and port, at most the connections per host subdesk asks for), read
/// through `HTTP1ResponseReader` with every byte bounded. A body larger than the request
/// allows is refused as it arrives, when its Content-Length says so or when it grows past
/// the limit, and its connection closed: nothing past the limit is read. The deadline is
/// the request's timeout, from the start, for the whole exchange (connecting, TLS,
/// sending and reading). Redirects are not followed, no proxy is used, and no field is
/// added but `Host` and `Content-Length`.
final class Transport: @unchecked Sendable {
    let pools = ConnectionPools()

    /// Answers `request` once, from a thread of its own.
    func perform(_ request: HelperRequest, answer: @escaping (HelperResponse) -> Void) {
        let thread = Thread { [self] in answer(exchange(request)) }
        thread.stackSize = 512 << 10
        thread.start()
    }

    /// Where a request goes, from its URL.
    struct Destination {
        var tls: Bool
        var host: String
        var port: Int
        /// The path and query, as the request line carries them.
        var target: String
        /// The `Host` field's value.
        var authority: String
        var key: String { "\(tls ? "https" : "http")://\(authority)" }

        init?(_ text: String) {
            guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
                  scheme == "http" || scheme == "https", var host = components.host, !host.isEmpty else { return nil }
            if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
            tls = scheme == "https"
            self.host = host
            let defaultPort = tls ? 443 : 80
            port = components.port ?? defaultPort
            guard (1...65_535).contains(port) else { return nil }
            let path = components.percentEncodedPath
            target = (path.isEmpty ? "/" : path) + (components.percentEncodedQuery.map { "?" + $0 } ?? "")
            let bracketed = host.contains(":") ? "[\(host)]" : host
            authority = port == defaultPort ? bracketed : "\(bracketed):\(port)"
        }
    }

    /// One request, answered: the response, or why there is none.
    func exchange(_ request: HelperRequest) -> HelperResponse {
        let deadline = Deadline(seconds: request.timeout)
        guard let destination = Destination(request.url) else {
            return .failure(request.id, HelperResponse.noAnswer, "not an http or https URL")
        }
        let fields = request.headers.split(separator: "\n").compactMap { line -> (name: String, value: String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (name: String(line[..<colon]), value: String(line[colon...].dropFirst()))
        }
        let bytes: [UInt8]
        do {
            bytes = try HTTP1Request.encode(method: request.method, target: destination.target, host: destination.authority,
                                            fields: fields, body: request.body)
        } catch {
            return .failure(request.id, HelperResponse.noAnswer, "the request cannot be sent: \(error)")
        }
        // A kept connection the server closed meanwhile fails before any answer arrives:
        // the request is sent once more, on a new connection.
        for attempt in 0..<2 {
            let kept: Connection?
            do {
                kept = try pools.take(destination.key, limit: request.connectionsPerHost, deadline: deadline, fresh: attempt > 0)
            } catch {
                return failure(request.id, error)
            }
            let connection: Connection
            if let kept {
                connection = kept
            } else {
                do {
                    connection = try Connection.open(destination, deadline: deadline)
                } catch {
                    pools.give(destination.key, nil)
                    return failure(request.id, error)
                }
            }
            do {
                let reader = try connection.exchange(bytes, method: request.method, maxBody: request.maxResponseBytes, deadline: deadline)
                pools.give(destination.key, connection, keep: reader.connectionReusable)
                guard let head = reader.head else { return .failure(request.id, HelperResponse.noAnswer, "no HTTP response") }
                let lines = head.joinedFields.map { "\($0.name): \($0.value)\n" }.joined()
                return HelperResponse(id: request.id, status: Int32(head.status), headers: lines, body: reader.body)
            } catch let failure as ExchangeFailure where kept != nil && attempt == 0 && failure.beforeAnswer {
                pools.give(destination.key, connection)
                continue
            } catch {
                pools.give(destination.key, connection)
                return failure(request.id, error)
            }
        }
        return .failure(request.id, HelperResponse.noAnswer, "connection lost")
    }

    private func failure(_ id: UInt64, _ error: Error) -> HelperResponse {
        switch error {
        case let f as ExchangeFailure: return .failure(id, f.status, f.reason)
        case HTTP1ResponseError.tooLarge(let reason): return .failure(id, HelperResponse.tooLarge, reason)
        case HTTP1ResponseError.truncated: return .failure(id, HelperResponse.noAnswer, "connection lost")
        case HTTP1ResponseError.malformed(let reason): return .failure(id, HelperResponse.noAnswer, "not an HTTP answer: " + reason)
        default: return .failure(id, HelperResponse.noAnswer, "\(error)")
        }
    }
}

/// Why an exchange ended without an answer, as subdesk is told it.
struct ExchangeFailure: Error {
    var status: Int32
    var reason: String
    /// No byte of an answer had arrived: a kept connection may simply have been closed.
    var beforeAnswer = false

    static let timedOut = ExchangeFailure(status: HelperResponse.timedOut, reason: "timed out")
    static func network(_ reason: String, beforeAnswer: Bool = false) -> ExchangeFailure {
        ExchangeFailure(status: HelperResponse.noAnswer, reason: reason, beforeAnswer: beforeAnswer)
    }
}

/// A moment on the monotonic clock that an exchange must end by.
struct Deadline {
    let at: UInt64

    init(seconds: TimeInterval) {
        at = DispatchTime.now().uptimeNanoseconds + UInt64(max(0, min(seconds, 86_400)) * 1e9)
    }

    /// Milliseconds left, at least 1 while any time is left, 0 once it has passed.
    var remainingMs: Int32 {
        let now = DispatchTime.now().uptimeNanoseconds
        guard now < at else { return 0 }
        return Int32(min((at - now + 999_999) / 1_000_000, UInt64(Int32.max)))
    }

    /// Waits until `fd` is ready for `events`; throws when the deadline passes first.
    func wait(_ fd: Int32, for events: Int16) throws {
        while true {
            let ms = remainingMs
            guard ms > 0 else { throw ExchangeFailure.timedOut }
            var p = pollfd(fd: fd, events: events, revents: 0)
            let r = poll(&p, 1, ms)
            if r > 0 { return }
            if r < 0 && errno != EINTR { throw ExchangeFailure.network("poll failed: \(String(cString: strerror(errno)))") }
        }
    }
}

/// One TCP connection, with TLS or without, its socket non-blocking.
final class Connection: @unchecked Sendable {
    private(set) var fd: Int32
    private var ssl: OpaquePointer?
    /// When it was last given back to its pool (monotonic nanoseconds).
    var idleSince: UInt64 = 0

    private init(fd: Int32, ssl: OpaquePointer?) {
        self.fd = fd
        self.ssl = ssl
    }

    deinit { close() }

    func close() {
        if let ssl { SSL_free(ssl) }
        ssl = nil
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }

    /// Connects to `destination` (each address its name has, in turn), then TLS.
    static func open(_ destination: Transport.Destination, deadline: Deadline) throws -> Connection {
        let fd = try connect(destination.host, destination.port, deadline: deadline)
        guard destination.tls else { return Connection(fd: fd, ssl: nil) }
        do {
            return Connection(fd: fd, ssl: try TLS.handshake(fd: fd, host: destination.host, deadline: deadline))
        } catch {
            Glibc.close(fd)
            throw error
        }
    }

    private static func connect(_ host: String, _ port: Int, deadline: Deadline) throws -> Int32 {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var found: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(host, String(port), &hints, &found)
        guard rc == 0, let first = found else {
            throw ExchangeFailure.network(rc == EAI_NONAME || rc == -5 /* EAI_NODATA */ ? "host not found"
                                              : "host lookup failed: \(String(cString: gai_strerror(rc)))")
        }
        defer { freeaddrinfo(first) }
        var problem = "connection refused"
        var next: UnsafeMutablePointer<addrinfo>? = first
        while let address = next {
            next = address.pointee.ai_next
            let fd = socket(address.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue),
                            address.pointee.ai_protocol)
            guard fd >= 0 else { continue }
            var failed: Int32 = 0
            if Glibc.connect(fd, address.pointee.ai_addr, address.pointee.ai_addrlen) != 0 {
                if errno == EINPROGRESS {
                    do {
                        try deadline.wait(fd, for: Int16(POLLOUT))
                    } catch {
                        Glibc.close(fd)
                        throw error
                    }
                    var length = socklen_t(MemoryLayout<Int32>.size)
                    getsockopt(fd, SOL_SOCKET, SO_ERROR, &failed, &length)
                } else {
                    failed = errno
                }
            }
            if failed != 0 {
                problem = failed == ECONNREFUSED ? "connection refused" : "cannot connect: \(String(cString: strerror(failed)))"
                Glibc.close(fd)
                continue
            }
            var on: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
            return fd
        }
        throw ExchangeFailure.network(problem)
    }

    /// Whether the peer closed it (or sent what nobody asked for) while it sat in the pool.
    var isStale: Bool {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&p, 1, 0) != 0
    }

    /// Sends `request` and reads the answer (which says whether the connection may carry another).
    func exchange(_ request: [UInt8], method: String, maxBody: Int, deadline: Deadline) throws -> HTTP1ResponseReader {
        do {
            try write(request, deadline: deadline)
        } catch let failure as ExchangeFailure where failure.status == HelperResponse.noAnswer {
            throw ExchangeFailure.network(failure.reason, beforeAnswer: true)
        }
        var reader = HTTP1ResponseReader(maxBodyBytes: maxBody, requestMethod: method)
        var buffer = [UInt8](repeating: 0, count: 16 << 10)
        while !reader.isComplete {
            let n: Int
            do {
                n = try read(into: &buffer, deadline: deadline)
            } catch let failure as ExchangeFailure where failure.status == HelperResponse.noAnswer && !reader.started {
                throw ExchangeFailure.network(failure.reason, beforeAnswer: true)
            }
            if n == 0 {
                if !reader.started { throw ExchangeFailure.network("connection lost", beforeAnswer: true) }
                try reader.end()
                break
            }
            try reader.feed(buffer[0..<n])
        }
        return reader
    }

    private func write(_ bytes: [UInt8], deadline: Deadline) throws {
        var done = 0
        while done < bytes.count {
            let n: Int = bytes.withUnsafeBytes { raw in
                let start = raw.baseAddress! + done, count = bytes.count - done
                if let ssl { return Int(SSL_write(ssl, start, Int32(min(count, Int(Int32.max))))) }
                return send(fd, start, count, Int32(MSG_NOSIGNAL))
            }
            if n > 0 {
                done += n
                continue
            }
            if let ssl {
                try TLS.waitOrFail(ssl, fd: fd, result: Int32(n), deadline: deadline, during: .sending)
            } else if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                try deadline.wait(fd, for: Int16(POLLOUT))
            } else if n < 0 && errno == EINTR {
                continue
            } else {
                throw ExchangeFailure.network(errno == EPIPE || errno == ECONNRESET ? "connection lost" : "cannot send: \(String(cString: strerror(errno)))")
            }
        }
    }

    /// Bytes read into `buffer`; 0 at the end of the stream.
    private func read(into buffer: inout [UInt8], deadline: Deadline) throws -> Int {
        while true {
            let count = buffer.count
            let n: Int = buffer.withUnsafeMutableBytes { raw in
                if let ssl { return Int(SSL_read(ssl, raw.baseAddress!, Int32(count))) }
                return recv(fd, raw.baseAddress!, count, 0)
            }
            if n > 0 { return n }
            if let ssl {
                let error = SSL_get_error(ssl, Int32(n))
                if error == SSL_ERROR_ZERO_RETURN { return 0 }
                try TLS.waitOrFail(ssl, fd: fd, result: Int32(n), deadline: deadline, during: .reading)
            } else if n == 0 {
                return 0
            } else if errno == EAGAIN || errno == EWOULDBLOCK {
                try deadline.wait(fd, for: Int16(POLLIN))
            } else if errno != EINTR {
                throw ExchangeFailure.network(errno == ECONNRESET ? "connection lost" : "cannot read: \(String(cString: strerror(errno)))")
            }
        }
    }
}

/// The TLS client: the host's trusted roots (OpenSSL's default paths, which
/// `SSL_CERT_FILE` and `SSL_CERT_DIR` may point elsewhere), TLS 1.2 at least, and the
/// certificate checked against the host's name (or its address, for an IP literal).
enum TLS {
    static let context: OpaquePointer? = {
        guard let context = SSL_CTX_new(TLS_client_method()) else { return nil }
        SSL_CTX_set_default_verify_paths(context)
        subdesk_ssl_ctx_set_min_tls12(context)
        subdesk_ssl_ctx_set_modes(context)
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
        return context
    }()

    static func handshake(fd: Int32, host: String, deadline: Deadline) throws -> OpaquePointer {
        ERR_clear_error()
        guard let context, let ssl = SSL_new(context) else { throw ExchangeFailure.network("TLS failed (no TLS context: \(lastError()))") }
        SSL_set_fd(ssl, fd)
        var literal = in6_addr()
        let isAddress = inet_pton(AF_INET, host, &literal) == 1 || inet_pton(AF_INET6, host, &literal) == 1
        let named = isAddress ? X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host) : SSL_set1_host(ssl, host)
        if !isAddress { subdesk_ssl_set_server_name(ssl, host) }
        guard named == 1 else {
            SSL_free(ssl)
            throw ExchangeFailure.network("TLS failed (cannot check the certificate against \(host))")
        }
        while true {
            let r = SSL_connect(ssl)
            if r == 1 { return ssl }
            do {
                try waitOrFail(ssl, fd: fd, result: r, deadline: deadline, during: .handshake)
            } catch {
                SSL_free(ssl)
                throw error
            }
        }
    }

    /// What a TLS call was doing.
    enum Step: String, CustomStringConvertible {
        case handshake = "the handshake", sending, reading
        var description: String { rawValue }
    }

    /// After an SSL call that returned `result`: waits for what it wants, or throws why it failed.
    static func waitOrFail(_ ssl: OpaquePointer, fd: Int32, result: Int32, deadline: Deadline, during step: Step) throws {
        let savedErrno = errno
        switch SSL_get_error(ssl, result) {
        case SSL_ERROR_WANT_READ: try deadline.wait(fd, for: Int16(POLLIN))
        case SSL_ERROR_WANT_WRITE: try deadline.wait(fd, for: Int16(POLLOUT))
        case SSL_ERROR_SYSCALL where savedErrno == EINTR: return
        case SSL_ERROR_SYSCALL:
            ERR_clear_error()
            throw ExchangeFailure.network("connection lost")
        default:
            let peerClosed = subdesk_ssl_error_is_unexpected_eof(ERR_peek_error()) != 0
            let verified = SSL_get_verify_result(ssl)
            let reason = verified != X509_V_OK ? String(cString: X509_verify_cert_error_string(verified)) : lastError()
            ERR_clear_error()
            if step == .handshake { throw ExchangeFailure.network("TLS failed (\(reason))") }
            throw ExchangeFailure.network(peerClosed ? "connection lost" : "TLS failed while \(step) (\(reason))")
        }
    }

    static func lastError() -> String {
        let code = ERR_get_error()
        guard code != 0 else { return "no reason given" }
        var text = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &text, text.count)
        return String(cString: text)
    }
}

/// The connections kept open between requests, by scheme, host and port; at most `limit`
/// (the request's connections per host) open or opening for each at once. A request that
/// finds none free waits for one, until its deadline.
final class ConnectionPools: @unchecked Sendable {
    /// A kept connection older than this is closed rather than used: servers close idle
    /// connections (nginx after 75 s), and one closed as it is used costs a retry.
    static let keptFor: UInt64 = 30_000_000_000
    private let condition = NSCondition()
    private var kept: [String: [Connection]] = [:]
    private var out: [String: Int] = [:]

    /// A kept connection, or nil when the caller may open a new one (its slot is taken).
    /// `fresh`: a kept one just failed, so the others kept for the host (closed by the same
    /// server, likely) are closed, and the caller opens a new one.
    func take(_ key: String, limit: Int, deadline: Deadline, fresh: Bool = false) throws -> Connection? {
        condition.lock()
        defer { condition.unlock() }
        while true {
            let now = DispatchTime.now().uptimeNanoseconds
            while let connection = kept[key]?.popLast() {
                if !fresh && now - connection.idleSince < Self.keptFor && !connection.isStale {
                    out[key, default: 0] += 1
                    return connection
                }
                connection.close()
            }
            if out[key, default: 0] < max(1, limit) {
                out[key, default: 0] += 1
                return nil
            }
            let ms = deadline.remainingMs
            guard ms > 0 else { throw ExchangeFailure.timedOut }
            _ = condition.wait(until: Date().addingTimeInterval(Double(ms) / 1000))
        }
    }

    /// Gives a slot back, with its connection (nil: none was opened), which is kept for the
    /// next request when `keep` says so and closed otherwise.
    func give(_ key: String, _ connection: Connection?, keep: Bool = false) {
        condition.lock()
        out[key, default: 1] -= 1
        if let connection, keep {
            connection.idleSince = DispatchTime.now().uptimeNanoseconds
            kept[key, default: []].append(connection)
        } else {
            connection?.close()
        }
        // Every waiter looks: the one woken may be waiting for another host's slot.
        condition.broadcast()
        condition.unlock()
    }
}
