import Foundation
import SubscriptionCore
import TerminalUI

/// One `:` command: its name and other spellings, its argument, how `?` describes it and what
/// it does. Help, completion and the errors for an unknown or misused command come from
/// `DashboardCommandLine.table`.
public struct LineCommand: Sendable {
    /// What may follow the name.
    public enum Argument: Sendable {
        /// Nothing: anything after the name is refused.
        case none
        /// An argument the command reads itself (and answers when it is missing or wrong).
        case optional
        /// A value Tab completes (from `values`), so completing the name adds a space.
        case value(@Sendable (DashboardState) -> [String])
    }

    public var name: String
    /// Other spellings people type out of habit.
    public var aliases: [String]
    /// How `?` writes it, arguments included: `:daily [D=V|all]`.
    public var usage: String
    /// A word or two after the usage in `?`; empty for none.
    public var summary: String
    public var argument: Argument
    /// Whether an unknown command's message suggests it.
    public var suggested: Bool
    /// What it writes to the store: a login that may not is told so before anything is asked.
    public var write: StoreWrite?
    /// Runs it with the rest of the line (trimmed, possibly empty).
    public var run: @Sendable (String, inout DashboardState) -> [DashboardEffect]

    public init(_ name: String, aliases: [String] = [], usage: String? = nil, _ summary: String = "", argument: Argument = .none,
                suggested: Bool = false, write: StoreWrite? = nil,
                run: @escaping @Sendable (String, inout DashboardState) -> [DashboardEffect]) {
        self.write = write
        self.name = name
        self.aliases = aliases
        self.usage = usage ?? ":" + name
        self.summary = summary
        self.argument = argument
        self.suggested = suggested
        self.run = run
    }

    /// Switches to a screen.
    static func screen(_ screen: ScreenID, _ name: String, aliases: [String] = [], _ summary: String = "",
                       suggested: Bool = false) -> LineCommand {
        LineCommand(name, aliases: aliases, summary, suggested: suggested) { _, state in DashboardReducer.switchTo(screen, &state) }
    }

    var takesNoArgument: Bool {
        if case .none = argument { return true }
        return false
    }

    var takesValue: Bool {
        if case .value = argument { return true }
        return false
    }
}

/// The `:` commands: what they are called, how Tab completes them, what they do.
public enum DashboardCommandLine {
    /// Every command, in the order `?` and completions list them: the screens first, then the rest.
    public static let table: [LineCommand] = [
        .screen(.subscribers, "subs", aliases: ["subscribers", "sub", "s"], "list", suggested: true),
        // `f` kept for the feed, which had it before `:forward` shared the letter.
        .screen(.feed, "feed", aliases: ["f"], "live", suggested: true),
        .screen(.health, "health"),
        .screen(.forward, "forward", aliases: ["relay"]),
        LineCommand("daily", aliases: ["counts"], usage: ":daily [D=V|all]", "counts", argument: .optional, suggested: true, run: { daily($0, &$1) }),
        LineCommand("cohorts", usage: ":cohorts [D=V]", argument: .optional, run: { DashboardReducer.openCohorts($0, &$1) }),
        // `:retention territory` (or product, message, selection): Tab completes them; `?` keeps it short.
        LineCommand("retention", argument: .value { _ in RetentionGrouping.allCases.map(\.rawValue) }, run: { retention($0, &$1) }),
        .screen(.quarantine, "quarantine", aliases: ["quar"], suggested: true),
        LineCommand("audit", aliases: ["log"], usage: ":audit [ID]", argument: .optional, suggested: true) { argument, state in
            // `:audit ID` opens the log already filtered to one target.
            DashboardReducer.resetAudit(filter: argument, &state)
            return DashboardReducer.switchTo(.audit, &state)
        },
        .screen(.gaps, "gaps", "missed"),
        LineCommand("backfill", usage: ":backfill DAYS", argument: .optional, write: .backfill, run: { backfill($0, &$1) }),
        .screen(.refunds, "refunds"),
        .screen(.consent, "consent", "withdrawn"),
        LineCommand("ping", "webhook", write: .ping, run: { ping($0, &$1) }),
        LineCommand("extend", usage: ":extend [all P] D C WHY", argument: .optional, write: .extension_) { argument, state in
            if argument.lowercased().hasPrefix("all ") || argument.lowercased() == "all" {
                return extendAll(String(argument.dropFirst(3)).trimmingCharacters(in: .whitespaces), &state)
            }
            return extend(argument, &state)
        },
        LineCommand("answer", usage: ":answer PREF", "refund", argument: .optional, write: .refundAnswers, run: { answer($0, &$1) }),
        LineCommand("apple", "refunds", run: { apple($0, &$1) }),
        LineCommand("link", usage: ":link USER [apple]", argument: .optional, write: .linking, run: { link($0, &$1) }),
        LineCommand("messages") { _, state in
            state.showsMessages = true
            return []
        },
        LineCommand("app", usage: ":app NAME|all", argument: .value { ["all"] + $0.apps.apps.map(\.name) }, run: { app($0, &$1) }),
        LineCommand("theme", usage: ":theme NAME", argument: .value { $0.availableThemes }, suggested: true, run: { theme($0, &$1) }),
        LineCommand("tz", usage: ":tz ZONE", argument: .value { $0.zoneChoices }, suggested: true) { argument, state in
            guard !argument.isEmpty else {
                DashboardReducer.flash("time zone \(state.time.label); change with :tz ZONE or z", &state)
                return []
            }
            return DashboardReducer.setZone(argument, &state)
        },
        LineCommand("help") { _, state in
            state.showsHelp = true
            return []
        },
        LineCommand("q", aliases: ["quit", "q!", "exit"], "quit", suggested: true) { _, state in DashboardReducer.requestQuit(&state) },
    ]

