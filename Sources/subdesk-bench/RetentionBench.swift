import Foundation
import SubscriptionCore
import SubdeskScenarios

/// The real-time retention responder through `subdesk serve`, on the generated store of
/// `--retention-subscribers` subscribers (1M by default): one app whose rules read the
/// subscriber's state from the store (state, tenure, offer history, auto-renew) and answer
/// with each of Apple's kinds (a message, an alternate product, a promotional offer signed
/// with the app's offer key). Requests are signed by the test CA for random subscriptions
/// of the store, with their stored product; each is timed from its first byte sent to its
/// whole answer, sequential and from 16 clients, alternating which goes first round by round.
/// Every answer is read: how many were each kind, how many `{}` (Apple falls back: fast,
/// but no answer).
enum RetentionBench {
    /// Which rule answers what on the generated store (first match wins): its subscriptions
    /// are every status, about a fifth began with a free trial, none has a price increase.
    static let rules = """
    # subdesk-bench: rules over the generated store, reading each subscriber's state
    rule rescue: state=billing_retry,grace -> offer=RESCUE50 message=m-rescue
    rule refunded: state=revoked -> message=m-sorry
    rule first-offer: had_offer=yes auto_renew=on -> offer=FIRST-RENEWAL message=m-first
    rule to-yearly: product=app.monthly min_tenure_days=240 auto_renew=on -> switch_to=app.yearly billing_plan=BILLED_UPFRONT message=m-yearly
    rule premium-down: product=app.premium.monthly state=active max_tenure_days=300 -> switch_to=app.monthly message=m-downgrade
    rule lapsed: state=expired price_increase=none -> offer=WINBACK message=m-winback
    rule english: locale=en -> message=m-stay

    """
    static let locales = ["en-US", "en-US", "en-GB", "en-US", "de-DE", "fr-FR", "en-AU", "ja-JP"]
    static let sequentialRequests = 1_000
    static let concurrentRequests = 3_200
    static let clients = 16

    /// What a run's answers were, by kind (the JSON field answered, `{}` for a fallback).
    final class Kinds: @unchecked Sendable {
        let lock = NSLock()
        var counts: [String: Int] = [:]

        /// Notes the kind of `output` (the CGI's whole answer); whether it was a 200.
        func note(_ output: [UInt8]?) -> Bool {
            let text = output.map { String(decoding: $0, as: UTF8.self) } ?? ""
            let ok = text.hasPrefix("Status: 200")
            let body = text.components(separatedBy: "\r\n\r\n").dropFirst().joined(separator: "\r\n\r\n")
            let fields = (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any]
            let kind = !ok ? "refused or failed" : fields.map { $0.isEmpty ? "fallback {}" : $0.keys.sorted().joined(separator: "+") } ?? "not JSON"
            lock.withLock { counts[kind, default: 0] += 1 }
            return ok
        }

        var summary: String {
            lock.withLock { counts.sorted { $0.value > $1.value }.map { "\($0.key) \($0.value)" }.joined(separator: ", ") }
        }
    }

