import Foundation
import XCTest

/// `subdesk --app NAME dashboard` on a store of two apps: the desk opens scoped to that
/// app, and the live feed shows its notifications only.
extension DashboardEndToEndTests {
    func testAppOpensTheDeskScopedAndTheFeedShowsThatAppOnly() throws {
        try buildDemoStore()
        let config = directory.appendingPathComponent("config/subdesk")
        try FileManager.default.createDirectory(at: config, withIntermediateDirectories: true)
        try """
        root_ca = \(Self.repositoryRoot.path)/sample-data/test-ca/root.der

        [app demo]
        bundle_id = com.example.subdesk.demo
        app_apple_id = 1234567890
        environment = Production

        [app other]
        bundle_id = com.example.other
        app_apple_id = 2234567890
        environment = Production

        """.write(to: config.appendingPathComponent("config"), atomically: true, encoding: .utf8)
        let body = directory.appendingPathComponent("other.json")
        try SeveralAppsCLITests.body("com.example.other", appleId: 2234567890, otid: "7200000000000001").write(to: body)
        let ingested = try subdesk(["ingest", "--db", database, body.path])
        XCTAssertEqual(ingested.status, 0, ingested.output)

        try terminal.shell(commandLine("--app other dashboard --db '\(database)'"))
        try terminal.waitFor(text: "app: other")
        try terminal.send(literal: ":feed")
        try terminal.send(keys: "Enter")
        // The feed's own header, not the subscriber list behind it, which shows the same id.
        let screen = try terminal.waitFor("the feed with the other app's notification") {
            $0.contains("TYPE/SUBTYPE") && $0.contains("7200000000000001")
        }
        let header = try XCTUnwrap(screen.components(separatedBy: "\n").first { $0.contains("TYPE/SUBTYPE") }, screen)
        XCTAssertFalse(header.trimmingCharacters(in: .whitespaces).hasPrefix("APP"), "scoped to one app: no APP column\n" + header)
        XCTAssertTrue(screen.contains("app: other"), screen)
        XCTAssertFalse(screen.contains("20000004000"), "no row of the demo app on the scoped feed: \(screen)")
        try terminal.send(literal: ":app all")
        try terminal.send(keys: "Enter")
        let every = try terminal.waitFor(text: "20000004000")
        XCTAssertTrue(every.contains("7200000000000001"), every)
        let everyHeader = try XCTUnwrap(every.components(separatedBy: "\n").first { $0.contains("TYPE/SUBTYPE") }, every)
        XCTAssertTrue(everyHeader.trimmingCharacters(in: .whitespaces).hasPrefix("APP"), "every app: each row's app\n" + everyHeader)
        try terminal.send(keys: "q")
        XCTAssertEqual(waitForExit(), "EXIT=0")
    }
}
