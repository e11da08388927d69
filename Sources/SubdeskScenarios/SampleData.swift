import Foundation
import SubscriptionCore

/// The project's `sample-data/` folder: scenarios and the TEST ONLY demo CA.
public struct SampleData {
    public let directory: String

    public var scenariosDirectory: String { directory + "/scenarios" }
    public var testCADirectory: String { directory + "/test-ca" }
    public var testRootPath: String { testCADirectory + "/root.der" }

    /// Finds `sample-data/`: `$SUBDESK_SAMPLE_DATA`, else the nearest one above the working
    /// directory or above the executable (a build folder sits inside the checkout).
    public static func locate(explicit: String? = nil,
                              environment: [String: String] = ProcessInfo.processInfo.environment) throws -> SampleData {
        if let path = explicit ?? environment["SUBDESK_SAMPLE_DATA"], !path.isEmpty {
            guard FileManager.default.fileExists(atPath: path + "/scenarios") else {
                throw ConfigurationError("sample data folder \(path) has no scenarios/ inside")
            }
            return SampleData(directory: path)
        }
        // Installed (the package, or the tarball unpacked anywhere): ../share/subdesk beside
        // the executable's folder, whatever the current folder is.
        let executable = executableDirectory()
        let installed = URL(fileURLWithPath: executable).deletingLastPathComponent().appendingPathComponent("share/subdesk").path
        if FileManager.default.fileExists(atPath: installed + "/scenarios") { return SampleData(directory: installed) }
        // A checkout: sample-data/ in the current folder or the executable's, or above them.
        let starts = [FileManager.default.currentDirectoryPath, executable]
        for start in starts {
            var dir = URL(fileURLWithPath: start)
            for _ in 0..<8 {
                let candidate = dir.appendingPathComponent("sample-data").path
                if FileManager.default.fileExists(atPath: candidate + "/scenarios") { return SampleData(directory: candidate) }
                dir.deleteLastPathComponent()
            }
        }
        throw ConfigurationError("cannot find the demo's sample data (looked in \(installed) and for sample-data/ above "
                                 + "the current folder and \(executable)): pass --sample-data DIR or set SUBDESK_SAMPLE_DATA")
    }

    /// The folder of the running executable, symbolic links resolved (`/proc/self/exe`, so a
    /// command found on PATH is found too).
    static func executableDirectory() -> String {
        let path = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? URL(fileURLWithPath: CommandLine.arguments.first ?? "").resolvingSymlinksInPath().path
        return (path as NSString).deletingLastPathComponent
    }

    public func scenarios() throws -> [Scenario] { try Scenario.loadAll(directory: scenariosDirectory) }
    public func signer() throws -> JWSSigner { try JWSSigner.testCA(directory: testCADirectory) }
    public func trustRoots() throws -> TrustRoots { try TrustRoots(files: [testRootPath]) }

    /// The intake policy demo bodies are signed for.
    public static var demoPolicy: IntakePolicy {
        IntakePolicy(bundleId: ScenarioBuilder.demoBundleId, appAppleId: ScenarioBuilder.demoAppAppleId)
    }
}

/// Builds a demo store from the scenarios, through the real intake path.
public struct DemoStoreBuilder {
    public let sample: SampleData
    public var copies: Int

    public init(sample: SampleData, copies: Int) {
        self.sample = sample
        self.copies = copies
    }

    public struct Summary: Sendable {
        public var scenarios: Int
        public var notifications: Int
        public var rejected: Int
        public var subscriptions: Int
    }

    /// `progress` hears after each copy: how many are built, of how many.
    public func build(into store: Store, anchor: Millis, progress: ((Int, Int) -> Void)? = nil) throws -> Summary {
        let scenarios = try sample.scenarios()
        let builder = ScenarioBuilder(signer: try sample.signer())
        let intake = Intake(store: store, verifier: SignedDataVerifier(roots: try sample.trustRoots()),
                            policy: SampleData.demoPolicy)
        var count = 0
        var rejected = 0
        for copy in 0..<copies {
            // Copies are spread over time so the live views and daily counts have some texture.
            let copyAnchor = anchor - Millis(copy) * 37 * 60_000
            try store.write {
                for (index, scenario) in scenarios.enumerated() {
                    let instance = copy * 1000 + index
                    for body in try builder.bodies(for: scenario, instance: instance, anchor: copyAnchor) {
                        if case .rejected = try intake.ingest(body, source: "demo:\(scenario.name)", receivedAt: anchor) { rejected += 1 }
                        count += 1
                    }
                    if let user = scenario.userId {
                        try store.subscribers.link(copy == 0 ? user : "\(user)-\(copy)",
                                           originalTransactionId: ScenarioBuilder.originalTransactionId(instance: instance))
                    }
                }
            }
            progress?(copy + 1, copies)
        }
        try quarantineExamples(intake: intake, builder: builder, scenario: scenarios[0], anchor: anchor)
        return Summary(scenarios: scenarios.count, notifications: count, rejected: rejected,
                       subscriptions: try store.subscriptions.count())
    }

    /// A few bodies the demo's quarantine screen can show: each refused for a different reason.
    private func quarantineExamples(intake: Intake, builder: ScenarioBuilder, scenario: Scenario, anchor: Millis) throws {
        guard let good = try builder.bodies(for: scenario, instance: 999_999, anchor: anchor).first,
              let text = String(data: good, encoding: .utf8) else { return }
        // The same payload with one signature byte changed.
        var tampered = Array(text)
        if let quote = tampered.lastIndex(of: "\""), quote > 2 {
            tampered[quote - 2] = tampered[quote - 2] == "A" ? "B" : "A"
        }
        let examples: [(String, String)] = [
            (String(tampered), "demo:tampered-signature"),
            ("{\"notification_type\":\"DID_RENEW\",\"unified_receipt\":{}}", "demo:unsigned-v1"),
            ("{\"signedPayload\":\"not.a-jws\"}", "demo:malformed"),
            ("{\"hello\":\"world\"}", "demo:wrong-shape"),
        ]
        for (body, source) in examples {
            _ = try intake.ingest(Data(body.utf8), source: source, receivedAt: anchor)
        }
    }
}
