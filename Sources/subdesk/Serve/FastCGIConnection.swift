import Foundation
import FastCGI
import SubscriptionCore

/// One web server connection: FastCGI requests one after another (keep-conn honoured),
/// each answered as `ingest --cgi` answers. A malformed record, or a request that stalls
/// past the time limit, closes this connection and no other.
struct FastCGIConnection {
    let fd: Int32
    let server: ServeServer

    /// Runs until the web server closes the connection, asks it closed, or the process stops.
    func run() {
        defer { close(fd) }
        var parser = RecordParser()
        let counts = server.unavailable
        var state = FastCGIConnectionState(limits: .init(maxConnections: server.settings.maxConnections)) { counts.values() }
        var params: [String: String] = [:]
        var expected: Int?
        var body = BodyReader.Accumulator(limit: 0)
        var engine: ServeEngine?
        /// When the request being read began (its first byte); nil between requests.
        var busySince: Date?
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        defer { engine?.release() }

        while true {
            if busySince == nil && (parser.pendingCount > 0 || state.isBusy) { busySince = Date() }
            guard waitReadable(busySince: busySince) else { return }
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                if busySince != nil { server.log.error("connection closed by the web server in the middle of a request") }
                return
            }
            parser.append(buffer[0..<n])
            do {
                while let record = try parser.next() {
                    for event in try state.take(record) {
                        switch event {
                        case .send(let bytes):
                            guard writeAll(bytes) else { return }
                        case .begin:
                            params = [:]
                            expected = nil
                            engine = server.acquireEngine()
                            body = BodyReader.Accumulator(limit: engine!.maxBodyBytes)
                        case .params(let p):
                            params = p
                            expected = p["CONTENT_LENGTH"].flatMap { Int($0) }.flatMap { $0 >= 0 ? $0 : nil }
                        case .body(let chunk):
                            // Bytes past CONTENT_LENGTH, or past the cap, are not read (as the CGI reads).
                            let room = body.room(expected: expected)
                            chunk.prefix(room).withUnsafeBytes { body.append($0) }
                        case .bodyEnd, .abort:
                            let answered = event == .bodyEnd ? answer(params: params, body: body, engine: engine!) : nil
                            engine?.release()
                            engine = nil
                            var out: [UInt8] = []
                            if let answered {
                                out += FastCGIRecord.stream(.stdout, requestId: state.requestId, Array(answered.cgiText.utf8), end: true)
                            }
                            out += FastCGIRecord.endRequest(requestId: state.requestId, appStatus: answered.map { $0.status < 300 ? 0 : 1 } ?? 1,
                                                            protocolStatus: .requestComplete).encoded()
                            state.finished()
                            busySince = nil
                            guard writeAll(out), state.keepConnection, !server.isStopping else { return }
                        }
                    }
                }
            } catch {
                server.log.error("closing a connection that sent what is not FastCGI: \(error)")
                return
            }
        }
    }

    /// The answer, as the CGI's; a 503 is counted by why (the store's error, or a body cut short).
    private func answer(params: [String: String], body: BodyReader.Accumulator, engine: ServeEngine) -> WebhookAnswer {
        var failure: ServeUnavailableReason?
        let answer = WebhookAnswer.answer(params: params, readBody: { body.result(expected: $0) },
                                          store: { read, source, app in
                                              do { return try engine.store(read, source: source, postedFor: app) } catch {
                                                  failure = ServeUnavailableReason.of(error)
                                                  throw error
                                              }
                                          },
                                          log: server.log.error)
        if answer.status == WebhookAnswer.unavailable.status { server.unavailable.count(failure ?? .incompleteBody) }
        return answer
    }

    /// Waits until bytes can be read. Between requests a connection may stay idle for the
    /// idle limit, and is closed at once when the process stops; a request being read must
    /// come whole within the request time limit (a client stalled mid-record is dropped).
    private func waitReadable(busySince: Date?) -> Bool {
        let idleSince = Date()
        while true {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, 200)
            if ready > 0 { return true }
            if ready < 0 && errno != EINTR { return false }
            if let busySince {
                if Date().timeIntervalSince(busySince) > server.settings.requestTimeout {
                    server.log.error("dropped a connection whose request did not arrive whole within "
                                     + "\(Int(server.settings.requestTimeout)) s")
                    return false
                }
            } else if server.isStopping || Date().timeIntervalSince(idleSince) > server.settings.idleTimeout {
                return false
            }
        }
    }

    private func writeAll(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL)) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                server.log.error("the web server went away before its answer was written: \(String(cString: strerror(errno)))")
                return false
            }
            offset += n
        }
        return true
    }
}
