import XCTest
import TerminalUI
@testable import Dashboard

final class KeyTableTests: XCTestCase {
    let table = KeyTable.standard

    func testScreenKeysWinOverGeneralOnes() {
        XCTAssertEqual(table.command(for: .char("j"), on: .daily), .nextMetric)
        XCTAssertEqual(table.command(for: .char("j"), on: .subscribers), .down)
        XCTAssertEqual(table.command(for: .enter, on: .detail), .open)
        XCTAssertEqual(table.command(for: .char("q"), on: .quarantineBody), .quit)
        XCTAssertNil(table.command(for: .char("x"), on: .feed))
    }

    func testNoKeyIsBoundTwiceAtTheSameLevel() {
        for screen in ScreenID.allCases {
            var specific: [Key: String] = [:]
            for binding in table.bindings where binding.screens.contains(screen) {
                for key in binding.keys {
                    XCTAssertNil(specific[key], "\(key) bound twice on \(screen): \(specific[key] ?? "") and \(binding.description)")
                    specific[key] = binding.description
                }
            }
        }
        var general: [Key: String] = [:]
        for binding in table.bindings where binding.screens.isEmpty {
            for key in binding.keys {
                XCTAssertNil(general[key], "\(key) bound twice everywhere")
                general[key] = binding.description
            }
        }
    }

    func testOperatorActionKeysWorkOnTheDetailOnly() {
        XCTAssertEqual(table.command(for: .char("r"), on: .detail), .revalidate)
        XCTAssertEqual(table.command(for: .char("o"), on: .detail), .override)
        for screen in ScreenID.allCases where screen != .detail {
            XCTAssertNil(table.command(for: .char("r"), on: screen), "r on \(screen)")
            XCTAssertNil(table.command(for: .char("o"), on: screen), "o on \(screen)")
        }
        XCTAssertEqual(table.command(for: .char("/"), on: .audit), .filter)
        XCTAssertEqual(table.command(for: .enter, on: .audit), .open)
    }

    func testHelpAndHintsComeFromTheSameEntries() {
        let help = table.helpEntries(for: .detail)
        XCTAssertEqual(help.first?.section, "Subscriber detail")
        XCTAssertTrue(help.contains { $0.keys == "g/Home" && $0.section == "Moving" })
        XCTAssertFalse(help.contains { $0.section == "Live feed" }, "other screens' keys stay out")
        XCTAssertEqual(table.hints(for: .detail).map(\.label),
                       ["revalidate", "override", "expand", "command", "help", "quit", "back"])
        XCTAssertEqual(table.helpEntries(for: .detail).prefix(2).map(\.keys), ["r", "o"])
        XCTAssertEqual(table.helpEntries(for: .audit).first?.section, "Audit log")
        XCTAssertEqual(table.hints(for: .daily).first, Hint("j/k", "metric"))
    }

    func testHelpDescriptionsFitTwoColumnsAt80x24() {
        // The help box is 76 columns inside; two columns need keys + 2 + description <= 36.
        let widest = table.bindings.map { TextWidth.width(of: $0.keysText) }.max() ?? 0
        for binding in table.bindings {
            XCTAssertLessThanOrEqual(widest + 2 + TextWidth.width(of: binding.description), 36, binding.description)
        }
    }

    /// The README's key table is `subdesk keys` pasted; it must be pasted again when keys change.
    func testTheReadmeKeyTableIsTheKeyTable() throws {
        let readme = try String(contentsOf: DashboardFixture.repositoryRoot.appendingPathComponent("README.md"), encoding: .utf8)
        XCTAssertTrue(readme.contains(table.markdown() + "\n"), "README.md's key table differs; paste `subdesk keys`:\n\(table.markdown())")
    }

    func testConsentKeysWorkOnTheConsentScreen() {
        XCTAssertEqual(table.command(for: .char("h"), on: .consent), .markConsentHandled)
        XCTAssertEqual(table.command(for: .char("a"), on: .consent), .toggleHandled)
        XCTAssertEqual(table.command(for: .enter, on: .consent), .open)
        XCTAssertEqual(table.command(for: .char("h"), on: .daily), .earlierDays, "h keeps its meaning elsewhere")
        XCTAssertEqual(table.hints(for: .consent).prefix(3).map(\.label), ["handled", "open", "all"])
        XCTAssertEqual(table.helpEntries(for: .consent).first?.section, "Consent withdrawals")
    }

    func testMarkdownListsEveryBinding() {
        let lines = table.markdown().components(separatedBy: "\n")
        XCTAssertEqual(lines.count, table.bindings.count + 2)
        XCTAssertTrue(lines.contains("| `0-5` | status tab (0 all) | Subscribers |"), lines.joined(separator: "\n"))
        XCTAssertTrue(lines.contains("| `q` | quit | everywhere |"))
    }
}
