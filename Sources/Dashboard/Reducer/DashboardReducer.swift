import Foundation
import SubscriptionCore
import TerminalUI

/// The dashboard's logic: given a state and an action, the next state and the loads it needs.
///
/// Pure: no store, no terminal, no clock but the one in the state. The
/// runtime performs the effects and feeds their results back as actions, so
/// every key sequence can be tested by calling `reduce` alone.
public enum DashboardReducer {
    /// How long a flash message stays on the hint bar.
    static let flashDuration: Millis = 4000
    /// The feed refreshes at least this often, even when nothing was written, so its rate moves with the clock.
    static let feedRefreshInterval: Millis = 1000
    /// Other screens reload at most this often while the store keeps changing: their queries
    /// (status counts, daily counts) scan more than the feed's, and a busy intake writes many times a second.
    static let refreshInterval: Millis = 2000

    public static func reduce(_ state: DashboardState, _ action: DashboardAction) -> (DashboardState, [DashboardEffect]) {
        var next = state
        let effects = reduce(into: &next, action)
        return (next, effects)
    }

    public static func reduce(into state: inout DashboardState, _ action: DashboardAction) -> [DashboardEffect] {
        switch action {
        case .start:
            if let notice = state.standInNotice {
                flash("showing the demo store, not the configured one: " + notice
                      + "; overrides and revalidations made here go to the demo store", duration: 15_000, &state)
            }
            return enter(state.screen, &state)
        case .key(let key):
            return handleKey(key, &state)
        case .resize(let width, let height):
            state.width = width
            state.height = height
            return afterResize(&state)
        case .tick(let now):
            state.now = now
            if state.flash != nil && now >= state.flashUntil { state.flash = nil }
            var effects: [DashboardEffect] = []
            if state.screen == .feed && now - state.feed.lastPoll >= feedRefreshInterval {
                state.feed.lastPoll = now
                effects.append(.pollFeed(afterId: state.feed.lastId))
            }
            if (state.screen == .feed || state.screen == .health) && now - state.health.lastRequest >= HealthState.refreshInterval {
                state.health.lastRequest = now
                effects.append(.loadHealth)
            }
            if state.screen == .forward && now - state.forward.lastRequest >= ForwardScreenState.refreshInterval {
                state.forward.lastRequest = now
                effects.append(.loadForward)
            }
            return effects.isEmpty ? refreshIfDue(&state) : effects
        case .storeFileGone(let path):
            state.storeGone = true
            flash("store deleted or moved: showing what was loaded; it reopens when a store is back at \(path)",
                  error: true, &state)
            return []
        case .storeFileReopened(let path):
            state.storeGone = false
            flash("store replaced: reopened, showing the new store at \(path)", duration: 10_000, &state)
            forgetLoadedRows(&state)
            state.refreshPending = false
            state.lastRefresh = state.now
            return enter(state.screen, &state)
        case .storeChanged:
            // The feed is the live view: it follows every write, and its query reads only new rows.
            if state.screen == .feed { return refresh(.feed, &state) }
            state.refreshPending = true
            return refreshIfDue(&state)
        case .subscribersLoaded(let request, let page):
            return applyPage(request, page, &state)
        case .statusCountsLoaded(let counts, let total):
            state.subscribers.statusCounts = counts
            state.subscribers.totalCount = total
            return []
        case .detailLoaded(let id, let content):
            applyDetail(id, content, &state)
            return []
        case .payloadLoaded(let id, let key, let lines):
            applyPayload(id, key, lines, &state)
            return []
        case .feedLoaded(let entries, let rate, let now, let readTo):
            applyFeed(entries, rate: rate, now: now, readTo: readTo, &state)
            return []
        case .dailyLoaded(let request, let days):
            applyDaily(request, days, &state)
            return []
        case .quarantineLoaded(let entries):
            return applyQuarantine(entries, &state)
        case .gapsLoaded(let entries):
            state.gaps.entries = entries
            state.gaps.loaded = true
            state.gaps.selection = min(state.gaps.selection, max(0, entries.count - 1))
            return []
        case .retentionLoaded(let report):
            state.retention.report = report
            state.retention.loaded = true
            return []
        case .retentionContentLoaded(let environment, let records):
            applyRetentionContent(environment, records, &state)
            return []
        case .retentionRefreshed(let environment, let messages, let images):
            return applyRetentionRefresh(environment, messages: messages, images: images, &state)
        case .retentionConsoleAnswered(let message, let failed):
            flash(message, error: failed, duration: outcomeFlashDuration, &state)
            return state.screen == .retention ? [.loadRetentionContent(state.retention.environment)] : []
        case .retentionPerformanceTested(let requestId, let result, let message, let failed):
            if let result {
                state.retention.performance = result
                state.retention.performanceRequest = requestId
            }
            flash(message, error: failed, duration: outcomeFlashDuration, &state)
            return []
        case .healthLoaded(let signals, let now):
            state.health.signals = signals
            state.health.loaded = true
            state.health.readAt = now
            return []
        case .forwardLoaded(let rows, let now):
            state.forward.rows = rows
            state.forward.loaded = true
            state.forward.readAt = now
            return []
        case .cohortsLoaded(let request, let report):
            applyCohorts(request, report, &state)
            return []
        case .cohortsRefused(let request, let message):
            return refuseCohorts(request, message, &state)
        case .refundsLoaded(let entries):
            applyRefunds(entries, &state)
            return []
        case .refundAnswered(let message, let failed):
            flash(message, error: failed, &state)
            return state.screen == .refunds ? [.loadRefunds] : []
        case .consentLoaded(let withdrawals):
            applyConsent(withdrawals, &state)
            return []
        case .consentHandled(let message, let failed):
            flash(message, error: failed, &state)
            // The subscriber list's badge goes with the withdrawal, when the list is shown next.
            if !failed { state.refreshPending = true }
            return state.screen == .consent ? [.loadConsent] : []
        case .auditLoaded(let filter, let entries):
            applyAudit(filter, entries, &state)
            return []
        case .appleAnswered(let otid, let message, let failed):
            flash(message, error: failed, &state)
            if state.detail?.originalTransactionId == otid { return [.loadDetail(originalTransactionId: otid)] }
            return []
        case .orderLookedUp(let orderId, let otid, let message):
            guard let otid else {
                flash(message ?? "order \(orderId) not found", error: true, &state)
                return []
            }
            flash("order \(orderId) bought \(otid): stored from Apple's answer", &state)
            return openDetail(otid, &state)
        case .pinged(let message, let failed):
            state.pingStarted = nil
            flash(message, error: failed, &state)
            return []
        case .revalidated(let result):
            return applyRevalidation(result, &state)
        case .revalidationFailed(let id, let message):
            return applyRevalidationFailure(id, message, &state)
        case .overrideApplied(let request, let result, let inForce):
            return applyOverrideResult(request, result, inForce: inForce, &state)
        case .themeApplied(let name, let warnings):
            state.themeName = name
            flash(warnings.isEmpty ? "theme \(name)" : "theme \(name): \(warnings.joined(separator: "; "))",
                  error: !warnings.isEmpty, &state)
            return []
        case .failed(let message):
            flash(message, error: true, &state)
            return []
        case .notice(let message):
            flash(message, &state)
            return []
        case .backgroundWorkChanged(let running):
            state.runningWork = running
            if running.isEmpty && state.quitWhenIdle { state.quitRequested = true }
            return []
        }
    }

