import Foundation
import XCTest
@testable import SubscriptionCore
import TerminalUI
import FakeApple
@testable import Dashboard
import SubdeskTestKit

/// `:cohorts`: the triangle of `subdesk cohorts` on the dashboard, shaded by value, with each
/// cohort's size, the definitions under it, metric, period and segment switching, and
/// scrolling both ways at 80x24.
final class CohortsScreenTests: XCTestCase, RunsOnEveryEngine {
    let anchor = DashboardFixture.anchor
    func demoStore() throws -> Store { try DashboardFixture.sharedDemoStore() }

    /// The screen line of a table line (a cohort, or the `came back` line after `after`), with its y.
    func line(_ label: String, in lines: [String], after: Int = 0) -> (y: Int, text: String)? {
        lines.enumerated().dropFirst(after).first { $0.element.hasPrefix(" " + label + " ") }.map { ($0.offset, $0.element) }
    }

    /// The cells a table line shows after its label and size, and the x each one ends at.
    func cells(_ text: String) -> [String] {
        Array(text.dropFirst(1 + Layout.CohortColumns.labelWidth + Layout.CohortColumns.spacing + Layout.CohortColumns.sizeWidth)
            .split(separator: " ").map(String.init))
    }

    /// What `subdesk cohorts` prints in a cell of `report`.
    func expected(_ cell: CohortReport.Cell?, _ metric: CohortMetric) -> String? {
        guard let cell else { return nil }
        let value = metric == .ltv ? cell.perMember : cell.share
        let text = value.map { metric == .ltv ? String(format: "%.2f", $0) : String(format: "%.1f%%", $0 * 100) } ?? "-"
        return (cell.complete ? "" : "~") + text
    }

    /// Every cohort of `report` is on screen with its size, and each of its cells reads as the
    /// report's, in the shade of its value against the largest; `came back` lines too.
    func assertScreenShows(_ report: CohortReport, _ session: DashboardSession, file: StaticString = #filePath, line l: UInt = #line) throws {
        var buffer = ScreenBuffer(width: session.state.width, height: session.state.height)
        session.render(into: &buffer)
        let lines = buffer.lines()
        let text = lines.joined(separator: "\n")
        XCTAssertFalse(report.rows.isEmpty, "the demo store has cohorts", file: file, line: l)
        let largest = report.rows.flatMap { $0.cells.compactMap { $0.flatMap { report.metric == .ltv ? $0.perMember : $0.share } } }.max() ?? 0
        var compared = 0
        for row in report.rows {
            let found = try XCTUnwrap(line(row.label, in: lines), "no line for \(row.label):\n\(text)", file: file, line: l)
            XCTAssertEqual(String(found.text.dropFirst(1 + Layout.CohortColumns.labelWidth + 1).prefix(Layout.CohortColumns.sizeWidth))
                .trimmingCharacters(in: .whitespaces), String(row.size), "\(row.label) size", file: file, line: l)
            let shown = cells(found.text)
            let expectedCells = row.cells.compactMap { expected($0, report.metric) }
            XCTAssertEqual(shown, Array(expectedCells.prefix(shown.count)), "\(row.label): \(found.text)", file: file, line: l)
            for (index, cell) in row.cells.prefix(shown.count).enumerated() {
                guard let cell else { continue }
                let right = 1 + Layout.CohortColumns.labelWidth + Layout.CohortColumns.spacing + Layout.CohortColumns.sizeWidth
                    + (index + 1) * (Layout.CohortColumns.spacing + Layout.CohortColumns.cellWidth) - 1
                let value = report.metric == .ltv ? cell.perMember : cell.share
                XCTAssertEqual(buffer[right, found.y].role, value.map { Selectors.heat($0, largest: largest) } ?? .dim,
                               "\(row.label) column \(index)", file: file, line: l)
                compared += 1
            }
            if report.metric == .retention, row.cells.contains(where: { ($0?.reactivated ?? 0) > 0 }) {
                let back = try XCTUnwrap(line("came back", in: lines, after: found.y), file: file, line: l)
                XCTAssertEqual(back.y, found.y + 1, "under its cohort", file: file, line: l)
                XCTAssertEqual(cells(back.text), row.cells.compactMap { $0.flatMap { $0.reactivated > 0 ? "+\($0.reactivated)" : nil } },
                               file: file, line: l)
            }
        }
        XCTAssertGreaterThan(compared, 0, file: file, line: l)
    }

