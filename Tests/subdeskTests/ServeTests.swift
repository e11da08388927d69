import Foundation
import XCTest
import FastCGI
@testable import SubscriptionCore
@testable import SubdeskScenarios
import SubdeskTestKit

/// `subdesk serve` spoken to as a web server speaks to it (FastCGI on a unix socket):
/// the same answers and rows as `ingest --cgi`, concurrent clients, and an operator's
/// signals and kills.
final class ServeTests: SubdeskTestCase, RunsOnEveryEngine {
    static let policyFlags = HardeningTests.policyFlags
    var servers: [ServeProcess] = []

    override func tearDownWithError() throws {
        for server in servers { server.stop() }
        try super.tearDownWithError()
    }

    func makeStore(_ name: String = "store.db") throws -> String {
        let db = Store.testLocation(file: dir + "/" + name)
        XCTAssertEqual(try run(["init", "--db", db]).status, 0)
        return db
    }

    var socketPath: String { dir + "/serve.sock" }

    func environment(_ extra: [String: String] = [:]) -> [String: String] {
        var env = ProcessInfo.processInfo.environment
        env["XDG_DATA_HOME"] = dir + "/data"
        env["XDG_CONFIG_HOME"] = dir + "/config"
        env.removeValue(forKey: "SUBDESK_DB")
        env.removeValue(forKey: "SUBDESK_CONFIG")
        for (k, v) in extra { env[k] = v }
        return env
    }

    @discardableResult
    func startServe(_ db: String, _ extra: [String] = ServeTests.policyFlags, env: [String: String] = [:]) throws -> ServeProcess {
        let server = try ServeProcess(binary: Self.binary, arguments: ["--db", db] + extra, socket: socketPath,
                                      log: dir + "/serve-\(servers.count).log", environment: environment(env))
        servers.append(server)
        try server.waitUntilAnswering()
        return server
    }

    static func signedBodies(_ count: Int, firstInstance: Int) throws -> [(body: Data, uuid: String)] {
        let sample = SampleData(directory: repoRoot + "/sample-data")
        var instance = firstInstance
        return try ScenarioBuilder(signer: try sample.signer())
            .bodies(count: count, cycling: try sample.scenarios(), instance: &instance, anchor: DateText.nowMillis())
            .map { ($0, try WebServerTests.notificationUUID(of: $0)) }
    }

    func storedUUIDs(_ db: String) throws -> Set<String> {
        let text = try engineQuery(db, "SELECT notification_uuid FROM notifications")
        return Set(text.split(separator: "\n").map(String.init))
    }

    /// Posts each body on its own kept connection per client, `clients` at once; the
    /// answers in the order of `bodies` (nil where the connection ended first).
    /// `burst`, with serve killed (SIGKILL) as the `killAt`th answer comes back; returns once
    /// the killed serve has exited.
    func burst(_ bodies: [Data], clients: Int, killing server: ServeProcess, atAnswer killAt: Int) -> [FastCGITestClient.Answer?] {
        let answeredCount = Shared(0)
        let pid = server.process.processIdentifier
        let answers = burst(bodies, clients: clients) { _ in
            var count = 0
            answeredCount.update { $0 += 1; count = $0 }
            if count == killAt { kill(pid, SIGKILL) }
        }
        _ = server.waitForExit()
        return answers
    }

    func burst(_ bodies: [Data], clients: Int, onAnswer: @escaping @Sendable (Int) -> Void = { _ in }) -> [FastCGITestClient.Answer?] {
        let answers = Shared([FastCGITestClient.Answer?](repeating: nil, count: bodies.count))
        let next = Shared(0)
        let socket = socketPath
        // A thread per client: DispatchQueue.concurrentPerform runs only as many at once as
        // there are cores.
        let finished = DispatchGroup()
        for _ in 0..<clients {
            finished.enter()
            Thread.detachNewThread {
                defer { finished.leave() }
                var client = try? FastCGITestClient(socket: socket)
                while true {
                    var index = 0
                    next.update { index = $0; $0 += 1 }
                    guard index < bodies.count else { return }
                    if client == nil { client = try? FastCGITestClient(socket: socket) }
                    guard let c = client else { continue }
                    let answer = c.post(bodies[index])
                    if answer == nil { client = nil }
                    answers.update { $0[index] = answer }
                    onAnswer(index)
                }
            }
        }
        finished.wait()
        return answers.current
    }

