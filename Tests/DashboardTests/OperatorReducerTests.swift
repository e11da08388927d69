import XCTest
@testable import SubscriptionCore
import TerminalUI
@testable import Dashboard

/// `r`, `o` and `:audit` through the pure reducer: effects are checked, not run.
final class OperatorReducerTests: XCTestCase {
    var state = DashboardFixture.state()
    let id = "2000000400001201"
    var now: Millis { DashboardFixture.anchor }

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

    /// The detail of an expired subscription, loaded, with `overrides` on it.
    func openDetail(overrides: [Override] = []) {
        state.stack = [.subscribers, .detail]
        state.detail = DetailState(originalTransactionId: id)
        _ = DashboardReducer.reduce(into: &state, .detailLoaded(originalTransactionId: id, content(overrides: overrides)))
    }

    func content(overrides: [Override]) -> DetailContent {
        var apple = ReducerTests.row(id).state
        apple.status = .expired
        apple.entitled = false
        apple.expiresDate = now - 15 * 86_400_000
        let report = SubscriptionReport(
            state: apple, entitlement: Entitlement.of(apple, overrides: overrides, now: now), overrides: overrides,
            history: SubscriptionHistory(originalTransactionId: id, transactions: [], renewal: nil, events: []),
            timeline: [TimelineEvent(date: now - 40 * 86_400_000, kind: .purchase, detail: "app.monthly")])
        return DetailContent(subscriber: Subscriber(id: 1, userId: "user-1013", appAccountToken: nil), report: report,
                             otherSubscriptions: [])
    }

    func override(_ number: Int64, _ kind: Override.Kind = .grant, lifted: Bool = false) -> Override {
        Override(id: number, originalTransactionId: id, kind: kind, until: now + 7 * 86_400_000, reason: "goodwill",
                 operatorName: "ana", created: now - 3_600_000, lifted: lifted ? now - 60_000 : nil,
                 liftedBy: lifted ? "ben" : nil, liftReason: lifted ? "done" : nil)
    }

    var screen: String { DashboardRenderer.render(state).lines().joined(separator: "\n") }

    func command(_ text: String) -> [DashboardEffect] {
        press(.char(":"))
        _ = type(text)
        return press(.enter)
    }

    func testExtendAsksBeforeAppleIsAskedAndChecksApplesRulesFirst() {
        XCTAssertEqual(command("extend 7 3 outage on 11-20"), [])
        XCTAssertEqual(state.flash?.kind, .error, ":extend needs a subscription's detail")
        press(.escape)
        openDetail()
        XCTAssertEqual(command("extend 95 3 outage"), [])
        XCTAssertTrue(state.flash?.text.contains("1 to 90 days") == true, "\(String(describing: state.flash))")
        press(.escape)
        XCTAssertEqual(command("extend 7 3 outage on 11-20"), [], "nothing before the answer")
        XCTAssertTrue(screen.contains("Extend \(id) by 7 days at Apple (code 3)? y: yes, any other key: no"), screen)
        XCTAssertEqual(press(.char("n")), [])
        XCTAssertEqual(state.flash?.text, "cancelled: nothing was asked of Apple")
        _ = command("extend 7 3 outage on 11-20")
        XCTAssertEqual(press(.char("y")), [.extendRenewal(originalTransactionId: id, days: 7, reasonCode: 3, reason: "outage on 11-20")])
        XCTAssertEqual(DashboardReducer.reduce(into: &state, .appleAnswered(originalTransactionId: id, message: "Apple extended it", failed: false)),
                       [.loadDetail(originalTransactionId: id)], "the detail reloads with Apple's new expiry")
    }

