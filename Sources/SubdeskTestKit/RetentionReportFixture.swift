import Foundation

/// A retention messaging report for the tests: ours, not Apple's data. Written from the field
/// list of Apple's "App Store Retention Messaging" page (Analytics Reports,
/// developer.apple.com/documentation/analytics-reports/app-store-retention-messaging): its
/// column names, and the values its glossary gives for Retention Message Type, Message
/// Selection Type, Event and Save Type; tab-separated with a header row, as Analytics Reports
/// files are. The counts, apps, subscriptions and the `Page` values are ours (the page names
/// the column, not its values). Two apps, two subscriptions of one, three territories, all four
/// message types, both selection types and all three save types; two rows that differ only in
/// their Message Selection Type, which are two rows of the store.
public enum RetentionReportFixture {
    public static let file = "retention-messaging-2026-05.txt"

    /// The header, in the order this fixture writes it (the import takes the order from the
    /// header, whatever it is).
    public static let header = [
        "Date", "App Name", "App Apple Identifier", "Current Group Subscription", "Current Subscription Group Identifier",
        "Current Subscription", "Current Subscription Identifier", "Event", "Page", "Retention Message Type",
        "Message Selection Type", "Save Type", "Device", "Platform Version", "Territory", "Counts",
    ]

    static let bread = ["Daily Bread", "1234567890", "Bread Club", "21000001"]
    static let monthly = bread + ["Monthly", "6450000001"]
    static let yearly = bread + ["Yearly", "6450000002"]
    static let pantry = ["Pantry", "9876543210", "Pantry Plus", "22000001", "Pantry Monthly", "6460000001"]
    static let page = "Cancel Subscription"
    static let offer = "Text message with offer", image = "Text message with optional image"
    static let switchPlan = "Text message with switch plan", none = "No retention message"
    static let iPhone = ["iPhone", "iOS 26.4"], iPad = ["iPad", "iPadOS 26.4"]

    /// The fixture's rows, each as its fields in `header`'s order.
    public static let rows: [[String]] = [
        ["2026-05-01"] + monthly + ["Page views", page, offer, "Real-time", ""] + iPhone + ["US", "120"],
        ["2026-05-01"] + monthly + ["Saves", page, offer, "Real-time", "Redeem offer"] + iPhone + ["US", "18"],
        ["2026-05-01"] + monthly + ["Saves", page, offer, "Real-time", "Don't cancel"] + iPhone + ["US", "12"],
        ["2026-05-01"] + monthly + ["Cancels", page, offer, "Real-time", ""] + iPhone + ["US", "70"],
        ["2026-05-01"] + monthly + ["Page views", page, offer, "Default", ""] + iPhone + ["US", "20"],
        ["2026-05-01"] + monthly + ["Cancels", page, offer, "Default", ""] + iPhone + ["US", "15"],
        ["2026-05-01"] + monthly + ["Page views", page, image, "Default", ""] + iPad + ["US", "30"],
        ["2026-05-01"] + monthly + ["Saves", page, image, "Default", "Don't cancel"] + iPad + ["US", "5"],
        ["2026-05-01"] + monthly + ["Cancels", page, image, "Default", ""] + iPad + ["US", "25"],
        ["2026-05-01"] + yearly + ["Page views", page, switchPlan, "Real-time", ""] + iPhone + ["GB", "40"],
        ["2026-05-01"] + yearly + ["Saves", page, switchPlan, "Real-time", "Switch plan"] + iPhone + ["GB", "9"],
        ["2026-05-01"] + yearly + ["Cancels", page, switchPlan, "Real-time", ""] + iPhone + ["GB", "22"],
        ["2026-05-02"] + monthly + ["Page views", page, none, "Default", ""] + iPhone + ["GB", "50"],
        ["2026-05-02"] + monthly + ["Saves", page, none, "Default", "Don't cancel"] + iPhone + ["GB", "11"],
        ["2026-05-02"] + monthly + ["Cancels", page, none, "Default", ""] + iPhone + ["GB", "30"],
        ["2026-05-02"] + yearly + ["Page views", page, offer, "Real-time", ""] + iPhone + ["US", "60"],
        ["2026-05-02"] + yearly + ["Saves", page, offer, "Real-time", "Redeem offer"] + iPhone + ["US", "6"],
        ["2026-05-02"] + yearly + ["Cancels", page, offer, "Real-time", ""] + iPhone + ["US", "41"],
        ["2026-05-03"] + pantry + ["Page views", page, image, "Default", "", "iPhone", "iOS 26.5", "DE", "10"],
        ["2026-05-03"] + pantry + ["Cancels", page, image, "Default", "", "iPhone", "iOS 26.5", "DE", "10"],
    ]

    /// The file: the header, then each row, tab-separated, a line feed after each.
    public static let text: String = ([header] + rows).map { $0.joined(separator: "\t") + "\n" }.joined()

    /// A file in the shape the import first assumed, before Apple's page was read in full:
    /// a `Message Type` column, no Page, Message Selection Type or Save Type, and events of
    /// its own (`Page View`, `Offer Redeemed`, `Switch Plan`, `Cancel Subscription`). Refused.
    public static let earlierShape: String = """
        Date\tApp Name\tApp Apple Identifier\tCurrent Group Subscription\tCurrent Subscription Group Identifier\tCurrent Subscription\tCurrent Subscription Identifier\tEvent\tMessage Type\tDevice\tPlatform Version\tTerritory\tCounts
        2026-05-01\tDaily Bread\t1234567890\tBread Club\t21000001\tMonthly\t6450000001\tPage View\tPromotional Offer\tiPhone\tiOS 26.4\tUS\t120
        2026-05-01\tDaily Bread\t1234567890\tBread Club\t21000001\tMonthly\t6450000001\tOffer Redeemed\tPromotional Offer\tiPhone\tiOS 26.4\tUS\t18
        2026-05-01\tDaily Bread\t1234567890\tBread Club\t21000001\tYearly\t6450000002\tSwitch Plan\tSwitch Plan\tiPhone\tiOS 26.4\tGB\t9
        2026-05-01\tDaily Bread\t1234567890\tBread Club\t21000001\tYearly\t6450000002\tCancel Subscription\tSwitch Plan\tiPhone\tiOS 26.4\tGB\t22

        """

    /// The app of most rows, and its Apple ID.
    public static let app = "Daily Bread"
    public static let appAppleId = "1234567890"
}
