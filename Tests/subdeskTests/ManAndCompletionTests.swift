import Foundation
import SubscriptionCore
import XCTest
@testable import subdesk

/// The manual pages, the shell completions and the sample config are generated from the
/// command table and the config keys: each command and option appears in all of them, and
/// the shells and man read them without a complaint.
final class ManAndCompletionTests: SubdeskTestCase {
    let table = CommandTable.standard

    /// What a shell's script says for `command`: the lines (bash, zsh: one case arm; fish:
    /// each `complete` line) that give the command's options.
    func lines(for command: String, in script: String, shell: Completions.Shell) -> String {
        script.split(separator: "\n").filter { line in
            switch shell {
            case .bash: return line.hasPrefix("        \(command)) options=")
            case .zsh: return line.hasPrefix("        \(command)) _arguments")
            case .fish: return line.contains("'__fish_seen_subcommand_from \(command)'")
            }
        }.joined(separator: "\n")
    }

    func mentions(_ option: CommandOption, _ text: String, shell: Completions.Shell) -> Bool {
        switch shell {
        case .bash: return text.split(whereSeparator: { $0 == " " || $0 == "\"" }).contains("--\(option.name)")
        case .zsh: return text.contains("'--\(option.name)[") || text.contains("--\(option.name)=[")
        case .fish: return text.contains(" -l \(option.name) ")
        }
    }

    func testEveryCommandAndOptionIsInTheManPagesAndEachCompletion() {
        let pages = ManPages(table: table)
        for command in table.commands {
            XCTAssertTrue(pages.main.contains(".TP\n\\fB\(Roff.escape(command.name))\\fR"), "subdesk(1) lacks \(command.name)")
            XCTAssertTrue(pages.main.contains("\\fBsubdesk\\-\(Roff.escape(command.name))\\fR(1)"), "subdesk(1) does not point to its page")
            let page = pages.page(for: command)
            for option in command.allOptions + OptionGroup.global.options {
                XCTAssertTrue(page.contains(".TP\n\\fB\(Roff.escape("--" + option.name))\\fR"), "subdesk-\(command.name)(1) lacks --\(option.name)")
            }
        }
        for option in OptionGroup.global.options + [CommandTable.version] {
            // `-V, --version` where the option has a one-letter spelling.
            let short = option.short.map { "\\fB\(Roff.escape("-\($0)"))\\fR, " } ?? ""
            XCTAssertTrue(pages.main.contains(".TP\n\(short)\\fB\(Roff.escape("--" + option.name))\\fR"), "subdesk(1) lacks --\(option.name)")
        }
        // subdesk(1), a page for each command, and subdesk-http(1), the helper the package installs too.
        XCTAssertEqual(pages.all.map(\.file), ["subdesk.1"] + table.commands.map { "subdesk-\($0.name).1" } + ["subdesk-http.1"])
        for shell in Completions.Shell.allCases {
            let script = Completions(table: table).script(for: shell)
            for command in table.commands {
                let own = lines(for: command.name, in: script, shell: shell)
                XCTAssertFalse(own.isEmpty && !command.allOptions.isEmpty, "\(shell): no options for \(command.name)")
                for option in command.allOptions {
                    XCTAssertTrue(mentions(option, own, shell: shell), "\(shell): \(command.name) lacks --\(option.name)")
                }
            }
            for option in OptionGroup.global.options {
                XCTAssertTrue(mentions(option, script, shell: shell), "\(shell): no --\(option.name)")
            }
        }
    }

    /// An option one command takes (`--header-position`, retention's) given to `counts`.
    func testAnOptionAddedToASpecChangesItsManPageAndCompletionsWithNoOtherEdit() throws {
        var extended = table
        let counts = try XCTUnwrap(extended.commands.firstIndex { $0.name == "counts" })
        extended.commands[counts].options.append(.value(.headerPosition, "always|never", "paint the numbers"))
        let page = ManPages(table: extended).page(for: extended.commands[counts])
        XCTAssertTrue(page.contains(".TP\n\\fB\\-\\-header\\-position\\fR \\fIalways|never\\fR\npaint the numbers"), page)
        XCTAssertFalse(ManPages(table: table).page(for: table.commands[counts]).contains("header\\-position"))

        let bash = Completions(table: extended).bash
        XCTAssertTrue(lines(for: "counts", in: bash, shell: .bash).contains(" --header-position"))
        XCTAssertFalse(lines(for: "counts", in: Completions(table: table).bash, shell: .bash).contains(" --header-position"))
        XCTAssertTrue(bash.contains("counts:header-position) COMPREPLY=($(compgen -W \"always never\" -- \"$cur\"))"), bash)
        XCTAssertTrue(Completions(table: extended).zsh.contains("'--header-position=[paint the numbers]:always|never:(always never)'"))
        let fish = "complete -c subdesk -n '__fish_seen_subcommand_from counts' -l header-position -x -a 'always never' -d 'paint the numbers'"
        XCTAssertTrue(Completions(table: extended).fish.contains(fish))
        for shell in Completions.Shell.allCases {
            XCTAssertFalse(Completions(table: table).script(for: shell).contains("paint the numbers"), "\(shell): the standard table is untouched")
        }
        XCTAssertFalse(Completions(table: table).fish.contains(fish))
    }

