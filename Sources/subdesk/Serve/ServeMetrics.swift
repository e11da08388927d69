import Foundation
import SubscriptionCore

/// `/metrics` as `subdesk serve` answers it on its metrics listener: the exposition
/// `subdesk metrics` prints (`MetricsAnswer`, one source), computed on a worker of its own
/// from a read-only connection opened for the scrape (so a store gone or unreadable answers
/// 503, and the scrape never waits for intake nor makes it wait), with serve's own counts
/// of its 503s. Its cost is bounded: one exposition is computed at a time, and scrapes
/// within `reuseSeconds` of one computed for the same configuration get that one.
final class ServeMetrics: @unchecked Sendable {
    static let reuseSeconds = 1.0
    private let lock = NSLock()
    private var last: (at: Double, engine: ObjectIdentifier, answer: MetricsAnswer)?

    func answer(params: [String: String], engine: ServeEngine, server: ServeServer) -> MetricsAnswer {
        lock.lock()
        defer { lock.unlock() }
        let now = ServeServer.monotonic()
        let method = params["REQUEST_METHOD"] ?? "GET"
        if method == "GET" || method == "HEAD", let last, last.engine == ObjectIdentifier(engine), now - last.at < Self.reuseSeconds {
            return last.answer
        }
        let answer = MetricsAnswer.answer(params: params, context: engine.context, storePath: engine.context.databasePath, serve: { _ in server.unavailable.current },
                                          log: server.log.error)
        if answer.status != 405 { last = (now, ObjectIdentifier(engine), answer) }
        return answer
    }
}
