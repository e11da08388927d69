import SubscriptionCore
import TerminalUI

/// One entry of the key table: which keys, what they do, where, and how the help and hint bar name them.
public struct KeyBinding: Sendable {
    public var keys: [Key]
    public var command: KeyCommand
    /// The help screen's wording.
    public var description: String
    /// The help screen's heading this entry sits under.
    public var section: String
    /// Where the keys work; empty means every screen.
    public var screens: Set<ScreenID>
    /// The hint bar's short label; nil keeps the entry out of the hint bar.
    public var hint: String?
    /// How the keys are written when listing them all would be noise, such as `1-5`.
    public var keyLabel: String?
    /// How the hint bar writes the keys, when not as the help screen does.
    public var hintKey: String?

    public init(_ keys: [Key], _ command: KeyCommand, _ description: String, section: String,
                screens: Set<ScreenID> = [], hint: String? = nil, keyLabel: String? = nil, hintKey: String? = nil) {
        self.keys = keys
        self.command = command
        self.description = description
        self.section = section
        self.screens = screens
        self.hint = hint
        self.keyLabel = keyLabel
        self.hintKey = hintKey
    }

    /// The keys as the help screen shows them: `j/↓`.
    public var keysText: String { keyLabel ?? keys.map(\.description).joined(separator: "/") }

    /// The key as the hint bar shows it: the first one, unless a label says otherwise.
    public var hintKeyText: String { hintKey ?? keyLabel ?? keys.first?.description ?? "" }

    public func applies(to screen: ScreenID) -> Bool { screens.isEmpty || screens.contains(screen) }
}

/// The dashboard's keys as data: looked up by the reducer, listed by the help screen and the hint bar.
///
/// Screen-specific entries come before the general ones, so a key a screen
/// gives its own meaning (`j` choosing a metric on the daily counts) wins
/// there and keeps its general meaning elsewhere.
public struct KeyTable: Sendable {
    public var bindings: [KeyBinding]

    public init(bindings: [KeyBinding]) {
        self.bindings = bindings
    }

    /// The command `key` runs on `screen`, if any.
    public func command(for key: Key, on screen: ScreenID) -> KeyCommand? {
        bindings.first { $0.applies(to: screen) && $0.keys.contains(key) }?.command
    }

    /// The help screen's entries for `screen`: that screen's keys first, then those that work everywhere.
    /// A key whose write `login` may not make is marked `⊘` in both.
    public func helpEntries(for screen: ScreenID, login: StoreLogin = StoreLogin()) -> [HelpEntry] {
        let specific = bindings.filter { !$0.screens.isEmpty && $0.screens.contains(screen) }
        let general = bindings.filter { $0.screens.isEmpty }
        return (specific + general).map {
            HelpEntry(keys: $0.keysText, description: KeyTable.mark($0, login) + $0.description, section: $0.section)
        }
    }

    /// The hint bar for `screen`, in table order, screen keys first.
    public func hints(for screen: ScreenID, login: StoreLogin = StoreLogin()) -> [Hint] {
        let specific = bindings.filter { !$0.screens.isEmpty && $0.screens.contains(screen) && $0.hint != nil }
        let general = bindings.filter { $0.screens.isEmpty && $0.hint != nil }
        return (specific + general).map { Hint($0.hintKeyText, KeyTable.mark($0, login) + $0.hint!) }
    }

    /// `⊘` before what a key does when this login may not make its write.
    static func mark(_ binding: KeyBinding, _ login: StoreLogin) -> String {
        binding.command.write.flatMap(login.refusal) == nil ? "" : "⊘"
    }

    /// The whole table as a Markdown table, for the README.
    public func markdown() -> String {
        var lines = ["| Keys | Action | Where |", "|---|---|---|"]
        for binding in bindings {
            let keys = binding.keysText.replacingOccurrences(of: "|", with: "\\|")
            let where_ = binding.screens.isEmpty ? "everywhere" :
                ScreenID.allCases.filter(binding.screens.contains).map(\.helpSection).joined(separator: ", ")
            lines.append("| `\(keys)` | \(binding.description) | \(where_) |")
        }
        return lines.joined(separator: "\n")
    }
}

