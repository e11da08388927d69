import XCTest
import SubdeskTestKit
@testable import SubscriptionCore
import TerminalUI
@testable import Dashboard

/// Key sequences through the pure reducer: no store, no terminal; effects are checked, not run.
final class ReducerTests: XCTestCase {
    var state = DashboardFixture.state()

    @discardableResult
    func press(_ keys: Key...) -> [DashboardEffect] {
        var effects: [DashboardEffect] = []
        for key in keys { effects += DashboardReducer.reduce(into: &state, .key(key)) }
        return effects
    }

    @discardableResult
    func type(_ text: String) -> [DashboardEffect] {
        text.flatMap { DashboardReducer.reduce(into: &state, .key(.char($0))) }
    }

    func testStartLoadsTheFirstPageAndCounts() {
        let effects = DashboardReducer.reduce(into: &state, .start)
        XCTAssertEqual(effects.count, 2)
        guard case .loadSubscribers(let request)? = effects.first else { return XCTFail("\(effects)") }
        XCTAssertEqual(request.position, .first)
        XCTAssertEqual(effects.last, .loadStatusCounts)
    }

    func testFilterAppliesAsItIsTyped() {
        press(.char("/"))
        XCTAssertEqual(state.prompt?.kind, .filter)
        let effects = type("prem")
        XCTAssertEqual(effects.count, 4, "each character asks for the first page of what it matches")
        guard case .loadSubscribers(let request)? = effects.last else { return XCTFail("\(effects)") }
        XCTAssertEqual(request.query.text, "prem")
        XCTAssertEqual(request.query.scanLimit, DashboardReducer.keystrokeScanLimit, "a keystroke reads a bounded stretch")
        XCTAssertEqual(request.position, .first)
        XCTAssertEqual(state.subscribers.query.text, "prem", "the list is filtered while the prompt is open")
        XCTAssertTrue(type(" ").isEmpty, "a trailing space changes nothing to load")
        XCTAssertTrue(press(.enter).isEmpty, "Enter keeps what is already shown when the read was whole")
        XCTAssertNil(state.prompt)
        XCTAssertEqual(state.subscribers.query.text, "prem")
        XCTAssertNil(state.subscribers.query.scanLimit)
    }

    func testEnterOnAnOrderIdThatMatchesNothingAsksAppleAndOpensTheSubscription() {
        press(.char("/"))
        guard case .loadSubscribers(let request)? = type("MTN9T4BRB9").last else { return XCTFail() }
        _ = DashboardReducer.reduce(into: &state, .subscribersLoaded(request, SubscriberPage(rows: [], reachesStart: true, reachesEnd: true)))
        let effects = press(.enter)
        XCTAssertTrue(effects.contains(.lookUpOrder("MTN9T4BRB9")), "\(effects)")
        XCTAssertEqual(state.flash?.text, "no subscription matches MTN9T4BRB9; asking Apple whether it is an order id")
        let opened = DashboardReducer.reduce(into: &state, .orderLookedUp(orderId: "MTN9T4BRB9", originalTransactionId: "2000000770000001",
                                                                          message: nil))
        XCTAssertEqual(opened, [.loadDetail(originalTransactionId: "2000000770000001")])
        XCTAssertEqual(state.screen, .detail)
        _ = DashboardReducer.reduce(into: &state, .orderLookedUp(orderId: "NOTANORDER1", originalTransactionId: nil,
                                                                 message: "Apple does not know order id NOTANORDER1"))
        XCTAssertEqual(state.flash?.kind, .error)
        // A user id that matches nothing is no order id: nothing is asked.
        press(.escape, .escape, .char("/"), .ctrl("u"))
        XCTAssertEqual(state.screen, .subscribers)
        guard case .loadSubscribers(let other)? = type("user-77").last else { return XCTFail() }
        _ = DashboardReducer.reduce(into: &state, .subscribersLoaded(other, SubscriberPage(rows: [], reachesStart: true, reachesEnd: true)))
        XCTAssertFalse(press(.enter).contains(.lookUpOrder("user-77")))
    }

    func testEnterReadsTheWholeListWhenAKeystrokesReadStoppedShort() {
        press(.char("/"))
        guard case .loadSubscribers(let request)? = type("app").last else { return XCTFail() }
        _ = DashboardReducer.reduce(into: &state, .subscribersLoaded(request, SubscriberPage(
            rows: [ReducerTests.row("2000000100000001")], reachesStart: true, reachesEnd: true, complete: false)))
        let summary = DashboardRenderer.render(state).lines()[2]
        XCTAssertTrue(summary.contains("1 found in 10k rows, Enter: all"), summary)
        guard case .loadSubscribers(let whole)? = press(.enter).first else { return XCTFail("Enter reads on") }
        XCTAssertNil(whole.query.scanLimit)
        XCTAssertEqual(whole.query.text, "app")
    }

