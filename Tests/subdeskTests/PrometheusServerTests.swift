import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import SubscriptionCore

/// A real Prometheus server scraping `subdesk metrics --cgi` through the real lighttpd set-up
/// (deploy/lighttpd.conf's loopback /metrics listener) and evaluating the shipped rules: what
/// an on-call engineer's monitoring would see, end to end.
extension WebServerTests {
    /// The silence window of the rules' copy, in seconds: short enough to cross in a test.
    static let shortSilence = 6

    func testPrometheusScrapesCountersThroughLighttpdAndFiresTheSilenceAlert() async throws {
        let prometheus = try Self.prometheusExecutable()
        let lighttpd = try Self.lighttpdExecutable()
        let webhookPort = try startServer(lighttpd)

        // The shipped rules, with only the silence window (and its hold) shortened.
        let shippedRules = try String(contentsOfFile: Self.repoRoot + "/deploy/prometheus/subdesk.rules.yml", encoding: .utf8)
        let silence = "expr: time() - max by (app, environment) (subdesk_last_notification_timestamp_seconds) > 2 * 3600\n        for: 5m"
        XCTAssertTrue(shippedRules.contains(silence), "the silence rule changed: update what this test shortens")
        try shippedRules.replacingOccurrences(of: silence, with: "expr: time() - max by (app, environment) (subdesk_last_notification_timestamp_seconds) > \(Self.shortSilence)\n        for: 1s")
            .write(toFile: dir + "/subdesk.rules.yml", atomically: true, encoding: .utf8)
        try """
            global:
              scrape_interval: 1s
              evaluation_interval: 1s
            rule_files:
              - \(dir!)/subdesk.rules.yml
            scrape_configs:
              - job_name: subdesk
                static_configs:
                  - targets: ['127.0.0.1:\(metricsPort)']

            """.write(toFile: dir + "/prometheus.yml", atomically: true, encoding: .utf8)
        let apiPort = try Self.freeLoopbackPort()
        let pid = try Self.spawn(prometheus, ["--config.file=\(dir!)/prometheus.yml", "--storage.tsdb.path=\(dir!)/prometheus-data",
                                              "--web.listen-address=127.0.0.1:\(apiPort)", "--log.level=warn"],
                                 output: dir + "/logs/prometheus.out")
        defer { Self.stop(pid) }
        let api = "http://127.0.0.1:\(apiPort)/api/v1"
        func log() -> String { ((try? String(contentsOfFile: dir + "/logs/prometheus.out", encoding: .utf8)) ?? "").suffix(3000).description }

        // Up: Prometheus answers and has scraped the empty store through lighttpd.
        let up = try await Self.waitFor(seconds: 20) { try await Self.query(api, "up{job=\"subdesk\"}") == 1 }
        XCTAssertTrue(up, "Prometheus never scraped /metrics successfully:\n\(log())")
        guard up else { return }
        let storedBefore = try await Self.query(api, "sum(subdesk_notifications_received_total{outcome=\"stored\"})") ?? 0
        let rejectedBefore = try await Self.query(api, "sum(subdesk_notifications_received_total{outcome=\"rejected\"})") ?? 0

        // A few notifications through the webhook, one of them refused.
        let good = try Self.signedBodies(count: 3)
        let requests = good.map { Request(body: $0.body, kind: .good, uuid: $0.uuid) }
            + Self.badBodies(tampering: good[0].body, count: 1).map { Request(body: $0, kind: .bad, uuid: nil) }
        let url = try XCTUnwrap(URL(string: "http://127.0.0.1:\(webhookPort)/appstore/notifications"))
        let answers = await Self.post(requests, to: url, concurrency: 2, deadline: Date().addingTimeInterval(30))
        XCTAssertEqual(answers.prefix(3).map { $0?.status }, [200, 200, 200], "\(answers)")
        XCTAssertTrue((400..<500).contains(answers[3]?.status ?? 0), "the tampered body is refused: \(String(describing: answers[3]))")

        let counted = try await Self.waitFor(seconds: 15) {
            try await Self.query(api, "sum(subdesk_notifications_received_total{outcome=\"stored\"})") == storedBefore + 3
        }
        XCTAssertTrue(counted, "the stored counter did not rise by 3 in Prometheus:\n\(log())")
        let rejected = try await Self.query(api, "sum(subdesk_notifications_received_total{outcome=\"rejected\"})")
        XCTAssertEqual(rejected, rejectedBefore + 1, "the rejected counter")
        let environment = try await Self.labelValues(api, "subdesk_last_notification_timestamp_seconds", label: "environment")
        XCTAssertEqual(environment.count, 1, "one environment sent: \(environment)")

        // Intake stops: past the short window the silence alert fires for that environment.
        var alerts: [[String: Any]] = []
        let firing = try await Self.waitFor(seconds: Double(Self.shortSilence) + 20) {
            alerts = try await Self.alerts(api)
            return alerts.contains { ($0["labels"] as? [String: String])?["alertname"] == "SubdeskIntakeSilent" && $0["state"] as? String == "firing" }
        }
        XCTAssertTrue(firing, "SubdeskIntakeSilent never fired: \(alerts)\n\(log())")
        let silent = alerts.first { ($0["labels"] as? [String: String])?["alertname"] == "SubdeskIntakeSilent" }
        XCTAssertEqual((silent?["labels"] as? [String: String])?["environment"], environment.first)
        XCTAssertEqual((silent?["labels"] as? [String: String])?["severity"], "critical")
        XCTAssertFalse(alerts.contains { ($0["labels"] as? [String: String])?["alertname"] == "SubdeskMetricsScrapeFailing" },
                       "the scrape works: \(alerts)")
    }

