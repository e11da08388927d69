import Foundation
import XCTest
@testable import SubscriptionCore
import SubdeskScenarios
import TerminalUI
@testable import Dashboard
import SubdeskTestKit

/// Key sequences through the reducer with a runtime performing the loads against a real demo store.
final class SessionTests: XCTestCase, RunsOnEveryEngine {
    nonisolated(unsafe) static var store: Store?

    func demoStore() throws -> Store {
        if let store = Self.store { return store }
        let store = try DashboardFixture.demoStore()
        Self.store = store
        return store
    }

    func testSearchOpenExpandAndBack() throws {
        let session = DashboardFixture.session(try demoStore())
        session.type(.char("/"))
        session.type("user-1010")
        session.type(.enter)
        XCTAssertEqual(session.state.subscribers.rows.map(\.subscriber.userId), ["user-1010"])

        session.type(.enter)
        XCTAssertEqual(session.state.stack, [.subscribers, .detail])
        var text = session.screenText
        XCTAssertTrue(text.contains("GRACE PERIOD"), text)
        XCTAssertTrue(text.contains("2 · billing error (payment method no longer valid)"), text)
        XCTAssertTrue(text.contains("DID_FAIL_TO_RENEW/GRACE_PERIOD"), text)
        XCTAssertTrue(text.contains(" ▸ 2000000400000901 "), "the breadcrumb names the subscription")

        // The last line is selected on opening; the one before is the first notification.
        session.type(.char("k"), .enter)
        text = session.screenText
        XCTAssertTrue(text.contains("\"signedPayload\": JWS(ES256, x5c: 3 certificates) {"), text)
        let payload = try XCTUnwrap(session.state.detail?.expanded.values.first)
        XCTAssertTrue(payload.contains { $0.contains("\"notificationType\": \"SUBSCRIBED\"") }, payload.joined(separator: "\n"))
        XCTAssertTrue(payload.contains { $0.contains("\"signedTransactionInfo\": JWS(ES256, x5c: 3 certificates) {") })
        XCTAssertTrue(payload.contains { $0.contains("\"expiresDate\": ") && $0.hasSuffix(":00 UTC") },
                      "dates in milliseconds are also written out")
        session.type(.enter)
        XCTAssertFalse(session.screenText.contains("\"notificationType\""), "Enter again folds the line")

        session.type(.char("g"), .enter)
        text = session.screenText
        XCTAssertTrue(text.contains("transactionId"), "a transaction line expands to its fields")
        XCTAssertTrue(text.contains("9.99 USD"), text)

        session.type(.escape)
        XCTAssertEqual(session.state.stack, [.subscribers])
        XCTAssertEqual(session.state.subscribers.query.text, "user-1010", "the filter survives the round trip")
        session.type(.escape)
        XCTAssertEqual(session.state.subscribers.query.text, "")
        XCTAssertEqual(session.state.subscribers.rows.count, 25)
    }

    func testLongPayloadIsReadLineByLineBeforeTheSelectionMoves() throws {
        let session = DashboardFixture.session(try demoStore())
        session.type(.char("/"))
        session.type("user-1010")
        session.type(.enter, .enter, .char("k"), .enter)
        let detail = try XCTUnwrap(session.state.detail)
        let expandedLines = try XCTUnwrap(detail.expanded.values.first).count
        let visible = Layout.timelineRows(height: 24)
        XCTAssertGreaterThan(expandedLines, visible, "the payload is taller than the timeline")
        let selected = detail.selection

        var presses = 0
        while session.state.detail?.selection == selected && presses < 200 {
            session.type(.char("j"))
            presses += 1
        }
        XCTAssertGreaterThan(presses, expandedLines - visible, "j scrolled through the payload first")
        XCTAssertEqual(session.state.detail?.selection, selected + 1)
        // Back up: the expanded line is selected again and shown from its top.
        session.type(.char("k"))
        XCTAssertEqual(session.state.detail?.selection, selected)
        XCTAssertTrue(session.screenText.contains("SUBSCRIBED/INITIAL_BUY"), session.screenText)
        session.type(.char("k"))
        XCTAssertEqual(session.state.detail?.selection, selected - 1)
    }

