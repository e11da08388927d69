import Foundation
import SubscriptionCore
import XCTest
import SubdeskTestKit

/// `subdesk retention report import FILE` and `subdesk retention report`, on the fixture report
/// (ours, written from Apple's "App Store Retention Messaging" field list).
final class RetentionReportCLITests: SubdeskTestCase, RunsOnEveryEngine {
    func testImportReportJSONReimportAndRefusal() throws {
        let db = Store.testLocation(file: dir + "/retention.db")
        XCTAssertEqual(try run(["init", "--db", db]).status, 0)
        let file = dir + "/" + RetentionReportFixture.file
        try Data(RetentionReportFixture.text.utf8).write(to: URL(fileURLWithPath: file))

        let imported = try run(["retention", "report", "import", file, "--db", db, "--operator", "ana", "--reason", "May"])
        XCTAssertEqual(imported.status, 0, imported.stderr)
        XCTAssertTrue(imported.stdout.contains("20 rows imported by ana (audit #"), imported.stdout)
        // Twice: counted once, audited twice.
        XCTAssertEqual(try run(["retention", "report", "import", file, "--db", db]).status, 0)

        let report = try run(["retention", "report", "--db", db, "--json", "--by", "territory"])
        XCTAssertEqual(report.status, 0, report.stderr)
        let object = try XCTUnwrap(try json(report.stdout) as? [String: Any])
        let total = try XCTUnwrap(object["total"] as? [String: Any])
        // Apple's figures: Page views, Saves by Save Type, Cancels; save rate Saves / Page views.
        XCTAssertEqual(["views", "saves", "offersRedeemed", "plansSwitched", "dontCancel", "otherSaves", "cancellations", "otherEvents"]
            .map { total[$0] as? Int }, [330, 61, 24, 9, 28, 0, 213, 0])
        XCTAssertEqual(total["saveRate"] as? Double ?? -1, 61.0 / 330.0, accuracy: 1e-12)
        XCTAssertEqual(object["earlierRowsNotCounted"] as? Int, 0)
        let groups = try XCTUnwrap(object["groups"] as? [[String: Any]])
        XCTAssertEqual(groups.map { $0["label"] as? String }, ["US", "GB", "DE"])
        // The same, as the store computes it: what the dashboard's screen shows (RetentionScreenTests).
        let store = try Store(path: db)
        let direct = RetentionReport(rows: try store.retention.report.rows(), grouping: .territory).jsonObject()
        XCTAssertEqual(try json(report.stdout) as? NSDictionary, try json(JSONText.render(direct)) as? NSDictionary)
        XCTAssertEqual(try store.audit.entries().filter { $0.action == "retention_report_import" }.count, 2)

        // By Message Selection Type: default or real-time.
        let selection = try XCTUnwrap(try json(try run(["retention", "report", "--db", db, "--json", "--by", "selection"]).stdout)
            as? [String: Any])
        let bySelection = try XCTUnwrap(selection["groups"] as? [[String: Any]]).map {
            "\($0["label"] ?? "") \(($0["figures"] as? [String: Any])?["views"] ?? "") \(($0["figures"] as? [String: Any])?["saves"] ?? "")"
        }
        XCTAssertEqual(bySelection, ["Real-time 220 45", "Default 110 16"])

        // One app, some days; the text table ends with the total and the formula.
        let text = try run(["retention", "report", "--db", db, "--app", RetentionReportFixture.app, "--since", "2026-05-02"])
        XCTAssertEqual(text.status, 0, text.stderr)
        let lines = text.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.first, "retention messaging 2026-05-02 to 2026-05-02 (days as Apple's report dates them), by product")
        XCTAssertTrue(lines.contains { $0.hasPrefix("total") && $0.hasSuffix("15.5%") }, text.stdout)
        XCTAssertEqual(lines[1].split(separator: " ").joined(separator: " "), "PRODUCT VIEWS SAVES OFFERS SWITCHED DON'T CANCEL CANCELLED SAVE RATE")
        XCTAssertEqual(lines.last, "save rate = Saves / Page views: every choice not to cancel, per view of the cancellation sheet (Apple's)")

        // A corrupted file: refused with its place, exit 2, nothing more stored.
        let bad = dir + "/bad.txt"
        try Data(RetentionReportFixture.text.replacingOccurrences(of: "\tGB\t9\n", with: "\tGB\tnine\n").utf8)
            .write(to: URL(fileURLWithPath: bad))
        let refused = try run(["retention", "report", "import", bad, "--db", db])
        XCTAssertEqual(refused.status, 2)
        XCTAssertTrue(refused.stderr.contains(bad + ":12: column \"Counts\": expected a whole number, got \"nine\"; nothing was imported"),
                      refused.stderr)
        XCTAssertEqual(try store.audit.entries().filter { $0.action == "retention_report_import" }.count, 2)
        XCTAssertEqual(try store.retention.report.rows().count, 20)

        // A file in the shape first assumed: refused naming its column, nothing stored.
        let earlier = dir + "/earlier.txt"
        try Data(RetentionReportFixture.earlierShape.utf8).write(to: URL(fileURLWithPath: earlier))
        let old = try run(["retention", "report", "import", earlier, "--db", db])
        XCTAssertEqual(old.status, 2)
        XCTAssertTrue(old.stderr.contains(earlier + ":1: column \"Message Type\": not a column of Apple's retention messaging report"),
                      old.stderr)
        XCTAssertEqual(try store.retention.report.rows().count, 20)

        XCTAssertNotEqual(try run(["retention", "report", "--db", db, "--by", "day"]).status, 0)
        XCTAssertNotEqual(try run(["retention", "report", "--db", db, "--since", "May"]).status, 0)
    }
}
