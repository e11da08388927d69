import Foundation
import XCTest
@testable import SubscriptionCore
import SubdeskTestKit

/// Apple's retention messaging report (`RetentionReportFixture`, ours, written from Apple's
/// "App Store Retention Messaging" field list and glossary,
/// developer.apple.com/documentation/analytics-reports/app-store-retention-messaging):
/// imported, it gives the figures a plain loop over the fixture's rows gives, by Apple's
/// definitions; a corrupted file, one in the shape first assumed, or one missing a column of
/// Apple's is refused with its line and column and stores nothing; importing it again counts
/// it once.
final class RetentionReportTests: XCTestCase, RunsOnEveryEngine {
    let fixture = Data(RetentionReportFixture.text.utf8)

    /// One group's figures as the naive reading adds them.
    struct Naive: Equatable {
        var views: Int64 = 0, saves: Int64 = 0, offers: Int64 = 0, switches: Int64 = 0, dontCancel: Int64 = 0
        var cancels: Int64 = 0
    }

    /// The fixture's figures by a naive reading of its text: split each line at tabs, find
    /// each column by its name in the header, add Counts by Apple's Event and Save Type
    /// values as the page's glossary writes them. Keyed by the value of the column `by`
    /// (the product also by its identifier); "" is the total.
    func naive(by: String, days: ClosedRange<String>? = nil, app: String? = nil) -> [String: Naive] {
        let lines = RetentionReportFixture.text.split(separator: "\n").map {
            $0.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
        }
        var place: [String: Int] = [:]
        for (index, name) in lines[0].enumerated() { place[name] = index }
        var out: [String: Naive] = [:]
        for f in lines.dropFirst() {
            if let days, !days.contains(f[place["Date"]!]) { continue }
            if let app, f[place["App Name"]!] != app { continue }
            let n = Int64(f[place["Counts"]!])!
            var label = f[place[by]!]
            if by == "Current Subscription" { label += " (" + f[place["Current Subscription Identifier"]!] + ")" }
            for key in ["", label] {
                var v = out[key] ?? Naive()
                switch f[place["Event"]!] {
                case "Page views": v.views += n
                case "Cancels": v.cancels += n
                case "Saves":
                    v.saves += n
                    switch f[place["Save Type"]!] {
                    case "Redeem offer": v.offers += n
                    case "Switch plan": v.switches += n
                    case "Don't cancel": v.dontCancel += n
                    default: break
                    }
                default: break
                }
                out[key] = v
            }
        }
        return out
    }

    func assertAgrees(_ report: RetentionReport, _ expected: [String: Naive], file: StaticString = #filePath, line: UInt = #line) {
        func check(_ f: RetentionFigures, _ e: Naive?, _ what: String) {
            guard let e else { return XCTFail("\(what) not expected", file: file, line: line) }
            XCTAssertEqual(Naive(views: f.views, saves: f.saves, offers: f.offersRedeemed, switches: f.plansSwitched,
                                 dontCancel: f.dontCancel, cancels: f.cancellations), e, what, file: file, line: line)
            // Apple's save rate, worked out by hand: Saves per Page views.
            XCTAssertEqual(f.saveRate, e.views == 0 ? nil : Double(e.saves) / Double(e.views), what, file: file, line: line)
        }
        check(report.total, expected[""], "total")
        XCTAssertEqual(report.groups.map(\.label).sorted(), expected.keys.filter { !$0.isEmpty }.sorted(), file: file, line: line)
        for group in report.groups { check(group.figures, expected[group.label], group.label) }
    }

