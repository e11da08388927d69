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