    func testEscapePutsBackTheFilterThePromptOpenedWith() {
        press(.char("/"))
        type("abc")
        XCTAssertEqual(state.subscribers.query.text, "abc")
        guard case .loadSubscribers(let request)? = press(.escape).first else { return XCTFail() }
        XCTAssertEqual(request.query.text, "")
        XCTAssertNil(state.prompt)
        XCTAssertEqual(state.subscribers.query.text, "")

        press(.char("/"))
        type("user")
        press(.enter)
        press(.char("/"))
        type("us")
        XCTAssertEqual(state.subscribers.query.text, "us", "a fresh filter replaces the kept one as it is typed")
        press(.escape)
        XCTAssertEqual(state.subscribers.query.text, "user", "Esc restores the filter in force before the prompt")
        press(.char("/"))
        press(.ctrl("u"), .backspace)
        XCTAssertNil(state.prompt, "backspace on an empty filter closes the prompt")
        XCTAssertEqual(state.subscribers.query.text, "", "and leaves the list unfiltered")
    }

    func testPromptEditingMovesTheCursor() {
        press(.char("/"))
        type("ac")
        press(.left)
        type("b")
        XCTAssertEqual(state.prompt?.text, "abc")
        press(.home, .delete)
        XCTAssertEqual(state.prompt?.text, "bc")
        press(.end, .backspace, .backspace)
        XCTAssertEqual(state.prompt?.text, "")
        press(.backspace)
        XCTAssertNil(state.prompt, "backspace on an empty prompt closes it")
    }

    func testEscapeClearsAnActiveFilterBeforeGoingBack() {
        state.subscribers.query.text = "user"
        let effects = press(.escape)
        XCTAssertEqual(state.subscribers.query.text, "")
        XCTAssertEqual(effects.count, 1)
        XCTAssertEqual(state.stack, [.subscribers])
    }

    func testStatusDigitsAndTabChooseTheStatusFilter() {
        press(.char("3"))
        XCTAssertEqual(state.subscribers.statusFilter, .billingRetry)
        XCTAssertEqual(state.subscribers.query.statuses, [.billingRetry])
        press(.tab)
        XCTAssertEqual(state.subscribers.statusFilter, .expired)
        press(.tab, .tab)
        XCTAssertNil(state.subscribers.statusFilter, "after revoked the cycle comes back to all")
        press(.char("1"))
        XCTAssertEqual(state.subscribers.query.statuses, [.active])
        press(.char("0"))
        XCTAssertEqual(state.subscribers.query.statuses, [])
    }

    func testMovingPastTheWindowAsksForTheNeighbouringPage() throws {
        guard case .loadSubscribers(let first)? = DashboardReducer.reduce(into: &state, .start).first else { return XCTFail() }
        let rows = (0..<100).map { Self.row(String(2_000_000_000_000_000 + $0)) }
        _ = DashboardReducer.reduce(into: &state, .subscribersLoaded(first, SubscriberPage(rows: rows, reachesStart: true, reachesEnd: false)))
        XCTAssertEqual(state.subscribers.rows.count, 100)
        XCTAssertFalse(state.subscribers.atEnd)
        XCTAssertEqual(press(.char("G")), [.loadSubscribers(SubscriberPageRequest(
            query: state.subscribers.query, position: .last, limit: DashboardReducer.pageLimit(state)))],
            "G with the end not loaded reads the last page from the reversed query")
        XCTAssertTrue(press(.char("g")).isEmpty, "the first row is in the window already")
        guard case .loadSubscribers(let next)? = press(.pageDown, .pageDown, .pageDown, .pageDown, .pageDown, .pageDown).last else {
            return XCTFail("paging towards the window's end loads the next page")
        }
        guard case .after(let cursor) = next.position else { return XCTFail("\(next.position)") }
        XCTAssertEqual(cursor.originalTransactionId, rows.last?.state.originalTransactionId)
    }

    static func row(_ id: String) -> SubscriptionRow {
        SubscriptionRow(
            subscriber: Subscriber(id: 1, userId: "user-\(id.suffix(3))", appAccountToken: nil),
            state: SubscriptionState(
                originalTransactionId: id, productId: "app.monthly", status: .active, entitled: true,
                expiresDate: DashboardFixture.anchor, purchaseDate: nil, originalPurchaseDate: nil, latestTransactionId: id,
                autoRenewStatus: true, autoRenewProductId: "app.monthly", pendingChange: nil, gracePeriodExpiresDate: nil,
                isInBillingRetryPeriod: false, expirationIntent: nil, priceIncreaseStatus: nil, offerType: nil,
                offerIdentifier: nil, offerDiscountType: nil, isTrial: false, ownershipType: .purchased,
                environment: "Production", appAccountToken: nil, upgradedFrom: [], revokedTransactionIds: [],
                lastEventDate: DashboardFixture.anchor, lastNotificationType: nil))
    }

