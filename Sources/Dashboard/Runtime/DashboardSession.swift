import Foundation
import SubscriptionCore
import TerminalUI

/// Runs the dashboard against a store: reduces actions, performs the effects, watches for changes.
///
/// Everything a terminal backend needs and nothing terminal-specific: the
/// backend feeds keys, sizes and clock ticks in, and asks for frames and the
/// theme. The store is used from the calling thread only, as `Store` requires.
public final class DashboardSession {
    public private(set) var state: DashboardState
    /// The theme frames should be painted in; changes when `:theme` succeeds.
    public private(set) var theme: Theme
    public let store: Store
    let themes: ThemeCatalog
    let clock: () -> Millis
    private var lastDataVersion: Int?

    /// At most this many actions per dispatch: a guard against two loads asking for each other forever.
    static let actionBudget = 64

    public init(store: Store, state: DashboardState, theme: Theme = .standard, themes: ThemeCatalog = ThemeCatalog(searchPaths: []),
                clock: @escaping () -> Millis = DateText.nowMillis) {
        self.store = store
        self.state = state
        self.theme = theme
        self.themes = themes
        self.clock = clock
        if self.state.availableThemes.isEmpty { self.state.availableThemes = themes.availableNames() }
    }

    public var shouldQuit: Bool { state.quitRequested }

    /// Loads the first screen.
    public func start() {
        lastDataVersion = try? store.dataVersion()
        send(.start)
    }

    /// Reduces `action` and performs every effect that follows from it, in order.
    public func send(_ action: DashboardAction) {
        var queue = [action]
        var budget = DashboardSession.actionBudget
        while !queue.isEmpty && budget > 0 {
            budget -= 1
            let effects = DashboardReducer.reduce(into: &state, queue.removeFirst())
            for effect in effects { queue += perform(effect) }
        }
    }

    /// Advances the clock and, when another process wrote to the store, refreshes what is on screen.
    public func tick() {
        send(.tick(now: clock()))
        if let version = try? store.dataVersion(), version != lastDataVersion {
            lastDataVersion = version
            send(.storeChanged)
        }
    }

    public func resize(width: Int, height: Int) {
        guard width != state.width || height != state.height else { return }
        send(.resize(width: width, height: height))
    }

    /// The current frame.
    public func render(into buffer: inout ScreenBuffer) {
        DashboardRenderer.render(state, into: &buffer)
    }

    // MARK: - Effects

    func perform(_ effect: DashboardEffect) -> [DashboardAction] {
        do {
            switch effect {
            case .loadSubscribers(let request):
                return [.subscribersLoaded(request, try loadPage(request))]
            case .loadStatusCounts:
                return [.statusCountsLoaded(try store.statusCounts(), total: try store.subscriptionCount())]
            case .loadDetail(let id):
                return [.detailLoaded(originalTransactionId: id, try loadDetail(id))]
            case .loadPayload(let id, let key, let kind, let reference):
                return [.payloadLoaded(originalTransactionId: id, entryKey: key, lines: try payloadLines(kind: kind, reference: reference))]
            case .pollFeed(let afterId):
                let now = clock()
                let entries = try store.intakeLog(afterId: afterId, limit: FeedState.capacity)
                let rate = try store.intakeRate(minutes: FeedState.rateMinutes, now: now)
                return [.feedLoaded(entries, rate: rate, now: now)]
            case .loadDaily(let request):
                let days = try DailyCountsReport.compute(store: store, from: request.from, to: request.to,
                                                         timeZone: request.zone, segments: request.segment.segments)
                return [.dailyLoaded(request, days)]
            case .loadQuarantine:
                return [.quarantineLoaded(try store.quarantined(limit: QuarantineState.limit))]
            case .applyTheme(let name):
                let loaded = try themes.load(name)
                theme = loaded.theme
                return [.themeApplied(name: loaded.theme.name, warnings: loaded.warnings.map(\.description))]
            }
        } catch {
            return [.failed("\(error)")]
        }
    }

    func loadPage(_ request: SubscriberPageRequest) throws -> SubscriberPage {
        let query = request.query
        let limit = request.limit
        switch request.position {
        case .first:
            let rows = try store.page(query, limit: limit)
            return SubscriberPage(rows: rows, reachesStart: true, reachesEnd: rows.count < limit)
        case .last:
            let rows = try store.page(query, backward: true, limit: limit)
            return SubscriberPage(rows: rows, reachesStart: rows.count < limit, reachesEnd: true)
        case .after(let cursor):
            let rows = try store.page(query, after: cursor, limit: limit)
            return SubscriberPage(rows: rows, reachesStart: false, reachesEnd: rows.count < limit)
        case .before(let cursor):
            let rows = try store.page(query, after: cursor, backward: true, limit: limit)
            return SubscriberPage(rows: rows, reachesStart: rows.count < limit, reachesEnd: false)
        case .around(let cursor):
            let half = max(1, limit / 2)
            let before = try store.page(query, after: cursor, backward: true, limit: half)
            // With nothing before the cursor the window starts at the top of the list.
            let from = before.last.map { Store.cursor(for: $0, in: query) }
            let rest = try store.page(query, after: from, limit: limit)
            return SubscriberPage(rows: before + rest, reachesStart: before.count < half, reachesEnd: rest.count < limit)
        }
    }

    func loadDetail(_ id: String) throws -> DetailContent? {
        guard let row = try store.subscription(originalTransactionId: id) else { return nil }
        let report = try SubscriptionReport.load(store: store, row: row, now: state.now)
        let others = try store.subscriptions(subscriberId: row.subscriber.id)
            .map(\.state.originalTransactionId).filter { $0 != id }
        return DetailContent(subscriber: row.subscriber, report: report, otherSubscriptions: others)
    }

    func payloadLines(kind: String, reference: String) throws -> [String] {
        let time = state.time
        if kind == "notification" {
            guard let stored = try store.notification(uuid: reference) else { return ["notification \(reference) is not stored"] }
            var received = "received \(time.format(stored.receivedDate, "yyyy-MM-dd HH:mm:ss")) \(time.label)"
            if let source = stored.source { received += " from " + SafeText.sanitize(source) }
            return ["notification " + SafeText.sanitize(reference), received]
                + PayloadText.notificationLines(stored.body, time: time)
        }
        guard let transaction = try store.transaction(id: reference) else { return ["transaction \(reference) is not stored"] }
        return PayloadText.transactionLines(transaction, time: time)
    }
}
