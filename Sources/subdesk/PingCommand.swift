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
        Needs the App Store Server API key settings, like backfill. With several apps, pings
        each app in each of its environments, each line starting with the app; one that fails
        does not stop the others. --json prints one document, {"pings": [...]}.
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
        // Every app and each of its environments, each line naming which (one app: as before,
        // unnamed); one that fails does not stop the others. --json prints one document.
        let targets = try context.scoped(revalidator.appleTargets)
        var pings: [[String: Any]] = []
        for target in targets {
            let named = revalidator.appleTargets.count > 1 ? "\(target.label) \(target.environment): " : ""
            var entry = try ping(context, revalidator, target, wait: waitLimit, prefix: named)
            (entry["app"], entry["bundleId"], entry["environment"]) = (target.app, target.bundleId as Any? ?? NSNull(), target.environment.rawValue)
            pings.append(entry)
        }
        if context.wantsJSON { Output.json(["pings": pings]) }
        return pings.contains { $0["arrived"] as? Bool != true } ? 1 : 0
    }

    /// Pings one app in one environment; returns its JSON entry (`arrived` false, or an
    /// `error`, when the TEST notification did not come through).
    static func ping(_ context: Context, _ revalidator: Revalidator, _ target: Revalidator.AppleTarget, wait waitLimit: TimeInterval,
                     prefix: String) throws -> [String: Any] {
        let environment = target.environment
        if isatty(STDERR_FILENO) == 1 && !context.arguments.has(.quiet) {
            Output.warn("\(prefix)asked Apple (\(environment)) for a TEST notification; waiting up to \(Int(waitLimit)) s for it to arrive")
        }
        let result: Ping.Result
        do {
            result = try revalidator.ping(wait: waitLimit, target: target)
        } catch let error as RevalidationError {
            Output.error("ping: \(prefix)\(error.description)")
            return ["arrived": false, "error": error.description]
        }
        var object: [String: Any] = ["testNotificationToken": result.token, "requested": DateText.iso(result.requested),
                                     "arrived": result.arrived != nil,
                                     "sendAttempts": result.attempts.map { ["attemptDate": DateText.iso($0.date),
                                                                            "sendAttemptResult": $0.result] }]
        if let uuid = result.arrivedUUID { object["notificationUUID"] = uuid }
        if let trip = result.roundTrip { object["roundTripMs"] = trip }
        if context.wantsJSON { return object }
        if let arrival = result.arrivalText {
            Output.line(prefix + arrival + " (Apple: \(Ping.describe(result.attempts)))")
        } else {
            Output.line(prefix + "no TEST notification arrived within \(Int(waitLimit)) s (token \(result.token)); "
                        + "Apple: \(Ping.describe(result.attempts))")
        }
        return object
    }
}