    /// Command names in the order completions list them.
    public static var names: [String] { table.map(\.name) }

    /// The help screen's paragraph on commands, wrapped to `width`; a command this login may
    /// not use is marked `⊘`. `:app` is listed only when more than one app is configured.
    public static func helpLines(width: Int, login: StoreLogin = StoreLogin(), severalApps: Bool = false) -> [String] {
        let items = table.filter { severalApps || $0.name != "app" }.map { command in
            let mark = command.write.flatMap(login.refusal) == nil ? "" : "⊘"
            return mark + (command.summary.isEmpty ? command.usage : "\(command.usage) \(command.summary)")
        }
        return TextWidth.wrap("Commands (any unique start): " + items.joined(separator: " · "),
                              toWidth: max(10, width))
    }

    /// The message for a command no name, alias or start of one matches.
    static func unknown(_ word: String) -> String {
        let suggestions = table.filter(\.suggested).map { $0.takesValue ? $0.usage : ":" + $0.name }
        return "unknown command :\(word) (try \(suggestions.joined(separator: " ")))"
    }

    /// The command `word` names: itself, an alias, or the one command it is a unique start of.
    static func resolve(_ word: String) -> (command: LineCommand?, candidates: [String]) {
        if let exact = table.first(where: { $0.name == word || $0.aliases.contains(word) }) { return (exact, [exact.name]) }
        let candidates = table.filter { $0.name.hasPrefix(word) }
        return (candidates.count == 1 ? candidates[0] : nil, candidates.map(\.name))
    }

    /// Everything `text` could become: command names, or for `theme `/`tz ` the values they accept.
    public static func completions(for text: String, state: DashboardState) -> [String] {
        let trimmed = text.drop { $0 == " " }
        if let space = trimmed.firstIndex(of: " ") {
            let command = String(trimmed[..<space])
            let argument = trimmed[trimmed.index(after: space)...].trimmingCharacters(in: .whitespaces)
            guard let entry = table.first(where: { $0.name == command }), case .value(let choices) = entry.argument else { return [] }
            return choices(state).filter { $0.lowercased().hasPrefix(argument.lowercased()) }.map { command + " " + $0 }
        }
        return names.filter { $0.hasPrefix(trimmed.lowercased()) }
    }

    /// Tab: the only completion, else the longest common start, else the next completion in turn.
    static func complete(_ prompt: inout PromptState, backward: Bool) {
        let options = prompt.completions
        guard !options.isEmpty else { return }
        if options.count == 1 {
            let only = options[0]
            prompt.setText(table.contains { $0.name == only && $0.takesValue } ? only + " " : only)
            prompt.completions = []
            return
        }
        let common = commonPrefix(options)
        if prompt.selectedCompletion == nil && common.count > prompt.text.count {
            prompt.setText(common)
            return
        }
        let count = options.count
        let next: Int
        if let current = prompt.selectedCompletion {
            next = (current + (backward ? count - 1 : 1)) % count
        } else {
            next = backward ? count - 1 : 0
        }
        prompt.selectedCompletion = next
        prompt.setText(options[next])
    }

    static func commonPrefix(_ words: [String]) -> String {
        guard var prefix = words.first else { return "" }
        for word in words.dropFirst() {
            while !word.hasPrefix(prefix) { prefix.removeLast() }
        }
        return prefix
    }

