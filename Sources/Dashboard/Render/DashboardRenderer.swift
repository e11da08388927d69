import Foundation
import SubscriptionCore
import TerminalUI

/// Draws a `DashboardState` into a `ScreenBuffer`: the same state always gives the same cells.
public enum DashboardRenderer {
    /// A buffer the state's size with the state drawn in it.
    public static func render(_ state: DashboardState) -> ScreenBuffer {
        var buffer = ScreenBuffer(width: state.width, height: state.height)
        render(state, into: &buffer)
        return buffer
    }

    /// Draws the whole screen: header, the current screen, help if open, and the bottom line.
    public static func render(_ state: DashboardState, into buffer: inout ScreenBuffer) {
        buffer.fill(buffer.bounds)
        if buffer.width < DashboardState.minimumWidth || buffer.height < DashboardState.minimumHeight {
            renderTooSmall(width: buffer.width, height: buffer.height, into: &buffer)
            return
        }
        header(state).render(in: Rect(x: 1, y: 0, width: buffer.width - 2, height: 1), buffer: &buffer)
        let content = Layout.content(width: buffer.width, height: buffer.height)
        switch state.screen {
        case .subscribers: SubscribersView.render(state, in: content, buffer: &buffer)
        case .detail: DetailView.render(state, in: content, buffer: &buffer)
        case .feed: FeedView.render(state, in: content, buffer: &buffer)
        case .daily: DailyView.render(state, in: content, buffer: &buffer)
        case .quarantine: QuarantineView.renderList(state, in: content, buffer: &buffer)
        case .gaps: GapsView.render(state, in: content, buffer: &buffer)
        case .refunds: RefundsView.render(state, in: content, buffer: &buffer)
        case .consent: ConsentView.render(state, in: content, buffer: &buffer)
        case .health: HealthView.render(state, in: content, buffer: &buffer)
        case .retention: RetentionView.render(state, in: content, buffer: &buffer)
        case .forward: ForwardView.render(state, in: content, buffer: &buffer)
        case .cohorts: CohortsView.render(state, in: content, buffer: &buffer)
        case .quarantineBody: QuarantineView.renderBody(state, in: content, buffer: &buffer)
        case .audit: AuditView.render(state, in: content, buffer: &buffer)
        }
        if state.showsHelp { renderHelp(state, in: content, buffer: &buffer) }
        if state.showsMessages { renderMessages(state, in: content, buffer: &buffer) }
        if let dialog = state.overrideDialog { OverrideDialogView.dialog(dialog, state: state).render(in: content, buffer: &buffer) }
        if state.confirmation?.onYes == .quit { quitDialog(state).render(in: content, buffer: &buffer) }
        bottomLine(state, in: Rect(x: 0, y: buffer.height - 1, width: buffer.width, height: 1), buffer: &buffer)
    }

    /// The message shown instead of screens that would not fit.
    public static func tooSmallMessage(width: Int, height: Int) -> String {
        "terminal too small: \(width)x\(height), need \(DashboardState.minimumWidth)x\(DashboardState.minimumHeight)"
    }

    static func renderTooSmall(width: Int, height: Int, into buffer: inout ScreenBuffer) {
        guard height > 0 else { return }
        let lines = TextLayout.hardWrap(tooSmallMessage(width: width, height: height), width: max(1, width))
        let top = max(0, (height - lines.count) / 2)
        for (index, line) in lines.enumerated() {
            buffer.put(line, x: 0, y: top + index, width: width, alignment: .center, role: .warning, padRole: .normal)
        }
    }

