import Foundation

/// One key of the config file, declared once: the parser accepts exactly these, and the
/// sample config file, `subdesk --help` and the man page's CONFIGURATION section are
/// generated from them.
public struct ConfigurationKey: Sendable, Equatable, CustomStringConvertible {
    public let name: String
    /// An example value, as the sample file shows it (commented out).
    public var example: String
    public var help: String
    /// Given on several lines (or comma-separated), every one counts.
    public var repeatable: Bool = false
    /// Its value leads to a secret (a key's or a shared secret's file) or to the store itself
    /// (a path, or a PostgreSQL URI with its host and user): a config file that holds it is
    /// not for every local user to read (`doctor` says so).
    public var namesSecret: Bool = false

    /// Its name, as the file spells it.
    public var description: String { name }

    public init(_ name: String, example: String, _ help: String, repeatable: Bool = false, namesSecret: Bool = false) {
        self.name = name
        self.example = example
        self.help = help
        self.repeatable = repeatable
        self.namesSecret = namesSecret
    }
}

/// The keys under one heading of the sample file and the man page.
public struct ConfigurationSection: Sendable {
    public let title: String
    public let keys: [ConfigurationKey]
}

/// A kind of `[KIND NAME]` section and the keys it takes.
public struct ConfigurationSectionKind: Sendable {
    public enum Kind: String, Sendable, CaseIterable {
        case key
        case app
        case forward
    }
    public let kind: Kind
    public let title: String
    /// A section name, as the sample file shows it.
    public let example: String
    public let help: String
    public let keys: [ConfigurationKey]
}

/// Every key of the config file, one entry each: the parser, the sample file, the man page,
/// the command options that stand in for a key (`CommandOption.configKey`) and every read
/// (`config.string(.tz)`, `section.value(.bundleId)`) name these. A key a section takes under
/// the same name as a top-level one (`bundle_id`) is the same entry, worded for that section
/// (`worded(example:_:)`).
extension ConfigurationKey {
    // The store
    public static let db = ConfigurationKey(
        "db", example: "/var/lib/subdesk/subdesk.db",
        "the store: a SQLite file, or postgres://USER@HOST/DATABASE (the password in ~/.pgpass); "
        + "default $SUBDESK_DB, else $XDG_DATA_HOME/subdesk/subdesk.db", namesSecret: true)
    public static let busyTimeoutMs = ConfigurationKey("busy_timeout_ms", example: "5000",
                                                       "how long a write waits for other writers, in milliseconds")
    public static let `operator` = ConfigurationKey("operator", example: "ana", "who the audit log names (default: the login name)")

    // Intake: what signed data is checked against
    public static let bundleId = ConfigurationKey("bundle_id", example: "com.example.app",
                                                  "the app's bundle id; signed data of another app is refused")
    public static let appAppleId = ConfigurationKey("app_apple_id", example: "1234567890", "the app's Apple id, checked on Production data")
    public static let environment = ConfigurationKey(
        "environment", example: "Production",
        "Production or Sandbox: the only environment accepted (unset accepts both), and the one asked")
    public static let allowEnvironments = ConfigurationKey(
        "allow_environments", example: "Xcode",
        "also accept these test environments (Xcode, LocalTesting); refused by default", repeatable: true)
    public static let rootCa = ConfigurationKey(
        "root_ca", example: "/etc/subdesk/AppleRootCA-G3.cer",
        "a trust root for signed data; default Apple Root CA - G3, built in. Never the demo's test CA", repeatable: true)
    public static let sharedSecretFile = ConfigurationKey(
        "shared_secret_file", example: "/etc/subdesk/shared-secret",
        "the app's shared secret (verifyReceipt, and the password of version 1 notifications)", namesSecret: true)
    public static let allowV1 = ConfigurationKey("allow_v1", example: "no",
                                                 "yes: accept version 1 notifications (unsigned; checked with the shared secret)")
    public static let revocationCheck = ConfigurationKey(
        "revocation_check", example: "off",
        "ocsp: ask the signing chain's OCSP responders whether a certificate was revoked (off by default)")
    public static let quarantineBudgetMb = ConfigurationKey("quarantine_budget_mb", example: "256",
                                                            "body bytes the quarantine keeps, in MiB; past it, digests and counts only")
    public static let chainKeyFile = ConfigurationKey(
        "chain_key_file", example: "/var/lib/subdesk/chain-memory.key",
        "the key that seals remembered chain checks (default beside a SQLite store, else in the data folder)", namesSecret: true)

