/// A semantic style: what a piece of text means, never what colour it is.
///
/// Widgets and screens only ever name roles; a `Theme` decides how each role
/// looks. The raw value is the key prefix in theme files (`hint_key_fg`), so
/// renaming a case is a breaking change for every shipped and user theme.
public enum StyleRole: String, CaseIterable, Hashable, Sendable {
    case normal
    case dim
    case title
    /// A table's column header row.
    case header
    case border
    /// The highlighted row or focused control.
    case selection
    case hintKey = "hint_key"
    case hintText = "hint_text"
    case breadcrumb

    // Subscription status badges, one per Apple status.
    case badgeActive = "badge_active"
    case badgeExpired = "badge_expired"
    case badgeBillingRetry = "badge_billing_retry"
    case badgeGrace = "badge_grace"
    case badgeRevoked = "badge_revoked"

    case warning
    case error
    case success
    case accent

    case chartBar = "chart_bar"
    case sparkline
    /// A cell of a shaded table (the cohort triangle) by its value against the table's
    /// largest: the lowest quarter, the second, the third, the top quarter. Without colour
    /// the four still differ (dim, plain, bold, reverse).
    case heatLow = "heat_low"
    case heatMedium = "heat_medium"
    case heatHigh = "heat_high"
    case heatTop = "heat_top"

    /// The `:` or `/` prompt symbol.
    case prompt
    /// An editable value: a dialog input field.
    case input
    /// The part of a row that matched the `/` filter.
    case match

    case dialog
    case dialogBorder = "dialog_border"

    case flashInfo = "flash_info"
    case flashError = "flash_error"

    // Outcome of one notification in the live feed.
    case feedStored = "feed_stored"
    case feedDuplicate = "feed_duplicate"
    case feedRejected = "feed_rejected"
}