    func testFixedValuesAreDeclaredOnTheOptions() throws {
        let counts = try XCTUnwrap(table.spec(named: "counts"))
        XCTAssertEqual(counts.option(named: "segment")?.completion, .words(CountSegment.allCases.map(\.rawValue) + ["all"]))
        XCTAssertEqual(counts.option(named: "period")?.completion, .words(CountPeriod.allCases.map(\.rawValue)))
        XCTAssertEqual(counts.option(named: "metric")?.completion, .words(Metric.all.map(\.key)))
        XCTAssertEqual(counts.option(named: "where")?.completion, .words(CountsCommand.dimensions.map { $0 + "=" }))
        XCTAssertEqual(counts.option(named: "rates")?.completion, .file)
        XCTAssertEqual(counts.option(named: "from")?.completion, CommandOption.Completion.none)
    }

    // MARK: What man and the shells make of them

    func testEveryManPageRendersWithoutAWarning() throws {
        let pages = dir + "/man"
        let made = try run(["man", "--directory", pages])
        XCTAssertEqual(made.status, 0, made.stderr)
        let files = try FileManager.default.contentsOfDirectory(atPath: pages).sorted()
        XCTAssertEqual(files.count, table.commands.count + 2)
        XCTAssertTrue(files.contains("subdesk-http.1"))
        for file in files {
            let groff = try run(["groff", "-ww", "-man", "-z", pages + "/" + file], executable: "/usr/bin/env")
            XCTAssertEqual(groff.status, 0, file)
            XCTAssertEqual(groff.stderr, "", "groff warns about \(file)")
        }
        let man = try run(["man", "--warnings", "-l", pages + "/subdesk-counts.1"], env: ["MANPAGER": "cat", "MANWIDTH": "100"],
                          executable: "/usr/bin/env")
        XCTAssertEqual(man.status, 0, man.stderr)
        XCTAssertEqual(man.stderr, "")
        XCTAssertTrue(man.stdout.contains("--segment paid|family_shared|sandbox|all"), man.stdout)
        // One page printed alone is the same page.
        XCTAssertEqual(try run(["man", "counts"]).stdout, try String(contentsOfFile: pages + "/subdesk-counts.1", encoding: .utf8))
        XCTAssertEqual(try run(["man", "nope"]).status, 2)
    }

    /// Completes the words with the generated bash script, as bash's programmable completion calls it.
    func bashCompletes(_ words: [String], script: String) throws -> [String] {
        let quoted = words.map { "'" + $0 + "'" }.joined(separator: " ")
        let r = try run(["bash", "--norc", "--noprofile", "-c",
                         "source \(script); COMP_WORDS=(\(quoted)); COMP_CWORD=\(words.count - 1); _subdesk; printf '%s\\n' \"${COMPREPLY[@]}\""],
                        executable: "/usr/bin/env")
        XCTAssertEqual(r.stderr, "")
        return r.stdout.split(separator: "\n").map(String.init)
    }

    func testBashCompletesCommandsOptionsAndTheirValues() throws {
        let script = dir + "/subdesk.bash"
        try run(["completions", "bash"]).stdout.write(toFile: script, atomically: true, encoding: .utf8)
        XCTAssertEqual(Set(try bashCompletes(["subdesk", "co"], script: script)),
                       Set(table.commands.map(\.name).filter { $0.hasPrefix("co") }))
        XCTAssertEqual(Set(try bashCompletes(["subdesk", "co"], script: script)), ["cohorts", "commands", "completions", "consent", "counts"])
        XCTAssertEqual(try bashCompletes(["subdesk", "counts", "--se"], script: script), ["--segment"])
        XCTAssertEqual(try bashCompletes(["subdesk", "--db", "x.db", "counts", "--segment", "f"], script: script), ["family_shared"])
        XCTAssertEqual(try bashCompletes(["subdesk", "counts", "--segment", "=", "s"], script: script), ["sandbox"])
        XCTAssertEqual(try bashCompletes(["subdesk", "cohorts", "--period", ""], script: script), ["month", "week"])
        XCTAssertEqual(try bashCompletes(["subdesk", "counts", "--where", "st"], script: script), ["storefront="])
        XCTAssertEqual(try bashCompletes(["subdesk", "man", "cou"], script: script), ["counts"])
        XCTAssertEqual(try bashCompletes(["subdesk", "show", "--seg"], script: script), [], "show takes no --segment")
    }