    // Apple: the App Store Server API and verifyReceipt
    public static let apiKeyFile = ConfigurationKey("api_key_file", example: "/etc/subdesk/SubscriptionKey.p8",
                                                    "the in-app purchase key (.p8); never printed", namesSecret: true)
    public static let apiKeyId = ConfigurationKey("api_key_id", example: "ABC123DEFG", "its key id")
    public static let apiIssuerId = ConfigurationKey("api_issuer_id", example: "57246542-96fe-1a63-e053-0824d011072a", "the issuer id")
    public static let serverApiUrl = ConfigurationKey("server_api_url", example: "https://api.storekit.apple.com",
                                                      "the App Store Server API (Production)")
    public static let serverApiSandboxUrl = ConfigurationKey("server_api_sandbox_url", example: "https://api.storekit-sandbox.apple.com",
                                                             "the App Store Server API (Sandbox)")
    public static let verifyReceiptUrl = ConfigurationKey("verify_receipt_url", example: "https://buy.itunes.apple.com/verifyReceipt",
                                                          "verifyReceipt (Production)")
    public static let verifyReceiptSandboxUrl = ConfigurationKey(
        "verify_receipt_sandbox_url", example: "https://sandbox.itunes.apple.com/verifyReceipt", "verifyReceipt (Sandbox)")
    public static let revalidationTimeout = ConfigurationKey("revalidation_timeout", example: "30", "seconds each request to Apple may take")

    // Refund requests
    public static let refundConsent = ConfigurationKey("refund_consent", example: "no",
                                                       "yes: customers consented (in the app) to sharing consumption data")
    public static let refundPolicy = ConfigurationKey(
        "refund_policy", example: "manual",
        "what `subdesk refunds --auto` sends: manual, facts, decline-if-delivered, grant or decline")

    // subdesk serve
    public static let serveSocket = ConfigurationKey(
        "serve_socket", example: "/run/subdesk/serve.sock",
        "the unix socket path of the subdesk serve that takes the notification URL; doctor and check ask it whether it answers")
    public static let metricsPasswordFile = ConfigurationKey(
        "metrics_password_file", example: "/etc/subdesk/metrics.htpasswd",
        "the basic-auth password file the web server in front checks /metrics scrapes against; "
        + "doctor says when it is missing or others may read it")

    // Reports and the dashboard
    public static let tz = ConfigurationKey("tz", example: "Europe/Paris", "the time zone days and dates are in (default UTC)")
    public static let ratesFile = ConfigurationKey("rates_file", example: "/etc/subdesk/rates",
                                                   "exchange rates that add MRR and revenue up in one currency")
    public static let theme = ConfigurationKey("theme", example: "default",
                                               "the dashboard's theme (default, mono, midnight... or your own)")

    // [key NAME]
    public static let issuerId = ConfigurationKey("issuer_id", example: "57246542-96fe-1a63-e053-0824d011072a", "the issuer id")
    public static let keyId = ConfigurationKey("key_id", example: "ABC123DEFG", "its key id")
    public static let keyFile = ConfigurationKey("key_file", example: "/etc/subdesk/SubscriptionKey_ABC123DEFG.p8",
                                                 "the key (.p8); never printed", namesSecret: true)

    // [app NAME]
    public static let key = ConfigurationKey("key", example: "team",
                                             "the [key] section whose key signs this app's App Store Server API requests")
    public static let offerKey = ConfigurationKey(
        "offer_key", example: "fitness-offers",
        "the [key] section that signs this app's promotional offers in real-time retention answers (used for nothing else)")
    public static let retentionRules = ConfigurationKey(
        "retention_rules", example: "/etc/subdesk/fitness-retention.rules",
        "the rules serve answers Apple's real-time Retention Messaging requests by (see README, Retention Messaging)")
    public static let retentionAppStoreConnect = ConfigurationKey(
        "retention_app_store_connect", example: "fitness.monthly, fitness.yearly en-US",
        "the products (and locales) App Store Connect's Retention Messaging configuration covers, as the team declares it")

