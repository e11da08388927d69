import XCTest
@testable import TerminalUI

final class HelpViewTests: XCTestCase {
    func testSectionsFlowIntoColumns() {
        let help = HelpView([
            (keys: "↑/k", description: "up", section: "Navigation"),
            (keys: "↓/j", description: "down", section: "Navigation"),
            (keys: ":", description: "command", section: "General"),
            (keys: "Enter", description: "open", section: "Navigation"),
            (keys: "Esc", description: "back", section: "Navigation"),
            (keys: "/", description: "filter", section: "General"),
            (keys: "?", description: "help", section: "General"),
            (keys: "r", description: "revalidate", section: "Subscriber"),
        ])
        let buffer = render(width: 40, height: 8) { help.render(in: $0.bounds, buffer: &$0) }
        assertLines(buffer, [
            "Navigation           General",
            "↑/k    up            :      command",
            "↓/j    down          /      filter",
            "Enter  open          ?      help",
            "Esc    back",
            "                     Subscriber",
            "                     r      revalidate",
        ])
        XCTAssertEqual(roleRuns(buffer, row: 0).components(separatedBy: " ").first, "header×10")
        XCTAssertEqual(buffer[0, 1].role, .hintKey)
        XCTAssertEqual(buffer[7, 1].role, .hintText)
    }

    func testOneNarrowColumnSplitsATallSection() {
        let help = HelpView((1...5).map { (keys: "F\($0)", description: "action \($0)", section: "Keys") })
        let buffer = render(width: 12, height: 4) { help.render(in: $0.bounds, buffer: &$0) }
        assertLines(buffer, ["Keys", "F1  action 1", "F2  action 2", "F3  action 3"])
    }
}