    // MARK: The same answers and rows as the CGI

    /// The bad-input corpus, fresh signed bodies, a redelivery, and the requests that never
    /// reach intake (a GET, a CONTENT_LENGTH that is no length, a body cut short, one over the
    /// size limit): the same answer from `ingest --cgi` and from `serve`, byte for byte, and
    /// the same rows in the two stores.
    func testServeAnswersAndStoresExactlyAsTheCGI() throws {
        let cgiStore = try makeStore("cgi.db"), serveStore = try makeStore("serve.db")
        let corpus = Self.repoRoot + "/Fuzz/corpus/intake"
        var requests: [(name: String, body: Data, params: [(String, String)]?)] = []
        for name in try FileManager.default.contentsOfDirectory(atPath: corpus).sorted() {
            requests.append((name, try Data(contentsOf: URL(fileURLWithPath: corpus + "/" + name)), nil))
        }
        XCTAssertGreaterThan(requests.count, 40, "the bad-input corpus")
        let signed = try Self.signedBodies(12, firstInstance: 810_000)
        requests += signed.map { ("signed \($0.uuid)", $0.body, nil) }
        requests.append(("redelivered", signed[0].body, nil))
        requests.append(("GET", Data(), FastCGITestClient.params(length: nil, method: "GET")))
        requests.append(("not a length", Data("{}".utf8), FastCGITestClient.params(length: nil) + [("CONTENT_LENGTH", "12x")]))
        requests.append(("cut short", Data("{\"signedPayload\":".utf8), FastCGITestClient.params(length: 400)))
        requests.append(("over the limit", Data(repeating: UInt8(ascii: "{"), count: IntakePolicy().maxBodyBytes + 10), nil))
        requests.append(("quoting the size limit", HardeningTests.quotingTheSizeLimit, nil))

        let server = try startServe(serveStore)
        let client = try FastCGITestClient(socket: socketPath)
        for request in requests {
            let params = request.params ?? FastCGITestClient.params(length: request.body.count)
            var env: [String: String] = [:]
            for (k, v) in params { env[k] = v }
            let cgi = try run(["ingest", "--cgi", "--db", cgiStore] + Self.policyFlags, stdin: request.body, env: env)
            let answer = try XCTUnwrap(client.post(request.body, params: params), "\(request.name): no answer; \(server.log)")
            XCTAssertEqual(answer.stdout, cgi.stdout, request.name)
            XCTAssertEqual(answer.appStatus, UInt32(cgi.status), "\(request.name): the exit status as the application status")
            if request.name == "quoting the size limit" { XCTAssertTrue(answer.stdout.hasPrefix("Status: 400 Bad Request"), answer.stdout) }
        }
        for sql in ["SELECT notification_uuid, type, subtype, body_sha256, source FROM notifications ORDER BY notification_uuid",
                    "SELECT id, reason, body_sha256, length(body), body_bytes, times_seen, source FROM quarantine ORDER BY id",
                    "SELECT original_transaction_id, status, expires_ms FROM subscriptions ORDER BY 1",
                    "SELECT result, notification_uuid, source FROM intake_log ORDER BY id"] {
            XCTAssertEqual(try engineQuery(serveStore, sql), try engineQuery(cgiStore, sql), sql)
        }
        XCTAssertTrue(try storedUUIDs(serveStore).isSuperset(of: signed.map(\.uuid)))
    }

    // MARK: Concurrency