    func testSortToggleAndReverse() {
        XCTAssertEqual(state.subscribers.query.sort, .lastEvent)
        press(.char("s"))
        XCTAssertEqual(state.subscribers.query.sort, .expires)
        XCTAssertFalse(state.subscribers.query.descending)
        press(.char("S"))
        XCTAssertTrue(state.subscribers.query.descending)
        press(.char("s"))
        XCTAssertEqual(state.subscribers.query.sort, .lastEvent)
    }

    func testCommandLineCompletesAndSwitchesScreens() {
        press(.char(":"))
        XCTAssertEqual(state.prompt?.completions, DashboardCommandLine.names)
        type("fe")
        XCTAssertEqual(state.prompt?.completions, ["feed"])
        press(.tab)
        XCTAssertEqual(state.prompt?.text, "feed")
        let effects = press(.enter)
        XCTAssertEqual(state.stack, [.subscribers, .feed])
        XCTAssertEqual(effects, [.pollFeed(afterId: 0), .loadHealth], "the feed's header sums up health")

        press(.char(":"))
        type("d")
        press(.tab, .enter)
        XCTAssertEqual(state.stack, [.subscribers, .daily], "switching replaces the screen rather than piling up")
        press(.escape)
        XCTAssertEqual(state.stack, [.subscribers])
    }

    func testThemeCompletionCyclesThroughMatchesAndApplies() {
        press(.char(":"))
        type("th")
        press(.tab)
        XCTAssertEqual(state.prompt?.text, "theme ", "a command taking an argument completes with a space")
        type("m")
        XCTAssertEqual(state.prompt?.completions, ["theme midnight", "theme mono"])
        press(.tab)
        XCTAssertEqual(state.prompt?.text, "theme midnight")
        press(.tab)
        XCTAssertEqual(state.prompt?.text, "theme mono")
        press(.backTab)
        XCTAssertEqual(state.prompt?.text, "theme midnight")
        XCTAssertEqual(press(.enter), [.applyTheme("midnight")])
    }

    func testUnknownCommandSaysWhatWorks() {
        press(.char(":"))
        type("frobnicate")
        press(.enter)
        XCTAssertEqual(state.flash?.kind, .error)
        XCTAssertTrue(state.flash?.text.contains(":subs") ?? false)
    }

    func testQuitByKeyAndByCommand() {
        press(.char("q"))
        XCTAssertTrue(state.quitRequested)
        state = DashboardFixture.state()
        press(.char(":"))
        type("q")
        press(.enter)
        XCTAssertTrue(state.quitRequested)
    }

    func testTooSmallScreenSaysSoAndOnlyQuits() {
        _ = DashboardReducer.reduce(into: &state, .resize(width: 60, height: 20))
        XCTAssertTrue(state.isTooSmall)
        XCTAssertTrue(press(.char(":"), .char("/"), .enter).isEmpty)
        XCTAssertNil(state.prompt)
        let lines = DashboardRenderer.render(state).lines()
        XCTAssertTrue(lines.contains { $0.contains("terminal too small: 60x20, need 80x24") }, lines.joined(separator: "\n"))
        XCTAssertEqual(lines.count, 20)
        press(.char("q"))
        XCTAssertTrue(state.quitRequested)
    }

    func testHelpIsGeneratedFromTheKeyTable() {
        press(.char("?"))
        XCTAssertTrue(state.showsHelp)
        let text = DashboardRenderer.render(state).lines().joined(separator: "\n")
        for entry in state.keys.helpEntries(for: .subscribers) {
            XCTAssertTrue(text.contains(entry.description), "help lacks \(entry.description)")
        }
        press(.char("j"))
        XCTAssertTrue(state.showsHelp, "keys other than close do nothing under help")
        press(.escape)
        XCTAssertFalse(state.showsHelp)
        XCTAssertEqual(state.stack, [.subscribers])
    }

