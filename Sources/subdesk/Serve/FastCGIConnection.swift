import Foundation
import FastCGI
import SubscriptionCore

/// One web server connection as the server's loop keeps it: the socket, what the pure
/// `FastCGIConnectionGuard` makes of its bytes, and the request being read. It holds no
/// thread: the loop reads and writes it when the socket is ready, and a worker takes it
/// only once a request has arrived whole (`Request`).
final class FastCGIConnection {
    /// What the listener a connection came in on answers: the notification URL's intake, or
    /// `/metrics`. Fixed when it is accepted; nothing a request says changes it.
    enum Role {
        case intake
        case metrics
    }

    let fd: Int32
    let role: Role
    let opened: Double
    var guarding: FastCGIConnectionGuard
    var params: [String: String] = [:]
    var expected: Int?
    var body = BodyReader.Accumulator(limit: 0)
    var engine: ServeEngine?

    init(fd: Int32, role: Role = .intake, now: Double, limits: FastCGIConnectionGuard.Limits, maxConnections: Int,
         values: @escaping @Sendable () -> [String: String]) {
        self.fd = fd
        self.role = role
        opened = now
        guarding = FastCGIConnectionGuard(limits: limits, protocolLimits: .init(maxConnections: maxConnections), now: now,
                                          values: values)
    }

    /// A request that has arrived whole, for a worker to answer.
    struct Request {
        let connection: FastCGIConnection
        let requestId: UInt16
        /// nil: the web server gave it up (FCGI_ABORT_REQUEST); answered with its end alone.
        let params: [String: String]?
        let body: BodyReader.Accumulator
        let engine: ServeEngine
    }

    /// Takes the events of what was read; a whole request is returned for a worker.
    func take(_ events: [FastCGIConnectionState.Event], server: ServeServer) -> Request? {
        var request: Request?
        for event in events {
            switch event {
            case .send:
                break  // the guard queues replies itself
            case .begin:
                params = [:]
                expected = nil
                engine?.release()
                let current = server.acquireEngine()
                engine = current
                // A scrape has no body to keep: whatever one sends is not read.
                body = role == .intake ? BodyReader.Accumulator(limit: current.maxBodyBytes) : BodyReader.Accumulator(limit: 0, cap: 0)
            case .params(let p):
                params = p
                expected = p["CONTENT_LENGTH"].flatMap { Int($0) }.flatMap { $0 >= 0 ? $0 : nil }
            case .body(let chunk):
                // Bytes past CONTENT_LENGTH, or past the cap, are not read (as the CGI reads).
                let room = body.room(expected: expected)
                chunk.prefix(room).withUnsafeBytes { body.append($0) }
            case .bodyEnd, .abort:
                guard let engine else { continue }
                request = Request(connection: self, requestId: guarding.requestId, params: event == .bodyEnd ? params : nil,
                                  body: body, engine: engine)
                self.engine = nil
                body = BodyReader.Accumulator(limit: 0)
            }
        }
        return request
    }

    /// Lets go of the engine a request being read had taken (the connection is closing).
    func dropRequest() {
        engine?.release()
        engine = nil
    }

    /// The records that answer `request`: its output as the CGI's, then its end.
    static func answer(_ request: Request, server: ServeServer) -> [UInt8] {
        var out: [UInt8] = []
        var status: UInt32 = 1
        if let params = request.params {
            let (text, code): (String, Int)
            switch request.connection.role {
            case .intake where isRetentionPath(params):
                let answered = server.intakeLoad.answering {
                    retentionAnswer(params: params, body: request.body, engine: request.engine, server: server)
                }
                (text, code) = (answered.cgiText, answered.status)
            case .intake:
                let answered = server.intakeLoad.answering {
                    answer(params: params, body: request.body, engine: request.engine, server: server)
                }
                (text, code) = (answered.cgiText, answered.status)
            case .metrics:
                let answered = server.metrics.answer(params: params, engine: request.engine, server: server)
                (text, code) = (answered.cgiText, answered.status)
            }
            out += FastCGIRecord.stream(.stdout, requestId: request.requestId, Array(text.utf8), end: true)
            status = code < 300 ? 0 : 1
        }
        request.engine.release()
        out += FastCGIRecord.endRequest(requestId: request.requestId, appStatus: status, protocolStatus: .requestComplete).encoded()
        return out
    }

    /// Whether the request is Apple's real-time Retention Messaging request: its path
    /// (`DOCUMENT_URI`, else `SCRIPT_NAME`) ends in `/retention`.
    static func isRetentionPath(_ params: [String: String]) -> Bool {
        let path = params["DOCUMENT_URI"].flatMap { $0.isEmpty ? nil : $0 } ?? params["SCRIPT_NAME"] ?? ""
        return path.hasSuffix("/retention")
    }

    /// The real-time retention answer: JSON, exactly one of Apple's fields, or `{}` to let
    /// Apple fall back; a refusal is a 4xx.
    private static func retentionAnswer(params: [String: String], body: BodyReader.Accumulator, engine: ServeEngine,
                                        server: ServeServer) -> RetentionCGIAnswer {
        guard (params["REQUEST_METHOD"] ?? "POST") == "POST" else {
            return RetentionCGIAnswer(status: 405, reason: "Method Not Allowed", body: "{\"error\":\"method\"}")
        }
        let expected = params["CONTENT_LENGTH"].flatMap { Int($0) }.flatMap { $0 >= 0 ? $0 : nil }
        let read = body.result(expected: expected)
        let posted: String?
        switch WebhookAnswer.postedApp(params) {
        case .success(let app): posted = app
        case .failure: posted = ""
        }
        let response = engine.answerRetention(body: read, postedApp: posted, log: server.log.error)
        server.unavailable.countRetention(response.outcome.key)
        return RetentionCGIAnswer(status: response.status, reason: response.status == 200 ? "OK" : "Refused", body: response.body)
    }

    /// The answer, as the CGI's; a 503 is counted by why (the store's error, or a body cut short).
    private static func answer(params: [String: String], body: BodyReader.Accumulator, engine: ServeEngine,
                               server: ServeServer) -> WebhookAnswer {
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
}
