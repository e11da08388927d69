import Foundation
import FastCGI
import SubscriptionCore
import SubdeskScenarios

/// The warm intake against the CGI: the same fresh signed bodies through `ingest --cgi`
/// (one process each, posix_spawn) and through `subdesk serve` (FastCGI on a unix socket,
/// one kept connection per client), sequential and with 4 and 16 clients at once, on a
/// fresh store each. The load generator is this program's own: a thread per client, each
/// request timed from its first byte sent (or the spawn) to its answer.
enum ServeBench {
    struct Run {
        var perRequestMs: Spread
        var perSecond: Double
        /// Each request's time, in milliseconds.
        var times: [Double] = []
    }

    static let policy = ["--bundle-id", ScenarioBuilder.demoBundleId, "--app-apple-id", String(ScenarioBuilder.demoAppAppleId)]

    /// Runs `request(i)` for each index from `clients` threads; each must return true (200).
    static func drive(_ count: Int, clients: Int, _ request: @escaping @Sendable (_ client: Int, _ index: Int) -> Bool) -> Run {
        /// What the client threads share, under its lock.
        final class Tally: @unchecked Sendable {
            let lock = NSLock()
            var next = 0, failures = 0
            var times: [Double] = []
        }
        let tally = Tally()
        let started = DispatchTime.now().uptimeNanoseconds
        // A thread per client: DispatchQueue.concurrentPerform runs only as many iterations at
        // once as there are cores, which made "16 clients" two on this host.
        let finished = DispatchGroup()
        for client in 0..<clients {
            finished.enter()
            Thread.detachNewThread {
                defer { finished.leave() }
                while true {
                    tally.lock.lock()
                    let index = tally.next
                    tally.next += 1
                    tally.lock.unlock()
                    guard index < count else { return }
                    let t0 = DispatchTime.now().uptimeNanoseconds
                    let ok = request(client, index)
                    let ms = Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e6
                    tally.lock.lock()
                    if ok { tally.times.append(ms) } else { tally.failures += 1 }
                    tally.lock.unlock()
                }
            }
        }
        finished.wait()
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
        if tally.failures > 0 { log("  \(tally.failures) of \(count) requests were not answered 200") }
        return Run(perRequestMs: Spread(tally.times), perSecond: Double(tally.times.count) / elapsed, times: tally.times)
    }

    static func freshStore(_ engine: String, _ name: String, postgres: String?) throws -> String {
        if engine == "PostgreSQL", let postgres {
            let location = postgres + (postgres.contains("?") ? "&" : "?") + "schema=bench_serve_\(name)_\(DateText.nowMillis())"
            _ = try Store(path: location)
            return location
        }
        let path = dataDirectory + "/serve-\(name).db"
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        _ = try Store(path: path)
        return path
    }

    static func cgi(binary: String, store: String, bodies: [Data], clients: Int) throws -> Run {
        for (i, body) in bodies.enumerated() { try body.write(to: URL(fileURLWithPath: dataDirectory + "/serve-body-\(i).json")) }
        return drive(bodies.count, clients: clients) { client, i in
            var env = ProcessInfo.processInfo.environment
            env["REQUEST_METHOD"] = "POST"
            env["CONTENT_LENGTH"] = String(bodies[i].count)
            let answer = dataDirectory + "/serve-answer-\(client).txt"
            _ = spawn(binary, ["ingest", "--cgi", "--db", store, "--root-ca", sample.testRootPath] + policy,
                      environment: env, stdinPath: dataDirectory + "/serve-body-\(i).json", stdoutPath: answer)
            return ((try? String(contentsOfFile: answer, encoding: .utf8)) ?? "").hasPrefix("Status: 200")
        }
    }

