import Foundation
import SubscriptionCore

/// Manual pages in roff (the `man` macros), generated from the command table and the
/// config keys: `subdesk(1)`, and `subdesk-COMMAND(1)` for each command, as git ships
/// them. `subdesk man [COMMAND]` prints one; the package installs them all.
struct ManPages {
    let table: CommandTable

    /// The page's file name and its text, for `subdesk(1)` then each command.
    var all: [(file: String, text: String)] {
        [("subdesk.1", main)] + table.commands.map { ("subdesk-\($0.name).1", page(for: $0)) } + [("subdesk-http.1", helper)]
    }

    /// subdesk-http(1): the HTTP helper the package installs beside subdesk in /usr/bin.
    var helper: String {
        var roff = [".TH SUBDESK\\-HTTP 1 \(header)", ".SH NAME", "subdesk\\-http \\- subdesk's HTTP helper",
                    ".SH SYNOPSIS", Roff.bold("subdesk\\-http"), ".SH DESCRIPTION"]
        roff += Roff.paragraphs("""
        subdesk starts subdesk-http on its first HTTPS request (revalidation, sweeps, backfills, pings, refund \
        answers, OCSP) and keeps it for the rest of its life, speaking to it on a socket that is the helper's \
        standard input and output. It is not run by hand: given any argument it says what it is and exits 2. \
        subdesk finds it through $SUBDESK_HTTP_HELPER, else beside its own executable, else on PATH.
        """)
        roff += [".SH EXIT STATUS", ".TP", Roff.bold("0"), Roff.escape("subdesk closed the socket or exited."),
                 ".TP", Roff.bold("2"), Roff.escape("it was run with arguments."),
                 ".TP", Roff.bold("3"), Roff.escape("a request was over the size limit.")]
        roff += [".SH SEE ALSO", Roff.bold("subdesk") + "(1)"]
        return roff.joined(separator: "\n") + "\n"
    }

    /// Every command's `subdesk(1)` entry and page name, in the table's order.
    private var seeAlso: String {
        (["subdesk"] + table.commands.map { "subdesk-\($0.name)" }).map { Roff.bold($0) + "(1)" }.joined(separator: ",\n")
    }

    private var header: String {
        let date = SubdeskVersion.buildDate == "unknown" ? "" : String(SubdeskVersion.buildDate.prefix(10))
        return "\"\(date)\" \"subdesk \(SubdeskVersion.string)\" \"subdesk manual\""
    }

    // MARK: subdesk(1)