    /// Where you are on the left; the store, the time zone every date is in, and whether it is live, on the right.
    static func header(_ state: DashboardState) -> StatusLine {
        var path = ["subdesk"]
        for screen in state.stack {
            switch screen {
            case .subscribers: path.append("subscribers")
            case .detail: path.append(state.detail?.originalTransactionId ?? "detail")
            case .feed: path.append("feed")
            case .daily: path.append("daily")
            case .quarantine: path.append("quarantine")
            case .gaps: path.append("gaps")
            case .refunds: path.append("refunds")
            case .consent: path.append("consent")
            case .health: path.append("health")
            case .retention: path.append("retention")
            case .forward: path.append("forward")
            case .cohorts: path.append("cohorts")
            case .quarantineBody: path.append(state.quarantine.openEntry.map { "#\($0.id)" } ?? "body")
            case .audit: path.append("audit")
            }
        }
        if state.showsHelp { path.append("help") }
        if state.showsMessages { path.append("messages") }
        if state.overrideDialog != nil { path.append("override") }
        // What gives way first at narrow widths (lowest `keep` first; see `HeaderKeep`): the
        // store's name (shortened, then left out), the time zone, work in progress, the
        // login (shortened to its roles), the app scope (shortened to its name); the demo
        // notice and the live state stay.
        var items = [StatusItem("store: " + state.storeName, keep: HeaderKeep.store, short: state.storeName),
                     StatusItem(state.time.label, role: .accent, keep: HeaderKeep.zone)]
        // The app every screen is scoped to (`:app NAME`); nothing while it shows every app.
        if let app = state.appName {
            items.insert(StatusItem("app: " + app, role: .accent, keep: HeaderKeep.scope, short: app), at: 1)
        }
        // Who the desk acts as: the database login and its roles, or a file it may only read.
        if let login = state.login.headerText {
            items.insert(StatusItem(login, role: state.login.refusals.isEmpty ? .accent : .warning, keep: HeaderKeep.login,
                                    short: state.login.shortHeaderText), at: 1)
        }
        if state.standInNotice != nil {
            // Every screen says it: an operator may act on what is shown.
            items.insert(StatusItem("(demo: no store configured)", role: .warning, keep: HeaderKeep.demo, short: "(demo)"), at: 1)
        }
        // Shown on every screen: the answer arrives wherever the operator went meanwhile.
        if let started = state.pingStarted {
            items.append(StatusItem("ping \(max(0, state.now - started) / 1000)s", role: .warning, keep: HeaderKeep.work))
        }
        if let id = state.revalidating {
            let waited = max(0, state.now - state.revalidationStarted) / 1000
            items.append(StatusItem("revalidating …\(id.suffix(4)) \(waited)s", role: .warning, keep: HeaderKeep.work))
        }
        if state.quitWhenIdle { items.append(StatusItem("quitting when done", role: .warning, keep: HeaderKeep.work)) }
        if state.storeGone {
            items.append(StatusItem("✕ store gone", role: .error, keep: HeaderKeep.live))
        } else if state.screen == .feed && state.feed.paused {
            items.append(StatusItem("❚❚ paused", role: .warning, keep: HeaderKeep.live))
        } else if state.screen == .feed && !state.feed.following {
            // Live, but the view holds still: how many newer rows are above it.
            items.append(StatusItem(state.feed.arrivalText, role: .warning, keep: HeaderKeep.live))
        } else {
            items.append(StatusItem("● live", role: .success, keep: HeaderKeep.live))
        }
        return StatusLine(path: path, items: items)
    }

    /// The header's order of giving way at narrow widths, lowest first. A new fact takes
    /// the place its importance gives it here, so the ones above it stay at 80 columns.
    enum HeaderKeep {
        /// `store: demo.db`, shortened to `demo.db`, then left out.
        static let store = 0
        /// The time zone dates are in.
        static let zone = 1
        /// Work in progress: a ping, a revalidation, quitting when done.
        static let work = 2
        /// `pg: mgr (read)` shortened to `mgr (read)`; `read-only`.
        static let login = 3
        /// `app: fitness` (`:app NAME`) shortened to `fitness`: every row shown is that app's,
        /// so it outlasts the login.
        static let scope = 4
        /// `(demo: no store configured)`, shortened to `(demo)`.
        static let demo = 5
        /// `● live`, `held · 12 new ↑`, `❚❚ paused`, `✕ store gone`: never left out first.
        static let live = 6
    }