    func testFourAndSixteenConcurrentClientsAreAllAnswered200AndStored() throws {
        let db = try makeStore()
        try startServe(db)
        var instance = 820_000
        for clients in [4, 16] {
            let signed = try Self.signedBodies(clients * 8, firstInstance: instance)
            instance += 1000
            let answers = burst(signed.map(\.body), clients: clients)
            for (answer, body) in zip(answers, signed) {
                XCTAssertEqual(answer?.status, 200, "\(clients) clients, \(body.uuid): \(answer?.stdout ?? "no answer")")
                XCTAssertEqual(answer?.text, "stored \(body.uuid)")
            }
            XCTAssertTrue(try storedUUIDs(db).isSuperset(of: signed.map(\.uuid)), "\(clients) clients: every body stored")
        }
    }

    // MARK: An operator's process

    /// kill -9 in the middle of a burst: every body answered 200 is in the store, and serve
    /// starts again at once on the same socket path (the killed one's socket file is left).
    func testKillDuringABurstLosesNothingAnsweredAndRestartsOnTheSameSocket() throws {
        let db = try makeStore()
        let server = try startServe(db)
        let signed = try Self.signedBodies(240, firstInstance: 830_000)
        let answers = burst(signed.map(\.body), clients: 16, killing: server, atAnswer: 60)
        XCTAssertTrue(FileManager.default.fileExists(atPath: socketPath), "the killed process left its socket file")
        let stored = try storedUUIDs(db)
        var answered200 = 0
        for (answer, body) in zip(answers, signed) where answer?.status == 200 {
            answered200 += 1
            XCTAssertTrue(stored.contains(body.uuid), "\(body.uuid) was answered 200 but is not stored")
        }
        XCTAssertGreaterThanOrEqual(answered200, 59)
        XCTAssertLessThan(answered200, signed.count, "the kill came before the burst ended")

        try startServe(db)
        let again = burst(signed.map(\.body), clients: 4)
        XCTAssertTrue(again.allSatisfy { $0?.status == 200 }, "after the restart: \(again.compactMap { $0?.stdout }.filter { !$0.contains("200") }.prefix(3))")
        XCTAssertEqual(try storedUUIDs(db), Set(signed.map(\.uuid)))
    }

    /// SIGTERM while a request is half sent and a burst runs: the half-sent request is
    /// answered (and stored) once its body arrives, every answer is 200 and stored, nothing
    /// unanswered is stored, and the process exits 0 and removes its socket.
    func testSIGTERMAnswersTheRequestsInFlightThenExitsZero() throws {
        let db = try makeStore()
        let server = try startServe(db)
        let signed = try Self.signedBodies(161, firstInstance: 840_000)
        let slow = try FastCGITestClient(socket: socketPath)
        let slowBytes = FastCGITestClient.requestBytes(params: FastCGITestClient.params(length: signed[0].body.count), body: signed[0].body, keep: true)
        XCTAssertTrue(slow.send(Array(slowBytes.prefix(slowBytes.count / 2))))
        let rest = Array(signed.dropFirst())
        let answered = Shared(0)
        let answers = burst(rest.map(\.body), clients: 8) { _ in
            var count = 0
            answered.update { $0 += 1; count = $0 }
            if count == 40 { server.signal(SIGTERM) }
        }
        usleep(300_000)
        XCTAssertTrue(server.process.isRunning, "serve waits for the half-sent request")
        XCTAssertTrue(slow.send(Array(slowBytes.dropFirst(slowBytes.count / 2))))
        let slowAnswer = slow.readAnswer()
        XCTAssertEqual(slowAnswer?.text, "stored \(signed[0].uuid)", server.log)
        XCTAssertTrue(slow.isClosedByServer(), "the connection is closed after its answer while stopping")
        XCTAssertEqual(server.waitForExit(), 0, server.log)
        XCTAssertFalse(FileManager.default.fileExists(atPath: socketPath), "the socket file is removed on a clean stop")

        let stored = try storedUUIDs(db)
        XCTAssertTrue(stored.contains(signed[0].uuid))
        var answeredAfterStop = 0
        for (answer, body) in zip(answers, rest) {
            if let answer {
                XCTAssertEqual(answer.status, 200, answer.stdout)
                XCTAssertTrue(stored.contains(body.uuid), "\(body.uuid) answered but not stored")
                answeredAfterStop += 1
            } else {
                XCTAssertFalse(stored.contains(body.uuid), "\(body.uuid) stored without an answer")
            }
        }
        XCTAssertGreaterThanOrEqual(answeredAfterStop, 40)
        XCTAssertTrue(server.log.contains("stopped"), server.log)
    }

