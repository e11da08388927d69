import XCTest
import SubscriptionCore
import SubdeskScenarios
import SubdeskTestKit
import TerminalUI
@testable import Dashboard

/// The detail's dates as a support agent reads them aloud: a renewal whose date passed
/// says what happened instead, and a refunded subscription says when access ended.
final class DatesAsFactsTests: XCTestCase, RunsOnEveryEngine {
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
final class ScreenWordingTests: XCTestCase, RunsOnEveryEngine {
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
        let store = try Store.inMemory()
        let sample = try SampleData.locate(explicit: DashboardFixture.repositoryRoot.appendingPathComponent("sample-data").path)
        _ = try DemoStoreBuilder(sample: sample, copies: 8).build(into: store, anchor: DashboardFixture.anchor)
        var state = DashboardFixture.state()
        state.subscribers.pageSize = 20
        let session = DashboardSession(store: store, state: state, clock: { DashboardFixture.anchor })
        session.start()
        let n = try store.subscriptions.count()
        XCTAssertGreaterThan(n, 2 * (state.subscribers.pageSize ?? 0), "a list longer than its window")
        session.type(.char("G"))
        XCTAssertFalse(session.state.subscribers.atStart, "the window holds the list's end, not its start")
        XCTAssertTrue(session.screenText.contains("\(n) subscriptions · \(n)/\(n)"), session.screenText)
        session.type(.char("k"))
        XCTAssertTrue(session.screenText.contains("\(n) subscriptions · \(n - 1)/\(n)"), session.screenText)
    }
}