    func testZshAndFishReadTheirScripts() throws {
        let zsh = dir + "/_subdesk", fish = dir + "/subdesk.fish"
        try run(["completions", "zsh"]).stdout.write(toFile: zsh, atomically: true, encoding: .utf8)
        try run(["completions", "fish"]).stdout.write(toFile: fish, atomically: true, encoding: .utf8)
        let zshCheck = try run(["zsh", "-n", zsh], executable: "/usr/bin/env")
        XCTAssertEqual(zshCheck.status, 0, zshCheck.stderr)
        // compinit finds the function by its #compdef line and binds it to subdesk.
        let probe = dir + "/probe.zsh"
        try "fpath=('\(dir!)' $fpath)\nautoload -Uz compinit\ncompinit -u -D\nprint -r -- \"${_comps[subdesk]}\"\n"
            .write(toFile: probe, atomically: true, encoding: .utf8)
        let bound = try run(["zsh", "-f", probe], executable: "/usr/bin/env")
        XCTAssertEqual(bound.stdout, "_subdesk\n", bound.stderr + " status \(bound.status)")
        // Completions as an interactive zsh offers them (scripts/zsh-complete).
        func zshCompletes(_ line: String) throws -> [String] {
            let r = try run([Self.repoRoot + "/scripts/zsh-complete", dir, line], executable: "/usr/bin/env")
            XCTAssertEqual(r.status, 0, r.stderr)
            return r.stdout.split(separator: "\n").map(String.init)
        }
        XCTAssertEqual(try zshCompletes("subdesk counts --se"), ["--segment"])
        XCTAssertEqual(try zshCompletes("subdesk co"), ["cohorts", "commands", "completions", "consent", "counts"])
        XCTAssertEqual(try zshCompletes("subdesk cohorts --period "), ["month", "week"])
        let fishCheck = try run(["fish", "-n", fish], executable: "/usr/bin/env")
        XCTAssertEqual(fishCheck.status, 0, fishCheck.stderr)
        let completed = try run(["fish", "--no-config", "-c", "source \(fish); complete -C 'subdesk counts --se'; complete -C 'subdesk counts --period '"],
                                executable: "/usr/bin/env")
        XCTAssertEqual(completed.stderr, "")
        XCTAssertEqual(completed.stdout.split(separator: "\n").map { String($0.split(separator: "\t")[0]) },
                       ["--segment", "day", "month", "week"])
    }

    // MARK: The sample config and --version