    // MARK: - Quitting

    /// `q`, `:q`: quits at once unless work is running on a worker. A revalidation or an
    /// extension that has reached Apple is audited when its answer comes back; quitting
    /// before then would lose the answer and the audit entry, so the operator is asked.
    static func requestQuit(_ state: inout DashboardState) -> [DashboardEffect] {
        guard !state.runningWork.isEmpty else {
            state.quitRequested = true
            return []
        }
        state.showsHelp = false
        state.showsMessages = false
        // In the bottom line's words, whole; the line words it to fit its width.
        state.confirmation = DashboardState.Confirmation(
            question: String(Selectors.quitQuestion(state.runningWork, width: .max).dropFirst()), onYes: .quit)
        return []
    }

    static func answerQuitQuestion(_ key: Key, _ state: inout DashboardState) -> [DashboardEffect] {
        switch key {
        case .char("y"), .char("Y"):
            state.quitRequested = true
        case .char("w"), .char("W"):
            if state.runningWork.isEmpty {
                state.quitRequested = true
            } else {
                state.quitWhenIdle = true
                flash("quitting once this is done: \(state.runningWork.joined(separator: "; "))", &state)
            }
        default:
            flash("not quitting: \(state.runningWork.isEmpty ? "nothing is running any more" : state.runningWork.joined(separator: "; ") + " goes on")", &state)
        }
        return []
    }

