import FakeApple
import Foundation
import XCTest
@testable import SubscriptionCore
@testable import SubdeskScenarios
import SubdeskTestKit

/// Apple's sandbox performance test of the real-time URL, as the fake runs it for real: 100
/// signed requests, 10 at a time, over TLS to nginx (the shipped site, the test's own
/// certificate) and through it to serve's responder, judged by the thresholds the fake's
/// result carries; `subdesk retention performance-test` starts it and reads the verdict.
extension ServeWebServerTests {
    func testApplesPerformanceTestThroughNginxOverTLSIsJudgedByItsThresholds() throws {
        let rules = dir + "/retention.rules"
        try "rule everyone: locale=en-US -> message=m-stay\n".write(toFile: rules, atomically: true, encoding: .utf8)
        let db = try startServe(retentionRules: rules)
        let port = try startNginx(tls: true).port

        let apple = try FakeAppleServer()
        defer { apple.stop() }
        let fake = FakeRetentionMessaging()
        fake.install(on: apple)
        let trusted = dir + "/tls/fullchain.pem"
        fake.performanceTest = FakeRetentionPerformanceTest(trustedCertificate: trusted) { otid in
            try ServeRetentionTests.request(otid: otid, environment: "Sandbox")
        }
        let console = ["--db", db, "--operator", "ana"] + (try appleArguments(apple))
        let url = "https://127.0.0.1:\(port)/appstore/retention"
        let set = try run(["retention", "realtime-url", "set", url, "--environment", "Sandbox"] + console)
        XCTAssertEqual(set.status, 0, set.stderr)
        func performanceTest() throws -> (status: Int32, json: [String: Any]) {
            let r = try run(["retention", "performance-test", "--transaction", "2000000000000001", "--wait", "120", "--json"] + console)
            return (r.status, try XCTUnwrap(try json(r.stdout) as? [String: Any], r.stdout + r.stderr))
        }
        func failures(_ json: [String: Any]) -> [String: Int] { json["failures"] as? [String: Int] ?? [:] }

        // serve answers each request with the rule's message, well inside 500 ms.
        let passed = try performanceTest()
        XCTAssertEqual(passed.json["result"] as? String, "PASS", "\(passed.json)\n\(serve?.log ?? "")")
        XCTAssertEqual(passed.status, 0)
        XCTAssertEqual(passed.json["target"] as? String, url)
        let rate = try XCTUnwrap(passed.json["successRate"] as? Int)
        XCTAssertGreaterThanOrEqual(rate, 95)
        XCTAssertEqual(rate + failures(passed.json).values.reduce(0, +), 100, "each of the 100 requests a success or a failure: \(passed.json)")
        let times = try XCTUnwrap(passed.json["responseTimes"] as? [String: Int])
        XCTAssertLessThanOrEqual(try XCTUnwrap(times["p99"]), 500)
        XCTAssertLessThanOrEqual(try XCTUnwrap(times["p50"]), try XCTUnwrap(times["p99"]))
        XCTAssertEqual((passed.json["config"] as? [String: Int])?["maxConcurrentRequests"], 10)
        let decided = try XCTUnwrap(Int(try engineQuery(db, "SELECT count(*) FROM retention_decisions")))
        XCTAssertGreaterThanOrEqual(decided, rate, "serve logs each decision")

        // The tester trusts another certificate, not the one nginx shows: every request a TLS_ISSUE.
        let other = dir + "/other.pem"
        let made = try runToEnd("/usr/bin/env", ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                                                 "-keyout", dir + "/other-key.pem", "-out", other, "-subj", "/CN=elsewhere.example.com", "-days", "2"])
        XCTAssertEqual(made.status, 0, made.output)
        fake.performanceTest?.trustedCertificate = other
        let untrusted = try performanceTest()
        XCTAssertEqual(untrusted.json["result"] as? String, "FAIL", "\(untrusted.json)")
        XCTAssertEqual(untrusted.status, 1)
        XCTAssertEqual(failures(untrusted.json), ["TLS_ISSUE": 100], "\(untrusted.json)")
        XCTAssertEqual(untrusted.json["successRate"] as? Int, 0)
        fake.performanceTest?.trustedCertificate = trusted

        // serve gone: nginx answers 502 to each, and the test fails on its success rate.
        serve?.stop()
        let gone = try performanceTest()
        XCTAssertEqual(gone.json["result"] as? String, "FAIL", "\(gone.json)")
        XCTAssertEqual(failures(gone.json), ["UNSUCCESSFUL_HTTP_RESPONSE_CODE": 100])
        XCTAssertEqual(try XCTUnwrap(Int(try engineQuery(db, "SELECT count(*) FROM retention_decisions"))), decided)
    }
}