    func testTheSampleConfigNamesEveryKeyAndParsesWithTheKeysUncommented() throws {
        let sample = Configuration.sampleFile()
        XCTAssertEqual(try Configuration(text: sample, source: "sample").values, [:], "every key is commented out")
        let uncommented = sample.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            Configuration.knownKeys.contains { line.hasPrefix("#\($0) = ") } ? String(line.dropFirst()) : String(line)
        }.joined(separator: "\n")
        XCTAssertEqual(Set(try Configuration(text: uncommented, source: "sample").values.keys), Configuration.knownKeys)
        XCTAssertEqual(try run(["sample-config"]).stdout, sample)
        let main = ManPages(table: table).main
        let help = try run(["--help"]).stdout
        for key in Configuration.keys {
            XCTAssertTrue(main.contains(".TP\n\\fB\(Roff.escape(key.name))\\fR"), "subdesk(1) lacks \(key.name)")
            XCTAssertTrue(help.contains(key.name), "--help lacks \(key.name)")
        }
        // The parser still refuses a key nobody declared.
        XCTAssertThrowsError(try Configuration(text: "colour = red", source: "c"))
        // The sections part, uncommented alone, declares the team's key and one app that names it.
        let sectionKeys = Configuration.sectionKinds.flatMap(\.keys).map(\.name)
        let sections = try XCTUnwrap(sample.components(separatedBy: "## Several apps").last).split(separator: "\n").dropFirst().map { line in
            line.hasPrefix("#[") || sectionKeys.contains { line.hasPrefix("#\($0) = ") } ? String(line.dropFirst()) : String(line)
        }.joined(separator: "\n")
        let apps = try ConfiguredApps(configuration: Configuration(text: sections, source: "sample"))
        XCTAssertEqual(apps.apps.map(\.name), ["fitness"])
        XCTAssertEqual(apps.apps.first?.key?.name, "team")
        for kind in Configuration.sectionKinds {
            XCTAssertTrue(main.contains(".SS " + Roff.escape(kind.title)), "subdesk(1) lacks \(kind.title)")
            for key in kind.keys {
                XCTAssertTrue(main.contains(".TP\n\\fB\(Roff.escape(key.name))\\fR = \\fI\(Roff.escape(key.example))"),
                              "subdesk(1) lacks \(key.name) of \(kind.title)")
            }
        }
    }

    func testVersionNamesTheCommitTheBuildDateTheEnginesAndTheLinking() throws {
        let r = try run(["--version"])
        XCTAssertEqual(r.status, 0)
        let lines = r.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.first, "subdesk \(SubdeskVersion.string)")
        XCTAssertEqual(lines.dropFirst().map { $0.components(separatedBy: ": ")[0] }, ["commit", "built", "engines", "linking"])
        XCTAssertTrue(lines.contains("engines: sqlite,postgresql"), r.stdout)
    }

    /// `subdesk version` and `subdesk -V` print what `--version` prints, and the command
    /// table says so: help, the manual, every shell's completions.
    func testVersionCommandAndShortFlagPrintWhatVersionPrints() throws {
        let long = try run(["--version"])
        for spelling in [["version"], ["-V"]] {
            let r = try run(spelling)
            XCTAssertEqual(r.status, 0, "\(spelling): \(r.stderr)")
            XCTAssertEqual(r.stdout, long.stdout, "\(spelling)")
        }
        let table = CommandTable.standard
        XCTAssertTrue(table.usage.contains("\n  version "), table.usage)
        XCTAssertTrue(table.usage.contains("-V, --version"), table.usage)
        let pages = ManPages(table: table)
        XCTAssertTrue(pages.all.contains { $0.file == "subdesk-version.1" })
        XCTAssertTrue(pages.main.contains("\\fB\\-V\\fR"), "subdesk(1) names -V")
        let completions = Completions(table: table)
        XCTAssertTrue(completions.bash.contains("-V --version"), "bash completes -V")
        XCTAssertTrue(completions.bash.contains(" version "), "bash completes the command")
        XCTAssertTrue(completions.zsh.contains("'-V[print the version]'"), "zsh completes -V")
        XCTAssertTrue(completions.zsh.contains("'version:"), "zsh completes the command")
        XCTAssertTrue(completions.fish.contains("-s V -l version"), "fish completes -V")
        XCTAssertTrue(completions.fish.contains("-a version "), "fish completes the command")
        XCTAssertEqual(Arguments.parse(["show", "-V"], commands: table).problem?.description, "unknown option -V",
                       "-V is the version without a command only")
    }

    /// Unpacked anywhere (usr/bin/subdesk beside usr/share/subdesk), the demo finds its data
    /// from any folder, with no checkout and no SUBDESK_SAMPLE_DATA.
    func testTheDemoFindsItsDataBesideTheExecutableFromAnyFolder() throws {
        let root = dir + "/root"
        try FileManager.default.createDirectory(atPath: root + "/usr/bin", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: root + "/usr/share/subdesk", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Self.binary, toPath: root + "/usr/bin/subdesk")
        for part in ["scenarios", "test-ca"] {
            try FileManager.default.copyItem(atPath: Self.repoRoot + "/sample-data/" + part, toPath: root + "/usr/share/subdesk/" + part)
        }
        let elsewhere = dir + "/elsewhere"
        try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: true)
        let r = try run(["sh", "-c", "cd \(elsewhere) && exec \(root)/usr/bin/subdesk demo --no-dashboard --copies 1 --db demo.db"],
                        env: ["SUBDESK_SAMPLE_DATA": ""], executable: "/usr/bin/env")
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(FileManager.default.fileExists(atPath: elsewhere + "/demo.db"))
        // Without the data beside it, the message says where it looked.
        try FileManager.default.removeItem(atPath: root + "/usr/share/subdesk")
        let missing = try run(["sh", "-c", "cd \(elsewhere) && exec \(root)/usr/bin/subdesk demo --no-dashboard --copies 1 --db demo2.db"],
                              env: ["SUBDESK_SAMPLE_DATA": ""], executable: "/usr/bin/env")
        XCTAssertEqual(missing.status, 2)
        XCTAssertTrue(missing.stderr.contains(root + "/usr/share/subdesk"), missing.stderr)
    }
}
