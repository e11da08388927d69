import Foundation

/// One key of the config file, declared once: the parser accepts exactly these, and the
/// sample config file, `subdesk --help` and the man page's CONFIGURATION section are
/// generated from them.
public struct ConfigurationKey: Sendable, Equatable {
    public let name: String
    /// An example value, as the sample file shows it (commented out).
    public let example: String
    public let help: String
    /// Given on several lines (or comma-separated), every one counts.
    public var repeatable: Bool = false
    /// Its value leads to a secret (a key's or a shared secret's file) or to the store itself
    /// (a path, or a PostgreSQL URI with its host and user): a config file that holds it is
    /// not for every local user to read (`doctor` says so).
    public var namesSecret: Bool = false

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

extension Configuration {
    /// Every key, under its heading, in the order the sample file lists them.
    public static let sections: [ConfigurationSection] = [
        ConfigurationSection(title: "The store", keys: [
            .init("db", example: "/var/lib/subdesk/subdesk.db",
                  "the store: a SQLite file, or postgres://USER@HOST/DATABASE (the password in ~/.pgpass); "
                  + "default $SUBDESK_DB, else $XDG_DATA_HOME/subdesk/subdesk.db", namesSecret: true),
            .init("busy_timeout_ms", example: "5000", "how long a write waits for other writers, in milliseconds"),
            .init("operator", example: "ana", "who the audit log names (default: the login name)"),
        ]),
        ConfigurationSection(title: "Intake: what signed data is checked against", keys: [
            .init("bundle_id", example: "com.example.app", "the app's bundle id; signed data of another app is refused"),
            .init("app_apple_id", example: "1234567890", "the app's Apple id, checked on Production data"),
            .init("environment", example: "Production",
                  "Production or Sandbox: the only environment accepted (unset accepts both), and the one asked"),
            .init("allow_environments", example: "Xcode",
                  "also accept these test environments (Xcode, LocalTesting); refused by default", repeatable: true),
            .init("root_ca", example: "/etc/subdesk/AppleRootCA-G3.cer",
                  "a trust root for signed data; default Apple Root CA - G3, built in. Never the demo's test CA", repeatable: true),
            .init("shared_secret_file", example: "/etc/subdesk/shared-secret",
                  "the app's shared secret (verifyReceipt, and the password of version 1 notifications)", namesSecret: true),
            .init("allow_v1", example: "no", "yes: accept version 1 notifications (unsigned; checked with the shared secret)"),
            .init("revocation_check", example: "off",
                  "ocsp: ask the signing chain's OCSP responders whether a certificate was revoked (off by default)"),
            .init("quarantine_budget_mb", example: "256",
                  "body bytes the quarantine keeps, in MiB; past it, digests and counts only"),
            .init("chain_key_file", example: "/var/lib/subdesk/chain-memory.key",
                  "the key that seals remembered chain checks (default beside a SQLite store, else in the data folder)", namesSecret: true),
        ]),
        ConfigurationSection(title: "Apple: the App Store Server API and verifyReceipt", keys: [
            .init("api_key_file", example: "/etc/subdesk/SubscriptionKey.p8", "the in-app purchase key (.p8); never printed", namesSecret: true),
            .init("api_key_id", example: "ABC123DEFG", "its key id"),
            .init("api_issuer_id", example: "57246542-96fe-1a63-e053-0824d011072a", "the issuer id"),
            .init("server_api_url", example: "https://api.storekit.apple.com", "the App Store Server API (Production)"),
            .init("server_api_sandbox_url", example: "https://api.storekit-sandbox.apple.com", "the App Store Server API (Sandbox)"),
            .init("verify_receipt_url", example: "https://buy.itunes.apple.com/verifyReceipt", "verifyReceipt (Production)"),
            .init("verify_receipt_sandbox_url", example: "https://sandbox.itunes.apple.com/verifyReceipt", "verifyReceipt (Sandbox)"),
            .init("revalidation_timeout", example: "30", "seconds each request to Apple may take"),
        ]),
        ConfigurationSection(title: "Refund requests", keys: [
            .init("refund_consent", example: "no", "yes: customers consented (in the app) to sharing consumption data"),
            .init("refund_policy", example: "manual",
                  "what `subdesk refunds --auto` sends: manual, facts, decline-if-delivered, grant or decline"),
        ]),
        ConfigurationSection(title: "subdesk serve", keys: [
            .init("serve_socket", example: "/run/subdesk/serve.sock",
                  "the unix socket path of the subdesk serve that takes the notification URL; "
                  + "doctor and check ask it whether it answers"),
            .init("metrics_password_file", example: "/etc/subdesk/metrics.htpasswd",
                  "the basic-auth password file the web server in front checks /metrics scrapes against; "
                  + "doctor says when it is missing or others may read it"),
        ]),
        ConfigurationSection(title: "Reports and the dashboard", keys: [
            .init("tz", example: "Europe/Paris", "the time zone days and dates are in (default UTC)"),
            .init("rates_file", example: "/etc/subdesk/rates", "exchange rates that add MRR and revenue up in one currency"),
            .init("theme", example: "default", "the dashboard's theme (default, mono, midnight... or your own)"),
        ]),
    ]

