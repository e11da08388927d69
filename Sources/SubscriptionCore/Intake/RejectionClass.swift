/// What kind of refusal an intake rejection was, as a short fixed word: the label the
/// on-call metrics count refusals by. The full reason stays in the intake log and the
/// quarantine; a metric label must come from a small fixed set, never from the text
/// itself (which names ids and dates).
public enum RejectionClass: String, CaseIterable, Sendable {
    case oversized
    case conflict
    case revoked
    case signature
    case policy
    case malformed
    case other

    /// Words a reason contains, tried in this order: the first class with a match wins.
    /// Order matters: an oversized body's reason starts with `body:` like a malformed one's.
    static let markers: [(RejectionClass, [String])] = [
        (.oversized, ["-byte limit"]),
        (.conflict, ["already stored with different content"]),
        (.revoked, ["revoked"]),
        (.signature, ["signature", "x5c", "certificate", "configured root", "chain", "ES256", "alg "]),
        (.policy, ["bundleId", "environment", "appAppleId", "shared secret", "V1 bodies", "not accepted"]),
        (.malformed, ["body:", "JSON", "base64", "signedPayload", "decode"]),
    ]

    public static func of(reason: String?) -> RejectionClass {
        guard let reason else { return .other }
        for (kind, words) in markers where words.contains(where: { reason.contains($0) }) { return kind }
        return .other
    }

    /// The same classification in SQL over `column`, so a migration can count the
    /// refusals logged before the counters existed exactly as intake counts new ones.
    /// Case-sensitive, as Swift's `contains` is (SQLite's LIKE is not).
    static func sqlCase(_ column: String, dialect: SQLDialect) -> String {
        let find = dialect == .sqlite ? "instr" : "strpos"
        var sql = "CASE"
        for (kind, words) in markers {
            let tests = words.map { "\(find)(\(column), '\($0.replacingOccurrences(of: "'", with: "''"))') > 0" }
            sql += " WHEN " + tests.joined(separator: " OR ") + " THEN '\(kind.rawValue)'"
        }
        return sql + " ELSE 'other' END"
    }
}