    /// Runs one command line; unknown commands say what would have worked.
    static func execute(_ text: String, _ state: inout DashboardState) -> [DashboardEffect] {
        let words = text.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        guard let first = words.first?.lowercased() else { return [] }
        let resolved = resolve(first)
        guard let command = resolved.command else {
            if resolved.candidates.count > 1 {
                DashboardReducer.flash(":\(first) could be " + resolved.candidates.map { ":" + $0 }.joined(separator: " or ")
                                       + "; type more of it", error: true, &state)
            } else {
                DashboardReducer.flash(unknown(first), error: true, &state)
            }
            return []
        }
        let argument = words.dropFirst().joined(separator: " ")
        if !argument.isEmpty && command.takesNoArgument {
            DashboardReducer.flash(":\(command.name) takes no argument (got \(argument))", error: true, &state)
            return []
        }
        if let write = command.write, let refusal = state.login.refusal(write) {
            DashboardReducer.flash(refusal, shorter: state.login.briefRefusal(write), error: true, &state)
            return []
        }
        return command.run(argument, &state)
    }

    /// `:daily [DIMENSION=VALUE|all]`: the counts, of one part or of all again.
    static func daily(_ argument: String, _ state: inout DashboardState) -> [DashboardEffect] {
        guard !argument.isEmpty else { return DashboardReducer.switchTo(.daily, &state) }
        if argument.lowercased() == "all" {
            state.daily.filter = nil
        } else {
            do {
                let parsed = try SegmentFilter.parse(argument)
                guard let filter = parsed.filter else {
                    DashboardReducer.flash("f switches between paid, family shared, sandbox and all", error: true, &state)
                    return []
                }
                state.daily.filter = filter
            } catch {
                DashboardReducer.flash("\(error)", error: true, &state)
                return []
            }
        }
        return DashboardReducer.switchTo(.daily, &state)
    }

    /// `:retention [product|territory|message|selection]`: Apple's retention messaging report, by what is named.
    static func retention(_ argument: String, _ state: inout DashboardState) -> [DashboardEffect] {
        if !argument.isEmpty {
            guard let grouping = RetentionGrouping(rawValue: argument.lowercased()) else {
                DashboardReducer.flash(":retention takes " + RetentionGrouping.choices, error: true, &state)
                return []
            }
            state.retention.grouping = grouping
        }
        return DashboardReducer.switchTo(.retention, &state)
    }

    /// `:app NAME` scopes every screen to one app (its name, bundle id or Apple ID); `:app
    /// all` shows every app again. What is shown is read again for the new scope.
    static func app(_ argument: String, _ state: inout DashboardState) -> [DashboardEffect] {
        guard !argument.isEmpty else {
            let names = state.apps.apps.map(\.name).joined(separator: ", ")
            DashboardReducer.flash("app \(state.appName ?? "all"); scope with :app NAME|all (\(names))", &state)
            return []
        }
        if argument.lowercased() != "all" {
            // Said in the desk's words: the operator typed `:app`, not the command line's flag.
            guard state.apps.app(named: argument) != nil else {
                DashboardReducer.flash(state.apps.unknown(argument, askedBy: ":app"), error: true, &state)
                return []
            }
            do { try scope(toApp: argument, &state) } catch {
                DashboardReducer.flash("\(error)", error: true, &state)
                return []
            }
        } else {
            state.scope = nil
        }
        // Rows loaded for the other scope are another app's: every screen reads again.
        DashboardReducer.forgetLoadedRows(&state)
        let entered = DashboardReducer.enter(state.screen, &state)
        return state.screen == .subscribers ? entered : [.loadSubscribers(DashboardReducer.firstPage(state))] + entered
    }

    /// Scopes the desk to the app `text` names (`--app NAME` at launch, `:app NAME`). An
    /// unknown app is refused, naming the configured ones.
    public static func scope(toApp text: String, _ state: inout DashboardState) throws {
        let records = try state.apps.scope(named: text)
        state.scope = DeskScope(name: state.apps.app(named: text)?.name ?? text, records: records)
    }

    /// `:apple` on a subscription's detail: its refund history and latest transaction at Apple.
    static func apple(_ argument: String, _ state: inout DashboardState) -> [DashboardEffect] {
        guard state.screen == .detail, let otid = state.detail?.originalTransactionId else {
            DashboardReducer.flash(":apple works on a subscription's detail: open one first", error: true, &state)
            return []
        }
        if DashboardReducer.refusedWithoutServerAPI(ServerAPIAction.appleLookup, &state) { return [] }
        DashboardReducer.flash("asking Apple for \(otid)'s refund history and latest transaction…", &state)
        return [.lookUpAtApple(originalTransactionId: otid)]
    }

