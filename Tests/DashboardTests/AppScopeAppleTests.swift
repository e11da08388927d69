import Foundation
import XCTest
import SubscriptionCore
import SubdeskScenarios
import FakeApple
@testable import Dashboard
import SubdeskTestKit

/// The desk's own calls to Apple with two apps configured: a subscription's call signs for
/// its record's app; `:backfill` and `:ping` go through every app, or only the scoped one,
/// each message naming the app it is for.
final class AppScopeAppleTests: XCTestCase, RunsOnEveryEngine {
    var directory: URL!
    var path: String!
    var apple: FakeAppleServer!
    var session: DashboardSession!
    var sample: SampleData!

    static let apps = [ScenarioBuilder.demoBundleId: ScenarioBuilder.demoAppAppleId, TwoAppFixture.otherBundleId: TwoAppFixture.otherAppleId]

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("subdesk-two-apps-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        path = Store.testLocation(file: directory.appendingPathComponent("apps.db").path)
        try TwoAppFixture.fill(try Store(path: path))
        sample = try SampleData.locate(explicit: DashboardFixture.repositoryRoot.appendingPathComponent("sample-data").path)
        let keyFile = directory.appendingPathComponent("AuthKey.p8").path
        let made = try ChildOutput.run("/usr/bin/env", ["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", keyFile])
        XCTAssertEqual(made.status, 0, made.output)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: keyFile)
        apple = try FakeAppleServer()
        let base = apple.baseURL
        var configuration = RevalidationConfiguration(
            endpoints: AppStoreEndpoints(serverAPI: base.appendingPathComponent("prod"), serverAPISandbox: base.appendingPathComponent("sandbox"),
                                         verifyReceipt: base, verifyReceiptSandbox: base))
        for bundleId in Self.apps.keys {
            configuration.appKeys[bundleId] = try AppStoreAPIKey.load(file: keyFile, keyId: "DASHKEY001", issuerId: "57246542-96fe-1a63-e053-0824d011072a",
                                                                      bundleId: bundleId, warn: { _ in })
        }
        // Each app in Production only: one target per app.
        var policy = TwoAppFixture.policy
        for i in policy.apps.indices { policy.apps[i].environment = .production }
        let storePath = path!
        let revalidator = Revalidator(openStore: { try Store(path: storePath) }, configuration: configuration,
                                      verifier: SignedDataVerifier(roots: try sample.trustRoots()), policy: policy,
                                      operatorName: "ana", clock: { DashboardFixture.anchor })
        var state = DashboardFixture.state(width: 120, height: 40)
        state.apps = TwoAppFixture.apps
        session = DashboardSession(store: try Store(path: path), state: state, clock: { DashboardFixture.anchor }, operatorName: "ana",
                                   revalidator: .success(revalidator))
        session.start()
    }

    override func tearDown() {
        apple?.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// The bundle id each request since `from` was signed for, in order.
    func signedFor(from: Int) -> [String] {
        apple.requests.dropFirst(from).map { FakeAppleServer.tokenBundleId($0) ?? "-" }
    }

    func messages(from: Int) -> [String] { session.state.messages.dropFirst(from).map(\.text) }

    func testBackfillGoesThroughEveryAppOrTheScopedOneNamingEach() throws {
        apple.route("POST", "/prod/inApps/v1/notifications/history", .json(["hasMore": false, "notificationHistory": []]))
        XCTAssertFalse(session.state.withoutServerAPIKey, "each app has its key: the desk may ask Apple")
        var seen = (requests: apple.requests.count, messages: session.state.messages.count)
        session.command("backfill 1")
        XCTAssertTrue(session.waitForBackgroundWork(timeout: 30))
        XCTAssertEqual(signedFor(from: seen.requests), [ScenarioBuilder.demoBundleId, TwoAppFixture.otherBundleId])
        let lines = messages(from: seen.messages).filter { $0.contains("backfill #") }
        XCTAssertEqual(lines.count, 2, "\(messages(from: seen.messages))")
        guard lines.count == 2 else { return }
        XCTAssertTrue(lines[0].hasPrefix("demo (\(ScenarioBuilder.demoBundleId)) Production: backfill #"), lines[0])
        XCTAssertTrue(lines[1].hasPrefix("other (\(TwoAppFixture.otherBundleId)) Production: backfill #"), lines[1])
        XCTAssertEqual(try Store(path: path).backfills.runs().prefix(2).map(\.bundleId), [TwoAppFixture.otherBundleId, ScenarioBuilder.demoBundleId])

        session.command("app other")
        seen = (apple.requests.count, session.state.messages.count)
        session.command("backfill 1")
        XCTAssertTrue(session.waitForBackgroundWork(timeout: 30))
        XCTAssertEqual(signedFor(from: seen.requests), [TwoAppFixture.otherBundleId], "scoped: only the other app is asked")
        XCTAssertTrue(messages(from: seen.messages).contains { $0.hasPrefix("other (\(TwoAppFixture.otherBundleId)) Production: backfill #") },
                      "\(messages(from: seen.messages))")
    }

    /// `:backfill resume` asks the app and environment the unfinished run recorded, whatever
    /// the scope.
    func testBackfillResumeAsksTheAppTheRunRecorded() throws {
        apple.route("POST", "/prod/inApps/v1/notifications/history", .json(["hasMore": false, "notificationHistory": []]))
        let store = try Store(path: path)
        let unfinished = try store.backfills.start(environment: "Production", since: DashboardFixture.anchor - 86_400_000,
                                                 until: DashboardFixture.anchor, onlyFailures: false, operatorName: "ana",
                                                 now: DashboardFixture.anchor, bundleId: TwoAppFixture.otherBundleId)
        let seen = (requests: apple.requests.count, messages: session.state.messages.count)
        session.command("backfill resume")
        XCTAssertTrue(session.waitForBackgroundWork(timeout: 30))
        XCTAssertEqual(signedFor(from: seen.requests), [TwoAppFixture.otherBundleId], "\(messages(from: seen.messages))")
        XCTAssertTrue(messages(from: seen.messages).contains { $0.hasPrefix("other (\(TwoAppFixture.otherBundleId)) Production: backfill #\(unfinished.id)") },
                      "\(messages(from: seen.messages))")
        XCTAssertNil(try store.backfills.unfinished())
    }

    func testPingGoesThroughEveryAppOrTheScopedOneNamingEach() throws {
        let signer = try sample.signer()
        let roots = try sample.trustRoots()
        let storePath = path!
        var uuids: [String: String] = [:]
        for (bundleId, appleId) in Self.apps {
            let uuid = UUID().uuidString.lowercased()
            uuids[bundleId] = uuid
            let payload: [String: Any] = ["notificationType": "TEST", "notificationUUID": uuid, "version": "2.0", "signedDate": DateText.nowMillis(),
                                          "data": ["bundleId": bundleId, "appAppleId": appleId, "environment": "Production"]]
            let jws = try signer.sign(payload: try JSONSerialization.data(withJSONObject: payload))
            let body = try JSONSerialization.data(withJSONObject: ["signedPayload": jws])
            apple.route("GET", "/prod/inApps/v1/notifications/test/ping-\(bundleId)") { _ in
                // Apple "delivers" it as its status is asked: intake stores it under its app.
                if let store = try? Store(path: storePath) {
                    _ = try? Intake(store: store, verifier: SignedDataVerifier(roots: roots), policy: TwoAppFixture.policy).ingest(body)
                }
                return .json(["signedPayload": jws, "sendAttempts": [["attemptDate": DateText.nowMillis(), "sendAttemptResult": "SUCCESS"]]])
            }
        }
        apple.route("POST", "/prod/inApps/v1/notifications/test") { request in
            .json(["testNotificationToken": "ping-" + (FakeAppleServer.tokenBundleId(request) ?? "none")])
        }
        var seen = session.state.messages.count
        session.command("ping")
        XCTAssertTrue(session.waitForBackgroundWork(timeout: 60))
        XCTAssertNil(session.state.pingStarted)
        var lines = messages(from: seen).filter { $0.contains("arrived through intake") }
        XCTAssertEqual(lines.count, 2, "\(messages(from: seen))")
        guard lines.count == 2 else { return }
        XCTAssertTrue(lines[0].hasPrefix("demo (\(ScenarioBuilder.demoBundleId)) Production: TEST notification \(uuids[ScenarioBuilder.demoBundleId]!)"), lines[0])
        XCTAssertTrue(lines[1].hasPrefix("other (\(TwoAppFixture.otherBundleId)) Production: TEST notification \(uuids[TwoAppFixture.otherBundleId]!)"), lines[1])

        session.command("app other")
        let asked = apple.requests("POST", "/prod/inApps/v1/notifications/test").count
        seen = session.state.messages.count
        session.command("ping")
        XCTAssertTrue(session.waitForBackgroundWork(timeout: 60))
        XCTAssertEqual(apple.requests("POST", "/prod/inApps/v1/notifications/test").dropFirst(asked).map { FakeAppleServer.tokenBundleId($0) },
                       [TwoAppFixture.otherBundleId])
        lines = messages(from: seen).filter { $0.contains("arrived through intake") }
        XCTAssertEqual(lines.count, 1, "\(messages(from: seen))")
        guard lines.count == 1 else { return }
        XCTAssertTrue(lines[0].hasPrefix("other (\(TwoAppFixture.otherBundleId)) Production: "), lines[0])
    }

    /// `r` on a subscription asks Apple signed for the app its record is, whichever app the
    /// desk shows; `:extend all` asks for the scoped app's product only.
    func testASubscriptionsCallSignsForItsRecordsAppAndExtendAllNeedsAScope() throws {
        session.command("app other")
        session.type(.enter)
        XCTAssertEqual(session.state.detail?.originalTransactionId, TwoAppFixture.otherId)
        let seen = apple.requests.count
        session.type("r")
        _ = session.waitForBackgroundWork(timeout: 30)
        XCTAssertEqual(Set(signedFor(from: seen)), [TwoAppFixture.otherBundleId], "\(apple.requests.dropFirst(seen).map(\.path))")

        session.command("app all")
        session.command("extend all other.monthly 3 3 outage")
        XCTAssertNil(session.state.confirmation, "two apps and no scope: which app's product is not said")
        XCTAssertTrue(session.state.flash?.text.hasPrefix(":extend all asks for one app's product: scope the desk first with :app NAME") == true,
                      "\(String(describing: session.state.flash))")
        session.command("app other")
        session.command("extend all other.monthly 3 3 outage")
        XCTAssertTrue(session.state.confirmation?.question.hasPrefix("Extend EVERY active subscriber of other.monthly (app other) by 3 days") == true,
                      "\(String(describing: session.state.confirmation))")
    }
}
