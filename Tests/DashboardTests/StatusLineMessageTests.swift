import Foundation
import XCTest
import SubscriptionCore
import TerminalUI
@testable import Dashboard

/// Every message the dashboard can put on its bottom line, as the sources write them (an
/// interpolation stands for a long id), rendered at 80 columns: shown whole, or cut at a
/// word with one ellipsis and a marker saying where it is whole; `:messages` keeps it whole.
final class StatusLineMessageTests: XCTestCase {
    /// The string literals passed to `flash(` and to the session's messages (`.failed(`,
    /// `.notice(`, `message: `) in the dashboard's sources.
    static func messages() throws -> [String] {
        let root = DashboardFixture.repositoryRoot.appendingPathComponent("Sources/Dashboard")
        var found: [String] = []
        let files = FileManager.default.enumerator(atPath: root.path)?.compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") } ?? []
        for file in files {
            let text = Array(try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8))
            for marker in ["flash(\"", ".failed(\"", ".notice(\"", "message: \"", "flash(SafeText.sanitize(\""] {
                let m = Array(marker)
                var i = 0
                while i + m.count <= text.count {
                    if Array(text[i..<(i + m.count)]) == m, let literal = literal(text, from: i + m.count) {
                        found.append(literal)
                    }
                    i += 1
                }
            }
        }
        return Array(Set(found)).sorted()
    }

    /// The literal starting after its opening quote at `start`, each interpolation replaced
    /// by an original transaction id.
    static func literal(_ text: [Character], from start: Int) -> String? {
        var out = ""
        var i = start
        while i < text.count {
            let c = text[i]
            if c == "\"" { return out }
            if c == "\\" && i + 1 < text.count {
                let next = text[i + 1]
                if next == "(" {
                    // Skip to the matching parenthesis, over any strings inside it.
                    var depth = 1
                    i += 2
                    var inString = false
                    while i < text.count && depth > 0 {
                        let d = text[i]
                        if inString {
                            if d == "\\" { i += 1 } else if d == "\"" { inString = false }
                        } else if d == "\"" { inString = true } else if d == "(" { depth += 1 } else if d == ")" { depth -= 1 }
                        i += 1
                    }
                    out += "2000000400000901"
                    continue
                }
                out.append(next == "n" ? " " : next)
                i += 2
                continue
            }
            if c == "\n" { return nil }
            out.append(c)
            i += 1
        }
        return nil
    }

    func testEveryMessageIsWholeOrCutAtAWordWithOneEllipsisAndAMarker() throws {
        let messages = try Self.messages()
        XCTAssertGreaterThan(messages.count, 60, "the sources' messages were found")
        var cut = 0
        for message in messages where !message.isEmpty {
            for error in [false, true] {
                var state = DashboardFixture.state(width: 80, height: 24)
                DashboardReducer.flash(message, error: error, &state)
                let line = DashboardRenderer.render(state).lines().last ?? ""
                XCTAssertLessThanOrEqual(TextWidth.width(of: line), 80, line)
                XCTAssertFalse(line.contains("……") || line.contains("… …"), "two ellipses in a row: \(line)")
                let added = line.filter { $0 == "…" }.count - message.filter { $0 == "…" }.count
                let shown = message.replacingOccurrences(of: " +$", with: "", options: .regularExpression)
                if line.contains(shown) {
                    XCTAssertLessThanOrEqual(added, 0, line)
                } else {
                    cut += 1
                    XCTAssertTrue(line.contains(":messages"), "cut without saying where it is whole: \(line)")
                    XCTAssertLessThanOrEqual(line.filter { $0 == "…" }.count, 1 + message.filter { $0 == "…" }.count, line)
                    if error { XCTAssertTrue(line.contains("Esc"), "an error says how it goes: \(line)") }
                }
                XCTAssertEqual(state.messages.last?.text, message, ":messages keeps it whole")
            }
        }
        XCTAssertGreaterThan(cut, 0, "some messages are longer than the line")
    }

    /// A message whose last clause says what to do keeps that clause when it is cut.
    func testACutMessageKeepsItsLastClause() {
        var state = DashboardFixture.state(width: 80, height: 24)
        DashboardReducer.flash("answering a refund request failed at Apple after three attempts, each of them timing out: "
                               + "try again later", error: true, &state)
        let line = DashboardRenderer.render(state).lines().last ?? ""
        XCTAssertTrue(line.contains("try again later"), line)
        XCTAssertTrue(line.hasPrefix(" answering a"), line)
    }

    /// An action refused for want of the API key says, at 80 columns, which keys to set and
    /// that they go in the config file; `:messages` keeps the whole (the file, the flags).
    func testTheMissingKeyMessageKeepsTheKeysAndWhereTheyGoAt80Columns() {
        for sections in [false, true] {
            var state = DashboardFixture.state(width: 80, height: 24)
            state.withoutServerAPIKey = true
            state.serverAPIKeyPlace = ServerAPIKeyPlace(configFile: "/etc/subdesk/config", sections: sections)
            XCTAssertTrue(DashboardReducer.refusedWithoutServerAPI(ServerAPIAction.refundAnswer, &state))
            let line = DashboardRenderer.render(state).lines().last ?? ""
            XCTAssertLessThanOrEqual(TextWidth.width(of: line), 80, line)
            XCTAssertTrue(line.contains(sections ? "needs a [key] section in the config file and key = NAME in each [app]"
                                                 : "needs the API key: api_key_file, api_key_id, api_issuer_id in the config file"), line)
            XCTAssertTrue(state.messages.last?.text.contains("the config file /etc/subdesk/config") == true, state.messages.last?.text ?? "")
        }
    }
}
