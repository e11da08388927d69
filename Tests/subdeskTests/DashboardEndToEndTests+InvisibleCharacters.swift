import Foundation
import XCTest
@testable import SubscriptionCore
@testable import SubdeskScenarios

/// Zero-width and bidi format characters and wide CJK text in every string a payload or a
/// sender controls, drawn by the real dashboard in tmux: the invisible ones are shown as
/// escapes, and no column or border moves.
extension DashboardEndToEndTests {
    static let zeroWidth = ["\u{200B}", "\u{200C}", "\u{200D}", "\u{200E}", "\u{200F}", "\u{061C}", "\u{2060}", "\u{FEFF}"]

    /// Display width as a terminal counts it: East Asian wide characters take two cells.
    func cells(_ line: String) -> Int {
        line.unicodeScalars.reduce(0) { sum, s in
            let v = s.value
            let wide = (0x1100...0x115F).contains(v) || (0x2E80...0xA4CF).contains(v) || (0xAC00...0xD7A3).contains(v)
                || (0xF900...0xFAFF).contains(v) || (0xFE30...0xFE4F).contains(v) || (0xFF00...0xFF60).contains(v)
                || (0xFFE0...0xFFE6).contains(v) || (0x20000...0x3FFFD).contains(v)
            return sum + (wide ? 2 : 1)
        }
    }

    func buildHostileStore() throws {
        XCTAssertEqual(try subdesk(["init", "--db", database]).status, 0)
        let sample = SampleData(directory: sampleData)
        let signer = try sample.signer()
        let now = DateText.nowMillis()
        let zw = Self.zeroWidth.joined()
        let t: [String: Any] = ["transactionId": "9200", "originalTransactionId": "9200", "productId": "app.月額プラン\u{200D}premium\(zw)",
                                "bundleId": ScenarioBuilder.demoBundleId, "purchaseDate": now - 1000, "expiresDate": now + 86_400_000,
                                "signedDate": now, "environment": "Production", "type": "Auto-Renewable Subscription",
                                "appAccountToken": "tok\u{200B}en-漢字\(zw)", "offerIdentifier": "offer\u{FEFF}x", "storefront": "JP\u{200D}N"]
        let payload: [String: Any] = ["notificationType": "SUBSCRIBED", "subtype": "INITIAL_BUY", "notificationUUID": "wide-1",
                                      "signedDate": now, "data": ["bundleId": ScenarioBuilder.demoBundleId, "environment": "Production",
                                                                  "appAppleId": ScenarioBuilder.demoAppAppleId,
                                                                  "signedTransactionInfo": try signer.sign(payload: try JSONSerialization.data(withJSONObject: t))]]
        let body = try JSONSerialization.data(withJSONObject: ["signedPayload": try signer.sign(payload: try JSONSerialization.data(withJSONObject: payload))])
        let junk = Data("{\"notification_type\":\"漢字\u{200D}\u{202E}junk\(zw)\"}".utf8)
        let input = directory.appendingPathComponent("bodies.ndjson")
        try (body + Data("\n".utf8) + junk + Data("\n".utf8)).write(to: input)
        let root = sampleData + "/test-ca/root.der"
        let ingested = try subdesk(["ingest", "--db", database, "--root-ca", root, "--bundle-id", ScenarioBuilder.demoBundleId,
                                    "--app-apple-id", String(ScenarioBuilder.demoAppAppleId), input.path])
        XCTAssertTrue(ingested.output.contains("ingested 1, duplicates 0, rejected 1"), ingested.output)
        XCTAssertEqual(try subdesk(["link", "user-10\u{200B}01", "9200", "--db", database]).status, 0)
    }

    func assertNoRawInvisibles(_ screen: String, file: StaticString = #filePath, line: UInt = #line) {
        for z in Self.zeroWidth + ["\u{202E}"] {
            XCTAssertFalse(screen.contains(z), "raw U+\(String(z.unicodeScalars.first!.value, radix: 16)) on screen:\n\(screen)", file: file, line: line)
        }
    }

    func testInvisibleAndWideCharactersNeitherHideNorShiftAnything() throws {
        try buildHostileStore()
        try terminal.shell(commandLine("dashboard --db '\(database)'"))
        var screen = try terminal.waitFor(text: "1 subscription")
        assertNoRawInvisibles(screen)
        XCTAssertTrue(screen.contains("user-10\\u{200B}01"), screen)
        // The row's columns line up with the header's despite the wide product id.
        let lines = screen.components(separatedBy: "\n")
        let header = try XCTUnwrap(lines.first { $0.contains("ORIGINAL TX") })
        let row = try XCTUnwrap(lines.first { $0.contains("9200") })
        let statusColumn = cells(String(header[..<header.range(of: "STATUS")!.lowerBound]))
        XCTAssertEqual(cells(String(row[..<row.range(of: "ACTIVE")!.lowerBound])), statusColumn, "\(header)\n\(row)")

        try terminal.send(keys: "Enter")
        screen = try terminal.waitFor(text: "Timeline")
        assertNoRawInvisibles(screen)
        XCTAssertTrue(screen.contains("app.月額プラン\\u{200D}premium"), screen)
        // Every line of the detail box ends at the right edge: no border pulled in or pushed out.
        let boxed = screen.components(separatedBy: "\n").filter { $0.hasPrefix("│") || $0.hasPrefix("┌") || $0.hasPrefix("├") || $0.hasPrefix("└") }
        XCTAssertGreaterThan(boxed.count, 5, screen)
        for l in boxed {
            XCTAssertEqual(cells(l), 120, "a box line is \(cells(l)) cells wide:\n\(l)")
            XCTAssertTrue(["│", "┐", "┤", "┘"].contains(String(l.last!)), "border missing at the end of:\n\(l)")
        }

        try terminal.send(keys: "Escape")
        try terminal.send(literal: ":quarantine")
        try terminal.send(keys: "Enter")
        screen = try terminal.waitFor(text: "junk")
        assertNoRawInvisibles(screen)
        XCTAssertTrue(screen.contains("\\u{200D}"), screen)
        for l in screen.components(separatedBy: "\n") { XCTAssertLessThanOrEqual(cells(l), 120, l) }

        try terminal.send(literal: ":feed")
        try terminal.send(keys: "Enter")
        screen = try terminal.waitFor(text: "TYPE/SUBTYPE")
        assertNoRawInvisibles(screen)
        for l in screen.components(separatedBy: "\n") { XCTAssertLessThanOrEqual(cells(l), 120, l) }
        try terminal.send(keys: "q")
        XCTAssertEqual(waitForExit(), "EXIT=0")
    }
}