    /// Without the key settings `:extend` says what to set instead of asking y/n.
    func testExtendWithoutTheAPIKeySaysWhatItNeedsBeforeAsking() {
        state.withoutServerAPIKey = true
        openDetail()
        XCTAssertEqual(command("extend 7 3 outage on 11-20"), [])
        XCTAssertNil(state.confirmation, "asked y/n for an extension that cannot be sent")
        XCTAssertEqual(state.flash?.kind, .error)
        XCTAssertEqual(state.flash?.text,
                       "extending a renewal date needs the App Store Server API key: set api_key_file, api_key_id and api_issuer_id in the config file "
                       + "(or pass --api-key-file, --api-key-id, --api-issuer-id)")
        press(.escape)
        XCTAssertEqual(command("extend all app.monthly 3 3 outage"), [])
        XCTAssertNil(state.confirmation)
        XCTAssertTrue(state.flash?.text.hasPrefix("extending renewal dates for every active subscriber needs the App Store Server API") == true,
                      "\(String(describing: state.flash))")
    }

    // MARK: - r

    func testRStartsOneBackgroundRevalidationAndShowsItIsRunning() {
        openDetail()
        XCTAssertEqual(press(.char("r")), [.revalidate(originalTransactionId: id)])
        XCTAssertEqual(state.revalidating, id)
        XCTAssertTrue(DashboardRenderer.render(state).lines()[0].contains("revalidating …\(id.suffix(4)) 0s"), screen)
        _ = DashboardReducer.reduce(into: &state, .tick(now: state.now + 3_000))
        XCTAssertTrue(DashboardRenderer.render(state).lines()[0].contains("revalidating …\(id.suffix(4)) 3s"), "it shows how long it has waited")

        XCTAssertTrue(press(.char("r")).isEmpty, "a second r waits for the first")
        XCTAssertTrue(state.flash?.text.contains("already revalidating") ?? false)
        XCTAssertTrue(press(.char("j")).isEmpty, "the screen keeps taking keys meanwhile")
    }

    func testROnlyWorksOnALoadedDetail() {
        XCTAssertTrue(press(.char("r")).isEmpty, "r means nothing on the subscribers list")
        XCTAssertNil(state.revalidating)
        state.stack = [.subscribers, .detail]
        state.detail = DetailState(originalTransactionId: id)
        XCTAssertTrue(press(.char("r")).isEmpty)
        XCTAssertNil(state.revalidating)
    }

    func testRevalidationOutcomeShowsBeforeAndAfterAndReloadsTheDetail() {
        openDetail()
        press(.char("r"))
        var before = ReducerTests.row(id).state
        before.status = .expired
        before.entitled = false
        before.expiresDate = DateText.parse("2026-11-10T09:14:00Z")
        var after = before
        after.status = .active
        after.entitled = true
        after.expiresDate = DateText.parse("2026-12-10T09:14:00Z")
        let result = RevalidationResult(
            requestedId: id, originalTransactionId: id, source: .serverAPI(environment: .production), before: before,
            after: after, outcome: .renewed, changes: ["status EXPIRED -> ACTIVE"], newTransactionIds: ["2000000400001299"],
            appleStatus: 1, touched: [id], transactionCount: 3, renewalCount: 1, auditId: 7, dryRun: false)

        let effects = DashboardReducer.reduce(into: &state, .revalidated(result))
        XCTAssertEqual(effects, [.loadDetail(originalTransactionId: id)])
        XCTAssertNil(state.revalidating)
        XCTAssertEqual(state.flash?.kind, .info)
        XCTAssertEqual(state.flash?.text, "revalidated: renewed · EXPIRED → ACTIVE · "
                       + "expires 2026-11-10 09:14 → 2026-12-10 09:14 UTC · via App Store Server API (Production)")
        XCTAssertFalse(screen.contains("revalidating"))

        _ = DashboardReducer.reduce(into: &state, .tick(now: now + DashboardReducer.flashDuration))
        XCTAssertNotNil(state.flash, "an outcome stays up longer than an ordinary message")
    }

