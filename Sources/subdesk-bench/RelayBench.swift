import Foundation
import FakeApple
import SubscriptionCore
import SubdeskScenarios

/// The relay (`[forward NAME]` targets) measured end to end, against local targets played
/// by `FakeAppleServer` (a thread per connection, one request each):
/// - what two healthy targets cost `serve`'s answers to Apple: sequential requests through
///   serve with two targets and with none, alternating runs on fresh stores;
/// - the lag from serve's 200 to the target's receipt, at a steady 200 notifications/s;
/// - a backlog of 100,000 owed deliveries (written by the bench, their notifications stored
///   without intake) drained by `subdesk forward run --once`: its rate and resident memory;
/// - serve's answers while a deliverer drains such a backlog, against the same store with
///   no target: sequential requests, as fast as serve answers (`intake`), and a steady
///   200 requests/s (`steady`), with the deliveries made meanwhile.
enum RelayBench {
    static let secret = "bench-relay-secret"

    /// A config with `targets` targets at `server` (none: an empty config), or at
    /// `--relay-target` where `external` allows it.
    static func config(_ name: String, server: FakeAppleServer?, targets: Int, external: Bool = false) throws -> String {
        let secretFile = dataDirectory + "/relay-secret"
        FileManager.default.createFile(atPath: secretFile, contents: Data(secret.utf8), attributes: [.posixPermissions: 0o600])
        var text = ""
        let base = external ? options.relayTarget ?? server?.baseURL.absoluteString : server?.baseURL.absoluteString
        if let base {
            for t in 0..<targets {
                text += "[forward t\(t)]\nurl = \(base)/in\(t)\nsecret_file = \(secretFile)\n"
            }
        }
        let path = dataDirectory + "/relay-\(name).conf"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// A target that answers 200 at once and notes when each delivery arrived, by its id.
    final class Target: @unchecked Sendable {
        let server: FakeAppleServer
        private let lock = NSLock()
        private var arrivals: [String: UInt64] = [:]

        init(paths: Int) throws {
            server = try FakeAppleServer()
            for t in 0..<paths {
                server.route("POST", "/in\(t)") { [unowned self] request in
                    let now = DispatchTime.now().uptimeNanoseconds
                    if let id = request.headers["subdesk-delivery"] {
                        lock.lock()
                        if arrivals[id] == nil { arrivals[id] = now }
                        lock.unlock()
                    }
                    return .init(status: 200)
                }
            }
        }

        func arrival(_ id: String) -> UInt64? {
            lock.lock()
            defer { lock.unlock() }
            return arrivals[id]
        }

        var count: Int {
            lock.lock()
            defer { lock.unlock() }
            return arrivals.count
        }
    }

    static func run(binary: String, postgres: String?) throws {
        log("== the relay: [forward] targets, \(binary)")
        let target = try Target(paths: 2)
        defer { target.server.stop() }
        let engines = ["SQLite"] + (postgres == nil ? [] : ["PostgreSQL"])
        func part(_ name: String) -> Bool { options.relayParts.contains(name) }
        if part("cost") { for engine in engines { try cost(binary: binary, engine: engine, postgres: postgres, target: target) } }
        if part("lag") { for engine in engines { try lag(binary: binary, engine: engine, postgres: postgres, target: target) } }
        if part("backlog") { try backlog(binary: binary, target: target) }
        if part("intake") { try intakeWhileDraining(binary: binary, target: target) }
        if part("steady") { try steadyWhileDraining(binary: binary, target: target) }
    }

    /// Sequential requests through serve with two healthy targets and with none, 5 runs
    /// each, alternating, a fresh store and fresh bodies each run.
    static func cost(binary: String, engine: String, postgres: String?, target: Target) throws {
        let two = try config("two", server: target.server, targets: 2, external: true), none = try config("none", server: nil, targets: 0)
        var medians: [String: [Double]] = ["none": [], "two": []]
        for round in 0..<5 {
            for (name, file) in [("none", none), ("two", two)] {
                let store = try ServeBench.freshStore(engine, "relay\(name)\(round)", postgres: postgres)
                let run = try ServeBench.serve(binary: binary, store: store, bodies: try signedBodies(300), clients: 1,
                                               extra: ["--config", file])
                medians[name, default: []].append(run.perRequestMs.median)
            }
        }
        let none_ = Spread(medians["none"]!), two_ = Spread(medians["two"]!)
        record(Figure(section: "relay", what: "\(engine), serve ms/request, no target (median of 5)", value: spreadText(none_, 3, unit: " ms"),
                      target: "", met: nil, numbers: ["median": none_.median]))
        record(Figure(section: "relay", what: "\(engine), serve ms/request, two targets (median of 5)", value: spreadText(two_, 3, unit: " ms"),
                      target: "<= 1.10x no target (\(fmt(none_.median * 1.1, 3)) ms)", met: two_.median <= none_.median * 1.1,
                      numbers: ["median": two_.median, "ratio": two_.median / none_.median]))
    }

    /// 2,000 notifications through serve at 200/s, one target: from each 200 to its receipt.
    static func lag(binary: String, engine: String, postgres: String?, target: Target) throws {
        let file = try config("one", server: target.server, targets: 1)
        let store = try ServeBench.freshStore(engine, "relaylag", postgres: postgres)
        let bodies = try signedBodies(2_000)
        let uuids = bodies.map { body -> String in
            let jws = (try? JSONSerialization.jsonObject(with: body) as? [String: Any])?["signedPayload"] as? String ?? ""
            let payload = jws.split(separator: ".").dropFirst().first.flatMap { Base64URL.decodeUnpadded($0) }
            return ((payload.flatMap { try? JSONSerialization.jsonObject(with: $0) } as? [String: Any])?["notificationUUID"] as? String) ?? ""
        }
        let answered = try serving(binary: binary, store: store, config: file) { fd in Self.paced(fd, bodies) }.map { $0?.answered }
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline && uuids.contains(where: { target.arrival($0 + "/t0") == nil }) { usleep(50_000) }
        let lags = zip(uuids, answered).compactMap { uuid, at -> Double? in
            guard let at, let arrived = target.arrival(uuid + "/t0") else { return nil }
            return Double(Int64(arrived) - Int64(at)) / 1e6
        }
        let p50 = percentile(lags, 0.5), p99 = percentile(lags, 0.99)
        record(Figure(section: "relay", what: "\(engine), lag serve 200 -> target, 200/s: p50, p99", value: "\(fmt(p50, 0)) ms, \(fmt(p99, 0)) ms",
                      target: "p99 < 1000 ms, all \(bodies.count) delivered", met: p99 < 1000 && lags.count == bodies.count,
                      numbers: ["p50": p50, "p99": p99, "delivered": Double(lags.count)]))
    }

    /// 100,000 owed deliveries drained by `forward run --once`; then serve's answers while
    /// serve drains another such backlog, against the same store with no target.
    static func backlog(binary: String, target: Target) throws {
        let count = options.relayBacklog
        let file = try config("one", server: target.server, targets: 1, external: true)
        let path = try filledBacklog(count, name: "drain")
        let where_ = options.relayTarget.map { "to \($0)" } ?? "to the bench's own target"
        let started = DispatchTime.now().uptimeNanoseconds
        let run = spawnMeasured(binary, ["forward", "run", "--once", "--db", path, "--config", file])
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
        let delivered = try delivered(path)
        record(Figure(section: "relay", what: "backlog of \(count) drained by forward run --once \(where_), deliveries/s",
                      value: "\(fmt(Double(delivered) / seconds, 0))/s (\(delivered) in \(fmt(seconds, 1)) s, exit \(run.status))",
                      target: ">= 500/s", met: Double(delivered) / seconds >= 500 && delivered == count,
                      numbers: ["perSecond": Double(delivered) / seconds, "delivered": Double(delivered)]))
        let treeMB = Double(run.peakTreeKB) / 1024
        record(Figure(section: "relay", what: "forward run and its HTTP helper, resident together at most (sampled every 0.2 s), MB",
                      value: fmt(treeMB, 1) + " MB (the largest one process: \(fmt(Double(run.largestKB) / 1024, 1)) MB)",
                      target: "< 100 MB", met: treeMB < 100, numbers: ["peakTreeMB": treeMB, "largestProcessMB": Double(run.largestKB) / 1024]))
    }

    /// Serve's answers to 2,000 sequential requests, each sent as the one before is answered,
    /// while serve drains a backlog, against the same store with no target; and how many
    /// deliveries serve made while it ran.
    static func intakeWhileDraining(binary: String, target: Target) throws {
        let bodies = try signedBodies(2_000)
        try whileDraining("intake", how: ", sequential", rate: ("deliveries/s serve made while it ran", nil), target: target) { store, conf in
            let started = DispatchTime.now().uptimeNanoseconds
            let times = try ServeBench.serve(binary: binary, store: store, bodies: bodies, clients: 1, extra: ["--config", conf]).times
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
            return (times, Double(try delivered(store)) / seconds)
        }
    }

    /// Serve's answers to a steady 200 requests/s (Apple's traffic at a busy hour, one
    /// connection) for 10 s while serve drains a backlog, against the same store with no
    /// target; and how many deliveries serve made meanwhile.
    static func steadyWhileDraining(binary: String, target: Target) throws {
        let bodies = try signedBodies(2_000)
        try whileDraining("steady", how: " at 200/s", rate: ("deliveries/s serve made meanwhile", 500), target: target) { store, conf in
            var before = 0, seconds = 0.0
            let posts = try serving(binary: binary, store: store, config: conf) { fd -> [(sent: UInt64, answered: UInt64)?] in
                before = try delivered(store)
                let start = DispatchTime.now().uptimeNanoseconds
                defer { seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9 }
                return Self.paced(fd, bodies)
            }
            let times = posts.compactMap { $0.map { Double($0.answered - $0.sent) / 1e6 } }
            return (times, Double(try delivered(store) - before) / seconds)
        }
    }

    /// Serve's p99 while it drains a backlog of `--relay-backlog`, against the same store with
    /// no target: 3 runs each, alternating, each on a fresh store; `measure` runs serve on a
    /// store with a configuration and says its answers' times (ms) and the deliveries per
    /// second meanwhile (read from the runs with a target); `rate`, how that figure is named
    /// and its goal.
    static func whileDraining(_ part: String, how: String, rate: (what: String, goal: Double?), target: Target,
                              measure: (_ store: String, _ config: String) throws -> (times: [Double], perSecond: Double)) throws {
        let count = options.relayBacklog
        var p99s: [String: [Double]] = ["none": [], "draining": []]
        var rates: [Double] = []
        for round in 0..<3 {
            for (name, targets) in [("none", 0), ("draining", 1)] {
                let store = try filledBacklog(count, name: "\(part)\(name)\(round)")
                let conf = try config("\(part)\(name)", server: targets == 0 ? nil : target.server, targets: targets, external: true)
                let run = try measure(store, conf)
                p99s[name, default: []].append(percentile(run.times, 0.99))
                if targets > 0 { rates.append(run.perSecond) }
            }
        }
        let none = Spread(p99s["none"]!), draining = Spread(p99s["draining"]!), perSecond = Spread(rates)
        record(Figure(section: "relay", what: "serve p99 ms/request\(how), backlog of \(count), no target (median of 3)",
                      value: spreadText(none, 2, unit: " ms"), target: "", met: nil, numbers: ["p99": none.median]))
        record(Figure(section: "relay", what: "serve p99 ms/request\(how), while draining it (median of 3)",
                      value: spreadText(draining, 2, unit: " ms"), target: "<= 1.10x no target (\(fmt(none.median * 1.1, 2)) ms)",
                      met: draining.median <= none.median * 1.1, numbers: ["p99": draining.median, "ratio": draining.median / none.median]))
        record(Figure(section: "relay", what: rate.what + " (median of 3)", value: spreadText(perSecond, 0, unit: "/s"),
                      target: rate.goal.map { ">= \(fmt($0, 0))/s" } ?? "", met: rate.goal.map { perSecond.median >= $0 },
                      numbers: ["perSecond": perSecond.median]))
    }

    /// What target `t0` took in the last hour, as `forward status` counts it.
    static func delivered(_ store: String) throws -> Int {
        try Store(path: store).outbox.status(targets: ["t0"], now: DateText.nowMillis()).first?.deliveredLastHour ?? 0
    }

    /// Runs `serve` on `store` with `config`, gives `body` a connection to it, and stops it.
    static func serving<T>(binary: String, store: String, config: String, _ body: (Int32) throws -> T) throws -> T {
        let socket = dataDirectory + "/serve.sock"
        let pid = try ServeBench.startServe(binary: binary, store: store, socket: socket, extra: ["--config", config])
        defer {
            kill(pid, SIGTERM)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
        }
        let fd = try ServeBench.connectUnix(socket)
        defer { close(fd) }
        return try body(fd)
    }

    /// Posts `bodies` on `fd` at a steady rate (one every `interval` nanoseconds, 200/s by
    /// default), each when it falls due; when each was sent and answered 200 (nil: it was not).
    static func paced(_ fd: Int32, _ bodies: [Data], interval: UInt64 = 5_000_000) -> [(sent: UInt64, answered: UInt64)?] {
        let start = DispatchTime.now().uptimeNanoseconds
        return bodies.enumerated().map { i, body in
            let due = start + UInt64(i) * interval
            let now = DispatchTime.now().uptimeNanoseconds
            if due > now { usleep(UInt32((due - now) / 1000)) }
            let sent = DispatchTime.now().uptimeNanoseconds
            return ServeBench.post(fd, body) ? (sent, DispatchTime.now().uptimeNanoseconds) : nil
        }
    }

    /// A fresh SQLite store holding `count` notifications (stored without intake: a small
    /// body each) owed to target `t0`.
    static func filledBacklog(_ count: Int, name: String) throws -> String {
        let path = dataDirectory + "/relay-\(name).db"
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        let store = try Store(path: path)
        var t0 = ForwardTarget(name: "t0", url: URL(string: "http://127.0.0.1:1/in0")!, secretFile: "-")
        t0.maxAge = ForwardTarget.defaultMaxAge
        let now = DateText.nowMillis()
        try store.write {
            for i in 0..<count {
                let uuid = String(format: "bench-%08d", i)
                let event = NotificationEvent(notificationUUID: uuid, version: 2, type: .didRenew, subtype: nil, signedDate: now,
                                              originalTransactionId: String(90_000_000 + i % 20_000), transactionId: nil,
                                              productId: "app.monthly", environment: "Production")
                let body = Data(#"{"signedPayload":"bench.\#(uuid).body"}"#.utf8)
                try store.notifications.insert(StoredNotification(event: event, receivedDate: now, bodySHA256: uuid, body: body, source: "bench",
                                                                bundleId: ScenarioBuilder.demoBundleId))
                try store.outbox.owe(event, bundleId: ScenarioBuilder.demoBundleId, to: [t0], now: now)
            }
        }
        // Spread, as a deliverer spreads them while its target is down (a backlog left owed
        // by no deliverer at all is spread a batch per claim as it drains).
        while try store.outbox.spread(limit: 10_000) > 0 {}
        return path
    }

    /// What `spawnMeasured` saw: the exit status, the largest resident set of the process or
    /// any one descendant, and the most the process and its descendants held at once, both
    /// as sampled; in KiB. (Not wait4's maxrss: Linux carries the old image's high-water mark across exec, and a
    /// child spawned by posix_spawn runs in the spawner's memory until it execs, so that figure
    /// counts the bench's own.)
    struct Measured {
        var status: Int32
        var largestKB: Int
        var peakTreeKB: Int
    }

    /// The resident memory of `root` and every process under it, in KiB, from /proc.
    static func treeResidentKB(_ root: pid_t) -> (total: Int, largest: Int) {
        var parent: [pid_t: pid_t] = [:], rss: [pid_t: Int] = [:]
        let page = Int(sysconf(Int32(_SC_PAGESIZE))) / 1024
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = pid_t(entry),
                  let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { continue }
            // After the command's closing parenthesis: state, then the parent's id.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 1, let ppid = pid_t(fields[1]) else { continue }
            parent[pid] = ppid
            if let statm = try? String(contentsOfFile: "/proc/\(entry)/statm", encoding: .utf8) {
                rss[pid] = (Int(statm.split(separator: " ").dropFirst().first ?? "") ?? 0) * page
            }
        }
        func under(_ pid: pid_t) -> Bool {
            var p = pid, hops = 0
            while p > 1 && hops < 64 {
                if p == root { return true }
                p = parent[p] ?? 0
                hops += 1
            }
            return false
        }
        let tree = rss.filter { under($0.key) }.values
        return (tree.reduce(0, +), tree.max() ?? 0)
    }

    /// Runs `binary args` to its end, sampling its process tree's memory meanwhile.
    static func spawnMeasured(_ binary: String, _ args: [String]) -> Measured {
        var pid: pid_t = 0
        let argv: [UnsafeMutablePointer<CChar>?] = ([binary] + args).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, dataDirectory + "/forward.log", O_WRONLY | O_CREAT | O_APPEND, 0o644)
        guard posix_spawn(&pid, binary, &actions, nil, argv, environ) == 0 else { return Measured(status: -1, largestKB: 0, peakTreeKB: 0) }
        let child = pid
        let sampling = Sampler()
        let sampler = Thread {
            while !sampling.stopped {
                let resident = treeResidentKB(child)
                sampling.note(resident.total, largest: resident.largest)
                usleep(200_000)
            }
        }
        sampler.start()
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        sampling.stop()
        return Measured(status: (status >> 8) & 0xff, largestKB: sampling.largestOne, peakTreeKB: sampling.peak)
    }

    /// The largest sample, shared between the sampling thread and the one waiting.
    final class Sampler: @unchecked Sendable {
        private let lock = NSLock()
        private var largest = 0, one = 0, done = false
        var stopped: Bool { lock.withLock { done } }
        var peak: Int { lock.withLock { largest } }
        var largestOne: Int { lock.withLock { one } }
        func note(_ kb: Int, largest single: Int) {
            lock.withLock {
                largest = max(largest, kb)
                one = max(one, single)
            }
        }
        func stop() { lock.withLock { done = true } }
    }
}
