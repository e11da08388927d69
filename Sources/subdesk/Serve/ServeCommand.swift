import Foundation
import SubscriptionCore

/// `subdesk serve`: the notification URL as a long-lived FastCGI responder.
enum ServeCommand {
    static let spec: CommandSpec = CommandSpec(
        name: "serve", abstract: "answer the notification URL as a long-lived FastCGI responder behind a web server",
        usage: """
        subdesk serve [--listen unix:PATH|HOST:PORT] [--metrics-listen unix:PATH|HOST:PORT]
                      [--socket-mode MODE] [--allow-from ADDRESS]...
                      [--workers N] [--max-connections N] [--request-timeout SECONDS]
                      [--idle-timeout SECONDS] [--write-timeout SECONDS]
        """,
        discussion: """
        Answers App Store server notifications exactly as `ingest --cgi` does (the same statuses,
        bodies and quarantine, from the same configuration: SUBDESK_CONFIG or --config, never from
        FastCGI parameters), but from one process that keeps the store open, so a request costs no
        process start. It listens on --listen (a unix socket, or a TCP port on 127.0.0.1 unless a
        host is given), on a listening socket inherited on file descriptor 0 (lighttpd's bin-path,
        spawn-fcgi), or on the sockets systemd passes (LISTEN_FDS; the one LISTEN_FDNAMES names metrics
        takes scrapes, as --metrics-listen's does). A TCP listener off the loopback
        takes connections only from --allow-from (or FCGI_WEB_SERVER_ADDRS) addresses.
        Bodies are verified side by side (--workers) and those that arrive together are committed
        in one transaction, each answered once it is durable. One serve writes a SQLite store: a
        second on the same store refuses to start. SIGTERM stops taking connections, answers the
        requests in flight and exits 0, within 10 s whatever clients do; SIGHUP re-reads the
        configuration and trust roots and reopens the store.
        One loop holds every connection, and a worker (--max-connections of them) takes one only
        once its request has arrived whole, so a client that connects and says nothing, trickles
        its request or reads no answer costs a file descriptor, not a worker: a request must
        arrive whole within --request-timeout, a kept connection with nothing open is closed after
        --idle-timeout (web servers reconnect), an answer must be read within --write-timeout,
        and a connection that asks for management answers (FCGI_GET_VALUES) faster than 4 a
        second past a burst of 16 is closed. At most 8 x --max-connections connections (at least
        256, within the open-file limit) are held: past that the one idle longest is closed for a
        new one, else the one whose request began first. The listen queue takes 1024 waiting
        connections (the kernel's net.core.somaxconn caps it). At unix:PATH only a socket that nothing answers on (left by a process
        that was killed) is replaced: a live socket, a regular file (a store), a directory or a
        link there is refused, named. At exit the socket is removed only if PATH still names it.
        With --metrics-listen, a second listener answers /metrics scrapes (GET) with what
        `subdesk metrics` prints, and this process's own count of its 503s, so a scrape starts no
        process: what a connection may ask is decided by the listener it came in on, so no path
        a client sends leads a scrape to intake, or a notification to the metrics. A scrape is
        answered on a worker of its own from a connection opened for it (a store gone or
        unreadable answers 503: Prometheus records up == 0), one at a time, scrapes within a
        second of one another sharing one reading; the same limits and deadlines hold.
        """,
        options: [
            .value(.listen, "ADDRESS", "unix:PATH, HOST:PORT or PORT (127.0.0.1); default: the socket on fd 0 or from systemd"),
            .value(.metricsListen, "ADDRESS", "also answer /metrics scrapes here (unix:PATH, HOST:PORT or PORT), "
                   + "never on --listen"),
            .value(.socketMode, "MODE", "the unix socket file's mode, octal (default 660: the web server's group may connect)"),
            .value(.allowFrom, "ADDRESS", "a web server address allowed to connect over TCP (repeatable)"),
            .value(.workers, "N", "bodies verified at once (default 4)"),
            .value(.maxConnections, "N", "requests answered at once, as told to the web server (default 32)"),
            .value(.requestTimeout, "SECONDS", "a request must arrive whole within this, or its connection is dropped (default 10)"),
            .value(.idleTimeout, "SECONDS", "a kept connection with no request open is closed after this (default 15)"),
            .value(.writeTimeout, "SECONDS", "an answer must be read within this, or its connection is closed (default 10)"),
        ],
        groups: [.intake],
        action: StoreAction(words: "store notifications", privilege: .insert, table: "notifications"),
        run: run)