    func testTheFixtureImportsAndGivesTheNaiveFigures() throws {
        let store = try Store.inMemory()
        let ops = Operations(store: store, operatorName: "ana")
        let imported = try ops.importRetentionReport(fixture, file: "reports/apple/" + RetentionReportFixture.file, now: 1_000)
        XCTAssertEqual(imported.rows.count, 20)
        XCTAssertEqual(imported.audit.action, "retention_report_import")
        XCTAssertEqual(imported.audit.target, RetentionReportFixture.file)
        let audit = try store.audit.entries().filter { $0.action == "retention_report_import" }
        XCTAssertEqual(audit.count, 1)
        XCTAssertEqual(audit.first?.outcome, "20 rows imported")

        // Every row of Apple's is a row of the store, its columns kept: the two that differ
        // only in their Message Selection Type too.
        let rows = try store.retention.report.rows()
        XCTAssertEqual(rows.count, 20)
        XCTAssertEqual(Set(rows.map { [$0.day, $0.subscriptionId, $0.page, $0.messageType, $0.selectionType, $0.event, $0.saveType,
                                       $0.device, $0.territory, String($0.counts)] }),
                       Set(RetentionReportFixture.rows.map { [$0[0], $0[6], $0[8], $0[9], $0[10], $0[7], $0[11], $0[12], $0[14], $0[15]] }))
        for (grouping, column) in [(RetentionGrouping.product, "Current Subscription"), (.territory, "Territory"),
                                   (.message, "Retention Message Type"), (.selection, "Message Selection Type")] {
            assertAgrees(try store.retention.report.report(RetentionReportQuery(), by: grouping), naive(by: column))
        }
        // By app (name or Apple ID) and days, both included.
        let one = RetentionReportQuery(app: RetentionReportFixture.appAppleId, since: "2026-05-02", until: "2026-05-03")
        assertAgrees(try store.retention.report.report(one, by: .selection),
                     naive(by: "Message Selection Type", days: "2026-05-02"..."2026-05-03", app: RetentionReportFixture.app))
        XCTAssertEqual(try store.retention.report.rows(RetentionReportQuery(app: "Pantry")).count, 2)

        // The figures by hand, once: 330 views; 61 saves (24 offers, 9 switches, 28 don't
        // cancel); 213 cancellations; Apple's save rate 61 / 330.
        let total = try store.retention.report.report(RetentionReportQuery(), by: .product).total
        XCTAssertEqual([total.views, total.saves, total.offersRedeemed, total.plansSwitched, total.dontCancel, total.cancellations,
                        total.otherSaves, total.otherEvents], [330, 61, 24, 9, 28, 213, 0, 0])
        XCTAssertEqual(total.saveRateText, "18.5%")
        XCTAssertEqual(try store.retention.report.report(RetentionReportQuery(), by: .selection).groups.map(\.label), ["Real-time", "Default"])
    }

