import Foundation
import SubscriptionCore

enum CountsCommand {
    static let help = """
    usage: subdesk counts [--from DAY] [--to DAY] [--tz ZONE] [--segment paid|family_shared|sandbox|all] [--json|--csv]

    Daily counts, the same the dashboard's :daily screen shows: new subscriptions,
    resubscriptions, renewals, billing recoveries, renewal failures, grace entries,
    expirations by reason, refunds, revocations, upgrades, downgrades, auto-renew off/on,
    trial starts and conversions, and end-of-day active subscriptions, active trials,
    in grace and in billing retry. DAY is YYYY-MM-DD in ZONE (default UTC); the range
    defaults to the last 30 days. Family-shared and sandbox are counted apart
    (--segment; default paid).
    """

    static func timeZone(_ context: Context) throws -> TimeZone {
        let name = context.setting("tz", "tz") ?? "UTC"
        guard let zone = TimeZone(identifier: name) else { throw UsageError("unknown time zone \(name) (use e.g. UTC or Europe/Paris)") }
        return zone
    }

    static func segments(_ text: String?) throws -> Set<CountSegment> {
        guard let text else { return [.paid] }
        if text == "all" { return Set(CountSegment.allCases) }
        guard let s = CountSegment(rawValue: text) else { throw UsageError("--segment must be paid, family_shared, sandbox or all") }
        return [s]
    }

    static func run(_ context: Context) throws -> Int32 {
        let zone = try timeZone(context)
        let zoneName = context.setting("tz", "tz") ?? "UTC"
        let to = context.arguments.value("to") ?? DailyCountsReport.today(in: zone)
        let from = context.arguments.value("from") ?? DailyCountsReport.day(to, plus: -29, in: zone)
        let store = try context.openStore(mode: .reading)
        let days: [DayCounts]
        do {
            days = try DailyCountsReport.compute(store: store, from: from, to: to, timeZone: zone,
                                                 segments: try segments(context.arguments.value("segment")))
        } catch let e as ConfigurationError {
            throw UsageError(e.description)
        }
        if context.wantsJSON {
            Output.json(days.map { $0.jsonObject() })
        } else if context.arguments.has("csv") {
            Output.line((["day"] + Metric.allCases.map(\.rawValue)).joined(separator: ","))
            for d in days { Output.line(([d.day] + Metric.allCases.map { String(d[$0]) }).joined(separator: ",")) }
        } else {
            Output.line("daily counts \(from)..\(to), time zone \(zoneName)")
            let shown: [Metric] = [.newSubscriptions, .renewals, .renewalFailures, .expiredVoluntary, .expiredBillingRetry,
                                   .refunds, .trialStarts, .activeSubscriptions, .inGracePeriod, .inBillingRetry]
            Output.line(ListCommands.pad(["DAY", "NEW", "RENEW", "FAIL", "EXP-VOL", "EXP-BILL", "REFUND", "TRIALS", "ACTIVE", "GRACE", "RETRY"],
                                         [10, 6, 6, 6, 8, 8, 7, 7, 7, 6, 6]))
            for d in days {
                Output.line(ListCommands.pad([d.day] + shown.map { String(d[$0]) }, [10, 6, 6, 6, 8, 8, 7, 7, 7, 6, 6]))
            }
        }
        return 0
    }
}
