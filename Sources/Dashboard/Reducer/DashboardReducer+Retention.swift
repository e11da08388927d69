import Foundation
import SubscriptionCore
import TerminalUI

// `:retention`'s console side: the app's messages and images, its default messages, and the
// actions at Apple's Retention Messaging API, each checked here, confirmed with y/n, and
// carried out on a worker through the same `RetentionConsole` as `subdesk retention`.
extension DashboardReducer {
    static func retentionCommand(_ command: KeyCommand, _ state: inout DashboardState) -> [DashboardEffect] {
        if state.retention.pane == .content,
           moveInList(command, &state.retention.selection, &state.retention.scrollOffset, count: state.retention.contentRows.count,
                      visible: Layout.retentionRows(height: state.height)) { return [] }
        switch command {
        case .switchRetentionPane:
            state.retention.pane = state.retention.pane == .report ? .content : .report
            return state.retention.pane == .content ? [.loadRetentionContent(state.retention.environment)] : []
        case .cycleRetentionEnvironment:
            state.retention.pane = .content
            state.retention.environment = state.retention.environment == .production ? .sandbox : .production
            forgetRetentionContent(&state)
            flash("retention console: \(state.retention.environment)", &state)
            return [.loadRetentionContent(state.retention.environment)]
        case .refreshRetention:
            guard consoleReachable(ServerAPIAction.retentionMessaging, &state) else { return [] }
            state.retention.pane = .content
            flash("asking Apple for the message and image lists (\(state.retention.environment))…", &state)
            return [.refreshRetention(state.retention.environment)]
        case .deleteRetentionContent:
            guard let row = selectedContent("delete", &state), consoleReachable(ServerAPIAction.retentionMessaging, &state) else { return [] }
            let what = row.summary.isEmpty ? "" : " (\(SafeText.sanitize(String(row.summary.prefix(40)))))"
            state.confirmation = DashboardState.Confirmation(
                question: "Delete \(row.kind.rawValue) \(row.identifier)\(what) at Apple (\(state.retention.environment))? y: yes, any other key: no",
                effect: .deleteRetentionContent(row.kind, identifier: row.identifier, state.retention.environment))
            return []
        case .makeRetentionDefault:
            guard let row = selectedContent("make a default", &state) else { return [] }
            if let refusal = defaultRefusal(row) {
                flash(refusal, error: true, &state)
                return []
            }
            guard consoleReachable(ServerAPIAction.retentionMessaging, &state) else { return [] }
            state.prompt = PromptState(kind: .retentionDefault(messageId: row.identifier))
            return []
        case .retentionPerformanceTest:
            guard consoleReachable(ServerAPIAction.retentionMessaging, &state) else { return [] }
            state.retention.pane = .content
            state.prompt = PromptState(kind: .retentionPerformanceTest)
            return []
        default:
            return []
        }
    }

    /// Why `row` cannot be a default message, in words; nil when it can as far as the store
    /// knows (Apple's list is read again before the call).
    static func defaultRefusal(_ row: RetentionContentRow) -> String? {
        guard row.kind == .message else { return "\(row.identifier) is an image: only a message can be a default" }
        guard row.state == RetentionReviewState.approved.rawValue else {
            return "message \(row.identifier) is \(row.state ?? "not yet read from Apple") (as Apple's list last said; u refreshes): "
                + "only an APPROVED message can be a default"
        }
        return nil
    }

    /// The selected message or image, on the console's side; says what to do when there is none.
    static func selectedContent(_ doing: String, _ state: inout DashboardState) -> RetentionContentRow? {
        guard state.retention.pane == .content else {
            flash("Tab shows the messages and images: select one to \(doing)", error: true, &state)
            return nil
        }
        guard let row = state.retention.selected else {
            flash("no message or image selected: u reads Apple's lists", error: true, &state)
            return nil
        }
        return row
    }

    /// The console is one app's and needs its App Store Server API key: refused at once,
    /// before any question, when the key settings are missing or no one app is shown.
    static func consoleReachable(_ action: String, _ state: inout DashboardState) -> Bool {
        if refusedWithoutServerAPI(action, &state) { return false }
        if state.apps.apps.count > 1 && state.scope == nil {
            flash("the Retention Messaging API is one app's: scope the desk first with :app NAME ("
                  + state.apps.apps.map(\.name).joined(separator: ", ") + ")", error: true, &state)
            return false
        }
        return true
    }

