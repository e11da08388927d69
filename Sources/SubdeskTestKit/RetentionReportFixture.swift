import Foundation

/// A retention messaging report for the tests: ours, not Apple's data. Written from the field
/// list of Apple's "App Store Retention Messaging" page (Analytics Reports,
/// developer.apple.com/documentation/analytics-reports/app-store-retention-messaging), the
/// columns in its order, tab-separated with a header row as Analytics Reports files are; the
/// columns after Event as `RetentionReportColumn` says. Two apps, two subscriptions of one, three
/// territories, three message types, an event the figures leave out (Continue Subscription).
public enum RetentionReportFixture {
    public static let file = "retention-messaging-2026-05.txt"

    public static let text: String = """
        Date\tApp Name\tApp Apple Identifier\tCurrent Group Subscription\tCurrent Subscription Group Identifier\tCurrent Subscription\tCurrent Subscription Identifier\tEvent\tMessage Type\tDevice\tPlatform Version\tTerritory\tCounts
        2026-05-01\tDaily Bread\t1234567890\tBread Club\t21000001\tMonthly\t6450000001\tPage View\tPromotional Offer\tiPhone\tiOS 26.4\tUS\t120
        2026-05-01\tDaily Bread\t1234567890\tBread Club\t21000001\tMonthly\t6450000001\tOffer Redeemed\tPromotional Offer\tiPhone\tiOS 26.4\tUS\t18
        2026-05-01\tDaily Bread\t1234567890\tBread Club\t21000001\tMonthly\t6450000001\tCancel Subscription\tPromotional Offer\tiPhone\tiOS 26.4\tUS\t70
        2026-05-01\tDaily Bread\t1234567890\tBread Club\t21000001\tMonthly\t6450000001\tPage View\tPromotional Offer\tiPad\tiPadOS 26.4\tUS\t30
        2026-05-01\tDaily Bread\t1234567890\tBread Club\t21000001\tMonthly\t6450000001\tCancel Subscription\tPromotional Offer\tiPad\tiPadOS 26.4\tUS\t25
        2026-05-01\tDaily Bread\t1234567890\tBread Club\t21000001\tYearly\t6450000002\tPage View\tSwitch Plan\tiPhone\tiOS 26.4\tGB\t40
        2026-05-01\tDaily Bread\t1234567890\tBread Club\t21000001\tYearly\t6450000002\tSwitch Plan\tSwitch Plan\tiPhone\tiOS 26.4\tGB\t9
        2026-05-01\tDaily Bread\t1234567890\tBread Club\t21000001\tYearly\t6450000002\tCancel Subscription\tSwitch Plan\tiPhone\tiOS 26.4\tGB\t22
        2026-05-02\tDaily Bread\t1234567890\tBread Club\t21000001\tMonthly\t6450000001\tPage View\tText\tiPhone\tiOS 26.4\tGB\t50
        2026-05-02\tDaily Bread\t1234567890\tBread Club\t21000001\tMonthly\t6450000001\tContinue Subscription\tText\tiPhone\tiOS 26.4\tGB\t11
        2026-05-02\tDaily Bread\t1234567890\tBread Club\t21000001\tMonthly\t6450000001\tCancel Subscription\tText\tiPhone\tiOS 26.4\tGB\t30
        2026-05-02\tDaily Bread\t1234567890\tBread Club\t21000001\tYearly\t6450000002\tPage View\tPromotional Offer\tiPhone\tiOS 26.4\tUS\t60
        2026-05-02\tDaily Bread\t1234567890\tBread Club\t21000001\tYearly\t6450000002\tOffer Redeemed\tPromotional Offer\tiPhone\tiOS 26.4\tUS\t6
        2026-05-02\tDaily Bread\t1234567890\tBread Club\t21000001\tYearly\t6450000002\tCancel Subscription\tPromotional Offer\tiPhone\tiOS 26.4\tUS\t41
        2026-05-03\tPantry\t9876543210\tPantry Plus\t22000001\tPantry Monthly\t6460000001\tPage View\tText\tiPhone\tiOS 26.5\tDE\t10
        2026-05-03\tPantry\t9876543210\tPantry Plus\t22000001\tPantry Monthly\t6460000001\tCancel Subscription\tText\tiPhone\tiOS 26.5\tDE\t10

        """

    /// The app of most rows, and its Apple ID.
    public static let app = "Daily Bread"
    public static let appAppleId = "1234567890"
}
