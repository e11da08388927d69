import Foundation
import SubscriptionCore
import Dashboard
import TerminalUI

func runMain() -> Int32 {
    let table = CommandTable.standard
    let arguments = Arguments.parse(Array(CommandLine.arguments.dropFirst()), commands: table)
    if arguments.has(.version) && arguments.command == nil {
        Output.line(SubdeskVersion.text)
        return 0
    }
    let name = arguments.command ?? "dashboard"
    if (arguments.command == nil && arguments.has(.help)) || (name == "help" && arguments.positionals.isEmpty) {
        Output.line(table.usage)
        return 0
    }
    if name == "help", let topic = arguments.positionals.first {
        guard let command = table.spec(named: topic) else {
            Output.error("unknown command '\(SafeText.sanitize(topic))' (see subdesk --help)")
            return 2
        }
        Output.line(command.help)
        return 0
    }
    guard let command = table.spec(named: name) else {
        Output.error("unknown command '\(SafeText.sanitize(name))' (see subdesk --help)")
        return 2
    }
    if arguments.has(.help) {
        Output.line(command.help)
        return 0
    }
    // A web server in front needs an HTTP answer even when set-up fails, so Apple retries.
    let cgi = (name == "ingest" || name == "metrics") && arguments.has(.cgi)
    func failed(_ message: String, _ code: Int32) -> Int32 {
        // Nagios reads 1 and 2 as WARNING and CRITICAL: a check that could not run is UNKNOWN.
        if name == "check" {
            Output.line("SUBDESK UNKNOWN - \(message)")
            return 3
        }
        Output.error(message)
        // A script that asked for JSON gets its error as JSON too.
        if arguments.has(.json) && !cgi { Output.json(["error": message, "exitCode": Int(code)]) }
        guard cgi else { return code }
        return name == "metrics" ? MetricsCommand.respondUnavailable(message) : CGIIngest.respond(.unavailable)
    }
    do {
        if let problem = arguments.problem { throw problem }
        let formats = [OptionName.json, .csv, .ndjson].filter(arguments.has).map(\.rawValue)
        if formats.count > 1 {
            throw UsageError(formats.map { "--" + $0 }.joined(separator: " and ") + " ask for different outputs; give one")
        }
        let context = try Context(arguments: arguments,
                                  installedConfig: command.installedConfig ? Context.installedConfigOfThisExecutable : nil)
        return try command.run(context)
    } catch let e as UsageError {
        return failed(e.description, 2)
    } catch let e as ConfigurationError {
        return failed(e.description, 2)
    } catch let e as ExitStatus {
        return e.code
    } catch let e as StoreError where e.denial != nil {
        return failed(e.denial!.explain(doing: command.action?.words, needs: command.action.map { ($0.privilege, $0.table) }), 1)
    } catch {
        return failed("\(error)", 1)
    }
}

exit(runMain())
