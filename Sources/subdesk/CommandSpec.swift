import Foundation
import SubscriptionCore

/// One option a command takes: its name, whether it is a switch or takes a value, and what
/// it does. The parser, the command's `--help` and the README's command table read it.
struct CommandOption {
    enum Kind: Equatable {
        /// `--all`
        case flag
        /// `--limit N`; given twice, the last one counts.
        case value(String)
        /// `--root-ca FILE...`: every one given counts.
        case repeatable(String)
    }

    let key: OptionName
    let kind: Kind
    let help: String
    var name: String { key.rawValue }
    /// The config file key the option stands in for, when there is one (flags win).
    var configKey: ConfigurationKey? = nil
    /// The values it takes when they are a fixed set that its value name does not spell
    /// out (`--metric`: every metric's key); `DIMENSION=` for a dimension that takes a value.
    var choices: [String] = []
    /// Its one-letter spelling, when it has one (`-V` for `--version`); a flag only.
    var short: Character? = nil

    static func flag(_ key: OptionName, _ help: String) -> CommandOption {
        CommandOption(key: key, kind: .flag, help: help)
    }

    static func value(_ key: OptionName, _ valueName: String, _ help: String, config: ConfigurationKey? = nil,
                      choices: [String] = []) -> CommandOption {
        CommandOption(key: key, kind: .value(valueName), help: help, configKey: config, choices: choices)
    }

    static func repeatable(_ key: OptionName, _ valueName: String, _ help: String, config: ConfigurationKey? = nil,
                           choices: [String] = []) -> CommandOption {
        CommandOption(key: key, kind: .repeatable(valueName), help: help, configKey: config, choices: choices)
    }

    var takesValue: Bool { kind != .flag }

    /// What a shell completes after the option: its fixed values, or a file name.
    enum Completion: Equatable {
        case none
        case words([String])
        case file
        case directory
    }

    /// `choices` when given, else the words of a value name like `day|week|month`, else a
    /// file or a folder for `FILE`, `PATH`, `STORE` and `DIR`.
    var completion: Completion {
        if !choices.isEmpty { return .words(choices) }
        let valueName: String
        switch kind {
        case .flag: return .none
        case .value(let v), .repeatable(let v): valueName = v
        }
        if valueName.contains("|") && !valueName.contains(" ") {
            return .words(valueName.split(separator: "|").map(String.init))
        }
        switch valueName {
        case "FILE", "PATH", "STORE": return .file
        case "DIR": return .directory
        default: return .none
        }
    }

    /// How help and the README write it: `--all`, `--limit N`, `--root-ca FILE...`, `-V, --version`.
    var synopsis: String {
        if let short, kind == .flag { return "-\(short), --\(name)" }
        switch kind {
        case .flag: return "--\(name)"
        case .value(let value): return "--\(name) \(value)"
        case .repeatable(let value): return "--\(name) \(value)..."
        }
    }
}

/// Options several commands take together (the Apple settings, the intake settings), shown
/// under one heading in each command's help and named once in the README's table.
struct OptionGroup {
    let title: String
    let options: [CommandOption]
    /// Said under the group's options in help.
    var note: String = ""
}

/// What a command does to a store (`StoreWrite`: the dashboard's keys say the same words).
typealias StoreAction = StoreWrite

/// A command as data: its name, what it does, its usage, its options and how it runs.
/// Parsing, `subdesk COMMAND --help`, `subdesk --help` and the README's command table are
/// generated from these (`CommandTable`).
struct CommandSpec {
    let name: String
    /// The positional arguments as the command list shows them beside the name: `ID`.
    var arguments: String = ""
    /// One line for the command list.
    let abstract: String
    /// The forms the command takes, each line starting `subdesk`; continuation lines are indented.
    let usage: String
    /// What help says between the usage and the options.
    let discussion: String
    var options: [CommandOption] = []
    var groups: [OptionGroup] = []
    var action: StoreAction? = nil
    /// What the command's arguments complete to in a shell.
    var argumentCompletion: ArgumentCompletion = .none
    /// Whether an installed subdesk reads the package's config (`/etc/subdesk/config`) when
    /// no other is given. Not for commands that work on their own stores or print
    /// subdesk's own tables (`demo`, `simulate`, `generate`, `man`...): they never meet the
    /// services' store, and a user the package config is kept from gets no notice from them.
    var installedConfig: Bool = true
    let run: (Context) throws -> Int32

    enum ArgumentCompletion {
        case none
        /// A command's name (`subdesk man COMMAND`).
        case commands
        case words([String])
    }

    /// Every option the command takes (besides the global ones), its own first, each once.
    var allOptions: [CommandOption] {
        var seen = Set<String>()
        return (options + groups.flatMap(\.options)).filter { seen.insert($0.name).inserted }
    }

    func option(named name: String) -> CommandOption? {
        allOptions.first { $0.name == name }
    }

    /// What `subdesk COMMAND --help` prints.
    var help: String {
        let lines = usage.split(separator: "\n", omittingEmptySubsequences: false)
        var text = lines.enumerated().map { ($0.offset == 0 ? "usage: " : "       ") + $0.element }.joined(separator: "\n")
        text += "\n\n" + discussion
        var shown = Set<String>()
        if !options.isEmpty {
            text += "\n\noptions:\n" + OptionGroup.list(options)
            shown.formUnion(options.map(\.name))
        }
        for group in groups {
            let rest = group.options.filter { !shown.contains($0.name) }
            shown.formUnion(rest.map(\.name))
            guard !rest.isEmpty else { continue }
            text += "\n\n\(group.title):\n" + OptionGroup.list(rest)
            if !group.note.isEmpty { text += "\n" + group.note }
        }
        text += "\n\nglobal options: " + OptionGroup.global.options.map(\.synopsis).joined(separator: ", ") + " (see subdesk --help)"
        return text
    }
}

extension OptionGroup {
    /// Options as help lists them: synopsis, then help wrapped beside it, then the config key.
    static func list(_ options: [CommandOption], width: Int = 92) -> String {
        let column = min(28, (options.map(\.synopsis.count).max() ?? 0) + 4)
        return options.map { option in
            let help = option.help + (option.configKey.map { " (config: \($0.name))" } ?? "")
            let wrapped = wrap(help, width: max(30, width - column))
            let head = "  " + option.synopsis
            var lines = [head.count + 2 <= column ? head.padding(toLength: column, withPad: " ", startingAt: 0) + wrapped[0]
                                                  : head]
            let rest = head.count + 2 <= column ? Array(wrapped.dropFirst()) : wrapped
            lines += rest.map { String(repeating: " ", count: column) + $0 }
            return lines.joined(separator: "\n")
        }.joined(separator: "\n")
    }

    /// `text` in lines of at most `width` columns, broken at spaces.
    static func wrap(_ text: String, width: Int) -> [String] { WordWrap.lines(text, width: width) }
}
