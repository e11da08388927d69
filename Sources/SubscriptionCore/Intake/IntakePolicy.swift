/// What intake accepts: which app, which environments, and whether unsigned V1 bodies are allowed.
public struct IntakePolicy: Sendable, Equatable {
    /// The app's bundle id; when nil, bundle ids are not checked.
    public var bundleId: String?
    /// The app's Apple id; Production notifications must carry it (and match it when set).
    public var appAppleId: Int64?
    /// The only environment accepted; nil accepts Production and Sandbox.
    public var environment: AppStoreEnvironment?
    /// Xcode and LocalTesting are refused unless listed here.
    public var allowedTestEnvironments: Set<String>
    /// V1 bodies carry no signature, so they are refused unless allowed.
    public var allowV1: Bool
    /// When set, a V1 body's `password` must equal it.
    public var sharedSecret: String?
    /// Bodies larger than this are refused before parsing.
    public var maxBodyBytes: Int
    /// The most body bytes the quarantine keeps in all; past it, a new rejected body keeps
    /// only its digest, length and count. Nil keeps every body.
    public var quarantineBudgetBytes: Int64? = IntakePolicy.defaultQuarantineBudgetBytes
    /// Whether the signing chain's revocation is asked of its OCSP responders; off, intake
    /// never touches the network.
    public var revocationCheck: RevocationCheckMode = .off

    public static let defaultQuarantineBudgetBytes: Int64 = 256 << 20

    public init(bundleId: String? = nil, appAppleId: Int64? = nil, environment: AppStoreEnvironment? = nil,
                allowedTestEnvironments: Set<String> = [], allowV1: Bool = false, sharedSecret: String? = nil,
                maxBodyBytes: Int = 1 << 20) {
        self.bundleId = bundleId
        self.appAppleId = appAppleId
        self.environment = environment
        self.allowedTestEnvironments = allowedTestEnvironments
        self.allowV1 = allowV1
        self.sharedSecret = sharedSecret
        self.maxBodyBytes = maxBodyBytes
    }

    /// Why `environment` is not accepted, or nil when it is.
    func environmentProblem(_ environment: AppStoreEnvironment?, field: String) -> Refusal? {
        func refused(_ fault: String) -> Refusal { Refusal(.policy, field: field, fault: fault) }
        guard let environment else { return refused("environment missing") }
        if environment == .xcode || environment == .localTesting {
            return allowedTestEnvironments.contains(environment.rawValue) ? nil
                : refused("environment \(environment) is never accepted unless explicitly allowed")
        }
        if let expected = self.environment, expected != environment {
            return refused("environment \(environment) is not the configured \(expected)")
        }
        if environment != .production && environment != .sandbox {
            return refused("unknown environment \(environment)")
        }
        return nil
    }

    func bundleProblem(_ bundleId: String?, field: String) -> Refusal? {
        guard let expected = self.bundleId else { return nil }
        guard let bundleId else { return Refusal(.policy, field: field, fault: "bundleId missing") }
        return bundleId == expected ? nil : Refusal(.policy, field: field, fault: "bundleId \(bundleId) is not the configured \(expected)")
    }

    func appAppleIdProblem(_ appAppleId: Int64?, environment: AppStoreEnvironment?, field: String) -> Refusal? {
        guard environment == .production else { return nil }
        guard let appAppleId else { return Refusal(.policy, field: field, fault: "Production notification lacks appAppleId") }
        if let expected = self.appAppleId, expected != appAppleId {
            return Refusal(.policy, field: field, fault: "appAppleId \(appAppleId) is not the configured \(expected)")
        }
        return nil
    }
}
