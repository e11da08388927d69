import XCTest
@testable import TerminalUI

final class HintBarTests: XCTestCase {
    let bar = HintBar(hints: [
        Hint("r", "revalidate"), Hint("o", "override"), Hint(Key.enter, "expand"),
        Hint(Key.escape, "back"), Hint("?", "help"),
    ])

    func testAllPairsWhenThereIsRoom() {
        let buffer = render(width: 60, height: 1) { bar.render(in: $0.bounds, buffer: &$0) }
        assertLines(buffer, ["r revalidate  o override  Enter expand  Esc back  ? help"])
        XCTAssertEqual(roleRuns(buffer, row: 0).split(separator: " ").prefix(4).joined(separator: " "),
                       "hint_key×1 hint_text×13 hint_key×1 hint_text×11")
    }

    func testExactFitNeedsNoEllipsis() {
        let buffer = render(width: 56, height: 1) { bar.render(in: $0.bounds, buffer: &$0) }
        assertLines(buffer, ["r revalidate  o override  Enter expand  Esc back  ? help"])
    }

    func testNarrowBarDropsWholePairsAndMarksTheCut() {
        let buffer = render(width: 30, height: 1) { bar.render(in: $0.bounds, buffer: &$0) }
        assertLines(buffer, ["r revalidate  o override  …"])
        let tiny = render(width: 10, height: 1) { bar.render(in: $0.bounds, buffer: &$0) }
        assertLines(tiny, ["…"])
    }

    func testHintsAreSanitized() {
        let buffer = render(width: 20, height: 1) {
            HintBar(hints: [Hint("\u{1B}", "x\ny")]).render(in: $0.bounds, buffer: &$0)
        }
        assertLines(buffer, ["\\e x\\ny"])
    }
}

final class KeyTests: XCTestCase {
    func testDescriptionsForHintsAndHelp() {
        XCTAssertEqual(Key.up.description, "↑")
        XCTAssertEqual(Key.down.description, "↓")
        XCTAssertEqual(Key.pageDown.description, "PgDn")
        XCTAssertEqual(Key.pageUp.description, "PgUp")
        XCTAssertEqual(Key.enter.description, "Enter")
        XCTAssertEqual(Key.escape.description, "Esc")
        XCTAssertEqual(Key.ctrl("c").description, "^C")
        XCTAssertEqual(Key.function(5).description, "F5")
        XCTAssertEqual(Key.backTab.description, "S-Tab")
        XCTAssertEqual(Key.char("r").description, "r")
        XCTAssertEqual(Key.char(" ").description, "Space")
        XCTAssertEqual(Key.char("\u{1B}").description, "\\e")
    }

    func testNamesParseBack() {
        let keys: [Key] = [.char("r"), .char(" "), .up, .down, .left, .right, .pageUp, .pageDown, .home, .end,
                           .enter, .escape, .backspace, .tab, .backTab, .delete, .function(12), .ctrl("c")]
        for key in keys {
            XCTAssertEqual(Key(name: key.description), key, key.description)
        }
        XCTAssertEqual(Key(name: "ctrl-d"), .ctrl("d"))
        XCTAssertEqual(Key(name: "C-u"), .ctrl("u"))
        XCTAssertEqual(Key(name: "return"), .enter)
        XCTAssertEqual(Key(name: "ESC"), .escape)
        XCTAssertNil(Key(name: "hyper-x"))
        XCTAssertNil(Key(name: "F99"))
    }
}
