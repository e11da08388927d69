import Foundation
import XCTest

/// The desk's flows as a person meets them in a terminal: the filter as it is typed, a
/// demo refused over another file, a read on a missing store, simulated traffic reaching
/// an open dashboard, a store replaced under it, and the feed's selection while rows arrive.
extension DashboardEndToEndTests {
    /// The subscriber rows on screen (lines holding an original transaction id of the demo).
    func subscriberRows(_ screen: String) -> [String] {
        screen.components(separatedBy: "\n").filter { $0.contains("20000004000") }
    }

    /// Builds the demo store and opens the dashboard on it, at its subscribers list.
    func openDashboardOnDemoStore() throws {
        try buildDemoStore()
        try terminal.shell(commandLine("--db '\(database)'"))
        try terminal.waitFor(text: "25 subscriptions")
    }

    /// Switches to the live feed with `:feed`; the screen once it shows.
    @discardableResult
    func openFeed() throws -> String {
        try terminal.send(literal: ":feed")
        try terminal.send(keys: "Enter")
        return try terminal.waitFor(text: "TYPE/SUBTYPE")
    }

    func testFilterAsYouTypeFindsPremiumWithoutEnter() throws {
        try openDashboardOnDemoStore()
        try terminal.send(literal: "/PREM")
        let screen = try terminal.waitFor(text: "filter PREM")
        let rows = subscriberRows(screen)
        XCTAssertFalse(rows.isEmpty, screen)
        // `app.premium…` where the consent column (the demo has an open withdrawal) narrows PRODUCT.
        XCTAssertTrue(rows.allSatisfy { $0.contains("app.premium") }, screen)
        XCTAssertTrue(screen.contains("/PREM"), "the prompt is still open: \(screen)")
        // The tail of an id, then Esc: the filter typed is dropped, the list whole again.
        try terminal.send(keys: "C-u")
        try terminal.send(literal: "1201")
        let tail = try terminal.waitFor(text: "1 subscription")
        XCTAssertTrue(tail.contains("2000000400001201"), tail)
        try terminal.send(keys: "Escape")
        try terminal.waitFor(text: "25 subscriptions")
        try terminal.send(keys: "q")
        XCTAssertEqual(waitForExit(), "EXIT=0")
    }

    func testDemoIsRefusedOverAFileThatIsNoDemoStoreAndAReadNeedsAStore() throws {
        let notes = directory.appendingPathComponent("notes.txt").path
        try "keep me\n".write(toFile: notes, atomically: true, encoding: .utf8)
        try terminal.shell(commandLine("demo --db '\(notes)' --copies 1"))
        // The message is longer than the terminal is wide: read it with its lines joined.
        let screen = try terminal.waitFor("the refusal") { $0.replacingOccurrences(of: "\n", with: "").contains("refusing to replace it") }
        XCTAssertTrue(screen.replacingOccurrences(of: "\n", with: "").contains("\(notes) is not a SQLite database"), screen)
        XCTAssertEqual(waitForExit(), "EXIT=2")
        XCTAssertEqual(try String(contentsOfFile: notes, encoding: .utf8), "keep me\n")

        try FileManager.default.removeItem(atPath: exitFile)
        let missing = directory.appendingPathComponent("typo.db").path
        try terminal.shell(commandLine("show user-1010 --db '\(missing)'"))
        try terminal.waitFor(text: "no store at \(missing)")
        XCTAssertEqual(waitForExit(), "EXIT=2")
        XCTAssertFalse(FileManager.default.fileExists(atPath: missing))
    }

    func testSimulatedTrafficReachesTheOpenDashboardWithinASecond() throws {
        try openDashboardOnDemoStore()
        let before = try XCTUnwrap(rowCount(try openFeed()))
        let started = Date()
        let simulated = try subdesk(["simulate", "--db", database, "--rate", "20", "--duration", "0.2"])
        XCTAssertEqual(simulated.status, 0, simulated.output)
        XCTAssertTrue(simulated.output.contains(database), "simulate says which store it feeds: \(simulated.output)")
        let written = Date()
        try terminal.waitFor("the simulated notifications on the feed", timeout: 1) { (self.rowCount($0) ?? 0) > before }
        XCTAssertLessThan(Date().timeIntervalSince(written), 1.0, "shown within a second of being stored (simulate ran \(written.timeIntervalSince(started)) s)")
        try terminal.send(keys: "q")
        XCTAssertEqual(waitForExit(), "EXIT=0")
    }

    func testAStoreReplacedUnderTheDashboardIsOpenedAgain() throws {
        // A file replaced or deleted on disk: SQLite's store, on both passes.
        database = directory.appendingPathComponent("demo.db").path
        try openDashboardOnDemoStore()
        let rebuilt = try subdesk(["demo", "--no-dashboard", "--db", database, "--copies", "2"])
        XCTAssertEqual(rebuilt.status, 0, rebuilt.output)
        let screen = try terminal.waitFor(text: "store replaced: reopened")
        try terminal.waitFor(text: "50 subscriptions")
        XCTAssertTrue(screen.contains("● live"), screen)
        try FileManager.default.removeItem(atPath: database)
        try terminal.waitFor(text: "store deleted or moved")
        try terminal.send(keys: "q")
        XCTAssertEqual(waitForExit(), "EXIT=0")
    }