    func testEveryCellAgreesWithTheReportForEachMetricAndPeriod() throws {
        let store = try demoStore()
        let session = DashboardFixture.session(store, width: 120, height: 40)
        session.command("cohorts")
        XCTAssertEqual(session.state.screen, .cohorts)
        for period in CohortPeriod.allCases {
            for metric in CohortMetric.allCases {
                XCTAssertEqual(session.state.cohorts.choice.metric, metric)
                XCTAssertEqual(session.state.cohorts.choice.period, period)
                let lines = session.screenLines
                XCTAssertTrue(lines[1].hasPrefix(" \(metric.label)   segment paid   \(period.rawValue) cohorts "), lines[1])
                try assertScreenShows(try CohortReport.compute(store: store, metric: metric, period: period, now: anchor), session)
                // Under the table: every definition of the metric, whole, at 120x40.
                let under = lines.map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
                for definition in metric.definitions { XCTAssertTrue(under.contains("- " + definition), definition) }
                session.type(.char("m"))
            }
            session.type(.char("p"))
        }
        XCTAssertEqual(session.state.cohorts.choice, CohortsRequest(), "m and p came round")
    }

    /// `:cohorts product=app.monthly` is `--where product=app.monthly`; the header names it and
    /// `:cohorts all` shows everything again.
    func testAProductSegmentIsParsedNamedAndCounted() throws {
        let store = try demoStore()
        let session = DashboardFixture.session(store, width: 120, height: 40)
        session.command("cohorts ltv product=app.monthly")
        XCTAssertEqual(session.state.cohorts.choice.filter, CohortFilter(dimension: .product, value: "app.monthly"))
        XCTAssertEqual(session.state.cohorts.choice.metric, .ltv)
        XCTAssertTrue(session.screenLines[1].contains("segment paid, product=app.monthly"), session.screenLines[1])
        let only = try CohortReport.compute(store: store, metric: .ltv, filters: [CohortFilter(dimension: .product, value: "app.monthly")], now: anchor)
        XCTAssertNotEqual(only, try CohortReport.compute(store: store, metric: .ltv, now: anchor), "the product is a part, not the whole")
        try assertScreenShows(only, session)

        session.command("cohorts week start=free_trial")
        XCTAssertEqual(session.state.cohorts.choice.filter, CohortFilter(dimension: .start, value: "free_trial"))
        XCTAssertEqual(session.state.cohorts.choice.period, .week)
        try assertScreenShows(try CohortReport.compute(store: store, metric: .ltv, period: .week,
                                                       filters: [CohortFilter(dimension: .start, value: "free_trial")], now: anchor), session)

        // How they were saved: the demo's subscribers took no retention offer, so all are none.
        session.command("cohorts saved=none")
        XCTAssertEqual(session.state.cohorts.choice.filter, CohortFilter(dimension: .saved, value: "none"))
        try assertScreenShows(try CohortReport.compute(store: store, metric: .ltv, period: .week,
                                                       filters: [CohortFilter(dimension: .saved, value: "none")], now: anchor), session)

        session.command("cohorts all")
        XCTAssertNil(session.state.cohorts.choice.filter)
        XCTAssertTrue(session.screenLines[1].contains("segment paid   week cohorts"), session.screenLines[1])
    }

