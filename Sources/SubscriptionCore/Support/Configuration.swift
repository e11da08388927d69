import Foundation

/// Settings from the `key = value` config file; command-line flags override them.
public struct Configuration: Equatable, Sendable {
    /// The top-level keys' values, in the order given.
    public var values: [String: [String]] = [:]
    /// The line each top-level key is first given on, for errors that name it.
    public var lines: [String: Int] = [:]
    /// The `[key NAME]` and `[app NAME]` sections, in the order given.
    public var namedSections: [NamedSection] = []
    public var path: String?

    /// One `[KIND NAME]` section of the file: its keys run to the next section.
    public struct NamedSection: Equatable, Sendable {
        public var kind: ConfigurationSectionKind.Kind
        public var name: String
        /// The line of its `[KIND NAME]` header.
        public var line: Int
        public var values: [String: String] = [:]
        public var lines: [String: Int] = [:]

        public var title: String { "[\(kind.rawValue) \(name)]" }

        /// The value `key` is given in this section, if it is.
        public func value(_ key: ConfigurationKey) -> String? { values[key.name] }
        /// Its comma-separated words, blanks left out.
        public func list(_ key: ConfigurationKey) -> [String] {
            (values[key.name] ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
        /// The line `key` is given on, else the section header's: where an error about it points.
        public func line(of key: ConfigurationKey) -> Int { lines[key.name] ?? line }
    }

    /// The keys the parser accepts: those `sections` declares (ConfigurationKeys.swift).
    public static let knownKeys: Set<String> = Set(keys.map(\.name))

    public init() {}

    /// Parses config text; `source` names the file in errors (`config:7: ...`).
    public init(text: String, source: String) throws {
        path = source
        var section: NamedSection?
        func close() {
            if let section { namedSections.append(section) }
            section = nil
        }
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            let number = index + 1
            func fail(_ message: String) -> ConfigurationError { ConfigurationError("\(source):\(number): \(message)") }
            if line.isEmpty || line.hasPrefix("#") { continue }
            if line.hasPrefix("[") {
                close()
                section = try Configuration.header(line, line: number, after: namedSections, fail: fail)
                continue
            }
            guard let eq = line.firstIndex(of: "=") else { throw fail("expected key = value") }
            let key = line[..<eq].trimmingCharacters(in: .whitespaces)
            let value = line[line.index(after: eq)...].trimmingCharacters(in: .whitespaces)
            guard !key.isEmpty else { throw fail("missing key before =") }
            if var open = section {
                let allowed = Configuration.sectionKinds.first { $0.kind == open.kind }?.keys.map(\.name) ?? []
                guard allowed.contains(key) else {
                    let known = Configuration.knownKeys.contains(key) || Configuration.sectionKinds.contains { $0.keys.contains { $0.name == key } }
                    throw fail("\(known ? "key \(key) is not allowed" : "unknown key \(key)") in \(open.title) "
                               + "([\(open.kind.rawValue)] sections take \(allowed.joined(separator: ", ")); "
                               + "team-wide settings go before the first section)")
                }
                // A section says each of its keys once: a second would silently replace the
                // first, while errors point at the first's line. (Top-level keys may repeat:
                // a list key gathers every line, another takes the last.)
                if let first = open.lines[key] { throw fail("\(key) given twice in \(open.title) (first at line \(first))") }
                open.values[key] = value
                open.lines[key] = number
                section = open
                continue
            }
            guard Configuration.knownKeys.contains(key) else { throw fail("unknown key \(key)") }
            values[key, default: []].append(value)
            lines[key] = lines[key] ?? number
        }
        close()
        // The apps are checked now, so that every command reports a wrong section where it is
        // (a configuration without sections is checked, as before, where its keys are used).
        if !namedSections.isEmpty { _ = try ForwardTargets(configuration: self, apps: try ConfiguredApps(configuration: self)) }
    }