    /// SIGHUP re-reads the configuration: a root file changed in the config takes effect for
    /// the next request.
    func testSIGHUPWithAChangedRootFileTakesEffectForTheNextRequest() throws {
        let db = try makeStore()
        let other = dir + "/other-root.der"
        let made = try run(["-c", "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout '\(dir!)/k.pem' "
                                + "-outform DER -out '\(other)' -subj /CN=other-root -days 30 2>&1"], executable: "/bin/sh")
        XCTAssertEqual(made.status, 0, made.stdout)
        let config = dir + "/subdesk.conf"
        func configure(root: String) throws {
            try "db = \(db)\nroot_ca = \(root)\nbundle_id = \(ScenarioBuilder.demoBundleId)\napp_apple_id = \(ScenarioBuilder.demoAppAppleId)\n"
                .write(toFile: config, atomically: true, encoding: .utf8)
            chmod(config, 0o600)
        }
        try configure(root: other)
        let server = try startServe(db, [], env: ["SUBDESK_CONFIG": config])
        let signed = try Self.signedBodies(2, firstInstance: 850_000)
        let client = try FastCGITestClient(socket: socketPath)
        let refused = try XCTUnwrap(client.post(signed[0].body))
        XCTAssertEqual(refused.status, 400, refused.stdout)

        try configure(root: HardeningTests.root)
        server.signal(SIGHUP)
        let deadline = Date().addingTimeInterval(30)
        while !server.log.contains("reloaded") && Date() < deadline { usleep(20_000) }
        XCTAssertTrue(server.log.contains("reloaded"), server.log)
        // The kept connection goes on, and its next request meets the new root.
        let stored = try XCTUnwrap(client.post(signed[1].body))
        XCTAssertEqual(stored.text, "stored \(signed[1].uuid)", server.log)
    }

    /// PostgreSQL restarted under a running serve: the kept connections are broken, and the
    /// next request is answered 200 on new ones (not 503 until serve is restarted).
    func testAPostgreSQLRestartIsFollowedByNewConnections() throws {
        let uri = try TestEngine.requirePostgres()
        let host = try XCTUnwrap(URLComponents(string: uri)?.queryItems?.first(where: { $0.name == "host" })?.value,
                                 "the test cluster's URI names its socket folder (host=)")
        let db = try makeStore()
        let server = try startServe(db)
        let signed = try Self.signedBodies(2, firstInstance: 870_000)
        let client = try FastCGITestClient(socket: socketPath)
        XCTAssertEqual(client.post(signed[0].body)?.status, 200)
        // system(3), not Process: the restarted server outlives the script that started it.
        let restarted = system("'\(Self.repoRoot)/scripts/pg-cluster' restart '\(host)' > '\(dir!)/restart.log' 2>&1")
        XCTAssertEqual(restarted, 0, (try? String(contentsOfFile: dir + "/restart.log", encoding: .utf8)) ?? "")
        let after = client.post(signed[1].body)
        XCTAssertEqual(after?.text, "stored \(signed[1].uuid)", server.log)
    }