    /// Drops every row loaded from a store that another file has replaced. Rows, selections
    /// and cursors (the feed's last row id, the list's keyset position) belong to the old
    /// file: a new store numbers its rows from the start, so a cursor kept from the old one
    /// would sit above every new row and hide them. What the operator chose (filters, sort,
    /// status tab, pause, the daily range) stays.
    static func forgetLoadedRows(_ state: inout DashboardState) {
        var list = SubscriberListState()
        list.query = state.subscribers.query
        list.statusFilter = state.subscribers.statusFilter
        list.pageSize = state.subscribers.pageSize
        state.subscribers = list

        var feed = FeedState()
        feed.paused = state.feed.paused
        feed.filter = state.feed.filter
        feed.lastPoll = state.feed.lastPoll
        state.feed = feed

        var audit = AuditState()
        audit.filter = state.audit.filter
        state.audit = audit
        state.quarantine.entries = []
        state.quarantine.selection = 0
        state.quarantine.scrollOffset = 0
        state.quarantine.loaded = false
        state.gaps = GapsState()
        var retention = RetentionState()
        retention.grouping = state.retention.grouping
        retention.pane = state.retention.pane
        retention.environment = state.retention.environment
        state.retention = retention
        state.health = HealthState()
        state.forward = ForwardScreenState()
        state.refunds = RefundsState()
        var consent = ConsentState()
        consent.includeHandled = state.consent.includeHandled
        state.consent = consent
        state.daily.days = []
        state.daily.request = nil
        state.daily.loaded = false
        state.cohorts.report = nil
        state.cohorts.asked = nil
        if var detail = state.detail {
            // The same subscription, if the new store has it, read afresh.
            detail.content = nil
            detail.expanded = [:]
            detail.selection = 0
            detail.scrollOffset = 0
            detail.missing = nil
            state.detail = detail
        }
    }

    static func refreshIfDue(_ state: inout DashboardState) -> [DashboardEffect] {
        guard state.refreshPending, state.now - state.lastRefresh >= refreshInterval else { return [] }
        // Under help, a half-typed prompt or the dialog a reload would only move things the operator cannot see or act on.
        guard !state.showsHelp, !state.showsMessages, state.prompt == nil, state.overrideDialog == nil else { return [] }
        state.refreshPending = false
        state.lastRefresh = state.now
        return refresh(state.screen, &state)
    }

    /// Shows a message on the bottom line and keeps it in the session's history. An error
    /// stays until Esc dismisses it (an operator away from the screen must not miss it);
    /// other messages go after `duration`.
    /// `shorter`: the same meaning in fewer words, longest first, for a line too narrow for
    /// `text` (the history keeps `text`).
    static func flash(_ text: String, shorter: [String] = [], error: Bool = false, duration: Millis = flashDuration,
                      _ state: inout DashboardState) {
        state.flash = FlashMessage(text, kind: error ? .error : .info, shorter: shorter)
        state.flashUntil = error ? Millis.max : state.now + duration
        state.messages.append(LoggedMessage(at: state.now, text: text, isError: error))
        if state.messages.count > maxMessages { state.messages.removeFirst(state.messages.count - maxMessages) }
    }

    /// How many messages `:messages` keeps.
    static let maxMessages = 500

    // MARK: - Keys

