import SubscriptionCore
import TerminalUI

extension DashboardReducer {
    static func pageLimit(_ state: DashboardState) -> Int {
        state.subscribers.pageSize ?? Layout.pageLimit(height: state.height)
    }

    static func firstPage(_ state: DashboardState, target: Int? = 0) -> SubscriberPageRequest {
        SubscriberPageRequest(query: state.subscribers.query, position: .first,
                              limit: pageLimit(state), target: target)
    }

    static func subscribersCommand(_ command: KeyCommand, key: Key, _ state: inout DashboardState) -> [DashboardEffect] {
        let visible = Layout.subscriberRows(height: state.height)
        let list = state.subscribers
        switch command {
        case .up, .down, .pageUp, .pageDown:
            return moveSubscribers(by: delta(for: command, visible: visible, count: list.rows.count) ?? 0, &state)
        case .top:
            if list.atStart { return moveSubscribers(by: -list.selection, &state) }
            return [.loadSubscribers(firstPage(state))]
        case .bottom:
            if list.atEnd { return moveSubscribers(by: list.rows.count - 1 - list.selection, &state) }
            let request = SubscriberPageRequest(query: list.query, position: .last,
                                                limit: pageLimit(state))
            return [.loadSubscribers(request)]
        case .open:
            guard let row = list.selectedRow else { return [] }
            return openDetail(row.state.originalTransactionId, &state)
        case .filter:
            state.prompt = PromptState.filter(replacing: list.query.text)
            return []
        case .statusDigit:
            guard case .char(let c) = key, let digit = c.wholeNumberValue else { return [] }
            return setStatusFilter(digit == 0 ? nil : Selectors.statusOrder[min(digit, Selectors.statusOrder.count) - 1], &state)
        case .cycleStatus:
            let next: SubscriptionStatus?
            if let current = list.statusFilter, let index = Selectors.statusOrder.firstIndex(of: current) {
                next = index + 1 < Selectors.statusOrder.count ? Selectors.statusOrder[index + 1] : nil
            } else {
                next = Selectors.statusOrder.first
            }
            return setStatusFilter(next, &state)
        case .toggleSort:
            // Each sort starts in the order people want first: soonest expiry, latest activity.
            if list.query.sort == .expires {
                state.subscribers.query.sort = .lastEvent
                state.subscribers.query.descending = true
            } else {
                state.subscribers.query.sort = .expires
                state.subscribers.query.descending = false
            }
            return [.loadSubscribers(firstPage(state))]
        case .reverseSort:
            state.subscribers.query.descending.toggle()
            return [.loadSubscribers(firstPage(state))]
        default:
            return []
        }
    }

    static func setStatusFilter(_ status: SubscriptionStatus?, _ state: inout DashboardState) -> [DashboardEffect] {
        state.subscribers.statusFilter = status
        state.subscribers.query.statuses = status.map { [$0] } ?? []
        return [.loadSubscribers(firstPage(state))]
    }

    static func openDetail(_ originalTransactionId: String, _ state: inout DashboardState) -> [DashboardEffect] {
        if state.detail?.originalTransactionId != originalTransactionId {
            state.detail = DetailState(originalTransactionId: originalTransactionId)
        }
        if let index = state.stack.firstIndex(of: .detail) { state.stack.removeSubrange(index...) }
        state.stack.append(.detail)
        return enter(.detail, &state)
    }

    /// Moves the selection, asking for the neighbouring page when it would leave the window.
    static func moveSubscribers(by delta: Int, _ state: inout DashboardState) -> [DashboardEffect] {
        var list = state.subscribers
        guard !list.rows.isEmpty else { return [] }
        let target = list.selection + delta
        let limit = pageLimit(state)
        if target < 0 && !list.atStart {
            let cursor = SubscriptionTable.cursor(for: list.rows[0], in: list.query)
            return [.loadSubscribers(SubscriberPageRequest(query: list.query, position: .before(cursor), limit: limit, target: target))]
        }
        if target >= list.rows.count && !list.atEnd {
            let cursor = SubscriptionTable.cursor(for: list.rows[list.rows.count - 1], in: list.query)
            return [.loadSubscribers(SubscriberPageRequest(query: list.query, position: .after(cursor), limit: limit, target: target))]
        }
        list.selection = min(max(0, target), list.rows.count - 1)
        list.scrollOffset = TableView.scrollOffset(current: list.scrollOffset, selected: list.selection,
                                                   visibleRows: Layout.subscriberRows(height: state.height), rowCount: list.rows.count)
        state.subscribers = list
        return prefetchSubscribers(state)
    }

