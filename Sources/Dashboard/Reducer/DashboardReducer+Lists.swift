import SubscriptionCore
import TerminalUI

// The feed, the daily counts and the quarantine: screens whose rows are all in memory.
extension DashboardReducer {
    // MARK: - Feed

    static func feedCommand(_ command: KeyCommand, _ state: inout DashboardState) -> [DashboardEffect] {
        let rows = state.feed.visible
        if moveInList(command, &state.feed.selection, &state.feed.scrollOffset, count: rows.count,
                      visible: Layout.feedRows(height: state.height)) {
            // Back on the newest row (`g`, Home, or up to it): following again.
            if state.feed.following { state.feed.newer = 0 }
            return []
        }
        switch command {
        case .pause:
            state.feed.paused.toggle()
            if !state.feed.paused && !state.feed.held.isEmpty {
                let held = state.feed.held
                state.feed.held = []
                insertFeedEntries(held, &state)
            }
            flash(state.feed.paused ? "feed paused" : "feed resumed", &state)
            return []
        case .filter:
            state.prompt = PromptState.filter(replacing: state.feed.filter)
            return []
        case .open:
            guard rows.indices.contains(state.feed.selection) else { return [] }
            let entry = rows[state.feed.selection]
            if entry.result == .rejected {
                // A refused body is read in the quarantine, where it is kept with its reason.
                state.quarantine.pendingOpen = (entry.receivedDate, entry.detail ?? "")
                return show(.quarantine, &state)
            }
            guard let id = entry.originalTransactionId else {
                flash("this notification is about no subscription", &state)
                return []
            }
            return openDetail(id, &state)
        default:
            return []
        }
    }

    static func applyFeed(_ entries: [IntakeLogEntry], rate: [Int], now: Millis, readTo: Int64 = 0, _ state: inout DashboardState) {
        state.feed.rate = rate
        state.feed.lastPoll = now
        state.feed.loaded = true
        let fresh = entries.filter { $0.id > state.feed.lastId }.sorted { $0.id > $1.id }
        // Lines the read passed over (another app's) are not read again.
        state.feed.lastId = max(state.feed.lastId, readTo)
        guard let newest = fresh.first else { return }
        state.feed.lastId = max(state.feed.lastId, newest.id)
        if state.feed.paused {
            state.feed.held = Array((fresh + state.feed.held).prefix(FeedState.capacity))
        } else {
            insertFeedEntries(fresh, &state)
        }
    }

    /// Puts newer entries on top. While the selection is on the newest row it stays there
    /// and the new rows push in above the old ones (following). Once the operator moved
    /// away, the view holds still: the selection stays on its notification, the rows on
    /// screen stay where they were, and `newer` counts what arrived above them.
    static func insertFeedEntries(_ fresh: [IntakeLogEntry], _ state: inout DashboardState) {
        var feed = state.feed
        let before = feed.visible
        let selectedId = before.indices.contains(feed.selection) ? before[feed.selection].id : nil
        let following = feed.following
        feed.entries = Array((fresh + feed.entries).prefix(FeedState.capacity))
        let after = feed.visible
        if following {
            feed.followNewest()
        } else if let selectedId, let index = after.firstIndex(where: { $0.id == selectedId }) {
            let arrived = index - feed.selection
            feed.scrollOffset += arrived
            feed.selection = index
            feed.newer += arrived
        }
        let count = after.count
        feed.selection = min(feed.selection, max(0, count - 1))
        feed.scrollOffset = TableView.scrollOffset(current: feed.scrollOffset, selected: feed.selection,
                                                   visibleRows: Layout.feedRows(height: state.height), rowCount: count)
        state.feed = feed
    }

    // MARK: - Daily counts

