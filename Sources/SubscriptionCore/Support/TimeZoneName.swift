import Foundation

/// A time zone as users write one: an IANA name (`Europe/Paris`, `UTC`) or a fixed offset
/// from UTC (`+05:30`, `-08:00`, `+0530`, `+5`). The dashboard's `:tz` and every command's
/// `--tz` read the same forms.
public enum TimeZoneName {
    public static func zone(_ text: String) -> TimeZone? {
        TimeZone(identifier: text) ?? offset(text)
    }

    /// A fixed offset from UTC written `+05:30`, `-08:00`, `+0530` or `+5`; nil otherwise.
    public static func offset(_ text: String) -> TimeZone? {
        guard let sign = text.first, sign == "+" || sign == "-" else { return nil }
        let digits = text.dropFirst().replacingOccurrences(of: ":", with: "")
        guard !digits.isEmpty, digits.count <= 4, digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber) else { return nil }
        guard let hours = Int(digits.count <= 2 ? digits : String(digits.dropLast(2))),
              let minutes = digits.count <= 2 ? 0 : Int(digits.suffix(2)) else { return nil }
        guard hours <= 14, minutes < 60 else { return nil }
        return TimeZone(secondsFromGMT: (hours * 3600 + minutes * 60) * (sign == "-" ? -1 : 1))
    }

    /// What to say about a zone that is neither.
    public static func unknown(_ text: String) -> String {
        "unknown time zone \(text) (use e.g. UTC, Europe/Paris or an offset such as +05:30)"
    }
}
