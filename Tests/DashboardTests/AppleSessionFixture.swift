import Foundation
import XCTest
import SubscriptionCore
import SubdeskScenarios
import FakeApple
@testable import Dashboard
import SubdeskTestKit

/// A demo store in a file of its own (workers open their own connections to it), a fake
/// Apple, and a dashboard session whose revalidator talks to that Apple with a fresh key.
/// Both clocks stand still at `DashboardFixture.anchor`.
final class AppleSessionFixture {
    let directory: URL
    let path: String
    let sample: SampleData
    let apple: FakeAppleServer
    let session: DashboardSession
    /// The intake policy of the apps configured.
    let policy: IntakePolicy

    /// - Parameter apps: `[app]` sections (after a `[key team]` section made here that holds
    ///   the fresh key) to configure instead of the demo app alone.
    init(refundPolicy: RefundPolicy = RefundPolicy(), apps: String? = nil) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("subdesk-apple-session-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        path = Store.testLocation(file: directory.appendingPathComponent("demo.db").path)
        sample = try SampleData.locate(explicit: DashboardFixture.repositoryRoot.appendingPathComponent("sample-data").path)
        do { _ = try DemoStoreBuilder(sample: sample, copies: 1).build(into: try Store(path: path), anchor: DashboardFixture.anchor) }
        let key = directory.appendingPathComponent("AuthKey.p8").path
        let made = try ChildOutput.run("/usr/bin/env", ["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", key])
        XCTAssertEqual(made.status, 0, made.output)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: key)
        apple = try FakeAppleServer()
        let apiKey = try AppStoreAPIKey.load(file: key, keyId: "DASHKEY001", issuerId: "57246542-96fe-1a63-e053-0824d011072a",
                                             bundleId: ScenarioBuilder.demoBundleId, warn: { _ in })
        let base = apple.baseURL
        var configuration = RevalidationConfiguration(
            endpoints: AppStoreEndpoints(serverAPI: base.appendingPathComponent("prod"), serverAPISandbox: base.appendingPathComponent("sandbox"),
                                         verifyReceipt: base, verifyReceiptSandbox: base),
            apiKey: apiKey)
        var policy = SampleData.demoPolicy
        if let apps {
            let configured = try ConfiguredApps(configuration: Configuration(
                text: "[key team]\nissuer_id = 57246542-96fe-1a63-e053-0824d011072a\nkey_id = DASHKEY001\nkey_file = \(key)\n\n" + apps,
                source: "config"))
            try configuration.sign(for: configured, warn: { _ in })
            policy = IntakePolicy()
            try policy.serve(configured) { _, _ in "" }
        }
        self.policy = policy
        let storePath = path
        let revalidator = Revalidator(openStore: { try Store(path: storePath) }, configuration: configuration,
                                      verifier: SignedDataVerifier(roots: try sample.trustRoots()), policy: policy,
                                      operatorName: "ana", clock: { DashboardFixture.anchor })
        session = DashboardSession(store: try Store(path: path), state: DashboardFixture.state(width: 120, height: 40),
                                   clock: { DashboardFixture.anchor }, operatorName: "ana", revalidator: .success(revalidator),
                                   refundPolicy: refundPolicy)
        session.start()
    }

    /// Intake for a store of this fixture's, held to its apps (for bodies "delivered" by the fake Apple).
    func intakeMaker() throws -> @Sendable (Store) -> Intake {
        let (roots, policy) = (try sample.trustRoots(), policy)
        return { Intake(store: $0, verifier: SignedDataVerifier(roots: roots), policy: policy) }
    }

    func tearDown() {
        apple.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    func command(_ text: String) {
        session.type(.char(":"))
        session.type(text)
        session.type(.enter)
    }
}
