import Foundation
import XCTest
@testable import SubscriptionCore
import SubdeskTestKit

/// A search means what it says: `%` and `_` are characters, not wildcards, in `search`
/// and in the dashboard's filter alike.
final class SearchLiteralTests: XCTestCase, RunsOnEveryEngine {
    func testPercentAndUnderscoreMatchOnlyThemselves() throws {
        let store = try Store.inMemory()
        let intake = TestKit.intake(store)
        for (i, product) in ["app_monthly", "appXmonthly", "app%yearly", "appZyearly", "app*weekly", "app?daily", "app[x]"].enumerated() {
            let id = "20000009000000\(10 + i)"
            guard case .stored = try intake.ingest(TestKit.body(type: "SUBSCRIBED", transaction: TestKit.transaction(id: id, original: id, product: product),
                                                                renewal: TestKit.renewal(original: id, product: product))) else { return XCTFail() }
        }
        func found(_ text: String) throws -> [String] { try store.subscriptions.search(text).map(\.state.productId).sorted() }
        func filtered(_ text: String) throws -> [String] {
            var q = SubscriptionQuery()
            q.text = text
            return try store.subscriptions.page(q, limit: 50).map(\.state.productId).sorted()
        }
        for lookup in [found, filtered] {
            XCTAssertEqual(try lookup("app_"), ["app_monthly"])
            XCTAssertEqual(try lookup("app%"), ["app%yearly"])
            XCTAssertEqual(try lookup("%"), ["app%yearly"], "a percent sign anywhere, not every row")
            XCTAssertEqual(try lookup("_"), ["app_monthly"], "an underscore anywhere, not every row")
            XCTAssertEqual(try lookup("p%y"), ["app%yearly"])
            XCTAssertEqual(try lookup("p*w"), ["app*weekly"], "GLOB's characters mean themselves too")
            XCTAssertEqual(try lookup("p?d"), ["app?daily"])
            XCTAssertEqual(try lookup("p[x"), ["app[x]"])
            XCTAssertEqual(try lookup("*"), ["app*weekly"])
            XCTAssertEqual(try lookup("app"), ["app%yearly", "app*weekly", "app?daily", "appXmonthly", "appZyearly", "app[x]", "app_monthly"])
            XCTAssertEqual(try lookup("app\\\\"), [], "a backslash is a character too")
        }
    }
}
