import Foundation
import XCTest
import FakeApple
@testable import SubscriptionCore
import SubdeskScenarios
import SubdeskTestKit

/// A temporary store, a local server playing Apple, and revalidators wired to both.
final class RevalidationFixture {
    let directory: URL
    let server: FakeAppleServer
    let storePath: String
    /// Revalidations run at the scenario anchor, like the other core tests.
    var now: Millis = TestKit.anchor
    var sharedSecret = "0123456789abcdef0123456789abcdef"

    /// Small waits so the retry tests stay quick.
    static let fastHTTP = HTTPPolicy(timeout: 3, maxAttempts: 3, initialBackoff: 0.01, maxBackoff: 0.05,
                                     maxRetryAfter: 5, jitter: 0)
    static let keyId = "TESTKEY001"
    static let issuerId = "57246542-96fe-1a63-e053-0824d011072a"

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("subdesk-reval-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        storePath = Store.testLocation(file: directory.appendingPathComponent("store.db").path)
        server = try FakeAppleServer()
    }

    func tearDown() {
        server.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    var endpoints: AppStoreEndpoints {
        let base = server.baseURL
        return AppStoreEndpoints(serverAPI: base.appendingPathComponent("prod"),
                                 serverAPISandbox: base.appendingPathComponent("sandbox"),
                                 verifyReceipt: base.appendingPathComponent("verifyReceipt"),
                                 verifyReceiptSandbox: base.appendingPathComponent("sandbox/verifyReceipt"))
    }

    func apiKey() throws -> AppStoreAPIKey {
        try AppStoreAPIKey.load(file: RevalidationKeys.privateKeyFile, keyId: Self.keyId, issuerId: Self.issuerId,
                                bundleId: ScenarioBuilder.demoBundleId, warn: { XCTFail("unexpected warning: \($0)") })
    }

    func revalidator(apiKey useKey: Bool = true, http: HTTPPolicy = RevalidationFixture.fastHTTP,
                     policy: IntakePolicy = TestKit.policy, maxConnections: Int = 8,
                     onRetry: (@Sendable (HTTPRetryNotice) -> Void)? = nil) throws -> Revalidator {
        var configuration = RevalidationConfiguration(endpoints: endpoints, http: http, apiKey: useKey ? try apiKey() : nil,
                                                      sharedSecret: sharedSecret)
        configuration.onRetry = onRetry
        let path = storePath
        let at = now
        return Revalidator(openStore: { try Store(path: path) }, configuration: configuration,
                           verifier: SignedDataVerifier(roots: TestKit.roots), policy: policy, operatorName: "ana",
                           maxConnections: maxConnections, clock: { at })
    }

    func openStore() throws -> Store { try Store(path: storePath) }

    /// The `subdesk` built beside these tests, to run as a user would.
    static func subdeskBinary() throws -> String {
        guard let binary = ChildOutput.programBesideThisOne("subdesk") else { throw XCTSkip("no subdesk beside the tests") }
        return binary
    }

    /// The options that point `subdesk` at this store, the test CA and this fake Apple with the test key.
    var commandLineFlags: [String] {
        let base = server.baseURL.absoluteString
        return ["--db", storePath, "--root-ca", TestKit.repoRoot + "/sample-data/test-ca/root.der",
                "--bundle-id", ScenarioBuilder.demoBundleId, "--app-apple-id", String(ScenarioBuilder.demoAppAppleId),
                "--api-key-file", RevalidationKeys.privateKeyFile, "--api-key-id", RevalidationFixture.keyId,
                "--api-issuer-id", RevalidationFixture.issuerId, "--server-api-url", base + "/prod",
                "--server-api-sandbox-url", base + "/sandbox"]
    }

    /// The same options without the API key settings, as on a machine where nobody set them.
    var commandLineFlagsWithoutKey: [String] {
        var flags: [String] = []
        var words = commandLineFlags[...]
        while let word = words.popFirst() {
            if ["--api-key-file", "--api-key-id", "--api-issuer-id"].contains(word) { _ = words.popFirst(); continue }
            flags.append(word)
        }
        return flags
    }

    /// Runs the `subdesk` beside the tests with `arguments`, stdout and stderr together, in
    /// a home of its own (no config file of this machine's).
    func subdesk(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let home = directory.path
        return try ChildOutput.run(try RevalidationFixture.subdeskBinary(), arguments,
                                   environment: ["XDG_CONFIG_HOME": home, "HOME": home, "PATH": "/usr/bin:/bin"])
    }

    /// Stores a subscription the way production does: a signed notification through intake,
    /// derived as of `receivedAt`.
    @discardableResult
    func seed(type: String = "SUBSCRIBED", subtype: String? = "INITIAL_BUY", transaction: [String: Any],
              renewal: [String: Any]?, receivedAt: Millis) throws -> IntakeOutcome {
        let store = try openStore()
        let environment = transaction["environment"] as? String ?? "Production"
        let body = TestKit.body(type: type, subtype: subtype, signed: transaction["signedDate"] as? Millis ?? TestKit.anchor,
                                environment: environment, transaction: transaction, renewal: renewal)
        let outcome = try TestKit.intake(store).ingest(body, receivedAt: receivedAt)
        guard case .stored = outcome else { throw RevalidationFixture.Failure("seeding was not stored: \(outcome)") }
        return outcome
    }

    func state(_ otid: String) throws -> SubscriptionState? {
        try openStore().subscriptions.find(originalTransactionId: otid)?.state
    }

    // MARK: Apple's answers

    static func sign(_ object: [String: Any]) -> String {
        try! TestKit.signer.sign(payload: TestKit.json(object))
    }

    /// A Get All Subscription Statuses body.
    static func statuses(environment: String = "Production",
                         _ entries: [(status: Int, transaction: [String: Any], renewal: [String: Any]?)]) -> FakeAppleServer.Response {
        let last: [[String: Any]] = entries.map { entry in
            var o: [String: Any] = ["originalTransactionId": entry.transaction["originalTransactionId"] as! String,
                                    "status": entry.status, "signedTransactionInfo": sign(entry.transaction)]
            if let r = entry.renewal { o["signedRenewalInfo"] = sign(r) }
            return o
        }
        var body: [String: Any] = ["environment": environment, "bundleId": ScenarioBuilder.demoBundleId,
                                   "data": [["subscriptionGroupIdentifier": "21000001", "lastTransactions": last]]]
        if environment == "Production" { body["appAppleId"] = ScenarioBuilder.demoAppAppleId }
        return .json(body)
    }

    /// One Get Transaction History page.
    static func history(environment: String = "Production", _ transactions: [[String: Any]], revision: String = "rev-end",
                        hasMore: Bool = false) -> FakeAppleServer.Response {
        var body: [String: Any] = ["environment": environment, "bundleId": ScenarioBuilder.demoBundleId,
                                   "revision": revision, "hasMore": hasMore, "signedTransactions": transactions.map(sign)]
        if environment == "Production" { body["appAppleId"] = ScenarioBuilder.demoAppAppleId }
        return .json(body)
    }

    static func apiError(_ status: Int, code: Int, message: String, headers: [String: String] = [:]) -> FakeAppleServer.Response {
        .json(["errorCode": code, "errorMessage": message], status: status, headers: headers)
    }

    /// Routes statuses and history for `transactionId` under `prefix` (`/prod` or `/sandbox`).
    func answer(_ transactionId: String, prefix: String = "/prod", statuses: FakeAppleServer.Response,
                history: FakeAppleServer.Response) {
        server.route("GET", "\(prefix)/inApps/v1/subscriptions/\(transactionId)", statuses)
        server.route("GET", "\(prefix)/inApps/v2/history/\(transactionId)", history)
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}

/// A throwaway P-256 key for the API token, made with the openssl CLI once per test run (and
/// removed at its end).
enum RevalidationKeys {
    static let directory: String = {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("subdesk-reval-keys-\(getpid())").path
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        // Removed when the test run ends: nothing of a run is left in the temporary folder.
        atexit { try? FileManager.default.removeItem(atPath: RevalidationKeys.directory) }
        return dir
    }()

    /// PKCS#8 PEM, as App Store Connect hands out `.p8` files; mode 600.
    static let privateKeyFile: String = {
        let path = directory + "/AuthKey_TEST.p8"
        if !FileManager.default.fileExists(atPath: path) {
            let result = run(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", path])
            precondition(result.status == 0, "openssl genpkey failed: \(result.output)")
        }
        try? FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        return path
    }()

    static let publicKeyFile: String = {
        let path = directory + "/AuthKey_TEST.pub.pem"
        let result = run(["pkey", "-in", privateKeyFile, "-pubout", "-out", path])
        precondition(result.status == 0, "openssl pkey failed: \(result.output)")
        return path
    }()

    @discardableResult
    static func run(_ arguments: [String]) -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["openssl"] + arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        do { try process.run() } catch { return (-1, "\(error)") }
        let data = ChildOutput.readAll(pipe.fileHandleForReading)
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    /// Whether `signature` (raw r||s) over `message` verifies with the key's public half,
    /// checked by the openssl CLI rather than by the code under test.
    static func opensslVerifies(message: Data, rawSignature: Data) -> Bool {
        guard let der = ES256.derSignature(fromRaw: rawSignature) else { return false }
        let base = directory + "/verify-\(UUID().uuidString)"
        _ = FileManager.default.createFile(atPath: base + ".msg", contents: message)
        _ = FileManager.default.createFile(atPath: base + ".sig", contents: der)
        defer {
            try? FileManager.default.removeItem(atPath: base + ".msg")
            try? FileManager.default.removeItem(atPath: base + ".sig")
        }
        let result = run(["dgst", "-sha256", "-verify", publicKeyFile, "-signature", base + ".sig", base + ".msg"])
        return result.status == 0 && result.output.contains("Verified OK")
    }
}
