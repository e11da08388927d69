import Foundation
import SubscriptionCore
import TerminalUI

enum PingCommand {
    static let spec: CommandSpec = CommandSpec(
        name: "ping", abstract: "ask Apple for a TEST notification and time its way through the webhook",
        usage: "subdesk ping [--wait SECONDS] [--environment Production|Sandbox] [--json]",
        discussion: """
        Is the webhook alive? Asks Apple for a TEST notification (Request a Test Notification)
        and waits until it has come through the server's real intake into this store, then
        prints the round trip. When it has not arrived within --wait (default 30 s), prints
        what Apple reports of its delivery attempts (Get Test Notification Status) and exits 1.
        Needs the App Store Server API key settings, like backfill.
        """,
        options: [
            .value(.wait, "SECONDS", "how long to wait for the TEST notification (default 30)"),
            .quiet,
        ],
        groups: [.apple],
        action: .ping,
        run: run)

    static func run(_ context: Context) throws -> Int32 {
        guard context.arguments.positionals.isEmpty else { throw UsageError("ping takes no arguments") }
        _ = try context.openStore(mode: .existing)  // a missing store is said before anything is asked
        let revalidator = try context.makeRevalidator(maxConnections: 1)
        try ExtendCommand.requireKey(revalidator, ServerAPIAction.ping)
        var waitLimit: TimeInterval = 30
        if let text = context.arguments.value(.wait) {
            guard let seconds = Double(text), seconds > 0, seconds <= 600 else {
                throw UsageError("--wait must be a number of seconds between 0 and 600, got \(text)")
            }
            waitLimit = seconds
        }
        // Every app and each of its environments, each line naming which (one app: as before, unnamed).
        let targets = revalidator.appleTargets
        var failed = false
        for target in targets {
            let named = targets.count > 1 ? "\(target.label) \(target.environment): " : ""
            failed = try ping(context, revalidator, target, wait: waitLimit, prefix: named) || failed
        }
        return failed ? 1 : 0
    }

    /// Pings one app in one environment; true when the TEST notification did not arrive.
    static func ping(_ context: Context, _ revalidator: Revalidator, _ target: Revalidator.AppleTarget, wait waitLimit: TimeInterval,
                     prefix: String) throws -> Bool {
        let environment = target.environment
        if isatty(STDERR_FILENO) == 1 && !context.arguments.has(.quiet) {
            Output.warn("\(prefix)asked Apple (\(environment)) for a TEST notification; waiting up to \(Int(waitLimit)) s for it to arrive")
        }
        let result: Ping.Result
        do {
            result = try revalidator.ping(wait: waitLimit, target: target)
        } catch let error as RevalidationError {
            Output.error("ping: \(prefix)\(error.description)")
            return true
        }
        if context.wantsJSON {
            var object: [String: Any] = ["testNotificationToken": result.token, "requested": DateText.iso(result.requested),
                                         "arrived": result.arrived != nil,
                                         "sendAttempts": result.attempts.map { ["attemptDate": DateText.iso($0.date),
                                                                                "sendAttemptResult": $0.result] }]
            if let uuid = result.arrivedUUID { object["notificationUUID"] = uuid }
            if let trip = result.roundTrip { object["roundTripMs"] = trip }
            if !prefix.isEmpty { (object["app"], object["environment"]) = (target.app, environment.rawValue) }
            Output.json(object)
        } else if let arrival = result.arrivalText {
            Output.line(prefix + arrival + " (Apple: \(Ping.describe(result.attempts)))")
        } else {
            Output.line(prefix + "no TEST notification arrived within \(Int(waitLimit)) s (token \(result.token)); "
                        + "Apple: \(Ping.describe(result.attempts))")
        }
        return result.arrived == nil
    }
}
