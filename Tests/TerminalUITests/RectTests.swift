import XCTest
@testable import TerminalUI

final class RectTests: XCTestCase {
    func testInsetAndEdges() {
        let rect = Rect(x: 2, y: 1, width: 10, height: 5)
        XCTAssertEqual(rect.maxX, 12)
        XCTAssertEqual(rect.maxY, 6)
        XCTAssertEqual(rect.inset(by: 1), Rect(x: 3, y: 2, width: 8, height: 3))
        XCTAssertEqual(rect.inset(horizontal: 2, vertical: 0), Rect(x: 4, y: 1, width: 6, height: 5))
        XCTAssertTrue(rect.inset(by: 3).isEmpty, "too small an area becomes empty, not negative")
        XCTAssertEqual(rect.inset(by: 3).height, 0)
    }

    func testSplits() {
        let rect = Rect(x: 0, y: 0, width: 30, height: 10)
        XCTAssertEqual(rect.splitTop(1).top, Rect(x: 0, y: 0, width: 30, height: 1))
        XCTAssertEqual(rect.splitTop(1).rest, Rect(x: 0, y: 1, width: 30, height: 9))
        XCTAssertEqual(rect.splitBottom(2).bottom, Rect(x: 0, y: 8, width: 30, height: 2))
        XCTAssertEqual(rect.columns([.fixed(8), .flex(1), .fixed(4)], spacing: 2).map(\.x), [0, 10, 26])
        XCTAssertEqual(rect.columns([.fixed(8), .flex(1), .fixed(4)], spacing: 2).map(\.width), [8, 14, 4])
        XCTAssertEqual(rect.rows([.fixed(1), .flex(1), .fixed(1)]).map(\.height), [1, 8, 1])
        XCTAssertEqual(rect.rows([.fixed(1), .flex(1), .fixed(1)]).map(\.y), [0, 1, 9])
    }

    func testFlexWeightsShareTheRestAndFixedColumnsShrinkLast() {
        XCTAssertEqual(Length.resolve([.flex(1), .flex(2)], in: 10).map(\.size), [3, 7])
        let short = Length.resolve([.fixed(10), .fixed(10), .flex(1)], in: 15, spacing: 1)
        XCTAssertEqual(short.map(\.size), [10, 4, 0])
    }

    func testCenteredAndIntersection() {
        let screen = Rect(x: 0, y: 0, width: 80, height: 24)
        XCTAssertEqual(screen.centered(width: 40, height: 10), Rect(x: 20, y: 7, width: 40, height: 10))
        XCTAssertEqual(screen.centered(width: 100, height: 30), screen)
        XCTAssertEqual(screen.intersection(Rect(x: 70, y: 20, width: 20, height: 20)), Rect(x: 70, y: 20, width: 10, height: 4))
        XCTAssertTrue(screen.intersection(Rect(x: 90, y: 0, width: 5, height: 5)).isEmpty)
    }
}
