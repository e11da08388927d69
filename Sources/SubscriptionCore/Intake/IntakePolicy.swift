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

    /// The apps a body may belong to, each with its own rules; a body is held to the rules of
    /// the app it was signed for (`forApp`). Empty: the one app the fields above describe.
    public var apps: [AppRules] = []
    /// Whether the apps come from `[app]` sections (ping and backfill then ask each app in
    /// each of its environments).
    public var appsFromSections = false

    public static let defaultQuarantineBudgetBytes: Int64 = 256 << 20

    /// What one configured app accepts.
    public struct AppRules: Sendable, Equatable {
        public var name: String
        public var bundleId: String?
        public var appAppleId: Int64?
        public var environment: AppStoreEnvironment?
        public var allowV1: Bool
        public var sharedSecret: String?

        public init(name: String, bundleId: String?, appAppleId: Int64? = nil, environment: AppStoreEnvironment? = nil,
                    allowV1: Bool = false, sharedSecret: String? = nil) {
            self.name = name
            self.bundleId = bundleId
            self.appAppleId = appAppleId
            self.environment = environment
            self.allowV1 = allowV1
            self.sharedSecret = sharedSecret
        }

        var label: String { ConfiguredApps.label(name: name, bundleId: bundleId) }

    }

    /// Whether some app accepts version 1 bodies.
    var anyAllowsV1: Bool { apps.isEmpty ? allowV1 : apps.contains(where: \.allowV1) }

    /// The most of a webhook URL's `?app=` value a refusal quotes, in UTF-8 bytes.
    public static let quotedAppBytes = 200

    /// `?app=`'s value as a refusal quotes it: control characters escaped, cut to
    /// `quotedAppBytes` (on a character's edge) and marked `...` when longer.
    public static func quotedApp(_ value: String) -> String {
        let escaped = value.escapingControlCharacters()
        guard escaped.utf8.count > quotedAppBytes else { return escaped }
        var cut = ""
        for c in escaped {
            guard cut.utf8.count + String(c).utf8.count <= quotedAppBytes else { break }
            cut.append(c)
        }
        return cut + "..."
    }

    /// The app a refused body is counted under (`intake_counts`): the bundle id it names when
    /// a configured app has it; none when it names none, or when an app takes every bundle id
    /// (a configuration that names none); else `unconfiguredApp`, one value for every bundle
    /// id no app has, so bodies naming made-up apps cannot add a counter row each.
    func countedApp(_ named: String?) -> String? {
        guard let named else { return nil }
        let bundleIds = apps.isEmpty ? [bundleId] : apps.map(\.bundleId)
        if bundleIds.contains(named) { return named }
        return bundleIds.contains(nil) ? nil : Self.unconfiguredApp
    }

    /// What a refusal naming a bundle id no configured app has is counted under: no bundle id
    /// is spelled so (letters, digits, hyphens and periods), and no configured app has it.
    public static let unconfiguredApp = "*"

    /// The rules for a body signed for `bundleId`: this policy narrowed to the configured app
    /// with that bundle id (with one app, that app, whose own checks then say what differs).
    /// A body for no configured app is refused naming its bundle id; one posted to a URL
    /// that names another app (`postedFor`, the webhook's `?app=`) is refused naming both.
    public func forApp(bundleId: String?, field: String, postedFor: String? = nil) throws -> IntakePolicy {
        let rules = apps.isEmpty ? [AppRules(name: ConfiguredApps.flatAppName, bundleId: self.bundleId, appAppleId: appAppleId,
                                             environment: environment, allowV1: allowV1, sharedSecret: sharedSecret)] : apps
        let app: AppRules
        if rules.count == 1 {
            app = rules[0]
        } else if let bundleId, let found = rules.first(where: { $0.bundleId == bundleId }) {
            app = found
        } else {
            let configured = rules.map(\.label).joined(separator: ", ")
            throw Refusal(.policy, field: field, fault: bundleId.map { "bundleId \($0) is no configured app's (apps: \(configured))" }
                          ?? "bundleId missing")
        }
        if let postedFor {
            guard let named = ConfiguredApps.named(postedFor, in: rules, name: \.name, bundleId: \.bundleId, appAppleId: \.appAppleId) else {
                throw Refusal(.policy, field: "?app", fault: "\(Self.quotedApp(postedFor)) names no configured app "
                              + "(apps: \(rules.map(\.label).joined(separator: ", ")))")
            }
            if named != app || (rules.count == 1 && bundleProblem(bundleId, field: field) != nil) {
                throw Refusal(.policy, field: field, fault: "signed for app \(rules.count == 1 ? bundleId ?? "?" : app.label), "
                              + "posted to ?app=\(Self.quotedApp(postedFor)), app \(named.label)")
            }
        }
        guard !apps.isEmpty else { return self }
        var narrowed = self
        narrowed.apps = []
        narrowed.bundleId = app.bundleId
        narrowed.appAppleId = app.appAppleId
        narrowed.environment = app.environment
        narrowed.allowV1 = app.allowV1
        narrowed.sharedSecret = app.sharedSecret
        return narrowed
    }

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
