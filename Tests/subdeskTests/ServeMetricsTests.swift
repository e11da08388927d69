import Foundation
import XCTest
import FastCGI
@testable import SubscriptionCore
import SubdeskTestKit
@testable import subdesk

/// `/metrics` answered by `subdesk serve` on a listener of its own (`--metrics-listen`),
/// spoken to as a web server speaks to it: what `subdesk metrics` prints, no path crossing
/// between the scrape and intake, and a 503 while the store cannot be read.
final class ServeMetricsTests: SubdeskTestCase {
    var server: ServeProcess?

    override func tearDownWithError() throws {
        server?.stop()
        try super.tearDownWithError()
    }

    var socketPath: String { dir + "/serve.sock" }
    var metricsPath: String { dir + "/metrics.sock" }

    func environment() -> [String: String] {
        var env = ProcessInfo.processInfo.environment
        env["XDG_DATA_HOME"] = dir + "/data"
        env["XDG_CONFIG_HOME"] = dir + "/config"
        env.removeValue(forKey: "SUBDESK_DB")
        env.removeValue(forKey: "SUBDESK_CONFIG")
        return env
    }

    /// A store and serve answering intake on `socketPath` and scrapes on `metricsPath`.
    func startServe() throws -> String {
        let db = dir + "/store.db"
        XCTAssertEqual(try run(["init", "--db", db]).status, 0)
        let started = try ServeProcess(binary: Self.binary, arguments: ["--db", db, "--metrics-listen", "unix:" + metricsPath] + ServeTests.policyFlags,
                                       socket: socketPath, log: dir + "/serve.log", environment: environment())
        server = started
        try started.waitUntilAnswering()
        return db
    }

    static func scrapeParams(method: String = "GET", path: String = "/metrics", length: Int? = nil) -> [(String, String)] {
        var pairs = [("REQUEST_METHOD", method), ("GATEWAY_INTERFACE", "CGI/1.1"), ("REMOTE_ADDR", "192.0.2.9"),
                     ("SCRIPT_NAME", path), ("REQUEST_URI", path), ("DOCUMENT_URI", path)]
        if let length { pairs.append(("CONTENT_LENGTH", String(length))) }
        return pairs
    }

    func scrape(method: String = "GET", path: String = "/metrics", body: Data = Data()) throws -> FastCGITestClient.Answer {
        let client = try FastCGITestClient(socket: metricsPath)
        return try XCTUnwrap(client.post(body, params: Self.scrapeParams(method: method, path: path, length: body.isEmpty ? nil : body.count)))
    }

    func stored(_ db: String) throws -> Set<String> {
        Set(try engineQuery(db, "SELECT notification_uuid FROM notifications").split(separator: "\n").map(String.init))
    }

    /// The lines of `names`' samples, in order.
    func samples(_ exposition: String, _ names: [String]) -> [String] {
        exposition.split(separator: "\n").map(String.init).filter { line in names.contains { line.hasPrefix($0 + "{") || line.hasPrefix($0 + " ") } }
    }

    /// The exposition's metric declarations (HELP and TYPE lines).
    func declarations(_ exposition: String) -> [String] {
        exposition.split(separator: "\n").map(String.init).filter { $0.hasPrefix("# ") }
    }