    func testPagingVisitsEveryRowOnceInOrder() throws {
        let store = try Store.inMemory()
        let sample = try SampleData.locate(explicit: DashboardFixture.repositoryRoot.appendingPathComponent("sample-data").path)
        _ = try DemoStoreBuilder(sample: sample, copies: 5).build(into: store, anchor: DashboardFixture.anchor)
        let session = DashboardSession(store: store, state: {
            var state = DashboardFixture.state()
            state.subscribers.pageSize = 10
            return state
        }(), clock: { DashboardFixture.anchor })
        session.start()
        let query = session.state.subscribers.query
        let all = try store.subscriptions.page(query, limit: 1000).map(\.state.originalTransactionId)
        XCTAssertEqual(all.count, 125)
        XCTAssertLessThan(session.state.subscribers.rows.count, all.count, "the first screen does not load the whole store")

        var seen: [String] = []
        for _ in 0..<all.count {
            seen.append(try XCTUnwrap(session.state.subscribers.selectedRow).state.originalTransactionId)
            session.type(.char("j"))
        }
        XCTAssertEqual(seen, all)
        XCTAssertLessThanOrEqual(session.state.subscribers.rows.count,
                                 Layout.windowCapacity(pageLimit: 10, height: 24), "the window stays bounded")
        XCTAssertFalse(session.state.subscribers.atStart, "rows far above were let go")

        session.type(.char("g"))
        XCTAssertEqual(session.state.subscribers.selectedRow?.state.originalTransactionId, all.first)
        session.type(.char("G"))
        XCTAssertEqual(session.state.subscribers.selectedRow?.state.originalTransactionId, all.last)

        var upward: [String] = []
        for _ in 0..<all.count {
            upward.append(try XCTUnwrap(session.state.subscribers.selectedRow).state.originalTransactionId)
            session.type(.char("k"))
        }
        XCTAssertEqual(upward, all.reversed())

        var pages = 0
        while session.state.subscribers.selectedRow?.state.originalTransactionId != all.last && pages < 20 {
            session.type(.pageDown)
            pages += 1
        }
        XCTAssertEqual(pages, 7, "125 rows at 19 a page")
        session.type(.pageUp)
        XCTAssertEqual(session.state.subscribers.selectedRow?.state.originalTransactionId, all[all.count - 1 - 19])
    }

    func testSortByExpiryMatchesTheStore() throws {
        let store = try demoStore()
        let session = DashboardFixture.session(store)
        session.type(.char("s"))
        let expected = try store.subscriptions.page(SubscriptionQuery(sort: .expires), limit: 100).map(\.state.originalTransactionId)
        XCTAssertEqual(session.state.subscribers.rows.map(\.state.originalTransactionId), expected)
        XCTAssertTrue(session.screenText.contains("sort expiry, soonest first"))
    }

    func testStatusTabShowsOnlyThatStatus() throws {
        let session = DashboardFixture.session(try demoStore())
        session.type(.char("2"))
        XCTAssertEqual(session.state.subscribers.rows.map(\.state.status), [.gracePeriod])
        XCTAssertTrue(session.screenText.contains("1 subscription"))
    }