    /// `:ping`: asks Apple for a TEST notification, once at a time.
    static func ping(_ argument: String, _ state: inout DashboardState) -> [DashboardEffect] {
        guard state.pingStarted == nil else {
            DashboardReducer.flash("a ping is already waiting for its TEST notification", &state)
            return []
        }
        if DashboardReducer.refusedWithoutServerAPI(ServerAPIAction.ping, &state) { return [] }
        state.pingStarted = state.now
        DashboardReducer.flash("asked Apple for a TEST notification; waiting for it to come through the webhook", &state)
        return [.ping]
    }

    /// `:theme [NAME]`: switches theme, or says which is in use and which there are.
    static func theme(_ argument: String, _ state: inout DashboardState) -> [DashboardEffect] {
        guard !argument.isEmpty else {
            let known = state.availableThemes.isEmpty ? "" : " (\(state.availableThemes.joined(separator: ", ")))"
            DashboardReducer.flash("theme \(state.themeName); switch with :theme NAME\(known)", &state)
            return []
        }
        return [.applyTheme(argument)]
    }

    /// `:extend DAYS CODE REASON` on a subscription's detail: Apple's rules checked, then
    /// a y/n question before Apple is asked.
    static func extend(_ argument: String, _ state: inout DashboardState) -> [DashboardEffect] {
        guard state.screen == .detail, let otid = state.detail?.originalTransactionId else {
            DashboardReducer.flash(":extend works on a subscription's detail: open one first", error: true, &state)
            return []
        }
        let words = argument.split(separator: " ", maxSplits: 2).map(String.init)
        guard words.count == 3, let days = Int(words[0]), let code = Int(words[1]) else {
            DashboardReducer.flash(":extend DAYS CODE REASON, such as :extend 7 3 outage on 11-20 (codes: 0 undeclared, 1 customer satisfaction, 2 other, 3 service issue)",
                                   error: true, &state)
            return []
        }
        do {
            try Revalidator.checkExtension(days: days, reasonCode: code, reason: words[2])
        } catch {
            DashboardReducer.flash("\(error)", error: true, &state)
            return []
        }
        if DashboardReducer.refusedWithoutServerAPI(ServerAPIAction.extend, &state) { return [] }
        state.confirmation = DashboardState.Confirmation(
            question: "Extend \(otid) by \(days) days at Apple (code \(code))? y: yes, any other key: no",
            effect: .extendRenewal(originalTransactionId: otid, days: days, reasonCode: code, reason: words[2]))
        return []
    }

    /// `:extend all PRODUCT[@USA,CAN] DAYS CODE REASON` anywhere: every active subscriber of
    /// a product (in those storefronts), Apple's rules checked, then a y/n question.
    static func extendAll(_ argument: String, _ state: inout DashboardState) -> [DashboardEffect] {
        let words = argument.split(separator: " ", maxSplits: 3).map(String.init)
        guard words.count == 4, let days = Int(words[1]), let code = Int(words[2]) else {
            DashboardReducer.flash(":extend all PRODUCT DAYS CODE REASON, such as :extend all app.monthly 3 3 outage on 11-20 (PRODUCT@USA,CAN for some storefronts)",
                                   error: true, &state)
            return []
        }
        let parts = words[0].split(separator: "@", maxSplits: 1).map(String.init)
        let product = parts[0]
        let storefronts = parts.count > 1 ? parts[1].split(separator: ",").map { $0.uppercased() } : []
        do {
            try Revalidator.checkExtension(days: days, reasonCode: code, reason: words[3])
        } catch {
            DashboardReducer.flash("\(error)", error: true, &state)
            return []
        }
        if DashboardReducer.refusedWithoutServerAPI(ServerAPIAction.extendAll, &state) { return [] }
        // A product is one app's: with several apps, the scope says which app's key asks.
        if state.apps.apps.count > 1 && state.scope == nil {
            DashboardReducer.flash(":extend all asks for one app's product: scope the desk first with :app NAME ("
                                   + state.apps.apps.map(\.name).joined(separator: ", ") + ")", error: true, &state)
            return []
        }
        let where_ = storefronts.isEmpty ? "" : " in \(storefronts.joined(separator: ","))"
        let app = state.apps.apps.count > 1 ? state.appName.map { " (app \($0))" } ?? "" : ""
        state.confirmation = DashboardState.Confirmation(
            question: "Extend EVERY active subscriber of \(product)\(app)\(where_) by \(days) days at Apple (code \(code))? y: yes, any other key: no",
            effect: .extendAll(productId: product, days: days, reasonCode: code, reason: words[3], storefronts: storefronts))
        return []
    }

