import Foundation
import XCTest
import SubscriptionCore
import SubdeskScenarios
import FakeApple
@testable import Dashboard
import SubdeskTestSupport

/// A demo store in a file of its own (workers open their own connections to it), a fake
/// Apple, and a dashboard session whose revalidator talks to that Apple with a fresh key.
/// Both clocks stand still at `DashboardFixture.anchor`.
final class AppleSessionFixture {
    let directory: URL
    let path: String
    let sample: SampleData
    let apple: FakeAppleServer
    let session: DashboardSession

    init(refundPolicy: RefundPolicy = RefundPolicy()) throws {
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
        let configuration = RevalidationConfiguration(
            endpoints: AppStoreEndpoints(serverAPI: base.appendingPathComponent("prod"), serverAPISandbox: base.appendingPathComponent("sandbox"),
                                         verifyReceipt: base, verifyReceiptSandbox: base),
            apiKey: apiKey)
        let storePath = path
        let revalidator = Revalidator(openStore: { try Store(path: storePath) }, configuration: configuration,
                                      verifier: SignedDataVerifier(roots: try sample.trustRoots()), policy: SampleData.demoPolicy,
                                      operatorName: "ana", clock: { DashboardFixture.anchor })
        session = DashboardSession(store: try Store(path: path), state: DashboardFixture.state(width: 120, height: 40),
                                   clock: { DashboardFixture.anchor }, operatorName: "ana", revalidator: .success(revalidator),
                                   refundPolicy: refundPolicy)
        session.start()
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
