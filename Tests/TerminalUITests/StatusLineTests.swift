import XCTest
@testable import TerminalUI

final class StatusLineTests: XCTestCase {
    let line = StatusLine(path: ["subdesk", "subscribers", "2000000412345678"],
                          items: [StatusItem("store: prod.db"), StatusItem("UTC"), StatusItem("● live", role: .success)])

    func testBreadcrumbLeftAndStatusRight() {
        let buffer = render(width: 80, height: 1) { line.render(in: $0.bounds, buffer: &$0) }
        assertLines(buffer, ["subdesk ▸ subscribers ▸ 2000000412345678" + String(repeating: " ", count: 13) + "store: prod.db  UTC  ● live"])
        XCTAssertEqual(buffer[0, 0].role, .breadcrumb)
        XCTAssertEqual(buffer[79, 0].role, .success)
    }

    func testNarrowLineKeepsTheEndOfTheBreadcrumb() {
        let buffer = render(width: 50, height: 1) { line.render(in: $0.bounds, buffer: &$0) }
        assertLines(buffer, ["… ▸ 2000000412345678   store: prod.db  UTC  ● live"])
        // Status facts that cannot fit are left out; then the last segment is cut.
        let tiny = render(width: 12, height: 1) { line.render(in: $0.bounds, buffer: &$0) }
        assertLines(tiny, ["20000004123…"])
    }
}