    /// Loads the next page early when the screen nears the window's edge, so it never shows a gap.
    static func prefetchSubscribers(_ state: DashboardState) -> [DashboardEffect] {
        let list = state.subscribers
        guard list.loaded, let first = list.rows.first, let last = list.rows.last else { return [] }
        let visible = Layout.subscriberRows(height: state.height)
        let limit = pageLimit(state)
        if !list.atEnd && list.scrollOffset + 2 * visible >= list.rows.count {
            return [.loadSubscribers(SubscriberPageRequest(query: list.query, position: .after(SubscriptionTable.cursor(for: last, in: list.query)),
                                                           limit: limit))]
        }
        if !list.atStart && list.scrollOffset < visible {
            return [.loadSubscribers(SubscriberPageRequest(query: list.query, position: .before(SubscriptionTable.cursor(for: first, in: list.query)),
                                                           limit: limit))]
        }
        return []
    }

    static func applyPage(_ request: SubscriberPageRequest, _ page: SubscriberPage, _ state: inout DashboardState) -> [DashboardEffect] {
        var list = state.subscribers
        // A page for a query since replaced is of no use.
        guard request.query == list.query else { return [] }
        let visible = Layout.subscriberRows(height: state.height)
        let capacity = Layout.windowCapacity(pageLimit: request.limit, height: state.height)
        func clamp(_ index: Int) -> Int { min(max(0, index), max(0, list.rows.count - 1)) }
        for row in page.rows {
            let id = row.state.originalTransactionId
            list.overrides[id] = page.overrides[id]
            list.accessEnded[id] = page.accessEnded[id]
            if page.consentWithdrawn.contains(id) { list.consentWithdrawn.insert(id) } else { list.consentWithdrawn.remove(id) }
        }
        list.searchCut = !page.complete

        switch request.position {
        case .first:
            list.rows = page.rows
            list.atStart = true
            list.atEnd = page.reachesEnd
            list.selection = clamp(request.target ?? 0)
            list.scrollOffset = 0
        case .last:
            list.rows = page.rows
            list.atEnd = true
            list.atStart = page.reachesStart
            list.selection = clamp(request.target ?? list.rows.count - 1)
            list.scrollOffset = max(0, list.rows.count - visible)
        case .after:
            list.rows += page.rows
            if page.reachesEnd { list.atEnd = true }
            if let target = request.target { list.selection = clamp(target) }
            if list.rows.count > capacity {
                let drop = list.rows.count - capacity
                list.rows.removeFirst(drop)
                list.selection = clamp(list.selection - drop)
                list.scrollOffset = max(0, list.scrollOffset - drop)
                list.atStart = false
            }
        case .before:
            let added = page.rows.count
            list.rows = page.rows + list.rows
            list.selection += added
            list.scrollOffset += added
            if page.reachesStart { list.atStart = true }
            if let target = request.target { list.selection = clamp(target + added) }
            if list.rows.count > capacity {
                list.rows.removeLast(list.rows.count - capacity)
                list.selection = clamp(list.selection)
                list.atEnd = false
            }
        case .around:
            // The selected row stays where it was on screen, even if rows above it came or went.
            let screenRow = list.selection - list.scrollOffset
            list.rows = page.rows
            list.atStart = page.reachesStart
            list.atEnd = page.reachesEnd
            if let keep = request.keep, let index = list.rows.firstIndex(where: { $0.state.originalTransactionId == keep }) {
                list.selection = index
            } else {
                list.selection = clamp(list.selection)
            }
            list.scrollOffset = max(0, list.selection - screenRow)
        }
        list.loaded = true
        list.scrollOffset = TableView.scrollOffset(current: list.scrollOffset, selected: list.selection,
                                                   visibleRows: visible, rowCount: list.rows.count)
        state.subscribers = list
        return prefetchSubscribers(state)
    }
}