    /// The header is matched by Apple's names, ignoring case and surrounding spaces, in any
    /// order: the fixture with its columns reversed and its names shouted reads the same.
    func testTheHeaderIsReadByNameInAnyOrderAndCase() throws {
        let reversed = RetentionReportFixture.text.split(separator: "\n").enumerated().map { index, line in
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).reversed().map(String.init)
            return (index == 0 ? fields.map { "  " + $0.uppercased() + " " } : fields).joined(separator: "\t")
        }.joined(separator: "\r\n")
        let rows = try RetentionReportFile.parse(Data(reversed.utf8), file: "r.txt")
        XCTAssertEqual(rows, try RetentionReportFile.parse(fixture, file: "f.txt"))
        // Apple's values are matched as its names are; a typographic apostrophe is read as one.
        let folded = RetentionReportFixture.text.replacingOccurrences(of: "\tSaves\t", with: "\t saves \t")
            .replacingOccurrences(of: "Don't cancel", with: "DON\u{2019}T CANCEL")
        let store = try Store.inMemory()
        _ = try Operations(store: store, operatorName: "ana").importRetentionReport(Data(folded.utf8), file: "r.txt")
        XCTAssertEqual(try store.retention.report.report(RetentionReportQuery(), by: .product).total.dontCancel, 28)
    }

    func testImportingTheSameFileAgainDoesNotDoubleAndACorrectionReplaces() throws {
        let store = try Store.inMemory()
        let ops = Operations(store: store, operatorName: "ana")
        _ = try ops.importRetentionReport(fixture, file: "a.txt")
        _ = try ops.importRetentionReport(fixture, file: "a.txt")
        let twice = RetentionReport(rows: try store.retention.report.rows(), grouping: .product)
        XCTAssertEqual(twice.total.views, 330)
        XCTAssertEqual(try store.retention.report.rows().count, 20)
        XCTAssertEqual(try store.audit.entries().filter { $0.action == "retention_report_import" }.count, 2)

        // Apple's corrected day: the same row with another count replaces it.
        let corrected = RetentionReportFixture.text.replacingOccurrences(of: "\tUS\t120\n", with: "\tUS\t100\n")
        _ = try ops.importRetentionReport(Data(corrected.utf8), file: "b.txt")
        XCTAssertEqual(RetentionReport(rows: try store.retention.report.rows(), grouping: .product).total.views, 310)
        XCTAssertEqual(try store.retention.report.rows().count, 20)
    }

    /// A file in the shape the import first assumed (a `Message Type` column, events of its
    /// own) is refused naming the column, and so is a file without any one of Apple's columns.
    func testAnEarlierShapeOrAMissingColumnIsRefusedNamingIt() throws {
        let store = try Store.inMemory()
        let ops = Operations(store: store, operatorName: "ana")
        XCTAssertThrowsError(try ops.importRetentionReport(Data(RetentionReportFixture.earlierShape.utf8), file: "old.txt")) { error in
            XCTAssertEqual("\(error)", "old.txt:1: column \"Message Type\": not a column of Apple's retention messaging report"
                           + " (a file in the shape first assumed: Apple's column is \"Retention Message Type\")")
        }
        let lines = RetentionReportFixture.text.split(separator: "\n").map { $0.split(separator: "\t", omittingEmptySubsequences: false) }
        for (index, name) in RetentionReportFixture.header.enumerated() {
            let without = lines.map { fields in fields.enumerated().filter { $0.offset != index }.map { String($0.element) }
                .joined(separator: "\t") }.joined(separator: "\n")
            XCTAssertThrowsError(try ops.importRetentionReport(Data(without.utf8), file: "f.txt")) { error in
                XCTAssertEqual("\(error)", "f.txt:1: column \"\(name)\": missing from the header")
            }
        }
        XCTAssertEqual(try store.retention.report.rows().count, 0)
        XCTAssertEqual(try store.audit.entries().filter { $0.action == "retention_report_import" }.count, 0)
    }

    /// A store with rows imported before migration 41 (in the shape first assumed): they stay
    /// stored as they were, in no figure, counted apart; a file imported since is read whole.
    func testRowsImportedBeforeApplesColumnsStayAndAreLeftOut() throws {
        let dir = NSTemporaryDirectory() + "retention-report-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let location = Store.testLocation(file: dir + "/old.db")
        var store: Store! = try Store(path: location)
        try TestKit.rollBack(store, to: 40)
        try store.db.run("""
            INSERT INTO retention_messaging (row_key, day, app_name, app_apple_id, group_name, group_id, subscription_name,
                subscription_id, event, message_type, device, platform_version, territory, counts, imported_ms)
            VALUES ('k', '2026-04-30', 'Daily Bread', '1234567890', 'Bread Club', '21000001', 'Monthly', '6450000001',
                'Page View', 'Promotional Offer', 'iPhone', 'iOS 26.4', 'US', 500, 1)
            """, [])
        store = nil
        store = try Store(path: location)
        XCTAssertEqual(store.schemaVersion, Migrations.latestVersion)
        XCTAssertEqual(try store.retention.report.earlierRowCount(), 1)
        XCTAssertEqual(try store.retention.report.rows().count, 0)
        _ = try Operations(store: store, operatorName: "ana").importRetentionReport(fixture, file: "f.txt")
        let report = try store.retention.report.report(RetentionReportQuery(), by: .product)
        XCTAssertEqual([report.total.views, Int64(report.earlierRows)], [330, 1])
        XCTAssertEqual(report.firstDay, "2026-05-01")
        XCTAssertEqual(report.jsonObject()["earlierRowsNotCounted"] as? Int, 1)
        XCTAssertEqual(try store.retention.report.report(RetentionReportQuery(since: "2026-05-01"), by: .product).earlierRows, 0)
        XCTAssertEqual(report.earlierNote, "1 row imported before Apple's columns were read (a Message Type column, events of subdesk's own): kept, in no figure")
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
                     .filter { $0.offset != 14 }.map { String($0.element) }.joined(separator: "\t") }).joined(separator: "\n").utf8)),
            ("f.txt:1: column \"Views\": not a column of Apple's retention messaging report",
             Data(with(line: 0) { $0.replacingOccurrences(of: "Counts", with: "Views") }.utf8)),
            ("f.txt:5: 8 fields, the header has 16",
             Data(with(line: 4) { $0.split(separator: "\t").prefix(8).joined(separator: "\t") }.utf8)),
            ("f.txt:5: column \"Counts\": 99999999999999999999 is more than 999999999999999",
             Data(with(line: 4) { $0.replacingOccurrences(of: "\t70", with: "\t99999999999999999999") }.utf8)),
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
            XCTAssertEqual(try store.retention.report.rows().count, 0, expected)
            XCTAssertEqual(try store.audit.entries().filter { $0.action == "retention_report_import" }.count, 0, expected)
        }
        // Every truncation of the file reads or is refused, never traps.
        for cut in stride(from: 0, to: fixture.count, by: 7) {
            _ = try? RetentionReportFile.parse(fixture.prefix(cut), file: "cut.txt")
        }
        XCTAssertThrowsError(try RetentionReportFile.parse(fixture.prefix(fixture.count - 5), file: "cut.txt")) { error in
            XCTAssertEqual("\(error)", "cut.txt:21: 15 fields, the header has 16")
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
