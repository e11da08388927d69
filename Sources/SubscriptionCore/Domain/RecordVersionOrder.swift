import Foundation

/// The one total order on versions of a record (a transaction, a subscription's renewal info):
///
/// 1. the record's own `signedDate` (Apple signed the newer version later);
/// 2. the `signedDate` of the notification that carried it (a version from an API response,
///    which has none, comes before one that a notification carried);
/// 3. a deterministic tie-break on content: the record's own rules first (a transaction
///    prefers revoked, then upgraded, then the later expiry), then every stored field.
///
/// Whichever order versions arrive in, the same one wins, and every derived fact (owner,
/// token, ownership, offers, price) comes from it.
public enum RecordVersionOrder {
    /// Whether the first version wins by its dates, or nil when both dates tie.
    static func byDates(_ signed: Millis, _ notification: Millis?, _ otherSigned: Millis, _ otherNotification: Millis?) -> Bool? {
        if signed != otherSigned { return signed > otherSigned }
        let a = notification ?? Millis.min, b = otherNotification ?? Millis.min
        return a == b ? nil : a > b
    }

    /// Every stored property but the notification's date, each as `name=` then `-` for nil
    /// or `+value` (bytes as text): a key that orders all versions, and covers fields added
    /// later by itself. The carrying notification's UUID comes last, so two versions that
    /// agree in every field still order the same way whichever arrived first.
    static func contentKey<Record>(_ record: Record) -> String {
        var key = ""
        for child in Mirror(reflecting: record).children where child.label != "notificationSignedDate" {
            key += (child.label ?? "?") + "="
            let value = Mirror(reflecting: child.value)
            if value.displayStyle == .optional {
                if let some = value.children.first { key += "+" + text(some.value) } else { key += "-" }
            } else {
                key += "+" + text(child.value)
            }
            key += "\u{1F}"
        }
        return key
    }

    private static func text(_ value: Any) -> String {
        if let data = value as? Data { return String(decoding: data, as: UTF8.self) }
        return String(describing: value)
    }
}
