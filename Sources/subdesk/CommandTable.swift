import Foundation
import SubscriptionCore
import Dashboard
import TerminalUI

/// Every command as data, in the order `subdesk --help` and the README list them.
///
/// Parsing (`Arguments.parse`), each command's `--help`, `subdesk --help` and the README's
/// command table (`subdesk commands` prints it; a test fails when the README differs) are
/// generated from it, so a command or an option is declared once, in its `CommandSpec`.
struct CommandTable {
    var commands: [CommandSpec]

    static let standard: CommandTable = CommandTable(commands: [
        DashboardCommand.spec,
        MaintenanceCommands.initSpec,
        DemoCommands.demoSpec,
        IngestCommand.spec,
        ServeCommand.spec,
        ShowCommand.spec,
        ListCommands.searchSpec,
        ListCommands.notificationsSpec,
        ListCommands.quarantineSpec,
        ListCommands.linkSpec,
        CountsCommand.spec,
        CohortsCommand.spec,
        OperatorCommands.overrideSpec,
        OperatorCommands.auditSpec,
        ConsentCommand.spec,
        RevalidateCommand.spec,
        SweepCommand.spec,
        BackfillCommand.spec,
        BackfillCommand.gapsSpec,
        ForwardCommand.spec,
        PingCommand.spec,
        ExtendCommand.spec,
        RefundsCommand.spec,
        RetentionCommand.spec,
        MaintenanceCommands.doctorSpec,
        MetricsCommand.metricsSpec,
        MetricsCommand.checkSpec,
        MaintenanceCommands.backupSpec,
        DatabaseCommands.migrateSpec,
        DatabaseCommands.dbSpec,
        CommandTable.keysSpec,
        CommandTable.commandsSpec,
        CommandTable.manSpec,
        CommandTable.completionsSpec,
        CommandTable.sampleConfigSpec,
        CommandTable.versionSpec,
        DemoCommands.simulateSpec,
        GenerateCommand.spec,
    ])

    /// `--version` (`-V`): only without a command; `subdesk version` prints the same.
    static let version: CommandOption = {
        var option = CommandOption.flag(.version, "print the version")
        option.short = "V"
        return option
    }()

    static let versionSpec: CommandSpec = printing(
        "version", abstract: "the version, commit, build date, engines and linking (also -V, --version)",
        discussion: "Prints what subdesk --version and subdesk -V print: the version, the commit and date it was built "
            + "from, the store engines it speaks and how it is linked.") { SubdeskVersion.text }

    func spec(named name: String) -> CommandSpec? {
        commands.first { $0.name == name }
    }

    /// The option `name` as any command (or every command) takes it: how to read a word
    /// after it before the command is known, and whether another command takes it.
    func anyOption(named name: String) -> CommandOption? {
        if let global = OptionGroup.global.options.first(where: { $0.name == name }) { return global }
        if name == Self.version.name { return Self.version }
        for command in commands {
            if let option = command.option(named: name) { return option }
        }
        return nil
    }

    /// The command `argv` names: its first word that is neither an option nor an option's
    /// value, as long as no `--` came before it; nil for the default (the dashboard).
    func commandName(in argv: [String]) -> String? {
        var i = 0
        while i < argv.count {
            let arg = argv[i]
            i += 1
            if arg == "--" { return nil }
            if arg == "-" { continue }
            if !arg.hasPrefix("-") { return arg }
            if arg.hasPrefix("--"), !arg.contains("="), anyOption(named: String(arg.dropFirst(2)))?.takesValue == true { i += 1 }
        }
        return nil
    }

