import Foundation
import XCTest
import SubdeskTestKit
import SubscriptionCore
import SubdeskScenarios
import FakeApple
@testable import Dashboard

/// `:daily` and `subdesk counts` show the same numbers: every cell of the screen's table,
/// for every metric and day, against the command's JSON over the same store and range.
final class CountsAgreementTests: XCTestCase, RunsOnEveryEngine {
    func testTheScreenAndTheCommandAgreeCellForCell() throws {
        try agree(segment: nil)
    }

    /// `:daily product=app.monthly` and `counts --where product=app.monthly`.
    func testTheScreenAndTheCommandAgreeOnOneProduct() throws {
        try agree(segment: "product=app.monthly")
    }

    func agree(segment: String?) throws {
        guard let binary = ChildOutput.programBesideThisOne("subdesk") else { throw XCTSkip("no subdesk beside the tests") }
        try DashboardFixture.withDemoStoreFile { path in try agree(segment: segment, binary: binary, path: path) }
    }

    func agree(segment: String?, binary: String, path: String) throws {

        // Wide and tall enough for all 30 days and every metric.
        let session = DashboardFixture.session(try Store(path: path), width: 240, height: 70)
        session.type(.char(":"))
        session.type("daily" + (segment.map { " " + $0 } ?? ""))
        session.type(.enter)
        let days = session.state.daily.days
        XCTAssertEqual(days.count, 30)
        let lines = session.screenLines
        if let segment {
            XCTAssertTrue(lines[1].contains("segment paid, \(segment)"), lines[1])
        }
        let header = try XCTUnwrap(lines.first { $0.contains("METRIC") && $0.contains("TOTAL") })
        let columns = header.split(separator: " ").dropFirst(4).map(String.init)  // METRIC TOTAL TREND (ALL)
        XCTAssertEqual(columns, days.map { String($0.day.dropFirst(5)) }, "every day of the range is on screen")

        let from = try XCTUnwrap(days.first?.day), to = try XCTUnwrap(days.last?.day)
        let run = try ChildOutput.run(binary, ["counts", "--db", path, "--from", from, "--to", to, "--json"]
                                          + (segment.map { ["--where", $0] } ?? []))
        XCTAssertEqual(run.status, 0, run.output)
        let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [[String: Any]])
        XCTAssertEqual(json.map { $0["day"] as? String }, days.map(\.day))

        var compared = 0
        for metric in Metric.all {
            let label = DailyView.label(metric, wide: true)
            let row = try XCTUnwrap(lines.first { $0.hasPrefix(" " + label + " ") }, "no row for \(label)")
            // After the label: TOTAL (none for levels and churn), the TREND sparkline, the days.
            let cells = row.dropFirst(1 + Layout.DailyColumns.labelWidth(wide: true)).split(separator: " ").map(String.init)
            let dayCells = Array(cells.dropFirst(metric.isEndOfDayLevel || metric == .churnRate ? 1 : 2))
            XCTAssertEqual(dayCells.count, days.count, "\(label): \(row)")
            for (index, cell) in dayCells.enumerated() {
                let value = json[index][metric.key]
                let expected: String
                if metric.isRate || metric.isMoney {
                    var day = DayCounts(day: "", start: 0, values: [:])
                    if let number = value as? Double {
                        if metric.isRate { day.rates[metric] = number } else { day.money[metric] = number }
                    }
                    expected = day.text(metric)
                } else {
                    expected = String(try XCTUnwrap(value as? Int, "\(metric.key) on \(json[index]["day"] ?? "?")"))
                }
                XCTAssertEqual(cell, expected, "\(label) on \(json[index]["day"] ?? "?")")
                compared += 1
            }
        }
        XCTAssertEqual(compared, Metric.all.count * 30)
    }
}

/// `p` on `:daily` counts by week (twelve, from Monday) and by month (twelve), as
/// `subdesk counts --period` does.
final class DailyPeriodTests: XCTestCase, RunsOnEveryEngine {
    /// Under the chart the selected metric's definition is whole, even at 80 columns.
    func testTheSelectedMetricsWholeDefinitionIsUnderTheChart() throws {
        let session = DashboardFixture.session(try DashboardFixture.demoStore(), width: 80, height: 24)
        session.type(.char(":"))
        session.type("daily")
        session.type(.enter)
        while session.state.daily.selectedMetric != .setToCancel { session.type(.char("j")) }
        let text = session.screenLines.map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
        XCTAssertTrue(text.contains(Metric.setToCancel.definition), text)
        XCTAssertTrue(session.screenLines[session.screenLines.count - 2].contains("11-16"), "the chart's axis is still drawn")
    }

    func testPCyclesDaysWeeksAndMonthsOverTheSameCounts() throws {
        let store = try DashboardFixture.demoStore()
        let session = DashboardFixture.session(store, width: 120, height: 40)
        session.type(.char(":"))
        session.type("daily")
        session.type(.enter, .char("p"))
        let weeks = session.state.daily.days
        XCTAssertEqual(session.state.daily.request?.period, .week)
        XCTAssertEqual(weeks.count, 12)
        // 2026-11-16, the anchor, is a Monday: the last week starts on it.
        XCTAssertEqual(weeks.last?.day, "2026-11-16")
        XCTAssertEqual(weeks.first?.day, "2026-08-31")
        let expected = try DailyCountsReport.compute(store: store, from: "2026-08-31", to: "2026-11-16", timeZone: TimeZone(identifier: "UTC")!,
                                                     period: .week)
        XCTAssertEqual(weeks.map { $0.text(.newPaidSubscriptions) }, expected.map { $0.text(.newPaidSubscriptions) })
        XCTAssertTrue(session.screenText.contains("weeks 2026-08-31 … 2026-11-16"), session.screenText)
        session.type(.char("p"))
        XCTAssertEqual(session.state.daily.days.map(\.day).first, "2025-12")
        XCTAssertEqual(session.state.daily.days.map(\.day).last, "2026-11")
        XCTAssertTrue(session.screenText.contains("Nov26"), session.screenText)
        session.type(.char("p"))
        XCTAssertEqual(session.state.daily.days.count, 30, "back to days")
    }
}
