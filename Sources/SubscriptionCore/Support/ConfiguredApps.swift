import Foundation

/// An In-App Purchase key as the configuration names it: a `[key NAME]` section, or the
/// top-level `api_*` keys of a configuration without `[app]` sections. The key's content
/// is read only when a request is signed, and never printed.
public struct AppStoreKeySettings: Sendable, Equatable {
    /// The section's name; for the top-level keys, `ConfiguredApps.flatKeyName`.
    public var name: String
    public var issuerId: String
    public var keyId: String
    public var keyFile: String

    public init(name: String, issuerId: String, keyId: String, keyFile: String) {
        self.name = name
        self.issuerId = issuerId
        self.keyId = keyId
        self.keyFile = keyFile
    }
}

/// One app the desk serves: what its signed data is checked against and how its calls to
/// Apple are signed. An `[app NAME]` section, or the top level of a configuration without one.
public struct ConfiguredApp: Sendable, Equatable {
    public var name: String
    /// nil only for the top-level app of a configuration that sets no `bundle_id` (bundle ids
    /// are then not checked, as before apps had sections).
    public var bundleId: String?
    public var appAppleId: Int64?
    /// The environments accepted and asked; empty accepts Production and Sandbox.
    public var environments: [AppStoreEnvironment]
    public var key: AppStoreKeySettings?
    /// The top-level `api_*` keys that are missing when only some are set (the key is then
    /// unusable, and a call to Apple says which are missing).
    public var missingKeyParts: [String] = []
    public var sharedSecretFile: String?
    public var allowV1: Bool
    /// The key that signs this app's promotional offers (`offer_key`), never its `key`.
    public var offerKey: AppStoreKeySettings?
    /// The file of rules that real-time retention requests are answered by.
    public var retentionRules: String?
    /// What the team declares App Store Connect's Retention Messaging configuration covers.
    public var retentionAppStoreConnect: [RetentionConnectDeclaration] = []

    public init(name: String, bundleId: String?, appAppleId: Int64? = nil, environments: [AppStoreEnvironment] = [],
                key: AppStoreKeySettings? = nil, sharedSecretFile: String? = nil, allowV1: Bool = false) {
        self.name = name
        self.bundleId = bundleId
        self.appAppleId = appAppleId
        self.environments = environments
        self.key = key
        self.sharedSecretFile = sharedSecretFile
        self.allowV1 = allowV1
    }

    /// The one environment accepted, or nil when both are.
    public var environment: AppStoreEnvironment? { environments.count == 1 ? environments[0] : nil }

    /// The environments a command that asks Apple goes through, in order.
    public var environmentsAsked: [AppStoreEnvironment] { environments.isEmpty ? [.production, .sandbox] : environments }

    /// The app as messages name it: `fitness (com.example.fitness)`.
    public var label: String { ConfiguredApps.label(name: name, bundleId: bundleId) }
}

/// The apps of one configuration, found by name, bundle id or Apple ID.
public struct ConfiguredApps: Sendable, Equatable {
    /// The name of the one app a configuration without `[app]` sections describes.
    public static let flatAppName = "default"
    /// The name of the key its top-level `api_*` keys describe.
    public static let flatKeyName = "api_key_file"

    public var apps: [ConfiguredApp]
    /// Whether the apps come from `[app]` sections (else the top level describes one app).
    public var fromSections: Bool

    public init(apps: [ConfiguredApp], fromSections: Bool) {
        self.apps = apps
        self.fromSections = fromSections
    }

    /// An app as messages name it: `fitness (com.example.fitness)`, or its name alone.
    public static func label(name: String, bundleId: String?) -> String { bundleId.map { "\(name) (\($0))" } ?? name }

    /// The app `text` names: its name, its bundle id or its Apple ID.
    public func app(named text: String) -> ConfiguredApp? {
        Self.named(text, in: apps, name: \.name, bundleId: \.bundleId, appAppleId: \.appAppleId)
    }

    /// The one of `apps` that `text` names, by its name, else its bundle id, else its Apple
    /// ID (the configuration refuses a name that is another app's bundle id or Apple ID, so
    /// at most one app answers to a text).
    static func named<App>(_ text: String, in apps: [App], name: KeyPath<App, String>, bundleId: KeyPath<App, String?>,
                           appAppleId: KeyPath<App, Int64?>) -> App? {
        apps.first { $0[keyPath: name] == text } ?? apps.first { $0[keyPath: bundleId] == text }
            ?? Int64(text).flatMap { id in apps.first { $0[keyPath: appAppleId] == id } }
    }

    /// The app signed data with this bundle id belongs to; the top-level app without a
    /// bundle id takes every bundle id.
    public func app(bundleId: String?) -> ConfiguredApp? {
        if let bundleId, let app = apps.first(where: { $0.bundleId == bundleId }) { return app }
        return apps.count == 1 && apps[0].bundleId == nil ? apps[0] : nil
    }