    /// A value no cohort has is a typo, not an empty part: refused on the message line, naming
    /// the values there are, as `subdesk cohorts --where` does, and the screen stays as it was.
    func testAValueNoCohortHasIsRefusedAndTheScreenStays() throws {
        let session = DashboardFixture.session(try demoStore(), width: 120, height: 40)
        session.command("cohorts product=app.montly")
        var flash = try XCTUnwrap(session.state.flash)
        XCTAssertEqual(flash.kind, .error)
        XCTAssertTrue(flash.text.hasPrefix("no cohort has product app.montly: the product values there are "), flash.text)
        XCTAssertTrue(flash.text.contains("app.monthly"), flash.text)
        XCTAssertEqual(session.state.screen, .cohorts)
        XCTAssertNil(session.state.cohorts.choice.filter, "the refused value is not kept")
        XCTAssertNotNil(session.state.cohorts.report, "what was there before (nothing yet) is loaded instead")
        XCTAssertTrue(session.screenLines[1].contains("segment paid   month cohorts"), session.screenLines[1])

        session.type(.escape, .char("m"))
        session.command("cohorts trial product=nothing.such")
        XCTAssertEqual(session.state.flash?.kind, .error)
        XCTAssertEqual(session.state.cohorts.choice.metric, .ltv, "not even the metric of a refused line changes")
        XCTAssertTrue(session.screenLines[1].hasPrefix(" realized lifetime value"), session.screenLines[1])

        // Refused before anything is asked of the store.
        session.type(.escape)
        for (line, message) in [("cohorts environment=Sandbox", "f switches between paid, family shared, sandbox and all"),
                                ("cohorts colour=red", "no cohort dimension colour"),
                                ("cohorts saved=maybe", "saved is retention, realtime or none, not maybe"),
                                ("cohorts daily", ":cohorts takes retention, ltv or trial, month or week, DIMENSION=VALUE or all (not daily)")] {
            session.command(line)
            flash = try XCTUnwrap(session.state.flash, line)
            XCTAssertEqual(flash.kind, .error, line)
            XCTAssertTrue(flash.text.hasPrefix(message), "\(line): \(flash.text)")
            session.type(.escape)
        }
    }

    func testMFPAndTheCommandSwitchMetricSegmentAndPeriod() throws {
        let session = DashboardFixture.session(try demoStore(), width: 80, height: 24)
        session.command("cohorts")
        XCTAssertTrue(session.screenLines[1].hasPrefix(" subscription retention   segment paid"), session.screenLines[1])
        session.type(.char("m"))
        XCTAssertTrue(session.screenLines[1].hasPrefix(" realized lifetime value   segment paid"), session.screenLines[1])
        XCTAssertTrue(session.screenText.contains("LTV per member in USD"), session.screenText)
        session.type(.char("m"))
        XCTAssertTrue(session.screenLines[1].hasPrefix(" trial conversion   segment paid"), session.screenLines[1])
        session.type(.char("f"))
        XCTAssertEqual(session.state.cohorts.choice.segment, .familyShared)
        XCTAssertTrue(session.screenLines[1].contains("segment family shared"), session.screenLines[1])
        session.type(.char("f"), .char("f"), .char("f"), .char("p"))
        XCTAssertEqual(session.state.cohorts.choice, CohortsRequest(metric: .trial, period: .week, segment: .paid))
        XCTAssertTrue(session.screenLines[2].hasPrefix(" WEEK "), session.screenLines[2])
        session.command("cohorts retention month")
        XCTAssertEqual(session.state.cohorts.choice, CohortsRequest())
        XCTAssertEqual(session.state.keys.hints(for: .cohorts).prefix(4).map(\.label), ["metric", "period", "periods", "segment"])
    }

    /// An empty store says there are no paid cohorts yet (or no trials), not an empty table.
    func testAnEmptyStoreSaysThereAreNoCohortsYet() throws {
        let session = DashboardFixture.session(try Store.inMemory(), width: 80, height: 24)
        session.command("cohorts")
        XCTAssertNil(session.state.flash)
        var text = session.screenText
        XCTAssertTrue(text.contains("no paid cohorts yet: none began in 2025-12 … 2026-11"), text)
        XCTAssertTrue(text.contains("- size: the cohort's subscriptions"), "the definitions stay: \(text)")
        session.type(.char("m"), .char("m"))
        text = session.screenText
        XCTAssertTrue(text.contains("no free trials yet: none began in 2025-12 … 2026-11"), text)
        session.type(.char("l"))
        XCTAssertEqual(session.state.flash?.text, "every period of the report is on screen")
        session.command("cohorts product=app.monthly")
        XCTAssertTrue(session.state.flash?.text.contains("the store has none") ?? false, "\(String(describing: session.state.flash))")
    }