    func testControlAndBidiCharactersInAPayloadAreShownEscaped() throws {
        let store = try DashboardFixture.demoStore()
        let hostile = "app.\u{1B}[2J\u{1B}]0;pwned\u{07}\u{202E}gnp.exe"
        let payload = #"{"notificationType":"TEST","notificationUUID":"hostile-1","data":{"productId":"\#(jsonEscaped(hostile))"}}"#
        let jws = Base64URL.encode(Data(#"{"alg":"ES256","x5c":[]}"#.utf8)) + "." + Base64URL.encode(Data(payload.utf8)) + ".c2ln"
        let body = Data(#"{"signedPayload":"\#(jws)"}"#.utf8)
        try store.notifications.insert(StoredNotification(
            event: NotificationEvent(notificationUUID: "hostile-1", version: 2, type: .test, subtype: nil,
                                     signedDate: DashboardFixture.anchor, originalTransactionId: "2000000400000901",
                                     transactionId: nil, productId: hostile, environment: "Production"),
            receivedDate: DashboardFixture.anchor, bodySHA256: "hostile", body: body, source: "test\u{1B}[31m"))

        let session = DashboardFixture.session(store, width: 120, height: 40)
        session.type(.char("/"))
        session.type("user-1010")
        session.type(.enter, .enter, .char("G"), .enter)
        let lines = session.screenLines
        let text = lines.joined(separator: "\n")
        XCTAssertTrue(text.contains(#""productId": "app.\e[2J\e]0;pwned\x07\u{202E}gnp.exe""#), text)
        XCTAssertTrue(text.contains(#"from test\e[31m"#), text)
        XCTAssertTrue(text.contains(#"TEST  app.\e[2J"#) || text.contains(#"TEST"#), text)
        for line in lines {
            XCTAssertTrue(line.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value != 0x7F && $0.value != 0x202E && $0.value != 0x1B },
                          "a raw control or bidi character reached the screen: \(line.debugDescription)")
        }
    }

    func testQuarantinedBodyIsShownSanitized() throws {
        let store = try DashboardFixture.demoStore()
        let body = Data("{\"note\":\"\u{1B}[31mred\u{07}\"}\nsecond line \u{1B}]52;c;Zm9v\u{07} \u{2066}isolate\u{2069}".utf8)
        try store.quarantine.keep(body: body, reason: "test: \u{1B}[1mbold reason", kind: .other, source: "test",
                             receivedDate: DashboardFixture.anchor + 1000, bodySHA256: "x")
        let session = DashboardFixture.session(store, width: 120, height: 40)
        session.type(.char(":"))
        session.type("quarantine")
        session.type(.enter)
        XCTAssertTrue(session.screenText.contains(#"test: \e[1mbold reason"#), session.screenText)
        session.type(.enter)
        let text = session.screenText
        XCTAssertTrue(text.contains(#"reason: test: \e[1mbold reason"#), text)
        XCTAssertTrue(text.contains(#"second line \e]52;c;Zm9v\x07 \u{2066}isolate\u{2069}"#), text)
        XCTAssertFalse(text.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 || $0.value == 0x2066 })
    }

    func testLiveFeedShowsWritesFromAnotherConnection() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("subdesk-feed-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = Store.testLocation(file: directory.appendingPathComponent("live.db").path)
        let sample = try SampleData.locate(explicit: DashboardFixture.repositoryRoot.appendingPathComponent("sample-data").path)
        do {
            let writer = try Store(path: path)
            _ = try DemoStoreBuilder(sample: sample, copies: 1).build(into: writer, anchor: DashboardFixture.anchor)
        }
        let session = DashboardFixture.session(try Store(path: path))
        session.type(.char(":"))
        session.type("feed")
        session.type(.enter)
        let before = session.state.feed.entries.count
        XCTAssertEqual(before, 73, "the demo's 69 notifications and 4 refused bodies")

        let writer = try Store(path: path)
        let intake = Intake(store: writer, verifier: SignedDataVerifier(roots: try sample.trustRoots()), policy: SampleData.demoPolicy)
        let scenario = try XCTUnwrap(try sample.scenarios().first)
        let bodies = try ScenarioBuilder(signer: try sample.signer()).bodies(for: scenario, instance: 777, anchor: DashboardFixture.anchor)
        for body in bodies { _ = try intake.ingest(body, source: "test", receivedAt: DashboardFixture.anchor) }

        // A tick notices another connection's commit: at once on SQLite; on PostgreSQL when
        // its notice has reached this connection, which can take a moment.
        func tickUntil(_ done: () -> Bool) {
            let deadline = Date().addingTimeInterval(3)
            repeat { session.tick() } while !done() && Date() < deadline && { Thread.sleep(forTimeInterval: 0.01); return true }()
        }
        tickUntil { session.state.feed.entries.count == before + bodies.count }
        XCTAssertEqual(session.state.feed.entries.count, before + bodies.count)
        XCTAssertEqual(session.state.feed.entries.first?.originalTransactionId, ScenarioBuilder.originalTransactionId(instance: 777))
        XCTAssertTrue(session.screenText.contains(ScenarioBuilder.originalTransactionId(instance: 777)))

        session.type(.char(" "))
        _ = try intake.ingest(bodies[0], source: "test again", receivedAt: DashboardFixture.anchor)
        tickUntil { session.state.feed.held.first != nil }
        XCTAssertEqual(session.state.feed.held.first?.result, .duplicate, "paused: the duplicate waits")
        XCTAssertEqual(session.state.feed.entries.count, before + bodies.count)
        session.type(.char(" "))
        XCTAssertEqual(session.state.feed.entries.first?.result, .duplicate)
        XCTAssertTrue(session.screenText.contains("duplicate"))
    }

    /// `:daily product=app.montly` is a typo, not a product with no sales: refused, naming
    /// the products there are, as `counts --where` does.
    func testDailyForAValueNoSubscriptionHasSaysWhichThereAre() throws {
        let session = DashboardFixture.session(try demoStore(), width: 120, height: 40)
        session.start()
        session.type(.char(":"))
        session.type("daily product=app.montly")
        session.type(.enter)
        _ = session.waitForBackgroundWork(timeout: 10)
        let flash = try XCTUnwrap(session.state.flash)
        XCTAssertEqual(flash.kind, .error)
        XCTAssertTrue(flash.text.contains("no subscription has product app.montly: the product values there are "), flash.text)
        XCTAssertTrue(flash.text.contains("app.monthly"), flash.text)
    }

    func testThemeCommandSwitchesAndReportsBrokenFiles() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("subdesk-themes-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try "# broken\nnormal_fg = default\nthis line has no equals sign\n".write(
            to: directory.appendingPathComponent("broken.theme"), atomically: true, encoding: .utf8)
        let themes = ThemeCatalog(searchPaths: [directory.path, DashboardFixture.repositoryRoot.appendingPathComponent("themes").path])
        XCTAssertTrue(themes.availableNames().contains("broken"))
        XCTAssertTrue(themes.availableNames().contains("midnight"))

        let session = DashboardSession(store: try demoStore(), state: DashboardFixture.state(), themes: themes,
                                       clock: { DashboardFixture.anchor })
        session.start()
        session.type(.char(":"))
        session.type("theme midnight")
        session.type(.enter)
        XCTAssertEqual(session.theme.name, "midnight")
        XCTAssertEqual(session.state.themeName, "midnight")

        session.type(.char(":"))
        session.type("theme broken")
        session.type(.enter)
        XCTAssertEqual(session.theme.name, "midnight", "a broken theme leaves the current one in place")
        let flash = try XCTUnwrap(session.state.flash)
        XCTAssertEqual(flash.kind, .error)
        XCTAssertTrue(flash.text.contains("broken.theme:3"), flash.text)
        // The line is too short for the whole message: it says where to read it whole.
        XCTAssertTrue(session.screenLines.last?.contains("(:messages · Esc)") ?? false, session.screenLines.last ?? "")
        session.type(.char(":"))
        session.type("messages")
        session.type(.enter)
        XCTAssertTrue(session.screenText.contains("expected key = value"), session.screenText)
    }

    private func jsonEscaped(_ text: String) -> String {
        text.unicodeScalars.map { scalar -> String in
            scalar.value < 0x20 ? String(format: "\\u%04x", scalar.value) : String(scalar)
        }.joined()
    }
}
