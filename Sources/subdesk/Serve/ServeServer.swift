import Foundation
import FastCGI
import SubscriptionCore

/// The long-lived FastCGI responder. One loop holds every connection (a file descriptor and
/// a `FastCGIConnectionGuard` each, no thread): it accepts, reads and writes what is ready,
/// and closes what a deadline has passed on. A request that has arrived whole goes to one of
/// `maxConnections` workers, which verifies and stores it; its answer comes back to the
/// loop to be written. So a client that connects and says nothing, trickles a request or
/// reads no answer costs a descriptor until its deadline, never a worker, and the loop
/// never waits on a client. Reloads on SIGHUP; stops on SIGTERM once the requests being
/// answered are, within `stopSeconds` whatever clients do.
final class ServeServer: @unchecked Sendable {
    struct Settings {
        /// Requests answered at once (the workers), as told to a web server that asks.
        var maxConnections = 32
        var workers = 4
        /// A request must arrive whole within this (seconds).
        var requestTimeout: TimeInterval = 10
        /// A kept connection with no request open is closed after this (seconds).
        var idleTimeout: TimeInterval = 15
        /// An answer must be read within this (seconds), or its connection is closed.
        var writeTimeout: TimeInterval = 10

        /// Connections held open at once: idle and arriving ones included. Past it, the one
        /// idle longest is closed for a new one, else the one whose request began first.
        var openLimit: Int { min(max(8 * maxConnections, 256), ServeServer.descriptorBudget) }

        var guardLimits: FastCGIConnectionGuard.Limits {
            FastCGIConnectionGuard.Limits(requestSeconds: requestTimeout, idleSeconds: idleTimeout, writeSeconds: writeTimeout)
        }
    }

    /// SIGTERM to exit, at most.
    static let stopSeconds: Double = 9

