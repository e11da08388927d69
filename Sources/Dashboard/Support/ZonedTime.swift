import Foundation
import SubscriptionCore

/// Formats instants in the time zone the dashboard shows, which the operator can change.
///
/// Every frame formats dozens of dates, and a `DateFormatter` is costly to
/// make, so formatters are kept per zone and pattern.
public struct ZonedTime: Equatable, Sendable {
    public var zone: TimeZone

    public init(zone: TimeZone) {
        self.zone = zone
    }

    public static let utc = ZonedTime(zone: TimeZone(identifier: "UTC")!)

    /// `2026-11-16 09:14`
    public func minute(_ millis: Millis) -> String { format(millis, "yyyy-MM-dd HH:mm") }
    /// Without the year, where columns are scarce: `11-27 12:00`.
    public func shortMinute(_ millis: Millis) -> String { format(millis, "MM-dd HH:mm") }
    /// `09:14:07`
    public func clock(_ millis: Millis) -> String { format(millis, "HH:mm:ss") }
    /// `2026-11-16`
    public func day(_ millis: Millis) -> String { format(millis, "yyyy-MM-dd") }

    public func format(_ millis: Millis, _ pattern: String) -> String {
        FormatterCache.shared.string(from: DateText.date(millis), pattern: pattern, zone: zone)
    }

    /// The name shown on screen: `UTC`, or the zone's identifier such as `Europe/Paris`.
    public var label: String { ZonedTime.label(for: zone) }

    /// A short name for column headers at `instant`: `UTC`, `PST`, `CET`, or `GMT+9`.
    public func abbreviation(at instant: Millis) -> String {
        if label == "UTC" { return "UTC" }
        return zone.abbreviation(for: DateText.date(instant)) ?? label
    }

    public static func label(for zone: TimeZone) -> String {
        ["UTC", "GMT", "Etc/UTC", "Etc/GMT", "Universal", "Zulu"].contains(zone.identifier) ? "UTC" : zone.identifier
    }
}

/// Shared formatters; a lock because `DateFormatter` is not safe to share unguarded.
private final class FormatterCache: @unchecked Sendable {
    static let shared = FormatterCache()
    private var formatters: [String: DateFormatter] = [:]
    private let lock = NSLock()

    func string(from date: Date, pattern: String, zone: TimeZone) -> String {
        lock.lock()
        defer { lock.unlock() }
        let key = zone.identifier + "|" + pattern
        if let formatter = formatters[key] { return formatter.string(from: date) }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = zone
        formatter.dateFormat = pattern
        formatters[key] = formatter
        return formatter.string(from: date)
    }
}
