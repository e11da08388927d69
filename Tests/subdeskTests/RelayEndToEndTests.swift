import Foundation
import XCTest
import FakeApple
@testable import SubscriptionCore
@testable import SubdeskScenarios
import SubdeskTestKit

/// The relay as it runs: bodies through `serve` (and `ingest`), deliveries by `serve` itself
/// and by `subdesk forward run` processes, to a real HTTP target that records what it got.
extension ServeTests {
    static let relaySecret = "relay-shared-secret"

    /// A config naming one target at `server`, its secret in a 0600 file.
    func relayConfig(_ server: FakeAppleServer, timeout: Int = 5) throws -> String {
        let secret = dir + "/forward-secret"
        FileManager.default.createFile(atPath: secret, contents: Data((Self.relaySecret + "\n").utf8), attributes: [.posixPermissions: 0o600])
        let config = dir + "/relay.conf"
        try """
            [forward backend]
            url = \(server.baseURL.absoluteString)/in
            secret_file = \(secret)
            timeout = \(timeout)

            """.write(toFile: config, atomically: true, encoding: .utf8)
        return config
    }

    /// The outbox as the store has it: each notification's subscription and place.
    func outbox(_ db: String) throws -> [(uuid: String, otid: String, id: Int)] {
        try engineQuery(db, "SELECT notification_uuid, COALESCE(original_transaction_id, ''), id FROM forward_outbox ORDER BY id")
            .split(separator: "\n").map { line in
                let cells = line.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
                return (cells[0], cells[1], Int(cells[2]) ?? 0)
            }
    }