    static func dailyCommand(_ command: KeyCommand, _ state: inout DashboardState) -> [DashboardEffect] {
        let count = state.daily.metrics.count
        let rows = Layout.daily(height: state.height, metrics: state.daily.metrics.count).tableRows
        switch command {
        case .previousMetric, .up: state.daily.metric -= 1
        case .nextMetric, .down: state.daily.metric += 1
        case .pageUp: state.daily.metric -= rows
        case .pageDown: state.daily.metric += rows
        case .top: state.daily.metric = 0
        case .bottom: state.daily.metric = count - 1
        case .earlierDays, .laterDays:
            let hidden = Selectors.hiddenDays(state.daily, width: state.width)
            guard hidden > 0 else {
                flash("every day of the range is on screen", &state)
                return []
            }
            let step = command == .earlierDays ? 7 : -7
            state.daily.dayOffset = min(max(0, state.daily.dayOffset + step), hidden)
        case .earlierRange:
            state.daily.endOffset += 7
            return [.loadDaily(Selectors.dailyRequest(state))]
        case .laterRange:
            guard state.daily.endOffset > 0 else {
                flash("the range already ends today", &state)
                return []
            }
            state.daily.endOffset = max(0, state.daily.endOffset - 7)
            return [.loadDaily(Selectors.dailyRequest(state))]
        case .cyclePeriod:
            let all = CountPeriod.allCases
            state.daily.period = all[((all.firstIndex(of: state.daily.period) ?? 0) + 1) % all.count]
            state.daily.dayOffset = 0
            return [.loadDaily(Selectors.dailyRequest(state))]
        case .cycleSegment:
            let all = DailySegment.allCases
            state.daily.segment = all[((all.firstIndex(of: state.daily.segment) ?? 0) + 1) % all.count]
            return [.loadDaily(Selectors.dailyRequest(state))]
        default:
            return []
        }
        clampDailyScroll(&state)
        return []
    }

    static func clampDailyScroll(_ state: inout DashboardState) {
        let count = state.daily.metrics.count
        state.daily.metric = min(max(0, state.daily.metric), count - 1)
        state.daily.scrollOffset = TableView.scrollOffset(current: state.daily.scrollOffset, selected: state.daily.metric,
                                                          visibleRows: Layout.daily(height: state.height, metrics: state.daily.metrics.count).tableRows,
                                                          rowCount: count)
    }

    static func applyDaily(_ request: DailyRequest, _ days: [DayCounts], _ state: inout DashboardState) {
        // Only the answer for the range, zone and segment now on screen.
        let current = Selectors.dailyRequest(state)
        guard request.zone == current.zone, request.segment == current.segment, request.to == current.to,
              request.period == current.period, request.filter == current.filter else { return }
        state.daily.request = request
        state.daily.days = days
        state.daily.loaded = true
    }

    // MARK: - Quarantine

    static func gapsCommand(_ command: KeyCommand, _ state: inout DashboardState) -> [DashboardEffect] {
        if moveInList(command, &state.gaps.selection, &state.gaps.scrollOffset, count: state.gaps.entries.count,
                      visible: Layout.listRows(height: state.height)) { return [] }
        guard command == .open, state.gaps.entries.indices.contains(state.gaps.selection) else { return [] }
        guard let otid = state.gaps.entries[state.gaps.selection].originalTransactionId else {
            flash("this notification is about no one subscription", &state)
            return []
        }
        return openDetail(otid, &state)
    }

    static func quarantineCommand(_ command: KeyCommand, _ state: inout DashboardState) -> [DashboardEffect] {
        if moveInList(command, &state.quarantine.selection, &state.quarantine.scrollOffset, count: state.quarantine.entries.count,
                      visible: Layout.listRows(height: state.height)) { return [] }
        guard command == .open, state.quarantine.entries.indices.contains(state.quarantine.selection) else { return [] }
        let entry = state.quarantine.entries[state.quarantine.selection]
        state.quarantine.openEntry = entry
        state.quarantine.bodyLines = bodyLines(entry, time: state.time)
        state.quarantine.bodyScroll = 0
        return show(.quarantineBody, &state)
    }

    static func bodyLines(_ entry: QuarantineEntry, time: ZonedTime) -> [String] {
        PayloadText.quarantinedLines(entry.body, time: time)
    }

    static func quarantineBodyCommand(_ command: KeyCommand, _ state: inout DashboardState) -> [DashboardEffect] {
        let visible = Layout.bodyRows(height: state.height)
        switch command {
        case .up: state.quarantine.bodyScroll -= 1
        case .down: state.quarantine.bodyScroll += 1
        case .pageUp: state.quarantine.bodyScroll -= visible
        case .pageDown: state.quarantine.bodyScroll += visible
        case .top: state.quarantine.bodyScroll = 0
        case .bottom: state.quarantine.bodyScroll = Int.max / 2
        default: return []
        }
        clampBodyScroll(&state)
        return []
    }

    static func clampBodyScroll(_ state: inout DashboardState) {
        guard state.quarantine.openEntry != nil else { return }
        let total = Selectors.wrappedBody(state).count
        let visible = Layout.bodyRows(height: state.height)
        state.quarantine.bodyScroll = min(max(0, state.quarantine.bodyScroll), max(0, total - visible))
    }

