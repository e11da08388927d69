import Foundation
import XCTest
import SubdeskTestKit
import SubscriptionCore
@testable import Dashboard

/// A refunded subscription's row says when its access ended, the date its detail gives,
/// not the refunded period's signed end (a year ahead for a yearly plan).
final class RevokedAccessEndTests: XCTestCase, RunsOnEveryEngine {
    func testTheListShowsWhenARevokedSubscriptionsAccessEndedAsTheDetailDoes() throws {
        for (width, height) in [(80, 24), (120, 40)] {
            let session = DashboardFixture.session(try DashboardFixture.sharedDemoStore(), width: width, height: height)
            // The demo's refunded yearly subscription.
            session.type(.char("/"))
            session.type("user-1017")
            session.type(.enter)
            let row = try XCTUnwrap(session.screenLines.first { $0.contains("user-1017") && $0.contains("REVOKED") }, session.screenText)
            session.type(.enter)
            XCTAssertEqual(session.state.screen, .detail)
            let detail = session.screenText
            let found = try XCTUnwrap(detail.range(of: #"access ended \d{4}-\d\d-\d\d \d\d:\d\d"#, options: .regularExpression), detail)
            let ended = String(detail[found].dropFirst("access ended ".count))
            XCTAssertTrue(row.contains(ended), "list: \(row)\ndetail: access ended \(ended)")
        }
    }

    /// More ids than an engine binds in one statement (a search with a large --limit) are
    /// read in slices: every revoked one among them still has its date.
    func testAccessEndedReadsManyIdsInSlices() throws {
        let store = try DashboardFixture.sharedDemoStore()
        let one = try store.transactions.accessEnded(originalTransactionIds: ["x"])
        XCTAssertEqual(one, [:])
        let revoked = try store.subscriptions.search("user-1017", limit: 10, app: nil).map(\.state).filter { $0.status == .revoked }
        let id = try XCTUnwrap(revoked.first?.originalTransactionId)
        let want = try XCTUnwrap(try store.transactions.accessEnded(originalTransactionIds: [id])[id])
        let many = (0..<40_000).map { "absent-\($0)" } + [id]
        XCTAssertEqual(try store.transactions.accessEnded(originalTransactionIds: many), [id: want])
    }
}
