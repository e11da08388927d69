/// A command line split into a command, positional arguments, options with values and flags.
struct Arguments {
    var command: String?
    var positionals: [String] = []
    var options: [String: [String]] = [:]
    var flags: Set<String> = []

    /// Why the command line cannot be run as written (an option the command does not take,
    /// a value missing); reported once the command is known, in its terms.
    var problem: UsageError?

    /// Splits `argv` as `commands` says: the options the named command's spec lists (or the
    /// dashboard's, with no command) and the global ones are taken; any other is a problem.
    static func parse(_ argv: [String], commands: CommandTable) -> Arguments {
        let named = commands.commandName(in: argv)
        let label = named ?? "dashboard"
        // `help` and an unknown command have no spec: only options no command takes are refused.
        let spec = commands.spec(named: label)
        var result = Arguments()
        func refuse(_ message: String) {
            if result.problem == nil { result.problem = UsageError(message) }
        }
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
            // A one-letter flag declared as such (`-V`): only without a command, as its long name.
            if named == nil, let short = [CommandTable.version].first(where: { $0.short.map { "-\($0)" } == arg }) {
                result.flags.insert(short.name)
                continue
            }
            guard arg.hasPrefix("--") else { refuse("unknown option \(arg)"); continue }
            var name = String(arg.dropFirst(2))
            var inlineValue: String?
            if let eq = name.firstIndex(of: "=") {
                inlineValue = String(name[name.index(after: eq)...])
                name = String(name[..<eq])
            }
            let taken = OptionGroup.global.options.first { $0.name == name }
                ?? (named == nil && name == CommandTable.version.name ? CommandTable.version : nil)
                ?? spec?.option(named: name)
            // An option the command does not take still says whether a value follows it.
            guard let option = taken ?? commands.anyOption(named: name) else {
                refuse("unknown option --\(name)" + (spec == nil ? "" : " (see subdesk \(label) --help)"))
                continue
            }
            if taken == nil && spec != nil {
                refuse("'\(label)' does not take --\(name) (see subdesk \(label) --help)")
            }
            if !option.takesValue {
                if inlineValue != nil { refuse("--\(name) takes no value") }
                if taken != nil { result.flags.insert(name) }
                continue
            }
            let value: String
            if let inlineValue {
                value = inlineValue
            } else {
                guard i < argv.count else { refuse("--\(name) needs a value"); continue }
                value = argv[i]
                i += 1
            }
            if taken != nil { result.options[name, default: []].append(value) }
        }
        return result
    }

    func value(_ name: OptionName) -> String? { options[name.rawValue]?.last }
    func values(_ name: OptionName) -> [String] { options[name.rawValue] ?? [] }
    func has(_ flag: OptionName) -> Bool { flags.contains(flag.rawValue) }

    func int(_ name: OptionName) throws -> Int? {
        guard let v = value(name) else { return nil }
        guard let n = Int(v) else { throw UsageError("--\(name) expects a whole number, got \(v)") }
        return n
    }

    /// A limit on how many rows are shown: a whole number from 1, refused by name otherwise
    /// (a negative one would mean "no limit" to SQLite and an error to PostgreSQL).
    func limit(_ name: OptionName = .limit) throws -> Int? {
        guard let n = try int(name) else { return nil }
        guard n >= 1 else { throw UsageError("--\(name) must be at least 1, got \(n)") }
        return n
    }

    func double(_ name: OptionName) throws -> Double? {
        guard let v = value(name) else { return nil }
        guard let n = Double(v), n.isFinite else { throw UsageError("--\(name) expects a number, got \(v)") }
        return n
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