    public func app(appleId: Int64) -> ConfiguredApp? { apps.first { $0.appAppleId == appleId } }

    /// The app of a stored record, by the bundle id it carries: a record whose app could not
    /// be known (nil: stored by an earlier subdesk from data that named none) is the one
    /// configured app's, when there is one.
    public func app(ofRecord bundleId: String?) -> ConfiguredApp? {
        guard let bundleId else { return apps.count == 1 ? apps[0] : nil }
        return app(bundleId: bundleId)
    }

    /// The records of the app `text` names (its name, bundle id or Apple ID): those carrying
    /// its bundle id, and those carrying none when it is the only app. nil for the one app of
    /// a configuration that names no bundle id (every record is its). An unknown app is
    /// refused, naming the configured ones.
    public func scope(named text: String) throws -> AppScope? {
        try configured(named: text).bundleId.map { AppScope(bundleId: $0, includesUnknown: apps.count == 1) }
    }

    /// The app `--app TEXT` names (its name, bundle id or Apple ID); an unknown one is
    /// refused, naming the configured apps.
    public func configured(named text: String) throws -> ConfiguredApp {
        guard let app = app(named: text) else { throw ConfigurationError(unknown(text, askedBy: "--app")) }
        return app
    }

    /// That `text` names no configured app, as what asked says it (`--app`, the desk's
    /// `:app`), naming the configured apps.
    public func unknown(_ text: String, askedBy asker: String) -> String {
        "\(asker): \(text) names no configured app (apps: " + apps.map(\.label).joined(separator: ", ") + ")"
    }

    /// A stored record's app as a list shows it: the configured name, else the bundle id it
    /// carries, else `-`.
    public func name(ofRecord bundleId: String?) -> String { app(ofRecord: bundleId)?.name ?? bundleId ?? "-" }

    /// A stored record's app as JSON says it: `{"name": "fitness", "bundleId": "com.example.fitness"}`,
    /// the name null for a bundle id no configured app has.
    public func appJSON(ofRecord bundleId: String?) -> [String: Any] {
        let app = app(ofRecord: bundleId)
        return ["name": app?.name as Any? ?? NSNull(), "bundleId": (bundleId ?? app?.bundleId) as Any? ?? NSNull()]
    }

    /// What command-line flags set: they describe the top-level app, and with `[app]`
    /// sections only `environment` may be given (it narrows every app to that one).
    public struct Overrides: Sendable {
        public var bundleId: String?
        public var appAppleId: String?
        public var environment: String?
        public var sharedSecretFile: String?
        public var allowV1 = false
        public var apiKeyFile: String?
        public var apiKeyId: String?
        public var apiIssuerId: String?

        public init() {}

        /// The flags given that only a configuration without `[app]` sections may take.
        var appFlags: [String] {
            [("--bundle-id", bundleId), ("--app-apple-id", appAppleId), ("--shared-secret-file", sharedSecretFile),
             ("--api-key-file", apiKeyFile), ("--api-key-id", apiKeyId), ("--api-issuer-id", apiIssuerId)]
                .filter { $0.1 != nil }.map(\.0) + (allowV1 ? ["--allow-v1"] : [])
        }
    }

