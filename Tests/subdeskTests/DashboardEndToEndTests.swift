import Foundation
import SubscriptionCore
import XCTest
import SubdeskTestKit

/// The built `subdesk` in a real terminal (tmux): search, detail, live feed, daily counts, resize, quit.
final class DashboardEndToEndTests: XCTestCase, RunsOnEveryEngine {
    /// The desk's key flows do not depend on the engine and run once, on SQLite; one desk and
    /// the PostgreSQL login run on every engine.
    static let engineTests: Set<String>? = ["testSearchDetailFeedDailyResizeAndQuit",
                                            "testAReadLoginIsNamedAndToldWhatItMayNotDoBeforeAnyDialog"]

    static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    var terminal: TerminalSession!
    var directory: URL!
    var binary: String!
    /// The store the test opens: a file; a test on every engine makes it the pass's store.
    var database = ""

    override func setUpWithError() throws {
        guard let tmux = TerminalSession.findTmux() else { throw XCTSkip("tmux is not installed") }
        binary = try XCTUnwrap(Self.findBinary(), "cannot find the built subdesk next to the tests or in .build/debug")
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("subdesk-e2e-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        database = directory.appendingPathComponent("demo.db").path
        terminal = TerminalSession(tmux: tmux)
        try terminal.start(width: 120, height: 40)
    }

    override func tearDownWithError() throws {
        terminal?.stop()
        if let directory { try? FileManager.default.removeItem(at: directory) }
    }

    /// The executable built with the tests: beside the test bundle, else the checkout's debug build.
    static func findBinary() -> String? {
        var candidates: [URL] = []
        if let explicit = ProcessInfo.processInfo.environment["SUBDESK_BINARY"] { candidates.append(URL(fileURLWithPath: explicit)) }
        candidates.append(Bundle(for: DashboardEndToEndTests.self).bundleURL.deletingLastPathComponent().appendingPathComponent("subdesk"))
        candidates.append(Bundle.main.bundleURL.appendingPathComponent("subdesk"))
        if let first = CommandLine.arguments.first {
            candidates.append(URL(fileURLWithPath: first).deletingLastPathComponent().appendingPathComponent("subdesk"))
        }
        candidates.append(repositoryRoot.appendingPathComponent(".build/debug/subdesk"))
        return candidates.map(\.path).first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    var sampleData: String { Self.repositoryRoot.appendingPathComponent("sample-data").path }
    var exitFile: String { directory.appendingPathComponent("exit").path }

    /// Runs subdesk to completion outside the terminal.
    @discardableResult
    func subdesk(_ arguments: [String]) throws -> (status: Int32, output: String) {
        try runToEnd(binary, arguments, environment: environment)
    }

    var environment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_CONFIG_HOME"] = directory.appendingPathComponent("config").path
        environment["XDG_DATA_HOME"] = directory.appendingPathComponent("data").path
        environment["SUBDESK_SAMPLE_DATA"] = sampleData
        return environment
    }

    /// The shell line that runs subdesk in the terminal and records its exit status.
    func commandLine(_ arguments: String) -> String {
        "env XDG_CONFIG_HOME='\(directory.path)/config' SUBDESK_SAMPLE_DATA='\(sampleData)' '\(binary!)' \(arguments); echo EXIT=$? > '\(exitFile)'"
    }

    func buildDemoStore() throws {
        let built = try subdesk(["demo", "--no-dashboard", "--db", database, "--copies", "1"])
        XCTAssertEqual(built.status, 0, built.output)
    }

    func waitForExit(timeout: TimeInterval = 5) -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let text = try? String(contentsOfFile: exitFile, encoding: .utf8), text.hasSuffix("\n") {
                return text.trimmingCharacters(in: .whitespacesAndNewlines)
            }
            Thread.sleep(forTimeInterval: 0.1)
        }
        return nil
    }

    /// After quitting, the shell is back: normal screen, and typed characters echo again.
    func assertTerminalRestored(file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertFalse(try terminal.alternateScreenOn(), "still on the alternate screen", file: file, line: line)
        try terminal.shell("echo restored-$((40+2))")
        let screen = try terminal.waitFor(text: "restored-42", file: file, line: line)
        XCTAssertTrue(screen.contains("echo restored-$((40+2))"), "input is echoed again", file: file, line: line)
        XCTAssertFalse(screen.contains("● live"), "the dashboard is gone from the screen", file: file, line: line)
    }

    func testSearchDetailFeedDailyResizeAndQuit() throws {
        database = Store.testLocation(file: database)
        try buildDemoStore()
        try terminal.shell(commandLine("dashboard --db '\(database)'"))
        try terminal.waitFor(text: "25 subscriptions")

        try terminal.send(literal: "/")
        try terminal.send(literal: "user-1010")
        try terminal.send(keys: "Enter")
        try terminal.waitFor(text: "filter user-1010   1 subscription")
        try terminal.send(keys: "Enter")
        var screen = try terminal.waitFor(text: "Intent   2 · billing error (payment method no longer valid)")
        XCTAssertTrue(screen.contains("Status   GRACE PERIOD  (entitled"), screen)
        XCTAssertTrue(screen.contains("DID_FAIL_TO_RENEW/GRACE_PERIOD"), screen)
        XCTAssertTrue(screen.contains("purchase"), screen)

        try terminal.send(keys: "k", "Enter")
        try terminal.waitFor(text: "\"signedPayload\": JWS(ES256")
        try terminal.send(keys: "Escape")
        try terminal.waitFor(text: "filter user-1010")
        try terminal.send(keys: "Escape")
        try terminal.waitFor(text: "25 subscriptions")

        try terminal.send(literal: ":feed")
        try terminal.send(keys: "Enter")
        screen = try terminal.waitFor(text: "TYPE/SUBTYPE")
        let before = rowCount(screen)
        XCTAssertEqual(before, 73, screen)
        let simulator = Process()
        simulator.executableURL = URL(fileURLWithPath: binary)
        simulator.arguments = ["simulate", "--db", database, "--rate", "20", "--duration", "5"]
        simulator.environment = environment
        simulator.standardOutput = FileHandle.nullDevice
        simulator.standardError = FileHandle.nullDevice
        try simulator.run()
        defer { if simulator.isRunning { simulator.terminate() } }
        screen = try terminal.waitFor("new rows from simulate", timeout: 8) { (self.rowCount($0) ?? 0) >= before! + 10 }
        XCTAssertTrue(screen.contains("stored"), screen)
        XCTAssertTrue(screen.contains("/min"), screen)
        simulator.waitUntilExit()
        XCTAssertEqual(simulator.terminationStatus, 0)

        try terminal.send(literal: ":daily")
        try terminal.send(keys: "Enter")
        screen = try terminal.waitFor(text: "METRIC")
        XCTAssertTrue(screen.contains("new paid subscriptions"), screen)
        XCTAssertTrue(screen.contains("(UTC)"), screen)

        try terminal.resize(width: 100, height: 30)
        screen = try terminal.waitFor("a 100x30 layout") { screen in
            let lines = screen.components(separatedBy: "\n")
            return lines.first?.hasSuffix("● live") == true && lines.first!.count <= 100 && screen.contains("METRIC")
        }
        try terminal.resize(width: 70, height: 20)
        try terminal.waitFor(text: "terminal too small: 70x20, need 80x24")
        try terminal.resize(width: 120, height: 40)
        try terminal.waitFor(text: "METRIC")

        try terminal.send(keys: "q")
        XCTAssertEqual(waitForExit(), "EXIT=0")
        try assertTerminalRestored()
    }

    func testCommandLineQuitAndThemeSwitch() throws {
        try buildDemoStore()
        try terminal.shell(commandLine("--db '\(database)' --theme mono"))
        try terminal.waitFor(text: "25 subscriptions")
        try terminal.send(literal: ":theme midn")
        try terminal.send(keys: "Tab", "Enter")
        try terminal.waitFor(text: "theme midnight")
        try terminal.send(literal: ":quar")
        try terminal.send(keys: "Enter")
        try terminal.waitFor(text: "4 rejected bodies")
        try terminal.send(literal: ":q")
        try terminal.send(keys: "Enter")
        XCTAssertEqual(waitForExit(), "EXIT=0")
        try assertTerminalRestored()
    }

    func testRevalidateAndOverrideFromTheDetailThenReadTheAuditLog() throws {
        try buildDemoStore()
        try terminal.shell(commandLine("dashboard --db '\(database)' --operator ana"))
        try terminal.waitFor(text: "25 subscriptions")
        try terminal.send(literal: "/")
        try terminal.send(literal: "user-1013")
        try terminal.send(keys: "Enter")
        try terminal.waitFor(text: "filter user-1013   1 subscription")
        try terminal.send(keys: "Enter")
        try terminal.waitFor(text: "Status   EXPIRED  (not entitled")

        // No API key and no stored receipt: the answer names what is missing, and the screen stayed live.
        try terminal.send(keys: "r")
        try terminal.waitFor(text: "revalidation failed: revalidation is not configured: no App Store Server API key")
        try terminal.waitFor(text: "revalidate by ana: failed")

        try terminal.send(keys: "o")
        try terminal.waitFor(text: "◂ grant ▸")
        try terminal.send(keys: "Tab")
        try terminal.send(literal: "+7d")
        try terminal.send(keys: "Tab")
        try terminal.send(literal: "e2e ticket")
        try terminal.send(keys: "Tab", "Enter")
        try terminal.waitFor(text: "Grant entitlement to 2000000400001201 until")
        try terminal.send(keys: "y")
        let screen = try terminal.waitFor(text: "Override GRANT #1 · entitled until")
        XCTAssertTrue(screen.contains("Status   EXPIRED  (Apple: not entitled"), screen)

        try terminal.send(literal: ":audit")
        try terminal.send(keys: "Enter")
        try terminal.waitFor(text: "2 operator actions, newest first")
        try terminal.waitFor(text: "override grant   2000000400001201")
        try terminal.send(keys: "q")
        XCTAssertEqual(waitForExit(), "EXIT=0")

        let listed = try subdesk(["override", "list", "--db", database])
        XCTAssertTrue(listed.output.contains("grant 2000000400001201"), listed.output)
        XCTAssertTrue(listed.output.contains("by ana"), listed.output)
        XCTAssertTrue(listed.output.contains("e2e ticket"), listed.output)
    }

    func testInterruptRestoresTheTerminal() throws {
        try buildDemoStore()
        try terminal.shell(commandLine("dashboard --db '\(database)'"))
        try terminal.waitFor(text: "25 subscriptions")
        try terminal.send(keys: "C-c")
        XCTAssertEqual(waitForExit(), "EXIT=130")
        try assertTerminalRestored()
    }

    func testDemoBuildsAndOpens() throws {
        try terminal.shell(commandLine("demo --db '\(database)' --copies 1"))
        try terminal.waitFor(text: "25 subscriptions", timeout: 15)
        try terminal.send(keys: "q")
        XCTAssertEqual(waitForExit(), "EXIT=0")
        try assertTerminalRestored()
    }

    func testBrokenThemeIsReportedBeforeTheScreenIsTaken() throws {
        try buildDemoStore()
        let themes = directory.appendingPathComponent("config/subdesk/themes")
        try FileManager.default.createDirectory(at: themes, withIntermediateDirectories: true)
        try "normal_fg = default\nnormal_fg = not-a-colour\n".write(to: themes.appendingPathComponent("broken.theme"),
                                                                   atomically: true, encoding: .utf8)
        try terminal.shell(commandLine("dashboard --db '\(database)' --theme broken"))
        XCTAssertEqual(waitForExit(), "EXIT=2")
        let screen = try terminal.capture()
        XCTAssertTrue(screen.contains("broken.theme:2"), screen)
    }

    func testWithoutATerminalItSaysSo() throws {
        try buildDemoStore()
        let result = try subdesk(["dashboard", "--db", database])
        XCTAssertEqual(result.status, 2)
        XCTAssertTrue(result.output.contains("needs a terminal"), result.output)
    }

    /// The feed's "N rows" count.
    func rowCount(_ screen: String) -> Int? {
        guard let range = screen.range(of: #"(\d+) rows"#, options: .regularExpression) else { return nil }
        return Int(screen[range].split(separator: " ")[0])
    }
}
