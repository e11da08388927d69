import Foundation

/// The dates operators type for when an override ends, read the same way by the command
/// line and the dashboard.
public enum OperatorDate {
    /// What `parse` accepts, for messages.
    public static let accepted = "2026-12-31, 2026-12-31T12:00 or +7d"

    /// `2026-12-31`, `2026-12-31T12:00`, `2026-12-31 12:00` (in `zone`), or an offset from
    /// `now` such as `+7d`, `+12h` or `+1d6h`; nil when the text is none of these.
    public static func parse(_ text: String, now: Millis, zone: TimeZone = TimeZone(identifier: "UTC")!) -> Millis? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if trimmed.hasPrefix("+") || trimmed.hasPrefix("-") {
            return DateText.parseOffset(trimmed).map { now + $0 }
        }
        return DateText.parse(trimmed, zone: zone)
    }
}