    /// A configuration file naming `db` and this test's serve socket; the environment that
    /// points the commands at it.
    func serveConfig(_ db: String, extra: String = "") throws -> [String: String] {
        let config = dir + "/subdesk.conf"
        try ("db = \(db)\nroot_ca = \(HardeningTests.root)\nbundle_id = \(ScenarioBuilder.demoBundleId)\nserve_socket = \(socketPath)\n" + extra)
            .write(toFile: config, atomically: true, encoding: .utf8)
        chmod(config, 0o600)
        return ["SUBDESK_CONFIG": config]
    }

    /// doctor and check ask the serve the configuration names (serve_socket): one that is
    /// stopped (SIGSTOP: it holds its socket but answers nothing) or gone is CRITICAL.
    func testDoctorAndCheckSeeAServeThatStoppedAnswering() throws {
        let db = try makeStore()
        let env = try serveConfig(db)
        let server = try startServe(db, [], env: env)
        let doctor = try run(["doctor"], env: env)
        XCTAssertTrue(doctor.stdout.contains("subdesk serve answers on unix:\(socketPath)"), doctor.stdout)
        let healthy = try run(["check", "--environment", "Sandbox"], env: env)
        XCTAssertFalse(healthy.stdout.contains("subdesk serve"), healthy.stdout)

        server.signal(SIGSTOP)
        let stalled = try run(["check", "--environment", "Sandbox"], env: env)
        XCTAssertEqual(stalled.status, 2, stalled.stdout)
        XCTAssertTrue(stalled.stdout.hasPrefix("SUBDESK CRITICAL - subdesk serve on unix:\(socketPath) did not answer within 2 s"), stalled.stdout)
        let stalledDoctor = try run(["doctor"], env: env)
        XCTAssertTrue(stalledDoctor.stdout.contains("did not answer within 2 s"), stalledDoctor.stdout)
        server.signal(SIGCONT)
        server.stop()
        let gone = try run(["check", "--environment", "Sandbox"], env: env)
        XCTAssertEqual(gone.status, 2, gone.stdout)
        XCTAssertTrue(gone.stdout.contains("does not take connections on unix:\(socketPath)"), gone.stdout)
    }

    /// A store locked by another writer past the busy timeout, and a body cut short, are
    /// answered 503; the store cannot count those, so serve does, and `subdesk metrics`
    /// (`subdesk_serve_unavailable_total`) and `subdesk check` read the counts from it.
    func testA503IsCountedByServeAndShownByMetricsAndCheck() throws {
        let db = try makeStore()
        let env = try serveConfig(db, extra: "busy_timeout_ms = 300\n")
        let server = try startServe(db, [], env: env)
        let signed = try Self.signedBodies(2, firstInstance: 890_000)
        let client = try FastCGITestClient(socket: socketPath)
        XCTAssertEqual(client.post(signed[0].body)?.status, 200, server.log)
        let before = try run(["metrics"], env: env)
        XCTAssertTrue(before.stdout.contains("subdesk_serve_unavailable_total{reason=\"locked\"} 0\n"), before.stdout)
        XCTAssertFalse(try run(["check", "--environment", "Sandbox"], env: env).stdout.contains("503"))

        let release = try Self.holdWriteLock(on: db)
        Thread.sleep(forTimeInterval: 0.5)
        let locked = client.post(signed[1].body)
        release()
        XCTAssertEqual(locked?.status, 503, server.log)
        // A body that ends before its CONTENT_LENGTH: a connection fault, also 503.
        let body = [UInt8](signed[1].body)
        XCTAssertTrue(client.send(FastCGITestClient.requestBytes(params: FastCGITestClient.params(length: body.count + 10),
                                                                  body: signed[1].body, keep: true)))
        XCTAssertEqual(client.readAnswer()?.status, 503)

        let after = try run(["metrics"], env: env)
        for (reason, count) in [("locked", 1), ("connection", 0), ("store_missing", 0), ("store_replaced", 0), ("incomplete_body", 1), ("other", 0)] {
            XCTAssertTrue(after.stdout.contains("subdesk_serve_unavailable_total{reason=\"\(reason)\"} \(count)\n"), after.stdout)
        }
        let check = try run(["check", "--environment", "Sandbox"], env: env)
        XCTAssertGreaterThanOrEqual(check.status, 1, check.stdout)
        XCTAssertTrue(check.stdout.contains("subdesk serve answered 2 requests 503 in the last hour (since it started: locked 1, incomplete_body 1)"),
                      check.stdout)
        XCTAssertEqual(client.post(signed[1].body)?.text, "stored \(signed[1].uuid)", "Apple's retry is stored")
    }