    /// Waits until `server` has had a POST for each of `uuids` (at most `seconds`).
    func waitForDeliveries(_ server: FakeAppleServer, of uuids: Set<String>, seconds: TimeInterval = 90) {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            let got = Set(server.requests("POST", "/in").compactMap { $0.headers["subdesk-delivery"]?.split(separator: "/").first.map(String.init) })
            if uuids.isSubset(of: got) { return }
            Thread.sleep(forTimeInterval: 0.1)
        }
    }

    /// For each subscription, the deliveries arrived in the order the store owed them.
    func assertOrderPerSubscription(_ requests: [FakeAppleServer.Request], outbox: [(uuid: String, otid: String, id: Int)],
                                    file: StaticString = #filePath, line: UInt = #line) {
        let place = Dictionary(outbox.map { ($0.uuid, ($0.otid, $0.id)) }, uniquingKeysWith: { a, _ in a })
        var last: [String: Int] = [:]
        for request in requests {
            guard let uuid = request.headers["subdesk-delivery"]?.split(separator: "/").first.map(String.init),
                  let (otid, id) = place[uuid], !otid.isEmpty else { continue }
            XCTAssertGreaterThanOrEqual(id, last[otid] ?? 0, "subscription \(otid): delivery \(id) after \(last[otid] ?? 0)", file: file, line: line)
            last[otid] = max(last[otid] ?? 0, id)
        }
    }

    /// A burst through serve, a healthy target: every stored notification delivered once,
    /// signed, in order per subscription; the refused ones never.
    func testServeRelaysEveryStoredNotificationOnceInOrderPerSubscription() throws {
        let target = try FakeAppleServer()
        defer { target.stop() }
        target.route("POST", "/in", .init(status: 200))
        let db = try makeStore()
        try startServe(db, Self.policyFlags + ["--config", try relayConfig(target)])
        // Several notifications of each subscription (the scenarios' instances renew), and
        // two forged bodies among them.
        var bodies = try Self.signedBodies(160, firstInstance: 41_000).map(\.body)
        var forged = bodies[3]
        forged[forged.count - 10] ^= 1
        bodies.insert(forged, at: 50)
        bodies.insert(Data(#"{"signedPayload":"not.a.jws"}"#.utf8), at: 90)
        let answers = burst(bodies, clients: 6)
        XCTAssertEqual(answers.filter { $0?.status == 200 }.count, bodies.count - 2)
        let stored = try storedUUIDs(db)
        waitForDeliveries(target, of: stored)
        let requests = target.requests("POST", "/in")
        let delivered = requests.compactMap { $0.headers["subdesk-delivery"] }
        XCTAssertEqual(Set(delivered), Set(stored.map { $0 + "/backend" }), "each stored notification, and nothing else")
        XCTAssertEqual(delivered.count, Set(delivered).count, "each once, the target being healthy")
        let signature = DeliverySignature(secret: Data(Self.relaySecret.utf8))
        XCTAssertTrue(requests.allSatisfy { signature.verifies($0.headers["subdesk-signature"] ?? "", body: $0.body) })
        assertOrderPerSubscription(requests, outbox: try outbox(db))
        XCTAssertEqual(try run(["forward", "status", "--json", "--db", db, "--config", dir + "/relay.conf"]).status, 0)
    }

    /// `forward run` killed mid-burst (kill -9), then started again: every notification
    /// stored is delivered at least once; the duplicates are few and carry one id each.
    func testAKilledDelivererLosesNothingAndItsDuplicatesAreFew() throws {
        let target = try FakeAppleServer()
        defer { target.stop() }
        // A slow target: the kill lands while deliveries are in flight.
        target.route("POST", "/in", .init(status: 200, delay: 0.05))
        let db = try makeStore()
        let config = try relayConfig(target, timeout: 2)
        let bodies = try Self.signedBodies(120, firstInstance: 43_000).map(\.body)
        let file = dir + "/bodies.ndjson"
        try Data(bodies.map { String(decoding: $0, as: UTF8.self) }.joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: file))
        XCTAssertEqual(try run(["ingest", file, "--db", db, "--config", config] + Self.policyFlags).status, 0)
        let stored = try storedUUIDs(db)
        XCTAssertEqual(stored.count, bodies.count)

        var rounds = 0
        // Killed once some, not all, were sent (up to a few tries: a deliverer that drained
        // before the kill landed is no kill mid-send).
        while rounds < 5 {
            rounds += 1
            let deliverer = try startForward(db, config)
            let deadline = Date().addingTimeInterval(30)
            while target.requests("POST", "/in").count < 10 * rounds && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
            kill(deliverer.processIdentifier, SIGKILL)
            deliverer.waitUntilExit()
            if Set(target.requests("POST", "/in").compactMap { $0.headers["subdesk-delivery"] }).count < stored.count { break }
        }
        // Started again: what the killed one claimed waits for its claim (timeout + 15 s) to end.
        let again = try startForward(db, config)
        defer { again.terminate(); again.waitUntilExit() }
        waitForDeliveries(target, of: stored, seconds: 120)
        let delivered = target.requests("POST", "/in").compactMap { $0.headers["subdesk-delivery"] }
        XCTAssertEqual(Set(delivered), Set(stored.map { $0 + "/backend" }), "every stored notification delivered at least once")
        let duplicates = delivered.count - Set(delivered).count
        // At most what one deliverer holds claimed at a kill: a batch (64) per kill.
        XCTAssertLessThanOrEqual(duplicates, 64 * rounds, "duplicates: \(duplicates) over \(rounds) kills")
        print("relay kill -9: \(rounds) kill(s), \(delivered.count) deliveries of \(stored.count) notifications, \(duplicates) duplicates")
    }

    /// Two deliverers on one PostgreSQL store: no delivery is sent by both at once.
    func testTwoDeliverersOnPostgreSQLNeverSendOneDeliveryAtOnce() throws {
        _ = try TestEngine.requirePostgres()
        let target = try FakeAppleServer()
        defer { target.stop() }
        let spans = Shared([(id: String, start: Double, end: Double)]())
        target.route("POST", "/in") { request in
            let start = Date().timeIntervalSince1970
            Thread.sleep(forTimeInterval: 0.03)
            let id = request.headers["subdesk-delivery"] ?? "?"
            spans.update { $0.append((id, start, Date().timeIntervalSince1970)) }
            return .init(status: 200)
        }
        let db = try makeStore()
        let config = try relayConfig(target)
        let bodies = try Self.signedBodies(150, firstInstance: 45_000).map(\.body)
        let file = dir + "/bodies.ndjson"
        try Data(bodies.map { String(decoding: $0, as: UTF8.self) }.joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: file))
        XCTAssertEqual(try run(["ingest", file, "--db", db, "--config", config] + Self.policyFlags).status, 0)
        let stored = try storedUUIDs(db)
        let first = try startForward(db, config), second = try startForward(db, config)
        defer {
            for p in [first, second] { p.terminate(); p.waitUntilExit() }
        }
        // Until each delivery's send has ended (the server records a request as it arrives,
        // the span once its answer is on the way).
        let wanted = Set(stored.map { $0 + "/backend" })
        let deadline = Date().addingTimeInterval(90)
        while Date() < deadline && !wanted.isSubset(of: Set(spans.current.map(\.id))) { Thread.sleep(forTimeInterval: 0.1) }
        var byId: [String: [(start: Double, end: Double)]] = [:]
        spans.update { for s in $0 { byId[s.id, default: []].append((s.start, s.end)) } }
        XCTAssertEqual(Set(byId.keys), Set(stored.map { $0 + "/backend" }))
        for (id, sends) in byId where sends.count > 1 {
            let sorted = sends.sorted { $0.start < $1.start }
            for (a, b) in zip(sorted, sorted.dropFirst()) {
                XCTAssertLessThanOrEqual(a.end, b.start, "\(id) sent by both deliverers at once")
            }
        }
    }

    func startForward(_ db: String, _ config: String) throws -> Process {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Self.binary)
        p.arguments = ["forward", "run", "--db", db, "--config", config]
        p.environment = environment()
        let log = FileHandle(forWritingAtPath: dir + "/forward.log") ?? {
            FileManager.default.createFile(atPath: dir + "/forward.log", contents: nil)
            return FileHandle(forWritingAtPath: dir + "/forward.log")!
        }()
        log.seekToEndOfFile()
        p.standardOutput = log
        p.standardError = log
        try p.run()
        return p
    }
}