    static func handleKey(_ key: Key, _ state: inout DashboardState) -> [DashboardEffect] {
        if key == .resize { return [] }
        if state.isTooSmall {
            // Nothing else can be seen, so nothing else is acted on.
            if state.keys.command(for: key, on: state.screen) == .quit { state.quitRequested = true }
            return []
        }
        if state.overrideDialog != nil { return handleDialogKey(key, &state) }
        if state.prompt != nil { return handlePromptKey(key, &state) }
        if let confirmation = state.confirmation {
            state.confirmation = nil
            if case .quit = confirmation.onYes { return answerQuitQuestion(key, &state) }
            if case .record(let effect) = confirmation.onYes {
                guard key == .char("y") || key == .char("Y") else {
                    flash("cancelled: nothing was recorded", &state)
                    return []
                }
                return [effect]
            }
            guard key == .char("y") || key == .char("Y"), case .ask(let effect) = confirmation.onYes else {
                flash("cancelled: nothing was asked of Apple", &state)
                return []
            }
            flash("asking Apple…", &state)
            return [effect]
        }
        if state.showsHelp || state.showsMessages {
            switch state.keys.command(for: key, on: state.screen) {
            case .help?, .back?:
                state.showsHelp = false
                state.showsMessages = false
            case .quit?: return requestQuit(&state)
            default: break
            }
            return []
        }
        // Esc first dismisses an error message that stays until seen.
        if state.flash?.kind == .error, state.keys.command(for: key, on: state.screen) == .back {
            state.flash = nil
            return []
        }
        guard let command = state.keys.command(for: key, on: state.screen) else { return [] }
        return perform(command, key: key, &state)
    }

    static func perform(_ command: KeyCommand, key: Key, _ state: inout DashboardState) -> [DashboardEffect] {
        switch command {
        case .quit:
            return requestQuit(&state)
        case .help:
            state.showsHelp = true
            return []
        case .commandLine:
            var prompt = PromptState(kind: .command)
            prompt.completions = DashboardCommandLine.completions(for: "", state: state)
            state.prompt = prompt
            return []
        case .back:
            return back(&state)
        case .cycleZone:
            return cycleZone(&state)
        case .copyId:
            return copySelectedId(&state)
        default:
            break
        }
        // A write this login may not make is refused before any dialog or question, in the CLI's words.
        if let write = command.write, let refusal = state.login.refusal(write) {
            flash(refusal, shorter: state.login.briefRefusal(write), error: true, &state)
            return []
        }
        switch state.screen {
        case .subscribers: return subscribersCommand(command, key: key, &state)
        case .detail: return detailCommand(command, &state)
        case .feed: return feedCommand(command, &state)
        case .daily: return dailyCommand(command, &state)
        case .quarantine: return quarantineCommand(command, &state)
        case .quarantineBody: return quarantineBodyCommand(command, &state)
        case .audit: return auditCommand(command, &state)
        case .gaps: return gapsCommand(command, &state)
        case .refunds: return refundsCommand(command, &state)
        case .consent: return consentCommand(command, &state)
        case .retention: return retentionCommand(command, &state)
        case .health, .forward: return []
        case .cohorts: return cohortsCommand(command, &state)
        }
    }

    // MARK: - Copying

    /// The id of what is selected on the current screen: a subscription's original
    /// transaction id, or a feed row's notification UUID when it names no subscription.
    static func selectedId(_ state: DashboardState) -> String? {
        switch state.screen {
        case .subscribers:
            return state.subscribers.selectedRow?.state.originalTransactionId
        case .detail:
            return state.detail?.originalTransactionId
        case .feed:
            let rows = state.feed.visible
            guard rows.indices.contains(state.feed.selection) else { return nil }
            return rows[state.feed.selection].originalTransactionId ?? rows[state.feed.selection].notificationUUID
        case .audit:
            guard state.audit.entries.indices.contains(state.audit.selection) else { return nil }
            return state.audit.entries[state.audit.selection].target
        case .refunds:
            return state.refunds.selected.map { $0.request.originalTransactionId ?? $0.request.notificationUUID }
        case .consent:
            // The notification UUID is what `subdesk consent handle` takes.
            return state.consent.selected?.notificationUUID
        default:
            return nil
        }
    }

    /// `y`: hands the selected id to the terminal backend for its clipboard. Only plain
    /// visible ASCII is copied: a clipboard is pasted into shells, and an id from a payload
    /// holding anything else is shown escaped, never handed on.
    static func copySelectedId(_ state: inout DashboardState) -> [DashboardEffect] {
        guard let id = selectedId(state) else {
            flash("nothing selected to copy", &state)
            return []
        }
        guard !id.isEmpty, id.count <= 256, id.unicodeScalars.allSatisfy({ (0x21...0x7E).contains($0.value) }) else {
            flash("not copied: \(SafeText.sanitize(id)) holds characters other than visible ASCII", error: true, &state)
            return []
        }
        flash("copied \(id) (OSC 52: the terminal decides whether it may set the clipboard)", &state)
        return [.copyToClipboard(id)]
    }

