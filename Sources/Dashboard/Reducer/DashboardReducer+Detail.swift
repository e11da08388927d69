import SubscriptionCore
import TerminalUI

extension DashboardReducer {
    /// Moving through the timeline goes line by line through an expanded payload before leaving it,
    /// so a payload taller than the screen can still be read to its end.
    static func detailCommand(_ command: KeyCommand, _ state: inout DashboardState) -> [DashboardEffect] {
        switch command {
        case .revalidate: return startRevalidation(&state)
        case .override: return openOverrideDialog(&state)
        default: break
        }
        guard var detail = state.detail, !detail.timeline.isEmpty else { return [] }
        let visible = Layout.timelineRows(state)
        let (starts, total) = Selectors.timelineLines(detail)
        let count = detail.timeline.count
        let maxOffset = max(0, total - visible)
        let index = min(max(0, detail.selection), count - 1)
        let extra = (index + 1 < count ? starts[index + 1] : total) - starts[index] - 1
        func entry(atLine line: Int) -> Int { starts.lastIndex { $0 <= line } ?? 0 }
        func reveal(_ line: Int) {
            if line < detail.scrollOffset { detail.scrollOffset = line }
            if line >= detail.scrollOffset + visible { detail.scrollOffset = line - visible + 1 }
        }

        switch command {
        case .down:
            if extra > 0 && starts[index] + extra >= detail.scrollOffset + visible {
                detail.scrollOffset += 1
            } else if index + 1 < count {
                detail.selection = index + 1
                reveal(starts[index + 1])
            }
        case .up:
            if extra > 0 && detail.scrollOffset > starts[index] {
                detail.scrollOffset -= 1
            } else if index > 0 {
                detail.selection = index - 1
                reveal(starts[index - 1])
            }
        case .pageDown:
            let offset = min(maxOffset, detail.scrollOffset + visible)
            detail.selection = offset == detail.scrollOffset ? count - 1 : entry(atLine: offset)
            detail.scrollOffset = offset
        case .pageUp:
            let offset = max(0, detail.scrollOffset - visible)
            detail.selection = offset == detail.scrollOffset ? 0 : entry(atLine: offset)
            detail.scrollOffset = offset
        case .top:
            detail.selection = 0
            detail.scrollOffset = 0
        case .bottom:
            detail.selection = count - 1
            detail.scrollOffset = maxOffset
        case .open:
            let event = detail.timeline[index]
            let key = DetailState.entryKey(event)
            if detail.expanded[key] != nil {
                detail.expanded[key] = nil
            } else if let reference = event.reference {
                detail.expanded[key] = ["loading…"]
                state.detail = detail
                clampDetailScroll(&state)
                return [.loadPayload(originalTransactionId: detail.originalTransactionId, entryKey: key,
                                     kind: event.kind, reference: reference)]
            } else {
                flash("this line has nothing to expand", &state)
            }
        default:
            return []
        }
        state.detail = detail
        clampDetailScroll(&state)
        return []
    }

    static func clampDetailScroll(_ state: inout DashboardState) {
        guard var detail = state.detail else { return }
        let visible = Layout.timelineRows(state)
        let total = Selectors.timelineLines(detail).total
        detail.selection = min(max(0, detail.selection), max(0, detail.timeline.count - 1))
        detail.scrollOffset = min(max(0, detail.scrollOffset), max(0, total - visible))
        state.detail = detail
    }

    static func applyDetail(_ id: String, _ content: DetailContent?, _ state: inout DashboardState) {
        guard var detail = state.detail, detail.originalTransactionId == id else { return }
        guard let content else {
            detail.missing = "no subscription \(id) in this store"
            detail.content = nil
            state.detail = detail
            return
        }
        let firstLoad = detail.content == nil
        let selectedKey = detail.timeline.indices.contains(detail.selection)
            ? DetailState.entryKey(detail.timeline[detail.selection]) : nil
        detail.content = content
        detail.missing = nil
        let keys = Set(content.report.timeline.map(DetailState.entryKey))
        detail.expanded = detail.expanded.filter { keys.contains($0.key) }
        state.detail = detail
        if firstLoad {
            // The latest events are what someone opening a subscription usually came for.
            detail.selection = max(0, content.report.timeline.count - 1)
            detail.scrollOffset = Selectors.timelineLines(detail).total
        } else if let selectedKey, let index = content.report.timeline.firstIndex(where: { DetailState.entryKey($0) == selectedKey }) {
            detail.selection = index
        }
        state.detail = detail
        clampDetailScroll(&state)
    }

    static func applyPayload(_ id: String, _ key: String, _ lines: [String], _ state: inout DashboardState) {
        guard var detail = state.detail, detail.originalTransactionId == id, detail.expanded[key] != nil else { return }
        detail.expanded[key] = lines.isEmpty ? ["(nothing stored)"] : lines
        // Show as much of the new lines as fits without losing the line they belong to.
        if let index = detail.timeline.firstIndex(where: { DetailState.entryKey($0) == key }) {
            let visible = Layout.timelineRows(state)
            let start = Selectors.timelineLines(detail).starts[index]
            let end = start + detail.expanded[key]!.count
            if end >= detail.scrollOffset + visible {
                detail.scrollOffset = min(start, end - visible + 1)
            }
        }
        state.detail = detail
        clampDetailScroll(&state)
    }

    /// Asks again for every expanded line, whose dates are written in the old time zone.
    static func reloadExpanded(_ state: inout DashboardState) -> [DashboardEffect] {
        guard let detail = state.detail else { return [] }
        return detail.timeline.compactMap { event in
            let key = DetailState.entryKey(event)
            guard detail.expanded[key] != nil, let reference = event.reference else { return nil }
            return .loadPayload(originalTransactionId: detail.originalTransactionId, entryKey: key,
                                kind: event.kind, reference: reference)
        }
    }
}