    func testHelpListsScreensAndCommandsOnEveryScreenAt80x24() {
        state.width = 80
        state.height = 24
        for screen in ScreenID.allCases {
            var shown = state
            shown.stack = [.subscribers] + (screen == .subscribers ? [] : [screen])
            shown.showsHelp = true
            let lines = DashboardRenderer.render(shown).lines()
            let text = lines.joined(separator: "\n")
            for entry in shown.keys.helpEntries(for: screen) {
                XCTAssertTrue(text.contains(entry.keys) && text.contains(entry.description),
                              "\(screen) help lacks \(entry.keys) \(entry.description):\n\(text)")
            }
            // The commands paragraph, read with its lines joined inside the box.
            let joined = lines.map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "│ ")) }.joined(separator: " ")
            // (`:app` only with several apps configured; this state has none.)
            for command in DashboardCommandLine.table where command.name != "app" {
                XCTAssertTrue(joined.contains("\(command.usage) \(command.summary)"), "\(screen) help lacks \(command.usage):\n\(text)")
            }
        }
    }

    func testHintBarComesFromTheKeyTable() {
        let bottom = DashboardRenderer.render(state).lines().last ?? ""
        XCTAssertTrue(bottom.hasPrefix(" Enter open  / filter"), bottom)
        XCTAssertTrue(bottom.contains("? help"), bottom)
    }

    func testZoneCycleChangesTheZoneEverywhere() {
        XCTAssertEqual(state.time.label, "UTC")
        press(.char("z"))
        XCTAssertEqual(state.time.label, "America/Los_Angeles", "local is UTC in the fixture, so it is skipped")
        press(.char(":"))
        type("daily")
        let effects = press(.enter)
        guard case .loadDaily(let request)? = effects.first else { return XCTFail("\(effects)") }
        XCTAssertEqual(request.zone.identifier, "America/Los_Angeles")
        XCTAssertEqual(request.to, "2026-11-16")
        XCTAssertEqual(request.from, "2026-10-18")
    }

    func testTzCommandRejectsUnknownZones() {
        press(.char(":"))
        type("tz Mars/Olympus")
        press(.enter)
        XCTAssertEqual(state.flash?.kind, .error)
        XCTAssertEqual(state.time.label, "UTC")
        press(.char(":"))
        type("tz Europe/Paris")
        press(.enter)
        XCTAssertEqual(state.time.label, "Europe/Paris")
    }

    func testDailyRangeShiftsByWeeksAndSegmentsCycle() {
        press(.char(":"))
        type("daily")
        press(.enter)
        guard case .loadDaily(let earlier)? = press(.char("[")).first else { return XCTFail() }
        XCTAssertEqual(earlier.to, "2026-11-09")
        XCTAssertEqual(earlier.from, "2026-10-11")
        press(.char("]"))
        XCTAssertTrue(press(.char("]")).isEmpty, "the range cannot end after today")
        guard case .loadDaily(let family)? = press(.char("f")).first else { return XCTFail() }
        XCTAssertEqual(family.segment, .familyShared)
        XCTAssertEqual(family.segment.segments, [.familyShared])
        press(.char("j"), .char("j"), .down, .char("k"))
        XCTAssertEqual(state.daily.metric, 2)
        press(.char("G"))
        XCTAssertEqual(state.daily.selectedMetric, Metric.all.last)
    }

    func testFeedPollsEverySecondOnlyWhileShown() {
        XCTAssertTrue(DashboardReducer.reduce(into: &state, .tick(now: state.now + 5000)).isEmpty)
        press(.char(":"))
        type("feed")
        press(.enter)
        XCTAssertTrue(DashboardReducer.reduce(into: &state, .tick(now: state.now + 500)).isEmpty)
        XCTAssertEqual(DashboardReducer.reduce(into: &state, .tick(now: state.now + 1000)), [.pollFeed(afterId: 0)])
    }

    /// Information goes by itself; an error stays until Esc dismisses it (and that Esc does
    /// nothing else); both stay in `:messages`.
    func testInformationExpiresErrorsStayUntilDismissedAndMessagesKeepBoth() {
        press(.char(":"))
        type("tz UTC")
        press(.enter)
        XCTAssertEqual(state.flash?.kind, .info)
        _ = DashboardReducer.reduce(into: &state, .tick(now: state.now + DashboardReducer.flashDuration))
        XCTAssertNil(state.flash)

        press(.char(":"))
        type("nope")
        press(.enter)
        XCTAssertEqual(state.flash?.kind, .error)
        _ = DashboardReducer.reduce(into: &state, .tick(now: state.now + 3_600_000))
        XCTAssertNotNil(state.flash, "an error does not vanish while nobody looks")
        XCTAssertTrue(DashboardRenderer.render(state).lines().last?.contains("Esc") ?? false, DashboardRenderer.render(state).lines().last ?? "")
        let screen = state.screen
        press(.escape)
        XCTAssertNil(state.flash)
        XCTAssertEqual(state.screen, screen, "the Esc that dismisses goes nowhere")

        press(.char(":"))
        type("mes")
        press(.enter)
        XCTAssertTrue(state.showsMessages)
        let lines = DashboardRenderer.render(state).lines()
        XCTAssertTrue(lines.contains { $0.contains("Messages of this session, newest first (2)") }, lines.joined(separator: "\n"))
        let nope = lines.firstIndex { $0.contains("unknown command :nope") }, tz = lines.firstIndex { $0.contains("time zone UTC") }
        XCTAssertNotNil(nope)
        XCTAssertLessThan(nope ?? 99, tz ?? 0, "newest first")
        press(.escape)
        XCTAssertFalse(state.showsMessages)
    }

    /// A full feed (its capacity reached, so rows are dropped as others arrive) follows the
    /// newest at the top, keeps a held selection on its notification, and says older rows exist.
    func testTheFeedSelectionFollowsItsNotificationWhenTheFeedIsFull() {
        press(.char(":"))
        type("feed")
        press(.enter)
        func entry(_ id: Int64) -> IntakeLogEntry {
            IntakeLogEntry(id: id, receivedDate: state.now, result: .stored, type: "DID_RENEW", originalTransactionId: "otid-\(id)")
        }
        let full = (1...Int64(FeedState.capacity)).reversed().map(entry)
        _ = DashboardReducer.reduce(into: &state, .feedLoaded(full, rate: [1], now: state.now))
        XCTAssertEqual(state.feed.entries.count, FeedState.capacity)
        XCTAssertTrue(DashboardRenderer.render(state).lines()[1].contains("500 rows (newest"), DashboardRenderer.render(state).lines()[1])
        // At the top the feed follows: new rows push in and the newest stays selected.
        _ = DashboardReducer.reduce(into: &state, .feedLoaded([entry(501), entry(502)], rate: [3], now: state.now))
        XCTAssertEqual(state.feed.visible[state.feed.selection].id, 502, "the newest row stays selected")
        // Further down, with the feed full: the count does not grow, the selection still holds.
        press(.char("j"), .char("j"), .char("j"))
        let chosen = state.feed.visible[state.feed.selection].id
        _ = DashboardReducer.reduce(into: &state, .feedLoaded([entry(503)], rate: [4], now: state.now))
        XCTAssertEqual(state.feed.visible[state.feed.selection].id, chosen)
        XCTAssertEqual(press(.enter), [.loadDetail(originalTransactionId: "otid-\(chosen)")])
    }

    /// Enter on a refused row opens the quarantined body it left.
    func testEnterOnARejectedFeedRowOpensItsQuarantineEntry() {
        press(.char(":"))
        type("feed")
        press(.enter)
        let at = state.now - 5000
        let rejected = IntakeLogEntry(id: 9, receivedDate: at, result: .rejected, detail: "body: not valid JSON")
        _ = DashboardReducer.reduce(into: &state, .feedLoaded([rejected], rate: [1], now: state.now))
        let effects = press(.enter)
        XCTAssertEqual(state.screen, .quarantine)
        XCTAssertFalse(effects.isEmpty)
        let entries = [QuarantineEntry(id: 7, receivedDate: at - 100_000, reason: "body: not valid JSON", body: Data("older".utf8), source: nil,
                                       bodyBytes: 5, timesSeen: 2, lastSeen: at - 50_000),
                       QuarantineEntry(id: 8, receivedDate: at, reason: "body: not valid JSON", body: Data("nope".utf8), source: "cgi",
                                       bodyBytes: 4, timesSeen: 1, lastSeen: at)]
        _ = DashboardReducer.reduce(into: &state, .quarantineLoaded(entries))
        XCTAssertEqual(state.screen, .quarantineBody)
        XCTAssertEqual(state.quarantine.openEntry?.id, 8)
    }

    func testFeedEntriesArriveOnTopAndWaitWhilePaused() {
        press(.char(":"))
        type("feed")
        press(.enter)
        func entry(_ id: Int64, _ type: String) -> IntakeLogEntry {
            IntakeLogEntry(id: id, receivedDate: state.now, result: .stored, type: type, originalTransactionId: "otid-\(id)")
        }
        _ = DashboardReducer.reduce(into: &state, .feedLoaded([entry(2, "DID_RENEW"), entry(1, "SUBSCRIBED")], rate: [0, 2], now: state.now))
        XCTAssertEqual(state.feed.entries.map(\.id), [2, 1])
        XCTAssertEqual(state.feed.lastId, 2)

        press(.char("j"))
        _ = DashboardReducer.reduce(into: &state, .feedLoaded([entry(3, "EXPIRED")], rate: [0, 3], now: state.now))
        XCTAssertEqual(state.feed.visible[state.feed.selection].id, 1, "the selected row stays selected as rows arrive")

        press(.char(" "))
        _ = DashboardReducer.reduce(into: &state, .feedLoaded([entry(4, "REFUND")], rate: [0, 4], now: state.now))
        XCTAssertEqual(state.feed.entries.map(\.id), [3, 2, 1])
        XCTAssertEqual(state.feed.held.map(\.id), [4])
        XCTAssertTrue(DashboardRenderer.render(state).lines()[1].contains("paused (+1 new)"), DashboardRenderer.render(state).lines()[1])
        press(.char(" "))
        XCTAssertEqual(state.feed.entries.map(\.id), [4, 3, 2, 1])

        press(.char("/"))
        type("renew")
        press(.enter)
        XCTAssertEqual(state.feed.visible.map(\.id), [2])
        press(.escape)
        XCTAssertEqual(state.feed.visible.count, 4, "Esc clears the feed filter first")
        XCTAssertEqual(state.stack, [.subscribers, .feed])

        press(.char("g"))
        guard case .loadDetail(let id)? = press(.enter).first else { return XCTFail() }
        XCTAssertEqual(id, "otid-4")
        XCTAssertEqual(state.stack, [.subscribers, .feed, .detail])
        press(.escape)
        XCTAssertEqual(state.stack, [.subscribers, .feed])
    }
}