    /// `subdesk demo` run again under an open `:feed`: the feed shows the new store's rows
    /// (and what arrives after), and `:audit` the new store's log, not the old one's.
    func testTheFeedAndTheAuditLogFollowAStoreReplacedUnderThem() throws {
        database = directory.appendingPathComponent("demo.db").path
        try openDashboardOnDemoStore()
        let granted = try subdesk(["override", "grant", "2000000400000901", "--until", "+30d", "--reason", "goodwill-old", "--db", database])
        XCTAssertEqual(granted.status, 0, granted.output)
        try terminal.send(literal: ":audit")
        try terminal.send(keys: "Enter")
        try terminal.waitFor(text: "goodwill-old")
        let before = try XCTUnwrap(rowCount(try openFeed()))

        let rebuilt = try subdesk(["demo", "--no-dashboard", "--db", database, "--copies", "2"])
        XCTAssertEqual(rebuilt.status, 0, rebuilt.output)
        try terminal.waitFor(text: "store replaced: reopened")
        let replaced = try terminal.waitFor("the new store's rows on the feed") { (self.rowCount($0) ?? 0) > before }
        XCTAssertTrue(replaced.contains("TYPE/SUBTYPE"), "still on the feed:\n\(replaced)")
        let simulated = try subdesk(["simulate", "--db", database, "--rate", "20", "--duration", "0.2"])
        XCTAssertEqual(simulated.status, 0, simulated.output)
        // The selection stays on its row as rows arrive above it: the newest are at the top.
        try terminal.send(keys: "g")
        // simulate numbers its instances from 5,000,000 on, so its ids never start as the demo's 2000000400 do.
        try terminal.waitFor("rows stored after the replacement") {
            $0.range(of: #"\b20000(?!00400)\d{11}\b"#, options: .regularExpression) != nil
        }

        try terminal.send(literal: ":audit")
        try terminal.send(keys: "Enter")
        let audit = try terminal.waitFor(text: "0 operator actions")
        XCTAssertFalse(audit.contains("goodwill-old"), "the old store's grant is not shown:\n\(audit)")
        try terminal.send(keys: "q")
        XCTAssertEqual(waitForExit(), "EXIT=0")
    }

    func testTheFeedSelectionStaysOnItsNotificationWhileRowsArrive() throws {
        try openDashboardOnDemoStore()
        try openFeed()
        // Stored rows only (the newest rows of the demo are refused bodies, which open the quarantine).
        try terminal.send(literal: "/SUBSCRIBED")
        try terminal.send(keys: "Enter")
        try terminal.waitFor(text: "filter: SUBSCRIBED")
        try terminal.send(keys: "j", "j", "Enter")
        let before = try terminal.waitFor(text: "Status")
        let opened = try XCTUnwrap(before.range(of: #"2000000400\d{6}"#, options: .regularExpression).map { String(before[$0]) }, before)
        try terminal.send(keys: "Escape")
        try terminal.waitFor(text: "TYPE/SUBTYPE")
        let simulated = try subdesk(["simulate", "--db", database, "--rate", "50", "--duration", "0.2"])
        XCTAssertEqual(simulated.status, 0, simulated.output)
        // Moved away from the newest, the view holds: the header counts the rows above it.
        try terminal.waitFor(text: "new ↑")
        try terminal.send(keys: "Enter")
        let after = try terminal.waitFor(text: "Status")
        XCTAssertTrue(after.contains(opened), "Enter still opens \(opened):\n\(after)")
        try terminal.send(keys: "q")
        XCTAssertEqual(waitForExit(), "EXIT=0")
    }

    func testYCopiesTheSelectedIdThroughTheTerminalAndOverridesAreMarked() throws {
        try buildDemoStore()
        let granted = try subdesk(["override", "grant", "user-1013", "--until", "+7d", "--reason", "e2e", "--db", database])
        XCTAssertEqual(granted.status, 0, granted.output)
        // tmux keeps what an application sets through OSC 52 as a paste buffer when allowed to.
        try terminal.run(["set-option", "-g", "set-clipboard", "on"])
        try terminal.shell(commandLine("--db '\(database)'"))
        try terminal.waitFor(text: "25 subscriptions")
        try terminal.send(literal: "/user-1013")
        let screen = try terminal.waitFor(text: "1 subscription")
        let row = try XCTUnwrap(screen.components(separatedBy: "\n").first { $0.contains("2000000400001201") }, screen)
        XCTAssertTrue(row.contains("grant"), "the row says an override decides it: \(row)")
        try terminal.send(keys: "Enter")
        try terminal.waitFor(text: "filter user-1013")
        try terminal.send(keys: "y")
        try terminal.waitFor(text: "copied 2000000400001201")
        let buffer = try terminal.run(["show-buffer"]).trimmingCharacters(in: .whitespacesAndNewlines)
        XCTAssertEqual(buffer, "2000000400001201")
        try terminal.send(keys: "q")
        XCTAssertEqual(waitForExit(), "EXIT=0")
    }

    func testInTheCLocaleBordersAndGlyphsFallBackToASCII() throws {
        try buildDemoStore()
        try terminal.shell("LC_ALL=C LANG=C " + commandLine("--db '\(database)'"))
        var screen = try terminal.waitFor(text: "25 subscriptions")
        XCTAssertTrue(screen.contains("subdesk > subscribers"), screen)
        XCTAssertTrue(screen.contains("* live"), screen)
        try terminal.send(keys: "Enter")
        screen = try terminal.waitFor(text: "+ Subscription ")
        let lines = screen.components(separatedBy: "\n")
        XCTAssertTrue(lines.contains { $0.hasPrefix("+ Subscription ") && $0.hasSuffix("-+") }, screen)
        XCTAssertTrue(lines.contains { $0.hasPrefix("|") && $0.hasSuffix("|") }, "side borders drawn: \(screen)")
        XCTAssertTrue(screen.unicodeScalars.allSatisfy { $0.isASCII }, "nothing but ASCII reaches the screen")
        try terminal.send(keys: "q")
        XCTAssertEqual(waitForExit(), "EXIT=0")
    }
}
