import Foundation
import FakeApple
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import SubscriptionCore
@testable import SubdeskScenarios
import SubdeskTestKit

/// `subdesk ingest --cgi` behind a real lighttpd, started from the shipped
/// `deploy/lighttpd.conf`, under a bounded burst of concurrent POSTs on the loopback.
///
/// Tunable for a longer local soak: SUBDESK_WEB_NOTIFICATIONS (distinct good bodies,
/// default 300; 2,000 or more for a soak) and SUBDESK_WEB_CONCURRENCY (requests in flight,
/// default 12).
final class WebServerTests: XCTestCase, RunsOnEveryEngine {
    /// The web server's wiring does not depend on the engine and runs once, on SQLite; the
    /// burst runs on every engine, and so does the forgery, whose planted row on PostgreSQL is
    /// written by a support login (the roles are the engine's).
    static let engineTests: Set<String>? = ["testBurstThroughLighttpdStoresEachGoodNotificationOnceAndQuarantinesBadOnes",
                                            "testAChainRowPlantedInTheStoreDoesNotLetAForgedNotificationIn"]

    static let repoRoot = CLITests.repoRoot
    static let bundleId = ScenarioBuilder.demoBundleId
    static let appAppleId = ScenarioBuilder.demoAppAppleId
    /// 2026-06-01T00:00:00Z: fixed so runs sign the same notifications, inside the test CA's validity.
    static let anchor: Millis = 1_780_272_000_000
    /// The whole burst must be answered within this; a hang fails instead of stalling CI.
    static let burstTimeLimit: TimeInterval = 200
    static let requestTimeout: TimeInterval = 60

    var dir: String!
    var server: pid_t?
    /// The receivers' store: a file under the site's data folder; the burst makes it the
    /// pass's store.
    var database = ""
    /// The loopback port of the /metrics listener, chosen with the site configuration.
    var metricsPort = 0

    override func setUpWithError() throws {
        dir = NSTemporaryDirectory() + "subdesk-web-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        database = dir + "/data/subdesk.db"
    }

    override func tearDownWithError() throws {
        stopServer()
        try? FileManager.default.removeItem(atPath: dir)
    }

    // MARK: The test