    /// At 80x24 the columns that do not fit are a keypress away and the legend says which show.
    func testPeriodsScrollSidewaysAt80x24() throws {
        let store = try demoStore()
        let session = DashboardFixture.session(store, width: 80, height: 24)
        session.command("cohorts trial")
        let report = try CohortReport.compute(store: store, metric: .trial, now: anchor)
        XCTAssertEqual(report.columns.count, 15)
        XCTAssertEqual(Layout.CohortColumns.fitting(width: 80), 7)
        var lines = session.screenLines
        XCTAssertTrue(lines[2].hasSuffix("    0       1       2       3       4       5       6"), lines[2])
        XCTAssertTrue(lines.contains { $0.hasPrefix(" columns 0–6 of 15 (h/l); columns are days since the trial began") }, lines.joined(separator: "\n"))
        try assertScreenShows(report, session)

        session.type(.char("l"), .right)
        lines = session.screenLines
        XCTAssertTrue(lines[2].hasSuffix("    2       3       4       5       6       7       8"), lines[2])
        XCTAssertTrue(lines.contains { $0.hasPrefix(" columns 2–8 of 15") })
        let october = try XCTUnwrap(line("2026-10", in: lines))
        XCTAssertEqual(cells(october.text), Array(report.rows[0].cells[2...8].compactMap { expected($0, .trial) }))
        for _ in 0..<20 { session.type(.char("l")) }
        XCTAssertTrue(session.screenLines[2].hasSuffix("   14"), "stops at the last period: \(session.screenLines[2])")
        for _ in 0..<20 { session.type(.left) }
        XCTAssertEqual(session.state.cohorts.columnOffset, 0)
        session.type(.char("m"))
        XCTAssertEqual(session.state.cohorts.columnOffset, 0, "another metric starts at period 0")
    }

    /// A report with more lines than 80x24 holds scrolls with j/k, PgDn, g and G, and says which
    /// lines show; shades hold without colour and the screen stays ASCII where it must.
    func testLinesScrollAndShadesAt80x24() throws {
        var state = DashboardFixture.state(width: 80, height: 24)
        state.stack = [.subscribers, .cohorts]
        let month: Millis = 2_629_800_000
        let rows = (0..<12).map { index -> CohortReport.Row in
            let cells: [CohortReport.Cell?] = (0..<4).map { k in
                CohortReport.Cell(count: 0, share: [1.0, 0.6, 0.3, 0.1][k], reactivated: k == 3 ? 2 : 0, complete: true)
            }
            return CohortReport.Row(start: anchor - Millis(12 - index) * month, label: "2025-W\(30 + index)",
                                    value: nil, size: 10 + index, cells: cells)
        }
        let report = CohortReport(metric: .retention, period: .month, unit: .periods, duration: "P1M", from: anchor - 12 * month,
                                  to: anchor, filters: [], segments: [.paid], by: nil, currency: nil, columns: ["0", "1", "2", "3"],
                                  rows: rows, asOf: anchor)
        state.cohorts.asked = CohortsRequest()
        _ = DashboardReducer.reduce(into: &state, .cohortsLoaded(CohortsRequest(), report))
        XCTAssertEqual(state.cohorts.report, report)
        XCTAssertEqual(Selectors.cohortLines(report).count, 24, "each cohort and its came back line")
        XCTAssertEqual(Layout.cohortRows(height: 24, lines: 24), 16)

        var buffer = DashboardRenderer.render(state)
        var lines = buffer.lines()
        XCTAssertEqual(lines[3], " 2025-W30     10  100.0%   60.0%   30.0%   10.0%")
        XCTAssertEqual(buffer[23, 3].role, .heatTop)
        XCTAssertEqual(buffer[31, 3].role, .heatHigh)
        XCTAssertEqual(buffer[39, 3].role, .heatMedium)
        XCTAssertEqual(buffer[47, 3].role, .heatLow)
        XCTAssertEqual(buffer[15, 3].role, .title, "the size")
        XCTAssertTrue(lines[4].hasPrefix(" came back "), lines[4])
        XCTAssertEqual(cells(lines[4]), ["+2"])
        XCTAssertEqual(buffer[1, 4].role, .dim)
        XCTAssertEqual(buffer[47, 4].role, .accent)
        XCTAssertTrue(lines[19].hasPrefix(" lines 1–16 of 24 (j/k); columns are renewal periods of P1M"), lines[19])

        _ = DashboardReducer.reduce(into: &state, .key(.char("j")))
        _ = DashboardReducer.reduce(into: &state, .key(.down))
        lines = DashboardRenderer.render(state).lines()
        XCTAssertTrue(lines[3].hasPrefix(" 2025-W31 "), lines[3])
        XCTAssertTrue(lines[19].hasPrefix(" lines 3–18 of 24"), lines[19])
        _ = DashboardReducer.reduce(into: &state, .key(.pageDown))
        XCTAssertEqual(state.cohorts.scrollOffset, 8, "no further than the last line")
        _ = DashboardReducer.reduce(into: &state, .key(.char("g")))
        XCTAssertEqual(state.cohorts.scrollOffset, 0)
        _ = DashboardReducer.reduce(into: &state, .key(.char("G")))
        lines = DashboardRenderer.render(state).lines()
        XCTAssertTrue(lines[17].hasPrefix(" 2025-W41     21"), lines[17])
        XCTAssertTrue(lines[18].hasPrefix(" came back"), lines[18])
        XCTAssertTrue(lines[22].hasPrefix(" … the rest: subdesk cohorts --metric retention, or the README's Cohorts"), lines[22])

        // Without colour the four shades still differ; the cells are ASCII already.
        let shades: [StyleRole] = [.heatLow, .heatMedium, .heatHigh, .heatTop]
        for theme in [Theme.monochrome, Theme.standard, Theme.standard.downgraded(toColors: 2)] {
            XCTAssertEqual(Set(shades.map { theme[$0] }).count, 4, theme.name)
        }
        buffer = DashboardRenderer.render(state)
        for y in 2...18 { XCTAssertEqual(ASCIIFallback.text(buffer.lines()[y]), buffer.lines()[y]) }
    }