extension ServeTests {
    /// replay and retry owe deliveries again with their ids, audited; test sends one marked
    /// delivery and stores nothing.
    func testReplayRetryAndTestThroughTheCommandLine() throws {
        let target = try FakeAppleServer()
        defer { target.stop() }
        target.route("POST", "/in", .init(status: 200))
        target.route("POST", "/renewals", .init(status: 400, body: Data("no".utf8)))
        let db = try makeStore()
        let config = try relayConfig(target)
        try (try String(contentsOfFile: config, encoding: .utf8) + """
            [forward renewals]
            url = \(target.baseURL.absoluteString)/renewals
            secret_file = \(dir!)/forward-secret
            types = DID_RENEW

            """).write(toFile: config, atomically: true, encoding: .utf8)
        let bodies = try Self.signedBodies(12, firstInstance: 47_000)
        let file = dir + "/bodies.ndjson"
        try Data(bodies.map { String(decoding: $0.body, as: UTF8.self) }.joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: file))
        let common = ["--db", db, "--config", config]
        XCTAssertEqual(try run(["ingest", file] + common + Self.policyFlags).status, 0)
        let renewals = try engineQuery(db, "SELECT COUNT(*) FROM notifications WHERE type = 'DID_RENEW'")
        // Refused renewals are tried three times, then dead (one at a time per subscription:
        // each round sends the first pending one of each, and their waits are cut short).
        // (What intake owed and no deliverer has spread yet is pending too.)
        let pending = "SELECT (SELECT COUNT(*) FROM forward_outbox WHERE state = 'pending') + (SELECT COUNT(*) FROM forward_owed)"
        for _ in 0..<30 where try engineQuery(db, pending) != "0" {
            _ = try run(["forward", "run", "--once"] + common)
            XCTAssertEqual(try engineQuery(db, "UPDATE forward_outbox SET next_ms = 0 WHERE state = 'pending'"), "")
        }
        let status = try run(["forward", "status", "--json"] + common)
        let rows = try XCTUnwrap((try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])?["targets"] as? [[String: Any]])
        XCTAssertEqual(rows.map { $0["target"] as? String }, ["backend", "renewals"])
        XCTAssertEqual(rows.map { $0["pending"] as? Int }, [0, 0])
        XCTAssertEqual(rows[1]["dead"] as? Int, Int(renewals))
        XCTAssertEqual(target.requests("POST", "/in").count, bodies.count)

        // One notification again, to both targets that take it: the same delivery id, attempt 2.
        let uuid = bodies[0].uuid
        let replayed = try run(["forward", "replay", "--uuid", uuid, "--target", "backend", "--reason", "backend lost its queue"] + common)
        XCTAssertEqual(replayed.status, 0, replayed.stderr)
        XCTAssertTrue(replayed.stdout.contains("1 deliveries owed again (backend 1); audited"), replayed.stdout)
        XCTAssertEqual(try run(["forward", "run", "--once"] + common).status, 0)
        let again = target.requests("POST", "/in").filter { $0.headers["subdesk-delivery"] == uuid + "/backend" }
        XCTAssertEqual(again.map { $0.headers["subdesk-attempt"] }, ["1", "2"])
        XCTAssertEqual(again[0].body, again[1].body)
        // A window, every target: each takes what its types take.
        let window = try run(["forward", "replay", "--since", "-1h", "--json"] + common)
        let owed = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(window.stdout.utf8)) as? [String: Any])
        XCTAssertEqual(owed["owedAgain"] as? [String: Int], ["backend": bodies.count, "renewals": Int(renewals)!])
        // The dead owed again (after the window made them pending and they died again).
        for _ in 0..<30 where try engineQuery(db, pending) != "0" {
            _ = try run(["forward", "run", "--once"] + common)
            XCTAssertEqual(try engineQuery(db, "UPDATE forward_outbox SET next_ms = 0 WHERE state = 'pending'"), "")
        }
        XCTAssertEqual(try engineQuery(db, "SELECT COUNT(*) FROM forward_outbox WHERE state = 'dead'"), renewals)
        let retried = try run(["forward", "retry", "--dead", "--target", "renewals"] + common)
        XCTAssertEqual(retried.status, 0, retried.stderr)
        XCTAssertEqual(try engineQuery(db, "SELECT COUNT(*) FROM forward_outbox WHERE state = 'dead'"), "0")
        let audit = try run(["audit", "--json"] + common).stdout
        XCTAssertTrue(audit.contains("forward_replay") && audit.contains("forward_retry") && audit.contains("backend lost its queue"), audit)

        // Mistakes are refused before anything is written.
        XCTAssertEqual(try run(["forward", "replay"] + common).status, 2)
        XCTAssertEqual(try run(["forward", "replay", "--uuid", "nope"] + common).status, 2)
        XCTAssertEqual(try run(["forward", "replay", "--since", "-1h", "--until", "-2h"] + common).status, 2)
        XCTAssertEqual(try run(["forward", "retry"] + common).status, 2)
        XCTAssertEqual(try run(["forward", "run", "--target", "nope"] + common).status, 2)

        // A test delivery: marked, signed, nothing stored.
        let before = try engineQuery(db, "SELECT COUNT(*) FROM forward_outbox")
        let tested = try run(["forward", "test", "backend"] + common)
        XCTAssertEqual(tested.status, 0, tested.stderr)
        XCTAssertTrue(tested.stdout.contains("backend (\(target.baseURL.absoluteString)/in): answered 200"), tested.stdout)
        let marked = try XCTUnwrap(target.requests("POST", "/in").last)
        XCTAssertEqual(marked.headers["subdesk-test"], "true")
        XCTAssertEqual(marked.headers["subdesk-notification-type"], "TEST")
        XCTAssertTrue(DeliverySignature(secret: Data(Self.relaySecret.utf8)).verifies(marked.headers["subdesk-signature"] ?? "", body: marked.body))
        XCTAssertEqual(try engineQuery(db, "SELECT COUNT(*) FROM forward_outbox"), before)
        XCTAssertEqual(try run(["forward", "test", "renewals"] + common).status, 1, "a 400 is no success")
    }
}