extension ReducerTests {
    /// The feed follows like `tail -f` while the newest row is selected; moved away it holds
    /// still and counts what arrived above; `g` follows again; reopening starts at the newest.
    func testTheFeedFollowsTheNewestAndHoldsOnceMovedAway() {
        state = DashboardFixture.state(width: 120, height: 40)
        press(.char(":"))
        type("feed")
        press(.enter)
        var next: Int64 = 0
        func burst(_ count: Int) {
            let entries = (0..<count).map { _ -> IntakeLogEntry in
                next += 1
                return IntakeLogEntry(id: next, receivedDate: state.now, result: .stored, type: "DID_RENEW", originalTransactionId: "otid-\(next)")
            }
            _ = DashboardReducer.reduce(into: &state, .feedLoaded(entries.reversed(), rate: [count], now: state.now))
        }
        func rowOnScreen(_ id: Int64) -> Bool { DashboardRenderer.render(state).lines().joined(separator: "\n").contains("otid-\(id) ") }
        burst(5)
        burst(60)
        XCTAssertEqual(state.feed.visible[state.feed.selection].id, 65, "the newest is selected after a burst")
        XCTAssertTrue(rowOnScreen(65), DashboardRenderer.render(state).lines().joined(separator: "\n"))
        XCTAssertTrue(DashboardRenderer.render(state).lines()[0].contains("● live"))

        press(.char("j"), .char("j"))
        let held = state.feed.visible[state.feed.selection].id
        let before = DashboardRenderer.render(state).lines()
        burst(12)
        XCTAssertEqual(state.feed.visible[state.feed.selection].id, held, "moved away, the selection stays on its row")
        let after = DashboardRenderer.render(state).lines()
        XCTAssertEqual(Array(after[4...]), Array(before[4...]), "the rows on screen hold still")
        XCTAssertTrue(after[0].contains("held · 12 new ↑"), after[0])
        XCTAssertTrue(after[1].contains("held · 12 new ↑"), after[1])
        XCTAssertFalse(rowOnScreen(77))

        press(.char("g"))
        XCTAssertEqual(state.feed.visible[state.feed.selection].id, 77)
        XCTAssertTrue(DashboardRenderer.render(state).lines()[1].contains("following"))
        burst(3)
        XCTAssertEqual(state.feed.visible[state.feed.selection].id, 80, "following again after g")

        press(.char("j"), .char("j"), .char("j"))
        for line in ["health", "feed"] {
            press(.char(":"))
            type(line)
            press(.enter)
        }
        burst(2)
        XCTAssertEqual(state.feed.visible[state.feed.selection].id, 82, ":feed again opens at the newest, following")
        XCTAssertTrue(rowOnScreen(82))

        press(.char(" "))
        burst(4)
        XCTAssertEqual(state.feed.visible[state.feed.selection].id, 82, "Space pauses: nothing new is shown")
        XCTAssertTrue(DashboardRenderer.render(state).lines()[0].contains("paused"))
        press(.char(" "))
        XCTAssertEqual(state.feed.visible[state.feed.selection].id, 86, "resumed at the newest, it follows")
    }

