import Foundation

/// One server every accepted notification matching it is relayed to: a `[forward NAME]`
/// section of the configuration.
public struct ForwardTarget: Sendable, Equatable {
    /// What a delivery carries.
    public enum Body: String, Sendable, CaseIterable {
        /// The body as Apple sent it, byte for byte: the target verifies Apple's signature itself.
        case apple
        /// A JSON document with Apple's `signedPayload` unchanged and the subscription's state
        /// as it is when the delivery is sent (`ForwardEnvelope`).
        case envelope
    }

    public var name: String
    public var url: URL
    public var secretFile: String
    /// The `[app]` sections whose notifications are relayed; empty: every app's, and those of
    /// no configured app.
    public var apps: [String] = []
    /// Empty: both.
    public var environments: [AppStoreEnvironment] = []
    /// Empty: every type, those Apple adds later included.
    public var types: [NotificationType] = []
    public var body: Body = .apple
    public var timeout: TimeInterval = ForwardTarget.defaultTimeout
    /// How long after it was owed a delivery is tried; past it, it is dead.
    public var maxAge: Millis = ForwardTarget.defaultMaxAge

    public static let defaultTimeout: TimeInterval = 10
    /// 72 hours: how long Apple itself retries a notification its server did not take.
    public static let defaultMaxAge: Millis = 72 * 3_600_000

    public init(name: String, url: URL, secretFile: String) {
        self.name = name
        self.url = url
        self.secretFile = secretFile
    }

    /// Whether a notification of app `appName` (its configured name, nil for a bundle id no
    /// configured app has), `environment` and `type` is owed to this target.
    public func takes(appName: String?, environment: String?, type: NotificationType) -> Bool {
        if !apps.isEmpty {
            guard let appName, apps.contains(appName) else { return false }
        }
        if !environments.isEmpty {
            guard let environment, environments.contains(where: { $0.rawValue == environment }) else { return false }
        }
        return types.isEmpty || types.contains(type)
    }

    /// Whether `host` is a loopback address, to which plain http stays on this machine.
    public static func isLoopback(_ host: String) -> Bool {
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        if bare == "localhost" || bare == "::1" { return true }
        let parts = bare.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }

    /// A duration as `max_age` spells it: a whole number with `s`, `m`, `h` or `d` (seconds
    /// without one), from a minute to a year.
    static func duration(_ text: String) -> Millis? {
        let units: [Character: Millis] = ["s": 1_000, "m": 60_000, "h": 3_600_000, "d": 86_400_000]
        var digits = Substring(text)
        var unit: Millis = 1_000
        if let last = text.last, let u = units[last] {
            unit = u
            digits = digits.dropLast()
        }
        guard !digits.isEmpty, digits.count <= 9, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let n = Millis(digits) else { return nil }
        let total = n * unit
        return (60_000...366 * 86_400_000).contains(total) ? total : nil
    }
}

/// The `[forward NAME]` sections of a configuration, checked against its apps.
public struct ForwardTargets: Sendable, Equatable {
    public var targets: [ForwardTarget]
    /// The apps a notification's bundle id is looked up in, for the targets' `apps`.
    public var apps: ConfiguredApps?

    public init(_ targets: [ForwardTarget] = [], apps: ConfiguredApps? = nil) {
        self.targets = targets
        self.apps = apps
    }

    public var isEmpty: Bool { targets.isEmpty }

    public func target(named name: String) -> ForwardTarget? { targets.first { $0.name == name } }

    /// The bundle ids of the apps `target` takes; nil when it takes every app's.
    public func bundleIds(of target: ForwardTarget) -> [String]? {
        guard !target.apps.isEmpty else { return nil }
        return target.apps.compactMap { name in apps?.apps.first { $0.name == name }?.bundleId }
    }