    func testRevalidationFailureNamesTheFaultWhereverTheOperatorWent() {
        openDetail()
        press(.char("r"))
        press(.escape)
        XCTAssertEqual(state.screen, .subscribers)
        let message = "revalidation is not configured: no App Store Server API key (api_key_file, api_key_id, api_issuer_id)"
        let effects = DashboardReducer.reduce(into: &state, .revalidationFailed(originalTransactionId: id, message: message))
        XCTAssertTrue(effects.isEmpty, "the detail is not on screen, so nothing reloads")
        XCTAssertNil(state.revalidating)
        XCTAssertEqual(state.flash?.kind, .error)
        XCTAssertEqual(state.flash?.text, "revalidation failed for \(id): \(message)", "away from the detail it names the subscription")
    }

    // MARK: - o

    func testOOpensTheDialogForAGrantWhenNoOverrideIsInForce() {
        openDetail()
        XCTAssertTrue(press(.char("o")).isEmpty)
        let dialog = try? XCTUnwrap(state.overrideDialog)
        XCTAssertEqual(dialog?.action, .grant)
        XCTAssertEqual(dialog?.fields, [.action, .until, .reason])
        XCTAssertEqual(dialog?.focus, .field(.action))
        let text = screen
        XCTAssertTrue(text.contains("┌ Override \(id) "), text)
        XCTAssertTrue(text.contains("Apple says EXPIRED, not entitled."), text)
        XCTAssertTrue(text.contains("◂ grant ▸"), text)
        XCTAssertTrue(text.contains("[ Grant ]  [ Cancel ]"), text)
        XCTAssertTrue(DashboardRenderer.render(state).lines()[0].contains("▸ override"), "the breadcrumb says where the keys go")
    }

    func testOPreselectsTheOverrideInForce() {
        openDetail(overrides: [override(3), override(1, lifted: true)])
        press(.char("o"))
        XCTAssertEqual(state.overrideDialog?.action, .lift)
        XCTAssertEqual(state.overrideDialog?.overrideNumber, "3")
        XCTAssertEqual(state.overrideDialog?.fields, [.action, .overrideNumber, .reason])
        XCTAssertTrue(screen.contains("Override #3 in force: grant until 2026-11-23 12:00 UTC, by ana."), screen)
    }

    func testActionIsChosenWithArrowsSpaceOrItsInitial() {
        openDetail(overrides: [override(3)])
        press(.char("o"))
        press(.right)
        XCTAssertEqual(state.overrideDialog?.action, .grant, "from lift, the choice wraps around to grant")
        press(.right)
        XCTAssertEqual(state.overrideDialog?.action, .revoke)
        press(.char(" "))
        XCTAssertEqual(state.overrideDialog?.action, .lift)
        press(.right)
        XCTAssertEqual(state.overrideDialog?.action, .grant, "the choice wraps around")
        press(.left)
        XCTAssertEqual(state.overrideDialog?.action, .lift)
        type("r")
        XCTAssertEqual(state.overrideDialog?.action, .revoke)
        XCTAssertEqual(state.overrideDialog?.until, "", "letters on the action field choose, they are not typed")
    }

    /// With no override in force there is nothing to lift: the dialog offers grant and revoke.
    func testLiftIsNotOfferedWithoutAnOverrideInForce() {
        openDetail()
        press(.char("o"))
        press(.right, .right)
        XCTAssertEqual(state.overrideDialog?.action, .grant, "grant, revoke, then grant again")
        press(.left)
        XCTAssertEqual(state.overrideDialog?.action, .revoke)
        type("l")
        XCTAssertEqual(state.overrideDialog?.action, .revoke, "l chooses nothing")
    }

    /// `:link` to another user says it moves the subscription from its owner, and needs `force`.
    func testLinkToAnotherUserSaysItMovesTheSubscription() {
        openDetail()
        _ = command("link user-2000")
        XCTAssertNil(state.confirmation)
        XCTAssertEqual(state.flash?.text, "\(id) is linked to user user-1013: :link user-2000 force moves it from that user")
        press(.escape)
        _ = command("link user-2000 force")
        XCTAssertEqual(state.confirmation?.question, "Link \(id) to user user-2000 (moves it from user user-1013)? y: yes, any other key: no")
        press(.char("n"))
        _ = command("link user-1013")
        XCTAssertEqual(state.confirmation?.question, "Link \(id) to user user-1013? y: yes, any other key: no")
    }