    /// The configuration serve reads: one app, its offer key (the test CA's leaf key, kept
    /// 0600 as a key file is), its rules.
    static func configuration() throws -> String {
        let key = dataDirectory + "/retention-offer-key.p8", rulesFile = dataDirectory + "/retention.rules"
        try? FileManager.default.removeItem(atPath: key)
        try FileManager.default.copyItem(atPath: sample.testCADirectory + "/leaf-key.pem", toPath: key)
        chmod(key, 0o600)
        try rules.write(toFile: rulesFile, atomically: true, encoding: .utf8)
        let path = dataDirectory + "/retention.conf"
        try """
        [key offers]
        issuer_id = bench-issuer
        key_id = BENCHOFFER
        key_file = \(key)
        [app bench]
        bundle_id = \(ScenarioBuilder.demoBundleId)
        app_apple_id = \(ScenarioBuilder.demoAppAppleId)
        offer_key = offers
        retention_rules = \(rulesFile)

        """.write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, 0o600)
        return path
    }

    /// Random subscriptions of the store (of `scale` generated ones): original transaction
    /// id, stored product and environment, read once before serve starts.
    static func pool(_ store: Store, scale: Int, count: Int) throws -> [(otid: String, product: String, environment: String)] {
        var rng = SystemRandomNumberGenerator()
        return try (0..<count).compactMap { _ in
            let otid = StoreGenerator.ids(Int.random(in: 0..<scale, using: &rng)).originalTransactionId
            return try store.subscriptions.find(originalTransactionId: otid).map { (otid, $0.state.productId, $0.state.environment) }
        }
    }

    /// `count` signed requests, signed now, for subscriptions drawn from `pool`.
    static func requests(_ count: Int, from pool: [(otid: String, product: String, environment: String)], signer: JWSSigner) throws -> [Data] {
        try (0..<count).map { _ in
            let pick = pool.randomElement()!
            let payload: [String: Any] = ["originalTransactionId": pick.otid, "appAppleId": ScenarioBuilder.demoAppAppleId,
                                          "productId": pick.product, "userLocale": locales.randomElement()!,
                                          "requestIdentifier": UUID().uuidString.lowercased(), "environment": pick.environment,
                                          "signedDate": DateText.nowMillis()]
            let jws = try signer.sign(payload: try JSONSerialization.data(withJSONObject: payload))
            return try JSONSerialization.data(withJSONObject: ["signedPayload": jws])
        }
    }

    /// The path as a web server passes it: Apple's real-time URL ends in `/retention`.
    static let params = [("SCRIPT_NAME", "/appstore"), ("DOCUMENT_URI", "/appstore/retention")]

    /// The engines' stores at `scale`: the generated SQLite store, and its PostgreSQL copy.
    static func stores(scale: Int, postgres: String?) throws -> [(engine: String, location: String, store: Store)] {
        let path = dataDirectory + "/generated-\(scale).db"
        if !FileManager.default.fileExists(atPath: path) {
            log("  generating \(scale) subscribers into \(path) ...")
            let summary = try StoreGenerator(subscribers: scale).generate(into: try Store(path: path))
            record(Figure(section: "retention", what: "generate \(scale) subscribers, s", value: fmt(summary.seconds, 1), target: "", met: nil,
                          numbers: ["seconds": summary.seconds]))
        }
        let sqlite = try Store(path: path)
        try sqlite.metrics.catchUpShares()
        var found: [(String, String, Store)] = [("SQLite", path, sqlite)]
        if let postgres {
            let pg = try postgresCopy(of: sqlite, scale: scale, postgres: postgres)
            found.append(("PostgreSQL", postgres + (postgres.contains("?") ? "&" : "?") + "schema=bench_\(scale)", pg))
        }
        return found
    }

    static func run(binary: String, postgres: String?) throws {
        let scale = options.retentionSubscribers
        log("== the real-time retention responder through serve, \(scale) subscribers, \(binary)")
        let config = try configuration()
        let signer = try sample.signer()
        for (engine, location, store) in try stores(scale: scale, postgres: postgres) {
            if engine == "SQLite" { try readThrough(location) }
            let picks = try pool(store, scale: scale, count: 20_000)
            guard picks.count > 1_000 else {
                log("subdesk-bench: only \(picks.count) of 20,000 random subscriptions found in the \(engine) store")
                exit(1)
            }
            let socket = dataDirectory + "/serve.sock"
            var pid: pid_t = 0
            // Serve listens at once and builds its engine (the rules, checked against the store's
            // subscription groups) before it answers: timed to the first answer.
            var first: [UInt8]?
            let started = try seconds {
                pid = try ServeBench.startServe(binary: binary, store: location, socket: socket, extra: ["--config", config], policy: [], wait: 300)
                let fd = try ServeBench.connectUnix(socket)
                defer { close(fd) }
                first = ServeBench.exchange(fd, try requests(1, from: picks, signer: signer)[0], params: params)
            }
            defer {
                kill(pid, SIGTERM)
                var status: Int32 = 0
                waitpid(pid, &status, 0)
            }
            guard Kinds().note(first) else {
                log("subdesk-bench: serve did not answer the first retention request (see \(dataDirectory)/serve.log)")
                exit(1)
            }
            record(Figure(section: "retention", what: "\(engine), serve start to its first retention answer, s", value: fmt(started, 2),
                          target: "", met: nil, numbers: ["seconds": started, "scale": Double(scale)]))
            let kinds = Kinds()
            // New connections for each run, made before its clock starts: serve closes a kept
            // connection idle for 15 s (a web server reconnects), as those the sequential run leaves are.
            func timed(_ bodies: [Data], clients: Int, tally: Kinds) throws -> ServeBench.Run {
                let connections = try (0..<clients).map { _ in try ServeBench.connectUnix(socket) }
                defer { connections.forEach { close($0) } }
                return ServeBench.drive(bodies.count, clients: clients) { client, i in
                    tally.note(ServeBench.exchange(connections[client], bodies[i], params: params))
                }
            }
            // A warm-up, not counted: serve's first requests open its connections and load its code.
            _ = try timed(try requests(300, from: picks, signer: signer), clients: clients, tally: Kinds())
            var runs: [Int: [ServeBench.Run]] = [:]
            var load: [Double] = []
            for round in 0..<options.runs {
                load.append(loadAverage())
                for n in round % 2 == 0 ? [1, clients] : [clients, 1] {
                    let bodies = try requests(n == 1 ? sequentialRequests : concurrentRequests, from: picks, signer: signer)
                    runs[n, default: []].append(try timed(bodies, clients: n, tally: kinds))
                }
            }
            load.append(loadAverage())
            let loadText = "load \(fmt(load.min() ?? .nan, 1))-\(fmt(load.max() ?? .nan, 1))"
            for n in [1, clients] {
                let rounds = runs[n]!
                let p50 = Spread(rounds.map { percentile($0.times, 0.5) }), p99 = Spread(rounds.map { percentile($0.times, 0.99) })
                let most = Spread(rounds.map { $0.times.max() ?? .nan }), rate = Spread(rounds.map(\.perSecond))
                let label = n == 1 ? "sequential" : "\(n) clients"
                record(Figure(section: "retention", what: "\(engine) at \(scale), \(label): p50 / p99 / max ms, answers/s (median of \(rounds.count))",
                              value: "\(fmt(p50.median, 2)) / \(fmt(p99.median, 2)) / \(fmt(most.median, 1)), \(fmt(rate.median, 0))/s",
                              target: "p99 < 50 ms (\(loadText))", met: p99.median < 50,
                              numbers: ["p50": p50.median, "p99": p99.median, "p99Min": p99.min, "p99Max": p99.max, "max": most.median,
                                        "perSecond": rate.median, "clients": Double(n), "scale": Double(scale),
                                        "loadMin": load.min() ?? .nan, "loadMax": load.max() ?? .nan]))
                log("    \(label) by round: p99 " + rounds.map { fmt(percentile($0.times, 0.99), 2) }.joined(separator: ", ")
                    + "; p50 " + rounds.map { fmt(percentile($0.times, 0.5), 2) }.joined(separator: ", "))
            }
            log("    load average at each round's start and at the end: " + load.map { fmt($0, 2) }.joined(separator: ", "))
            record(Figure(section: "retention", what: "\(engine): the answers, by kind", value: kinds.summary, target: "", met: nil))
        }
    }
}
