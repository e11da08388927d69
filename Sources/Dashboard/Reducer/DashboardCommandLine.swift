import Foundation
import SubscriptionCore
import TerminalUI

/// The `:` commands: what they are called, how Tab completes them, what they do.
public enum DashboardCommandLine {
    /// Command names in the order completions list them.
    public static let names = ["subs", "feed", "health", "daily", "cohorts", "quarantine", "audit", "gaps", "refunds", "consent", "backfill", "ping", "extend", "answer", "apple", "link", "messages",
                               "theme", "tz", "help", "q"]

    /// What each command does, as `?` lists it: the screens first, then the rest.
    public static let descriptions: [(usage: String, description: String)] = [
        (":subs", "list"),
        (":feed", "live"),
        (":health", "on-call"),
        (":daily [D=V|all]", "counts"),
        (":cohorts [D=V]", ""),
        (":quarantine", ""),
        (":audit [ID]", ""),
        (":gaps", "missed"),
        (":backfill DAYS", ""),
        (":refunds", ""),
        (":consent", "withdrawn"),
        (":ping", "webhook"),
        (":extend [all P] D C WHY", ""),
        (":answer PREF", "refund"),
        (":apple", "refunds"),
        (":link USER [apple]", ""),
        (":messages", ""),
        (":theme NAME", ""),
        (":tz ZONE", ""),
        (":help", ""),
        (":q", "quit"),
    ]

    /// The help screen's paragraph on commands, wrapped to `width`.
    public static func helpLines(width: Int) -> [String] {
        let items = descriptions.map { $0.description.isEmpty ? $0.usage : "\($0.usage) \($0.description)" }
        return TextWidth.wrap("Commands (any unique start: :d is :daily): " + items.joined(separator: " · "),
                              toWidth: max(10, width))
    }

    /// Other spellings people type out of habit.
    static let aliases: [String: String] = [
        "subscribers": "subs", "sub": "subs", "s": "subs", "quit": "q", "q!": "q", "exit": "q",
        "quar": "quarantine", "counts": "daily", "log": "audit",
    ]

    /// Commands that take an argument, so completing them adds a space.
    static let takesArgument: Set<String> = ["theme", "tz"]
    /// Commands that may take one; the others refuse anything after their name.
    static let acceptsArgument: Set<String> = ["theme", "tz", "audit", "extend", "answer", "link", "backfill", "daily", "cohorts"]

    /// The command `word` names: itself, an alias, or the one command it is a unique start of.
    static func resolve(_ word: String) -> (name: String?, candidates: [String]) {
        if names.contains(word) { return (word, [word]) }
        if let alias = aliases[word] { return (alias, [alias]) }
        let candidates = names.filter { $0.hasPrefix(word) }
        return (candidates.count == 1 ? candidates[0] : nil, candidates)
    }

    /// Everything `text` could become: command names, or for `theme `/`tz ` the values they accept.
    public static func completions(for text: String, state: DashboardState) -> [String] {
        let trimmed = text.drop { $0 == " " }
        if let space = trimmed.firstIndex(of: " ") {
            let command = String(trimmed[..<space])
            let argument = trimmed[trimmed.index(after: space)...].trimmingCharacters(in: .whitespaces)
            let values: [String]
            switch command {
            case "theme": values = state.availableThemes
            case "tz": values = state.zoneChoices
            default: values = []
            }
            return values.filter { $0.lowercased().hasPrefix(argument.lowercased()) }.map { command + " " + $0 }
        }
        return names.filter { $0.hasPrefix(trimmed.lowercased()) }
    }

