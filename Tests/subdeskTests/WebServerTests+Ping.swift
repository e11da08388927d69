import Foundation
import XCTest
import FakeApple
@testable import SubscriptionCore

/// `subdesk ping` against a fake Apple that delivers its TEST notification to the project's
/// real lighttpd + CGI set-up (or never does).
extension WebServerTests {
    /// A TEST notification signed by the test CA, as Apple sends one: app facts only.
    static func testNotification(uuid: String) throws -> (body: Data, signedPayload: String) {
        let signer = try JWSSigner.testCA(directory: repoRoot + "/sample-data/test-ca")
        let payload: [String: Any] = ["notificationType": "TEST", "notificationUUID": uuid, "version": "2.0",
                                      "signedDate": DateText.nowMillis(),
                                      "data": ["bundleId": bundleId, "appAppleId": appAppleId, "environment": "Production"]]
        let jws = try signer.sign(payload: try JSONSerialization.data(withJSONObject: payload))
        return (try JSONSerialization.data(withJSONObject: ["signedPayload": jws]), jws)
    }

    /// The options that point subdesk at the fake Apple with a fresh key, and at the site's config.
    func pingArguments(apple: FakeAppleServer) throws -> [String] {
        let key = dir + "/AuthKey_PING.p8"
        let made = try runToEnd("/usr/bin/env", ["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", key])
        XCTAssertEqual(made.status, 0, made.output)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: key)
        let base = apple.baseURL.absoluteString
        return ["ping", "--config", dir + "/config", "--api-key-file", key, "--api-key-id", "PINGKEY001",
                "--api-issuer-id", "57246542-96fe-1a63-e053-0824d011072a", "--server-api-url", base + "/prod",
                "--server-api-sandbox-url", base + "/sandbox"]
    }

    func testPingTimesTheTestNotificationThroughLighttpdAndTheCGI() async throws {
        let lighttpd = try Self.lighttpdExecutable()
        let port = try startServer(lighttpd)
        let webhook = try XCTUnwrap(URL(string: "http://127.0.0.1:\(port)/appstore/notifications"))
        let uuid = UUID().uuidString.lowercased()
        let test = try Self.testNotification(uuid: uuid)
        let apple = try FakeAppleServer()
        defer { apple.stop() }
        apple.route("POST", "/prod/inApps/v1/notifications/test") { _ in
            // Apple answers with a token, then delivers to the app's server URL.
            Task.detached {
                try? await Task.sleep(nanoseconds: 300_000_000)
                _ = await Self.post([Request(body: test.body, kind: .good, uuid: uuid)], to: webhook, concurrency: 1,
                                    deadline: Date().addingTimeInterval(20))
            }
            return .json(["testNotificationToken": "ping-token-1"])
        }
        apple.route("GET", "/prod/inApps/v1/notifications/test/ping-token-1") { _ in
            .json(["signedPayload": test.signedPayload,
                   "sendAttempts": [["attemptDate": DateText.nowMillis(), "sendAttemptResult": "SUCCESS"]]])
        }
        let ping = try runToEnd(CLITests.binary, try pingArguments(apple: apple) + ["--wait", "15"])
        print("subdesk ping: " + ping.output)
        XCTAssertEqual(ping.status, 0, ping.output)
        XCTAssertTrue(ping.output.contains("TEST notification \(uuid) arrived through intake"), ping.output)
        XCTAssertTrue(ping.output.contains("s after it was requested (Apple: 1 attempt:"), ping.output)
        XCTAssertTrue(ping.output.contains("SUCCESS"), ping.output)
        XCTAssertEqual(apple.requests("POST", "/prod/inApps/v1/notifications/test").count, 1)
    }

    func testPingSaysWhatAppleReportsWhenTheTestNotificationNeverArrives() async throws {
        let lighttpd = try Self.lighttpdExecutable()
        _ = try startServer(lighttpd)
        let test = try Self.testNotification(uuid: UUID().uuidString.lowercased())
        let apple = try FakeAppleServer()
        defer { apple.stop() }
        apple.route("POST", "/prod/inApps/v1/notifications/test") { _ in .json(["testNotificationToken": "ping-token-2"]) }
        apple.route("GET", "/prod/inApps/v1/notifications/test/ping-token-2") { _ in
            .json(["signedPayload": test.signedPayload,
                   "sendAttempts": [["attemptDate": 1_780_272_000_000, "sendAttemptResult": "NO_RESPONSE"],
                                    ["attemptDate": 1_780_272_060_000, "sendAttemptResult": "TIMED_OUT"]]])
        }
        let ping = try runToEnd(CLITests.binary, try pingArguments(apple: apple) + ["--wait", "2"])
        XCTAssertEqual(ping.status, 1, ping.output)
        XCTAssertTrue(ping.output.contains("no TEST notification arrived within 2 s (token ping-token-2)"), ping.output)
        XCTAssertTrue(ping.output.contains("2 attempts: 2026-06-01 00:00:00 UTC NO_RESPONSE, 2026-06-01 00:01:00 UTC TIMED_OUT"),
                      ping.output)
    }

    /// A TEST notification that another ping caused is no proof for this one: with the
    /// webhook down, an earlier TEST notification in the store must not be taken for it.
    func testPingIgnoresAnEarlierTestNotificationWhenTheWebhookIsDown() async throws {
        let lighttpd = try Self.lighttpdExecutable()
        let port = try startServer(lighttpd)
        let webhook = try XCTUnwrap(URL(string: "http://127.0.0.1:\(port)/appstore/notifications"))
        let earlierUUID = UUID().uuidString.lowercased()
        let earlier = try Self.testNotification(uuid: earlierUUID)
        let stored = await Self.post([Request(body: earlier.body, kind: .good, uuid: earlierUUID)], to: webhook, concurrency: 1,
                                     deadline: Date().addingTimeInterval(20))
        XCTAssertEqual(stored.first??.status, 200, stored.first??.text ?? "no answer")
        stopServer()

        let ours = try Self.testNotification(uuid: UUID().uuidString.lowercased())
        let apple = try FakeAppleServer()
        defer { apple.stop() }
        apple.route("POST", "/prod/inApps/v1/notifications/test") { _ in .json(["testNotificationToken": "ping-token-3"]) }
        apple.route("GET", "/prod/inApps/v1/notifications/test/ping-token-3") { _ in
            .json(["signedPayload": ours.signedPayload,
                   "sendAttempts": [["attemptDate": DateText.nowMillis(), "sendAttemptResult": "NO_RESPONSE"]]])
        }
        let ping = try runToEnd(CLITests.binary, try pingArguments(apple: apple) + ["--wait", "2"])
        XCTAssertEqual(ping.status, 1, ping.output)
        XCTAssertFalse(ping.output.contains(earlierUUID), ping.output)
        XCTAssertTrue(ping.output.contains("no TEST notification arrived within 2 s (token ping-token-3)"), ping.output)
        XCTAssertFalse(ping.output.contains("arrived through intake"), ping.output)
    }
}
