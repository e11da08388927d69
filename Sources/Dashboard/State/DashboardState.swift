import Foundation
import SubscriptionCore
import TerminalUI

/// Everything the dashboard shows, as a value: the reducer's input and output, the renderer's input.
public struct DashboardState: Sendable {
    /// The smallest terminal the screens are laid out for.
    public static let minimumWidth = 80
    public static let minimumHeight = 24

    public var width: Int
    public var height: Int
    /// The clock the screens read ("11d 4h left"), advanced by ticks so that tests can fix it.
    public var now: Millis
    public var time: ZonedTime
    /// The zones `z` cycles through, by identifier; "local" is whatever the machine's zone is.
    public var zoneChoices: [String]
    /// The store's file name, for the header.
    public var storeName: String
    /// The configured apps, and the one `:app NAME` scopes the desk to (nil: every app).
    /// Every screen's load reads `scope`, so a screen cannot show another app's rows.
    public var apps = ConfiguredApps(apps: [], fromSections: false)
    public var scope: DeskScope?
    /// The app the desk is scoped to, by its configured name.
    public var appName: String? { scope?.name }
    /// Who the store's login is and what it may not write (the header names it; refused keys say so).
    public var login = StoreLogin()
    /// Set while the store's file is gone from its path: the screen is no longer live.
    public var storeGone = false
    /// Why the store shown is not the configured one (the demo store standing in while no
    /// store exists at the default place); the header marks it and the opening message says it.
    public var standInNotice: String?
    public var themeName: String
    /// Theme names `:theme` completes.
    public var availableThemes: [String]
    public var keys: KeyTable
    /// What each notification type means: the feed, the gaps and the timeline colour by it.
    public var meanings: NotificationMeanings = .standard

    /// Screens entered, the current one last; never empty.
    public var stack: [ScreenID] = [.subscribers]
    public var showsHelp = false
    /// Every message of the session, oldest first, for `:messages`.
    public var messages: [LoggedMessage] = []
    /// Whether the `:messages` history is open over the screen.
    public var showsMessages = false
    public var prompt: PromptState?
    public var flash: FlashMessage?
    public var flashUntil: Millis = 0
    public var quitRequested = false
    /// Another process wrote to the store and the screen has not been reloaded since.
    public var refreshPending = false
    public var lastRefresh: Millis = 0

    public var subscribers = SubscriberListState()
    public var detail: DetailState?
    public var feed = FeedState()
    public var daily = DailyState()
    public var quarantine = QuarantineState()
    public var gaps = GapsState()
    public var retention = RetentionState()
    public var refunds = RefundsState()
    public var consent = ConsentState()
    public var health = HealthState()
    public var forward = ForwardScreenState()
    /// The `[forward NAME]` targets the configuration declares, by name: what `:forward`
    /// lists (and says when there is none), as `subdesk forward status` does.
    public var forwardTargets: [String] = []
    public var cohorts = CohortsState()
    public var audit = AuditState()
    /// The `o` dialog, modal over the detail while open.
    public var overrideDialog: OverrideDialogState?
    /// The subscription a background revalidation is asking Apple about.
    public var revalidating: String?
    /// When the running revalidation was asked for, for the time it has been waiting on Apple.
    public var revalidationStarted: Millis = 0
    /// When a `:ping` was asked for and has not answered yet.
    public var pingStarted: Millis?
    /// A question on the bottom line that y answers (any other key cancels), and what y does.
    public var confirmation: Confirmation?
    /// What is running on workers (a revalidation, a ping…), oldest first, as the session reports it.
    public var runningWork: [String] = []
    /// Set when the operator chose to quit once the running work has finished (and been audited).
    public var quitWhenIdle = false

    /// True when the App Store Server API key settings are missing: `:extend` says what
    /// to set before it asks y/n, instead of after the operator said yes.
    public var withoutServerAPIKey = false
    /// Where the key settings go, for the message that refuses such an action.
    public var serverAPIKeyPlace = ServerAPIKeyPlace()

    public struct Confirmation: Equatable, Sendable {
        public enum OnYes: Equatable, Sendable {
            /// Ask Apple (or another worker) for something.
            case ask(DashboardEffect)
            /// Record something in the store through `Operations` (audited); nothing goes to Apple.
            case record(DashboardEffect)
            /// Quit although work is still running.
            case quit
        }

        public var question: String
        public var onYes: OnYes

        public init(question: String, effect: DashboardEffect) {
            self.question = question
            self.onYes = .ask(effect)
        }

        public init(question: String, onYes: OnYes) {
            self.question = question
            self.onYes = onYes
        }
    }

    public init(width: Int, height: Int, now: Millis, timeZone: TimeZone = TimeZone(identifier: "UTC")!,
                storeName: String, themeName: String = "default", availableThemes: [String] = [],
                localZone: TimeZone = .current, keys: KeyTable = .standard) {
        self.width = width
        self.height = height
        self.now = now
        self.time = ZonedTime(zone: timeZone)
        self.storeName = storeName
        self.themeName = themeName
        self.availableThemes = availableThemes
        self.keys = keys
        self.zoneChoices = DashboardState.zoneChoices(start: timeZone, local: localZone)
    }

    public var screen: ScreenID { stack.last ?? .subscribers }

    public var isTooSmall: Bool { width < DashboardState.minimumWidth || height < DashboardState.minimumHeight }

    /// The zones `z` offers: UTC, the machine's own, then a few where App Store teams often sit.
    ///
    /// A zone given with `--tz` that is not among them joins the list, so
    /// cycling always comes back to it.
    static func zoneChoices(start: TimeZone, local: TimeZone) -> [String] {
        var choices = ["UTC", local.identifier, "America/Los_Angeles", "America/New_York", "Europe/London",
                       "Europe/Berlin", "Asia/Tokyo", "Australia/Sydney"]
        if !choices.contains(start.identifier) && ZonedTime.label(for: start) != "UTC" {
            choices.insert(start.identifier, at: 1)
        }
        var seen = Set<String>()
        return choices.filter { name in
            guard let zone = TimeZone(identifier: name) else { return false }
            return seen.insert(ZonedTime.label(for: zone)).inserted
        }
    }
}

/// The one app the desk shows (`:app NAME`, `--app NAME`): its configured name and which
/// stored records are its.
public struct DeskScope: Equatable, Sendable {
    public var name: String
    /// nil for the one app of a configuration that names no bundle id: every record is its.
    public var records: AppScope?

    public init(name: String, records: AppScope?) {
        self.name = name
        self.records = records
    }
}

/// One message the session showed, kept for `:messages`.
public struct LoggedMessage: Equatable, Sendable {
    public var at: Millis
    public var text: String
    public var isError: Bool
}
