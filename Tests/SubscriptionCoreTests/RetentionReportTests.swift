import Foundation
import XCTest
@testable import SubscriptionCore
import SubdeskTestKit

/// Apple's retention messaging report (`RetentionReportFixture`, ours, written from Apple's
/// "App Store Retention Messaging" field list): imported, it gives the figures a plain loop
/// over the fixture's lines gives; a corrupted file is refused with its line and column and
/// stores nothing; importing it again counts it once.
final class RetentionReportTests: XCTestCase, RunsOnEveryEngine {
    let fixture = Data(RetentionReportFixture.text.utf8)

    /// The fixture's figures by a naive reading: split each line at tabs, add Counts by the
    /// Event's words. Keyed by `group(fields)`; "" is the total.
    func naive(_ group: ([String]) -> String, days: ClosedRange<String>? = nil, app: String? = nil)
        -> [String: (views: Int64, offers: Int64, switches: Int64, cancels: Int64)] {
        var out: [String: (views: Int64, offers: Int64, switches: Int64, cancels: Int64)] = [:]
        for line in RetentionReportFixture.text.split(separator: "\n").dropFirst() {
            let f = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            if let days, !days.contains(f[0]) { continue }
            if let app, f[1] != app { continue }
            let n = Int64(f[12])!
            for key in ["", group(f)] {
                var v = out[key] ?? (0, 0, 0, 0)
                switch f[7] {
                case "Page View": v.views += n
                case "Offer Redeemed": v.offers += n
                case "Switch Plan": v.switches += n
                case "Cancel Subscription": v.cancels += n
                default: break
                }
                out[key] = v
            }
        }
        return out
    }

    func assertAgrees(_ report: RetentionReport, _ expected: [String: (views: Int64, offers: Int64, switches: Int64, cancels: Int64)],
                      file: StaticString = #filePath, line: UInt = #line) {
        func check(_ f: RetentionFigures, _ e: (views: Int64, offers: Int64, switches: Int64, cancels: Int64)?, _ what: String) {
            guard let e else { return XCTFail("\(what) not expected", file: file, line: line) }
            XCTAssertEqual([f.views, f.offersRedeemed, f.plansSwitched, f.cancellations], [e.views, e.offers, e.switches, e.cancels],
                           what, file: file, line: line)
            // Apple's save rate, worked out by hand: saves per view of the cancellation sheet.
            let rate = e.views == 0 ? nil : Double(e.offers + e.switches) / Double(e.views)
            XCTAssertEqual(f.saveRate, rate, what, file: file, line: line)
        }
        check(report.total, expected[""], "total")
        XCTAssertEqual(report.groups.count, expected.count - 1, "groups", file: file, line: line)
        for group in report.groups {
            let key = expected.keys.first { !$0.isEmpty && group.label.hasPrefix($0) }
            check(group.figures, key.flatMap { expected[$0] }, group.label)
        }
    }

    func testTheFixtureImportsAndGivesTheNaiveFigures() throws {
        let store = try Store.inMemory()
        let ops = Operations(store: store, operatorName: "ana")
        let imported = try ops.importRetentionReport(fixture, file: "reports/apple/" + RetentionReportFixture.file, now: 1_000)
        XCTAssertEqual(imported.rows.count, 16)
        XCTAssertEqual(imported.audit.action, "retention_report_import")
        XCTAssertEqual(imported.audit.target, RetentionReportFixture.file)
        let audit = try store.audit().filter { $0.action == "retention_report_import" }
        XCTAssertEqual(audit.count, 1)
        XCTAssertEqual(audit.first?.outcome, "16 rows imported")

        let rows = try store.retentionRows()
        XCTAssertEqual(rows.count, 16)
        assertAgrees(RetentionReport(rows: rows, grouping: .product), naive { $0[5] })
        assertAgrees(RetentionReport(rows: rows, grouping: .territory), naive { $0[11] })
        assertAgrees(RetentionReport(rows: rows, grouping: .message), naive { $0[8] })
        // By app (name or Apple ID) and days, both included.
        let one = try store.retentionRows(RetentionReportQuery(app: RetentionReportFixture.appAppleId, since: "2026-05-02",
                                                               until: "2026-05-03"))
        assertAgrees(RetentionReport(rows: one, grouping: .territory),
                     naive({ $0[11] }, days: "2026-05-02"..."2026-05-03", app: RetentionReportFixture.app))
        XCTAssertEqual(try store.retentionRows(RetentionReportQuery(app: "Pantry")).count, 2)

        // The figures by hand, once: 310 views; 24 offers and 9 switches saved 33.
        let total = RetentionReport(rows: rows, grouping: .product).total
        XCTAssertEqual(total.views, 310)
        XCTAssertEqual(total.saves, 33)
        XCTAssertEqual(total.otherEvents, 11)
        XCTAssertEqual(total.saveRateText, "10.6%")
    }