    var main: String {
        var roff = [".TH SUBDESK 1 \(header)", ".SH NAME", "subdesk \\- App Store subscription operations: intake, state, dashboard",
                    ".SH SYNOPSIS",
                    Roff.bold("subdesk") + " [" + Roff.bold("\\-\\-db") + " " + Roff.italic("STORE") + "] ["
                        + Roff.bold("\\-\\-config") + " " + Roff.italic("FILE") + "] [" + Roff.italic("COMMAND") + "] ["
                        + Roff.italic("OPTIONS") + "]",
                    ".br",
                    Roff.bold("subdesk help") + " [" + Roff.italic("COMMAND") + "]",
                    ".br",
                    Roff.bold("subdesk \\-\\-version") + " | " + Roff.bold("\\-V"),
                    ".SH DESCRIPTION"]
        roff += Roff.paragraphs("""
        App Store subscription operations: verified notification intake into a local store (SQLite, or PostgreSQL \
        for a team), each subscriber's true state, and a terminal dashboard. Without a command, subdesk opens the \
        dashboard.

        Every command is described in its own page, subdesk-COMMAND(1), and by subdesk COMMAND --help. Options may \
        come before or after the command's name; --name=value and --name value are the same.
        """)
        roff.append(".SH COMMANDS")
        for command in table.commands {
            roff.append(".TP")
            roff.append(Roff.bold(Roff.escape(command.name)) + (command.arguments.isEmpty ? "" : " " + Roff.italic(Roff.escape(command.arguments))))
            roff.append(Roff.escape(command.abstract) + "; see " + Roff.bold("subdesk\\-" + Roff.escape(command.name)) + "(1).")
        }
        roff += [".TP", Roff.bold("help") + " [" + Roff.italic("COMMAND") + "]", "this list, or a command's own help."]
        roff.append(".SH GLOBAL OPTIONS")
        roff += Roff.options(OptionGroup.global.options + [CommandTable.version])
        roff.append(".SH CONFIGURATION")
        roff += Roff.paragraphs("""
        The config file is --config FILE, else $SUBDESK_CONFIG (either must exist), else \
        $XDG_CONFIG_HOME/subdesk/config (~/.config/subdesk/config) when it exists, else, for subdesk installed in \
        /usr/bin or /usr/local/bin, /etc/subdesk/config when it exists; else none, and the defaults apply. One of \
        the last two that this user cannot read is skipped with a notice naming it (the package's is readable by \
        the subdesk group only); demo, simulate, generate and the commands that print subdesk's own tables never \
        read /etc/subdesk/config. It holds key = value lines; a line starting with # is a comment. A flag of \
        the same name (with dashes) wins over its key. A key marked repeatable may be given on several lines, or \
        as a comma-separated list. The package installs /etc/subdesk/config with every key commented out but db, \
        which names the store its services use; subdesk sample-config prints the sample, \
        subdesk sample-config --installed the package's.
        """)
        func list(_ keys: [ConfigurationKey]) {
            for key in keys {
                roff += [".TP", Roff.bold(Roff.escape(key.name)) + " = " + Roff.italic(Roff.escape(key.example)),
                         Roff.escape(key.help + (key.repeatable ? " (repeatable)" : "") + ".")]
            }
        }
        for section in Configuration.sections {
            roff.append(".SS " + Roff.escape(section.title))
            list(section.keys)
        }
        for kind in Configuration.sectionKinds {
            roff.append(".SS " + Roff.escape(kind.title))
            roff += Roff.paragraphs(kind.help + " A line [\(kind.kind.rawValue) NAME] starts the section; its keys run to the "
                                    + "next section, after every team-wide setting.")
            list(kind.keys)
        }
        roff.append(".SH FILES")
        for (file, what) in Self.files {
            roff += [".TP", Roff.italic(Roff.escape(file)), Roff.escape(what)]
        }
        roff.append(".SH ENVIRONMENT")
        for (name, what) in Self.environment {
            roff += [".TP", Roff.bold(Roff.escape(name)), Roff.escape(what)]
        }
        roff.append(".SH EXIT STATUS")
        for (code, what) in Self.exitStatus {
            roff += [".TP", Roff.bold(code), Roff.escape(what)]
        }
        roff.append(".SH EXAMPLES")
        for (command, what) in Self.examples {
            roff += [".PP", Roff.escape(what), ".PP", ".RS 4", Roff.bold(Roff.escape(command)), ".RE"]
        }
        roff += [".SH SEE ALSO", seeAlso]
        return roff.joined(separator: "\n") + "\n"
    }

    static let files: [(String, String)] = [
        ("$XDG_CONFIG_HOME/subdesk/config", "the user's config file (~/.config/subdesk/config when XDG_CONFIG_HOME is unset)."),
        ("/etc/subdesk/config", "the package's config (root, group subdesk, 0640): db names the store the package's units and "
         + "CGI programs use, \(Configuration.installedStore); read by an installed subdesk when no other config is "
         + "named or the user's own (see CONFIGURATION)."),
        ("$XDG_DATA_HOME/subdesk/subdesk.db", "the default store (~/.local/share/subdesk/subdesk.db)."),
        ("$XDG_DATA_HOME/subdesk/demo.db", "the demo store subdesk demo builds; reading commands show it while no store exists."),
        ("/var/lib/subdesk", "the store of the package's services, owned by the subdesk user; never removed by the package."),
        ("/usr/lib/subdesk", "the CGI programs a web server runs: subdesk-cgi (the notification URL) and subdesk-metrics-cgi."),
        ("/usr/lib/systemd/system", "the package's units: subdesk-serve.socket and .service, subdesk-sweep and subdesk-metrics "
         + "(.service and .timer); none is enabled by the package."),
        ("/usr/share/doc/subdesk", "README.md and deploy-README.md, the set-up guides; examples/ holds the web-server "
         + "configurations (CGI and serve, for lighttpd, nginx and Apache) and the Prometheus rules."),
        ("/usr/share/subdesk", "the demo's scenarios and TEST ONLY certificate authority (never to be trusted outside a demo store)."),
    ]

    static let environment: [(String, String)] = [
        ("SUBDESK_DB", "the store, when --db is not given."),
        ("SUBDESK_CONFIG", "the config file, when --config is not given (web servers start CGI programs with it)."),
        ("XDG_CONFIG_HOME, XDG_DATA_HOME", "where the config file and the default stores are."),
        ("SUBDESK_SAMPLE_DATA", "the demo's sample-data folder, when --sample-data is not given; else ../share/subdesk "
         + "beside the executable, else a sample-data folder above the current or the executable's folder."),
        ("SUBDESK_HTTP_HELPER", "the HTTP helper (subdesk-http) that revalidation starts; else beside the executable, else on PATH."),
        ("NO_COLOR", "set: the dashboard draws in one colour."),
        ("SUBDESK_ASCII", "1: the dashboard draws with ASCII characters only."),
    ]

