import XCTest
import SubscriptionCore
import TerminalUI
@testable import Dashboard

/// The detail's dates as a support agent reads them aloud: a renewal whose date passed
/// says what happened instead, and a refunded subscription says when access ended.
final class DatesAsFactsTests: XCTestCase {
    func open(_ text: String, _ session: DashboardSession) {
        session.type(.char("/"))
        session.type(text)
        session.type(.enter, .enter)
    }

    func testAPassedRenewalSaysWhatBecameOfItAndARevokedOneWhenAccessEnded() throws {
        let session = DashboardFixture.session(try DashboardFixture.demoStore(), width: 120, height: 40)
        open("user-1010", session)
        var screen = session.screenText
        XCTAssertTrue(screen.contains("GRACE PERIOD"), screen)
        XCTAssertFalse(screen.contains("next renewal"), "no next renewal once its date passed:\n\(screen)")
        XCTAssertTrue(screen.contains("grace until ") || screen.contains("until 2026"), screen)

        session.type(.escape)
        session.type(.escape)
        open("2000000400001801", session)
        screen = session.screenText
        XCTAssertTrue(screen.contains("REVOKED"), screen)
        let product = try XCTUnwrap(screen.components(separatedBy: "\n").first { $0.contains("Product ") }, screen)
        XCTAssertTrue(product.contains("access ended "), product)
        XCTAssertFalse(product.contains("expires "), product)
    }
}
