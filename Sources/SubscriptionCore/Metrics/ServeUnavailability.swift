import Foundation

/// Why `subdesk serve` answered a request 503 (Apple retries it later): a small fixed set,
/// so the metric's `reason` label cannot grow. The store is what failed, so these are
/// counted in the serving process and asked of it over its socket, never stored.
public enum ServeUnavailableReason: String, CaseIterable, Sendable {
    /// The store was locked by another writer past the busy timeout (SQLite busy, a
    /// PostgreSQL lock or statement timeout).
    case locked
    /// The PostgreSQL server could not be reached, or the connection broke.
    case connection
    /// The store file (or its PostgreSQL schema) was not there when serve opened it.
    case storeMissing = "store_missing"
    /// The store file was replaced or deleted under serve (a restore): answered 503 until
    /// the file at the path is open.
    case storeReplaced = "store_replaced"
    /// The web server's connection ended before the body CONTENT_LENGTH promised.
    case incompleteBody = "incomplete_body"
    /// Anything else the store refused (disk full, a newer schema after a reload, ...).
    case other

    /// What a store error means for the on-call reader; read from the error's codes.
    public static func of(_ error: Error) -> ServeUnavailableReason {
        if error is StoreNotFound { return .storeMissing }
        if error is FileReplacedError { return .storeReplaced }
        guard let e = error as? StoreError else { return .other }
        if e.isConnectionLoss { return .connection }
        if let state = e.sqlState { return ["55P03", "57014"].contains(state) ? .locked : .other }
        // SQLITE_BUSY and SQLITE_LOCKED, with their extended codes.
        return [5, 6].contains(e.code & 0xff) ? .locked : .other
    }
}

/// What a running `serve` answers to `FCGI_GET_VALUES` about its 503s: the count of each
/// reason since it started, and how many of all of them came in the last hour.
public struct ServeUnavailability: Sendable, Equatable {
    /// The FastCGI value names serve answers (management records, no store touched).
    public static let totalName = "SUBDESK_UNAVAILABLE_TOTAL"
    public static let lastHourName = "SUBDESK_UNAVAILABLE_LAST_HOUR"

    public var totals: [ServeUnavailableReason: Int]
    public var lastHour: Int

    public init(totals: [ServeUnavailableReason: Int] = [:], lastHour: Int = 0) {
        self.totals = totals
        self.lastHour = lastHour
    }

    /// `locked=2,connection=0,...`: every reason, in declaration order.
    public var encodedTotals: String {
        ServeUnavailableReason.allCases.map { "\($0.rawValue)=\(totals[$0] ?? 0)" }.joined(separator: ",")
    }

    /// Reads serve's two values; nil when either is missing or not as `encodedTotals` writes
    /// it (a reason this build does not know is counted as `other`).
    public static func decode(totals text: String?, lastHour hourText: String?) -> ServeUnavailability? {
        guard let text, let hourText, let hour = Int(hourText), hour >= 0 else { return nil }
        var totals: [ServeUnavailableReason: Int] = [:]
        for item in text.split(separator: ",") {
            let parts = item.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, let n = Int(parts[1]), n >= 0 else { return nil }
            let reason = ServeUnavailableReason(rawValue: String(parts[0])) ?? .other
            // Kept only when not zero, as the counts are made.
            if n > 0 { totals[reason, default: 0] += n }
        }
        return ServeUnavailability(totals: totals, lastHour: hour)
    }

    /// `locked 3, connection 1`: the reasons that occurred, for a status line.
    public var summary: String {
        ServeUnavailableReason.allCases.compactMap { r in (totals[r] ?? 0) > 0 ? "\(r.rawValue) \(totals[r]!)" : nil }
            .joined(separator: ", ")
    }
}
