/// A command line split into a command, positional arguments, options with values and flags.
struct Arguments {
    var command: String?
    var positionals: [String] = []
    var options: [String: [String]] = [:]
    var flags: Set<String> = []

    /// Options that take a value, for every command (`--db PATH` or `--db=PATH`).
    static let valued: Set<String> = [
        "db", "config", "root-ca", "bundle-id", "app-apple-id", "environment", "allow-environment",
        "shared-secret-file", "since", "limit", "rate", "duration", "copies", "tz", "theme", "from", "to",
        "sample-data", "operator", "until", "reason", "server-api-url", "verify-receipt-url", "subscribers",
        "seed", "status", "segment", "busy-timeout-ms", "server-api-sandbox-url", "verify-receipt-sandbox-url",
        "api-key-file", "api-key-id", "api-issuer-id", "timeout", "concurrency", "receipt-file", "batch-size", "before",
        "wait", "days", "reason-code", "product", "storefront", "preference", "delivery", "sample", "consumed", "period", "rates",
        "where", "by", "metric", "max-pages", "revocation-check", "max-silence", "max-rejected-per-hour", "refund-deadline",
    ]
    /// Options that are switches.
    static let switches: Set<String> = [
        "json", "csv", "ndjson", "all", "help", "version", "allow-v1", "cgi", "no-dashboard", "dry-run", "quiet", "force",
        "only-failures", "resume", "list", "apple", "yes", "consented", "auto", "roles", "print", "definitions-markdown",
    ]

    static func parse(_ argv: [String]) throws -> Arguments {
        var result = Arguments()
        var i = 0
        var onlyPositionals = false
        while i < argv.count {
            let arg = argv[i]
            i += 1
            if onlyPositionals || arg == "-" || !arg.hasPrefix("-") {
                if result.command == nil && !onlyPositionals && arg != "-" { result.command = arg } else { result.positionals.append(arg) }
                continue
            }
            if arg == "--" { onlyPositionals = true; continue }
            if arg == "-h" { result.flags.insert("help"); continue }
            guard arg.hasPrefix("--") else { throw UsageError("unknown option \(arg)") }
            var name = String(arg.dropFirst(2))
            var inlineValue: String?
            if let eq = name.firstIndex(of: "=") {
                inlineValue = String(name[name.index(after: eq)...])
                name = String(name[..<eq])
            }
            if switches.contains(name) {
                if inlineValue != nil { throw UsageError("--\(name) takes no value") }
                result.flags.insert(name)
            } else if valued.contains(name) {
                if let v = inlineValue {
                    result.options[name, default: []].append(v)
                } else {
                    guard i < argv.count else { throw UsageError("--\(name) needs a value") }
                    result.options[name, default: []].append(argv[i])
                    i += 1
                }
            } else {
                throw UsageError("unknown option --\(name)")
            }
        }
        return result
    }

    func value(_ name: String) -> String? { options[name]?.last }
    func values(_ name: String) -> [String] { options[name] ?? [] }
    func has(_ flag: String) -> Bool { flags.contains(flag) }

    func int(_ name: String) throws -> Int? {
        guard let v = value(name) else { return nil }
        guard let n = Int(v) else { throw UsageError("--\(name) expects a whole number, got \(v)") }
        return n
    }

    func double(_ name: String) throws -> Double? {
        guard let v = value(name) else { return nil }
        guard let n = Double(v), n.isFinite else { throw UsageError("--\(name) expects a number, got \(v)") }
        return n
    }

    /// Refuses options the command does not take, so a typo is not silently ignored.
    func allowOnly(_ allowed: Set<String>, command: String) throws {
        let global: Set<String> = ["db", "config", "help", "json", "busy-timeout-ms"]
        for name in Set(options.keys).union(flags) where !allowed.contains(name) && !global.contains(name) {
            throw UsageError("'\(command)' does not take --\(name) (see subdesk \(command) --help)")
        }
    }
}

struct UsageError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// An error that has already been reported; carries the exit status.
struct ExitStatus: Error {
    let code: Int32
}