    static func run(_ context: Context) throws -> Int32 {
        var settings = ServeServer.Settings()
        func positive(_ name: OptionName) throws -> Int? {
            guard let text = context.arguments.value(name) else { return nil }
            guard let n = Int(text), n >= 1, n <= 4096 else { throw UsageError("--\(name) must be a whole number from 1 to 4096, got \(text)") }
            return n
        }
        settings.workers = try positive(.workers) ?? settings.workers
        settings.maxConnections = try positive(.maxConnections) ?? settings.maxConnections
        settings.requestTimeout = TimeInterval(try positive(.requestTimeout) ?? Int(settings.requestTimeout))
        settings.idleTimeout = TimeInterval(try positive(.idleTimeout) ?? Int(settings.idleTimeout))
        settings.writeTimeout = TimeInterval(try positive(.writeTimeout) ?? Int(settings.writeTimeout))
        var mode: mode_t = 0o660
        if let text = context.arguments.value(.socketMode) {
            guard let m = mode_t(text, radix: 8), m <= 0o777 else { throw UsageError("--socket-mode must be octal, like 660, got \(text)") }
            mode = m
        }
        let lock = try ServeLock(store: context.databasePath)
        let arguments = context.arguments
        // Under systemd, both sockets may come from it (subdesk-serve-metrics.socket names its own).
        let passed = arguments.value(.listen) == nil
            ? try ServeListener.fromSystemd(context.environment, allowed: arguments.values(.allowFrom)) : nil
        let listener = try passed?.intake ?? ServeListener.open(listen: arguments.value(.listen), socketMode: mode,
                                                               allowed: arguments.values(.allowFrom), environment: context.environment)
        let metricsListener: ServeListener?
        do {
            metricsListener = try arguments.value(.metricsListen).map {
                if let listen = arguments.value(.listen), try ServeListener.Address.parse(listen) == ServeListener.Address.parse($0) {
                    throw UsageError("--metrics-listen \($0) is --listen's address: scrapes get a listener of their own")
                }
                return try ServeListener.open(listen: $0, socketMode: mode, allowed: arguments.values(.allowFrom),
                                              environment: context.environment)
            } ?? passed?.metrics
        } catch {
            listener.removeSocketFile()
            throw error
        }
        let server: ServeServer
        do {
            server = try ServeServer(settings: settings, listener: listener, metricsListener: metricsListener, makeEngine: { [settings] in
                // SIGHUP reads the configuration file again; the options given stay.
                try ServeEngine(context: try Context(arguments: arguments, environment: context.environment), workers: settings.workers,
                                lock: lock)
            })
        } catch {
            listener.removeSocketFile()
            metricsListener?.removeSocketFile()
            throw error
        }
        let status = server.run()
        withExtendedLifetime(lock) {}
        return status
    }
}

/// One `serve` writes a SQLite store: a second would only queue behind the first's writes,
/// each with its own view of the WAL. Held with flock(2) on the store file, which SQLite's
/// own (fcntl) locks do not see; it ends with the process, however it ends. It follows the
/// path: when another file takes the store's path (a restore), the writer that opens it
/// takes the lock on it first (`hold`), so a second `serve` started on the new file then
/// refuses, and this one refuses to write a file another `serve` holds.
final class ServeLock: @unchecked Sendable {
    private let lock = NSLock()
    private var fd: Int32 = -1
    private var held: FileIdentity?
    let path: String

    init(store path: String) throws {
        self.path = path
        try hold()
    }

    /// Takes the lock on the file the path names now, unless it is the one held; the lock
    /// on a file no longer at the path is let go.
    func hold() throws {
        guard StoreLocation(path).isFile else { return }
        lock.lock()
        defer { lock.unlock() }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw UsageError(Context.missingStoreMessage(path)) }
        var info = stat()
        if fstat(fd, &info) == 0, let held, held == FileIdentity(info) {
            close(fd)
            return
        }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            close(fd)
            throw UsageError("another subdesk serve already writes \(path): one serve per SQLite store (stop it first, "
                             + "or point this one at another store)")
        }
        if self.fd >= 0 { close(self.fd) }
        self.fd = fd
        held = fstat(fd, &info) == 0 ? FileIdentity(info) : nil
    }

    deinit { if fd >= 0 { close(fd) } }
}
