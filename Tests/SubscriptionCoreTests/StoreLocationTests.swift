import XCTest
@testable import SubscriptionCore

/// What the command line asks of a store's place, answered once for every engine.
final class StoreLocationTests: XCTestCase {
    func testEachKindOfPlaceIsToldApart() {
        XCTAssertEqual(StoreLocation("data/store.db").kind, .file)
        XCTAssertTrue(StoreLocation("data/store.db").isFile)
        XCTAssertEqual(StoreLocation(":memory:").kind, .memory)
        XCTAssertFalse(StoreLocation(":memory:").isFile, "nothing on disk beside an in-memory store")
        for uri in ["postgres://ana@/subdesk", "postgresql://ana@db.example/subdesk?schema=eu"] {
            XCTAssertTrue(StoreLocation(uri).isPostgres, uri)
            XCTAssertFalse(StoreLocation(uri).isFile, uri)
        }
    }

    func testItIsShownWithoutItsSecretsAndNamedShortly() {
        XCTAssertEqual(StoreLocation("data/store.db").shortName, "store.db")
        XCTAssertEqual(StoreLocation("postgresql://ana@db.example/subdesk?schema=eu").shortName, "pg:subdesk.eu@db.example")
        XCTAssertFalse(StoreLocation("postgres://ana:hunter2@db.example/subdesk").redacted.contains("hunter2"))
        XCTAssertEqual(StoreLocation("data/store.db").redacted, "data/store.db")
    }

    func testAKeywordStringIsRefusedWithoutRepeatingIt() throws {
        let problem = try XCTUnwrap(StoreLocation("host=db password=hunter2 dbname=subdesk").problem)
        XCTAssertTrue(problem.contains("libpq keyword string"), problem)
        XCTAssertFalse(problem.contains("hunter2"), problem)
        XCTAssertNil(StoreLocation("data/store.db").problem)
        XCTAssertNil(StoreLocation("postgres://ana@/subdesk").problem)
    }
}