    static func bottomLine(_ state: DashboardState, in area: Rect, buffer: inout ScreenBuffer) {
        if let confirmation = state.confirmation {
            let line = confirmation.onYes == .quit ? Selectors.quitQuestion(state.runningWork, width: area.width) : " " + confirmation.question
            FlashMessage(line, kind: .info).render(in: area, buffer: &buffer)
        } else if let prompt = state.prompt {
            PromptLine(symbol: prompt.symbol, text: prompt.text, cursor: prompt.cursor, completions: prompt.completions,
                       selectedCompletion: prompt.selectedCompletion).render(in: area, buffer: &buffer)
        } else if let flash = state.flash {
            FlashMessage(flashLine(flash.text, shorter: flash.shorter, error: flash.kind == .error, width: area.width), kind: flash.kind)
                .render(in: area, buffer: &buffer)
        } else {
            let hints: [Hint]
            if let dialog = state.overrideDialog {
                hints = OverrideDialogView.hints(dialog)
            } else if state.showsHelp || state.showsMessages {
                hints = [Hint(Key.escape, state.showsHelp ? "close help" : "close messages"), Hint("q", "quit")]
            } else {
                hints = state.keys.hints(for: state.screen, login: state.login).map { hint in
                    // On an expanded timeline line, Enter folds it.
                    hint.label == "expand" && selectedLineExpanded(state) ? Hint(hint.key, "fold") : hint
                }
            }
            buffer.put(" ", x: area.x, y: area.y, role: .hintText)
            HintBar(hints: hints).render(in: area.inset(left: 1), buffer: &buffer)
        }
    }

    /// The bottom line for a message: whole when it fits (an error says how it goes, in
    /// fewer words where room is short); else its start cut at a word, one `…`, its last
    /// clause (what to do) when it leaves the start some room, and where it is whole
    /// (`:messages`). Never two ellipses in a row. A message given in fewer words
    /// (`shorter`, the same meaning) is shown so, whole, before any is cut.
    static func flashLine(_ message: String, shorter: [String] = [], error: Bool, width: Int) -> String {
        let tails = error ? ["  (Esc dismisses · :messages)", "  (Esc)"] : [""]
        for tail in tails where TextWidth.width(of: " " + message + tail) <= width { return " " + message + tail }
        for brief in shorter {
            for tail in tails + [""] where TextWidth.width(of: " " + brief + tail) <= width { return " " + brief + tail }
        }
        // Cut, the fewest words are cut least.
        let message = shorter.last ?? message
        let more = error ? "  (:messages · Esc)" : "  (:messages)"
        var room = width - 1 - TextWidth.width(of: more) - 1
        // The last clause, after "; " or ": ", usually says what to do: keep it when the
        // start keeps some room.
        var ending = ""
        if let cut = [message.range(of: "; ", options: .backwards), message.range(of: ": ", options: .backwards)]
            .compactMap({ $0 }).max(by: { $0.upperBound < $1.upperBound }) {
            let clause = String(message[cut.upperBound...])
            if !clause.isEmpty, TextWidth.width(of: clause) + 1 <= room - 14 {
                ending = " " + clause
                room -= TextWidth.width(of: ending)
            }
        }
        var head = TextWidth.prefix(message, maxWidth: max(1, room)).text
        // At a word, without the punctuation or ellipsis it ended on.
        if head.count < message.count, let space = head.lastIndex(of: " "), head.distance(from: head.startIndex, to: space) > head.count / 2 {
            head = String(head[..<space])
        }
        while let last = head.last, " ;:,.…".contains(last) { head.removeLast() }
        return " " + head + "…" + ending + more
    }

    /// Whether the detail's selected timeline line is expanded (Enter then folds it).
    static func selectedLineExpanded(_ state: DashboardState) -> Bool {
        guard state.screen == .detail, let detail = state.detail, detail.timeline.indices.contains(detail.selection) else { return false }
        return detail.expanded[DetailState.entryKey(detail.timeline[detail.selection])] != nil
    }

    /// The question `q` asks while work runs on a worker: what is running, and what quitting now loses.
    static func quitDialog(_ state: DashboardState) -> Dialog {
        Dialog(title: "Quit while work is running?",
               body: ["Still running:"] + state.runningWork.map { "  " + SafeText.sanitize($0) }
                   + ["", "Apple's answer is stored and audited only while subdesk runs: quitting now loses it (the request may already have reached Apple)."],
               buttons: ["w quit when done", "y quit now", "other key: stay"])
    }

    /// `:messages`: the session's messages, newest first, each whole (wrapped), errors marked.
    static func renderMessages(_ state: DashboardState, in area: Rect, buffer: inout ScreenBuffer) {
        let inner = Box(title: "Messages of this session, newest first (\(state.messages.count))").render(in: area, buffer: &buffer)
        let text = inner.inset(left: 1, right: 1)
        guard !text.isEmpty else { return }
        var y = text.y
        if state.messages.isEmpty { buffer.put("no messages yet", x: text.x, y: y, role: .dim, maxWidth: text.width) }
        for message in state.messages.reversed() where y < text.maxY {
            let stamp = state.time.clock(message.at) + "  "
            let lines = TextWidth.wrap(message.text, toWidth: max(1, text.width - TextWidth.width(of: stamp)))
            for (index, line) in lines.enumerated() where y < text.maxY {
                buffer.put(index == 0 ? stamp : String(repeating: " ", count: TextWidth.width(of: stamp)),
                           x: text.x, y: y, role: .dim, maxWidth: text.width)
                buffer.put(line, x: text.x + TextWidth.width(of: stamp), y: y, role: message.isError ? .error : .normal,
                           maxWidth: text.width - TextWidth.width(of: stamp))
                y += 1
            }
        }
    }

