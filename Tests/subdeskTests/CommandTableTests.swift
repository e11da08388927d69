import Foundation
import XCTest
@testable import subdesk
import SubscriptionCore

/// The commands are declared once, as `CommandSpec`s: parsing, help and the README's table
/// follow from them.
final class CommandTableTests: XCTestCase {
    let table = CommandTable.standard

    static var repoRoot: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
    }

    /// The README's command table is `subdesk commands` pasted; it must be pasted again when a command changes.
    func testTheReadmeCommandTableIsTheCommandTable() throws {
        let readme = try String(contentsOfFile: Self.repoRoot + "/README.md", encoding: .utf8)
        XCTAssertTrue(readme.contains(table.markdown() + "\n"), "README.md's command table differs; paste `subdesk commands`:\n\(table.markdown())")
    }

    /// An option one command takes (`--header-position`, retention's) given to another:
    /// parsed there, refused where it is not declared, and shown in that command's help and row.
    func testAnOptionAddedToOneSpecIsParsedRefusedElsewhereAndShownInHelpAndTheReadme() throws {
        var extended = table
        let show = try XCTUnwrap(extended.commands.firstIndex { $0.name == "show" })
        extended.commands[show].options.append(.value(.headerPosition, "WHERE", "paint the timeline: always, never or auto"))

        let parsed = Arguments.parse(["show", "--header-position", "never", "user-1"], commands: extended)
        XCTAssertNil(parsed.problem)
        XCTAssertEqual(parsed.value(.headerPosition), "never")
        XCTAssertEqual(parsed.positionals, ["user-1"])
        // Before the command too, as every option may come.
        XCTAssertEqual(Arguments.parse(["--header-position=auto", "show", "user-1"], commands: extended).value(.headerPosition), "auto")

        let elsewhere = Arguments.parse(["search", "--header-position", "never", "user"], commands: extended)
        XCTAssertEqual(elsewhere.problem?.description, "'search' does not take --header-position (see subdesk search --help)")
        XCTAssertEqual(elsewhere.positionals, ["user"], "the refused option's value is not read as an argument")
        XCTAssertNotNil(Arguments.parse(["show", "--header-position", "never", "x"], commands: table).problem, "the standard table is untouched")

        XCTAssertTrue(extended.commands[show].help.contains("--header-position WHERE"), extended.commands[show].help)
        XCTAssertTrue(extended.commands[show].help.contains("paint the timeline"))
        func showRow(_ table: CommandTable) throws -> String {
            String(try XCTUnwrap(table.markdown().split(separator: "\n").first { $0.hasPrefix("| `subdesk show ID` |") }))
        }
        let row = try showRow(extended), standardRow = try showRow(table)
        XCTAssertTrue(row.contains("`--header-position WHERE`"), row)
        XCTAssertFalse(standardRow.contains("--header-position"))
    }

    func testRefusalsNameTheOptionAndTheCommand() {
        XCTAssertEqual(Arguments.parse(["show", "--jsno", "x"], commands: table).problem?.description,
                       "unknown option --jsno (see subdesk show --help)")
        XCTAssertEqual(Arguments.parse(["--limit", "5"], commands: table).problem?.description,
                       "'dashboard' does not take --limit (see subdesk dashboard --help)")
        XCTAssertEqual(Arguments.parse(["search", "x", "--limit"], commands: table).problem?.description, "--limit needs a value")
        XCTAssertEqual(Arguments.parse(["search", "x", "--json=yes"], commands: table).problem?.description, "--json takes no value")
        XCTAssertEqual(Arguments.parse(["show", "-x"], commands: table).problem?.description, "unknown option -x")
        XCTAssertEqual(Arguments.parse(["show", "--version"], commands: table).problem?.description,
                       "'show' does not take --version (see subdesk show --help)")
        XCTAssertNil(Arguments.parse(["--version"], commands: table).problem)
    }

    func testGlobalOptionsAndValuesBeforeTheCommand() throws {
        let a = Arguments.parse(["--db", "store.db", "search", "--limit=3", "text", "--", "--not-an-option"], commands: table)
        XCTAssertNil(a.problem)
        XCTAssertEqual(a.command, "search")
        XCTAssertEqual(a.value(.db), "store.db")
        XCTAssertEqual(try a.int(.limit), 3)
        XCTAssertEqual(a.positionals, ["text", "--not-an-option"])
        // A valued option of another command before the name still takes its value, then is refused.
        let b = Arguments.parse(["--limit", "5", "show", "x"], commands: table)
        XCTAssertEqual(b.command, "show")
        XCTAssertEqual(b.problem?.description, "'show' does not take --limit (see subdesk show --help)")
        XCTAssertEqual(Arguments.parse(["ingest", "--root-ca", "a.pem", "--root-ca", "b.pem"], commands: table).values(.rootCa),
                       ["a.pem", "b.pem"])
    }

    /// Before the command is known, a word after an option is read as its value or not by the
    /// option's name alone: a name must be a switch everywhere or take a value everywhere.
    func testAnOptionNameHasOneKindInEveryCommand() {
        var kinds: [String: (takesValue: Bool, command: String)] = [:]
        for option in OptionGroup.global.options { kinds[option.name] = (option.takesValue, "global") }
        for command in table.commands {
            for option in command.allOptions {
                if let seen = kinds[option.name] {
                    XCTAssertEqual(seen.takesValue, option.takesValue, "--\(option.name) in \(command.name) and \(seen.command)")
                    XCTAssertNotEqual(seen.command, "global", "\(command.name) declares the global --\(option.name) again")
                } else {
                    kinds[option.name] = (option.takesValue, command.name)
                }
            }
        }
    }

    func testUsageLinesNameOnlyOptionsTheCommandTakes() throws {
        let global = Set(OptionGroup.global.options.map(\.name))
        let pattern = try NSRegularExpression(pattern: "--([a-z0-9-]+)")
        for command in table.commands {
            let usage = command.usage
            XCTAssertTrue(usage.hasPrefix("subdesk "), command.name)
            for match in pattern.matches(in: usage, range: NSRange(usage.startIndex..., in: usage)) {
                let name = String(usage[Range(match.range(at: 1), in: usage)!])
                XCTAssertTrue(command.option(named: name) != nil || global.contains(name),
                              "\(command.name)'s usage names --\(name), which it does not take")
            }
        }
    }

    /// `OptionName` is the table's vocabulary: each of its cases is an option some command
    /// (or every command) takes, and each option's name is one of them.
    func testEveryOptionNameIsAnOptionOfTheTable() throws {
        let options = table.commands.flatMap(\.allOptions) + OptionGroup.global.options + [CommandTable.version]
        XCTAssertEqual(Set(OptionName.allCases), Set(options.map(\.key)), "OptionName lists the options of the table, no more")
    }

    /// An option that stands in for a config key names a key the file takes at its top level,
    /// so `Context.setting` reads it when the flag is not given.
    func testEveryConfigKeyAnOptionStandsInForIsATopLevelKey() throws {
        let options = table.commands.flatMap(\.allOptions) + OptionGroup.global.options
        let keys = options.compactMap(\.configKey)
        XCTAssertGreaterThan(Set(keys.map(\.name)).count, 15)
        for key in keys {
            XCTAssertTrue(Configuration.keys.contains(key), "\(key.name) is a top-level key, as the sample file words it")
        }
        let tz = try XCTUnwrap(Configuration(text: "tz = Europe/Paris\n", source: "config").string(CommandOption.timeZone.configKey!))
        XCTAssertEqual(tz, "Europe/Paris")
    }

    func testNamesAreUniqueAndEveryCommandHasHelp() {
        XCTAssertEqual(Set(table.commands.map(\.name)).count, table.commands.count)
        for command in table.commands {
            XCTAssertEqual(Set(command.options.map(\.name)).count, command.options.count, command.name)
            XCTAssertTrue(command.help.hasPrefix("usage: subdesk "), command.name)
            XCTAssertFalse(command.abstract.isEmpty, command.name)
            for option in command.allOptions { XCTAssertFalse(option.help.isEmpty, "\(command.name) --\(option.name)") }
        }
        for command in table.commands {
            XCTAssertTrue(table.usage.contains("  \(command.name)"), "subdesk --help lists \(command.name)")
        }
    }
}
