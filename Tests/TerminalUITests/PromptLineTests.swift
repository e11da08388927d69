import XCTest
@testable import TerminalUI

final class PromptLineTests: XCTestCase {
    func testCommandPromptWithCursorAtEndAndCompletions() {
        var cursorX: Int?
        let buffer = render(width: 40, height: 1) {
            cursorX = PromptLine(symbol: ":", text: "sub", completions: ["subscribers", "subscriptions"], selectedCompletion: 0)
                .render(in: $0.bounds, buffer: &$0)
        }
        assertLines(buffer, [":sub   subscribers  subscriptions"])
        XCTAssertEqual(cursorX, 4)
        XCTAssertEqual(buffer[0, 0].role, .prompt)
        XCTAssertEqual(buffer[4, 0].role, .selection)
        XCTAssertEqual(buffer[7, 0].role, .accent)
        XCTAssertEqual(buffer[20, 0].role, .dim)
    }

    func testCursorInTheMiddleHighlightsThatCharacter() {
        var cursorX: Int?
        let buffer = render(width: 10, height: 1) {
            cursorX = PromptLine(symbol: "/", text: "abc", cursor: 1).render(in: $0.bounds, buffer: &$0)
        }
        assertLines(buffer, ["/abc"])
        XCTAssertEqual(cursorX, 2)
        XCTAssertEqual(roleRuns(buffer, row: 0), "prompt×1 normal×1 selection×1 normal×7")
    }

    func testLongTextScrollsToKeepTheCursorVisible() {
        var cursorX: Int?
        let buffer = render(width: 6, height: 1) {
            cursorX = PromptLine(symbol: "/", text: "abcdefghij").render(in: $0.bounds, buffer: &$0)
        }
        assertLines(buffer, ["/ghij"])
        XCTAssertEqual(cursorX, 5)
        XCTAssertEqual(buffer[5, 0].role, .selection)
    }

    func testCompletionsThatDoNotFitAreLeftOut() {
        let buffer = render(width: 18, height: 1) {
            PromptLine(symbol: ":", text: "s", completions: ["subscribers", "stats"]).render(in: $0.bounds, buffer: &$0)
        }
        assertLines(buffer, [":s   subscribers"])
    }

    func testWideAndControlCharactersInTheText() {
        var cursorX: Int?
        let wide = render(width: 10, height: 1) {
            cursorX = PromptLine(symbol: ":", text: "漢字", cursor: 1).render(in: $0.bounds, buffer: &$0)
        }
        assertLines(wide, [":漢字"])
        XCTAssertEqual(cursorX, 3)
        XCTAssertEqual(wide[3, 0].role, .selection)

        let control = render(width: 10, height: 1) {
            cursorX = PromptLine(symbol: ":", text: "a\u{1B}b").render(in: $0.bounds, buffer: &$0)
        }
        assertLines(control, [":a\\eb"])
        XCTAssertEqual(cursorX, 5)
    }
}