    /// The quarantine (like the audit log) follows its newest entry the same way, and holds once moved away.
    func testTheQuarantineFollowsItsNewestEntryAndHoldsOnceMovedAway() {
        press(.char(":"))
        type("quarantine")
        press(.enter)
        func entry(_ id: Int64) -> QuarantineEntry {
            QuarantineEntry(id: id, receivedDate: state.now, reason: "body: not valid JSON", body: Data("x".utf8), source: nil,
                            bodyBytes: 1, timesSeen: 1, lastSeen: state.now)
        }
        _ = DashboardReducer.reduce(into: &state, .quarantineLoaded([entry(2), entry(1)]))
        _ = DashboardReducer.reduce(into: &state, .quarantineLoaded([entry(3), entry(2), entry(1)]))
        XCTAssertEqual(state.quarantine.entries[state.quarantine.selection].id, 3, "on the newest, the newest stays selected")
        press(.char("j"))
        _ = DashboardReducer.reduce(into: &state, .quarantineLoaded([entry(4), entry(3), entry(2), entry(1)]))
        XCTAssertEqual(state.quarantine.entries[state.quarantine.selection].id, 2, "moved away, the selection holds")
    }

    /// On its first row the subscriber list follows the top when the store changes; moved
    /// down, it reloads around the selected row.
    func testTheSubscriberListFollowsItsTopRow() {
        state.now = 10_000
        _ = DashboardReducer.reduce(into: &state, .start)
        let rows = ["2000000400000101", "2000000400000201", "2000000400000301"].map { ReducerTests.row($0) }
        _ = DashboardReducer.reduce(into: &state, .subscribersLoaded(DashboardReducer.firstPage(state),
                                                                     SubscriberPage(rows: rows, reachesStart: true, reachesEnd: true)))
        guard case .loadSubscribers(let top)? = DashboardReducer.reduce(into: &state, .storeChanged).first else { return XCTFail() }
        XCTAssertEqual(top.position, .first, "on the first row, the first page again")
        press(.char("j"))
        state.now += 5000
        guard case .loadSubscribers(let around)? = DashboardReducer.reduce(into: &state, .storeChanged).first else { return XCTFail() }
        XCTAssertNotEqual(around.position, .first, "moved down, the list keeps its place")
    }

