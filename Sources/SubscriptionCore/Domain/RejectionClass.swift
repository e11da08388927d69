/// What kind of refusal an intake rejection was, as a short fixed word: the label the
/// on-call metrics count refusals by, the column `reason_kind` of the quarantine and the
/// intake log, and what decides the HTTP status a refused body is answered with. Each
/// place that refuses a body states it; it is never read back from the reason's words
/// (which quote what the sender sent).
public enum RejectionClass: String, CaseIterable, Sendable {
    case oversized
    case conflict
    case revoked
    case signature
    case policy
    case malformed
    case other
}