    func testTabAndArrowsMoveBetweenFieldsAndTypingEditsTheFocusedOne() {
        openDetail()
        press(.char("o"))
        press(.tab)
        XCTAssertEqual(state.overrideDialog?.focus, .field(.until))
        type("+7x")
        press(.backspace)
        type("d")
        press(.down)
        XCTAssertEqual(state.overrideDialog?.focus, .field(.reason))
        type("goodwill q")
        XCTAssertFalse(state.quitRequested, "q is text inside the dialog")
        press(.ctrl("u"))
        type("goodwill")
        press(.tab, .tab, .tab)
        XCTAssertEqual(state.overrideDialog?.focus, .field(.action), "Tab wraps after Cancel")
        press(.backTab, .up)
        XCTAssertEqual(state.overrideDialog?.focus, .confirm)
        press(.right)
        XCTAssertEqual(state.overrideDialog?.focus, .cancel)
        press(.left)
        XCTAssertEqual(state.overrideDialog?.until, "+7d")
        XCTAssertEqual(state.overrideDialog?.reason, "goodwill")
        XCTAssertEqual(state.overrideDialog?.focus, .confirm)
    }

    func testConfirmAsksYesOrNoThenAppliesTheRequest() {
        openDetail()
        press(.char("o"), .tab)
        type("2026-12-31")
        press(.tab)
        type("ticket 4411")
        XCTAssertTrue(press(.enter).isEmpty, "Enter on a field moves on")
        XCTAssertEqual(state.overrideDialog?.focus, .confirm)
        XCTAssertTrue(press(.enter).isEmpty, "Confirm only asks")
        let request = OverrideRequest(originalTransactionId: id, kind: .grant(until: DateText.parse("2026-12-31")!), reason: "ticket 4411")
        XCTAssertEqual(state.overrideDialog?.pending, request)
        XCTAssertTrue(screen.contains("Grant entitlement to \(id) until 2026-12-31 00:00 UTC? y/n"), screen)
        XCTAssertTrue(screen.contains("[ y  yes ]  [ n  no ]"), screen)
        XCTAssertTrue(DashboardRenderer.render(state).lines().last?.contains("y yes, do it") ?? false)

        press(.char("n"))
        XCTAssertNil(state.overrideDialog?.pending, "n goes back to the form")
        XCTAssertEqual(state.overrideDialog?.reason, "ticket 4411", "with what was typed")
        press(.enter)
        XCTAssertTrue(press(.char("x")).isEmpty, "only y or n answer")
        XCTAssertEqual(press(.char("y")), [.applyOverride(request)])
        XCTAssertNil(state.overrideDialog)
    }

    func testOffsetsAndTheChosenZoneAreReadForUntil() {
        state.time = ZonedTime(zone: TimeZone(identifier: "Europe/Paris")!)
        openDetail()
        press(.char("o"), .right, .tab)
        type("2026-12-31 12:00")
        press(.tab)
        type("chargeback")
        press(.tab, .enter)
        XCTAssertEqual(state.overrideDialog?.pending?.kind, .revoke(until: DateText.parse("2026-12-31T11:00:00Z")!))
        XCTAssertEqual(Selectors.confirmationQuestion(state.overrideDialog!.pending!, state),
                       "Revoke entitlement from \(id) until 2026-12-31 12:00 Europe/Paris? y/n")
        XCTAssertTrue(screen.contains("Revoke entitlement from \(id) until 2026-12-31 12:00"), screen)

        press(.escape, .tab, .tab, .tab, .ctrl("u"))
        press(.tab, .tab, .enter)
        XCTAssertEqual(state.overrideDialog?.pending?.kind, .revoke(until: nil), "a revoke may run until lifted")
        XCTAssertTrue(screen.contains("Revoke entitlement from \(id) until lifted? y/n"), screen)
    }

