import Foundation
import XCTest
import SubdeskTestKit
import SubscriptionCore
import TerminalUI
@testable import Dashboard

/// `:retention` shows the figures `subdesk retention report --json` prints for the same store
/// (the fixture report, ours, written from Apple's "App Store Retention Messaging" field list):
/// each group's views, saves, offers, switches, don't cancel, cancellations and Apple's save
/// rate, the total last.
final class RetentionScreenTests: XCTestCase, RunsOnEveryEngine {
    func store() throws -> Store {
        let store = try Store.inMemory()
        _ = try Operations(store: store, operatorName: "ana")
            .importRetentionReport(Data(RetentionReportFixture.text.utf8), file: RetentionReportFixture.file)
        return store
    }

    /// The figures of `retention report --json` (the JSON the command prints, read back),
    /// as the screen's cells write them: label, views, saves, offers, switched, don't cancel,
    /// cancelled, save rate.
    func jsonRows(_ store: Store, _ grouping: RetentionGrouping) throws -> [[String]] {
        let report = RetentionReport(rows: try store.retention.report.rows(), grouping: grouping)
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(JSONText.render(report.jsonObject()).utf8)) as? [String: Any])
        func cells(_ label: String, _ f: [String: Any]) -> [String] {
            let rate = (f["saveRate"] as? Double).map { String(format: "%.1f%%", $0 * 100) } ?? "-"
            return [label] + ["views", "saves", "offersRedeemed", "plansSwitched", "dontCancel", "cancellations"]
                .map { "\(f[$0] as? Int ?? -1)" } + [rate]
        }
        let groups = try XCTUnwrap(object["groups"] as? [[String: Any]])
        return try groups.map { cells(try XCTUnwrap($0["label"] as? String), try XCTUnwrap($0["figures"] as? [String: Any])) }
            + [cells("total", try XCTUnwrap(object["total"] as? [String: Any]))]
    }

    /// The screen's table rows, split into cells: the label (which may hold spaces) and the
    /// seven figures after it. A label the width cut (ending in "…") is given back whole
    /// from `expected` when it begins so.
    func screenRows(_ lines: [String], expected: [[String]]) throws -> [[String]] {
        let header = try XCTUnwrap(lines.firstIndex { $0.contains("VIEWS") && $0.contains("SAVE RATE") }, lines.joined(separator: "\n"))
        return zip(lines[(header + 1)...(header + expected.count)], expected).map { line, expected in
            let words = line.split(separator: " ").map(String.init)
            var label = words.dropLast(7).joined(separator: " ")
            if label.hasSuffix("…"), expected[0].hasPrefix(label.dropLast()) { label = expected[0] }
            return [label] + words.suffix(7)
        }
    }

    func testTheScreenShowsTheFiguresOfTheJSONReportByEachGrouping() throws {
        let store = try store()
        for (width, height) in [(80, 24), (120, 40)] {
            let session = DashboardFixture.session(store, width: width, height: height)
            for grouping in RetentionGrouping.allCases {
                session.command("retention " + grouping.rawValue)
                let lines = session.screenLines
                let text = lines.joined(separator: "\n")
                XCTAssertTrue(lines[0].contains("subdesk ▸ subscribers ▸ retention"), lines[0])
                XCTAssertTrue(lines[1].hasPrefix(" Retention messaging 2026-05-01 to 2026-05-03"), "\(grouping) at \(width)x\(height)\n\(text)")
                let expected = try jsonRows(store, grouping)
                XCTAssertEqual(try screenRows(lines, expected: expected), expected, "\(grouping) at \(width)x\(height)\n\(text)")
                XCTAssertTrue(lines[1].contains("by \(grouping.rawValue) · save rate \(expected.last!.last!)"), text)
                let flat = lines.map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
                XCTAssertTrue(flat.contains("save rate = Saves / Page views: every choice not to cancel, per view of the cancellation sheet"),
                              text)
                if grouping == .selection { Snapshot.assertLines(lines, named: "retention-selection-\(width)x\(height)") }
            }
        }
    }

    func testAnEmptyStoreSaysHowToImport() throws {
        let session = DashboardFixture.session(try Store.inMemory(), width: 80, height: 24)
        session.command("retention")
        XCTAssertTrue(session.screenText.contains("no retention messaging rows: import Apple's report"), session.screenText)
        session.command("retention week")
        XCTAssertTrue(session.screenText.contains(":retention takes product, territory, message or selection"), session.screenText)
    }
}
