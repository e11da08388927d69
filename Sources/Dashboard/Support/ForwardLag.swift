import SubscriptionCore
import TerminalUI

/// How far behind the relay is, judged for `:health`: one row per `[forward]` target, from
/// the same per-target sums `subdesk forward status` prints.
enum ForwardLag {
    /// The oldest pending delivery waiting longer than this is a warning: the deliverer
    /// retries within the hour, so a wait past a few retries means the target is not taking them.
    static let warningAge: Millis = 15 * 60_000
    /// Past this it is critical: the team's servers are an hour behind Apple.
    static let criticalAge: Millis = 60 * 60_000

    static var threshold: String {
        "warn \(OnCallHealth.span(warningAge)), crit \(OnCallHealth.span(criticalAge))"
    }

    /// How the wait of `row`'s oldest pending delivery stands at `now`.
    static func level(of row: ForwardTargetStatus, now: Millis) -> HealthSignal.Level {
        guard let age = ForwardStatusText.oldestAge(row, now: now) else { return .ok }
        return age > criticalAge ? .critical : age > warningAge ? .warning : .ok
    }

    /// A row per target: its oldest pending delivery's wait, and its dead deliveries (those
    /// never reached the target, and stay in the outbox).
    static func signals(_ rows: [ForwardTargetStatus], now: Millis) -> [HealthSignal] {
        rows.map { row in
            let age = ForwardStatusText.oldestAge(row, now: now)
            let waiting = age.map { "\(row.pending) pending, oldest \(OnCallHealth.span($0))" } ?? "nothing pending"
            let lag = level(of: row, now: now)
            let level = max(lag, row.dead > 0 ? .warning : .ok)
            var problems: [String] = []
            if lag != .ok, let age {
                problems.append("\(row.pending) deliveries to \(row.target) pending, the oldest for \(OnCallHealth.span(age)) (limit "
                                + "\(OnCallHealth.span(lag == .critical ? criticalAge : warningAge)))"
                                + (row.lastError.map { "; last error: " + ForwardStatusText.error($0) } ?? ""))
            }
            if row.dead > 0 {
                problems.append("\(row.dead) deliveries to \(row.target) are dead: that server never got them")
            }
            return HealthSignal(name: "forward \(row.target)", value: waiting + (row.dead > 0 ? " · \(row.dead) dead" : ""),
                                threshold: threshold, level: level,
                                problem: problems.isEmpty ? nil : problems.joined(separator: "; ") + "; see subdesk forward status",
                                runs: "subdesk forward status")
        }
    }

    static func role(_ level: HealthSignal.Level) -> StyleRole { HealthView.role(level) }
}
