import XCTest
@testable import TerminalUI

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
