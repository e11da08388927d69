import XCTest
@testable import Dashboard
final class PlaceholderTests: XCTestCase { func testModuleLoads() { XCTAssertNotNil(DashboardModule.self) } }
