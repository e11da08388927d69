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
    /// The signing chain's revocation status could not be learned from its OCSP responder
    /// (`revocation_check = ocsp`): nothing is stored until it answers.
    case revocation
    /// Anything else the store refused (disk full, a newer schema after a reload, ...).
    case other

    /// What a store error means for the on-call reader; read from the error's codes.
    public static func of(_ error: Error) -> ServeUnavailableReason {
        if error is RevocationStatusUnavailable { return .revocation }
        if error is StoreNotFound { return .storeMissing }
        if error is FileReplacedError { return .storeReplaced }
        guard let e = error as? StoreError else { return .other }
        if e.isConnectionLoss { return .connection }
        if let state = e.sqlState { return ["55P03", "57014"].contains(state) ? .locked : .other }
        // SQLITE_BUSY and SQLITE_LOCKED, with their extended codes.
        return [5, 6].contains(e.code & 0xff) ? .locked : .other
    }

    /// Whether the store was what failed (not the web server's connection, not a responder
    /// outside): what `subdesk_source_up{source="store"}` is judged by.
    public var isTheStore: Bool {
        switch self {
        case .locked, .connection, .storeMissing, .storeReplaced, .other: return true
        case .incompleteBody, .revocation: return false
        }
    }
}

/// What a running `serve` answers to `FCGI_GET_VALUES` about its 503s: the count of each
/// reason since it started, and how many of all of them came in the last hour.
public struct ServeUnavailability: Sendable, Equatable {
    /// The FastCGI value names serve answers (management records, no store touched).
    public static let totalName = "SUBDESK_UNAVAILABLE_TOTAL"
    public static let lastHourName = "SUBDESK_UNAVAILABLE_LAST_HOUR"
    public static let lastAtName = "SUBDESK_UNAVAILABLE_LAST_MS"
    public static let retentionName = "SUBDESK_RETENTION_TOTAL"

    public var totals: [ServeUnavailableReason: Int]
    public var lastHour: Int
    /// When each reason's latest 503 was answered (Unix milliseconds); a reason never seen
    /// since serve started is absent.
    public var lastAt: [ServeUnavailableReason: Millis]
    /// How serve's real-time retention requests ended since it started, by outcome
    /// (`RetentionOutcome.keys`); empty from a serve that does not say.
    public var retention: [String: Int] = [:]

    public init(totals: [ServeUnavailableReason: Int] = [:], lastHour: Int = 0, lastAt: [ServeUnavailableReason: Millis] = [:],
                retention: [String: Int] = [:]) {
        self.totals = totals
        self.lastHour = lastHour
        self.lastAt = lastAt
        self.retention = retention
    }

    /// `answered=3,no_rule=0,...`: every outcome, in `RetentionOutcome.keys` order.
    public var encodedRetention: String {
        RetentionOutcome.keys.map { "\($0)=\(retention[$0] ?? 0)" }.joined(separator: ",")
    }

    /// Reads `encodedRetention`'s text: outcomes this build does not know are left out, and
    /// a malformed item makes the whole nil.
    public static func decodeRetention(_ text: String?) -> [String: Int]? {
        guard let text else { return [:] }
        var counts: [String: Int] = [:]
        for item in text.split(separator: ",") {
            let parts = item.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, let n = Int(parts[1]), n >= 0 else { return nil }
            let key = String(parts[0])
            if RetentionOutcome.keys.contains(key), n > 0 { counts[key] = n }
        }
        return counts
    }

    /// The latest 503 of any of the reasons `which` keeps.
    public func latest(_ which: (ServeUnavailableReason) -> Bool) -> Millis? {
        lastAt.filter { which($0.key) }.values.max()
    }

    /// `locked=1780000000000,revocation=...`: the reasons seen, in declaration order.
    public var encodedLastAt: String {
        ServeUnavailableReason.allCases.compactMap { r in lastAt[r].map { "\(r.rawValue)=\($0)" } }.joined(separator: ",")
    }

    /// `locked=2,connection=0,...`: every reason, in declaration order.
    public var encodedTotals: String {
        ServeUnavailableReason.allCases.map { "\($0.rawValue)=\(totals[$0] ?? 0)" }.joined(separator: ",")
    }

    /// Reads serve's two values; nil when either is missing or not as `encodedTotals` writes
    /// it (a reason this build does not know is counted as `other`).
    /// `lastAt` is optional: a serve of an earlier build does not answer it.
    public static func decode(totals text: String?, lastHour hourText: String?, lastAt atText: String? = nil) -> ServeUnavailability? {
        guard let text, let hourText, let hour = Int(hourText), hour >= 0 else { return nil }
        var lastAt: [ServeUnavailableReason: Millis] = [:]
        for item in (atText ?? "").split(separator: ",") {
            let parts = item.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, let at = Millis(parts[1]), at >= 0 else { return nil }
            let reason = ServeUnavailableReason(rawValue: String(parts[0])) ?? .other
            lastAt[reason] = max(lastAt[reason] ?? 0, at)
        }
        var totals: [ServeUnavailableReason: Int] = [:]
        for item in text.split(separator: ",") {
            let parts = item.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, let n = Int(parts[1]), n >= 0 else { return nil }
            let reason = ServeUnavailableReason(rawValue: String(parts[0])) ?? .other
            // Kept only when not zero, as the counts are made.
            if n > 0 { totals[reason, default: 0] += n }
        }
        return ServeUnavailability(totals: totals, lastHour: hour, lastAt: lastAt)
    }

    /// `locked 3, connection 1`: the reasons that occurred, for a status line.
    public var summary: String {
        ServeUnavailableReason.allCases.compactMap { r in (totals[r] ?? 0) > 0 ? "\(r.rawValue) \(totals[r]!)" : nil }
            .joined(separator: ", ")
    }
}