    /// What `subdesk --help` (and `subdesk help`) prints.
    var usage: String {
        let rows = commands.map { ($0.arguments.isEmpty ? $0.name : "\($0.name) \($0.arguments)", $0.abstract) }
            + [("help [COMMAND]", "this text, or a command's own help")]
        // A long name and arguments put the abstract on a line of its own, so the column stays narrow.
        let width = 22
        let list = rows.map { row in
            "  " + (row.0.count + 2 <= width ? row.0.padding(toLength: width, withPad: " ", startingAt: 0)
                                             : row.0 + "\n" + String(repeating: " ", count: width + 2)) + row.1
        }
        return """
        usage: subdesk [--db STORE] [--config FILE] [COMMAND] [OPTIONS]

        App Store subscription operations: verified notification intake into a local store,
        each subscriber's true state, and a terminal dashboard.

        commands:
        \(list.joined(separator: "\n"))

        global options:
        \(OptionGroup.list(OptionGroup.global.options + [Self.version]))

        config file keys (key = value, # comments; flags win; man subdesk describes each):
        \(OptionGroup.wrap(Configuration.keys.map { $0.name + ($0.repeatable ? " (repeatable)" : "") }.joined(separator: ", ") + ".",
                           width: 92).joined(separator: "\n"))
        """
    }

    /// The README's command table: each command with what it does and the options it takes,
    /// then the shared option groups and the global options.
    func markdown() -> String {
        func code(_ text: String) -> String { "`" + text.replacingOccurrences(of: "|", with: "\\|") + "`" }
        var lines = ["| Command | What it does | Options |", "|---|---|---|"]
        var groups: [OptionGroup] = []
        for command in commands {
            let own = command.options.map { code($0.synopsis) }.joined(separator: ", ")
            let shared = command.groups.map(\.title).joined(separator: ", ")
            let options = [own, shared].filter { !$0.isEmpty }.joined(separator: "; ")
            let name = command.arguments.isEmpty ? command.name : "\(command.name) \(command.arguments)"
            lines.append("| \(code("subdesk " + name)) | \(command.abstract) | \(options.isEmpty ? "-" : options) |")
            for group in command.groups where !groups.contains(where: { $0.title == group.title }) { groups.append(group) }
        }
        lines.append("| \(code("subdesk help [COMMAND]")) | this list, or a command's own help (also `subdesk COMMAND --help`) | - |")
        lines.append("")
        for group in groups {
            lines.append("- \(group.title.prefix(1).uppercased() + group.title.dropFirst()): "
                         + group.options.map { code($0.synopsis) }.joined(separator: ", ") + ".")
        }
        lines.append("- Every command takes " + OptionGroup.global.options.map { code($0.synopsis) }.joined(separator: ", ")
                     + "; " + code("subdesk --" + Self.version.name) + " (" + code("-" + String(Self.version.short!))
                     + ") prints the version.")
        return lines.joined(separator: "\n")
    }
}

// MARK: - Options several commands share