    static func renderHelp(_ state: DashboardState, in area: Rect, buffer: inout ScreenBuffer) {
        let title = "Keys: \(state.screen.helpSection.lowercased()) and everywhere; screens and commands"
        let inner = Box(title: title).render(in: area, buffer: &buffer)
        let text = inner.inset(horizontal: 1, vertical: 0)
        var commands = DashboardCommandLine.helpLines(width: text.width, login: state.login, severalApps: state.apps.apps.count > 1)
        if !state.login.refusals.isEmpty {
            commands += TextWidth.wrap("⊘: not for this login (\(state.login.headerText ?? "")); pressing it says which role may",
                                       toWidth: max(10, text.width))
        }
        HelpView(entries: state.keys.helpEntries(for: state.screen, login: state.login)).render(in: text.inset(bottom: commands.count + 1), buffer: &buffer)
        for (index, line) in commands.enumerated() {
            buffer.put(line, x: text.x, y: text.maxY - commands.count + index, role: .dim, maxWidth: text.width)
        }
    }

    // MARK: - Shared bits

    /// One line of `text` after a label, as the summary lines write facts: `label value`.
    @discardableResult
    static func fact(_ label: String, _ value: String, x: Int, y: Int, maxX: Int, role: StyleRole = .normal,
                     buffer: inout ScreenBuffer) -> Int {
        guard x < maxX else { return x }
        var column = x
        column += buffer.put(label, x: column, y: y, role: .dim, maxWidth: maxX - column)
        column += buffer.put(" ", x: column, y: y, maxWidth: maxX - column)
        guard column < maxX else { return column }
        column += buffer.put(TextWidth.truncate(SafeText.sanitize(value), toWidth: maxX - column), x: column, y: y, role: role,
                             maxWidth: maxX - column)
        return column
    }

    /// With several apps configured a list says each row's app in an APP column; with one,
    /// or once `:app` scoped the desk to one (every row is then its), the list is as it was.
    static func showsApps(_ state: DashboardState) -> Bool { state.apps.apps.count > 1 && state.scope == nil }

    /// A row's app: the configured name of the app whose bundle id it carries, else the
    /// bundle id (an app no longer configured), else `-`.
    static func appCell(_ bundleId: String?, _ state: DashboardState) -> TableCell {
        TableCell(state.apps.name(ofRecord: bundleId))
    }

    /// `columns` and `rows` with the APP column first when `showsApps`, each row's app being
    /// its entry of `bundleIds`; as given otherwise. The column is as wide as the names it
    /// holds (at most 16), so the rest of the room goes to the columns that need it.
    static func withAppColumn(_ columns: [TableColumn], _ rows: [[TableCell]], bundleIds: [String?],
                              _ state: DashboardState) -> (columns: [TableColumn], rows: [[TableCell]]) {
        guard showsApps(state) else { return (columns, rows) }
        let cells = bundleIds.map { appCell($0, state) }
        let widest = cells.map { TextWidth.width(of: $0.text) }.max() ?? 0
        return ([TableColumn("APP", width: .fixed(min(16, max(3, widest))))] + columns,
                zip(cells, rows).map { [$0] + $1 })
    }

    /// `Prod` rather than `Production` where columns are scarce.
    static func environmentLabel(_ environment: String?, short: Bool) -> String {
        guard let environment, !environment.isEmpty else { return "-" }
        guard short else { return environment }
        switch environment {
        case "Production", "PROD": return "Prod"
        case "Sandbox": return "Sbox"
        default: return String(environment.prefix(5))
        }
    }

    /// `in 3d 4h` or `5d 2h ago`.
    static func relative(_ date: Millis, now: Millis) -> String {
        date >= now ? "in " + DateText.duration(date - now) : DateText.duration(now - date) + " ago"
    }
}