extension ServeTests {
    /// The other way round: a backend that keeps Apple's URL and posts each body on to
    /// subdesk, in whatever order and as often as it happens to, gets the store that
    /// Apple's own order would have made.
    func testBodiesPostedOnShuffledAndTwiceMakeTheStoreAppleOrderMakes() throws {
        let bodies = try Self.signedBodies(90, firstInstance: 49_000).map(\.body)
        func ingest(_ list: [Data], into db: String) throws {
            let file = dir + "/posted-\(UUID().uuidString).ndjson"
            try Data(list.map { String(decoding: $0, as: UTF8.self) }.joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: file))
            let result = try run(["ingest", file, "--db", db] + Self.policyFlags)
            XCTAssertEqual(result.status, 0, result.stderr)
        }
        let inOrder = try makeStore("in-order.db"), posted = try makeStore("posted-on.db")
        try ingest(bodies, into: inOrder)
        // Each body twice, the whole shuffled the same way every run.
        var random = StoreGenerator.Random(state: 20261129)
        var shuffled = bodies + bodies
        shuffled.shuffle(using: &random)
        // In small posts, as a backend relaying as they come would.
        for start in stride(from: 0, to: shuffled.count, by: 15) {
            try ingest(Array(shuffled[start..<min(start + 15, shuffled.count)]), into: posted)
        }
        XCTAssertEqual(try storedUUIDs(inOrder), try storedUUIDs(posted))
        let a = try states(inOrder), b = try states(posted)
        XCTAssertEqual(a.count, b.count)
        for (otid, state) in a { XCTAssertEqual(b[otid], state, otid) }
        let counts = ["counts", "--json", "--from", DateText.format(DateText.nowMillis() - 400 * 86_400_000, "yyyy-MM-dd", zone: TimeZone(identifier: "UTC")!)]
        XCTAssertEqual(try run(counts + ["--db", inOrder]).stdout, try run(counts + ["--db", posted]).stdout)
    }
}

