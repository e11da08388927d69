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
    /// (`Migrations.rejectionClass` says the same in SQL.)
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
}
