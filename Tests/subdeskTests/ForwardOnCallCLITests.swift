import Foundation
import XCTest
@testable import SubscriptionCore
@testable import subdesk
import SubdeskTestKit

/// The relay from the on-call side: `doctor` on each `[forward]` target's set-up, `check`'s
/// perfdata and thresholds, and the metrics of a configured target.
final class ForwardOnCallCLITests: SubdeskTestCase {
    /// A TCP socket listening on the loopback (connections wait in its backlog, never
    /// accepted), and a port nothing listens on.
    func ports() throws -> (listening: Int32, port: Int, closed: Int) {
        let (listening, port) = try LoopbackSocket.bound()
        XCTAssertEqual(listen(listening, 8), 0)
        let (spare, closed) = try LoopbackSocket.bound()
        close(spare)
        return (listening, port, closed)
    }

    func secret(_ name: String, mode: Int) throws -> String {
        let path = dir + "/\(name)-secret"
        try "s3cret-\(name)\n".write(toFile: path, atomically: true, encoding: .utf8)
        XCTAssertEqual(chmod(path, mode_t(mode)), 0)
        return path
    }

    func lines(_ out: String, _ prefix: String) -> [String] {
        out.split(separator: "\n").map(String.init).filter { $0.contains(prefix) }
    }

    func testDoctorChecksEachTargetsURLAndSecretFileAndProbesOnlyWhenAsked() throws {
        let (listening, port, closed) = try ports()
        defer { close(listening) }
        let config = dir + "/forward.conf"
        try """
            [forward ok]
            url = https://127.0.0.1:\(port)/in
            secret_file = \(try secret("ok", mode: 0o600))
            [forward open]
            url = http://localhost:\(closed)/in
            secret_file = \(try secret("open", mode: 0o644))
            [forward missing]
            url = http://192.0.2.1:\(closed)/in
            allow_http = yes
            secret_file = \(dir!)/no-such-secret

            """.write(toFile: config, atomically: true, encoding: .utf8)
        let db = dir + "/store.db"
        XCTAssertEqual(try run(["init", "--db", db]).status, 0)

        let plain = try run(["doctor", "--db", db, "--config", config])
        XCTAssertEqual(plain.status, 1, "a missing secret file fails doctor:\n\(plain.stdout)")
        XCTAssertEqual(lines(plain.stdout, "relay url"), [
            "OK    relay url     ok: https://127.0.0.1:\(port)/in",
            "OK    relay url     open: http://localhost:\(closed)/in (plain http, to this host)",
            "WARN  relay url     missing: http://192.0.2.1:\(closed)/in is plain http to 192.0.2.1 (allow_http = yes): "
                + "others on the way can read the deliveries and their signatures; use https",
        ])
        XCTAssertEqual(lines(plain.stdout, "relay secret"), [
            "OK    relay secret  ok: \(dir!)/ok-secret (mode 600)",
            "WARN  relay secret  open: [forward open] secret file \(dir!)/open-secret is readable by others (mode 644); chmod 600 it: "
                + "whoever reads it can sign deliveries the target accepts",
            "FAIL  relay secret  missing: [forward missing] secret file \(dir!)/no-such-secret does not exist: "
                + "no delivery can be signed, so none is sent",
        ])
        XCTAssertEqual(lines(plain.stdout, "relay probe"), [], "no probe without --probe")

        let probed = try run(["doctor", "--db", db, "--config", config, "--probe"])
        let probes = lines(probed.stdout, "relay probe")
        XCTAssertEqual(probes.count, 3, probed.stdout)
        XCTAssertEqual(probes.first, "OK    relay probe   ok: 127.0.0.1:\(port) takes connections (nothing was sent)")
        XCTAssertTrue(probes.dropFirst().first?.hasPrefix("WARN  relay probe   open: localhost:\(closed) took no connection: ") ?? false, probed.stdout)
        XCTAssertTrue(probes.last?.hasPrefix("WARN  relay probe   missing: 192.0.2.1:\(closed) took no connection: ") ?? false, probed.stdout)
        XCTAssertTrue(probes.allSatisfy { !$0.hasPrefix("WARN") || $0.hasSuffix("deliveries wait in the outbox until max_age (subdesk forward status)") })

        // Nothing was sent: the listener holds one connection, never a byte of a delivery.
        var peer = sockaddr()
        var length = socklen_t(MemoryLayout<sockaddr>.size)
        let accepted = accept(listening, &peer, &length)
        XCTAssertGreaterThanOrEqual(accepted, 0)
        var byte: UInt8 = 0
        XCTAssertEqual(recv(accepted, &byte, 1, 0), 0, "the probe closes without sending")
        close(accepted)
    }