    static func applyQuarantine(_ entries: [QuarantineEntry], _ state: inout DashboardState) -> [DashboardEffect] {
        replaceKeepingSelection(&state.quarantine, with: entries, id: \.id, visible: Layout.listRows(height: state.height))
        guard let wanted = state.quarantine.pendingOpen else { return [] }
        state.quarantine.pendingOpen = nil
        // The feed's row names when the body was refused (its latest refusal) and why.
        func when(_ e: QuarantineEntry) -> Bool { e.lastSeen == wanted.at || e.receivedDate == wanted.at }
        guard let index = entries.firstIndex(where: { when($0) && wanted.reason.hasPrefix($0.reason) })
            ?? entries.firstIndex(where: when) else {
            flash("that body is no longer in the quarantine's newest \(QuarantineState.limit) (subdesk quarantine --all)", &state)
            return []
        }
        state.quarantine.selection = index
        return quarantineCommand(.open, &state)
    }

    /// Replaces a list's entries (newest first), keeping the selected entry selected while it
    /// is still there. On the newest row the list follows, as the feed does: newer entries
    /// come in above and the newest stays selected.
    static func replaceKeepingSelection<List: ReloadableList, ID: Equatable>(
        _ list: inout List, with entries: [List.Entry], id: (List.Entry) -> ID, visible: Int) {
        let following = list.selection == 0
        let selectedId = !following && list.entries.indices.contains(list.selection) ? id(list.entries[list.selection]) : nil
        list.entries = entries
        list.loaded = true
        if let selectedId, let index = entries.firstIndex(where: { id($0) == selectedId }) {
            list.selection = index
        }
        var selection = list.selection, scrollOffset = list.scrollOffset
        move(&selection, &scrollOffset, by: 0, count: entries.count, visible: visible)
        list.selection = selection
        list.scrollOffset = scrollOffset
    }
}

/// A list screen's state that reloads its entries from the store.
protocol ReloadableList {
    associatedtype Entry
    var entries: [Entry] { get set }
    var selection: Int { get set }
    var scrollOffset: Int { get set }
    var loaded: Bool { get set }
}

extension QuarantineState: ReloadableList {}
extension AuditState: ReloadableList {}

// MARK: - Refund requests

extension DashboardReducer {
    static func applyRefunds(_ entries: [RefundQueueEntry], _ state: inout DashboardState) {
        // The selection follows its request when the queue reorders under it.
        let selected = state.refunds.selected?.request.notificationUUID
        state.refunds.entries = entries
        state.refunds.loaded = true
        if let selected, let index = entries.firstIndex(where: { $0.request.notificationUUID == selected }) {
            state.refunds.selection = index
        } else {
            state.refunds.selection = min(state.refunds.selection, max(0, entries.count - 1))
        }
    }

    static func refundsCommand(_ command: KeyCommand, _ state: inout DashboardState) -> [DashboardEffect] {
        if moveInList(command, &state.refunds.selection, &state.refunds.scrollOffset, count: state.refunds.entries.count,
                      visible: Layout.listRows(height: state.height) - Layout.refundsPanelHeight) { return [] }
        guard let entry = state.refunds.selected else { return [] }
        switch command {
        case .open:
            guard let otid = entry.request.originalTransactionId else {
                flash("this request names no subscription", &state)
                return []
            }
            return openDetail(otid, &state)
        case .answerRefund:
            return askToAnswer(entry, answer: entry.suggested, &state)
        default:
            return []
        }
    }

    /// An action that needs the App Store Server API is refused at once, before any y/n
    /// question, when its key settings are missing (nothing could be sent); true when refused.
    static func refusedWithoutServerAPI(_ action: String, _ state: inout DashboardState) -> Bool {
        guard state.withoutServerAPIKey else { return false }
        let place = state.serverAPIKeyPlace
        flash(RevalidationError.needsServerAPI(action: action, place: place).description, shorter: [action + " " + place.brief, place.brief],
              error: true, &state)
        return true
    }

    /// Apple's rules and the deadline checked, then a y/n question before Apple is asked.
    static func askToAnswer(_ entry: RefundQueueEntry, answer: ConsumptionAnswer, _ state: inout DashboardState) -> [DashboardEffect] {
        let request = entry.request
        guard request.stage(now: state.now) == .open else {
            flash("refund request \(request.notificationUUID) is \(request.standing(now: state.now)): nothing to send", error: true, &state)
            return []
        }
        do {
            try answer.check(productType: entry.facts.productType)
        } catch {
            flash("\(error)", error: true, &state)
            return []
        }
        if refusedWithoutServerAPI(ServerAPIAction.refundAnswer, &state) { return [] }
        state.confirmation = DashboardState.Confirmation(
            question: "Send Apple \(answer.summary) for \(request.originalTransactionId ?? request.notificationUUID)? y: yes, any other key: no",
            effect: .answerRefund(notificationUUID: request.notificationUUID, answer: answer, reason: nil))
        return []
    }
}
