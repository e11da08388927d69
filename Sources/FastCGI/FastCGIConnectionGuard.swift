/// One web server connection as a responder keeps it, without I/O: the records it brings
/// (through `FastCGIConnectionState`), the bytes owed to it, and the deadlines that close
/// it. A connection with no request open costs its owner nothing but this value: it is
/// closed when idle too long, when a request does not arrive whole in time, when it does
/// not read what it is sent, and when it asks for management answers faster than a web
/// server would. Pure: the caller reads and writes, and gives the time (seconds on a
/// monotonic clock) with each call.
public struct FastCGIConnectionGuard: Sendable {
    public struct Limits: Sendable, Equatable {
        /// A request must arrive whole within this, from its first byte.
        public var requestSeconds: Double
        /// A connection with no request open and nothing to send is closed after this.
        public var idleSeconds: Double
        /// Bytes owed to the peer must move within this, or it is not reading.
        public var writeSeconds: Double
        /// Replies the connection asks for without a request (management answers, refused
        /// requests): at most `replyBurst` at once, refilled at `repliesPerSecond`.
        public var replyBurst: Double
        public var repliesPerSecond: Double
        /// At most this many bytes waiting to be written.
        public var maxOutputBytes: Int

        public init(requestSeconds: Double = 10, idleSeconds: Double = 15, writeSeconds: Double = 10,
                    replyBurst: Double = 16, repliesPerSecond: Double = 4, maxOutputBytes: Int = 256 << 10) {
            self.requestSeconds = requestSeconds
            self.idleSeconds = idleSeconds
            self.writeSeconds = writeSeconds
            self.replyBurst = replyBurst
            self.repliesPerSecond = repliesPerSecond
            self.maxOutputBytes = maxOutputBytes
        }
    }

    /// Why a connection is closed: each a value, rendered by `description`.
    public enum Close: Error, Equatable, Sendable, CustomStringConvertible {
        case requestTooSlow(seconds: Double)
        case idle(seconds: Double)
        case notReading(seconds: Double)
        case tooManyReplies
        case outputTooLarge(bytes: Int)
        case malformed(String)
        case peerClosed(midRequest: Bool)

        public var description: String {
            switch self {
            case .requestTooSlow(let s): return "its request did not arrive whole within \(Int(s)) s"
            case .idle(let s): return "it stayed idle \(Int(s)) s"
            case .notReading(let s): return "it read nothing of its answer for \(Int(s)) s"
            case .tooManyReplies: return "it asked for management answers faster than a web server does"
            case .outputTooLarge(let n): return "it left \(n) bytes of answers unread"
            case .malformed(let why): return "it sent what is not FastCGI: \(why)"
            case .peerClosed(let mid): return mid ? "the web server closed it in the middle of a request" : "the web server closed it"
            }
        }
    }

    public enum Phase: Equatable, Sendable {
        /// No request open.
        case idle
        /// A request's records are arriving.
        case reading
        /// The request is whole and being answered; nothing more is read until it is.
        case answering
    }

    public let limits: Limits
    public private(set) var phase = Phase.idle
    private var parser = RecordParser()
    private var state: FastCGIConnectionState
    private var output: [UInt8] = []
    private var outputStart = 0
    /// When the connection last did something: its idle time counts from here.
    public private(set) var lastActivity: Double
    /// When the request being read sent its first byte.
    public private(set) var requestBegan: Double?
    /// When bytes owed to the peer last moved (or were first owed).
    private var writeSince: Double?
    private var replyTokens: Double
    private var refilledAt: Double
    /// Set once the answer is sent when the web server did not ask to keep the connection.
    private var closeAfterOutput = false

    public init(limits: Limits = Limits(), protocolLimits: FastCGIConnectionState.Limits = .init(),
                now: Double, values: @escaping @Sendable () -> [String: String] = { [:] }) {
        self.limits = limits
        state = FastCGIConnectionState(limits: protocolLimits, values: values)
        lastActivity = now
        replyTokens = limits.replyBurst
        refilledAt = now
    }

    /// The open request's id.
    public var requestId: UInt16 { state.requestId }

    /// Whether the caller should read: not while a request is being answered.
    public var wantsRead: Bool { phase != .answering }
    /// Bytes waiting to be written.
    public var pendingOutput: ArraySlice<UInt8> { output[outputStart...] }
    public var wantsWrite: Bool { outputStart < output.count }
    /// Nothing open and nothing owed: the first to close when connections run out.
    public var isIdle: Bool { phase == .idle && !wantsWrite && parser.pendingCount == 0 }