    /// The targets a notification of the app with `bundleId` is owed to.
    public func owed(bundleId: String?, environment: String?, type: NotificationType) -> [ForwardTarget] {
        guard !targets.isEmpty else { return [] }
        let appName = apps?.app(ofRecord: bundleId)?.name
        return targets.filter { $0.takes(appName: appName, environment: environment, type: type) }
    }

    /// The targets `configuration` declares. A mistake is refused naming the file and line
    /// (`config:12: ...`); the secret file is read only when a delivery is signed.
    public init(configuration: Configuration, apps: ConfiguredApps) throws {
        let source = configuration.path ?? "config"
        var targets: [ForwardTarget] = []
        for section in configuration.namedSections where section.kind == .forward {
            func at(_ key: ConfigurationKey) -> String { "\(source):\(section.line(of: key))" }
            let missing = [ConfigurationKey.url, .secretFile].filter { (section.value($0) ?? "").isEmpty }.map(\.name)
            guard missing.isEmpty, let text = section.value(.url), let secret = section.value(.secretFile) else {
                throw ConfigurationError("\(source):\(section.line): \(section.title) lacks \(missing.joined(separator: " and "))"
                                         + (missing.contains(ConfigurationKey.secretFile.name) ? " (every delivery is signed with the target's secret)" : ""))
            }
            var allowHTTP = false
            if let flag = section.value(.allowHttp) {
                guard let yes = Configuration.yesOrNo(flag) else {
                    throw ConfigurationError("\(at(.allowHttp)): allow_http is yes or no, got \(flag)")
                }
                allowHTTP = yes
            }
            guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), let host = url.host, !host.isEmpty,
                  scheme == "https" || scheme == "http", url.user == nil, url.password == nil else {
                throw ConfigurationError("\(at(.url)): url must be an https URL with a host and no user or password, got "
                                         + text.escapingControlCharacters())
            }
            if scheme == "http" && !allowHTTP && !ForwardTarget.isLoopback(host) {
                throw ConfigurationError("\(at(.url)): url \(text) is plain http to \(host), which others on the way could read and "
                                         + "change: use https, or say allow_http = yes")
            }
            var target = ForwardTarget(name: section.name, url: url, secretFile: secret)
            target.apps = section.list(.apps)
            for name in target.apps where !apps.apps.contains(where: { $0.name == name }) {
                throw ConfigurationError("\(at(.apps)): \(section.title) names app \(name), which no [app] section declares (apps: "
                                         + apps.apps.map(\.name).joined(separator: ", ") + ")")
            }
            target.environments = try section.list(.environments).map { word in
                guard let env = AppStoreEnvironment.parse(word), env == .production || env == .sandbox else {
                    throw ConfigurationError("\(at(.environments)): environments are Production, Sandbox or both, got \(word)")
                }
                return env
            }
            let known = NotificationMeanings.standard.v2Types + NotificationMeanings.standard.v1Types
            target.types = try section.list(.types).map { word in
                let type = NotificationType(rawValue: word)
                guard known.contains(type) else {
                    throw ConfigurationError("\(at(.types)): \(word) is no notification type subdesk knows (a target that lists "
                                             + "no types is sent every type, those Apple adds later included)")
                }
                return type
            }
            if let word = section.value(.body) {
                guard let body = ForwardTarget.Body(rawValue: word) else {
                    throw ConfigurationError("\(at(.body)): body is apple or envelope, got \(word)")
                }
                target.body = body
            }
            if let word = section.value(.timeout) {
                guard let seconds = Int(word), (1...300).contains(seconds) else {
                    throw ConfigurationError("\(at(.timeout)): timeout is a whole number of seconds from 1 to 300, got \(word)")
                }
                target.timeout = TimeInterval(seconds)
            }
            if let word = section.value(.maxAge) {
                guard let age = ForwardTarget.duration(word) else {
                    throw ConfigurationError("\(at(.maxAge)): max_age is a duration from 1m to 366d (90m, 72h, 7d), got \(word)")
                }
                target.maxAge = age
            }
            targets.append(target)
        }
        self.init(targets, apps: apps)
    }
}
