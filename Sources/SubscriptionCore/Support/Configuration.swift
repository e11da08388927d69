import Foundation

/// Settings from the `key = value` config file; command-line flags override them.
public struct Configuration: Equatable, Sendable {
    public var values: [String: [String]] = [:]
    public var path: String?

    public static let knownKeys: Set<String> = [
        "db", "bundle_id", "app_apple_id", "environment", "root_ca", "shared_secret_file", "allow_v1",
        "allow_environments", "theme", "tz", "server_api_url", "server_api_sandbox_url", "verify_receipt_url",
        "verify_receipt_sandbox_url", "api_key_file", "api_key_id", "api_issuer_id", "operator", "busy_timeout_ms",
        "revalidation_timeout", "quarantine_budget_mb", "refund_consent", "refund_policy", "rates_file", "chain_key_file", "serve_socket",
        "revocation_check",
    ]

    public init() {}

    /// Parses config text; `source` names the file in errors (`config:7: ...`).
    public init(text: String, source: String) throws {
        path = source
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") { continue }
            guard let eq = line.firstIndex(of: "=") else {
                throw ConfigurationError("\(source):\(index + 1): expected key = value")
            }
            let key = line[..<eq].trimmingCharacters(in: .whitespaces)
            let value = line[line.index(after: eq)...].trimmingCharacters(in: .whitespaces)
            guard !key.isEmpty else { throw ConfigurationError("\(source):\(index + 1): missing key before =") }
            guard Configuration.knownKeys.contains(key) else {
                throw ConfigurationError("\(source):\(index + 1): unknown key \(key)")
            }
            values[key, default: []].append(value)
        }
    }

    /// The default config file: `$SUBDESK_CONFIG`, else `$XDG_CONFIG_HOME/subdesk/config`.
    public static func defaultPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let p = environment["SUBDESK_CONFIG"], !p.isEmpty { return p }
        let base = environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? ((environment["HOME"] ?? NSHomeDirectory()) + "/.config")
        return base + "/subdesk/config"
    }

    /// Loads the config file at `path`; a missing default file is an empty configuration.
    public static func load(path: String, required: Bool) throws -> Configuration {
        guard FileManager.default.fileExists(atPath: path) else {
            if required { throw ConfigurationError("config file \(path) does not exist") }
            return Configuration()
        }
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else {
            throw ConfigurationError("config file \(path) cannot be read (check its permissions)")
        }
        return try Configuration(text: text, source: path)
    }

    public func string(_ key: String) -> String? { values[key]?.last }
    public func list(_ key: String) -> [String] {
        (values[key] ?? []).flatMap { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } }
            .filter { !$0.isEmpty }
    }
    public func bool(_ key: String) -> Bool? {
        guard let v = string(key)?.lowercased() else { return nil }
        return ["1", "true", "yes", "on"].contains(v)
    }

    /// The default store: `$SUBDESK_DB`, else `$XDG_DATA_HOME/subdesk/subdesk.db`.
    public static func defaultDatabasePath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let p = environment["SUBDESK_DB"], !p.isEmpty { return p }
        return dataDirectory(environment: environment) + "/subdesk.db"
    }

    public static func dataDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        let base = environment["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? ((environment["HOME"] ?? NSHomeDirectory()) + "/.local/share")
        return base + "/subdesk"
    }
}

public struct ConfigurationError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