    /// A `[KIND NAME]` header line, refused when its kind is unknown, its name missing or
    /// already taken by a section of that kind.
    private static func header(_ text: String, line: Int, after earlier: [NamedSection],
                               fail: (String) -> ConfigurationError) throws -> NamedSection {
        let kinds = sectionKinds.map { "[\($0.kind.rawValue) NAME]" }.joined(separator: " and ")
        guard text.hasSuffix("]") else { throw fail("a section header is [KIND NAME], with the ] ending the line") }
        let words = text.dropFirst().dropLast().split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        guard let first = words.first, let kind = ConfigurationSectionKind.Kind(rawValue: first) else {
            throw fail("unknown section kind \(words.first ?? "(none)") (sections are \(kinds))")
        }
        guard words.count == 2 else { throw fail("[\(kind.rawValue)] sections take one name: [\(kind.rawValue) NAME]") }
        let name = words[1]
        guard name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-_.".contains($0)) }) else {
            throw fail("section name \(name.escapingControlCharacters()) may hold only letters, digits, -, _ and .")
        }
        if let twin = earlier.first(where: { $0.kind == kind && $0.name == name }) {
            throw fail("duplicate section [\(kind.rawValue) \(name)] (first at line \(twin.line))")
        }
        return NamedSection(kind: kind, name: name, line: line)
    }

    /// The default config file: `$SUBDESK_CONFIG`, else `$XDG_CONFIG_HOME/subdesk/config`.
    public static func defaultPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let p = environment["SUBDESK_CONFIG"], !p.isEmpty { return p }
        let base = environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? ((environment["HOME"] ?? NSHomeDirectory()) + "/.config")
        return base + "/subdesk/config"
    }

    /// The config file of an installed subdesk: the package's, which names the store its
    /// services (units, CGI programs) use.
    public static let installedPath = "/etc/subdesk/config"

    /// `installedPath` for a subdesk installed in a system folder (`/usr/bin`, `/usr/local/bin`),
    /// nil for one run from anywhere else: a build folder (the test suite, `swift run`), an
    /// unpacked tarball. So a checkout's commands never read a machine's package config.
    public static func installedPath(executablePath: String) -> String? {
        let folder = (URL(fileURLWithPath: executablePath).resolvingSymlinksInPath().path as NSString).deletingLastPathComponent
        return ["/usr/bin", "/usr/local/bin", "/bin"].contains(folder) ? installedPath : nil
    }

    /// Which config file a command reads, and which it looked at: `--config FILE`, else
    /// `$SUBDESK_CONFIG` (both must exist), else the user's `$XDG_CONFIG_HOME/subdesk/config`,
    /// else, for an installed subdesk, `/etc/subdesk/config`, else none (the defaults). A
    /// default file this user cannot read is skipped, with `skipped` saying so: a package
    /// config kept from other users (0640, group subdesk) is theirs, not an error of this one.
    public struct Lookup: Equatable, Sendable {
        /// The files looked at, in order (the one read last).
        public var lookedAt: [String] = []
        /// The default files that exist but this user cannot read.
        public var skipped: [String] = []
        public var configuration = Configuration()
    }

    public static func lookUp(named flag: String?, environment: [String: String], installed: String?,
                              readable: (String) -> Bool = { access($0, R_OK) == 0 }) throws -> Lookup {
        var lookup = Lookup()
        if let path = flag ?? environment["SUBDESK_CONFIG"].flatMap({ $0.isEmpty ? nil : $0 }) {
            lookup.lookedAt = [path]
            lookup.configuration = try load(path: path, required: true)
            return lookup
        }
        for path in [defaultPath(environment: environment)] + (installed.map { [$0] } ?? []) {
            lookup.lookedAt.append(path)
            guard FileManager.default.fileExists(atPath: path) else { continue }
            guard readable(path) else {
                lookup.skipped.append(path)
                continue
            }
            lookup.configuration = try load(path: path, required: true)
            return lookup
        }
        return lookup
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

    /// The value of a top-level key: the last line that gives it.
    public func string(_ key: ConfigurationKey) -> String? { values[key.name]?.last }
    /// Every value of a top-level key, each line's comma-separated words, blanks left out.
    public func list(_ key: ConfigurationKey) -> [String] {
        (values[key.name] ?? []).flatMap { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } }
            .filter { !$0.isEmpty }
    }
    public func bool(_ key: ConfigurationKey) -> Bool? {
        guard let v = string(key)?.lowercased() else { return nil }
        return ["1", "true", "yes", "on"].contains(v)
    }
    /// The line a top-level key is first given on, if it is.
    public func line(of key: ConfigurationKey) -> Int? { lines[key.name] }

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
