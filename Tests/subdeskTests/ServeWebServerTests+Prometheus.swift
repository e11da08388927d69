import Foundation
import XCTest
@testable import SubscriptionCore
@testable import SubdeskScenarios
import SubdeskTestKit

/// A real Prometheus scraping `/metrics` as the shipped nginx file serves it: over TLS with
/// basic auth, answered by `subdesk serve` (no process per scrape). The scrape succeeds and
/// counts what arrived, a target with a wrong password is down, and so is the right one once
/// the store is gone from under serve.
extension ServeWebServerTests {
    func testPrometheusScrapesServeThroughNginxOverTLSWithBasicAuth() async throws {
        let prometheus = try WebServerTests.prometheusExecutable()
        let db = try startServe()
        let (port, metricsPort) = try startNginx()

        // Three notifications through the webhook, before Prometheus starts.
        let good = try WebServerTests.signedBodies(count: 3)
        let url = try XCTUnwrap(URL(string: "http://127.0.0.1:\(port)/appstore/notifications"))
        let answers = await WebServerTests.post(good.map { WebServerTests.Request(body: $0.body, kind: .good, uuid: $0.uuid) }, to: url,
                                                concurrency: 1, deadline: Date().addingTimeInterval(60))
        XCTAssertEqual(answers.map { $0?.status }, [200, 200, 200], "\(answers)")

        try Self.metricsPassword.write(toFile: dir + "/right.password", atomically: true, encoding: .utf8)
        try "not-the-password".write(toFile: dir + "/wrong.password", atomically: true, encoding: .utf8)
        func job(_ name: String, password: String) -> String {
            """
              - job_name: \(name)
                scheme: https
                basic_auth:
                  username: \(Self.metricsUser)
                  password_file: \(dir!)/\(password)
                tls_config:
                  ca_file: \(dir!)/tls/fullchain.pem
                static_configs:
                  - targets: ['127.0.0.1:\(metricsPort)']

            """
        }
        try ("""
            global:
              scrape_interval: 1s
              scrape_timeout: 1s
              evaluation_interval: 1s
            scrape_configs:

            """ + job("subdesk", password: "right.password") + job("intruder", password: "wrong.password"))
            .write(toFile: dir + "/prometheus.yml", atomically: true, encoding: .utf8)
        let apiPort = try WebServerTests.freeLoopbackPort()
        let pid = try WebServerTests.spawn(prometheus, ["--config.file=\(dir!)/prometheus.yml", "--storage.tsdb.path=\(dir!)/prometheus-data",
                                                        "--web.listen-address=127.0.0.1:\(apiPort)", "--log.level=warn"],
                                           output: dir + "/logs/prometheus.out")
        defer { WebServerTests.stop(pid) }
        let api = "http://127.0.0.1:\(apiPort)/api/v1"
        func tail(_ path: String) -> String {
            let text: String = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
            return String(text.suffix(2500))
        }
        func log() -> String {
            let prometheusLog: String = tail(dir + "/logs/prometheus.out")
            let nginxLog: String = tail(dir + "/logs/nginx-error.log")
            let serveLog: String = String((serve?.log ?? "").suffix(2500))
            return prometheusLog + "\nnginx: " + nginxLog + "\nserve: " + serveLog
        }

        // The right password: up, and the known values scraped through nginx and serve.
        let up = try await WebServerTests.waitFor(seconds: 30) { try await WebServerTests.query(api, "up{job=\"subdesk\"}") == 1 }
        XCTAssertTrue(up, "Prometheus never scraped /metrics over TLS with the password:\n\(log())")
        let counted = try await WebServerTests.waitFor(seconds: 30) {
            try await WebServerTests.query(api, "sum(subdesk_notifications_received_total{job=\"subdesk\",outcome=\"stored\"})") == 3
        }
        XCTAssertTrue(counted, "the stored counter is not 3 in Prometheus:\n\(log())")
        let storeUp = try await WebServerTests.waitFor(seconds: 30) {
            try await WebServerTests.query(api, "subdesk_source_up{job=\"subdesk\",source=\"store\"}") == 1
        }
        XCTAssertTrue(storeUp, "subdesk_source_up{source=\"store\"} is not 1:\n\(log())")

        // The wrong password: refused (401), and that target is down.
        XCTAssertEqual(try fetchOverTLS(port: metricsPort, user: Self.metricsUser, password: "not-the-password").status, 401)
        let intruderDown = try await WebServerTests.waitFor(seconds: 30) { try await WebServerTests.query(api, "up{job=\"intruder\"}") == 0 }
        XCTAssertTrue(intruderDown, "a target with a wrong password is not down:\n\(log())")
        let intruderSawNothing = try await WebServerTests.query(api, "count(subdesk_build_info{job=\"intruder\"})")
        XCTAssertNil(intruderSawNothing, "a wrong password read metrics")

        // The store gone from under serve: the scrape is answered 5xx and the target is down.
        XCTAssertEqual(rename(db, db + ".moved"), 0)
        // Scrapes within a second of one another share one reading: the next one after it is a 503.
        var gone = (status: 0, body: "")
        let noticed = Date().addingTimeInterval(30)
        repeat {
            gone = try fetchOverTLS(port: metricsPort, user: Self.metricsUser, password: Self.metricsPassword)
            if gone.status == 503 { break }
            usleep(100_000)
        } while Date() < noticed
        XCTAssertEqual(gone.status, 503, gone.body)
        XCTAssertTrue(gone.body.contains("the store could not be read"), gone.body)
        let down = try await WebServerTests.waitFor(seconds: 30) { try await WebServerTests.query(api, "up{job=\"subdesk\"}") == 0 }
        XCTAssertTrue(down, "the target stayed up with the store gone:\n\(log())")
        XCTAssertTrue(serve?.process.isRunning == true, "serve keeps running: \(serve?.log ?? "")")
    }
}