    func testValidationErrorsShowInTheDialogAndFocusTheField() {
        openDetail()
        press(.char("o"), .tab, .tab, .tab)
        XCTAssertEqual(state.overrideDialog?.focus, .confirm)
        press(.enter)
        XCTAssertEqual(state.overrideDialog?.error, "until: a grant needs an end (2026-12-31, 2026-12-31T12:00 or +7d)")
        XCTAssertEqual(state.overrideDialog?.focus, .field(.until))
        XCTAssertNil(state.overrideDialog?.pending)
        XCTAssertTrue(screen.contains("until: a grant needs an end"), screen)

        type("2026-13-45")
        XCTAssertNil(state.overrideDialog?.error, "editing clears the complaint")
        press(.tab, .tab, .enter)
        XCTAssertEqual(state.overrideDialog?.error, "until: 2026-13-45 is not a date (2026-12-31, 2026-12-31T12:00 or +7d)")

        press(.ctrl("u"))
        type("2026-11-01")
        press(.tab, .tab, .enter)
        XCTAssertEqual(state.overrideDialog?.error, "until: 2026-11-01 00:00 UTC has already passed")

        press(.ctrl("u"))
        type("+7d")
        press(.tab, .tab, .enter)
        XCTAssertEqual(state.overrideDialog?.error, "reason: required, it goes to the audit log")
        XCTAssertEqual(state.overrideDialog?.focus, .field(.reason))
        type("   ")
        press(.tab, .enter)
        XCTAssertEqual(state.overrideDialog?.focus, .field(.reason), "blank is no reason")
    }

    func testLiftChecksTheOverrideNumberAgainstThisSubscription() {
        openDetail(overrides: [override(3), override(1, lifted: true)])
        press(.char("o"), .tab, .ctrl("u"))
        type("9")
        press(.tab)
        type("resolved")
        press(.tab, .enter)
        XCTAssertEqual(state.overrideDialog?.error, "override: #9 is not one of this subscription's (open: #3)")
        XCTAssertEqual(state.overrideDialog?.focus, .field(.overrideNumber))
        press(.ctrl("u"))
        type("#1")
        press(.tab, .tab, .enter)
        XCTAssertEqual(state.overrideDialog?.error, "override: #1 was already lifted (open: #3)")
        press(.ctrl("u"))
        type("three")
        press(.tab, .tab, .enter)
        XCTAssertEqual(state.overrideDialog?.error, "override: three is not an override number (open: #3)")
        press(.ctrl("u"))
        type("3")
        press(.tab, .tab, .enter)
        XCTAssertEqual(state.overrideDialog?.pending, OverrideRequest(originalTransactionId: id, kind: .lift(overrideId: 3), reason: "resolved"))
        XCTAssertTrue(screen.contains("Lift override #3 (grant) from \(id)? y/n"), screen)
    }

    func testEscapeOrCancelClosesTheDialogWithoutEffects() {
        openDetail()
        press(.char("o"), .tab)
        type("+1d")
        XCTAssertTrue(press(.escape).isEmpty)
        XCTAssertNil(state.overrideDialog)
        XCTAssertEqual(state.stack, [.subscribers, .detail], "Esc closed the dialog, not the detail")
        press(.char("o"))
        XCTAssertEqual(state.overrideDialog?.until, "", "a new dialog starts empty")
        press(.backTab)
        XCTAssertEqual(state.overrideDialog?.focus, .cancel)
        XCTAssertTrue(press(.enter).isEmpty)
        XCTAssertNil(state.overrideDialog)
    }

    func testAppliedOverrideIsAnnouncedAndTheDetailReloads() {
        openDetail()
        let request = OverrideRequest(originalTransactionId: id, kind: .grant(until: now + 86_400_000), reason: "goodwill")
        var placed = override(4)
        placed.until = now + 86_400_000
        let inForce = "in force now: grant #4 (entitled until 2026-11-17 12:00 UTC)"
        let effects = DashboardReducer.reduce(into: &state, .overrideApplied(request, placed, inForce: inForce))
        XCTAssertEqual(effects, [.loadDetail(originalTransactionId: id)])
        XCTAssertEqual(state.flash?.text, "override #4 placed on \(id); \(inForce)")
    }