    /// Descriptors left for connections: the soft limit (raised to the hard one) less those
    /// the store's connections and the process keep.
    static let descriptorBudget: Int = {
        var limit = rlimit()
        let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        guard getrlimit(resource, &limit) == 0 else { return 256 }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = min(limit.rlim_max, 65_536)
            if setrlimit(resource, &raised) == 0 { limit = raised }
        }
        return max(16, Int(min(limit.rlim_cur, 1 << 20)) - 128)
    }()

    let settings: Settings
    let listener: ServeListener
    /// Where scrapes of `/metrics` come (`--metrics-listen`): a listener of its own, so what a
    /// connection may ask is decided by where it connected, never by a path it sends.
    let metricsListener: ServeListener?
    let metrics = ServeMetrics()
    let log = ServeLog()
    /// The requests answered 503, by reason, since the process started (reloads included).
    let unavailable = ServeUnavailableCounts()
    private let lock = NSCondition()
    private var engine: ServeEngine
    private var stopping = false
    /// Builds the engine from the configuration as it is now (start and SIGHUP).
    private let makeEngine: () throws -> ServeEngine
    private var signalSources: [DispatchSourceSignal] = []
    /// How busy answering webhook requests keeps this process, for the deliverers to give way.
    let intakeLoad = IntakeLoad()
    /// The deliverers to the `[forward]` targets (under `lock`).
    private var relay: ServeRelay?

    /// Requests waiting for a worker; scrapes wait for the metrics worker in a queue of their
    /// own, so a scrape never holds a worker intake needs.
    private let jobs = JobQueue()
    private let metricsJobs = JobQueue()
    /// Answers waiting for the loop (under `lock`).
    private var answers: [(connection: FastCGIConnection, bytes: [UInt8])] = []
    /// Written to wake the loop (an answer, a signal).
    private var wake: (read: Int32, write: Int32) = (-1, -1)

    init(settings: Settings, listener: ServeListener, metricsListener: ServeListener? = nil,
         makeEngine: @escaping () throws -> ServeEngine) throws {
        self.settings = settings
        self.listener = listener
        self.metricsListener = metricsListener
        self.makeEngine = makeEngine
        engine = try makeEngine()
    }

    var isStopping: Bool {
        lock.lock()
        defer { lock.unlock() }
        return stopping
    }

    /// The engine a request starts on; the caller releases it once answered.
    func acquireEngine() -> ServeEngine {
        lock.lock()
        let current = engine
        current.acquire()
        lock.unlock()
        return current
    }

    func stop() {
        lock.lock()
        if !stopping { log.notice("stopping: no new connections; answering the requests in flight") }
        stopping = true
        lock.unlock()
        wakeLoop()
    }

    /// Re-reads the configuration and trust roots and reopens the store; a configuration
    /// that does not load leaves the running one in place (and says why).
    func reload() {
        do {
            let fresh = try makeEngine()
            lock.lock()
            let old = engine
            engine = fresh
            lock.unlock()
            old.retire()
            log.notice("reloaded the configuration, trust roots and store")
            startRelay(fresh)
        } catch {
            log.error("reload failed, still serving with the previous configuration: \(error)")
        }
    }

    /// Starts delivering to the targets of `engine`'s configuration, stopping the deliverers
    /// of the one before. One that cannot start is said in the log: intake goes on owing
    /// deliveries, which a later start (a reload, `forward run`) sends.
    private func startRelay(_ engine: ServeEngine) {
        lock.lock()
        let old = relay
        relay = nil
        lock.unlock()
        old?.stop(waitingUpTo: 0)
        do {
            let fresh = try ServeRelay(context: engine.context, log: log, intake: intakeLoad)
            lock.lock()
            relay = fresh
            lock.unlock()
        } catch {
            log.error("cannot relay to the [forward] targets: \(error); notifications are still owed to them")
        }
    }

    private func wakeLoop() {
        var byte: UInt8 = 1
        _ = write(wake.write, &byte, 1)
    }

    static func monotonic() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

    /// Serves until SIGTERM (or SIGINT); returns the exit status.
    func run() -> Int32 {
        signal(SIGPIPE, SIG_IGN)
        var pipeEnds: [Int32] = [-1, -1]
        guard pipe(&pipeEnds) == 0 else {
            log.error("cannot make the loop's wake pipe: \(String(cString: strerror(errno)))")
            return 1
        }
        for end in pipeEnds {
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
        }
        wake = (pipeEnds[0], pipeEnds[1])
        for (number, action) in [(SIGTERM, stop), (SIGINT, stop), (SIGHUP, reload)] as [(Int32, () -> Void)] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler(handler: action)
            source.resume()
            signalSources.append(source)
        }
        for l in [listener] + (metricsListener.map { [$0] } ?? []) {
            _ = fcntl(l.fd, F_SETFL, fcntl(l.fd, F_GETFL) | O_NONBLOCK)
        }
        for index in 0..<settings.maxConnections { startWorker("subdesk-worker-\(index)", .intake) }
        if let metricsListener {
            startWorker("subdesk-metrics", .metrics)
            log.notice("answering /metrics scrapes on \(metricsListener.name)")
        }
        log.notice("answering FastCGI on \(listener.name) (pid \(getpid())), store \(StoreLocation(engine.context.databasePath).redacted)")
        startRelay(engine)
        let unanswered = loop()
        lock.lock()
        let lastRelay = relay
        lock.unlock()
        lastRelay?.stop(waitingUpTo: 2)
        let last = acquireEngine()
        last.release()
        last.retire()
        if unanswered == 0 {
            last.waitUntilRetired()
            let figures = last.commitFigures
            log.notice("stopped; since the last (re)load \(figures.requests) requests were committed in \(figures.groups) groups "
                       + "(the largest \(figures.largest)); committing took \(String(format: "%.2f", figures.commitSeconds)) s, "
                       + "verifying \(String(format: "%.2f", figures.checkSeconds)) s, waiting for a verifier "
                       + "\(String(format: "%.2f", figures.checkWaitSeconds)) s")
        } else {
            log.error("stopped with \(unanswered) requests still being answered after \(Int(Self.stopSeconds)) s: "
                      + "they were not acknowledged, and the web server (or Apple) sends them again")
        }
        return 0
    }

    private func startWorker(_ name: String, _ role: FastCGIConnection.Role) {
        let thread = Thread { [self] in work(role) }
        thread.name = name
        thread.stackSize = 1 << 20
        thread.start()
    }

    /// A worker: answers whole requests of `role`, one at a time, and hands each answer to the loop.
    private func work(_ role: FastCGIConnection.Role = .intake) {
        let queue = role == .intake ? jobs : metricsJobs
        while true {
            let request = queue.take()
            let bytes = FastCGIConnection.answer(request, server: self)
            lock.lock()
            answers.append((request.connection, bytes))
            lock.unlock()
            wakeLoop()
        }
    }

    private func dispatch(_ request: FastCGIConnection.Request) {
        (request.connection.role == .intake ? jobs : metricsJobs).put(request)
    }

    /// Whole requests waiting for the workers that take them.
    final class JobQueue: @unchecked Sendable {
        private let condition = NSCondition()
        private var waiting: [FastCGIConnection.Request] = []

        func put(_ request: FastCGIConnection.Request) {
            condition.lock()
            waiting.append(request)
            condition.signal()
            condition.unlock()
        }

        /// The oldest request, once there is one.
        func take() -> FastCGIConnection.Request {
            condition.lock()
            defer { condition.unlock() }
            while waiting.isEmpty { condition.wait() }
            return waiting.removeFirst()
        }
    }

    /// The connections' loop, until stopped; returns how many requests were still being
    /// answered when it gave up waiting for them.
    private func loop() -> Int {
        var connections: [Int32: FastCGIConnection] = [:]
        var answering = 0
        var stopAt: Double?
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        let counts = unavailable
        let listeners: [(listener: ServeListener, role: FastCGIConnection.Role)] =
            [(listener, .intake)] + (metricsListener.map { [($0, .metrics)] } ?? [])

        func close(_ c: FastCGIConnection, _ why: FastCGIConnectionGuard.Close?) {
            if let why {
                switch why {
                case .idle, .peerClosed(midRequest: false): break
                default: log.error("closed a connection: \(why)")
                }
            }
            c.dropRequest()
            connections[c.fd] = nil
            Glibc.close(c.fd)
        }

        /// Writes what the connection is owed, as far as the socket takes it.
        func flush(_ c: FastCGIConnection, now: Double) -> Bool {
            while c.guarding.wantsWrite {
                let pending = c.guarding.pendingOutput
                let n = pending.withUnsafeBytes { send(c.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
                if n > 0 { c.guarding.wrote(n, now: now); continue }
                if n < 0 && errno == EINTR { continue }
                if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return true }
                close(c, .peerClosed(midRequest: true))
                return false
            }
            if c.guarding.finished {
                close(c, nil)
                return false
            }
            return true
        }

        func take(_ c: FastCGIConnection, _ events: [FastCGIConnectionState.Event]) {
            if let request = c.take(events, server: self) {
                answering += 1
                dispatch(request)
            }
        }

        /// Room for one more connection: the one idle longest is closed, else the one whose
        /// request began first; false when every connection is being answered.
        func makeRoom() -> Bool {
            let idle = connections.values.filter { $0.guarding.isIdle }.min { $0.guarding.lastActivity < $1.guarding.lastActivity }
            if let idle { close(idle, nil); return true }
            let slowest = connections.values.filter { $0.guarding.phase != .answering }
                .min { ($0.guarding.requestBegan ?? $0.opened) < ($1.guarding.requestBegan ?? $1.opened) }
            if let slowest {
                log.error("closed a connection for a new one: \(connections.count) were open, the most \(settings.openLimit)")
                close(slowest, nil)
                return true
            }
            return false
        }

        while true {
            var now = Self.monotonic()
            if stopAt == nil && isStopping {
                stopAt = now + Self.stopSeconds
                for l in listeners {
                    if l.listener.fd > 2 { Glibc.close(l.listener.fd) }
                    l.listener.removeSocketFile()
                }
            }
            if let stopAt {
                // Stopping: a connection with nothing begun and nothing owed is closed; one
                // whose request is arriving is read on, answered, then closed.
                for c in Array(connections.values) where c.guarding.isIdle { close(c, nil) }
                if answering == 0 && connections.isEmpty { break }
                if now >= stopAt { break }
            }

            var polled: [pollfd] = [pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0)]
            let accepting = stopAt == nil
            if accepting { for l in listeners { polled.append(pollfd(fd: l.listener.fd, events: Int16(POLLIN), revents: 0)) } }
            let first = polled.count
            let order = Array(connections.values)
            for c in order {
                var events: Int16 = 0
                if c.guarding.wantsRead { events |= Int16(POLLIN) }
                if c.guarding.wantsWrite { events |= Int16(POLLOUT) }
                // One being answered is not polled at all: a peer that hung up would wake the
                // loop at once, again and again, until its answer is written (and fails).
                polled.append(pollfd(fd: events == 0 ? -1 : c.fd, events: events, revents: 0))
            }
            var timeout = 200.0
            for c in order { if let d = c.guarding.nextDeadline { timeout = min(timeout, max(0, (d - now) * 1000 + 1)) } }
            if let stopAt { timeout = min(timeout, max(0, (stopAt - now) * 1000 + 1)) }
            let ready = poll(&polled, nfds_t(polled.count), Int32(timeout))
            if ready < 0 && errno != EINTR { log.error("poll: \(String(cString: strerror(errno)))") }
            now = Self.monotonic()

            // Answers the workers finished.
            if polled[0].revents != 0 {
                var drain = [UInt8](repeating: 0, count: 256)
                while read(wake.read, &drain, drain.count) > 0 {}
            }
            lock.lock()
            let done = answers
            answers.removeAll()
            lock.unlock()
            for (c, bytes) in done {
                answering -= 1
                guard connections[c.fd] === c else { continue }
                do throws(FastCGIConnectionGuard.Close) {
                    try c.guarding.answered(bytes, now: now)
                    guard flush(c, now: now) else { continue }
                    take(c, try c.guarding.resume(now: now))
                } catch {
                    close(c, error)
                }
            }

            // New connections, as many as are waiting, each taking its listener's role.
            for (index, l) in listeners.enumerated() where accepting && polled[1 + index].revents != 0 {
                let listener = l.listener
                for _ in 0..<256 {
                    let fd = accept(listener.fd, nil, nil)
                    guard fd >= 0 else { break }
                    _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
                    _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
                    if let allowed = listener.allowedPeers {
                        let peer = ServeListener.peerAddress(fd) ?? "?"
                        guard allowed.contains(peer) else {
                            log.error("refused a connection from \(peer): not among the allowed web servers")
                            Glibc.close(fd)
                            continue
                        }
                    }
                    if connections.count >= settings.openLimit && !makeRoom() {
                        Glibc.close(fd)
                        continue
                    }
                    connections[fd] = FastCGIConnection(fd: fd, role: l.role, now: now, limits: settings.guardLimits,
                                                        maxConnections: settings.maxConnections) { counts.values() }
                }
            }

            // Reads and writes.
            for (index, c) in order.enumerated() {
                let revents = polled[first + index].revents
                guard revents != 0, connections[c.fd] === c else { continue }
                if revents & Int16(POLLOUT) != 0 { guard flush(c, now: now) else { continue } }
                guard revents & Int16(POLLIN | POLLHUP | POLLERR) != 0, c.guarding.wantsRead else { continue }
                let n = buffer.withUnsafeMutableBytes { read(c.fd, $0.baseAddress, $0.count) }
                if n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) { continue }
                do throws(FastCGIConnectionGuard.Close) {
                    take(c, try c.guarding.received(buffer[0..<max(0, n)], now: now))
                    _ = flush(c, now: now)
                } catch {
                    close(c, error)
                }
            }

            // Deadlines.
            for c in Array(connections.values) {
                if let why = c.guarding.expired(now: now) { close(c, why) }
            }
        }
        for c in Array(connections.values) { close(c, nil) }
        return answering
    }
}