    // MARK: - Navigation

    /// Shows `screen`: back to it if it is already on the way here, else on top.
    static func show(_ screen: ScreenID, _ state: inout DashboardState) -> [DashboardEffect] {
        state.showsHelp = false
        if let index = state.stack.firstIndex(of: screen) {
            state.stack.removeSubrange((index + 1)...)
        } else {
            state.stack.append(screen)
        }
        return enter(screen, &state)
    }

    /// Switches to a top-level screen, as `:` commands do: the subscribers list stays underneath, so Esc goes home.
    static func switchTo(_ screen: ScreenID, _ state: inout DashboardState) -> [DashboardEffect] {
        state.showsHelp = false
        state.stack = screen == .subscribers ? [.subscribers] : [.subscribers, screen]
        // The feed opened again starts at the newest row, following (Esc back to it keeps its place).
        if screen == .feed { state.feed.followNewest() }
        return enter(screen, &state)
    }

    /// The loads a screen needs when it comes into view.
    static func enter(_ screen: ScreenID, _ state: inout DashboardState) -> [DashboardEffect] {
        switch screen {
        case .subscribers:
            if !state.subscribers.loaded {
                return [.loadSubscribers(firstPage(state)), .loadStatusCounts]
            }
            return refresh(.subscribers, &state)
        case .detail:
            guard let detail = state.detail else { return [] }
            return [.loadDetail(originalTransactionId: detail.originalTransactionId)]
        case .feed:
            state.feed.lastPoll = state.now
            state.health.lastRequest = state.now
            return [.pollFeed(afterId: state.feed.lastId), .loadHealth]
        case .daily:
            return [.loadDaily(Selectors.dailyRequest(state))]
        case .quarantine:
            return [.loadQuarantine]
        case .quarantineBody:
            return []
        case .audit:
            return [.loadAudit(filter: state.audit.filter)]
        case .gaps:
            return [.loadGaps]
        case .refunds:
            return [.loadRefunds]
        case .consent:
            return [.loadConsent]
        case .health:
            state.health.lastRequest = state.now
            return [.loadHealth]
        case .retention:
            return [.loadRetention(Selectors.retentionQuery(state), state.retention.grouping), .loadRetentionContent(state.retention.environment)]
        case .forward:
            state.forward.lastRequest = state.now
            return [.loadForward]
        case .cohorts:
            return askCohorts(state.cohorts.choice, &state)
        }
    }

    /// Reloads what `screen` shows after the store changed, keeping the operator's place.
    static func refresh(_ screen: ScreenID, _ state: inout DashboardState) -> [DashboardEffect] {
        switch screen {
        case .subscribers:
            let list = state.subscribers
            // On the first row the list follows, as the feed does: what moved to the top is shown there.
            guard let row = list.selectedRow, !(list.selection == 0 && list.atStart) else {
                return [.loadSubscribers(firstPage(state)), .loadStatusCounts]
            }
            let request = SubscriberPageRequest(query: list.query, position: .around(SubscriptionTable.cursor(for: row, in: list.query)),
                                                limit: pageLimit(state),
                                                keep: row.state.originalTransactionId)
            return [.loadSubscribers(request), .loadStatusCounts]
        case .feed:
            state.feed.lastPoll = state.now
            return [.pollFeed(afterId: state.feed.lastId)]
        case .detail, .daily, .quarantine, .audit, .gaps, .refunds, .consent, .health, .forward, .cohorts, .retention:
            return enter(screen, &state)
        case .quarantineBody:
            return []
        }
    }

    static func back(_ state: inout DashboardState) -> [DashboardEffect] {
        switch state.screen {
        case .subscribers where !state.subscribers.query.text.isEmpty:
            state.subscribers.query.text = ""
            return [.loadSubscribers(firstPage(state))]
        case .feed where !state.feed.filter.isEmpty:
            state.feed.filter = ""
            state.feed.followNewest()
            return []
        case .audit where !state.audit.filter.isEmpty:
            return setAuditFilter("", &state)
        default:
            break
        }
        guard state.stack.count > 1 else { return [] }
        state.stack.removeLast()
        return enter(state.screen, &state)
    }

