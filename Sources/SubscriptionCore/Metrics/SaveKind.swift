/// How a subscription was first kept from cancelling: the cohorts' `saved` dimension.
/// Stored as its raw value in the cohort aggregates' keys, so never rename one.
public enum SaveKind: String, CaseIterable, Sendable {
    /// A retention offer redeemed on the App Store's cancellation sheet (offerType 5): a
    /// period bought with one whose period before was bought without one, as the daily
    /// counts' `saved` counts it.
    case retention
    /// A save answered by the app in real time (Retention Messaging's real-time request): an
    /// answered request the history after it shows was taken (`RealtimeSave`), as the daily
    /// counts' `saved` counts it.
    case realtime
    /// Never saved.
    case none
}