    /// A store restored over the running one's file: after SIGHUP the next body goes into
    /// the file now at the path, not the replaced one serve still had open.
    func testSIGHUPReopensAStoreReplacedAtItsPath() throws {
        let db = try makeStore()
        guard !PostgresLocation.isPostgres(db) else { throw XCTSkip("a file replaced at its path is a SQLite matter") }
        let server = try startServe(db)
        let signed = try Self.signedBodies(2, firstInstance: 880_500)
        let client = try FastCGITestClient(socket: socketPath)
        XCTAssertEqual(client.post(signed[0].body)?.status, 200)
        let replacement = try makeStore("replacement.db")
        XCTAssertEqual(rename(replacement, db), 0)
        for suffix in ["-wal", "-shm"] { unlink(db + suffix) }
        server.signal(SIGHUP)
        let deadline = Date().addingTimeInterval(30)
        while !server.log.contains("reloaded") && Date() < deadline { usleep(20_000) }
        XCTAssertEqual(client.post(signed[1].body)?.text, "stored \(signed[1].uuid)", server.log)
        XCTAssertEqual(try storedUUIDs(db), [signed[1].uuid], "the new file holds the body sent after the reload, and only it")
    }

    func testASecondServeOnTheSameSQLiteStoreRefuses() throws {
        let db = try makeStore()
        guard !PostgresLocation.isPostgres(db) else { throw XCTSkip("PostgreSQL writers run side by side: several serve processes may share a store") }
        try startServe(db)
        let second = try run(["serve", "--db", db, "--listen", "unix:" + dir + "/other.sock"] + Self.policyFlags)
        XCTAssertEqual(second.status, 2)
        XCTAssertTrue(second.stderr.contains("another subdesk serve already writes \(db)"), second.stderr)
    }

