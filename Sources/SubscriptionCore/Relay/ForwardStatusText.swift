import Foundation

/// How the relay's state is written for people: the rows of `subdesk forward status` and of
/// the dashboard's `:forward`, and a delivery's outcome in a subscription's detail, so the
/// command and the screen show the same cells. The texts are as stored: whoever draws them
/// escapes control characters (a target's error is whatever its server answered).
public enum ForwardStatusText {
    public static let header = ["TARGET", "PENDING", "OLDEST", "DELIVERED 1H", "FAILED 1H", "DEAD", "LAST ERROR"]
    /// The most of a target's last error a row shows; the whole answer is in the attempts.
    public static let errorLength = 120
    /// After the name of a target the outbox still names but the configuration no longer does.
    public static let notConfigured = " (not configured)"

    /// How long the oldest pending delivery has waited at `now`, nil with none pending.
    public static func oldestAge(_ row: ForwardTargetStatus, now: Millis) -> Millis? {
        row.oldestPending.map { max(0, now - $0) }
    }

    /// A target's error cut to what a row shows.
    public static func error(_ text: String) -> String { String(text.prefix(errorLength)) }

    /// One row's cells, in `header`'s order.
    public static func cells(_ row: ForwardTargetStatus, configured: Bool, now: Millis) -> [String] {
        [row.target + (configured ? "" : notConfigured), String(row.pending),
         oldestAge(row, now: now).map(DateText.duration) ?? "-", String(row.deliveredLastHour),
         String(row.failedLastHour), String(row.dead), row.lastError.map(error) ?? "-"]
    }

    /// What the last attempt at `delivery` came to: `HTTP 503: Service Unavailable`, `timed
    /// out`, `HTTP 204`, or `not tried yet`.
    public static func outcome(_ delivery: ForwardDelivery) -> String {
        let status = delivery.lastStatus.map { "HTTP \($0)" }
        switch (status, delivery.lastError.map(error)) {
        case let (status?, error?): return status + ": " + error
        case let (status?, nil): return status
        case let (nil, error?): return error
        case (nil, nil): return "not tried yet"
        }
    }
}