    func testServeAnswersMetricsOnItsOwnListenerAsSubdeskMetricsPrintsThem() throws {
        let db = try startServe()
        let bodies = try ServeTests.signedBodies(3, firstInstance: 930_000)
        let intake = try FastCGITestClient(socket: socketPath)
        for b in bodies { XCTAssertEqual(intake.post(b.body)?.status, 200) }

        let answer = try scrape()
        XCTAssertEqual(answer.status, 200, answer.stdout)
        XCTAssertTrue(answer.stdout.contains("Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"), answer.stdout)
        let served = answer.text + "\n"
        let printed = try run(["metrics", "--db", db])
        XCTAssertEqual(printed.status, 0, printed.stderr)
        XCTAssertEqual(declarations(served), declarations(printed.stdout), "one exposition, declared once")
        let steady = ["subdesk_build_info", "subdesk_source_up", "subdesk_notifications_received_total", "subdesk_quarantine_entries",
                      "subdesk_store_schema_version", "subdesk_binary_schema_version", "subdesk_rejected_last_hour"]
        XCTAssertEqual(samples(served, steady), samples(printed.stdout, steady))
        XCTAssertEqual(samples(served, ["subdesk_source_up"]), [#"subdesk_source_up{source="store"} 1"#])
        // serve gives its own 503 counts (none), where `subdesk metrics` would ask serve_socket.
        XCTAssertEqual(samples(served, ["subdesk_serve_unavailable_total"]).count, ServeUnavailableReason.allCases.count, served)
        let promtool = try OnCallMetricsTests.promtool()
        let check = try run(["check", "metrics"], stdin: Data(served.utf8), executable: promtool)
        XCTAssertEqual(check.status, 0, check.stdout + check.stderr)
        XCTAssertFalse(server?.log.contains("closed a connection") ?? true, server?.log ?? "")
    }

    /// Which listener a connection reached decides what it may ask; no path sent changes it.
    func testNoPathLeadsAScrapeToIntakeOrANotificationToTheMetrics() throws {
        let db = try startServe()
        let bodies = try ServeTests.signedBodies(2, firstInstance: 931_000)

        // A notification posted to the metrics listener, under the webhook's path: refused, not stored.
        for path in ["/appstore/notifications", "/metrics", "/metrics/../appstore/notifications"] {
            let posted = try scrape(method: "POST", path: path, body: bodies[0].body)
            XCTAssertEqual(posted.status, 405, "\(path): \(posted.stdout)")
            XCTAssertTrue(posted.stdout.contains("Allow: GET, HEAD\r\n"), posted.stdout)
        }
        XCTAssertEqual(try stored(db), [])
        // A GET of the metrics listener is the exposition, whatever path it names.
        let underWebhookPath = try scrape(path: "/appstore/notifications")
        XCTAssertEqual(underWebhookPath.status, 200)
        XCTAssertTrue(underWebhookPath.text.hasPrefix("# HELP subdesk_build_info"), underWebhookPath.text)

        // The intake listener never answers the exposition, under any path.
        let intake = try FastCGITestClient(socket: socketPath)
        for path in ["/metrics", "/appstore/notifications"] {
            let got = try XCTUnwrap(intake.post(Data(), params: Self.scrapeParams(path: path)))
            XCTAssertEqual(got.status, 405, got.stdout)
            XCTAssertFalse(got.stdout.contains("subdesk_"), got.stdout)
        }
        // And a notification posted to it under the metrics path is intake's, as any other.
        let posted = try XCTUnwrap(intake.post(bodies[1].body, params: Self.scrapeParams(method: "POST", path: "/metrics", length: bodies[1].body.count)))
        XCTAssertEqual(posted.text, "stored \(bodies[1].uuid)")
        XCTAssertEqual(try stored(db), [bodies[1].uuid])
    }

    /// The store gone (moved away under serve): the scrape is a 503 naming why, serve keeps
    /// answering, and once the store is back the scrape is whole again; a write intake tried
    /// meanwhile shows as the store's source down until a notification is stored.
    func testAScrapeIs503WhileTheStoreCannotBeReadAndTheStoreSourceFollowsIntake() throws {
        let db = try startServe()
        let bodies = try ServeTests.signedBodies(3, firstInstance: 932_000)
        let intake = try FastCGITestClient(socket: socketPath)
        XCTAssertEqual(intake.post(bodies[0].body)?.status, 200)

        XCTAssertEqual(rename(db, db + ".away"), 0)
        let gone = try scrape()
        XCTAssertEqual(gone.status, 503, gone.stdout)
        XCTAssertTrue(gone.text.contains("store"), gone.text)
        XCTAssertFalse(gone.text.contains("subdesk_build_info"), gone.text)
        let refused = try FastCGITestClient(socket: socketPath).post(bodies[1].body)
        XCTAssertEqual(refused?.status, 503, refused?.stdout ?? "no answer")

        XCTAssertEqual(rename(db + ".away", db), 0)
        // Past the second within which scrapes share one reading.
        var back: FastCGITestClient.Answer?
        let deadline = Date().addingTimeInterval(30)
        repeat {
            back = try scrape()
            if back?.status == 200 { break }
            usleep(100_000)
        } while Date() < deadline
        XCTAssertEqual(back?.status, 200, back?.stdout ?? "")
        XCTAssertEqual(samples(back?.text ?? "", ["subdesk_source_up"]), [#"subdesk_source_up{source="store"} 0"#],
                       "a write failed after the last notification stored")

        var answered: FastCGITestClient.Answer?
        let storedBy = Date().addingTimeInterval(30)
        repeat {
            answered = try FastCGITestClient(socket: socketPath).post(bodies[2].body)
            if answered?.status == 200 { break }
            usleep(100_000)
        } while Date() < storedBy
        XCTAssertEqual(answered?.text, "stored \(bodies[2].uuid)", server?.log ?? "")
        var healthy: [String] = []
        let judged = Date().addingTimeInterval(30)
        repeat {
            healthy = samples(try scrape().text, ["subdesk_source_up"])
            if healthy == [#"subdesk_source_up{source="store"} 1"#] { break }
            usleep(100_000)
        } while Date() < judged
        XCTAssertEqual(healthy, [#"subdesk_source_up{source="store"} 1"#])
    }

    /// doctor, given the password file the web server checks scrapes against: missing fails,
    /// readable by every user warns, kept to the owner and the web server's group is fine.
    func testDoctorSaysWhenOthersMayReadTheMetricsPasswordFile() throws {
        let db = dir + "/store.db"
        XCTAssertEqual(try run(["init", "--db", db]).status, 0)
        let passwords = dir + "/metrics.htpasswd"
        try "db = \(db)\nmetrics_password_file = \(passwords)\n".write(toFile: dir + "/config", atomically: true, encoding: .utf8)
        chmod(dir + "/config", 0o600)
        func level() throws -> String? {
            let r = try run(["doctor", "--json"], env: ["SUBDESK_CONFIG": dir + "/config"])
            let checks = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: String]] ?? []
            return checks.first { $0["check"] == "metrics auth" }?["level"]
        }
        XCTAssertEqual(try level(), "fail", "missing")
        try "prometheus:$6$salt$hash\n".write(toFile: passwords, atomically: true, encoding: .utf8)
        chmod(passwords, 0o644)
        XCTAssertEqual(try level(), "warn", "readable by every user")
        chmod(passwords, 0o640)
        XCTAssertEqual(try level(), "ok")
        try "db = \(db)\n".write(toFile: dir + "/config", atomically: true, encoding: .utf8)
        XCTAssertNil(try level(), "not named: not checked")
    }

    /// Under systemd both sockets come from it (subdesk-serve.socket, and
    /// subdesk-serve-metrics.socket named metrics): each takes only its own requests.
    func testSystemdsSocketNamedMetricsTakesTheScrapes() throws {
        let db = dir + "/store.db"
        XCTAssertEqual(try run(["init", "--db", db]).status, 0)
        let intakeListener = ServeListenerTestAddress.boundSocket(socketPath)
        let metricsListener = ServeListenerTestAddress.boundSocket(metricsPath)
        XCTAssertEqual(listen(intakeListener, 16), 0)
        XCTAssertEqual(listen(metricsListener, 16), 0)
        let log = dir + "/systemd.log"
        // As systemd passes them: in the units' order, the metrics socket first here, found by its name.
        let command = ([Self.binary, "serve", "--db", db] + ServeTests.policyFlags).map { "'" + $0 + "'" }.joined(separator: " ")
        let pid = try Spawn.start("/bin/sh", ["-c", "LISTEN_PID=$$ LISTEN_FDS=2 LISTEN_FDNAMES=metrics:serve exec " + command]) { actions in
            posix_spawn_file_actions_adddup2(actions, metricsListener, 3)
            posix_spawn_file_actions_adddup2(actions, intakeListener, 4)
            posix_spawn_file_actions_addopen(actions, 0, "/dev/null", O_RDONLY, 0)
            posix_spawn_file_actions_addopen(actions, 2, log, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        }
        defer {
            kill(pid, SIGTERM)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
        }
        close(intakeListener)
        close(metricsListener)
        // The sockets listen already: requests wait in their queues until serve takes them.
        let body = try ServeTests.signedBodies(1, firstInstance: 933_000)[0]
        let stored = try FastCGITestClient(socket: socketPath).post(body.body)
        XCTAssertEqual(stored?.text, "stored \(body.uuid)", (try? String(contentsOfFile: log, encoding: .utf8)) ?? "")
        let scraped = try scrape()
        XCTAssertEqual(scraped.status, 200, scraped.stdout)
        XCTAssertTrue(scraped.text.contains(#"subdesk_source_up{source="store"} 1"#), scraped.text)
        let crossed = try scrape(method: "POST", path: "/appstore/notifications", body: body.body)
        XCTAssertEqual(crossed.status, 405)
        XCTAssertEqual(ServeListener.systemdRoles(count: 2, names: "serve:metrics").intake, 3)
        XCTAssertEqual(ServeListener.systemdRoles(count: 2, names: "serve:metrics").metrics, 4)
        XCTAssertNil(ServeListener.systemdRoles(count: 1, names: nil).metrics, "one socket, unnamed: intake alone")
    }

    func testMetricsListenMustNotBeTheWebhooksListener() throws {
        let db = dir + "/store.db"
        XCTAssertEqual(try run(["init", "--db", db]).status, 0)
        let r = try run(["serve", "--db", db, "--listen", "unix:" + socketPath, "--metrics-listen", "unix:" + socketPath])
        XCTAssertEqual(r.status, 2, r.stderr)
        XCTAssertTrue(r.stderr.contains("--metrics-listen"), r.stderr)
    }
}
