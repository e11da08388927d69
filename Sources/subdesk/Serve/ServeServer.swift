import Foundation
import SubscriptionCore

/// The long-lived FastCGI responder: accepts connections, serves each on a thread of its
/// own (at most `maxConnections` at once; more wait in the listen queue), reloads on
/// SIGHUP and stops on SIGTERM once every request in flight is answered.
final class ServeServer: @unchecked Sendable {
    struct Settings {
        var maxConnections = 32
        var workers = 4
        /// A request must arrive whole within this (seconds).
        var requestTimeout: TimeInterval = 30
        /// A kept connection with no request open is closed after this (seconds).
        var idleTimeout: TimeInterval = 300
    }

    let settings: Settings
    let listener: ServeListener
    let log = ServeLog()
    /// The requests answered 503, by reason, since the process started (reloads included).
    let unavailable = ServeUnavailableCounts()
    private let lock = NSCondition()
    private var engine: ServeEngine
    private var stopping = false
    private var connections = 0
    /// Builds the engine from the configuration as it is now (start and SIGHUP).
    private let makeEngine: () throws -> ServeEngine
    private var signalSources: [DispatchSourceSignal] = []

    init(settings: Settings, listener: ServeListener, makeEngine: @escaping () throws -> ServeEngine) throws {
        self.settings = settings
        self.listener = listener
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
        lock.broadcast()
        lock.unlock()
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
        } catch {
            log.error("reload failed, still serving with the previous configuration: \(error)")
        }
    }

    /// Serves until SIGTERM (or SIGINT); returns the exit status.
    func run() -> Int32 {
        signal(SIGPIPE, SIG_IGN)
        for (number, action) in [(SIGTERM, stop), (SIGINT, stop), (SIGHUP, reload)] as [(Int32, () -> Void)] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler(handler: action)
            source.resume()
            signalSources.append(source)
        }
        log.notice("answering FastCGI on \(listener.name) (pid \(getpid()))")
        while !isStopping {
            var poller = pollfd(fd: listener.fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 200) > 0 else { continue }
            let fd = accept(listener.fd, nil, nil)
            guard fd >= 0 else { continue }
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            if let allowed = listener.allowedPeers {
                let peer = ServeListener.peerAddress(fd) ?? "?"
                guard allowed.contains(peer) else {
                    log.error("refused a connection from \(peer): not among the allowed web servers")
                    close(fd)
                    continue
                }
            }
            lock.lock()
            while connections >= settings.maxConnections && !stopping { lock.wait() }
            connections += 1
            lock.unlock()
            let thread = Thread { [self] in
                FastCGIConnection(fd: fd, server: self).run()
                lock.lock()
                connections -= 1
                lock.broadcast()
                lock.unlock()
            }
            thread.stackSize = 1 << 20
            thread.start()
        }
        if listener.fd > 2 { close(listener.fd) }
        listener.removeSocketFile()
        lock.lock()
        while connections > 0 { lock.wait() }
        let last = engine
        lock.unlock()
        last.retire()
        last.waitUntilRetired()
        let figures = last.commitFigures
        log.notice("stopped; since the last (re)load \(figures.requests) requests were committed in \(figures.groups) groups "
                   + "(the largest \(figures.largest)); committing took \(String(format: "%.2f", figures.commitSeconds)) s, "
                   + "verifying \(String(format: "%.2f", figures.checkSeconds)) s, waiting for a verifier "
                   + "\(String(format: "%.2f", figures.checkWaitSeconds)) s")
        return 0
    }
}
