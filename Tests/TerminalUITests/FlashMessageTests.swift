import XCTest
@testable import TerminalUI

final class FlashMessageTests: XCTestCase {
    func testErrorFillsItsRow() {
        let buffer = render(width: 30, height: 2) {
            FlashMessage.error("revalidation failed: 21003").render(in: Rect(x: 0, y: 1, width: 30, height: 1), buffer: &$0)
        }
        assertLines(buffer, ["", "revalidation failed: 21003"])
        XCTAssertEqual(roleRuns(buffer, row: 1), "flash_error×30")
    }

    func testInfoIsTruncatedAndSanitized() {
        let buffer = render(width: 12, height: 1) {
            FlashMessage.info("saved\u{07} override for 2000000412345678").render(in: $0.bounds, buffer: &$0)
        }
        assertLines(buffer, ["saved\\x07 o…"])
        XCTAssertEqual(buffer[0, 0].role, .flashInfo)
    }
}
