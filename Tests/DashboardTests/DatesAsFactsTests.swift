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

/// Small things the screens said wrong: the hint for Enter on an expanded line, and the
/// list's position at its last row.
final class ScreenWordingTests: XCTestCase {
    func testEnterOnAnExpandedLineIsHintedAsFold() throws {
        let session = DashboardFixture.session(try DashboardFixture.sharedDemoStore())
        session.type(.char("/"))
        session.type("user-1010")
        session.type(.enter, .enter)
        XCTAssertTrue(session.screenLines.last!.contains("Enter expand"), session.screenLines.last!)
        session.type(.enter)
        XCTAssertTrue(session.screenLines.last!.contains("Enter fold"), session.screenLines.last!)
        XCTAssertFalse(session.screenLines.last!.contains("expand"), session.screenLines.last!)
    }

    func testGAtTheLastRowSaysItsPositionWhole() throws {
        var state = DashboardFixture.state()
        state.subscribers.pageSize = 5
        let session = DashboardSession(store: try DashboardFixture.sharedDemoStore(), state: state, clock: { DashboardFixture.anchor })
        session.start()
        session.type(.char("G"))
        XCTAssertTrue(session.screenText.contains("24 subscriptions · 24/24"), session.screenText)
        session.type(.char("k"))
        XCTAssertTrue(session.screenText.contains("24 subscriptions · 23/24"), session.screenText)
    }
}
