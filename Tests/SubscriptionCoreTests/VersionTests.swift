import XCTest
@testable import SubscriptionCore
final class VersionTests: XCTestCase { func testVersion() { XCTAssertFalse(SubdeskVersion.string.isEmpty) } }
