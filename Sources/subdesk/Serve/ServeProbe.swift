import Foundation
import FastCGI
import SubscriptionCore

/// Whether the `subdesk serve` the configuration names (`serve_socket = PATH`) answers:
/// doctor and check ask it FCGI_GET_VALUES, which a responder answers without touching
/// the store, so a process that hangs or died is seen even while no notification arrives.
enum ServeProbe {
    /// The configured socket, if the deployment runs `serve`.
    static func socketPath(_ context: Context) -> String? { context.config.string(.serveSocket) }

    /// nil when the responder at `path` answered within `timeout` seconds; else what went wrong.
    static func problem(at path: String, timeout: Int32 = 2) -> String? {
        if case .failure(let problem) = ask(path, ["FCGI_MPXS_CONNS"], timeout: timeout) { return problem.text }
        return nil
    }

    /// What the responder at `path` said of its 503s; nil when it did not answer or did not say.
    static func unavailability(at path: String, timeout: Int32 = 2) -> ServeUnavailability? {
        let names = [ServeUnavailability.totalName, ServeUnavailability.lastHourName, ServeUnavailability.lastAtName,
                     ServeUnavailability.retentionName]
        guard case .success(let values) = ask(path, names, timeout: timeout),
              var said = ServeUnavailability.decode(totals: values[ServeUnavailability.totalName],
                                                    lastHour: values[ServeUnavailability.lastHourName],
                                                    lastAt: values[ServeUnavailability.lastAtName]) else { return nil }
        said.retention = ServeUnavailability.decodeRetention(values[ServeUnavailability.retentionName]) ?? [:]
        return said
    }

    struct Problem: Error { let text: String }

    /// Asks the responder at `path` the FastCGI values `names`: what it answered of them.
    static func ask(_ path: String, _ names: [String], timeout: Int32) -> Result<[String: String], Problem> {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return .failure(Problem(text: "no socket: \(String(cString: strerror(errno)))")) }
        defer { close(fd) }
        guard ServeListener.connect(fd, unix: path) else {
            return .failure(Problem(text: "subdesk serve does not take connections on unix:\(path) (\(String(cString: strerror(errno))))"))
        }
        var wait = timeval(tv_sec: Int(timeout), tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
        let ask = FastCGIRecord(.getValues, requestId: 0, content: NameValuePairs.encode(names.map { ($0, "") })).encoded()
        guard ask.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == ask.count else {
            return .failure(Problem(text: "subdesk serve on unix:\(path) took the connection but not the question"))
        }
        var parser = RecordParser()
        var buffer = [UInt8](repeating: 0, count: 512)
        while true {
            if let record = try? parser.next() {
                guard record.kind == .getValuesResult else {
                    return .failure(Problem(text: "unix:\(path) answered, but not as subdesk serve (FastCGI record type \(record.type))"))
                }
                var values: [String: String] = [:]
                for pair in (try? NameValuePairs.decode(record.content)) ?? [] { values[pair.name] = pair.value }
                return .success(values)
            }
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard n > 0 else { return .failure(Problem(text: "subdesk serve on unix:\(path) did not answer within \(timeout) s")) }
            parser.append(buffer[0..<n])
        }
    }
}