    // [forward NAME]
    public static let url = ConfigurationKey(
        "url", example: "https://backend.example.com/apple/notifications",
        "where deliveries are POSTed: https, or http to a loopback address (or with allow_http = yes)")
    public static let secretFile = ConfigurationKey(
        "secret_file", example: "/etc/subdesk/backend-forward-secret",
        "the shared secret the Subdesk-Signature header is made with (HMAC-SHA256; required)", namesSecret: true)
    public static let apps = ConfigurationKey("apps", example: "fitness", "the [app] sections whose notifications are relayed (default all)")
    public static let environments = ConfigurationKey("environments", example: "Production", "Production, Sandbox or both (default both)")
    public static let types = ConfigurationKey("types", example: "DID_RENEW, EXPIRED, REFUND",
                                               "the notification types relayed (default all, types Apple adds later included)")
    public static let body = ConfigurationKey(
        "body", example: "apple",
        "apple: the body as Apple sent it, byte for byte; envelope: Apple's signedPayload with the subscription's state")
    public static let timeout = ConfigurationKey("timeout", example: "10", "seconds a delivery may take (1 to 300, default 10)")
    public static let maxAge = ConfigurationKey(
        "max_age", example: "72h", "how long a delivery is tried before it is dead: 90m, 72h, 7d (default 72h, Apple's own retry horizon)")
    public static let allowHttp = ConfigurationKey("allow_http", example: "no",
                                                   "yes: allow a plain http url to a host other than a loopback address")

    /// The three keys of an in-app purchase key at the top level, in this order.
    public static let flatApiKey: [ConfigurationKey] = [.apiKeyFile, .apiKeyId, .apiIssuerId]
    /// The three keys of a `[key NAME]` section, in this order; each is required.
    public static let keySection: [ConfigurationKey] = [.issuerId, .keyId, .keyFile]

    /// The same key as a section words it: its own example and help there.
    public func worded(example: String, _ help: String) -> ConfigurationKey {
        var key = self
        key.example = example
        key.help = help
        return key
    }
}

extension Configuration {
    /// Every top-level key, under its heading, in the order the sample file lists them.
    public static let sections: [ConfigurationSection] = [
        ConfigurationSection(title: "The store", keys: [.db, .busyTimeoutMs, .operator]),
        ConfigurationSection(title: "Intake: what signed data is checked against", keys: [
            .bundleId, .appAppleId, .environment, .allowEnvironments, .rootCa, .sharedSecretFile, .allowV1, .revocationCheck,
            .quarantineBudgetMb, .chainKeyFile,
        ]),
        ConfigurationSection(title: "Apple: the App Store Server API and verifyReceipt", keys: [
            .apiKeyFile, .apiKeyId, .apiIssuerId, .serverApiUrl, .serverApiSandboxUrl, .verifyReceiptUrl, .verifyReceiptSandboxUrl,
            .revalidationTimeout,
        ]),
        ConfigurationSection(title: "Refund requests", keys: [.refundConsent, .refundPolicy]),
        ConfigurationSection(title: "subdesk serve", keys: [.serveSocket, .metricsPasswordFile]),
        ConfigurationSection(title: "Reports and the dashboard", keys: [.tz, .ratesFile, .theme]),
    ]

    public static var keys: [ConfigurationKey] { sections.flatMap(\.keys) }

    /// The keys given that lead to a secret or to the store (`ConfigurationKey.namesSecret`),
    /// at the top level or in a section (`[app fitness] shared_secret_file`), in file order.
    public var keysNamingSecrets: [String] {
        let top = Configuration.keys.filter { $0.namesSecret && values[$0.name] != nil }.map(\.name)
        let inSections = namedSections.flatMap { section in
            (Configuration.sectionKinds.first { $0.kind == section.kind }?.keys ?? [])
                .filter { $0.namesSecret && section.value($0) != nil }.map { "\(section.title) \($0.name)" }
        }
        return top + inSections
    }

    /// The keys of the one app a configuration without `[app]` sections describes at its top
    /// level (its name is `ConfiguredApps.flatAppName`); a configuration with `[app]` sections
    /// sets them in each section instead, and refuses them at the top level.
    public static let flatAppKeys: [ConfigurationKey] = [
        .bundleId, .appAppleId, .environment, .sharedSecretFile, .allowV1,
    ] + ConfigurationKey.flatApiKey