    /// `/` starts a new filter rather than appending to the one kept; Esc puts the kept one back.
    func testSlashStartsAFreshFilter() {
        press(.char(":"))
        type("feed")
        press(.enter)
        press(.char("/"))
        type("renew")
        press(.enter)
        XCTAssertEqual(state.feed.filter, "renew")
        press(.char("/"))
        XCTAssertEqual(state.prompt?.text, "", "a fresh filter")
        type("exp")
        XCTAssertEqual(state.feed.filter, "exp")
        press(.escape)
        XCTAssertEqual(state.feed.filter, "renew", "Esc puts the kept filter back")
    }

    func testStoreChangesReloadAtMostEveryTwoSecondsExceptTheFeed() {
        state.now = 10_000
        XCTAssertEqual(DashboardReducer.reduce(into: &state, .storeChanged).count, 2, "the first change reloads at once")
        XCTAssertTrue(DashboardReducer.reduce(into: &state, .storeChanged).isEmpty)
        XCTAssertTrue(DashboardReducer.reduce(into: &state, .tick(now: 11_000)).isEmpty)
        XCTAssertEqual(DashboardReducer.reduce(into: &state, .tick(now: 12_000)).count, 2, "the pending change is picked up later")
        XCTAssertTrue(DashboardReducer.reduce(into: &state, .tick(now: 15_000)).isEmpty, "nothing pending, nothing loaded")

        press(.char(":"))
        type("feed")
        press(.enter)
        XCTAssertEqual(DashboardReducer.reduce(into: &state, .storeChanged), [.pollFeed(afterId: 0)])
        XCTAssertEqual(DashboardReducer.reduce(into: &state, .storeChanged), [.pollFeed(afterId: 0)])
    }

    func testAReplacedStoreIsReadFromItsFirstRowOnEveryScreen() {
        press(.char(":"))
        type("feed")
        press(.enter)
        press(.char("/"))
        type("RENEW")
        press(.enter)
        let old = (1...3).map { IntakeLogEntry(id: 900 + Int64($0), receivedDate: state.now, result: .stored, type: "DID_RENEW") }
        _ = DashboardReducer.reduce(into: &state, .feedLoaded(old, rate: [], now: state.now))
        XCTAssertEqual(state.feed.lastId, 903)
        state.audit.entries = [AuditEntry(id: 7, at: state.now, operatorName: "ana", action: .overrideGrant, target: "otid-1", reason: nil, outcome: "placed")]
        state.audit.loaded = true

        let effects = DashboardReducer.reduce(into: &state, .storeFileReopened(path: "demo.db"))
        XCTAssertEqual(effects, [.pollFeed(afterId: 0), .loadHealth], "the new store's rows are numbered from the start")
        XCTAssertTrue(state.feed.entries.isEmpty, "no row of the old store stays on the feed")
        XCTAssertEqual(state.feed.filter, "RENEW", "what the operator chose stays")
        XCTAssertTrue(state.audit.entries.isEmpty)
        XCTAssertFalse(state.subscribers.loaded)
        XCTAssertEqual(state.flash?.text, "store replaced: reopened, showing the new store at demo.db")
        let fresh = [IntakeLogEntry(id: 2, receivedDate: state.now, result: .stored, type: "DID_RENEW")]
        _ = DashboardReducer.reduce(into: &state, .feedLoaded(fresh, rate: [], now: state.now))
        XCTAssertEqual(state.feed.entries.map(\.id), [2])

        guard case .loadSubscribers(let request)? = press(.escape, .escape).first else { return XCTFail("the list loads again") }
        XCTAssertEqual(request.position, .first, "not around a row of the old store")
    }
}

/// The subscribers list marks rows an override decides, and `y` copies the selected id.
final class ListMarksAndCopyTests: XCTestCase, RunsOnEveryEngine {
    var state = DashboardFixture.state(width: 120, height: 40)

    func load(_ rows: [SubscriptionRow], overrides: [String: Override.Kind]) {
        let request = SubscriberPageRequest(query: state.subscribers.query, position: .first, limit: DashboardReducer.pageLimit(state))
        _ = DashboardReducer.reduce(into: &state, .subscribersLoaded(request, SubscriberPage(
            rows: rows, reachesStart: true, reachesEnd: true, overrides: overrides)))
    }

    func line(_ id: String) -> String {
        DashboardRenderer.render(state).lines().first { $0.contains(id) } ?? ""
    }

