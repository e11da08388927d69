import Foundation
import XCTest

/// The feed as an on-call engineer watches it: left at its newest row it follows a burst,
/// moved away it holds still and counts what arrived, and `:feed` opens at the newest.
extension DashboardEndToEndTests {
    func testTheFeedFollowsABurstAt120x40() throws {
        try assertTheFeedFollowsABurst()
    }

    func testTheFeedFollowsABurstAt80x24() throws {
        try terminal.resize(width: 80, height: 24)
        try assertTheFeedFollowsABurst()
    }

    /// The newest stored notification's original transaction id, as `subdesk notifications` lists it.
    func newestNotification() throws -> String {
        let listed = try subdesk(["notifications", "--db", database, "--limit", "1"])
        XCTAssertEqual(listed.status, 0, listed.output)
        let row = listed.output.components(separatedBy: "\n").dropFirst().first ?? ""
        return try XCTUnwrap(row.range(of: #"\b2\d{15}\b"#, options: .regularExpression).map { String(row[$0]) }, listed.output)
    }

    /// The feed's first row (under the column titles).
    func firstFeedRow(_ screen: String) -> String {
        let lines = screen.components(separatedBy: "\n")
        guard let titles = lines.firstIndex(where: { $0.contains("TYPE/SUBTYPE") }), titles + 1 < lines.count else { return "" }
        return lines[titles + 1]
    }

    /// About sixty notifications in two seconds from another process: how many, as it says
    /// (on a loaded machine the last one may fall past the two seconds, and is not sent).
    func burstOfSixty() throws -> Int {
        let simulated = try subdesk(["simulate", "--db", database, "--rate", "30", "--duration", "2"])
        XCTAssertEqual(simulated.status, 0, simulated.output)
        let said = simulated.output.range(of: #"simulated \d+ notifications"#, options: .regularExpression)
            .map { simulated.output[$0].split(separator: " ")[1] }.flatMap { Int($0) }
        let count = try XCTUnwrap(said, simulated.output)
        XCTAssertTrue((50...60).contains(count), simulated.output)
        return count
    }

    func assertTheFeedFollowsABurst(file: StaticString = #filePath, line: UInt = #line) throws {
        try openDashboardOnDemoStore()
        let before = try XCTUnwrap(rowCount(try openFeed()))
        let first = try burstOfSixty()
        var newest = try newestNotification()
        var screen = try terminal.waitFor("the burst on the feed") { (self.rowCount($0) ?? 0) >= before + first }
        screen = try terminal.waitFor("the newest row at the top") { self.firstFeedRow($0).contains(newest) }
        XCTAssertTrue(screen.contains("following"), "left at the newest, the feed follows:\n\(screen)", file: file, line: line)

        // Two rows down: the rows on screen hold still, and the header counts the newer ones.
        try terminal.send(keys: "j", "j")
        let held = try terminal.waitFor(text: "held")
        let heldTop = firstFeedRow(held)
        let second = try burstOfSixty()
        screen = try terminal.waitFor(text: "held · \(second) new ↑")
        XCTAssertEqual(firstFeedRow(screen), heldTop, "the view held still:\n\(screen)", file: file, line: line)
        newest = try newestNotification()
        XCTAssertFalse(firstFeedRow(screen).contains(newest), screen, file: file, line: line)

        // Away and back: the feed opens at the newest, following again.
        try terminal.send(literal: ":health")
        try terminal.send(keys: "Enter")
        try terminal.waitFor(text: "SIGNAL")
        screen = try openFeed()
        screen = try terminal.waitFor("the newest row at the top after :feed") { self.firstFeedRow($0).contains(newest) }
        XCTAssertTrue(screen.contains("following"), screen, file: file, line: line)
        XCTAssertFalse(screen.contains("new ↑"), screen, file: file, line: line)
        try terminal.send(keys: "q")
        XCTAssertEqual(waitForExit(), "EXIT=0", file: file, line: line)
    }
}
