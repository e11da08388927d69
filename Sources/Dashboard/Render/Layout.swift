import SubscriptionCore
import TerminalUI

/// Where each screen puts things, shared by the renderer and the reducer.
///
/// The reducer needs to know how many rows a table shows to page and
/// scroll; deriving that from the same arithmetic the renderer uses keeps
/// the two from drifting apart.
public enum Layout {
    /// Row 0 is the header, the last row the hint bar; the screens use what is between.
    public static func content(width: Int, height: Int) -> Rect {
        Rect(x: 0, y: 1, width: width, height: height - 2)
    }

    /// Data rows a list screen shows: the content less its summary line and the table header.
    public static func listRows(height: Int) -> Int { max(1, height - 4) }

    /// Data rows of the feed, whose second line sums up intake's health.
    public static func feedRows(height: Int) -> Int { max(1, height - 5) }

    /// Data rows of the subscribers table, which has a second summary line for its sort and filter.
    public static func subscriberRows(height: Int) -> Int { max(1, height - 5) }

    /// Lines of the detail header between the frame's top and the timeline divider.
    public static let detailHeaderLines = 7

    /// The header grows by a line while an override is in force, so that the override and
    /// Apple's own state both show, each on a line of its own.
    public static func detailHeaderLines(_ detail: DetailState?) -> Int {
        detailHeaderLines + (detail?.content?.report.entitlement.override == nil ? 0 : 1)
            + (detail?.content?.report.commitment == nil ? 0 : 1)
    }

    /// Lines the detail timeline shows: the content less the frame, the header and the divider.
    public static func timelineRows(height: Int, headerLines: Int = detailHeaderLines) -> Int {
        max(1, height - 2 - headerLines - 3)
    }

    public static func timelineRows(_ state: DashboardState) -> Int {
        max(1, timelineRows(height: state.height, headerLines: detailHeaderLines(state.detail))
                - detailDeliveryLines(state.detail, height: state.height))
    }

    /// The most deliveries the detail lists under its timeline; the newest are shown.
    static let detailDeliveryRows = 4

    /// Lines the detail's Deliveries part takes under the timeline (its divider and a line a
    /// delivery, at most `detailDeliveryRows`): none without deliveries, and never so many
    /// that the timeline keeps fewer than three lines.
    public static func detailDeliveryLines(_ detail: DetailState?, height: Int) -> Int {
        guard let count = detail?.content?.deliveries.count, count > 0 else { return 0 }
        let room = timelineRows(height: height, headerLines: detailHeaderLines(detail)) - 3
        let lines = 1 + min(count, detailDeliveryRows)
        return lines <= room ? lines : (room >= 2 ? room : 0)
    }

    /// Rows of the audit table: a list screen less the rule and two lines that show the selected entry whole.
    public static func auditRows(height: Int) -> Int { max(1, listRows(height: height) - 3) }

    /// Lines under the consent table that tell the selected withdrawal whole.
    static let consentPanelHeight = 3

    /// Lines under the refund requests table that tell the selected request's facts.
    static let refundsPanelHeight = 5

    /// Lines under `:retention`'s message and image list: the selected one's id and checksum,
    /// the default messages, and the last performance test.
    static let retentionPanelHeight = 10

    /// Rows of `:retention`'s message and image list.
    public static func retentionRows(height: Int) -> Int { max(1, listRows(height: height) - retentionPanelHeight) }

    /// Lines of the quarantined body view.
    public static func bodyRows(height: Int) -> Int { max(1, height - 4) }

    /// Rows of the daily table and of the chart block (its title included) below it.
    public static func daily(height: Int, metrics: Int = Metric.all.count) -> (tableRows: Int, chartRows: Int) {
        let area = height - 2
        // Summary, table header and the blank line before the chart take three rows.
        let chart = max(9, area - 3 - metrics)
        return (max(1, area - 3 - chart), chart)
    }

    /// Data rows of the cohort table: the lines it has, while its summary, its header, the
    /// legend under it and three lines of definitions keep their room.
    public static func cohortRows(height: Int, lines: Int) -> Int {
        max(1, min(lines, height - 2 - 3 - 3))
    }

    /// Rows to load per page of the subscribers table: a few screens' worth, so paging rarely waits.
    public static func pageLimit(height: Int) -> Int { max(100, subscriberRows(height: height) * 3) }

    /// The most rows the subscribers window keeps before dropping the far end.
    ///
    /// Room for three pages plus four screens means a page loaded at one
    /// edge never trims the other edge close enough to the screen to make it
    /// load again, so loads cannot chase each other.
    public static func windowCapacity(pageLimit: Int, height: Int) -> Int { 3 * pageLimit + 4 * subscriberRows(height: height) }
}

extension Layout {
    /// The daily table's columns: METRIC, TOTAL, TREND where there is room, and the days that fit.
    enum DailyColumns {
        static let dayWidth = 5
        static let spacing = 1
        static func labelWidth(wide: Bool) -> Int { wide ? 30 : 26 }

        /// The TREND column: the whole range in one sparkline per metric, where there is room.
        static let trendWidth = 15
        static func showsTrend(width: Int) -> Bool { width - 4 >= 110 }

        /// How many day columns a screen `width` wide shows beside the labels, TOTAL and TREND.
        static func fitting(width: Int) -> Int {
            let table = width - 4
            let trend = showsTrend(width: width) ? trendWidth + spacing : 0
            return max(0, (table - labelWidth(wide: table >= 110) - spacing - 6 - trend) / (dayWidth + spacing))
        }
    }
}

extension Layout {
    /// The cohort table's columns: COHORT (or WEEK), SIZE and the periods that fit.
    enum CohortColumns {
        static let labelWidth = 9
        static let sizeWidth = 5
        /// `~100.0%`: an incomplete share, the widest a cell gets but for large money.
        static let cellWidth = 7
        static let spacing = 1

        /// How many period columns a screen `width` wide shows beside the cohort and its size.
        static func fitting(width: Int) -> Int {
            max(1, (width - 2 - labelWidth - spacing - sizeWidth) / (cellWidth + spacing))
        }
    }
}
