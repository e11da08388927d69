/// What a responder makes of the records on one connection: one request at a time
/// (`FCGI_MPXS_CONNS` is 0, so a second `FCGI_BEGIN_REQUEST` while one is open is refused
/// with `FCGI_CANT_MPX_CONN`), management records answered at once, and every length
/// bounded. Pure: it turns records into events and replies; the caller does the I/O.
public struct FastCGIConnectionState: Sendable {
    public struct Limits: Sendable {
        /// The request's parameters, all records together.
        public var maxParamsBytes: Int
        /// Told to a web server that asks (`FCGI_MAX_CONNS`, `FCGI_MAX_REQS`).
        public var maxConnections: Int
        public init(maxParamsBytes: Int = 64 << 10, maxConnections: Int = 16) {
            self.maxParamsBytes = maxParamsBytes
            self.maxConnections = maxConnections
        }
    }

    public enum Event: Equatable, Sendable {
        /// Bytes to write back now (a management answer, a refused request).
        case send([UInt8])
        case begin(requestId: UInt16, keepConnection: Bool)
        /// Every parameter of the open request (the stream ended).
        case params([String: String])
        /// A piece of the request body.
        case body([UInt8])
        /// The body ended: the request is whole.
        case bodyEnd
        /// The web server gave the open request up (its client went away).
        case abort
    }

    private enum Phase { case idle, params, body, answering }

    public let limits: Limits
    private var phase = Phase.idle
    public private(set) var requestId: UInt16 = 0
    public private(set) var keepConnection = false
    private var paramBytes: [UInt8] = []
    /// Values of the application's own that `FCGI_GET_VALUES` may ask for besides the
    /// standard three, read when asked.
    private let values: @Sendable () -> [String: String]

    public init(limits: Limits = Limits(), values: @escaping @Sendable () -> [String: String] = { [:] }) {
        self.limits = limits
        self.values = values
    }

    /// Whether a request is open (begun and not yet answered).
    public var isBusy: Bool { phase != .idle }

    /// The events `record` brings; throws on a record no well-behaved web server sends here.
    public mutating func take(_ record: FastCGIRecord) throws -> [Event] {
        if record.requestId == FastCGIRecord.managementId {
            return [.send(managementAnswer(record))]
        }
        guard let kind = record.kind else {
            throw FastCGIProtocolError("record type \(record.type) for request \(record.requestId): not a FastCGI type")
        }
        switch kind {
        case .beginRequest:
            guard record.content.count == 8 else {
                throw FastCGIProtocolError("FCGI_BEGIN_REQUEST: \(record.content.count) bytes of content, expected 8")
            }
            if phase != .idle {
                if record.requestId == requestId {
                    throw FastCGIProtocolError("FCGI_BEGIN_REQUEST: request \(requestId) is already open")
                }
                // One request at a time on a connection: the other is refused, this one goes on.
                return [.send(FastCGIRecord.endRequest(requestId: record.requestId, appStatus: 0,
                                                       protocolStatus: .cantMultiplexConnections).encoded())]
            }
            let role = UInt16(record.content[0]) << 8 | UInt16(record.content[1])
            let keep = record.content[2] & 1 == 1
            guard role == FastCGIRecord.Role.responder.rawValue else {
                keepConnection = keep
                return [.send(FastCGIRecord.endRequest(requestId: record.requestId, appStatus: 0, protocolStatus: .unknownRole).encoded())]
            }
            phase = .params
            requestId = record.requestId
            keepConnection = keep
            paramBytes = []
            return [.begin(requestId: requestId, keepConnection: keep)]
        case .abortRequest:
            guard phase != .idle, record.requestId == requestId else { return [] }
            phase = .answering
            return [.abort]
        case .params:
            guard phase != .idle, record.requestId == requestId else { return [] }
            guard phase == .params else { throw FastCGIProtocolError("FCGI_PARAMS after the parameters ended") }
            if record.content.isEmpty {
                var params: [String: String] = [:]
                for pair in try NameValuePairs.decode(paramBytes) { params[pair.name] = pair.value }
                paramBytes = []
                phase = .body
                return [.params(params)]
            }
            guard paramBytes.count + record.content.count <= limits.maxParamsBytes else {
                throw FastCGIProtocolError("FCGI_PARAMS: over \(limits.maxParamsBytes) bytes of parameters")
            }
            paramBytes += record.content
            return []
        case .stdin:
            guard phase != .idle, record.requestId == requestId else { return [] }
            guard phase == .body else {
                throw FastCGIProtocolError(phase == .params ? "FCGI_STDIN before the parameters ended" : "FCGI_STDIN after the body ended")
            }
            if record.content.isEmpty {
                phase = .answering
                return [.bodyEnd]
            }
            return [.body(record.content)]
        case .data:
            // A filter's second stream: a responder has no use for it.
            return []
        case .endRequest, .stdout, .stderr, .getValuesResult, .unknownType, .getValues:
            throw FastCGIProtocolError("record type \(record.type) (\(kind)) is never sent to a responder for a request")
        }
    }

    /// The open request was answered: the connection takes the next one.
    public mutating func finished() {
        phase = .idle
        paramBytes = []
    }

    private func managementAnswer(_ record: FastCGIRecord) -> [UInt8] {
        guard record.kind == .getValues else {
            // FCGI_UNKNOWN_TYPE names the type it did not know.
            return FastCGIRecord(.unknownType, requestId: 0, content: [record.type, 0, 0, 0, 0, 0, 0, 0]).encoded()
        }
        // A malformed query is answered with what could be read of it.
        let asked = (try? NameValuePairs.decode(record.content)) ?? []
        var known = ["FCGI_MAX_CONNS": "\(limits.maxConnections)", "FCGI_MAX_REQS": "\(limits.maxConnections)", "FCGI_MPXS_CONNS": "0"]
        if asked.contains(where: { known[$0.name] == nil }) { known.merge(values()) { standard, _ in standard } }
        let answer = asked.compactMap { pair in known[pair.name].map { (pair.name, $0) } }
        var content = NameValuePairs.encode(answer)
        if content.count > FastCGIRecord.maxContentLength { content = [] }
        return FastCGIRecord(.getValuesResult, requestId: 0, content: content).encoded()
    }
}