    func testImportingTheSameFileAgainDoesNotDoubleAndACorrectionReplaces() throws {
        let store = try Store.inMemory()
        let ops = Operations(store: store, operatorName: "ana")
        _ = try ops.importRetentionReport(fixture, file: "a.txt")
        _ = try ops.importRetentionReport(fixture, file: "a.txt")
        let twice = RetentionReport(rows: try store.retentionRows(), grouping: .product)
        XCTAssertEqual(twice.total.views, 310)
        XCTAssertEqual(try store.retentionRows().count, 16)
        XCTAssertEqual(try store.audit().filter { $0.action == "retention_report_import" }.count, 2)

        // Apple's corrected day: the same row with another count replaces it.
        let corrected = RetentionReportFixture.text.replacingOccurrences(of: "\tUS\t120\n", with: "\tUS\t100\n")
        _ = try ops.importRetentionReport(Data(corrected.utf8), file: "b.txt")
        XCTAssertEqual(RetentionReport(rows: try store.retentionRows(), grouping: .product).total.views, 290)
    }

    /// Each corruption is refused naming its line and column, and the store holds nothing after.
    func testACorruptedFileIsRefusedWithItsPlaceAndStoresNothing() throws {
        let text = RetentionReportFixture.text
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        func with(line index: Int, _ change: (String) -> String) -> String {
            var copy = lines
            copy[index] = change(copy[index])
            return copy.joined(separator: "\n")
        }
        let cases: [(String, Data)] = [
            ("f.txt:3: column \"Counts\": expected a whole number, got \"x\"",
             Data(with(line: 2) { $0.replacingOccurrences(of: "\t18", with: "\tx") }.utf8)),
            ("f.txt:1: column \"Territory\": missing from the header",
             Data((lines.map { $0.split(separator: "\t", omittingEmptySubsequences: false).enumerated()
                     .filter { $0.offset != 11 }.map { String($0.element) }.joined(separator: "\t") }).joined(separator: "\n").utf8)),
            ("f.txt:1: column \"Views\": not a column of Apple's retention messaging report",
             Data(with(line: 0) { $0.replacingOccurrences(of: "Counts", with: "Views") }.utf8)),
            ("f.txt:5: 8 fields, the header has 13",
             Data(with(line: 4) { $0.split(separator: "\t").prefix(8).joined(separator: "\t") }.utf8)),
            ("f.txt:4: column \"Counts\": 99999999999999999999 is more than 999999999999999",
             Data(with(line: 3) { $0.replacingOccurrences(of: "\t70", with: "\t99999999999999999999") }.utf8)),
            ("f.txt:2: column \"Date\": expected a day YYYY-MM-DD, got \"05/01/2026\"",
             Data(with(line: 1) { $0.replacingOccurrences(of: "2026-05-01", with: "05/01/2026") }.utf8)),
            ("f.txt:6: not UTF-8 text",
             Data(with(line: 5) { _ in "" }.utf8).replacingOccurrences(of: Data("\n\n".utf8), with: Data([0x0A, 0xFF, 0x0A]))),
            ("f.txt:1: not a tab-separated header", Data(text.replacingOccurrences(of: "\t", with: ",").utf8)),
            ("f.txt:1: gzip-compressed", Data([0x1F, 0x8B, 0x08, 0x00])),
            ("f.txt:1: empty", Data()),
            ("f.txt:7: the line has", Data(with(line: 6) { $0 + String(repeating: "y", count: 70_000) }.utf8)),
        ]
        for (expected, data) in cases {
            let store = try Store.inMemory()
            XCTAssertThrowsError(try Operations(store: store, operatorName: "ana").importRetentionReport(data, file: "f.txt")) { error in
                XCTAssertTrue("\(error)".hasPrefix(expected), "expected \(expected), got \(error)")
            }
            XCTAssertEqual(try store.retentionRows().count, 0, expected)
            XCTAssertEqual(try store.audit().filter { $0.action == "retention_report_import" }.count, 0, expected)
        }
        // Every truncation of the file reads or is refused, never traps.
        for cut in stride(from: 0, to: fixture.count, by: 7) {
            _ = try? RetentionReportFile.parse(fixture.prefix(cut), file: "cut.txt")
        }
        XCTAssertThrowsError(try RetentionReportFile.parse(fixture.prefix(fixture.count - 5), file: "cut.txt")) { error in
            XCTAssertEqual("\(error)", "cut.txt:17: 12 fields, the header has 13")
        }
    }
}

private extension Data {
    func replacingOccurrences(of target: Data, with replacement: Data) -> Data {
        guard let range = self.range(of: target) else { return self }
        var copy = self
        copy.replaceSubrange(range, with: replacement)
        return copy
    }
}