    /// The kinds of `[KIND NAME]` section the file may hold, each with the keys it takes:
    /// the parser accepts exactly these, and the sample file and the man page list them.
    public static let sectionKinds: [ConfigurationSectionKind] = [
        ConfigurationSectionKind(kind: .key, title: "[key NAME]: an in-app purchase key of the team",
                                 example: "team", help: "An In-App Purchase key belongs to the team and may serve every app: "
                                     + "declare it once, and name it in each [app] section that uses it.",
                                 keys: ConfigurationKey.keySection),
        ConfigurationSectionKind(kind: .app, title: "[app NAME]: one app the desk serves",
                                 example: "fitness", help: "One section per app: its notifications are stored and its "
                                     + "calls to Apple signed for it. With [app] sections, the top level sets none of "
                                     + flatAppKeys.map(\.name).joined(separator: ", ") + ".", keys: [
            .bundleId.worded(example: "com.example.fitness", "the app's bundle id (required; no two apps share one)"),
            .appAppleId,
            .environment.worded(example: "Production, Sandbox",
                                "the environments accepted and asked: Production, Sandbox or both (unset accepts both)"),
            .key, .offerKey, .retentionRules, .retentionAppStoreConnect,
            .sharedSecretFile.worded(example: "/etc/subdesk/fitness-shared-secret",
                                     "the app's shared secret (verifyReceipt, and the password of its version 1 notifications)"),
            .allowV1.worded(example: "no", "yes: accept this app's version 1 notifications (unsigned)"),
        ]),
        ConfigurationSectionKind(kind: .forward, title: "[forward NAME]: a server every accepted notification is relayed to",
                                 example: "backend", help: "Each notification intake stores is owed to every target whose apps, "
                                     + "environments and types match it, in the same write: answered 200 to Apple means relayed "
                                     + "(subdesk forward run, or serve, delivers; see README, Relaying).",
                                 keys: [.url, .secretFile, .apps, .environments, .types, .body, .timeout, .maxAge, .allowHttp]),
    ]

    /// The config file every installed subdesk's services read (the package's), and the store
    /// it names: the one store the units, the CGI programs and the hand-run commands share.
    public static let installedStore = "/var/lib/subdesk/subdesk.db"

    /// A config file with every key commented out under its help; `installed`: the package's
    /// `/etc/subdesk/config`, which names the services' store (`db`) and nothing else.
    public static func sampleFile(installed: Bool = false) -> String {
        var lines = [
            "# subdesk's configuration: `key = value` lines; a line starting with # is a comment.",
            "# Command-line flags win over these keys. Every key is commented out here: uncomment",
            "# and edit the ones you need (see subdesk(1), CONFIGURATION).",
        ]
        if installed {
            lines[1] = "# Command-line flags win over these keys. Every key but db is commented out here: uncomment"
            lines += ["# An installed subdesk reads this file when no other is named (--config, SUBDESK_CONFIG)",
                      "# or the user has none of their own; the package's units and CGI programs read it too,",
                      "# so db names the one store they all use."]
        }
        let set: [String: String] = installed ? ["db": installedStore] : [:]
        func add(_ keys: [ConfigurationKey]) {
            for key in keys {
                lines.append("")
                let help = key.help + (key.repeatable ? " (may be given several times)" : "")
                lines += WordWrap.lines(help, width: 88).map { "# " + $0 }
                lines.append(set[key.name].map { "\(key.name) = \($0)" } ?? "#\(key.name) = \(key.example)")
            }
        }
        for section in sections {
            lines += ["", "## " + section.title]
            add(section.keys)
        }
        lines += ["", "## Several apps: sections after the settings above (a section runs to the next one)"]
        for kind in sectionKinds {
            lines += ["", "## " + kind.title]
            lines += WordWrap.lines(kind.help, width: 88).map { "# " + $0 }
            lines += ["", "#[\(kind.kind.rawValue) \(kind.example)]"]
            add(kind.keys)
            if kind.kind == .key {
                // An app's offer key is a key of its own (offer_key), used for nothing else.
                lines += ["", "# A key used only to sign one app's promotional offers (its offer_key), revocable alone.",
                          "#[key fitness-offers]"]
                let offerExamples = ["key_id": "OFFER12345", "key_file": "/etc/subdesk/SubscriptionKey_OFFER12345.p8"]
                lines += kind.keys.map { "#\($0.name) = \(offerExamples[$0.name] ?? $0.example)" }
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }
}

/// Text in lines of at most `width` columns, broken at spaces (a longer word has a line of its own).
public enum WordWrap {
    public static func lines(_ text: String, width: Int) -> [String] {
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ") {
            if !line.isEmpty && line.count + 1 + word.count > width {
                lines.append(line)
                line = ""
            }
            line += (line.isEmpty ? "" : " ") + word
        }
        return lines + [line]
    }
}