    /// The apps `configuration` declares, with `overrides` applied. A mistake in a section is
    /// refused naming the file and line (`config:12: ...`).
    public init(configuration: Configuration, overrides: Overrides = Overrides()) throws {
        let source = configuration.path ?? "config"
        let appSections = configuration.namedSections.filter { $0.kind == .app }
        guard !appSections.isEmpty else {
            self.init(apps: [try Self.flatApp(configuration, overrides)], fromSections: false)
            return
        }
        for key in Configuration.flatAppKeys {
            if let line = configuration.line(of: key) {
                throw ConfigurationError("\(source):\(line): \(key) at the top level beside [app] sections: set it in each "
                                         + "[app] section (a configuration describes one app at its top level, or its apps in sections)")
            }
        }
        if let flag = overrides.appFlags.first {
            throw ConfigurationError("\(flag) sets the app of a configuration without [app] sections; \(source) declares "
                                     + "[app] sections: set it in the app's section")
        }
        var keys: [String: AppStoreKeySettings] = [:]
        for section in configuration.namedSections where section.kind == .key {
            let missing = ConfigurationKey.keySection.filter { section.value($0) == nil }.map(\.name)
            guard missing.isEmpty, let issuer = section.value(.issuerId), let id = section.value(.keyId),
                  let file = section.value(.keyFile) else {
                throw ConfigurationError("\(source):\(section.line): \(section.title) lacks \(missing.joined(separator: ", "))")
            }
            keys[section.name] = AppStoreKeySettings(name: section.name, issuerId: issuer, keyId: id, keyFile: file)
        }
        var apps: [ConfiguredApp] = []
        var bundleLines: [String: (app: String, line: Int)] = [:]
        for section in appSections {
            func at(_ key: ConfigurationKey) -> String { "\(source):\(section.line(of: key))" }
            guard let bundleId = section.value(.bundleId), !bundleId.isEmpty else {
                throw ConfigurationError("\(source):\(section.line): \(section.title) has no bundle_id")
            }
            if let twin = bundleLines[bundleId] {
                throw ConfigurationError("\(at(.bundleId)): bundle id \(bundleId) is already [app \(twin.app)]'s (line \(twin.line)); "
                                         + "each app has its own")
            }
            bundleLines[bundleId] = (section.name, section.line(of: .bundleId))
            var app = ConfiguredApp(name: section.name, bundleId: bundleId)
            if let text = section.value(.appAppleId) {
                guard let id = Int64(text) else { throw ConfigurationError("\(at(.appAppleId)): app_apple_id must be a number, got \(text)") }
                app.appAppleId = id
            }
            if let text = section.value(.environment) {
                app.environments = try text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
                    .map { word in
                        guard let env = AppStoreEnvironment.parse(word), env == .production || env == .sandbox else {
                            throw ConfigurationError("\(at(.environment)): environment is Production, Sandbox or both, got \(word)")
                        }
                        return env
                    }
            }
            if let name = section.value(.key) {
                guard let key = keys[name] else {
                    throw ConfigurationError("\(at(.key)): \(section.title) names key \(name), but no [key \(name)] section is declared")
                }
                app.key = key
            }
            if let name = section.value(.offerKey) {
                guard let key = keys[name] else {
                    throw ConfigurationError("\(at(.offerKey)): \(section.title) names offer key \(name), but no [key \(name)] section is declared")
                }
                app.offerKey = key
            }
            app.retentionRules = section.value(.retentionRules)
            if let text = section.value(.retentionAppStoreConnect) {
                do { app.retentionAppStoreConnect = try RetentionConnectDeclaration.parse(text) } catch let refusal as ConfigurationError {
                    throw ConfigurationError("\(at(.retentionAppStoreConnect)): \(refusal.description)")
                }
            }
            app.sharedSecretFile = section.value(.sharedSecretFile)
            if let text = section.value(.allowV1) {
                guard let allowed = Configuration.yesOrNo(text) else {
                    throw ConfigurationError("\(at(.allowV1)): allow_v1 is yes or no, got \(text)")
                }
                app.allowV1 = allowed
            }
            if let narrowed = overrides.environment {
                guard let env = AppStoreEnvironment.parse(narrowed) else {
                    throw ConfigurationError("environment must be Production or Sandbox, got \(narrowed)")
                }
                app.environments = [env]
            }
            apps.append(app)
        }
        // An offer key is used for nothing else, so that it can be revoked alone.
        for (section, app) in zip(appSections, apps) {
            if let offer = app.offerKey, let other = apps.first(where: { $0.key?.name == offer.name }) {
                throw ConfigurationError("\(source):\(section.line(of: .offerKey)): offer_key \(offer.name) is also "
                                         + "[app \(other.name)]'s key (App Store Server API): an offer key is used for nothing else")
            }
        }
        // A name is looked up beside bundle ids and Apple IDs (`?app=`, `--app`): one that is
        // another app's bundle id or Apple ID would name two apps.
        for (section, app) in zip(appSections, apps) {
            if let other = apps.first(where: { $0.name != app.name && ($0.bundleId == app.name || $0.appAppleId.map(String.init) == app.name) }) {
                let what = other.bundleId == app.name ? "bundle id" : "Apple ID"
                throw ConfigurationError("\(source):\(section.line): \(section.title)'s name is [app \(other.name)]'s \(what): "
                                         + "it would name both apps (?app=NAME); rename it")
            }
        }
        self.init(apps: apps, fromSections: true)
    }