    func testTheProbeOfAHostThatDoesNotAnswerGivesUpAtItsTimeout() {
        let start = Date()
        let problem = ForwardProbe.problem(host: "192.0.2.1", port: 443, timeout: 0.5)
        XCTAssertNotNil(problem)
        XCTAssertLessThan(Date().timeIntervalSince(start), 5)
        XCTAssertNil(ForwardProbe.problem(host: "[::1]", port: 9, timeout: 0.5).flatMap { $0.contains("does not resolve") ? $0 : nil })
    }

    func testCheckGivesEachTargetsLagAsPerfdataAndWarnsPastTheLimitOrOnADeath() throws {
        let now: Millis = 1_780_000_000_000
        var reading = OnCallReading(now: now, engine: .sqlite)
        reading.intakeCounts = [.init(environment: "Production", type: "DID_RENEW", outcome: "stored", reason: "", count: 1, last: now - 1_000)]
        var crm = ForwardReading(target: "crm")
        crm.pending = 3
        crm.oldestPending = now - 125_000
        var odd = ForwardReading(target: "team hub=1")
        odd.deadLastDay = 0
        reading.forwarding = [crm, odd]
        let inputs = OnCallInputs(reading: reading, roots: [], quarantineBudgetBytes: nil)
        let calm = MetricsCommand.evaluate(inputs, environment: "Production", thresholds: .standard)
        XCTAssertEqual(calm.status, 0, calm.line)
        XCTAssertTrue(calm.line.hasSuffix(" forward_lag_crm=125s;600;;0 forward_dead_1d_crm=0;0;;0 "
                                          + "forward_lag_team_hub_1=0s;600;;0 forward_dead_1d_team_hub_1=0;0;;0"), calm.line)

        var strict = OnCallThresholds.standard
        strict.maxForwardLag = 60_000
        let lagging = MetricsCommand.evaluate(inputs, environment: "Production", thresholds: strict)
        XCTAssertEqual(lagging.status, 1, lagging.line)
        XCTAssertTrue(lagging.line.hasPrefix("SUBDESK WARNING - forward target crm: the oldest of 3 pending deliveries has waited 2m (limit 60s)"),
                      lagging.line)
        XCTAssertTrue(lagging.line.contains(" forward_lag_crm=125s;60;;0 "), lagging.line)

        reading.forwarding[1].deadLastDay = 1
        let died = MetricsCommand.evaluate(OnCallInputs(reading: reading, roots: [], quarantineBudgetBytes: nil),
                                           environment: "Production", thresholds: .standard)
        XCTAssertEqual(died.status, 1, died.line)
        XCTAssertTrue(died.line.contains("forward target team hub=1: 1 delivery died in the last day"), died.line)
        XCTAssertTrue(died.line.contains(" forward_dead_1d_team_hub_1=1;0;;0"), died.line)
    }

    func testACheckAndAScrapeOfAStoreWithAConfiguredTargetSayItsOutbox() throws {
        let config = dir + "/forward.conf"
        try "[forward crm]\nurl = https://crm.example.com/in\nsecret_file = /nonexistent\n".write(toFile: config, atomically: true, encoding: .utf8)
        let db = dir + "/store.db"
        XCTAssertEqual(try run(["init", "--db", db]).status, 0)
        let check = try run(["check", "--db", db, "--config", config, "--max-forward-lag", "5m"])
        XCTAssertTrue(check.stdout.contains(" forward_lag_crm=0s;300;;0 forward_dead_1d_crm=0;0;;0"), check.stdout)
        let bad = try run(["check", "--db", db, "--config", config, "--max-forward-lag", "soon"])
        XCTAssertEqual(bad.status, 3)
        XCTAssertTrue(bad.stdout.hasPrefix("SUBDESK UNKNOWN - --max-forward-lag must be a duration"), bad.stdout)
        let metrics = try run(["metrics", "--db", db, "--config", config])
        XCTAssertEqual(metrics.status, 0, metrics.stderr)
        for line in ["subdesk_forward_pending{target=\"crm\"} 0", "subdesk_forward_dead{target=\"crm\"} 0",
                     "subdesk_forward_delivered_last_hour{target=\"crm\"} 0"] {
            XCTAssertTrue(metrics.stdout.contains(line + "\n"), line)
        }
        XCTAssertFalse(metrics.stdout.contains("subdesk_forward_oldest_pending_age_seconds{"))
    }
}
