import Foundation
import XCTest
import SubscriptionCore
import TerminalUI
@testable import Dashboard
import SubdeskTestKit

/// With two apps the lists spend their width on what they hold: APP as wide as the names
/// in it, no column for overrides or consent withdrawals none of the rows has, and no APP
/// column once `:app` scopes the desk to one app.
final class TwoAppColumnsTests: XCTestCase, RunsOnEveryEngine {
    static let sizes = [(80, 24), (120, 40)]

    /// The fixture's two apps and a third, of a long name, that no row is of.
    static let apps = ConfiguredApps(apps: TwoAppFixture.apps.apps + [ConfiguredApp(name: "meditation-pro", bundleId: "com.example.meditation")],
                                     fromSections: true)

    /// Where each column of a header line starts, by its first word.
    func starts(_ header: String) -> [String: Int] {
        var result: [String: Int] = [:]
        var column = 0
        var previous: Character = " "
        for c in header {
            if c != " " && previous == " " {
                result[String(header.dropFirst(column).prefix { $0 != " " })] = column
            }
            previous = c
            column += 1
        }
        return result
    }

    /// The column header line holding `title`, and the rows under it.
    func table(_ session: DashboardSession, header title: String) throws -> (header: String, rows: [String]) {
        let lines = session.screenLines
        let index = try XCTUnwrap(lines.firstIndex { $0.contains(title) }, session.screenText)
        return (lines[index], Array(lines[(index + 1)..<(lines.count - 1)]).filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty })
    }

    func testTheSubscriberListAt80And120ColumnsWithTwoApps() throws {
        for (width, height) in Self.sizes {
            let session = try TwoAppFixture.session(width: width, height: height, apps: Self.apps)
            Snapshot.assertLines(session.screenLines, named: "two-apps-subscribers-\(width)x\(height)")
            let (header, rows) = try table(session, header: "ORIGINAL TX")
            let words = header.split(separator: " ").map(String.init)
            XCTAssertEqual(words.first, "APP", header)
            // No override is in force on any row: no column for one.
            XCTAssertFalse(words.contains("OV") || words.contains("OVERRIDE"), header)
            // APP is as wide as `other`, the widest name it holds (not the configured third's), and a gap.
            let at = starts(header)
            XCTAssertEqual(at["USER"], width == 80 ? 7 : 8, header)
            // USER and PRODUCT get the room: at 80 columns most of a user id, at 120 every id up to 12 whole.
            XCTAssertGreaterThanOrEqual(try XCTUnwrap(at["ORIGINAL"]) - 1 - at["USER"]!, width == 80 ? 8 : 13, header)
            XCTAssertGreaterThanOrEqual(try XCTUnwrap(at["STATUS"]) - 1 - at["PRODUCT"]!, width == 80 ? 9 : 13, header)
            if width > 80 {
                for row in session.state.subscribers.rows.prefix(rows.count) {
                    if let user = row.subscriber.userId, user.count <= 12 {
                        XCTAssertTrue(rows.contains { $0.contains(" " + user + " ") }, "\(user) whole\n" + session.screenText)
                    }
                    if row.state.productId.count <= 12 {
                        XCTAssertTrue(rows.contains { $0.contains(" " + row.state.productId + " ") }, "\(row.state.productId) whole\n" + session.screenText)
                    }
                }
            }

            session.command("app demo")
            let scoped = try table(session, header: "ORIGINAL TX")
            XCTAssertTrue(scoped.header.hasPrefix(" USER"), "scoped to one app: no APP column\n" + session.screenText)
            Snapshot.assertLines(session.screenLines, named: "two-apps-subscribers-scoped-\(width)x\(height)")
        }
    }

    func testTheQuarantineAt80And120ColumnsWithTwoApps() throws {
        for (width, height) in Self.sizes {
            let session = try TwoAppFixture.session(width: width, height: height, apps: Self.apps)
            session.command("quarantine")
            Snapshot.assertLines(session.screenLines, named: "two-apps-quarantine-\(width)x\(height)")
            let (header, rows) = try table(session, header: "REASON")
            let at = starts(header)
            XCTAssertTrue(header.hasPrefix(" APP "), header)
            // APP as wide as `other`, the widest name it holds: `#`, right-aligned in 5, ends at 11 (or 12 with wider gaps).
            XCTAssertEqual(at["#"], width == 80 ? 11 : 12, "APP as wide as the names it holds\n" + session.screenText)
            XCTAssertTrue(rows.contains { $0.contains(" other ") && $0.contains(TwoAppFixture.otherRefusal) }, "the reason whole\n" + session.screenText)
            XCTAssertGreaterThanOrEqual(width - 1 - (try XCTUnwrap(at["REASON"])), width == 80 ? 26 : 57,
                                        "REASON gets the room\n" + session.screenText)

            session.command("app other")
            let scoped = try table(session, header: "REASON")
            XCTAssertFalse(scoped.header.contains("APP"), "scoped to one app: no APP column\n" + session.screenText)
        }
    }
}
