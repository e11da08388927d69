/// What an audit log entry records being done: each action subdesk's commands write,
/// declared here once. `PostgresRoles.auditActions` says which roles may write each (the
/// audit log's trigger on PostgreSQL is generated from it), and an `AuditEntry` is written
/// only with one of these. An entry read back keeps its action's text, so one a newer
/// subdesk wrote is shown as it is (`AuditEntry.kind` is then nil).
public enum AuditAction: String, CaseIterable, Sendable {
    // A person's: support's and the operator's.
    case overrideGrant = "override_grant"
    case overrideRevoke = "override_revoke"
    case overrideLift = "override_lift"
    case link
    case consentHandled = "consent_handled"
    // The operator's commands.
    case revalidate
    case refundHistory = "refund_history"
    case setAppAccountToken = "set_app_account_token"
    case appTransactionLookup = "app_transaction_lookup"
    case sweep
    case extend
    case extendAll = "extend_all"
    case refundAnswer = "refund_answer"
    case refundMissed = "refund_missed"
    case quarantinePurge = "quarantine_purge"
    case backfill
    case retentionReportImport = "retention_report_import"
    case forwardReplay = "forward_replay"
    case forwardRetry = "forward_retry"
    case retentionUpload = "retention_upload"
    case retentionDelete = "retention_delete"
    case retentionDefault = "retention_default"
    case retentionRealtimeURL = "retention_realtime_url"
    case retentionPerformanceTest = "retention_performance_test"
    // Written only inside one of the store owner's functions (`LockHolderEnding`).
    case lockHolderEnded = "lock_holder_ended"

    /// An override's placing: a grant's or a revocation's.
    public static func placing(_ kind: Override.Kind) -> AuditAction {
        switch kind {
        case .grant: return .overrideGrant
        case .revoke: return .overrideRevoke
        }
    }
}