    // MARK: Prometheus

    /// prometheus from PATH; skips the test without it.
    static func prometheusExecutable() throws -> String {
        let folders = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init) + ["/usr/bin", "/usr/local/bin"]
        for folder in folders where FileManager.default.isExecutableFile(atPath: folder + "/prometheus") {
            return folder + "/prometheus"
        }
        throw XCTSkip("prometheus is not installed (apt-get install prometheus): the scrape and the alert rules are not run end to end")
    }

    /// SIGTERM, then SIGKILL after ten seconds; always reaped.
    static func stop(_ pid: pid_t) {
        kill(pid, SIGTERM)
        let patience = Date().addingTimeInterval(10)
        while Date() < patience {
            if !isRunning(pid) { return }
            Thread.sleep(forTimeInterval: 0.05)
        }
        kill(pid, SIGKILL)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
    }

    /// Polls `condition` every 250 ms until it holds or `seconds` pass; a failing request
    /// (Prometheus still starting) counts as not yet.
    static func waitFor(seconds: Double, _ condition: () async throws -> Bool) async throws -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if (try? await condition()) == true { return true }
            try await Task.sleep(nanoseconds: 250_000_000)
        }
        return false
    }

    static func get(_ url: String) async throws -> [String: Any] {
        // libcurl under URLSession honours proxy variables; Prometheus is on the loopback.
        for name in ["http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"] { unsetenv(name) }
        // A refusal throws without recording a failure: Prometheus answers 503 while it starts,
        // and `waitFor` counts that as not yet; a test that gets it outside `waitFor` fails
        // with the thrown error.
        guard let address = URL(string: url) else { throw PrometheusAnswer(url: url, text: "not a URL") }
        let (data, _) = try await URLSession.shared.data(from: address)
        guard let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any],
              object["status"] as? String == "success" else {
            throw PrometheusAnswer(url: url, text: String(decoding: data.prefix(500), as: UTF8.self))
        }
        return object
    }

    struct PrometheusAnswer: Error, CustomStringConvertible {
        let url: String
        let text: String
        var description: String { "\(url) answered no success: \(text)" }
    }

    /// The value of an instant query that returns one sample, or nil when it returns none.
    static func query(_ api: String, _ promql: String) async throws -> Double? {
        let encoded = try XCTUnwrap(promql.addingPercentEncoding(withAllowedCharacters: .alphanumerics))
        let object = try await get("\(api)/query?query=\(encoded)")
        let result = (object["data"] as? [String: Any])?["result"] as? [[String: Any]] ?? []
        guard let value = result.first?["value"] as? [Any], let text = value.last as? String else { return nil }
        return Double(text)
    }

    /// The values `label` takes among `metric`'s series.
    static func labelValues(_ api: String, _ metric: String, label: String) async throws -> [String] {
        let object = try await get("\(api)/query?query=\(metric)")
        let result = (object["data"] as? [String: Any])?["result"] as? [[String: Any]] ?? []
        return result.compactMap { ($0["metric"] as? [String: String])?[label] }.sorted()
    }

    static func alerts(_ api: String) async throws -> [[String: Any]] {
        let object = try await get("\(api)/alerts")
        return (object["data"] as? [String: Any])?["alerts"] as? [[String: Any]] ?? []
    }
}