    /// Starts `subdesk serve` on a unix socket; its pid. `policy`: the app's flags (none when
    /// `extra` names a configuration with `[app]` sections); `wait`: seconds it may take to listen.
    static func startServe(binary: String, store: String, socket: String, extra: [String] = [], policy: [String] = policy,
                           wait: Double = 10) throws -> pid_t {
        var pid: pid_t = 0
        let argv: [UnsafeMutablePointer<CChar>?] = ([binary, "serve", "--db", store, "--listen", "unix:" + socket,
                                                     "--root-ca", sample.testRootPath] + policy + extra).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 2, dataDirectory + "/serve.log", O_WRONLY | O_CREAT | O_APPEND, 0o644)
        guard posix_spawn(&pid, binary, &actions, nil, argv, environ) == 0 else { throw POSIXError(.ECHILD) }
        for _ in 0..<Int(wait * 40) {
            if let fd = try? connectUnix(socket) { close(fd); return pid }
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid {
                log("subdesk-bench: serve stopped at start (see \(dataDirectory)/serve.log)")
                throw POSIXError(.ECHILD)
            }
            usleep(25_000)
        }
        throw POSIXError(.ETIMEDOUT)
    }

    static func connectUnix(_ path: String) throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
        let ok = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard ok == 0 else { close(fd); throw POSIXError(.ECONNREFUSED) }
        return fd
    }

    /// One FastCGI request on a kept connection; whether it was answered 200.
    static func post(_ fd: Int32, _ body: Data) -> Bool {
        exchange(fd, body)?.starts(with: Array("Status: 200".utf8)) ?? false
    }

    /// One FastCGI request on a kept connection, with `params` beside the method and length;
    /// its whole output (the CGI's status line, headers and body), or nil when the connection failed.
    static func exchange(_ fd: Int32, _ body: Data, params: [(String, String)] = []) -> [UInt8]? {
        var out = FastCGIRecord.beginRequest(requestId: 1, keepConnection: true).encoded()
        out += FastCGIRecord.stream(.params, requestId: 1, NameValuePairs.encode([("REQUEST_METHOD", "POST"), ("CONTENT_LENGTH", String(body.count)),
                                                                                  ("REMOTE_ADDR", "127.0.0.1")] + params), end: true)
        out += FastCGIRecord.stream(.stdin, requestId: 1, [UInt8](body), end: true)
        guard out.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == out.count else { return nil }
        var parser = RecordParser()
        var stdout: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while true {
            while let record = try? parser.next() {
                if record.kind == .stdout { stdout += record.content }
                if record.kind == .endRequest { return stdout }
            }
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard n > 0 else { return nil }
            parser.append(buffer[0..<n])
        }
    }

    static func serve(binary: String, store: String, bodies: [Data], clients: Int, extra: [String] = []) throws -> Run {
        let socket = dataDirectory + "/serve.sock"
        let pid = try startServe(binary: binary, store: store, socket: socket, extra: extra)
        defer {
            kill(pid, SIGTERM)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
        }
        let connections = try (0..<clients).map { _ in try connectUnix(socket) }
        defer { connections.forEach { close($0) } }
        return drive(bodies.count, clients: clients) { client, i in post(connections[client], bodies[i]) }
    }

    static func run(binary: String, postgres: String?) throws {
        log("== subdesk serve (FastCGI, store kept open) against ingest --cgi (a process per request), \(binary)")
        let engines = ["SQLite"] + (postgres == nil ? [] : ["PostgreSQL"])
        for engine in engines {
            var sequentialServe: Double = 0
            var sequentialCGI: Double = 0
            for clients in [1, 4, 16] {
                let cgiBodies = try signedBodies(clients == 1 ? 60 : 160)
                let c = try cgi(binary: binary, store: try freshStore(engine, "cgi\(clients)", postgres: postgres), bodies: cgiBodies, clients: clients)
                let serveBodies = try signedBodies(clients == 1 ? 400 : 1600)
                let s = try serve(binary: binary, store: try freshStore(engine, "serve\(clients)", postgres: postgres), bodies: serveBodies, clients: clients)
                if clients == 1 {
                    sequentialServe = s.perSecond
                    sequentialCGI = c.perRequestMs.median
                }
                let label = clients == 1 ? "sequential" : "\(clients) clients"
                record(Figure(section: "serve", what: "\(engine), \(label): CGI ms/request (median), requests/s", value:
                                "\(fmt(c.perRequestMs.median, 2)) ms, \(fmt(c.perSecond, 0))/s", target: "", met: nil,
                              numbers: ["median": c.perRequestMs.median, "perSecond": c.perSecond, "clients": Double(clients)]))
                record(Figure(section: "serve", what: "\(engine), \(label): serve ms/request (median), requests/s", value:
                                "\(fmt(s.perRequestMs.median, 2)) ms, \(fmt(s.perSecond, 0))/s",
                              target: clients == 1 ? "<= CGI / 5 (\(fmt(sequentialCGI / 5, 2)) ms)" : (clients == 16 ? ">= 3x sequential serve" : ""),
                              met: clients == 1 ? s.perRequestMs.median <= sequentialCGI / 5 : (clients == 16 ? s.perSecond >= 3 * sequentialServe : nil),
                              numbers: ["median": s.perRequestMs.median, "perSecond": s.perSecond, "clients": Double(clients)]))
            }
        }
    }
}
