import Foundation
import XCTest
import SubdeskTestKit
@testable import SubscriptionCore

/// `subdesk metrics` and `subdesk check` as Prometheus, Nagios and on-call see them. Runs on
/// SQLite, and on PostgreSQL when SUBDESK_TEST_POSTGRES is set (the demo store goes there).
final class OnCallMetricsTests: SubdeskTestCase, RunsOnEveryEngine {
    /// The tests that read a store the pass chose; promtool on a generated file, the rules' unit
    /// tests, the README's table and scrapes beside writers of a file run once.
    static let engineTests: Set<String>? = [
        "testTwoRootsOfOneSubjectAreTwoSeriesPrometheusKeeps",
        "testTheLastSweepIsTheLatestDatedAndOneDatedFarAheadIsIgnored",
        "testTheDemoStoresMetricsPassPromtoolAndSayWhatArrived",
        "testMetricsAsACGIAnswerCarryPrometheusHeaders",
        "testCheckSaysOKWarningCriticalAndUnknownWithNagiosExitCodes",
        "testCheckJudgesTheLastPingAsTheRulesDo",
        "testCheckPerfdataSaysUForNoArrivalAndTheReadmeMatchesChecksAndRules",
    ]

    static func promtool() throws -> String {
        for folder in ["/usr/bin", "/usr/local/bin", "/bin"] where FileManager.default.isExecutableFile(atPath: folder + "/promtool") {
            return folder + "/promtool"
        }
        throw XCTSkip("promtool is not installed (apt-get install prometheus): the exposition and the alert rules are not checked by Prometheus's own tools")
    }

    /// promtool's verdict on an exposition: its exit status and whatever it complained of.
    func promtoolCheck(_ exposition: String) throws -> Result {
        try run(["check", "metrics"], stdin: Data(exposition.utf8), executable: try Self.promtool())
    }

    /// Sample lines of `name` (labels and value), comments left out.
    func samples(_ exposition: String, _ name: String) -> [String] {
        exposition.split(separator: "\n").map(String.init).filter { $0.hasPrefix(name + "{") || $0.hasPrefix(name + " ") }
    }

    func value(_ line: String) -> Double? { line.split(separator: " ").last.flatMap { Double($0) } }