    public static var keys: [ConfigurationKey] { sections.flatMap(\.keys) }

    /// The keys given that lead to a secret or to the store (`ConfigurationKey.namesSecret`),
    /// at the top level or in a section (`[app fitness] shared_secret_file`), in file order.
    public var keysNamingSecrets: [String] {
        let top = Configuration.keys.filter { $0.namesSecret && values[$0.name] != nil }.map(\.name)
        let inSections = namedSections.flatMap { section in
            (Configuration.sectionKinds.first { $0.kind == section.kind }?.keys ?? [])
                .filter { $0.namesSecret && section.values[$0.name] != nil }.map { "\(section.title) \($0.name)" }
        }
        return top + inSections
    }

    /// The keys of the one app a configuration without `[app]` sections describes at its top
    /// level (its name is `ConfiguredApps.flatAppName`); a configuration with `[app]` sections
    /// sets them in each section instead, and refuses them at the top level.
    public static let flatAppKeys: [String] = [
        "bundle_id", "app_apple_id", "environment", "shared_secret_file", "allow_v1", "api_key_file", "api_key_id", "api_issuer_id",
    ]

    /// The kinds of `[KIND NAME]` section the file may hold, each with the keys it takes:
    /// the parser accepts exactly these, and the sample file and the man page list them.
    public static let sectionKinds: [ConfigurationSectionKind] = [
        ConfigurationSectionKind(kind: .key, title: "[key NAME]: an in-app purchase key of the team",
                                 example: "team", help: "An In-App Purchase key belongs to the team and may serve every app: "
                                     + "declare it once, and name it in each [app] section that uses it.", keys: [
            .init("issuer_id", example: "57246542-96fe-1a63-e053-0824d011072a", "the issuer id"),
            .init("key_id", example: "ABC123DEFG", "its key id"),
            .init("key_file", example: "/etc/subdesk/SubscriptionKey_ABC123DEFG.p8", "the key (.p8); never printed", namesSecret: true),
        ]),
        ConfigurationSectionKind(kind: .app, title: "[app NAME]: one app the desk serves",
                                 example: "fitness", help: "One section per app: its notifications are stored and its "
                                     + "calls to Apple signed for it. With [app] sections, the top level sets none of "
                                     + flatAppKeys.joined(separator: ", ") + ".", keys: [
            .init("bundle_id", example: "com.example.fitness", "the app's bundle id (required; no two apps share one)"),
            .init("app_apple_id", example: "1234567890", "the app's Apple id, checked on Production data"),
            .init("environment", example: "Production, Sandbox",
                  "the environments accepted and asked: Production, Sandbox or both (unset accepts both)"),
            .init("key", example: "team", "the [key] section whose key signs this app's App Store Server API requests"),
            .init("offer_key", example: "fitness-offers",
                  "the [key] section that signs this app's promotional offers in real-time retention answers (used for nothing else)"),
            .init("retention_rules", example: "/etc/subdesk/fitness-retention.rules",
                  "the rules serve answers Apple's real-time Retention Messaging requests by (see README, Retention Messaging)"),
            .init("retention_app_store_connect", example: "fitness.monthly, fitness.yearly en-US",
                  "the products (and locales) App Store Connect's Retention Messaging configuration covers, as the team declares it"),
            .init("shared_secret_file", example: "/etc/subdesk/fitness-shared-secret",
                  "the app's shared secret (verifyReceipt, and the password of its version 1 notifications)", namesSecret: true),
            .init("allow_v1", example: "no", "yes: accept this app's version 1 notifications (unsigned)"),
        ]),
        ConfigurationSectionKind(kind: .forward, title: "[forward NAME]: a server every accepted notification is relayed to",
                                 example: "backend", help: "Each notification intake stores is owed to every target whose apps, "
                                     + "environments and types match it, in the same write: answered 200 to Apple means relayed "
                                     + "(subdesk forward run, or serve, delivers; see README, Relaying).", keys: [
            .init("url", example: "https://backend.example.com/apple/notifications",
                  "where deliveries are POSTed: https, or http to a loopback address (or with allow_http = yes)"),
            .init("secret_file", example: "/etc/subdesk/backend-forward-secret",
                  "the shared secret the Subdesk-Signature header is made with (HMAC-SHA256; required)", namesSecret: true),
            .init("apps", example: "fitness", "the [app] sections whose notifications are relayed (default all)"),
            .init("environments", example: "Production", "Production, Sandbox or both (default both)"),
            .init("types", example: "DID_RENEW, EXPIRED, REFUND",
                  "the notification types relayed (default all, types Apple adds later included)"),
            .init("body", example: "apple",
                  "apple: the body as Apple sent it, byte for byte; envelope: Apple's signedPayload with the subscription's state"),
            .init("timeout", example: "10", "seconds a delivery may take (1 to 300, default 10)"),
            .init("max_age", example: "72h",
                  "how long a delivery is tried before it is dead: 90m, 72h, 7d (default 72h, Apple's own retry horizon)"),
            .init("allow_http", example: "no", "yes: allow a plain http url to a host other than a loopback address"),
        ]),
    ]

    /// A config file with every key commented out, each under its help: what the package
    /// installs as /etc/subdesk/config, and `subdesk man`'s example.
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