    /// The screen and `subdesk cohorts` print the same cells from the same store, for each metric
    /// and for one product, and the sizes add up to the same cohorts.
    func testTheScreenAndTheCommandAgreeCellForCell() throws {
        guard let binary = ChildOutput.programBesideThisOne("subdesk") else { throw XCTSkip("no subdesk beside the tests") }
        try DashboardFixture.withDemoStoreFile { path in try agree(binary: binary, path: path) }
    }

    func agree(binary: String, path: String) throws {
        let session = DashboardFixture.session(try Store(path: path), width: 200, height: 50)
        var compared = 0
        for argument in ["retention", "ltv", "trial", "retention week product=app.monthly"] {
            session.command("cohorts " + argument)
            let report = try XCTUnwrap(session.state.cohorts.report)
            let request = session.state.cohorts.choice
            let run = try ChildOutput.run(binary, ["cohorts", "--db", path, "--metric", request.metric.rawValue,
                                                   "--period", request.period.rawValue,
                                                   "--from", report.period.label(report.from), "--to", report.period.label(report.to)]
                                                  + (request.filter.map { ["--where", $0.description] } ?? []))
            XCTAssertEqual(run.status, 0, run.output)
            // The command's table: its header, then a line per cohort (and `came back` lines) up to the `~` note.
            let printed = run.output.components(separatedBy: "\n")
            let header = try XCTUnwrap(printed.firstIndex { $0.hasPrefix("COHORT ") || $0.hasPrefix("WEEK ") }, run.output)
            let rows = printed[(header + 1)...].prefix { !$0.hasPrefix("~ ") }.filter { !$0.hasPrefix("came") }
                .map { $0.split(separator: " ").map(String.init) }
            XCTAssertEqual(rows.map { $0[0] }, report.rows.map(\.label), argument)
            XCTAssertEqual(rows.map { $0[1] }, report.rows.map { String($0.size) }, argument)
            let lines = session.screenLines
            for row in rows {
                let shown = cells(try XCTUnwrap(line(row[0], in: lines), "\(argument): no \(row[0])").text)
                // The command runs at today's clock and the screen at the demo's day: the
                // screen's cells are the command's first, `~` aside (it depends on the clock).
                func plain(_ text: String) -> String { text.hasPrefix("~") ? String(text.dropFirst()) : text }
                XCTAssertEqual(shown.map(plain), row.dropFirst(2).prefix(shown.count).map(plain), "\(argument) \(row[0])")
                compared += shown.count
            }
        }
        XCTAssertGreaterThan(compared, 40)
    }
}