    func testDetailHeaderShowsTheOverrideInForceBesideApplesState() {
        openDetail(overrides: [override(3)])
        let lines = DashboardRenderer.render(state).lines()
        XCTAssertTrue(lines[2].contains("Status   EXPIRED  (Apple: not entitled, expired 15d 0h ago)"), lines[2])
        XCTAssertTrue(lines[3].contains("Override GRANT #3 · entitled until 2026-11-23 12:00 (in 7d 0h) · by ana: go"), lines[3])
        XCTAssertEqual(Layout.timelineRows(state), Layout.timelineRows(height: 24) - 1, "the timeline gives up the line")
    }

    // MARK: - :audit

    func testAuditCommandLoadsTheLogAndSlashFiltersByTarget() {
        press(.char(":"))
        type("au")
        XCTAssertEqual(state.prompt?.completions, ["audit"])
        XCTAssertEqual(press(.tab, .enter), [.loadAudit(filter: "")])
        XCTAssertEqual(state.stack, [.subscribers, .audit])

        let entries = [
            AuditEntry(id: 2, at: now, operatorName: "ana", action: .overrideGrant, target: id, reason: "goodwill",
                       outcome: "override #1 in force", detail: "until 2026-12-31T00:00:00.000Z"),
            AuditEntry(id: 1, at: now - 60_000, operatorName: "ben", action: .revalidate, target: "2000000400000901",
                       reason: nil, outcome: "failed", detail: "revalidation is not configured"),
        ]
        _ = DashboardReducer.reduce(into: &state, .auditLoaded(filter: "", entries))
        var text = screen
        XCTAssertTrue(text.contains("2 operator actions, newest first"), text)
        XCTAssertTrue(text.contains("2026-11-16 12:00 ana      grant"), text)
        XCTAssertTrue(text.contains("#2 2026-11-16 12:00:00 UTC, ana: override grant \(id) → override #1"), text)

        press(.char("/"))
        XCTAssertEqual(state.prompt?.kind, .filter)
        XCTAssertEqual(type("2000000400000901").last, .loadAudit(filter: "2000000400000901"), "the log is filtered as it is typed")
        XCTAssertEqual(press(.enter), [])
        _ = DashboardReducer.reduce(into: &state, .auditLoaded(filter: "", entries))
        XCTAssertTrue(state.audit.entries.isEmpty, "an answer for the old filter is dropped")
        _ = DashboardReducer.reduce(into: &state, .auditLoaded(filter: "2000000400000901", [entries[1]]))
        text = screen
        XCTAssertTrue(text.contains("target: 2000000400000901"), text)
        XCTAssertEqual(press(.enter), [.loadDetail(originalTransactionId: "2000000400000901")], "Enter opens the target")
        XCTAssertEqual(state.stack, [.subscribers, .audit, .detail])
        XCTAssertEqual(press(.escape), [.loadAudit(filter: "2000000400000901")])
        XCTAssertEqual(press(.escape), [.loadAudit(filter: "")], "Esc clears the filter first")
        XCTAssertEqual(state.stack, [.subscribers, .audit])
    }

    func testAuditCommandTakesATarget() {
        press(.char(":"))
        type("audit \(id)")
        XCTAssertEqual(press(.enter), [.loadAudit(filter: id)])
        XCTAssertEqual(state.audit.filter, id)
    }

    func testHelpOnTheDetailListsTheOperatorKeys() {
        openDetail()
        press(.char("?"))
        let text = screen
        XCTAssertTrue(text.contains("revalidate with Apple"), text)
        XCTAssertTrue(text.contains("override: grant/revoke/lift"), text)
    }
}