    /// A root and its successor with the same subject are two series that Prometheus
    /// keeps: the exposition passes promtool, and promtool's own ingest (the TSDB a scrape
    /// writes to) counts two series, not one.
    func testTwoRootsOfOneSubjectAreTwoSeriesPrometheusKeeps() throws {
        let promtool = try Self.promtool()
        let db = try demoStore()
        var files: [String] = []
        for (name, days) in [("old", "20"), ("successor", "3650")] {
            let cert = dir + "/\(name).pem"
            let made = try runToEnd("/usr/bin/env", ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                                                     "-nodes", "-keyout", dir + "/\(name).key", "-out", cert, "-days", days,
                                                     "-subj", "/CN=Same Root"])
            XCTAssertEqual(made.status, 0, made.output)
            files.append(cert)
        }
        let config = dir + "/roots.conf"
        try "root_ca = \(files.joined(separator: ", "))\n".write(toFile: config, atomically: true, encoding: .utf8)
        let r = try run(["metrics", "--db", db, "--config", config])
        XCTAssertEqual(r.status, 0, r.stderr)
        let check = try promtoolCheck(r.stdout)
        XCTAssertEqual(check.status, 0, "promtool check metrics complained:\n\(check.stdout)\(check.stderr)")
        let roots = samples(r.stdout, "subdesk_trusted_root_expiry_seconds")
        XCTAssertEqual(roots.count, 2, r.stdout)
        XCTAssertEqual(Set(roots.map { $0[..<($0.lastIndex(of: " ") ?? $0.endIndex)] }).count, 2, "two label sets: \(roots)")
        for line in roots {
            XCTAssertTrue(line.contains("subject=\"CN=Same Root\""), line)
            XCTAssertNotNil(line.range(of: #"fingerprint="[0-9a-f]{16}""#, options: .regularExpression), line)
        }
        // Ingested as Prometheus stores a scrape: samples of one label set are one series.
        let openMetrics = "# TYPE subdesk_trusted_root_expiry_seconds gauge\n"
            + roots.map { "\($0) 1780272000\n" }.joined() + "# EOF\n"
        try openMetrics.write(toFile: dir + "/roots.om", atomically: true, encoding: .utf8)
        let blocks = try run(["tsdb", "create-blocks-from", "openmetrics", dir + "/roots.om", dir + "/tsdb"], executable: promtool)
        XCTAssertEqual(blocks.status, 0, blocks.stdout + blocks.stderr)
        let table = blocks.stdout.split(separator: "\n").map { $0.split(separator: " ", omittingEmptySubsequences: true) }
        let header = try XCTUnwrap(table.first { $0.first == "BLOCK" }, blocks.stdout)
        let row = try XCTUnwrap(table.last, blocks.stdout)
        // "NUM SERIES" is the 7th column of each block's row (the header splits it in two words).
        XCTAssertTrue(header.joined(separator: " ").contains("NUM SERIES"), blocks.stdout)
        XCTAssertEqual(row.count >= 7 ? String(row[6]) : "", "2", "Prometheus kept one series of two roots:\n\(blocks.stdout)")
    }

    /// The last sweep is the latest-dated entry, not the one written last: an entry dated
    /// far ahead (written before the server dated entries) is ignored, not the last forever.
    func testTheLastSweepIsTheLatestDatedAndOneDatedFarAheadIsIgnored() throws {
        let db = try demoStore()
        let store = try Store(path: db)
        let now = DateText.nowMillis()
        _ = try store.audit.append(AuditEntry(at: now - 60_000, operatorName: "x", action: .sweep, target: nil, reason: nil, outcome: "checked 3, failed 2"))
        _ = try store.audit.append(AuditEntry(at: now - 120_000, operatorName: "x", action: .sweep, target: nil, reason: nil, outcome: "checked 4, failed 5"))
        _ = try store.audit.append(AuditEntry(at: 4_102_444_800_000, operatorName: "x", action: .sweep, target: nil, reason: nil, outcome: "checked 9, failed 7"))
        let r = try run(["metrics", "--db", db])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(samples(r.stdout, "subdesk_sweep_last_failures").compactMap(value), [2])
        XCTAssertEqual(samples(r.stdout, "subdesk_sweep_last_run_timestamp_seconds").compactMap(value), [Double(now - 60_000) / 1000])
    }

    func testTheDemoStoresMetricsPassPromtoolAndSayWhatArrived() throws {
        let db = try demoStore()
        let r = try run(["metrics", "--db", db])
        XCTAssertEqual(r.status, 0, r.stderr)
        let check = try promtoolCheck(r.stdout)
        XCTAssertEqual(check.status, 0, "promtool check metrics complained:\n\(check.stdout)\(check.stderr)")
        XCTAssertEqual(check.stdout + check.stderr, "", "promtool check metrics has remarks")
        for metric in OnCallMetrics.all {
            XCTAssertTrue(r.stdout.contains("# TYPE \(metric.name) \(metric.kind.rawValue)\n"), "\(metric.name) is not declared")
        }
        let engine = PostgresLocation.isPostgres(db) ? "postgres" : "sqlite"
        XCTAssertEqual(samples(r.stdout, "subdesk_build_info"), ["subdesk_build_info{version=\"\(SubdeskVersion.string)\",commit=\"\(SubdeskVersion.commit)\",built=\"\(SubdeskVersion.buildDate)\",engines=\"\(SubdeskVersion.engines.joined(separator: ","))\",linking=\"\(SubdeskVersion.linking)\",engine=\"\(engine)\"} 1"])
        let received = samples(r.stdout, "subdesk_notifications_received_total")
        let stored = received.filter { $0.contains("outcome=\"stored\"") }.compactMap(value).reduce(0, +)
        let storedInStore = try Store(path: db, mode: .reading).notifications.count()
        XCTAssertEqual(Int(stored), storedInStore, "every stored notification is counted once")
        XCTAssertTrue(received.contains { $0.contains("environment=\"Production\",type=\"SUBSCRIBED\",outcome=\"stored\",reason=\"none\"") })
        XCTAssertTrue(received.contains { $0.contains("outcome=\"rejected\",reason=\"signature\"") },
                      "the demo's tampered body is counted as a signature refusal")
        // Label values come from small fixed sets: no transaction id, uuid or product in any label.
        XCTAssertNil(r.stdout.range(of: #"="[0-9]{10,}""#, options: .regularExpression), "a numeric id became a label value")
        XCTAssertNil(r.stdout.range(of: #"="[0-9a-f]{8}-[0-9a-f]{4}-"#, options: .regularExpression), "a UUID became a label value")
        let age = try XCTUnwrap(samples(r.stdout, "subdesk_last_notification_age_seconds").first.flatMap(value))
        XCTAssertLessThan(age, 600, "the demo was ingested moments ago")
        XCTAssertEqual(samples(r.stdout, "subdesk_store_schema_version").first.flatMap(value), Double(Migrations.latestVersion))
        XCTAssertEqual(samples(r.stdout, "subdesk_refund_requests_open").first.flatMap(value).map { $0 > 0 }, true,
                       "the demo has open refund requests")
        XCTAssertNotNil(samples(r.stdout, "subdesk_refund_next_deadline_seconds").first)
    }

    func testAGeneratedStoresMetricsPassPromtool() throws {
        let db = dir + "/generated.db"
        XCTAssertEqual(try run(["generate", "--subscribers", "2000", "--db", db]).status, 0)
        let r = try run(["metrics", "--db", db])
        XCTAssertEqual(r.status, 0, r.stderr)
        let check = try promtoolCheck(r.stdout)
        XCTAssertEqual(check.status, 0, "promtool check metrics complained:\n\(check.stdout)\(check.stderr)")
        XCTAssertEqual(check.stdout + check.stderr, "")
        XCTAssertNotNil(samples(r.stdout, "subdesk_store_size_bytes").first.flatMap(value))
    }

    func testTheShippedAlertRulesPassTheirUnitTests() throws {
        let promtool = try Self.promtool()
        let folder = Self.repoRoot + "/deploy/prometheus"
        let rules = try run(["check", "rules", folder + "/subdesk.rules.yml"], executable: promtool)
        XCTAssertEqual(rules.status, 0, rules.stdout + rules.stderr)
        let tests = try run(["test", "rules", folder + "/subdesk.rules.test.yml"], executable: promtool)
        XCTAssertEqual(tests.status, 0, tests.stdout + tests.stderr)
        XCTAssertTrue(tests.stdout.contains("SUCCESS"), tests.stdout)
        // Every alert is tested both ways: named in a test that expects it and in one that does not.
        let ruleText = try String(contentsOfFile: folder + "/subdesk.rules.yml", encoding: .utf8)
        let testText = try String(contentsOfFile: folder + "/subdesk.rules.test.yml", encoding: .utf8)
        let alerts = ruleText.split(separator: "\n").compactMap { line -> String? in
            let t = line.trimmingCharacters(in: .whitespaces)
            return t.hasPrefix("- alert: ") ? String(t.dropFirst("- alert: ".count)) : nil
        }
        XCTAssertGreaterThanOrEqual(alerts.count, 9)
        for alert in alerts {
            XCTAssertTrue(testText.contains("alertname: \(alert)\n        exp_alerts:\n          - exp_labels"), "\(alert) is never tested firing")
            XCTAssertTrue(testText.contains("alertname: \(alert)\n        exp_alerts: []") || testText.contains("alertname: \(alert)\n        exp_alerts:\n"),
                          "\(alert) is never tested")
            XCTAssertTrue(ruleText.contains("alert: \(alert)\n"), alert)
        }
        for command in ["subdesk gaps", "subdesk refunds", "subdesk ping", "subdesk quarantine", "subdesk doctor"] {
            XCTAssertTrue(ruleText.contains("`\(command)"), "no alert tells on-call to run \(command)")
        }
    }

    func testTheReadmeListsEveryMetricAsTheTableDeclaresIt() throws {
        let readme = try String(contentsOfFile: Self.repoRoot + "/README.md", encoding: .utf8)
        let table = OnCallMetrics.markdown()
        XCTAssertTrue(readme.contains(table), "README.md's metric list differs from OnCallMetrics.all; it should read:\n\(table)")
    }

    func testMetricsAsACGIAnswerCarryPrometheusHeaders() throws {
        let db = try demoStore()
        let r = try run(["metrics", "--cgi", "--db", db])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.hasPrefix("Status: 200 OK\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n\r\n# HELP "), r.stdout)
        let missing = try run(["metrics", "--cgi", "--db", dir + "/none.db"])
        XCTAssertTrue(missing.stdout.hasPrefix("Status: 503"), "a store that cannot be read is a failed scrape: \(missing.stdout)")
        XCTAssertTrue(missing.stdout.contains("no store at"), missing.stdout)
        // The set-up before the store: a config file the deployment names that is not there.
        let unconfigured = try run(["metrics", "--cgi"], env: ["SUBDESK_CONFIG": dir + "/missing.conf"])
        XCTAssertTrue(unconfigured.stdout.hasPrefix("Status: 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n"),
                      "a missing SUBDESK_CONFIG is a failed scrape, not a web server's 500: \(unconfigured.stdout)")
        XCTAssertTrue(unconfigured.stdout.contains("config file \(dir!)/missing.conf does not exist"), unconfigured.stdout)
    }

    func testCheckSaysOKWarningCriticalAndUnknownWithNagiosExitCodes() throws {
        let db = try demoStore()
        let ok = try run(["check", "--db", db, "--max-rejected-per-hour", "100", "--refund-deadline", "1s"])
        XCTAssertEqual(ok.status, 0, ok.stdout)
        XCTAssertTrue(ok.stdout.hasPrefix("SUBDESK OK - Production intake healthy"), ok.stdout)
        XCTAssertTrue(ok.stdout.contains(" | silence="), ok.stdout)
        XCTAssertTrue(ok.stdout.contains("s;7200;7200;0 rejected_1h=4;100;;0"), ok.stdout)
        XCTAssertEqual(ok.stdout.split(separator: "\n").count, 1, "one status line")

        let rejections = try run(["check", "--db", db, "--max-rejected-per-hour", "1", "--refund-deadline", "1s"])
        XCTAssertEqual(rejections.status, 1, rejections.stdout)
        XCTAssertTrue(rejections.stdout.hasPrefix("SUBDESK WARNING - 4 bodies refused in the last hour (limit 1)"), rejections.stdout)

        // The demo's refund requests were signed hours ago: one is due within 12 hours.
        let refunds = try run(["check", "--db", db, "--max-rejected-per-hour", "100", "--refund-deadline", "12h"])
        XCTAssertEqual(refunds.status, 1, refunds.stdout)
        XCTAssertTrue(refunds.stdout.contains("a refund answer is due in"), refunds.stdout)

        Thread.sleep(forTimeInterval: 1.2)
        let silent = try run(["check", "--db", db, "--max-silence", "1s", "--max-rejected-per-hour", "1"])
        XCTAssertEqual(silent.status, 2, silent.stdout)
        XCTAssertTrue(silent.stdout.hasPrefix("SUBDESK CRITICAL - no Production notification for "), silent.stdout)

        let missing = try run(["check", "--db", dir + "/none.db"])
        XCTAssertEqual(missing.status, 3, missing.stdout)
        XCTAssertTrue(missing.stdout.hasPrefix("SUBDESK UNKNOWN - no store at"), missing.stdout)
        let badThreshold = try run(["check", "--db", db, "--max-silence", "soon"])
        XCTAssertEqual(badThreshold.status, 3, badThreshold.stdout)
        XCTAssertTrue(badThreshold.stdout.contains("--max-silence must be a duration such as 90s, 30m, 2h or 1d, got soon"), badThreshold.stdout)
        let unknownOption = try run(["check", "--db", db, "--max-silense", "2h"])
        XCTAssertEqual(unknownOption.status, 3, unknownOption.stdout + unknownOption.stderr)
    }

    /// The check judges the ping as the alert rules do: a ping whose TEST notification never
    /// came back pages, one merely old warns, and a store never pinged is not judged.
    func testCheckJudgesTheLastPingAsTheRulesDo() throws {
        let db = try demoStore()
        let relaxed = ["check", "--db", db, "--max-rejected-per-hour", "100", "--refund-deadline", "1s"]
        XCTAssertEqual(try run(relaxed).status, 0, "never pinged is not a problem")
        let now = DateText.nowMillis()
        try Store(path: db).recordPing(environment: "Production", requested: now - 60_000, arrived: nil)
        let lost = try run(relaxed)
        XCTAssertEqual(lost.status, 2, lost.stdout)
        XCTAssertTrue(lost.stdout.hasPrefix("SUBDESK CRITICAL - the last ping's TEST notification (Production) did not arrive; run subdesk ping"), lost.stdout)
        try Store(path: db).recordPing(environment: "Production", requested: now - 2 * 86_400_000, arrived: now - 2 * 86_400_000 + 3000)
        let stale = try run(relaxed)
        XCTAssertEqual(stale.status, 1, stale.stdout)
        XCTAssertTrue(stale.stdout.hasPrefix("SUBDESK WARNING - no ping for 2d; run subdesk ping"), stale.stdout)
    }

    /// Scrapes in a loop while four writers ingest into one SQLite store: every scrape answers
    /// at once (a scrape never takes the write lock), every writer finishes, nothing is lost,
    /// and the counters end at exactly what was stored.
    func testScrapesInALoopNeverBlockFourWritersIngesting() throws {
        let db = dir + "/busy.db"
        XCTAssertEqual(try run(["init", "--db", db]).status, 0)
        let count = 400
        let lines = String(decoding: try ReliabilityTests.signedBodies(count: count, firstInstance: 500_000), as: UTF8.self)
            .split(separator: "\n")
        var writers: [Process] = []
        for i in 0..<4 {
            let part = lines.enumerated().filter { $0.offset % 4 == i }.map { $0.element }
            let file = dir + "/part\(i).ndjson"
            try Data((part.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: file))
            writers.append(try startQuietly(["ingest", "--db", db, "--quiet", "--batch-size", "5"] + ReliabilityTests.policyFlags + [file]))
        }
        var scrapes = 0
        var slowest = 0.0
        var previous = 0.0
        while writers.contains(where: { $0.isRunning }) || scrapes < 3 {
            let start = Date()
            let r = try run(["metrics", "--db", db])
            slowest = max(slowest, Date().timeIntervalSince(start))
            XCTAssertEqual(r.status, 0, r.stderr)
            let stored = samples(r.stdout, "subdesk_notifications_received_total").filter { $0.contains("outcome=\"stored\"") }
                .compactMap(value).reduce(0, +)
            XCTAssertGreaterThanOrEqual(stored, previous, "a counter went down between scrapes")
            previous = stored
            scrapes += 1
        }
        for w in writers {
            w.waitUntilExit()
            XCTAssertEqual(w.terminationStatus, 0, "a writer failed while scrapes ran")
        }
        XCTAssertGreaterThan(scrapes, 2)
        // Each scrape is a whole process start; far below the busy timeout a blocked one would wait.
        XCTAssertLessThan(slowest, 2.0, "a scrape waited \(slowest) s: it must never wait for the writers")
        let final = try run(["metrics", "--db", db])
        let stored = samples(final.stdout, "subdesk_notifications_received_total").filter { $0.contains("outcome=\"stored\"") }
            .compactMap(value).reduce(0, +)
        XCTAssertEqual(Int(stored), try Store(path: db, mode: .reading).notifications.count())
        XCTAssertEqual(Int(stored), count)
    }
}

extension OnCallMetricsTests {
    /// Nagios wants an unknown value as `U`, without a unit; the README's example line is
    /// what `check` prints (its thresholds included), and its rules table names each
    /// alert's severity as the rules file labels it.
    func testCheckPerfdataSaysUForNoArrivalAndTheReadmeMatchesChecksAndRules() throws {
        let db = dir + "/fresh.db"
        XCTAssertEqual(try run(["init", "--db", db]).status, 0)
        let fresh = try run(["check", "--db", db])
        XCTAssertTrue(fresh.stdout.contains(" | silence=U;7200;7200;0 "), fresh.stdout)
        XCTAssertFalse(fresh.stdout.contains("=Us"), fresh.stdout)

        let readme = try String(contentsOfFile: Self.repoRoot + "/README.md", encoding: .utf8)
        let demo = try demoStore()
        let ok = try run(["check", "--db", demo, "--max-rejected-per-hour", "100"])
        let budget = try XCTUnwrap(ok.stdout.range(of: #"quarantine_budget=\d+%;\d+;100;0;100"#, options: .regularExpression)
            .map { String(ok.stdout[$0]) }, ok.stdout)
        let limits = budget.drop { $0 != ";" }
        XCTAssertTrue(readme.contains("quarantine_budget=0%" + limits), "README's check example should end like \(budget)")

        let rules = try String(contentsOfFile: Self.repoRoot + "/deploy/prometheus/subdesk.rules.yml", encoding: .utf8)
        var alert: String?
        var checked = 0
        for line in rules.components(separatedBy: "\n") {
            let text = line.trimmingCharacters(in: .whitespaces)
            if text.hasPrefix("- alert: ") { alert = String(text.dropFirst("- alert: ".count)) }
            if text.hasPrefix("severity: "), let name = alert {
                let severity = String(text.dropFirst("severity: ".count))
                XCTAssertTrue(["critical", "warning"].contains(severity), "\(name): \(severity)")
                XCTAssertTrue(readme.contains("| `\(name)` | \(severity) |"), "README's rules table should say \(name) is \(severity)")
                checked += 1
            }
        }
        XCTAssertEqual(checked, 15)
    }
}