    static let exitStatus: [(String, String)] = [
        ("0", "done."),
        ("1", "the command failed (a store, Apple or a file could not do what was asked); the message says why."),
        ("2", "the command line or the config file is wrong; nothing was done."),
        ("0 to 3", "subdesk check: OK, WARNING, CRITICAL, UNKNOWN, as Nagios reads them."),
    ]

    static let examples: [(String, String)] = [
        ("subdesk demo", "Build a demo store from the sample scenarios and open the dashboard on it:"),
        ("subdesk show 2000000123456789", "A subscriber's state and history, by original transaction id (or app account token):"),
        ("subdesk counts --period week --segment paid", "Weekly counts of paid subscriptions:"),
        ("subdesk ingest --config /etc/subdesk/config notifications/*.json", "Ingest saved notification bodies:"),
        ("subdesk doctor", "Check the set-up:"),
    ]

    // MARK: subdesk-COMMAND(1)

    func page(for command: CommandSpec) -> String {
        let name = "subdesk-" + command.name
        var roff = [".TH \(name.uppercased()) 1 \(header)", ".SH NAME",
                    Roff.escape(name) + " \\- " + Roff.escape(command.abstract), ".SH SYNOPSIS"]
        // As help shows it: each form on its lines, continuation lines indented.
        roff += [".nf"] + command.usage.split(separator: "\n").map { Roff.escape(String($0)) } + [".fi"]
        roff.append(".SH DESCRIPTION")
        roff += Roff.paragraphs(command.discussion)
        var shown = Set<String>()
        if !command.options.isEmpty {
            roff.append(".SH OPTIONS")
            roff += Roff.options(command.options)
            shown.formUnion(command.options.map(\.name))
        }
        for group in command.groups {
            let rest = group.options.filter { !shown.contains($0.name) }
            shown.formUnion(rest.map(\.name))
            guard !rest.isEmpty else { continue }
            roff.append(".SH " + Roff.escape(group.title.uppercased()))
            roff += Roff.options(rest)
            if !group.note.isEmpty { roff += Roff.paragraphs(group.note) }
        }
        roff.append(".SH GLOBAL OPTIONS")
        roff += Roff.options(OptionGroup.global.options)
        roff += [".SH SEE ALSO", Roff.bold("subdesk") + "(1)"]
        return roff.joined(separator: "\n") + "\n"
    }
}

/// Writing roff: text escaped so that no character is read as a request or an escape.
enum Roff {
    /// A backslash as `\e`, a dash as `\-` (so options can be searched and copied), a line's
    /// leading `.` or `'` behind `\&`, and any character beyond ASCII as `\[uXXXX]`.
    static func escape(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": out += "\\e"
            case "-": out += "\\-"
            case "\n": out += "\n"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F: out += " "
            case _ where scalar.value > 0x7E: out += String(format: "\\[u%04X]", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            line.hasPrefix(".") || line.hasPrefix("'") ? "\\&" + line : String(line)
        }.joined(separator: "\n")
    }

    static func bold(_ roff: String) -> String { "\\fB" + roff + "\\fR" }
    static func italic(_ roff: String) -> String { "\\fI" + roff + "\\fR" }

    /// Text in paragraphs: a blank line starts a new one; lines are filled.
    static func paragraphs(_ text: String) -> [String] {
        text.components(separatedBy: "\n\n").flatMap { paragraph -> [String] in
            let lines = paragraph.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            return lines.isEmpty ? [] : [".PP"] + lines.map(escape)
        }
    }

    /// Each option as a tagged paragraph: its synopsis, its help, its config key and values.
    static func options(_ options: [CommandOption]) -> [String] {
        options.flatMap { option -> [String] in
            var tag = (option.short.map { bold(escape("-\($0)")) + ", " } ?? "") + bold(escape("--" + option.name))
            switch option.kind {
            case .flag: break
            case .value(let value): tag += " " + italic(escape(value))
            case .repeatable(let value): tag += " " + italic(escape(value)) + "..."
            }
            var help = option.help
            if let key = option.configKey { help += " (config: \(key.name))" }
            if case .words(let words) = option.completion, !option.choices.isEmpty {
                help += ". One of: " + words.joined(separator: ", ")
            }
            return [".TP", tag, escape(help)]
        }
    }
}