    /// `PRODUCT LOCALE` typed after `m`: checked as `subdesk retention default set` checks
    /// them, then a y/n question before Apple is asked.
    static func askToSetRetentionDefault(_ messageId: String, _ text: String, _ state: inout DashboardState) -> [DashboardEffect] {
        let words = text.split(separator: " ").map(String.init)
        guard words.count == 2 else {
            flash("a default message is for a PRODUCT and a LOCALE, such as app.monthly en-US (got \(SafeText.sanitize(String(text.prefix(60)))))",
                  error: true, &state)
            return []
        }
        let product: String, locale: String
        do {
            product = try RetentionText.productId(words[0])
            locale = try RetentionText.locale(words[1])
        } catch {
            flash(SafeText.sanitize("\(error)"), error: true, &state)
            return []
        }
        let environment = state.retention.environment
        state.confirmation = DashboardState.Confirmation(
            question: "Make message \(messageId) the default of \(product) in \(locale) at Apple (\(environment))? y: yes, any other key: no",
            effect: .setRetentionDefault(product: product, locale: locale, messageId: messageId, environment))
        return []
    }

    /// The sandbox purchase typed after `t`: checked, then a y/n question before Apple is asked.
    static func askToRunPerformanceTest(_ text: String, _ state: inout DashboardState) -> [DashboardEffect] {
        let typed = text.trimmingCharacters(in: .whitespaces)
        let id: String
        do { id = try AppStoreServerAPIClient.checkedTransactionId(typed) } catch {
            flash(SafeText.sanitize("\(error)"), error: true, &state)
            return []
        }
        state.confirmation = DashboardState.Confirmation(
            question: "Run Apple's performance test of the sandbox real-time URL with \(id)? y: yes, any other key: no",
            effect: .retentionPerformanceTest(originalTransactionId: id))
        return []
    }

    static func forgetRetentionContent(_ state: inout DashboardState) {
        state.retention.records = []
        state.retention.contentLoaded = false
        state.retention.appleLists = [:]
        state.retention.refreshedAt = nil
        state.retention.selection = 0
        state.retention.scrollOffset = 0
    }

    static func applyRetentionContent(_ environment: AppStoreEnvironment, _ records: [RetentionRecord], _ state: inout DashboardState) {
        // An answer for the other environment would show its records under this one's name.
        guard environment == state.retention.environment else { return }
        let selected = state.retention.selected?.identifier
        state.retention.records = records
        state.retention.contentLoaded = true
        keepRetentionSelection(selected, &state)
    }

    static func applyRetentionRefresh(_ environment: AppStoreEnvironment, messages: [RetentionComparison], images: [RetentionComparison],
                                      _ state: inout DashboardState) -> [DashboardEffect] {
        guard environment == state.retention.environment else { return [] }
        var lists: [String: RetentionComparison] = [:]
        for (kind, rows) in [(RetentionRecord.Kind.message, messages), (.image, images)] {
            for row in rows where row.appleState != nil { lists[kind.rawValue + " " + row.identifier] = row }
        }
        state.retention.appleLists = lists
        state.retention.refreshedAt = state.now
        let all = messages + images
        let onlyApple = all.filter { $0.difference == .onlyAtApple }.count, onlyHere = all.filter { $0.difference == .onlyHere }.count
        let states = Dictionary(grouping: all.compactMap(\.appleState), by: { $0 }).sorted { $0.key < $1.key }
            .map { "\($0.value.count) \($0.key)" }.joined(separator: ", ")
        flash("Apple (\(environment)): \(messages.filter { $0.appleState != nil }.count) messages, \(images.filter { $0.appleState != nil }.count) images"
              + (states.isEmpty ? "" : " (\(states))")
              + (onlyApple + onlyHere == 0 ? "" : "; \(onlyApple) only at Apple, \(onlyHere) only in the store"),
              duration: outcomeFlashDuration, &state)
        return [.loadRetentionContent(environment)]
    }

    /// The selection stays on the identifier it was on when the rows change under it.
    static func keepRetentionSelection(_ identifier: String?, _ state: inout DashboardState) {
        let rows = state.retention.contentRows
        if let identifier, let index = rows.firstIndex(where: { $0.identifier == identifier }) {
            state.retention.selection = index
        } else {
            state.retention.selection = min(state.retention.selection, max(0, rows.count - 1))
        }
        state.retention.scrollOffset = TableView.scrollOffset(current: state.retention.scrollOffset, selected: state.retention.selection,
                                                              visibleRows: Layout.retentionRows(height: state.height), rowCount: rows.count)
    }
}
