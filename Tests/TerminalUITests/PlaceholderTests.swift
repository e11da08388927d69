import XCTest
@testable import TerminalUI
final class PlaceholderTests: XCTestCase { func testModuleLoads() { XCTAssertNotNil(TerminalUIModule.self) } }