    func testBurstThroughLighttpdStoresEachGoodNotificationOnceAndQuarantinesBadOnes() async throws {
        database = Store.testLocation(file: database)
        let lighttpd = try Self.lighttpdExecutable()
        let distinct = Self.environmentInt("SUBDESK_WEB_NOTIFICATIONS", default: 300, range: 1...50_000)
        let concurrency = Self.environmentInt("SUBDESK_WEB_CONCURRENCY", default: 12, range: 1...64)

        let signing = Date()
        let good = try Self.signedBodies(count: distinct)
        let signingSeconds = Date().timeIntervalSince(signing)
        var requests = good.map { Request(body: $0.body, kind: .good, uuid: $0.uuid) }
        // Apple retries whatever it did not see answered with 2xx, so the same bytes
        // arriving again, even while the first copy is still being stored, are normal.
        // The same shuffle and duplicates every run, so a failure can be replayed.
        var random = StoreGenerator.Random(state: 20261121)
        let duplicates = max(1, distinct / 10)
        for _ in 0..<duplicates {
            let original = good[Int(random.next() % UInt64(good.count))]
            requests.append(Request(body: original.body, kind: .duplicate, uuid: original.uuid))
        }
        let bad = Self.badBodies(tampering: good[0].body, count: max(8, distinct / 40))
        requests += bad.map { Request(body: $0, kind: .bad, uuid: nil) }
        requests.shuffle(using: &random)

        let port = try startServer(lighttpd)
        let url = try XCTUnwrap(URL(string: "http://127.0.0.1:\(port)/appstore/notifications"))

        let started = Date()
        let answers = await Self.post(requests, to: url, concurrency: concurrency,
                                      deadline: started.addingTimeInterval(Self.burstTimeLimit))
        let seconds = Date().timeIntervalSince(started)
        stopServer()

        let answered = answers.compactMap { $0 }.count
        print(String(format: "web server burst: %d requests (%d distinct good, %d duplicates, %d bad) answered %d "
                            + "in %.1f s, %.1f requests/s, %d in flight through lighttpd %@ (bodies signed in %.1f s)",
                     requests.count, distinct, duplicates, bad.count, answered, seconds,
                     Double(answered) / max(seconds, 0.001), concurrency, lighttpd, signingSeconds))

        // Every request answered, with the status its kind calls for.
        var statuses: [Int: Int] = [:]
        var storedBy: [String: Int] = [:]
        var problems: [String] = []
        for (request, answer) in zip(requests, answers) {
            guard let answer else {
                problems.append("\(request.kind) request got no answer")
                continue
            }
            statuses[answer.status, default: 0] += 1
            if answer.text.localizedCaseInsensitiveContains("database is locked") {
                problems.append("\(request.kind) request answered 'database is locked': \(answer.text)")
            }
            switch request.kind {
            case .good, .duplicate:
                let uuid = request.uuid ?? "?"
                if answer.status != 200 {
                    problems.append("\(request.kind) \(uuid) answered \(answer.status): \(answer.text)")
                } else if answer.text.hasPrefix("stored \(uuid)") {
                    storedBy[uuid, default: 0] += 1
                } else if !answer.text.hasPrefix("duplicate \(uuid)") {
                    problems.append("\(request.kind) \(uuid) answered 200 but '\(answer.text)'")
                }
            case .bad:
                if !(400..<500).contains(answer.status) || !answer.text.hasPrefix("rejected (quarantine #") {
                    problems.append("bad body answered \(answer.status): \(answer.text)")
                }
            }
        }
        print("web server statuses: " + statuses.sorted { $0.key < $1.key }.map { "\($0.key) x\($0.value)" }.joined(separator: ", "))
        XCTAssertEqual(problems.count, 0, "first problems:\n" + problems.prefix(10).joined(separator: "\n"))
        XCTAssertTrue(statuses.keys.allSatisfy { $0 < 500 }, "no 5xx: \(statuses)")
        // Exactly one request per notification was the one that stored it.
        let overStored = storedBy.filter { $0.value != 1 }
        XCTAssertTrue(overStored.isEmpty, "stored more than once: \(overStored.prefix(5))")
        XCTAssertEqual(storedBy.count, distinct, "requests that answered 'stored'")

        // The store agrees: each distinct good notification once, each bad body quarantined.
        let db = database
        let listed = try Self.subdesk(["notifications", "--db", db, "--json", "--limit", "1000000"])
        let rows = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(listed.utf8)) as? [[String: Any]])
        let storedUUIDs = rows.compactMap { $0["notificationUUID"] as? String }
        XCTAssertEqual(storedUUIDs.count, distinct, "notification rows")
        let expected = Set(good.map(\.uuid)), stored = Set(storedUUIDs)
        XCTAssertTrue(stored == expected, "missing \(expected.subtracting(stored).prefix(5)), unexpected \(stored.subtracting(expected).prefix(5))")
        let quarantined = try Self.subdesk(["quarantine", "--db", db, "--json", "--limit", "1000000"])
        let quarantineRows = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(quarantined.utf8)) as? [[String: Any]])
        XCTAssertEqual(quarantineRows.count, bad.count, "one quarantine row per bad request")

        let errorLog = (try? String(contentsOfFile: dir + "/logs/subdesk-error.log", encoding: .utf8)) ?? ""
        XCTAssertFalse(errorLog.localizedCaseInsensitiveContains("database is locked"), "error log:\n\(errorLog.suffix(2000))")
        XCTAssertFalse(errorLog.contains("timeout on CGI"), "error log:\n\(errorLog.suffix(2000))")
    }

    // MARK: Requests

    /// Notifications without `data` (EXTERNAL_PURCHASE_TOKEN, RESCIND_CONSENT), validly signed,
    /// through the real lighttpd: answered 200 and stored, so Apple does not give up on them.
    func testNotificationsWithoutDataAreAnswered200ThroughLighttpd() async throws {
        let lighttpd = try Self.lighttpdExecutable()
        let signer = try SampleData(directory: Self.repoRoot + "/sample-data").signer()
        func body(_ payload: [String: Any]) throws -> Data {
            try JSONSerialization.data(withJSONObject: ["signedPayload": try signer.sign(payload: try JSONSerialization.data(withJSONObject: payload))])
        }
        let now = DateText.nowMillis()
        let appTransaction: [String: Any] = ["receiptType": "Production", "appAppleId": Self.appAppleId, "bundleId": Self.bundleId,
                                             "appTransactionId": "704000", "originalPurchaseDate": now - 86_400_000, "signedDate": now]
        let token = try body(["notificationType": "EXTERNAL_PURCHASE_TOKEN", "subtype": "UNREPORTED", "notificationUUID": "web-ept-1",
                              "version": "2.0", "signedDate": now,
                              "externalPurchaseToken": ["externalPurchaseId": "7af9-49d4-9561", "tokenCreationDate": now - 1000,
                                                        "appAppleId": Self.appAppleId, "bundleId": Self.bundleId]])
        let rescind = try body(["notificationType": "RESCIND_CONSENT", "notificationUUID": "web-rescind-1", "version": "2.0", "signedDate": now,
                                "appData": ["appAppleId": Self.appAppleId, "bundleId": Self.bundleId, "environment": "Production",
                                            "signedAppTransactionInfo": try signer.sign(payload: try JSONSerialization.data(withJSONObject: appTransaction))]])
        let port = try startServer(lighttpd)
        let url = try XCTUnwrap(URL(string: "http://127.0.0.1:\(port)/appstore/notifications"))
        let answers = await Self.post([Request(body: token, kind: .good, uuid: "web-ept-1"), Request(body: rescind, kind: .good, uuid: "web-rescind-1")],
                                      to: url, concurrency: 2, deadline: Date().addingTimeInterval(60))
        for (answer, uuid) in zip(answers, ["web-ept-1", "web-rescind-1"]) {
            XCTAssertEqual(answer?.status, 200, "\(uuid): \(answer?.text ?? "no answer")")
            XCTAssertTrue(answer?.text.hasPrefix("stored \(uuid)") == true, answer?.text ?? "")
        }
        let listed = try Self.subdesk(["notifications", "--db", database, "--json"])
        XCTAssertTrue(listed.contains("EXTERNAL_PURCHASE_TOKEN") && listed.contains("RESCIND_CONSENT"), listed)
    }

    enum Kind: CustomStringConvertible {
        case good, duplicate, bad
        var description: String {
            switch self {
            case .good: return "good"
            case .duplicate: return "duplicate"
            case .bad: return "bad"
            }
        }
    }

    struct Request {
        let body: Data
        let kind: Kind
        let uuid: String?
    }

    struct Answer {
        let status: Int
        let text: String
    }

    /// Signs `count` distinct notifications: whole scenario instances, each instance
    /// number giving its own notificationUUIDs.
    static func signedBodies(count: Int) throws -> [(body: Data, uuid: String)] {
        let builder = ScenarioBuilder(signer: try JWSSigner.testCA(directory: repoRoot + "/sample-data/test-ca"))
        let scenarios = try Scenario.loadAll(directory: repoRoot + "/sample-data/scenarios")
        var result: [(body: Data, uuid: String)] = []
        var instance = 700_000
        while result.count < count {
            for scenario in scenarios where result.count < count {
                for body in try builder.bodies(for: scenario, instance: instance, anchor: anchor) where result.count < count {
                    result.append((body, try notificationUUID(of: body)))
                }
            }
            instance += 1
        }
        return result
    }

    static func notificationUUID(of body: Data) throws -> String {
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: body) as? [String: Any])
        let jws = try XCTUnwrap(object["signedPayload"] as? String)
        let payload = try XCTUnwrap(Base64URL.decode(try XCTUnwrap(jws.split(separator: ".").dropFirst().first)))
        let fields = try XCTUnwrap(try JSONSerialization.jsonObject(with: payload) as? [String: Any])
        return try XCTUnwrap(fields["notificationUUID"] as? String)
    }

    /// Distinct bodies that can never be valid, of the kinds a public URL really gets.
    static func badBodies(tampering signed: Data, count: Int) -> [Data] {
        let text = String(decoding: signed, as: UTF8.self)
        return (0..<count).map { i -> Data in
            switch i % 4 {
            case 0: return Data("not json \(i)".utf8)
            case 1: return Data("{\"signedPayload\":\"x.y.z\(i)\"}".utf8)
            case 2: return Data("{\"hello\":\(i)}".utf8)
            default:
                // A signed body whose signature no longer matches: one base64url letter of
                // the signature segment changed, and a distinct padding so each is new.
                var bytes = Array(text.utf8)
                let quote = bytes.lastIndex(of: UInt8(ascii: "\"")) ?? bytes.count
                bytes[quote - 3] = bytes[quote - 3] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
                return Data(bytes) + Data(String(repeating: " ", count: i).utf8)
            }
        }
    }

    /// POSTs every request with at most `concurrency` in flight; an entry stays nil when
    /// its request got no HTTP answer (or was never sent because the deadline passed).
    static func post(_ requests: [Request], to url: URL, concurrency: Int, deadline: Date) async -> [Answer?] {
        // libcurl under URLSession honours proxy variables; the burst must stay on the loopback.
        for name in ["http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"] { unsetenv(name) }
        setenv("no_proxy", "127.0.0.1,localhost", 1)
        setenv("NO_PROXY", "127.0.0.1,localhost", 1)
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = concurrency
        configuration.timeoutIntervalForRequest = requestTimeout
        configuration.timeoutIntervalForResource = requestTimeout
        let session = URLSession(configuration: configuration)
        defer { session.finishTasksAndInvalidate() }

        var answers = [Answer?](repeating: nil, count: requests.count)
        await withTaskGroup(of: (Int, Answer?).self) { group in
            var next = 0
            func startNext() -> Bool {
                guard next < requests.count, Date() < deadline else { return false }
                let index = next
                next += 1
                var request = URLRequest(url: url)
                request.httpMethod = "POST"
                request.setValue("application/json", forHTTPHeaderField: "Content-Type")
                request.httpBody = requests[index].body
                group.addTask {
                    do {
                        let (data, response) = try await session.data(for: request)
                        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
                        return (index, Answer(status: status, text: String(decoding: data, as: UTF8.self)))
                    } catch {
                        return (index, nil)
                    }
                }
                return true
            }
            for _ in 0..<concurrency { _ = startNext() }
            while let (index, answer) = await group.next() {
                answers[index] = answer
                _ = startNext()
            }
        }
        return answers
    }

    // MARK: The server

    /// lighttpd from PATH or the sbin folders a non-root PATH often lacks; skips the test without it.
    static func lighttpdExecutable() throws -> String {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let folders = path.split(separator: ":").map(String.init) + ["/usr/sbin", "/usr/local/sbin", "/sbin"]
        for folder in folders {
            let candidate = folder + "/lighttpd"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw XCTSkip("lighttpd is not installed (apt-get install lighttpd): the CGI path behind a real web server is not exercised")
    }

    /// The shipped config with only its settings changed, the way a site would edit it.
    func siteConfiguration(port: Int) throws -> String {
        let shipped = try String(contentsOfFile: Self.repoRoot + "/deploy/lighttpd.conf", encoding: .utf8)
        metricsPort = try Self.freeLoopbackPort()
        let settings: [String: String] = [
            "var.subdesk_bind": "\"127.0.0.1\"",
            "var.subdesk_port": String(port),
            "var.subdesk_cgi": "\"\(dir!)/subdesk-cgi\"",
            "var.subdesk_config": "\"\(dir!)/config\"",
            "var.subdesk_docroot": "\"\(dir!)/www\"",
            "var.subdesk_logs": "\"\(dir!)/logs\"",
            // The metrics listener gets a free port too: a fixed one may be taken on the host.
            "var.subdesk_metrics_socket": "\"127.0.0.1:\(metricsPort)\"",
            "var.subdesk_metrics_cgi": "\"\(dir!)/subdesk-metrics-cgi\"",
        ]
        var seen: Set<String> = []
        var lines: [String] = []
        for line in shipped.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            let key = line.split(separator: "=", maxSplits: 1).first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
            if let value = settings[key] {
                lines.append("\(key) = \(value)")
                seen.insert(key)
            } else if key == "server.username" || key == "server.groupname" {
                // The test runs as whoever runs it; lighttpd refuses to switch a
                // non-root user, and as root the build folder may be unreadable to www-data.
                continue
            } else {
                lines.append(line)
            }
        }
        XCTAssertEqual(seen, Set(settings.keys), "deploy/lighttpd.conf lost a setting the test fills in")
        return lines.joined(separator: "\n")
    }

    /// Starts lighttpd in the foreground on a free loopback port; returns the port once it accepts.
    /// The receivers' config file: the demo app, trusting the test CA.
    var receiverConfig: String {
        """
        db = \(database)
        root_ca = \(Self.repoRoot)/sample-data/test-ca/root.der
        bundle_id = \(Self.bundleId)
        app_apple_id = \(Self.appAppleId)

        """
    }

    func startServer(_ lighttpd: String, config receiverConfig: String? = nil) throws -> Int {
        let fm = FileManager.default
        for sub in ["www", "logs", "data"] {
            try fm.createDirectory(atPath: dir + "/" + sub, withIntermediateDirectories: true)
        }
        for wrapper in ["subdesk-cgi", "subdesk-metrics-cgi"] {
            let shippedWrapper = try String(contentsOfFile: Self.repoRoot + "/deploy/" + wrapper, encoding: .utf8)
            XCTAssertTrue(shippedWrapper.contains("/usr/local/bin/subdesk"), "deploy/\(wrapper) names the installed binary")
            try shippedWrapper.replacingOccurrences(of: "/usr/local/bin/subdesk", with: CLITests.binary)
                .write(toFile: dir + "/" + wrapper, atomically: true, encoding: .utf8)
            try fm.setAttributes([.posixPermissions: 0o755], ofItemAtPath: dir + "/" + wrapper)
        }
        try (receiverConfig ?? self.receiverConfig).write(toFile: dir + "/config", atomically: true, encoding: .utf8)

        // The deployment creates the store once; CGI never does.
        let created = try runToEnd(CLITests.binary, ["init", "--db", database])
        XCTAssertEqual(created.status, 0, created.output)

        // Another process may take the probed port before lighttpd binds it: try a few.
        var lastFailure = ""
        for _ in 0..<3 {
            let port = try Self.freeLoopbackPort()
            let config = dir + "/lighttpd.conf"
            try siteConfiguration(port: port).write(toFile: config, atomically: true, encoding: .utf8)
            let check = try runToEnd(lighttpd, ["-tt", "-f", config])
            guard check.status == 0 else {
                XCTFail("lighttpd -tt refused the config: \(check.output)")
                throw XCTSkip("config check failed")
            }
            let pid = try Self.spawn(lighttpd, ["-D", "-f", config], output: dir + "/logs/lighttpd.out")
            server = pid
            let ready = Date().addingTimeInterval(10)
            while Date() < ready && Self.isRunning(pid) {
                if Self.accepts(port: port) { return port }
                Thread.sleep(forTimeInterval: 0.05)
            }
            stopServer()
            lastFailure = ((try? String(contentsOfFile: dir + "/logs/lighttpd.out", encoding: .utf8)) ?? "")
                + ((try? String(contentsOfFile: dir + "/logs/subdesk-error.log", encoding: .utf8)) ?? "")
        }
        throw XCTSkip("lighttpd did not start listening: \(lastFailure)")
    }

    /// SIGTERM, then SIGKILL if lighttpd has not exited within ten seconds; always reaped.
    func stopServer() {
        guard let pid = server else { return }
        server = nil
        kill(pid, SIGTERM)
        let patience = Date().addingTimeInterval(10)
        while Date() < patience {
            if !Self.isRunning(pid) { return }
            Thread.sleep(forTimeInterval: 0.05)
        }
        kill(pid, SIGKILL)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
    }

    /// Reaps `pid` when it has exited.
    static func isRunning(_ pid: pid_t) -> Bool {
        var status: Int32 = 0
        return waitpid(pid, &status, WNOHANG) == 0
    }

    /// Starts lighttpd with stdin from /dev/null and its output appended to `output`.
    /// Not Foundation's Process: it passes on the calling thread's signal mask, and a
    /// lighttpd started with SIGCHLD and SIGTERM blocked never reaps its CGI children and
    /// cannot be stopped.
    static func spawn(_ executable: String, _ arguments: [String], output: String) throws -> pid_t {
        try Spawn.start(executable, arguments) { actions in
            posix_spawn_file_actions_addopen(actions, 0, "/dev/null", O_RDONLY, 0)
            posix_spawn_file_actions_addopen(actions, 1, output, O_WRONLY | O_CREAT | O_APPEND, 0o644)
            posix_spawn_file_actions_adddup2(actions, 1, 2)
        }
    }

    static func freeLoopbackPort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EMFILE) }
        defer { close(fd) }
        var address = loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else { throw POSIXError(.EADDRINUSE) }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    static func accepts(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = loopback(port: port)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
    }

    static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
        return address
    }

    // MARK: Helpers

    /// Runs the built subdesk with only stdout kept, failing the test on a non-zero exit.
    static func subdesk(_ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CLITests.binary)
        process.arguments = arguments
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let data = ChildOutput.readAll(output.fileHandleForReading)
        let errorText = String(decoding: ChildOutput.readAll(errors.fileHandleForReading), as: UTF8.self)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, "subdesk \(arguments.joined(separator: " ")): \(errorText)")
        return String(decoding: data, as: UTF8.self)
    }

    static func environmentInt(_ name: String, default value: Int, range: ClosedRange<Int>) -> Int {
        guard let text = ProcessInfo.processInfo.environment[name], let number = Int(text) else { return value }
        return min(max(number, range.lowerBound), range.upperBound)
    }
}