    static func cycleZone(_ state: inout DashboardState) -> [DashboardEffect] {
        let choices = state.zoneChoices
        guard !choices.isEmpty else { return [] }
        let current = choices.firstIndex { TimeZone(identifier: $0).map(ZonedTime.label) == state.time.label } ?? -1
        let name = choices[(current + 1) % choices.count]
        return setZone(name, &state)
    }

    static func setZone(_ name: String, _ state: inout DashboardState) -> [DashboardEffect] {
        guard let zone = TimeZoneName.zone(name) else {
            flash(TimeZoneName.unknown(name), error: true, &state)
            return []
        }
        state.time = ZonedTime(zone: zone)
        flash("time zone \(state.time.label)", &state)
        switch state.screen {
        case .daily:
            return [.loadDaily(Selectors.dailyRequest(state))]
        case .detail:
            return reloadExpanded(&state)
        case .quarantineBody:
            if let entry = state.quarantine.openEntry {
                state.quarantine.bodyLines = bodyLines(entry, time: state.time)
            }
            return []
        default:
            return []
        }
    }

    static func afterResize(_ state: inout DashboardState) -> [DashboardEffect] {
        let rows = Layout.listRows(height: state.height)
        state.subscribers.scrollOffset = TableView.scrollOffset(current: state.subscribers.scrollOffset,
                                                                selected: state.subscribers.selection,
                                                                visibleRows: Layout.subscriberRows(height: state.height), rowCount: state.subscribers.rows.count)
        state.feed.scrollOffset = TableView.scrollOffset(current: state.feed.scrollOffset, selected: state.feed.selection,
                                                         visibleRows: Layout.feedRows(height: state.height), rowCount: state.feed.visible.count)
        state.quarantine.scrollOffset = TableView.scrollOffset(current: state.quarantine.scrollOffset,
                                                               selected: state.quarantine.selection,
                                                               visibleRows: rows, rowCount: state.quarantine.entries.count)
        state.audit.scrollOffset = TableView.scrollOffset(current: state.audit.scrollOffset, selected: state.audit.selection,
                                                          visibleRows: Layout.auditRows(height: state.height),
                                                          rowCount: state.audit.entries.count)
        clampDetailScroll(&state)
        clampDailyScroll(&state)
        clampCohortsScroll(&state)
        clampBodyScroll(&state)
        return prefetchSubscribers(state)
    }

    // MARK: - Prompt

    static func handlePromptKey(_ key: Key, _ state: inout DashboardState) -> [DashboardEffect] {
        guard var prompt = state.prompt else { return [] }
        var edited = false
        switch key {
        case .escape:
            state.prompt = nil
            // A filter applied while typing goes back to what it was.
            if prompt.kind == .filter && prompt.text != prompt.original { return applyFilter(prompt.original, &state) }
            switch prompt.kind {
            case .consentReason: flash("cancelled: nothing was recorded", &state)
            case .retentionDefault, .retentionPerformanceTest: flash("cancelled: nothing was asked of Apple", &state)
            case .command, .filter: break
            }
            return []
        case .enter:
            state.prompt = nil
            return submit(prompt, &state)
        case .char(let c):
            prompt.insert(c)
            edited = true
        case .backspace:
            if !prompt.deleteBackward() && prompt.text.isEmpty {
                state.prompt = nil
                return prompt.kind == .filter && !prompt.original.isEmpty ? applyFilter("", &state) : []
            }
            edited = true
        case .delete:
            prompt.deleteForward()
            edited = true
        case .ctrl("u"):
            prompt.setText("")
            edited = true
        case .left:
            prompt.cursor = max(0, prompt.cursor - 1)
        case .right:
            prompt.cursor = min(prompt.text.count, prompt.cursor + 1)
        case .home, .ctrl("a"):
            prompt.cursor = 0
        case .end, .ctrl("e"):
            prompt.cursor = prompt.text.count
        case .tab, .backTab:
            if prompt.kind == .command {
                DashboardCommandLine.complete(&prompt, backward: key == .backTab)
            }
        default:
            break
        }
        if edited && prompt.kind == .command {
            prompt.completions = DashboardCommandLine.completions(for: prompt.text, state: state)
            prompt.selectedCompletion = nil
        }
        state.prompt = prompt
        // A filter narrows the list with every character typed.
        return edited && prompt.kind == .filter ? applyFilter(prompt.text, &state) : []
    }