    /// `:answer DECLINE|GRANT_FULL|GRANT_PRORATED|none [consented]` on the refund queue: the
    /// selected request's suggested answer with that preference (and the customer's
    /// consent, when the operator has it), checked, then a y/n question.
    static func answer(_ argument: String, _ state: inout DashboardState) -> [DashboardEffect] {
        guard state.screen == .refunds, let entry = state.refunds.selected else {
            DashboardReducer.flash(":answer works on the refund queue (:refunds): select a request first", error: true, &state)
            return []
        }
        let words = argument.split(separator: " ").map { $0.lowercased() }
        var answer = entry.suggested
        guard let first = words.first, words.count <= 2, words.count == 1 || words[1] == "consented" else {
            DashboardReducer.flash(":answer DECLINE, GRANT_FULL, GRANT_PRORATED or none, then consented if the customer agreed to share consumption data",
                                   error: true, &state)
            return []
        }
        if first == "none" {
            answer.refundPreference = nil
        } else if let preference = ConsumptionAnswer.Preference(rawValue: first.uppercased()) {
            answer.refundPreference = preference
        } else {
            DashboardReducer.flash("\(first) is not a preference: DECLINE, GRANT_FULL, GRANT_PRORATED or none", error: true, &state)
            return []
        }
        if words.count == 2 { answer.customerConsented = true }
        return DashboardReducer.askToAnswer(entry, answer: answer, &state)
    }

    /// `:link USER [apple] [force]` on a subscription's detail: links the user id (as
    /// `subdesk link` does, `force` to move it from another user), with `apple` also sets the
    /// app account token at Apple; y/n first.
    static func link(_ argument: String, _ state: inout DashboardState) -> [DashboardEffect] {
        guard state.screen == .detail, let otid = state.detail?.originalTransactionId else {
            DashboardReducer.flash(":link works on a subscription's detail: open one first", error: true, &state)
            return []
        }
        var words = argument.split(separator: " ").map(String.init)
        let atApple = words.contains("apple")
        let force = words.contains("force")
        words.removeAll { $0 == "apple" || $0 == "force" }
        guard words.count == 1, let user = words.first else {
            DashboardReducer.flash(":link USER [apple] [force]: your user id for this subscriber; apple also sets its token at Apple", error: true, &state)
            return []
        }
        if atApple && DashboardReducer.refusedWithoutServerAPI(ServerAPIAction.appAccountToken, &state) { return [] }
        // Linking to another user moves the subscription from the user it has: the question says so.
        let owner = state.detail?.content?.subscriber.userId
        let move = owner.flatMap { $0 == user ? nil : " (moves it from user \($0))" } ?? ""
        if let owner, owner != user, !force {
            DashboardReducer.flash("\(otid) is linked to user \(owner): :link \(user) force moves it from that user", error: true, &state)
            return []
        }
        state.confirmation = DashboardState.Confirmation(
            question: "Link \(otid) to user \(user)\(move)\(atApple ? " and set its app account token at Apple" : "")? y: yes, any other key: no",
            effect: .linkUser(originalTransactionId: otid, userId: user, force: force, atApple: atApple))
        return []
    }

    /// `:backfill DAYS [failures]` or `:backfill resume`: Apple's notification history for
    /// the last DAYS days (1 to 180) through intake, on a worker; the outcome on the
    /// message line and new arrivals in `:gaps`.
    static func backfill(_ argument: String, _ state: inout DashboardState) -> [DashboardEffect] {
        let words = argument.lowercased().split(separator: " ").map(String.init)
        if DashboardReducer.refusedWithoutServerAPI(ServerAPIAction.backfill, &state) { return [] }
        if words == ["resume"] {
            DashboardReducer.flash("resuming the unfinished backfill in the background…", &state)
            return [.backfill(days: nil, onlyFailures: false)]
        }
        guard let first = words.first, let days = Int(first), (1...Backfill.maxAgeDays).contains(days),
              words.count == 1 || (words.count == 2 && words[1] == "failures") else {
            DashboardReducer.flash(":backfill DAYS [failures] (1 to \(Backfill.maxAgeDays) days back), or :backfill resume", error: true, &state)
            return []
        }
        DashboardReducer.flash("backfilling the last \(days) day\(days == 1 ? "" : "s")\(words.count == 2 ? " (failed deliveries)" : "") in the background…", &state)
        return [.backfill(days: days, onlyFailures: words.count == 2)]
    }
}