    /// The one app of a configuration without `[app]` sections: its top-level keys, each
    /// overridden by its flag, exactly as before apps had sections.
    private static func flatApp(_ config: Configuration, _ overrides: Overrides) throws -> ConfiguredApp {
        func setting(_ flag: String?, _ key: ConfigurationKey) -> String? { flag ?? config.string(key) }
        var app = ConfiguredApp(name: flatAppName, bundleId: setting(overrides.bundleId, .bundleId))
        if let text = setting(overrides.appAppleId, .appAppleId) {
            guard let id = Int64(text) else { throw ConfigurationError("app Apple id must be a number, got \(text)") }
            app.appAppleId = id
        }
        if let text = setting(overrides.environment, .environment) {
            guard let env = AppStoreEnvironment.parse(text) else {
                throw ConfigurationError("environment must be Production or Sandbox, got \(text)")
            }
            app.environments = [env]
        }
        app.sharedSecretFile = setting(overrides.sharedSecretFile, .sharedSecretFile)
        app.allowV1 = overrides.allowV1 || (config.bool(.allowV1) ?? false)
        let parts = zip(ConfigurationKey.flatApiKey, [overrides.apiKeyFile, overrides.apiKeyId, overrides.apiIssuerId])
            .map { key, flag in (key.name, setting(flag, key)) }
        if let file = parts[0].1, let id = parts[1].1, let issuer = parts[2].1 {
            app.key = AppStoreKeySettings(name: flatKeyName, issuerId: issuer, keyId: id, keyFile: file)
        } else if parts.contains(where: { $0.1 != nil }) {
            app.missingKeyParts = parts.filter { $0.1 == nil }.map(\.0)
        }
        return app
    }
}

extension Configuration {
    /// yes/no as the file spells it (yes, true, on, 1; no, false, off, 0), or nil.
    static func yesOrNo(_ text: String) -> Bool? {
        switch text.lowercased() {
        case "1", "true", "yes", "on": return true
        case "0", "false", "no", "off": return false
        default: return nil
        }
    }
}

extension IntakePolicy {
    /// Holds intake to `apps`: each body to the rules of the app it was signed for, each
    /// app's shared secret read with `readSecret` (path, app). One app also sets the
    /// single-app fields, as before apps had sections.
    public mutating func serve(_ apps: ConfiguredApps, readSecret: (String, ConfiguredApp) throws -> String) throws {
        self.apps = try apps.apps.map { app in
            AppRules(name: app.name, bundleId: app.bundleId, appAppleId: app.appAppleId, environment: app.environment,
                     allowV1: app.allowV1, sharedSecret: try app.sharedSecretFile.map { try readSecret($0, app) })
        }
        appsFromSections = apps.fromSections
        if self.apps.count == 1 {
            let only = self.apps[0]
            (bundleId, appAppleId, environment, allowV1, sharedSecret)
                = (only.bundleId, only.appAppleId, only.environment, only.allowV1, only.sharedSecret)
        }
    }
}

extension ConfiguredApp {
    /// The in-app purchase key that signs this app's App Store Server API requests (its
    /// tokens' `bid` is this app's bundle id), or nil when none is configured; an error
    /// naming what is missing when only some of the top-level `api_*` keys are set.
    public func apiKey(warn: (String) -> Void) throws -> AppStoreAPIKey? {
        guard missingKeyParts.isEmpty else {
            throw ConfigurationError("the App Store Server API key needs api_key_file, api_key_id and api_issuer_id; missing "
                                     + missingKeyParts.joined(separator: ", "))
        }
        guard let key else { return nil }
        guard let bundleId else {
            throw ConfigurationError("the App Store Server API token names the app: set bundle_id (or pass --bundle-id)")
        }
        return try AppStoreAPIKey.load(file: key.keyFile, keyId: key.keyId, issuerId: key.issuerId, bundleId: bundleId, warn: warn)
    }
}

extension RevalidationConfiguration {
    /// Signs each app's requests with its own key: one app's key is `apiKey`, several apps'
    /// are `appKeys` by bundle id.
    public mutating func sign(for apps: ConfiguredApps, warn: (String) -> Void) throws {
        if apps.apps.count == 1 {
            apiKey = try apps.apps[0].apiKey(warn: warn)
            return
        }
        apiKey = nil
        for app in apps.apps {
            if let bundleId = app.bundleId, let key = try app.apiKey(warn: warn) { appKeys[bundleId] = key }
        }
    }
}

extension ConfiguredApp {
    /// What `doctor` says of the app: its ids, environments, key (by name, never its content),
    /// shared secret file and V1.
    public var summary: String {
        var parts = [bundleId ?? "any bundle id", appAppleId.map { "Apple ID \($0)" } ?? "no app_apple_id (Production checked for presence only)",
                     environments.isEmpty ? "Production and Sandbox" : environments.map(\.rawValue).joined(separator: " and ")]
        parts.append(key.map { "key \($0.name) (key id \($0.keyId))" } ?? "no key: verifyReceipt only")
        parts.append(sharedSecretFile == nil ? "no shared secret" : "shared secret set")
        parts.append(allowV1 ? "V1 allowed" : "V1 refused")
        // serve reads the offer key alone, never the API key: said so the operator can keep
        // the API key's file from serve's user.
        if let offerKey { parts.append("offer key \(offerKey.name) (key id \(offerKey.keyId); serve reads it, never the API key)") }
        if let retentionRules { parts.append("retention rules \(retentionRules)") }
        return "\(name): " + parts.joined(separator: ", ")
    }
}
