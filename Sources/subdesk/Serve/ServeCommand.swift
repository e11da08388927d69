import Foundation
import SubscriptionCore

/// `subdesk serve`: the notification URL as a long-lived FastCGI responder.
enum ServeCommand {
    static let spec: CommandSpec = CommandSpec(
        name: "serve", abstract: "answer the notification URL as a long-lived FastCGI responder behind a web server",
        usage: """
        subdesk serve [--listen unix:PATH|HOST:PORT] [--socket-mode MODE] [--allow-from ADDRESS]...
                      [--workers N] [--max-connections N] [--request-timeout SECONDS]
        """,
        discussion: """
        Answers App Store server notifications exactly as `ingest --cgi` does (the same statuses,
        bodies and quarantine, from the same configuration: SUBDESK_CONFIG or --config, never from
        FastCGI parameters), but from one process that keeps the store open, so a request costs no
        process start. It listens on --listen (a unix socket, or a TCP port on 127.0.0.1 unless a
        host is given), on a listening socket inherited on file descriptor 0 (lighttpd's bin-path,
        spawn-fcgi), or on the socket systemd passes (LISTEN_FDS). A TCP listener off the loopback
        takes connections only from --allow-from (or FCGI_WEB_SERVER_ADDRS) addresses.
        Bodies are verified side by side (--workers) and those that arrive together are committed
        in one transaction, each answered once it is durable. One serve writes a SQLite store: a
        second on the same store refuses to start. SIGTERM stops taking connections, answers the
        requests in flight and exits 0; SIGHUP re-reads the configuration and trust roots and
        reopens the store. At unix:PATH only a socket that nothing answers on (left by a process
        that was killed) is replaced: a live socket, a regular file (a store), a directory or a
        link there is refused, named. At exit the socket is removed only if PATH still names it.
        """,
        options: [
            .value(.listen, "ADDRESS", "unix:PATH, HOST:PORT or PORT (127.0.0.1); default: the socket on fd 0 or from systemd"),
            .value(.socketMode, "MODE", "the unix socket file's mode, octal (default 660: the web server's group may connect)"),
            .value(.allowFrom, "ADDRESS", "a web server address allowed to connect over TCP (repeatable)"),
            .value(.workers, "N", "bodies verified at once (default 4)"),
            .value(.maxConnections, "N", "web server connections served at once (default 32)"),
            .value(.requestTimeout, "SECONDS", "a request must arrive whole within this, or its connection is dropped (default 30)"),
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
        var mode: mode_t = 0o660
        if let text = context.arguments.value(.socketMode) {
            guard let m = mode_t(text, radix: 8), m <= 0o777 else { throw UsageError("--socket-mode must be octal, like 660, got \(text)") }
            mode = m
        }
        let lock = try ServeLock(store: context.databasePath)
        let arguments = context.arguments
        let listener = try ServeListener.open(listen: arguments.value(.listen), socketMode: mode,
                                              allowed: arguments.values(.allowFrom), environment: context.environment)
        let server: ServeServer
        do {
            server = try ServeServer(settings: settings, listener: listener, makeEngine: { [settings] in
                // SIGHUP reads the configuration file again; the options given stay.
                try ServeEngine(context: try Context(arguments: arguments, environment: context.environment), workers: settings.workers)
            })
        } catch {
            listener.removeSocketFile()
            throw error
        }
        let status = server.run()
        withExtendedLifetime(lock) {}
        return status
    }
}

/// One `serve` writes a SQLite store: a second would only queue behind the first's writes,
/// each with its own view of the WAL. Held with flock(2) on the store file, which SQLite's
/// own (fcntl) locks do not see; it ends with the process, however it ends.
final class ServeLock {
    private let fd: Int32

    init(store path: String) throws {
        guard !PostgresLocation.isPostgres(path), path != ":memory:" else {
            fd = -1
            return
        }
        fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw UsageError(Context.missingStoreMessage(path)) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            close(fd)
            throw UsageError("another subdesk serve already writes \(path): one serve per SQLite store (stop it first, "
                             + "or point this one at another store)")
        }
    }

    deinit { if fd >= 0 { close(fd) } }
}
