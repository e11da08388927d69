import Foundation

/// Formats dates for people and for JSON. Every format says or implies UTC unless a zone is given.
public enum DateText {
    public static func date(_ millis: Millis) -> Date { Date(timeIntervalSince1970: Double(millis) / 1000) }
    /// The dates a person or a server may name: years 1 to 9999, UTC. Everything parsed
    /// is within it, so arithmetic on what was read cannot overflow.
    public static let representable: ClosedRange<Millis> = -62_135_596_800_000...253_402_300_799_999

    /// Milliseconds since 1970, saturating at the ends of `representable` (a date no
    /// conversion can trap on) and 0 for NaN.
    public static func millis(_ date: Date) -> Millis {
        let ms = (date.timeIntervalSince1970 * 1000).rounded(.down)
        guard !ms.isNaN else { return 0 }
        if ms <= Double(representable.lowerBound) { return representable.lowerBound }
        if ms >= Double(representable.upperBound) { return representable.upperBound }
        return Millis(ms)
    }
    public static func nowMillis() -> Millis { millis(Date()) }

    private static func formatter(_ format: String, _ zone: TimeZone) -> DateFormatter {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = zone
        f.dateFormat = format
        return f
    }

    private static let isoFormatter = formatter("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'", TimeZone(identifier: "UTC")!)
    private static let minuteFormatter = formatter("yyyy-MM-dd HH:mm", TimeZone(identifier: "UTC")!)
    private static let secondFormatter = formatter("yyyy-MM-dd HH:mm:ss", TimeZone(identifier: "UTC")!)
    private static let lock = NSLock()

    /// ISO 8601 in UTC with milliseconds: `2026-11-16T09:14:00.000Z`.
    public static func iso(_ millis: Millis) -> String {
        lock.lock(); defer { lock.unlock() }
        return isoFormatter.string(from: date(millis))
    }

    /// `2026-11-16 09:14` in UTC.
    public static func minute(_ millis: Millis) -> String {
        lock.lock(); defer { lock.unlock() }
        return minuteFormatter.string(from: date(millis))
    }

    /// `2026-11-16 09:14:07` in UTC.
    public static func second(_ millis: Millis) -> String {
        lock.lock(); defer { lock.unlock() }
        return secondFormatter.string(from: date(millis))
    }

    /// Formats in an arbitrary zone with a DateFormatter pattern.
    public static func format(_ millis: Millis, _ pattern: String, zone: TimeZone) -> String {
        formatter(pattern, zone).string(from: date(millis))
    }

    /// Parses `2026-11-16`, `2026-11-16T09:14`, `2026-11-16T09:14:00Z`, `2026-11-16 09:14:00`,
    /// or a plain number of milliseconds. Dates without a zone are in `zone`, UTC unless
    /// given. Nil for anything outside `representable`.
    public static func parse(_ text: String, zone: TimeZone = TimeZone(identifier: "UTC")!) -> Millis? {
        let t = text.trimmingCharacters(in: .whitespaces)
        if let n = Int64(t), t.count >= 10 { return representable.contains(n) ? n : nil }
        let patterns = ["yyyy-MM-dd'T'HH:mm:ss.SSSXXXXX", "yyyy-MM-dd'T'HH:mm:ssXXXXX", "yyyy-MM-dd'T'HH:mmXXXXX",
                        "yyyy-MM-dd'T'HH:mm:ss", "yyyy-MM-dd HH:mm:ss", "yyyy-MM-dd'T'HH:mm", "yyyy-MM-dd HH:mm",
                        "yyyy-MM-dd"]
        for p in patterns {
            if let d = formatter(p, zone).date(from: t) {
                let ms = (d.timeIntervalSince1970 * 1000).rounded(.down)
                guard ms >= Double(representable.lowerBound), ms <= Double(representable.upperBound) else { return nil }
                return Millis(ms)
            }
        }
        return nil
    }

    /// `11d 4h`, `3h 12m`, `45m`: a duration for people.
    public static func duration(_ millis: Millis) -> String {
        let minutes = max(0, millis) / 60_000
        let days = minutes / 1440, hours = (minutes % 1440) / 60, mins = minutes % 60
        if days > 0 { return "\(days)d \(hours)h" }
        if hours > 0 { return "\(hours)h \(mins)m" }
        return "\(mins)m"
    }

    /// The longest offset `parseOffset` reads: 100 years (36,500 days) either way.
    package static let maxOffset: Millis = 36_500 * 86_400_000

    /// `-30d`, `+6d12h`, `45m`, `-30s`, `0`: a signed duration in days, hours, minutes and seconds, at most
    /// `maxOffset` either way (nil past it: each step is checked before it is made).
    package static func parseOffset(_ text: String) -> Millis? {
        var s = Substring(text.trimmingCharacters(in: .whitespaces))
        var sign: Millis = 1
        if s.first == "-" { sign = -1; s = s.dropFirst() } else if s.first == "+" { s = s.dropFirst() }
        if s == "0" { return 0 }
        var total: Millis = 0
        var number = ""
        var sawUnit = false
        for c in s {
            if c.isNumber { number.append(c); continue }
            guard let n = Millis(number) else { return nil }
            let unit: Millis
            switch c {
            case "d": unit = 86_400_000
            case "h": unit = 3_600_000
            case "m": unit = 60_000
            case "s": unit = 1000
            default: return nil
            }
            guard n <= maxOffset / unit else { return nil }
            total += n * unit
            guard total <= maxOffset else { return nil }
            number = ""
            sawUnit = true
        }
        guard number.isEmpty, sawUnit else { return nil }
        return sign * total
    }
}