    /// The events of the bytes read: a request's pieces, and its end (`.bodyEnd` puts the
    /// connection in `answering` until `answered`). Replies asked for without a request are
    /// queued for writing here, not returned. Throws the reason to close it.
    public mutating func received<Bytes: Collection>(_ bytes: Bytes, now: Double) throws(Close) -> [FastCGIConnectionState.Event]
    where Bytes.Element == UInt8 {
        guard !bytes.isEmpty else { throw Close.peerClosed(midRequest: phase != .idle || parser.pendingCount > 0) }
        lastActivity = now
        parser.append(bytes)
        return try takeRecords(now: now)
    }

    /// The answer to the open request (its records, FCGI_END_REQUEST last): queued for
    /// writing, and the connection takes the next request (or closes once it is sent).
    /// Records already read behind it come with `resume`.
    public mutating func answered(_ bytes: [UInt8], now: Double) throws(Close) {
        state.finished()
        phase = .idle
        requestBegan = nil
        lastActivity = now
        if !state.keepConnection { closeAfterOutput = true }
        try queue(bytes, now: now)
    }

    /// The events of records read while a request was answered (a web server may send the
    /// next request before it reads the answer), as if they had just arrived.
    public mutating func resume(now: Double) throws(Close) -> [FastCGIConnectionState.Event] {
        guard phase == .idle else { return [] }
        return try takeRecords(now: now)
    }

    private mutating func takeRecords(now: Double) throws(Close) -> [FastCGIConnectionState.Event] {
        // Asked closed after its answer: nothing more is taken from it.
        if closeAfterOutput { return [] }
        var events: [FastCGIConnectionState.Event] = []
        while phase != .answering {
            let record: FastCGIRecord?
            do { record = try parser.next() } catch { throw Close.malformed("\(error)") }
            guard let record else { break }
            let taken: [FastCGIConnectionState.Event]
            do { taken = try state.take(record) } catch { throw Close.malformed("\(error)") }
            for event in taken {
                switch event {
                case .send(let bytes):
                    try reply(bytes, now: now)
                case .begin:
                    phase = .reading
                    if requestBegan == nil { requestBegan = now }
                    events.append(event)
                case .bodyEnd, .abort:
                    phase = .answering
                    events.append(event)
                case .params, .body:
                    events.append(event)
                }
            }
        }
        // A record begun (a request's or not) must arrive whole in time, like a request.
        if phase == .idle { requestBegan = parser.pendingCount > 0 ? (requestBegan ?? now) : nil }
        return events
    }

    /// `count` bytes of `pendingOutput` were written.
    public mutating func wrote(_ count: Int, now: Double) {
        guard count > 0 else { return }
        outputStart += count
        writeSince = now
        lastActivity = now
        if outputStart == output.count {
            output.removeAll(keepingCapacity: true)
            outputStart = 0
            writeSince = nil
        }
    }

    /// Whether the connection is done: its answer sent and the web server asked it closed.
    public var finished: Bool { closeAfterOutput && !wantsWrite }

    /// The reason to close it now, if a deadline has passed.
    public func expired(now: Double) -> Close? {
        deadlines.first { now > $0.at }?.close
    }

    /// When `expired` may next say something: the earliest deadline, or nil for none.
    public var nextDeadline: Double? { deadlines.map(\.at).min() }

    /// Each deadline that runs now, with what it closes the connection for: bytes owed
    /// that do not move; a request (or a record) begun that has not arrived whole; a
    /// connection with nothing begun and nothing owed left idle. None while answering.
    private var deadlines: [(at: Double, close: Close)] {
        var all: [(at: Double, close: Close)] = []
        if let since = writeSince { all.append((since + limits.writeSeconds, .notReading(seconds: limits.writeSeconds))) }
        guard phase != .answering else { return all }
        if let began = requestBegan {
            all.append((began + limits.requestSeconds, .requestTooSlow(seconds: limits.requestSeconds)))
        } else if phase == .idle && !wantsWrite {
            all.append((lastActivity + limits.idleSeconds, .idle(seconds: limits.idleSeconds)))
        }
        return all
    }

    private mutating func reply(_ bytes: [UInt8], now: Double) throws(Close) {
        replyTokens = min(limits.replyBurst, replyTokens + (now - refilledAt) * limits.repliesPerSecond)
        refilledAt = now
        guard replyTokens >= 1 else { throw Close.tooManyReplies }
        replyTokens -= 1
        try queue(bytes, now: now)
    }

    private mutating func queue(_ bytes: [UInt8], now: Double) throws(Close) {
        guard !bytes.isEmpty else { return }
        if !wantsWrite { writeSince = now }
        output += bytes
        guard output.count - outputStart <= limits.maxOutputBytes else { throw Close.outputTooLarge(bytes: output.count - outputStart) }
    }
}