    func testRowsAnOverrideDecidesAreMarkedAtEveryWidth() {
        let rows = ["2000000100000001", "2000000100000002", "2000000100000003"].map(ReducerTests.row)
        load(rows, overrides: ["2000000100000001": .grant, "2000000100000003": .revoke])
        for (width, height, grant, revoke) in [(120, 40, "grant", "revoke"), (80, 24, " G ", " R ")] {
            state.width = width
            state.height = height
            XCTAssertTrue(line("2000000100000001").contains(grant), line("2000000100000001"))
            XCTAssertTrue(line("2000000100000003").contains(revoke), line("2000000100000003"))
            XCTAssertFalse(line("2000000100000002").contains(grant) || line("2000000100000002").contains(revoke))
        }
        // A later page without the override (lifted meanwhile) clears the mark.
        load(rows, overrides: [:])
        XCTAssertFalse(line("2000000100000001").contains(" G "), line("2000000100000001"))
    }

    func testYCopiesTheSelectedIdAndRefusesAnythingButVisibleASCII() {
        state.width = 120
        state.height = 40
        load(["2000000100000001", "2000000100000002"].map(ReducerTests.row), overrides: [:])
        _ = DashboardReducer.reduce(into: &state, .key(.char("j")))
        XCTAssertEqual(DashboardReducer.reduce(into: &state, .key(.char("y"))), [.copyToClipboard("2000000100000002")])
        XCTAssertTrue(DashboardRenderer.render(state).lines().joined().contains("copied 2000000100000002"))

        var feedState = state
        feedState.stack = [.subscribers, .feed]
        feedState.feed.entries = [IntakeLogEntry(id: 1, receivedDate: DashboardFixture.anchor, result: .rejected, notificationUUID: nil,
                                                 type: nil, subtype: nil, originalTransactionId: "20\u{1B}]52;c;x\u{07}",
                                                 productId: nil, environment: nil, detail: "bad")]
        XCTAssertEqual(DashboardReducer.reduce(into: &feedState, .key(.char("y"))), [], "an id with control characters is not copied")
        XCTAssertEqual(feedState.flash?.kind, .error)
    }

    func testTheSessionHandsCopiedTextToTheBackendOnce() throws {
        let session = DashboardFixture.session(try DashboardFixture.demoStore())
        session.send(.key(.char("y")))
        let copied = session.takeClipboard()
        XCTAssertEqual(copied.count, 1)
        XCTAssertEqual(copied.first, session.state.subscribers.selectedRow?.state.originalTransactionId)
        XCTAssertEqual(session.takeClipboard(), [], "each text is sent once")
    }
}

/// `q` and `:q` while work runs on a worker: a question first, and each answer does what it says.
final class QuitWhileWorkingTests: XCTestCase {
    var state = DashboardFixture.state()

    func press(_ keys: Key...) {
        for key in keys { _ = DashboardReducer.reduce(into: &state, .key(key)) }
    }

    func testWithNothingRunningQQuitsAtOnce() {
        press(.char("q"))
        XCTAssertTrue(state.quitRequested)
    }

    func testYQuitsNowAndAnyOtherKeyStays() {
        _ = DashboardReducer.reduce(into: &state, .backgroundWorkChanged(["a ping waiting for Apple's TEST notification"]))
        press(.char("q"))
        XCTAssertFalse(state.quitRequested)
        let lines = DashboardRenderer.render(state).lines()
        XCTAssertTrue(lines.contains { $0.contains("a ping waiting for Apple's TEST notification") }, lines.joined(separator: "\n"))
        // At 80 columns the bottom line keeps the work's name and the keys; the dialog above
        // it says what quitting now loses.
        XCTAssertTrue(lines.last?.contains("y: now") == true, lines.last ?? "")
        XCTAssertTrue(lines.contains { $0.contains("quitting now loses it") }, lines.joined(separator: "\n"))
        press(.char("x"))
        XCTAssertFalse(state.quitRequested)
        XCTAssertNil(state.confirmation)
        for key in [":", "q"] { press(.char(Character(key))) }
        press(.enter)
        XCTAssertNotNil(state.confirmation, ":q asks too")
        press(.char("y"))
        XCTAssertTrue(state.quitRequested)
    }

    func testWQuitsWhenTheWorkIsDoneAndNotBefore() {
        _ = DashboardReducer.reduce(into: &state, .backgroundWorkChanged(["revalidating 2000000400000901 at Apple", "a backfill from Apple's notification history"]))
        press(.char("q"), .char("w"))
        XCTAssertFalse(state.quitRequested)
        _ = DashboardReducer.reduce(into: &state, .backgroundWorkChanged(["a backfill from Apple's notification history"]))
        XCTAssertFalse(state.quitRequested, "one job is still running")
        _ = DashboardReducer.reduce(into: &state, .backgroundWorkChanged([]))
        XCTAssertTrue(state.quitRequested)
    }
}