extension CommandOption {
    static let operatorName = value(.operator, "NAME", "who the audit log names (default: login name)", config: .operator)
    static let rootCA = repeatable(.rootCa, "FILE", "trust roots for signed data (default Apple Root CA - G3)", config: .rootCa)
    static let bundleId = value(.bundleId, "ID", "the app's bundle id; signed data of another app is refused", config: .bundleId)
    static let appAppleId = value(.appAppleId, "N", "the app's Apple id, checked on Production data", config: .appAppleId)
    static let environment = value(.environment, "Production|Sandbox", "the App Store environment: the only one accepted "
                                   + "(default both), and the one asked where one is (default Production)", config: .environment)
    static let allowEnvironment = repeatable(.allowEnvironment, "Xcode|LocalTesting",
                                             "also accept this test environment (refused by default)", config: .allowEnvironments)
    static let sharedSecretFile = value(.sharedSecretFile, "FILE", "the app's shared secret (verifyReceipt, V1 notifications)",
                                        config: .sharedSecretFile)
    static let timeZone = value(.tz, "ZONE", "the time zone days and dates are in (default UTC)", config: .tz)
    /// The options a command reads through `Context.setting`, the flag else its config key.
    static let store = value(.db, "STORE", "the store: a SQLite file, or postgres://... (default $SUBDESK_DB, else "
                             + "$XDG_DATA_HOME/subdesk/subdesk.db)", config: .db)
    static let busyTimeout = value(.busyTimeoutMs, "N", "how long a write waits for other writers", config: .busyTimeoutMs)
    static let revocationCheck = value(.revocationCheck, "off|ocsp", "ocsp asks the OCSP responders the signing leaf and intermediate name "
                                       + "whether either was revoked: a revoked certificate refuses the body (quarantined); a responder that "
                                       + "cannot answer leaves the body unstored and unquarantined (CGI answers 503 so Apple retries; a batch "
                                       + "stops as on a store failure, resumable). Off by default", config: .revocationCheck)
    static let revalidationTimeout = value(.timeout, "SECONDS", "per request, default 30", config: .revalidationTimeout)
    static let serverApiUrl = value(.serverApiUrl, "URL", "default https://api.storekit.apple.com (before 2026-05-05: "
                                    + "https://api.storekit.itunes.apple.com, still served)", config: .serverApiUrl)
    static let serverApiSandboxUrl = value(.serverApiSandboxUrl, "URL", "default https://api.storekit-sandbox.apple.com",
                                           config: .serverApiSandboxUrl)
    static let verifyReceiptUrl = value(.verifyReceiptUrl, "URL", "default https://buy.itunes.apple.com/verifyReceipt",
                                        config: .verifyReceiptUrl)
    static let verifyReceiptSandboxUrl = value(.verifyReceiptSandboxUrl, "URL", "default https://sandbox.itunes.apple.com/verifyReceipt",
                                               config: .verifyReceiptSandboxUrl)
    static let rates = value(.rates, "FILE", "exchange rates that add revenue up in one currency", config: .ratesFile)
    static let segment = value(.segment, "paid|family_shared|sandbox|all", "which subscriptions are counted (default paid)")
    static let csv = flag(.csv, "comma-separated values, a header row first")
    static let quiet = flag(.quiet, "no progress or notices on stderr")
    static let limit = value(.limit, "N", "at most N rows")
    static let reason = value(.reason, "TEXT", "why, for the audit log")
    static let all = flag(.all, "also those already dealt with")
}

extension OptionGroup {
    /// Taken by every command, before or after its name.
    static let global: OptionGroup = OptionGroup(title: "global options", options: [
        .store,
        .value(.config, "FILE", "config file (default $SUBDESK_CONFIG, else $XDG_CONFIG_HOME/subdesk/config)"),
        .value(.app, "NAME", "only this app's records: its name, bundle id or Apple ID (default every app)"),
        .flag(.json, "machine-readable output where a command prints results"),
        .busyTimeout,
        .flag(.help, "this text, or a command's own with `subdesk COMMAND --help`"),
    ])

    /// What intake checks signed data against.
    static let intake: OptionGroup = OptionGroup(title: "intake settings", options: [
        .rootCA, .bundleId, .appAppleId, .environment, .allowEnvironment,
        .flag(.allowV1, "accept version 1 notifications (unsigned; checked with the shared secret)"),
        .sharedSecretFile,
        .revocationCheck,
    ])

    /// What a command that asks Apple needs.
    static let apple: OptionGroup = OptionGroup(title: "Apple settings", options: [
        .value(.apiKeyFile, "FILE", "in-app purchase key (.p8)", config: .apiKeyFile),
        .value(.apiKeyId, "ID", "its key id", config: .apiKeyId),
        .value(.apiIssuerId, "ID", "the issuer id", config: .apiIssuerId),
        .value(.bundleId, "ID", "the app (required with an API key)", config: .bundleId),
        .sharedSecretFile,
        .serverApiUrl, .serverApiSandboxUrl, .verifyReceiptUrl, .verifyReceiptSandboxUrl,
        .revalidationTimeout,
        .rootCA, .operatorName, .appAppleId, .environment, .allowEnvironment,
    ], note: """
    Flags win over config keys. Without an API key, the stored receipt goes to verifyReceipt
    (needs the shared secret). Key and secret files are never printed; one readable by others
    draws a warning.
    """)
}

// MARK: - Commands about subdesk itself

