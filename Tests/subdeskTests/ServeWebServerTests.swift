import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import SubscriptionCore
@testable import SubdeskScenarios
import SubdeskTestKit

/// `subdesk serve` behind the real web servers, started from the shipped `deploy/`
/// configurations: signed bodies POSTed over HTTP to lighttpd (mod_fastcgi) and to nginx
/// (fastcgi_pass), answered and stored; the nginx and Apache (mod_proxy_fcgi) files pass
/// their servers' own checks; the systemd units pass `systemd-analyze verify`.
final class ServeWebServerTests: SubdeskTestCase {
    var webServer: pid_t?
    var serve: ServeProcess?

    override func tearDownWithError() throws {
        if let pid = webServer {
            kill(pid, SIGTERM)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
        }
        serve?.stop()
        try super.tearDownWithError()
    }

    var socketPath: String { dir + "/serve.sock" }
    /// Where serve answers /metrics scrapes (`--metrics-listen`).
    var metricsSocketPath: String { dir + "/metrics.sock" }

    /// A store, its configuration (with `retentionRules`, the app in an `[app]` section),
    /// and subdesk serve answering on `socketPath` (and scrapes on `metricsSocketPath`).
    func startServe(retentionRules: String? = nil) throws -> String {
        for sub in ["www", "logs", "tmp"] {
            try FileManager.default.createDirectory(atPath: dir + "/" + sub, withIntermediateDirectories: true)
        }
        let db = dir + "/data/subdesk.db"
        XCTAssertEqual(try run(["init", "--db", db]).status, 0)
        try """
            db = \(db)
            root_ca = \(Self.repoRoot)/sample-data/test-ca/root.der
            \(retentionRules == nil ? "" : "[app demo]")
            bundle_id = \(ScenarioBuilder.demoBundleId)
            app_apple_id = \(ScenarioBuilder.demoAppAppleId)
            \(retentionRules.map { "retention_rules = " + $0 } ?? "")

            """.write(toFile: dir + "/config", atomically: true, encoding: .utf8)
        chmod(dir + "/config", 0o600)
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "SUBDESK_DB")
        env["SUBDESK_CONFIG"] = dir + "/config"
        let server = try ServeProcess(binary: Self.binary, arguments: ["--metrics-listen", "unix:" + metricsSocketPath], socket: socketPath,
                                      log: dir + "/logs/serve.log", environment: env)
        serve = server
        try server.waitUntilAnswering()
        return db
    }

    func shipped(_ name: String) throws -> String {
        try String(contentsOfFile: Self.repoRoot + "/deploy/" + name, encoding: .utf8)
    }

    func waitForPort(_ port: Int, pid: pid_t, log: String) throws {
        let ready = Date().addingTimeInterval(15)
        while Date() < ready && WebServerTests.isRunning(pid) {
            if WebServerTests.accepts(port: port) { return }
            Thread.sleep(forTimeInterval: 0.05)
        }
        XCTFail("the web server did not start listening: \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
        throw NSError(domain: "web server", code: 1)
    }

    /// Posts fresh signed bodies, a duplicate and a bad body through the web server at
    /// `port`: 200 stored, 200 duplicate, 400 quarantined, and the rows to match.
    func postThrough(port: Int, db: String, firstInstance: Int) async throws {
        let sample = SampleData(directory: Self.repoRoot + "/sample-data")
        var instance = firstInstance
        let bodies = try ScenarioBuilder(signer: try sample.signer())
            .bodies(count: 40, cycling: try sample.scenarios(), instance: &instance, anchor: DateText.nowMillis())
        let uuids = try bodies.map { try WebServerTests.notificationUUID(of: $0) }
        var requests = zip(bodies, uuids).map { WebServerTests.Request(body: $0, kind: .good, uuid: $1) }
        requests.append(WebServerTests.Request(body: bodies[0], kind: .duplicate, uuid: uuids[0]))
        requests.append(WebServerTests.Request(body: Data(#"{"junk":true}"#.utf8), kind: .bad, uuid: nil))
        let url = try XCTUnwrap(URL(string: "http://127.0.0.1:\(port)/appstore/notifications"))
        // The duplicate goes last, after its original is answered.
        var answers = await WebServerTests.post(Array(requests.dropLast(2)), to: url, concurrency: 8, deadline: Date().addingTimeInterval(120))
        answers += await WebServerTests.post(Array(requests.suffix(2)), to: url, concurrency: 1, deadline: Date().addingTimeInterval(60))
        for (request, response) in zip(requests, answers) {
            let answer = response.map { (status: $0.status, text: $0.text.trimmingCharacters(in: .newlines)) }
            switch request.kind {
            case .good: XCTAssertEqual(answer?.text, "stored \(request.uuid!)", "\(answer?.status ?? 0)")
            case .duplicate: XCTAssertEqual(answer?.text, "duplicate \(request.uuid!)")
            case .bad:
                XCTAssertEqual(answer?.status, 400)
                XCTAssertTrue(answer?.text.hasPrefix("rejected (quarantine #") == true, answer?.text ?? "no answer")
            }
        }
        let stored = Set(try engineQuery(db, "SELECT notification_uuid FROM notifications").split(separator: "\n").map(String.init))
        XCTAssertEqual(stored, Set(uuids))
        XCTAssertEqual(try engineQuery(db, "SELECT count(*) FROM quarantine"), "1")
    }

    /// Apple's real-time retention request through the web server's `/appstore/retention`
    /// route reaches serve's responder: no rules configured, so `200 {}` (Apple falls back);
    /// one signed for another app, 403.
    func retentionThrough(port: Int) async throws {
        var request = URLRequest(url: try XCTUnwrap(URL(string: "http://127.0.0.1:\(port)/appstore/retention")))
        request.httpMethod = "POST"
        request.httpBody = try ServeRetentionTests.request(otid: "2000000000000001")
        let (data, response) = try await URLSession.shared.data(for: request)
        XCTAssertEqual((response as? HTTPURLResponse)?.statusCode, 200)
        XCTAssertEqual(String(decoding: data, as: UTF8.self), "{}")
        request.httpBody = try ServeRetentionTests.request(otid: "2000000000000001", app: 42)
        let (refusal, refused) = try await URLSession.shared.data(for: request)
        XCTAssertEqual((refused as? HTTPURLResponse)?.statusCode, 403, String(decoding: refusal, as: UTF8.self))
    }

    // MARK: lighttpd

    func testSignedBodiesThroughLighttpdAndServeAreStored() async throws {
        let db = try startServe()
        try makeCertificate()
        try makePasswordFile()
        let port = try WebServerTests.freeLoopbackPort()
        let metricsPort = try WebServerTests.freeLoopbackPort()
        let settings = ["var.subdesk_port": String(port), "var.subdesk_serve_socket": "\"\(socketPath)\"",
                        "var.subdesk_config": "\"\(dir!)/config\"", "var.subdesk_docroot": "\"\(dir!)/www\"",
                        "var.subdesk_logs": "\"\(dir!)/logs\"",
                        "var.subdesk_metrics_socket": "\"127.0.0.1:\(metricsPort)\"",
                        "var.subdesk_metrics_serve": "\"\(metricsSocketPath)\"",
                        "var.subdesk_metrics_pemfile": "\"\(dir!)/tls/fullchain.pem\"",
                        "var.subdesk_metrics_privkey": "\"\(dir!)/tls/privkey.pem\"",
                        "var.subdesk_metrics_htpasswd": "\"\(dir!)/metrics.htpasswd\""]
        var seen = Set<String>()
        let lines = try shipped("lighttpd-serve.conf").split(separator: "\n", omittingEmptySubsequences: false).compactMap { line -> String? in
            let key = line.split(separator: "=", maxSplits: 1).first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
            if key == "server.username" || key == "server.groupname" { return nil }
            guard let value = settings[key] else { return String(line) }
            seen.insert(key)
            return "\(key) = \(value)"
        }
        XCTAssertEqual(seen, Set(settings.keys), "deploy/lighttpd-serve.conf keeps its settings' names")
        let config = dir + "/lighttpd.conf"
        try lines.joined(separator: "\n").write(toFile: config, atomically: true, encoding: .utf8)
        let lighttpd = try WebServerTests.lighttpdExecutable()
        let check = try runToEnd(lighttpd, ["-tt", "-f", config])
        XCTAssertEqual(check.status, 0, check.output)
        let pid = try WebServerTests.spawn(lighttpd, ["-D", "-f", config], output: dir + "/logs/lighttpd.out")
        webServer = pid
        try waitForPort(port, pid: pid, log: dir + "/logs/lighttpd.out")
        try await postThrough(port: port, db: db, firstInstance: 880_000)
        try await retentionThrough(port: port)
        try checkMetricsListener(port: metricsPort, stored: 40)
    }

    // MARK: nginx

    static func nginxExecutable() throws -> String {
        for candidate in ["/usr/sbin/nginx", "/usr/bin/nginx"] where FileManager.default.isExecutableFile(atPath: candidate) {
            return candidate
        }
        XCTFail("nginx is not installed (apt-get install nginx; it is in the README's package list)")
        throw NSError(domain: "nginx", code: 1)
    }

    /// The main configuration around a server block: everything under the test's folder.
    func nginxMain(_ server: String) throws -> String {
        try server.write(toFile: dir + "/site.conf", atomically: true, encoding: .utf8)
        let tmp = dir + "/tmp"
        return """
            \(getuid() == 0 ? "user root;" : "")
            daemon off;
            pid \(dir!)/nginx.pid;
            error_log \(dir!)/logs/nginx-error.log;
            events { worker_connections 64; }
            http {
                client_body_temp_path \(tmp)/body;
                fastcgi_temp_path \(tmp)/fastcgi;
                proxy_temp_path \(tmp)/proxy;
                uwsgi_temp_path \(tmp)/uwsgi;
                scgi_temp_path \(tmp)/scgi;
                include \(dir!)/site.conf;
            }

            """
    }

    /// The shipped server block, its paths put under the test's folder; with `port`, on
    /// that loopback port without TLS (the test has no certificate Apple would accept), or
    /// with it (`tls`, the test's own certificate). The metrics server block (the second)
    /// keeps its TLS, on `metricsPort`.
    func nginxSite(port: Int?, metricsPort: Int? = nil, tls: Bool = false) throws -> String {
        var lines: [String] = []
        var servers = 0
        for line in try shipped("nginx-serve.conf").split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("server {") { servers += 1 }
            let metricsBlock = servers >= 2
            if metricsBlock, let metricsPort, trimmed.hasPrefix("listen ") {
                if !lines.contains(where: { $0.contains("listen 127.0.0.1:\(metricsPort)") }) { lines.append("    listen 127.0.0.1:\(metricsPort) ssl;") }
                continue
            }
            if !metricsBlock, let port, trimmed.hasPrefix("listen ") {
                if !lines.contains(where: { $0.contains("listen 127.0.0.1:\(port)") }) { lines.append("    listen 127.0.0.1:\(port)\(tls ? " ssl" : "");") }
                continue
            }
            if !metricsBlock && port != nil && !tls && trimmed.hasPrefix("ssl_") { continue }
            lines.append(line.replacingOccurrences(of: "/run/subdesk/serve.sock", with: socketPath)
                .replacingOccurrences(of: "/run/subdesk/metrics.sock", with: metricsSocketPath)
                .replacingOccurrences(of: "/etc/subdesk/metrics.htpasswd", with: dir + "/metrics.htpasswd")
                .replacingOccurrences(of: "/var/log/nginx", with: dir + "/logs")
                .replacingOccurrences(of: "/etc/subdesk/tls", with: dir + "/tls")
                .replacingOccurrences(of: "include fastcgi_params;", with: "include /etc/nginx/fastcgi_params;"))
        }
        return lines.joined(separator: "\n")
    }

    /// A throwaway self-signed certificate, named for the example host and for 127.0.0.1 (a
    /// client that checks it, as Prometheus does, finds the address it dialled).
    func makeCertificate() throws {
        try FileManager.default.createDirectory(atPath: dir + "/tls", withIntermediateDirectories: true)
        let made = try runToEnd("/usr/bin/env", ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                                                 "-keyout", dir + "/tls/privkey.pem", "-out", dir + "/tls/fullchain.pem",
                                                 "-subj", "/CN=notifications.example.com", "-days", "2",
                                                 "-addext", "subjectAltName=DNS:notifications.example.com,IP:127.0.0.1"])
        XCTAssertEqual(made.status, 0, made.output)
    }

    static let metricsUser = "prometheus"
    static let metricsPassword = "scrape-me-7d1f"

    /// The /metrics password file, as deploy/README makes it: `user:hash` from `openssl passwd -6`.
    func makePasswordFile() throws {
        let hashed = try runToEnd("/usr/bin/env", ["openssl", "passwd", "-6", Self.metricsPassword])
        XCTAssertEqual(hashed.status, 0, hashed.output)
        let path = dir + "/metrics.htpasswd"
        try "\(Self.metricsUser):\(hashed.output.trimmingCharacters(in: .whitespacesAndNewlines))\n"
            .write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, 0o640)
    }

    /// curl's status and body for https://127.0.0.1:PORT/PATH, the certificate checked
    /// against the test's own, with `user` and `password` (none: no credentials).
    func fetchOverTLS(port: Int, path: String = "/metrics", user: String?, password: String?) throws -> (status: Int, body: String) {
        let out = dir + "/curl-\(UUID().uuidString).out"
        var arguments = ["curl", "--silent", "--noproxy", "*", "--max-time", "30", "--cacert", dir + "/tls/fullchain.pem",
                         "--output", out, "--write-out", "%{http_code}"]
        if let user, let password { arguments += ["--user", "\(user):\(password)"] }
        arguments.append("https://127.0.0.1:\(port)\(path)")
        let ran = try runToEnd("/usr/bin/env", arguments)
        let body = (try? String(contentsOfFile: out, encoding: .utf8)) ?? ""
        return (Int(ran.output.trimmingCharacters(in: .whitespacesAndNewlines).suffix(3)) ?? 0, body)
    }

    /// The metrics listener of a web server in front of serve: the exposition over TLS with
    /// the password (the store's source healthy, `stored` notifications counted), 401 without
    /// it or with a wrong one, and nothing but /metrics.
    func checkMetricsListener(port: Int, stored: Int) throws {
        let scraped = try fetchOverTLS(port: port, user: Self.metricsUser, password: Self.metricsPassword)
        XCTAssertEqual(scraped.status, 200, scraped.body)
        XCTAssertTrue(scraped.body.contains("subdesk_source_up{source=\"store\"} 1\n"), scraped.body)
        let storedCount = scraped.body.split(separator: "\n").filter { $0.hasPrefix("subdesk_notifications_received_total{") && $0.contains("outcome=\"stored\"") }
            .compactMap { $0.split(separator: " ").last.flatMap { Double($0) } }.reduce(0, +)
        XCTAssertEqual(storedCount, Double(stored), scraped.body)
        XCTAssertEqual(try fetchOverTLS(port: port, user: Self.metricsUser, password: "wrong").status, 401)
        XCTAssertEqual(try fetchOverTLS(port: port, user: nil, password: nil).status, 401)
        let webhook = try fetchOverTLS(port: port, path: "/appstore/notifications", user: Self.metricsUser, password: Self.metricsPassword)
        XCTAssertTrue([403, 404].contains(webhook.status), "the metrics listener serves only /metrics: \(webhook)")
    }

    /// nginx with the shipped file: the webhook on one port (over TLS with `tls`), /metrics
    /// over TLS with basic auth on another, both answered by one serve.
    func startNginx(tls: Bool = false) throws -> (port: Int, metricsPort: Int) {
        let nginx = try Self.nginxExecutable()
        try makeCertificate()
        try makePasswordFile()
        let port = try WebServerTests.freeLoopbackPort()
        let metricsPort = try WebServerTests.freeLoopbackPort()
        let config = dir + "/nginx.conf"
        try nginxMain(try nginxSite(port: port, metricsPort: metricsPort, tls: tls)).write(toFile: config, atomically: true, encoding: .utf8)
        let pid = try WebServerTests.spawn(nginx, ["-c", config, "-p", dir], output: dir + "/logs/nginx.out")
        webServer = pid
        try waitForPort(port, pid: pid, log: dir + "/logs/nginx-error.log")
        try waitForPort(metricsPort, pid: pid, log: dir + "/logs/nginx-error.log")
        return (port, metricsPort)
    }

    func testSignedBodiesThroughNginxAndServeAreStored() async throws {
        let db = try startServe()
        let (port, metricsPort) = try startNginx()
        try await postThrough(port: port, db: db, firstInstance: 890_000)
        try await retentionThrough(port: port)
        try checkMetricsListener(port: metricsPort, stored: 40)
    }

    /// The shipped nginx block as it is (TLS on 443), with a throwaway certificate: `nginx -t`.
    func testTheNginxConfigurationPassesNginxCheck() throws {
        let nginx = try Self.nginxExecutable()
        for sub in ["logs", "tmp"] { try FileManager.default.createDirectory(atPath: dir + "/" + sub, withIntermediateDirectories: true) }
        try makeCertificate()
        let config = dir + "/nginx.conf"
        try nginxMain(try nginxSite(port: nil)).write(toFile: config, atomically: true, encoding: .utf8)
        let check = try runToEnd(nginx, ["-t", "-c", config, "-p", dir])
        XCTAssertEqual(check.status, 0, check.output)
        XCTAssertTrue(check.output.contains("test is successful"), check.output)
    }

    /// The shipped Apache virtual host, with mod_proxy_fcgi and mod_ssl loaded and a
    /// throwaway certificate: `apache2 -t`.
    func testTheApacheConfigurationPassesApacheCheck() throws {
        let apache = "/usr/sbin/apache2"
        guard FileManager.default.isExecutableFile(atPath: apache) else {
            return XCTFail("apache2 is not installed (apt-get install apache2; it is in the README's package list)")
        }
        try FileManager.default.createDirectory(atPath: dir + "/logs", withIntermediateDirectories: true)
        try makeCertificate()
        let site = try shipped("apache-serve.conf").replacingOccurrences(of: "/etc/subdesk/tls", with: dir + "/tls")
        try site.write(toFile: dir + "/site.conf", atomically: true, encoding: .utf8)
        let modules = "/usr/lib/apache2/modules"
        try """
            ServerRoot \(dir!)
            Define APACHE_LOG_DIR \(dir!)/logs
            PidFile \(dir!)/apache.pid
            ErrorLog \(dir!)/logs/apache-error.log
            LoadModule mpm_event_module \(modules)/mod_mpm_event.so
            LoadModule authz_core_module \(modules)/mod_authz_core.so
            LoadModule authz_user_module \(modules)/mod_authz_user.so
            LoadModule authn_core_module \(modules)/mod_authn_core.so
            LoadModule authn_file_module \(modules)/mod_authn_file.so
            LoadModule auth_basic_module \(modules)/mod_auth_basic.so
            LoadModule proxy_module \(modules)/mod_proxy.so
            LoadModule proxy_fcgi_module \(modules)/mod_proxy_fcgi.so
            LoadModule socache_shmcb_module \(modules)/mod_socache_shmcb.so
            LoadModule ssl_module \(modules)/mod_ssl.so
            Listen 127.0.0.1:443
            Include \(dir!)/site.conf

            """.write(toFile: dir + "/httpd.conf", atomically: true, encoding: .utf8)
        let check = try runToEnd(apache, ["-t", "-f", dir + "/httpd.conf"])
        XCTAssertEqual(check.status, 0, check.output)
        XCTAssertTrue(check.output.contains("Syntax OK"), check.output)
    }

    // MARK: systemd

    /// The units as shipped, the binary path pointed at the build: `systemd-analyze verify`
    /// says nothing; and the hardening the deployment relies on is there.
    func testTheSystemdUnitsVerifyAndAreHardened() throws {
        let units = dir + "/units"
        try FileManager.default.createDirectory(atPath: units, withIntermediateDirectories: true)
        var service = ""
        for name in ["subdesk-serve.socket", "subdesk-serve-metrics.socket", "subdesk-serve.service"] {
            let text = try shipped("systemd/" + name)
            if name.hasSuffix(".service") { service = text }
            try text.replacingOccurrences(of: "/usr/local/bin/subdesk", with: Self.binary)
                .write(toFile: units + "/" + name, atomically: true, encoding: .utf8)
        }
        let keys = Dictionary(service.split(separator: "\n").compactMap { line -> (String, String)? in
            let parts = line.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, !line.hasPrefix("#") else { return nil }
            return (String(parts[0]), String(parts[1]))
        }, uniquingKeysWith: { $1 })
        XCTAssertEqual(keys["User"], "subdesk")
        XCTAssertEqual(keys["ProtectSystem"], "strict")
        XCTAssertEqual(keys["ReadWritePaths"], "/var/lib/subdesk", "the store's folder is the one writable path")
        XCTAssertEqual(keys["NoNewPrivileges"], "yes")
        XCTAssertEqual(keys["ExecStart"], "/usr/local/bin/subdesk serve")
        let socket = try shipped("systemd/subdesk-serve.socket")
        XCTAssertTrue(socket.contains("SocketGroup=www-data") && socket.contains("SocketMode=0660"), socket)
        let metricsSocket = try shipped("systemd/subdesk-serve-metrics.socket")
        XCTAssertTrue(metricsSocket.contains("SocketGroup=www-data") && metricsSocket.contains("SocketMode=0660"), metricsSocket)
        XCTAssertTrue(metricsSocket.contains("FileDescriptorName=metrics\n") && metricsSocket.contains("Service=subdesk-serve.service\n"),
                      "serve tells the scrapes' socket by its name: \(metricsSocket)")
        let nginxSite = try shipped("nginx-serve.conf")
        XCTAssertTrue(metricsSocket.contains("ListenStream=/run/subdesk/metrics.sock\n") && nginxSite.contains("unix:/run/subdesk/metrics.sock"))

        guard let analyze = ["/usr/bin/systemd-analyze", "/bin/systemd-analyze"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            return  // No systemd here: the keys above are the check.
        }
        let verified = try runToEnd(analyze, ["verify", units + "/subdesk-serve.socket", units + "/subdesk-serve-metrics.socket",
                                              units + "/subdesk-serve.service"])
        XCTAssertEqual(verified.status, 0, verified.output)
        XCTAssertEqual(verified.output.trimmingCharacters(in: .whitespacesAndNewlines), "", verified.output)
    }

    /// The relay's unit (for CGI intake) and the hourly backfill of what Apple failed to
    /// deliver: hardened as serve is, run as the store's user, and verified by systemd.
    func testTheRelayAndReconcileUnitsVerifyAndAreHardened() throws {
        let units = dir + "/relay-units"
        try FileManager.default.createDirectory(atPath: units, withIntermediateDirectories: true)
        var execs: [String: String] = [:]
        for name in ["subdesk-forward.service", "subdesk-reconcile.service", "subdesk-reconcile.timer"] {
            let text = try shipped("systemd/" + name)
            let keys = Dictionary(text.split(separator: "\n").compactMap { line -> (String, String)? in
                let parts = line.split(separator: "=", maxSplits: 1)
                guard parts.count == 2, !line.hasPrefix("#") else { return nil }
                return (String(parts[0]), String(parts[1]))
            }, uniquingKeysWith: { $1 })
            if name.hasSuffix(".service") {
                XCTAssertEqual(keys["User"], "subdesk", name)
                XCTAssertEqual(keys["ProtectSystem"], "strict", name)
                XCTAssertEqual(keys["ReadWritePaths"], "/var/lib/subdesk", name)
                XCTAssertEqual(keys["NoNewPrivileges"], "yes", name)
                execs[name] = keys["ExecStart"]
            } else {
                XCTAssertEqual(keys["OnCalendar"], "hourly")
            }
            try text.replacingOccurrences(of: "/usr/local/bin/subdesk", with: Self.binary)
                .write(toFile: units + "/" + name, atomically: true, encoding: .utf8)
        }
        XCTAssertEqual(execs["subdesk-forward.service"], "/usr/local/bin/subdesk forward run")
        XCTAssertEqual(execs["subdesk-reconcile.service"], "/usr/local/bin/subdesk backfill --only-failures --since -24h --quiet")
        // Each ExecStart's words are ones subdesk takes: --help through the same parser.
        for exec in execs.values {
            let words = exec.split(separator: " ").dropFirst().map(String.init)
            let help = try runToEnd(Self.binary, words + ["--help"])
            XCTAssertEqual(help.status, 0, "\(exec): \(help.output)")
        }
        guard let analyze = ["/usr/bin/systemd-analyze", "/bin/systemd-analyze"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            return
        }
        let verified = try runToEnd(analyze, ["verify", units + "/subdesk-forward.service", units + "/subdesk-reconcile.service",
                                              units + "/subdesk-reconcile.timer"])
        XCTAssertEqual(verified.status, 0, verified.output)
        XCTAssertEqual(verified.output.trimmingCharacters(in: .whitespacesAndNewlines), "", verified.output)
    }
}