    static func submit(_ prompt: PromptState, _ state: inout DashboardState) -> [DashboardEffect] {
        switch prompt.kind {
        case .command:
            return DashboardCommandLine.execute(prompt.text, &state)
        case .consentReason(let uuid):
            return askToMarkConsentHandled(uuid, reason: prompt.text, &state)
        case .retentionDefault(let messageId):
            return askToSetRetentionDefault(messageId, prompt.text, &state)
        case .retentionPerformanceTest:
            return askToRunPerformanceTest(prompt.text, &state)
        case .filter:
            var effects = applyFilter(prompt.text, &state)
            // An order id from a customer's receipt matches nothing stored: ask Apple.
            let typed = prompt.text.trimmingCharacters(in: .whitespaces)
            if state.screen == .subscribers, state.subscribers.loaded, state.subscribers.rows.isEmpty, !state.subscribers.searchCut,
               AppStoreServerAPIClient.looksLikeOrderId(typed) {
                flash("no subscription matches \(typed); asking Apple whether it is an order id", &state)
                return effects + [.lookUpOrder(typed)]
            }
            // Enter asks for the whole list, not only what a keystroke's bounded read found.
            if state.screen == .subscribers && state.subscribers.query.scanLimit != nil {
                state.subscribers.query.scanLimit = nil
                if state.subscribers.searchCut && effects.isEmpty { effects = [.loadSubscribers(firstPage(state))] }
            }
            return effects
        }
    }

    /// Rows of the list a keystroke in the filter reads at most when its text matches too
    /// many rows for the trigram index to be the faster way (see `Store.textCondition`).
    public static let keystrokeScanLimit = SubscriptionQuery.keystrokeScanLimit

    /// Shows the current screen's list through `typed` (spaces around it ignored); nothing
    /// is loaded again when the filter is already that.
    static func applyFilter(_ typed: String, _ state: inout DashboardState) -> [DashboardEffect] {
        let text = typed.trimmingCharacters(in: .whitespaces)
        switch state.screen {
        case .subscribers:
            guard text != state.subscribers.query.text else { return [] }
            state.subscribers.query.text = text
            // While typing, each keystroke reads a bounded stretch of the list.
            state.subscribers.query.scanLimit = text.isEmpty ? nil : keystrokeScanLimit
            return [.loadSubscribers(firstPage(state))]
        case .feed:
            guard text != state.feed.filter else { return [] }
            state.feed.filter = text
            state.feed.followNewest()
            return []
        case .audit:
            guard text != state.audit.filter else { return [] }
            return setAuditFilter(text, &state)
        default:
            return []
        }
    }

    // MARK: - Moving in lists held in memory

    /// Moves a selection by `delta` within `count` rows, keeping it on screen.
    static func move(_ selection: inout Int, _ scroll: inout Int, by delta: Int, count: Int, visible: Int) {
        guard count > 0 else { selection = 0; scroll = 0; return }
        selection = min(max(0, selection + delta), count - 1)
        scroll = TableView.scrollOffset(current: scroll, selected: selection, visibleRows: visible, rowCount: count)
    }

    /// Carries out a movement command in a list of `count` rows showing `visible`; false
    /// when `command` is no movement.
    static func moveInList(_ command: KeyCommand, _ selection: inout Int, _ scroll: inout Int, count: Int, visible: Int) -> Bool {
        guard let delta = delta(for: command, visible: visible, count: count) else { return false }
        move(&selection, &scroll, by: delta, count: count, visible: visible)
        return true
    }

    /// The row delta a movement command means in a list showing `visible` rows.
    static func delta(for command: KeyCommand, visible: Int, count: Int) -> Int? {
        switch command {
        case .up: return -1
        case .down: return 1
        case .pageUp: return -max(1, visible)
        case .pageDown: return max(1, visible)
        case .top: return -count
        case .bottom: return count
        default: return nil
        }
    }
}