    /// Tab: the only completion, else the longest common start, else the next completion in turn.
    static func complete(_ prompt: inout PromptState, backward: Bool) {
        let options = prompt.completions
        guard !options.isEmpty else { return }
        if options.count == 1 {
            let only = options[0]
            prompt.setText(takesArgument.contains(only) ? only + " " : only)
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
        guard let name = resolved.name else {
            if resolved.candidates.count > 1 {
                DashboardReducer.flash(":\(first) could be " + resolved.candidates.map { ":" + $0 }.joined(separator: " or ")
                                       + "; type more of it", error: true, &state)
            } else {
                DashboardReducer.flash("unknown command :\(first) (try :subs :feed :daily :quarantine :audit :theme NAME :tz ZONE :q)",
                                       error: true, &state)
            }
            return []
        }
        let argument = words.dropFirst().joined(separator: " ")
        if !argument.isEmpty && !acceptsArgument.contains(name) {
            DashboardReducer.flash(":\(name) takes no argument (got \(argument))", error: true, &state)
            return []
        }
        switch name {
        case "subs":
            return DashboardReducer.switchTo(.subscribers, &state)
        case "feed":
            return DashboardReducer.switchTo(.feed, &state)
        case "daily":
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
        case "cohorts":
            return DashboardReducer.openCohorts(argument, &state)
        case "quarantine":
            return DashboardReducer.switchTo(.quarantine, &state)
        case "gaps":
            return DashboardReducer.switchTo(.gaps, &state)
        case "health":
            return DashboardReducer.switchTo(.health, &state)
        case "refunds":
            return DashboardReducer.switchTo(.refunds, &state)
        case "consent":
            return DashboardReducer.switchTo(.consent, &state)
        case "extend":
            if argument.lowercased().hasPrefix("all ") || argument.lowercased() == "all" {
                return extendAll(String(argument.dropFirst(3)).trimmingCharacters(in: .whitespaces), &state)
            }
            return extend(argument, &state)
        case "answer":
            return answer(argument, &state)
        case "link":
            return link(argument, &state)
        case "backfill":
            return backfill(argument, &state)
        case "apple":
            guard state.screen == .detail, let otid = state.detail?.originalTransactionId else {
                DashboardReducer.flash(":apple works on a subscription's detail: open one first", error: true, &state)
                return []
            }
            DashboardReducer.flash("asking Apple for \(otid)'s refund history and latest transaction…", &state)
            return [.lookUpAtApple(originalTransactionId: otid)]
        case "ping":
            guard state.pingStarted == nil else {
                DashboardReducer.flash("a ping is already waiting for its TEST notification", &state)
                return []
            }
            state.pingStarted = state.now
            DashboardReducer.flash("asked Apple for a TEST notification; waiting for it to come through the webhook", &state)
            return [.ping]
        case "audit":
            // `:audit ID` opens the log already filtered to one target.
            DashboardReducer.resetAudit(filter: argument, &state)
            return DashboardReducer.switchTo(.audit, &state)
        case "help":
            state.showsHelp = true
            return []
        case "messages":
            state.showsMessages = true
            return []
        case "q":
            return DashboardReducer.requestQuit(&state)
        case "theme":
            guard !argument.isEmpty else {
                let known = state.availableThemes.isEmpty ? "" : " (\(state.availableThemes.joined(separator: ", ")))"
                DashboardReducer.flash("theme \(state.themeName); switch with :theme NAME\(known)", &state)
                return []
            }
            return [.applyTheme(argument)]
        case "tz":
            guard !argument.isEmpty else {
                DashboardReducer.flash("time zone \(state.time.label); change with :tz ZONE or z", &state)
                return []
            }
            return DashboardReducer.setZone(argument, &state)
        default:
            DashboardReducer.flash("unknown command :\(first) (try :subs :feed :daily :quarantine :audit :theme NAME :tz ZONE :q)",
                                   error: true, &state)
            return []
        }
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
        guard !state.withoutServerAPIKey else {
            DashboardReducer.flash(RevalidationError.needsServerAPI(action: ServerAPIAction.extend).description, error: true, &state)
            return []
        }
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
        guard !state.withoutServerAPIKey else {
            DashboardReducer.flash(RevalidationError.needsServerAPI(action: ServerAPIAction.extendAll).description, error: true, &state)
            return []
        }
        let where_ = storefronts.isEmpty ? "" : " in \(storefronts.joined(separator: ","))"
        state.confirmation = DashboardState.Confirmation(
            question: "Extend EVERY active subscriber of \(product)\(where_) by \(days) days at Apple (code \(code))? y: yes, any other key: no",
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
        state.confirmation = DashboardState.Confirmation(
            question: "Link \(otid) to user \(user)\(atApple ? " and set its app account token at Apple" : "")? y: yes, any other key: no",
            effect: .linkUser(originalTransactionId: otid, userId: user, force: force, atApple: atApple))
        return []
    }

    /// `:backfill DAYS [failures]` or `:backfill resume`: Apple's notification history for
    /// the last DAYS days (1 to 180) through intake, on a worker; the outcome on the
    /// message line and new arrivals in `:gaps`.
    static func backfill(_ argument: String, _ state: inout DashboardState) -> [DashboardEffect] {
        let words = argument.lowercased().split(separator: " ").map(String.init)
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
