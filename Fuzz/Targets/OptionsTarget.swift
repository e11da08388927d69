import Foundation

// The command line's parse, fuzzed: the input is argv, its arguments separated by NUL
// bytes. Each is split by the real command table (`CommandTable.standard`, as `subdesk`
// does first), then every valued option the command took is read the ways the commands
// read values: whole numbers and numbers (`Arguments.int`, `double`), dates and offsets,
// check's durations, cohort months and weeks, counts' days, and the rest of the command
// line's own parses. Nothing is run: no store is opened and nothing is written.
//
// Fuzz/run.sh compiles the subdesk sources (all but main.swift) and the modules they import
// as one module with the targets, so that this file sees the executable's internal types.

enum OptionsTarget {
    static let table = CommandTable.standard

    static func run(_ input: Data) {
        let data = Array(input)
        let argv = data.split(separator: 0, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
        let arguments = Arguments.parse(argv, commands: table)
        _ = arguments.problem.map { "\($0)" }
        if arguments.has(.help), let name = arguments.command, let spec = table.spec(named: name) { _ = spec.help }
        let utc = TimeZone(identifier: "UTC")!
        for (name, values) in arguments.options {
            // Every option taken is one of the table's, so it has a name.
            guard let option = OptionName(rawValue: name) else { preconditionFailure("--\(name) was taken but has no OptionName") }
            _ = try? arguments.int(option)
            _ = try? arguments.double(option)
            for value in values {
                // Dates and offsets (`DateText.parse`, `parseOffset`, through `OperatorDate`).
                _ = try? ListCommands.parseSince(value)
                _ = try? MetricsCommand.duration(value, option: name)
                for period in CohortPeriod.allCases { _ = period.parse(value) }
                _ = try? DailyCountsReport.dayStarts(from: value, to: value, timeZone: utc)
                _ = try? CountsCommand.segments(value)
            }
        }
    }
}
