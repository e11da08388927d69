import SubscriptionCore
import TerminalUI

/// How `:forward` shades a target's oldest pending delivery: past the on-call limit (what
/// `subdesk check` and `:health` warn at, `OnCallThresholds.maxForwardLag`) it is a warning.
enum ForwardLag {
    static func level(of row: ForwardTargetStatus, now: Millis, limit: Millis = OnCallThresholds().maxForwardLag) -> HealthSignal.Level {
        guard let age = ForwardStatusText.oldestAge(row, now: now) else { return .ok }
        return age > limit ? .warning : .ok
    }

    static func role(_ level: HealthSignal.Level) -> StyleRole { HealthView.role(level) }
}