extension ServeTests {
    /// Bodies through the CGI (`ingest --cgi`, a process each, as the web server runs it),
    /// delivered by `forward run`: each once, and the refused one never.
    func testCGIBodiesAreRelayedByForwardRun() throws {
        let target = try FakeAppleServer()
        defer { target.stop() }
        target.route("POST", "/in", .init(status: 200))
        let db = try makeStore()
        let config = try relayConfig(target)
        var bodies = try Self.signedBodies(12, firstInstance: 51_000).map(\.body)
        var forged = bodies[0]
        forged[forged.count - 8] ^= 1
        bodies.append(forged)
        for body in bodies {
            let env = ["REQUEST_METHOD": "POST", "CONTENT_LENGTH": String(body.count), "GATEWAY_INTERFACE": "CGI/1.1"]
            _ = try run(["ingest", "--cgi", "--db", db, "--config", config] + Self.policyFlags, stdin: body, env: env)
        }
        let stored = try storedUUIDs(db)
        XCTAssertEqual(stored.count, bodies.count - 1)
        let ran = try run(["forward", "run", "--once", "--db", db, "--config", config])
        XCTAssertEqual(ran.status, 0, ran.stderr)
        XCTAssertTrue(ran.stdout.contains("backend: \(stored.count) delivered, 0 to try again, 0 dead"), ran.stdout)
        let delivered = target.requests("POST", "/in").compactMap { $0.headers["subdesk-delivery"] }
        XCTAssertEqual(delivered.sorted(), stored.map { $0 + "/backend" }.sorted())
    }

    /// serve killed (kill -9) in the middle of a burst while it relays, then started again:
    /// every body it answered 200 is delivered at least once.
    func testServeKilledMidBurstDeliversEverythingItAnswered() throws {
        let target = try FakeAppleServer()
        defer { target.stop() }
        target.route("POST", "/in", .init(status: 200, delay: 0.02))
        let db = try makeStore()
        let config = try relayConfig(target, timeout: 2)
        let server = try startServe(db, Self.policyFlags + ["--config", config])
        let signed = try Self.signedBodies(200, firstInstance: 53_000)
        let answers = burst(signed.map(\.body), clients: 8, killing: server, atAnswer: 80)
        let answered = Set(zip(answers, signed).filter { $0.0?.status == 200 }.map(\.1.uuid))
        XCTAssertGreaterThan(answered.count, 0)
        // Started again: it relays what the killed one owed and had not sent (its claims run out first).
        try startServe(db, Self.policyFlags + ["--config", config])
        waitForDeliveries(target, of: answered, seconds: 120)
        let delivered = Set(target.requests("POST", "/in").compactMap { $0.headers["subdesk-delivery"]?.split(separator: "/").first.map(String.init) })
        XCTAssertTrue(answered.isSubset(of: delivered), "answered 200, never delivered: \(answered.subtracting(delivered).prefix(5))")
        let all = target.requests("POST", "/in").count
        print("relay serve kill -9: \(answered.count) answered 200, \(delivered.count) delivered, \(all - delivered.count) duplicates")
    }
}