extension KeyTable {
    /// The keys subdesk ships with.
    ///
    /// The override dialog and the `:`/`/` prompt take keys of their own
    /// (typing, Tab between fields) and are not in the table: while one is
    /// open, no binding applies.
    public static let standard = KeyTable(bindings: [
        // Descriptions stay under 28 columns so the help screen fits two columns at 80x24.

        // Subscribers
        KeyBinding([.enter], .open, "open the subscription", section: "Subscribers", screens: [.subscribers], hint: "open"),
        KeyBinding([.char("/")], .filter, "filter: id, user, product…", section: "Subscribers",
                   screens: [.subscribers], hint: "filter"),
        KeyBinding((0...5).map { Key.char(Character(String($0))) }, .statusDigit, "status tab (0 all)",
                   section: "Subscribers", screens: [.subscribers], hint: "status", keyLabel: "0-5"),
        KeyBinding([.tab], .cycleStatus, "next status tab", section: "Subscribers", screens: [.subscribers]),
        KeyBinding([.char("s")], .toggleSort, "sort: expiry / last event", section: "Subscribers",
                   screens: [.subscribers], hint: "sort"),
        KeyBinding([.char("S")], .reverseSort, "reverse the sort", section: "Subscribers", screens: [.subscribers]),

        // Detail
        // The operator actions come first: they are why someone opened the subscription.
        KeyBinding([.char("r")], .revalidate, "revalidate with Apple", section: "Subscriber detail",
                   screens: [.detail], hint: "revalidate"),
        KeyBinding([.char("o")], .override, "override: grant/revoke/lift", section: "Subscriber detail",
                   screens: [.detail], hint: "override"),
        KeyBinding([.enter], .open, "expand/fold decoded payload", section: "Subscriber detail",
                   screens: [.detail], hint: "expand"),

        // Feed
        KeyBinding([.char(" ")], .pause, "pause / resume", section: "Live feed", screens: [.feed], hint: "pause"),
        KeyBinding([.char("/")], .filter, "filter: type, or rej(ected)", section: "Live feed", screens: [.feed], hint: "filter"),
        KeyBinding([.enter], .open, "open (refused: quarantine)", section: "Live feed", screens: [.feed], hint: "open"),

        // Daily counts
        KeyBinding([.char("k"), .up], .previousMetric, "previous metric", section: "Daily counts",
                   screens: [.daily], hint: "metric", hintKey: "j/k"),
        KeyBinding([.char("j"), .down], .nextMetric, "next metric", section: "Daily counts", screens: [.daily]),
        KeyBinding([.char("h"), .left], .earlierDays, "earlier days in range", section: "Daily counts",
                   screens: [.daily], hint: "days", hintKey: "h/l"),
        KeyBinding([.char("l"), .right], .laterDays, "later days in range", section: "Daily counts", screens: [.daily]),
        KeyBinding([.char("[")], .earlierRange, "range a week earlier", section: "Daily counts",
                   screens: [.daily], hint: "earlier"),
        KeyBinding([.char("]")], .laterRange, "range a week later", section: "Daily counts",
                   screens: [.daily], hint: "later"),
        KeyBinding([.char("p")], .cyclePeriod, "days/weeks/months", section: "Daily counts",
                   screens: [.daily], hint: "period"),
        KeyBinding([.char("f")], .cycleSegment, "paid/family/sandbox/all", section: "Daily counts",
                   screens: [.daily], hint: "segment"),

        // Cohorts
        KeyBinding([.char("m")], .cycleCohortMetric, "retention/LTV/trial", section: "Cohorts",
                   screens: [.cohorts], hint: "metric"),
        KeyBinding([.char("p")], .cyclePeriod, "month/week cohorts", section: "Cohorts",
                   screens: [.cohorts], hint: "period"),
        KeyBinding([.char("h"), .left], .columnsLeft, "earlier periods (columns)", section: "Cohorts",
                   screens: [.cohorts], hint: "periods", hintKey: "h/l"),
        KeyBinding([.char("l"), .right], .columnsRight, "later periods (columns)", section: "Cohorts", screens: [.cohorts]),
        KeyBinding([.char("f")], .cycleSegment, "paid/family/sandbox/all", section: "Cohorts",
                   screens: [.cohorts], hint: "segment"),

        // Retention messaging
        KeyBinding([.tab], .switchRetentionPane, "report / messages, images", section: "Retention messaging",
                   screens: [.retention], hint: "report/content"),
        KeyBinding([.char("u")], .refreshRetention, "refresh from Apple", section: "Retention messaging",
                   screens: [.retention], hint: "refresh"),
        KeyBinding([.char("d")], .deleteRetentionContent, "delete the selected (y/n)", section: "Retention messaging",
                   screens: [.retention], hint: "delete"),
        KeyBinding([.char("m")], .makeRetentionDefault, "make it a product's default", section: "Retention messaging",
                   screens: [.retention], hint: "default"),
        KeyBinding([.char("t")], .retentionPerformanceTest, "sandbox performance test", section: "Retention messaging",
                   screens: [.retention], hint: "perf test"),
        KeyBinding([.char("e")], .cycleRetentionEnvironment, "Production / Sandbox", section: "Retention messaging",
                   screens: [.retention]),

        // Quarantine
        KeyBinding([.enter], .open, "show the body", section: "Quarantine", screens: [.quarantine], hint: "show body"),

        // Audit log
        KeyBinding([.char("/")], .filter, "filter by target id", section: "Audit log", screens: [.audit], hint: "filter"),
        KeyBinding([.enter], .open, "open the subscription", section: "Audit log", screens: [.audit], hint: "open"),

        // Delivery gaps
        KeyBinding([.enter], .open, "open the subscription", section: "Delivery gaps", screens: [.gaps], hint: "open"),

        // Refund requests
        KeyBinding([.char("a")], .answerRefund, "send the suggested answer", section: "Refund requests",
                   screens: [.refunds], hint: "answer"),
        KeyBinding([.enter], .open, "open the subscription", section: "Refund requests", screens: [.refunds], hint: "open"),

        // Consent withdrawals
        KeyBinding([.char("h")], .markConsentHandled, "mark handled (a reason)", section: "Consent withdrawals",
                   screens: [.consent], hint: "handled"),
        KeyBinding([.enter], .open, "open the subscription", section: "Consent withdrawals", screens: [.consent], hint: "open"),
        KeyBinding([.char("a")], .toggleHandled, "show handled ones too", section: "Consent withdrawals",
                   screens: [.consent], hint: "all"),

        // Copying
        KeyBinding([.char("y")], .copyId, "copy the id (OSC 52)", section: "Copy",
                   screens: [.subscribers, .detail, .feed, .audit, .refunds, .consent]),

        // Moving
        KeyBinding([.char("j"), .down], .down, "down", section: "Moving", keyLabel: "j/↓"),
        KeyBinding([.char("k"), .up], .up, "up", section: "Moving", keyLabel: "k/↑"),
        KeyBinding([.pageDown, .ctrl("f")], .pageDown, "page down", section: "Moving"),
        KeyBinding([.pageUp, .ctrl("b")], .pageUp, "page up", section: "Moving"),
        KeyBinding([.char("g"), .home], .top, "first row (first page)", section: "Moving"),
        KeyBinding([.char("G"), .end], .bottom, "last row (last page)", section: "Moving"),

        // Everywhere
        // The hint bar drops pairs from its end when narrow, so the ones nobody can guess come first.
        KeyBinding([.char(":")], .commandLine, "command (Tab completes)", section: "Everywhere", hint: "command"),
        KeyBinding([.char("?")], .help, "this help", section: "Everywhere", hint: "help"),
        KeyBinding([.char("q"), .ctrl("c")], .quit, "quit", section: "Everywhere", hint: "quit", keyLabel: "q"),
        KeyBinding([.escape], .back, "back / clear the filter", section: "Everywhere", hint: "back"),
        KeyBinding([.char("z")], .cycleZone, "next time zone", section: "Everywhere"),
    ])
}