    /// A connection that sends what is not FastCGI, or stalls in the middle of a record, is
    /// closed; the other connections are served as before.
    func testMalformedAndStalledConnectionsCloseAlone() throws {
        let db = try makeStore()
        let server = try startServe(db, Self.policyFlags + ["--request-timeout", "1"])
        let good = try FastCGITestClient(socket: socketPath)
        let junk = try FastCGITestClient(socket: socketPath)
        let stalled = try FastCGITestClient(socket: socketPath)
        XCTAssertTrue(junk.send(Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8)))
        XCTAssertTrue(junk.isClosedByServer())
        XCTAssertTrue(stalled.send(Array(FastCGIRecord.beginRequest(requestId: 1, keepConnection: true).encoded().prefix(5))))
        let started = Date()
        XCTAssertTrue(stalled.isClosedByServer())
        XCTAssertLessThan(Date().timeIntervalSince(started), 30, "a stalled client is dropped within the request time limit")
        let signed = try Self.signedBodies(1, firstInstance: 860_000)
        XCTAssertEqual(good.post(signed[0].body)?.text, "stored \(signed[0].uuid)")
        XCTAssertTrue(server.log.contains("not FastCGI") && server.log.contains("did not arrive whole"), server.log)
    }

    /// A TCP listener takes connections only from the allowed addresses: one from
    /// elsewhere (here the loopback, not on the list) is closed unanswered and logged.
    func testATCPListenerRefusesPeersNotAllowed() throws {
        let db = try makeStore()
        let port = try WebServerTests.freeLoopbackPort()
        let server = try ServeProcess(binary: Self.binary, arguments: ["--db", db, "--allow-from", "192.0.2.1"] + Self.policyFlags,
                                      socket: socketPath, log: dir + "/serve-tcp.log", environment: environment(), listen: "127.0.0.1:\(port)")
        servers.append(server)
        let deadline = Date().addingTimeInterval(30)
        while !server.log.contains("answering FastCGI on 127.0.0.1:\(port)") && Date() < deadline { usleep(20_000) }
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        defer { close(fd) }
        var address = WebServerTests.loopback(port: port)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        XCTAssertEqual(connected, 0, server.log)
        let ask = FastCGIRecord(.getValues, requestId: 0, content: NameValuePairs.encode([("FCGI_MPXS_CONNS", "")])).encoded()
        _ = ask.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var byte: UInt8 = 0
        XCTAssertLessThanOrEqual(read(fd, &byte, 1), 0, "no answer to a peer not allowed")
        usleep(100_000)
        XCTAssertTrue(server.log.contains("refused a connection from 127.0.0.1"), server.log)
    }

    /// A listening socket made by someone else: on file descriptor 0 (lighttpd's bin-path,
    /// spawn-fcgi) and as systemd passes it (fd 3, LISTEN_PID and LISTEN_FDS).
    func testAListeningSocketOnDescriptorZeroOrFromSystemdIsServed() throws {
        let db = try makeStore()
        let signed = try Self.signedBodies(2, firstInstance: 890_500)
        for (index, mode) in ["descriptor 0", "systemd"].enumerated() {
            let path = dir + "/inherited-\(index).sock"
            let listener = ServeListenerTestAddress.boundSocket(path)
            XCTAssertGreaterThanOrEqual(listener, 0)
            XCTAssertEqual(listen(listener, 16), 0)
            let log = dir + "/inherited-\(index).log"
            let arguments = ["serve", "--db", db] + Self.policyFlags
            let pid: pid_t
            if index == 0 {
                pid = try Spawn.start(Self.binary, arguments) { actions in
                    posix_spawn_file_actions_adddup2(actions, listener, 0)
                    posix_spawn_file_actions_addopen(actions, 2, log, O_WRONLY | O_CREAT | O_APPEND, 0o644)
                }
            } else {
                let command = ([Self.binary] + arguments).map { "'" + $0 + "'" }.joined(separator: " ")
                pid = try Spawn.start("/bin/sh", ["-c", "LISTEN_PID=$$ LISTEN_FDS=1 exec " + command]) { actions in
                    posix_spawn_file_actions_adddup2(actions, listener, 3)
                    posix_spawn_file_actions_addopen(actions, 0, "/dev/null", O_RDONLY, 0)
                    posix_spawn_file_actions_addopen(actions, 2, log, O_WRONLY | O_CREAT | O_APPEND, 0o644)
                }
            }
            close(listener)
            // The socket listens already: the request waits in its queue until serve takes it.
            let client = try FastCGITestClient(socket: path)
            let answer = client.post(signed[index].body)
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            XCTAssertEqual(answer?.text, "stored \(signed[index].uuid)", "\(mode): \(text)")
            kill(pid, SIGTERM)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
            XCTAssertEqual(status, 0, "\(mode): exits 0 on SIGTERM; \(text)")
            XCTAssertTrue(FileManager.default.fileExists(atPath: path), "\(mode): a socket serve did not make is not removed")
        }
    }

    func testATCPListenerOffTheLoopbackNeedsTheAllowedWebServers() throws {
        let db = try makeStore()
        let r = try run(["serve", "--db", db, "--listen", "0.0.0.0:9"] + Self.policyFlags)
        XCTAssertEqual(r.status, 2)
        XCTAssertTrue(r.stderr.contains("--allow-from"), r.stderr)
    }
}
