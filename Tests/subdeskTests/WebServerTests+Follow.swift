import Foundation
import XCTest
import SubscriptionCore

/// The live feed fed through the real webhook: a dashboard in a terminal on the receivers'
/// store follows a burst of 60 POSTed to lighttpd, holds once moved away, and `:feed`
/// opens at the newest again.
extension WebServerTests {
    func testTheFeedFollowsABurstThroughLighttpd() async throws {
        let lighttpd = try Self.lighttpdExecutable()
        guard let tmux = TerminalSession.findTmux() else { return XCTFail("tmux is not installed") }
        let port = try startServer(lighttpd)
        let url = try XCTUnwrap(URL(string: "http://127.0.0.1:\(port)/appstore/notifications"))
        let bodies = try Self.signedBodies(count: 120).map { Request(body: $0.body, kind: .good, uuid: $0.uuid) }

        let terminal = TerminalSession(tmux: tmux)
        try terminal.start(width: 120, height: 40)
        defer { terminal.stop() }
        try terminal.shell("'\(CLITests.binary)' --db '\(database)'")
        try terminal.send(literal: ":feed")
        try terminal.send(keys: "Enter")
        try terminal.waitFor(text: "TYPE/SUBTYPE")

        func burst(_ part: ArraySlice<Request>) async throws {
            // One at a time, so the last one sent is the newest the feed shows.
            let answers = await Self.post(Array(part), to: url, concurrency: 1, deadline: Date().addingTimeInterval(Self.burstTimeLimit))
            XCTAssertTrue(answers.allSatisfy { $0?.status == 200 }, "\(answers.map { $0?.status ?? 0 })")
        }
        /// What the feed's row for `body` shows of it: its original transaction id, or for a
        /// body that names none (a withdrawal), its type.
        func shown(_ body: Data) throws -> String {
            func claims(_ jws: String) throws -> [String: Any] {
                let payload = try XCTUnwrap(Base64URL.decode(try XCTUnwrap(jws.split(separator: ".").dropFirst().first)))
                return try XCTUnwrap(try JSONSerialization.jsonObject(with: payload) as? [String: Any])
            }
            let outer = try XCTUnwrap(try JSONSerialization.jsonObject(with: body) as? [String: Any])
            let notification = try claims(try XCTUnwrap(outer["signedPayload"] as? String))
            if let data = notification["data"] as? [String: Any], let signed = data["signedTransactionInfo"] as? String,
               let otid = try claims(signed)["originalTransactionId"] as? String {
                return otid
            }
            return try XCTUnwrap(notification["notificationType"] as? String)
        }
        func firstRow(_ screen: String) -> String {
            let lines = screen.components(separatedBy: "\n")
            guard let titles = lines.firstIndex(where: { $0.contains("TYPE/SUBTYPE") }), titles + 1 < lines.count else { return "" }
            return lines[titles + 1]
        }

        try await burst(bodies[0..<60])
        var top = try shown(bodies[59].body)
        var screen = try terminal.waitFor("the burst's newest at the top", timeout: 15) { firstRow($0).contains(top) && $0.contains("60 rows") }
        XCTAssertTrue(screen.contains("following"), screen)

        try terminal.send(keys: "j", "j")
        let held = firstRow(try terminal.waitFor(text: "held"))
        try await burst(bodies[60..<120])
        screen = try terminal.waitFor(text: "held · 60 new ↑", timeout: 15)
        XCTAssertEqual(firstRow(screen), held, "the view held still:\n\(screen)")

        top = try shown(bodies[119].body)
        try terminal.send(literal: ":health")
        try terminal.send(keys: "Enter")
        try terminal.waitFor(text: "SIGNAL")
        try terminal.send(literal: ":feed")
        try terminal.send(keys: "Enter")
        screen = try terminal.waitFor("the newest at the top after :feed") { firstRow($0).contains(top) }
        XCTAssertTrue(screen.contains("following"), screen)
        try terminal.send(keys: "q")
    }
}