extension CommandTable {
    static let keysSpec: CommandSpec = printing(
        "keys", abstract: "the dashboard's key table",
        discussion: "Prints the dashboard's key table (Markdown), as the README shows it.") { KeyTable.standard.markdown() }

    static let commandsSpec: CommandSpec = printing(
        "commands", abstract: "this command table (Markdown)",
        discussion: "Prints every command with what it does and the options it takes (Markdown), as the README shows it.") {
            CommandTable.standard.markdown()
        }

    static let manSpec: CommandSpec = CommandSpec(
        name: "man", arguments: "[COMMAND]", abstract: "the manual page subdesk(1), or subdesk-COMMAND(1) (roff)",
        usage: "subdesk man [COMMAND]\nsubdesk man --directory DIR",
        discussion: """
        Prints the manual page subdesk(1), or a command's page subdesk-COMMAND(1), in roff, generated
        from the command table (read one with: subdesk man counts | man -l -). --directory writes every
        page into DIR (subdesk.1, subdesk-COMMAND.1), as the package installs them.
        """,
        options: [.value(.directory, "DIR", "write every page into DIR instead")],
        argumentCompletion: .commands,
        installedConfig: false,
        run: { context in
            let pages = ManPages(table: CommandTable.standard)
            if let directory = context.arguments.value(.directory) {
                guard context.arguments.positionals.isEmpty else { throw UsageError("--directory writes every page; name no command") }
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
                for page in pages.all {
                    try Data(page.text.utf8).write(to: URL(fileURLWithPath: directory).appendingPathComponent(page.file))
                }
                return 0
            }
            let positionals = context.arguments.positionals
            guard positionals.count <= 1 else { throw UsageError("subdesk man takes at most one command") }
            guard let name = positionals.first, name != "subdesk" else {
                Output.text(pages.main)
                return 0
            }
            guard let command = CommandTable.standard.spec(named: name) else {
                throw UsageError("no command '\(SafeText.sanitize(name))' (see subdesk --help)")
            }
            Output.text(pages.page(for: command))
            return 0
        })

    static let completionsSpec: CommandSpec = CommandSpec(
        name: "completions", arguments: "bash|zsh|fish", abstract: "a shell completion script for subdesk",
        usage: "subdesk completions bash|zsh|fish",
        discussion: """
        Prints the completion script for the shell, generated from the command table: commands, each
        command's options and the values an option takes where they are a fixed set. To try it in bash:
        source <(subdesk completions bash). The package installs all three.
        """,
        argumentCompletion: .words(Completions.Shell.allCases.map(\.rawValue)),
        installedConfig: false,
        run: { context in
            let names = Completions.Shell.allCases.map(\.rawValue).joined(separator: ", ")
            guard context.arguments.positionals.count == 1 else { throw UsageError("name one shell: \(names)") }
            guard let shell = Completions.Shell(rawValue: context.arguments.positionals[0]) else {
                throw UsageError("no completions for '\(SafeText.sanitize(context.arguments.positionals[0]))': name one of \(names)")
            }
            Output.text(Completions(table: CommandTable.standard).script(for: shell))
            return 0
        })

    static let sampleConfigSpec: CommandSpec = CommandSpec(
        name: "sample-config", abstract: "a config file with every key commented out, each with its help",
        usage: "subdesk sample-config [--installed]",
        discussion: """
        Prints a config file with every key commented out under its help. With --installed, the
        package's /etc/subdesk/config: the same, with db naming the store its services use
        (\(Configuration.installedStore)).
        """,
        options: [.flag(.installed, "the package's config: db names the services' store")],
        installedConfig: false,
        run: { context in
            Output.text(Configuration.sampleFile(installed: context.arguments.has(.installed)))
            return 0
        })

    /// A command that prints one of subdesk's tables, taking no options.
    static func printing(_ name: String, abstract: String, discussion: String, _ text: @escaping () -> String) -> CommandSpec {
        CommandSpec(name: name, abstract: abstract, usage: "subdesk \(name)", discussion: discussion, installedConfig: false, run: { _ in
            Output.line(text())
            return 0
        })
    }
}
