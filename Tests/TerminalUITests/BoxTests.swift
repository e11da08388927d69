import XCTest
@testable import TerminalUI

final class BoxTests: XCTestCase {
    func testFrameWithTitleInTheTopBorder() {
        var inner = Rect.zero
        let buffer = render(width: 20, height: 4) { inner = Box(title: "Sub 漢字").render(in: $0.bounds, buffer: &$0) }
        assertLines(buffer, [
            "┌ Sub 漢字 ────────┐",
            "│                  │",
            "│                  │",
            "└──────────────────┘",
        ])
        XCTAssertEqual(inner, Rect(x: 1, y: 1, width: 18, height: 2))
        XCTAssertEqual(roleRuns(buffer, row: 0), "border×2 title×8 border×10")
    }

    func testLongTitleIsTruncatedInsideTheCorners() {
        let buffer = render(width: 10, height: 2) { Box(title: "Subscription").render(in: $0.bounds, buffer: &$0) }
        assertLines(buffer, ["┌ Subsc… ┐", "└────────┘"])
    }

    func testWideTitleNeverOverrunsTheCorner() {
        let buffer = render(width: 9, height: 2) { Box(title: "漢字漢字").render(in: $0.bounds, buffer: &$0) }
        assertLines(buffer, ["┌ 漢字… ┐", "└───────┘"])
    }

    func testTitleIsSanitized() {
        let buffer = render(width: 14, height: 2) { Box(title: "a\u{1B}[2Jb").render(in: $0.bounds, buffer: &$0) }
        assertLines(buffer, ["┌ a\\e[2Jb ───┐", "└────────────┘"])
    }

    func testDividerSplitsTheFrame() {
        let buffer = render(width: 20, height: 5) {
            let area = Rect(x: 0, y: 0, width: 20, height: 5)
            Box(title: "Subscription").render(in: area, buffer: &$0)
            Box.divider(title: "Timeline", y: 2, in: area, buffer: &$0)
        }
        assertLines(buffer, [
            "┌ Subscription ────┐",
            "│                  │",
            "├ Timeline ────────┤",
            "│                  │",
            "└──────────────────┘",
        ])
    }

    func testTooSmallAreaDrawsNothing() {
        let buffer = render(width: 3, height: 3) {
            let inner = Box(title: "x").render(in: Rect(x: 0, y: 0, width: 1, height: 3), buffer: &$0)
            XCTAssertTrue(inner.isEmpty)
        }
        assertLines(buffer, [])
    }
}
