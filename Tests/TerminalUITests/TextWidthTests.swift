import XCTest
@testable import TerminalUI

final class TextWidthTests: XCTestCase {
    func testPlaceholder() {}
}
