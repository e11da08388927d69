import XCTest
@testable import TerminalUI

final class ChartTests: XCTestCase {
    func testBarsUseEighthBlocksWithLabelsAndMaxValue() {
        let chart = BarChart(bars: [
            .init(label: "M", value: 1), .init(label: "T", value: 3),
            .init(label: "W", value: 4), .init(label: "T", value: 8),
        ], barWidth: 1, gap: 1)
        let buffer = render(width: 8, height: 6) { chart.render(in: $0.bounds, buffer: &$0) }
        // Four chart rows are 32 eighths: 1 → 4 eighths (▄), 3 → 12 (█ then ▄), 4 → 16, 8 → 32.
        assertLines(buffer, [
            "8",
            "      █",
            "      █",
            "  ▄ █ █",
            "▄ █ █ █",
            "M T W T",
        ])
        XCTAssertEqual(buffer[0, 0].role, .dim)
        XCTAssertEqual(buffer[6, 1].role, .chartBar)
    }

    func testWideBarsAndCentredLabels() {
        let chart = BarChart(bars: [.init(label: "11-16", value: 2), .init(label: "17", value: 4, role: .accent)],
                             barWidth: 3, gap: 2, showsMaxLabel: false)
        let buffer = render(width: 10, height: 3) { chart.render(in: $0.bounds, buffer: &$0) }
        assertLines(buffer, [
            "     ███",
            "███  ███",
            "11…  17",
        ])
        XCTAssertEqual(buffer[5, 0].role, .accent)
    }

    func testOnlyTheMostRecentBarsThatFitAreShown() {
        let chart = BarChart(bars: (1...6).map { .init(label: String($0), value: Double($0)) },
                             barWidth: 1, gap: 1, showsMaxLabel: false)
        let buffer = render(width: 5, height: 2) { chart.render(in: $0.bounds, buffer: &$0) }
        // Scale is still the largest of all bars: 6. One row is 8 eighths: 4 → 5, 5 → 7, 6 → 8.
        assertLines(buffer, ["▅ ▇ █", "4 5 6"])
    }

    func testTinyPositiveValuesStayVisibleAndBadValuesDrawNothing() {
        let chart = BarChart(bars: [.init(label: "", value: 0.01), .init(label: "", value: .nan),
                                    .init(label: "", value: -3), .init(label: "", value: 100)],
                             barWidth: 1, gap: 0, maxValue: 100, showsMaxLabel: false)
        let buffer = render(width: 4, height: 1) { chart.render(in: $0.bounds, buffer: &$0) }
        assertLines(buffer, ["▁  █"])
    }

    func testMaxLabelFormatting() {
        XCTAssertEqual(BarChart.format(412), "412")
        XCTAssertEqual(BarChart.format(2.25), "2.3")
        XCTAssertEqual(BarChart.format(0), "0")
    }

    func testSparklineScalesToMax() {
        XCTAssertEqual(Sparkline.string([0, 1, 2, 3, 4, 5, 6, 7]), "▁▂▃▄▅▆▇█")
        XCTAssertEqual(Sparkline.string([0, 1, 2, 3, 4, 5, 6, 7], width: 4), "▅▆▇█")
        XCTAssertEqual(Sparkline.string([7, 14], maxValue: 14), "▅█")
        XCTAssertEqual(Sparkline.string([0, 0, 0]), "▁▁▁")
        XCTAssertEqual(Sparkline.string([.nan, .infinity, 3]), "▁▁█")
        XCTAssertEqual(Sparkline.string([]), "")
    }

    func testSparklineRendersTheLatestValuesThatFit() {
        let buffer = render(width: 12, height: 1) {
            Sparkline(values: [1, 2, 2, 3, 5, 7, 8, 6, 5, 3]).render(in: Rect(x: 2, y: 0, width: 5, height: 1), buffer: &$0)
        }
        // Scaled to the largest value shown, 8: 7 → ▇, 6 → ▆, 5 → ▅, 3 → ▄.
        assertLines(buffer, ["  ▇█▆▅▄"])
        XCTAssertEqual(buffer[2, 0].role, .sparkline)
    }
}
