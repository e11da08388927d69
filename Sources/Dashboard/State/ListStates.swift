import Foundation
import SubscriptionCore

/// The subscribers table: a window of rows around the selection, never the whole store.
///
/// Rows arrive in keyset pages; `atStart` and `atEnd` say whether the window
/// touches the ends of the list, so moving past its edge knows whether to
/// load more or stop.
public struct SubscriberListState: Sendable {
    public var query = SubscriptionQuery(sort: .lastEvent, descending: true)
    public var statusFilter: SubscriptionStatus?
    public var rows: [SubscriptionRow] = []
    /// Index into `rows`.
    public var selection = 0
    public var scrollOffset = 0
    public var atStart = true
    public var atEnd = true
    public var loaded = false
    public var totalCount: Int?
    public var statusCounts: [SubscriptionStatus: Int] = [:]
    /// Whether the last page read stopped at the filter's scan limit (see `SubscriptionQuery.scanLimit`).
    public var searchCut = false
    /// Rows with an override in force, by original transaction id, as their pages said.
    public var overrides: [String: Override.Kind] = [:]
    /// Rows whose customer withdrew consent (an open RESCIND_CONSENT), as their pages said.
    public var consentWithdrawn: Set<String> = []
    /// When access ended for revoked rows (their refund), as their pages said: the EXPIRES
    /// column shows it, as the detail does, instead of the refunded period's signed end.
    public var accessEnded: [String: Millis] = [:]
    /// Rows per page; nil sizes pages from the screen. Small pages make paging visible in tests.
    public var pageSize: Int?

    public init() {}

    public var selectedRow: SubscriptionRow? { rows.indices.contains(selection) ? rows[selection] : nil }
}

/// One subscription opened from the list or the feed.
public struct DetailState: Sendable {
    public var originalTransactionId: String
    public var content: DetailContent?
    /// Index into the timeline.
    public var selection = 0
    /// In screen lines, counting expanded lines.
    public var scrollOffset = 0
    /// Expanded timeline lines by `DetailState.entryKey`, with what they expand to.
    public var expanded: [String: [String]] = [:]
    /// Set when the subscription could not be loaded.
    public var missing: String?

    public init(originalTransactionId: String) {
        self.originalTransactionId = originalTransactionId
    }

    /// Identifies a timeline line across reloads, when new lines may shift the indexes.
    public static func entryKey(_ event: TimelineEvent) -> String {
        "\(event.date)|\(event.kind)|\(event.reference ?? "")|\(event.detail)"
    }

    public var timeline: [TimelineEvent] { content?.report.timeline ?? [] }
}

/// What the detail screen shows about one subscription.
public struct DetailContent: Sendable {
    public var subscriber: Subscriber
    public var report: SubscriptionReport
    /// The subscriber's other subscriptions, by original transaction id.
    public var otherSubscriptions: [String]
    /// What Apple sent beyond the derived state (storefront, refund share, next renewal...),
    /// read once from the payloads rather than at every frame.
    public var facts: AppleFacts
    /// The subscription's refund requests, newest first.
    public var refundRequests: [RefundRequest]
    /// Its notifications' deliveries to the `[forward]` targets, oldest first.
    public var deliveries: [ForwardDelivery]

    public init(subscriber: Subscriber, report: SubscriptionReport, otherSubscriptions: [String], refundRequests: [RefundRequest] = [],
                deliveries: [ForwardDelivery] = []) {
        self.deliveries = deliveries
        self.subscriber = subscriber
        self.report = report
        self.facts = report.appleFacts
        self.otherSubscriptions = otherSubscriptions
        self.refundRequests = refundRequests
    }
}

/// The live feed: intake outcomes as they arrive, newest first.
public struct FeedState: Sendable {
    /// Newest first, at most `FeedState.capacity`.
    public var entries: [IntakeLogEntry] = []
    /// Entries that arrived while paused, shown on resume.
    public var held: [IntakeLogEntry] = []
    public var lastId: Int64 = 0
    /// Space: nothing new is shown until Space again (the rows wait in `held`).
    public var paused = false
    /// Rows that arrived above the view while it held still, because the selection was
    /// moved away from the newest row; 0 once the selection is back on the newest.
    public var newer = 0
    /// Case-insensitive text the TYPE/SUBTYPE must contain.
    public var filter = ""
    /// Intake outcomes per minute, oldest first, the last one the current minute.
    public var rate: [Int] = []
    public var selection = 0
    public var scrollOffset = 0
    public var lastPoll: Millis = 0
    public var loaded = false

    public static let capacity = 500
    /// Minutes of history in the rate sparkline.
    public static let rateMinutes = 30

    public init() {}

    /// Whether new rows push in at the top with the selection staying on the newest, as
    /// `tail -f` does: while the selection is on the newest row. Moving away holds the view.
    public var following: Bool { selection == 0 }

    /// What the feed's header says of arrivals: `following`, `held · 12 new ↑` once the
    /// selection moved away, or `paused (+3 new)` after Space.
    public var arrivalText: String {
        if paused { return "paused" + (held.isEmpty ? "" : " (+\(held.count) new)") }
        if following { return "following" }
        return "held" + (newer > 0 ? " · \(newer) new ↑" : "")
    }

    /// Back on the newest row, following again (`g`, reopening the feed).
    public mutating func followNewest() {
        selection = 0
        scrollOffset = 0
        newer = 0
    }

    /// The entries the filter lets through.
    public var visible: [IntakeLogEntry] {
        guard !filter.isEmpty else { return entries }
        return entries.filter { FeedState.filterText($0).localizedCaseInsensitiveContains(filter) }
    }

    /// What `/` matches: the type, or for a refused body `REJECTED` and its reason, which is
    /// what its TYPE column shows (a refused body has no type).
    public static func filterText(_ entry: IntakeLogEntry) -> String {
        entry.result == .rejected ? "REJECTED " + (entry.detail ?? "") : typeText(entry)
    }

    /// `TYPE/SUBTYPE`, or `?` for a body that never got as far as having a type.
    public static func typeText(_ entry: IntakeLogEntry) -> String {
        guard let type = entry.type else { return "?" }
        if let subtype = entry.subtype, !subtype.isEmpty { return type + "/" + subtype }
        return type
    }
}

/// Which subscriptions the daily counts count.
public enum DailySegment: String, CaseIterable, Sendable {
    case paid, familyShared = "family shared", sandbox, all

    public var segments: Set<CountSegment> {
        switch self {
        case .paid: return [.paid]
        case .familyShared: return [.familyShared]
        case .sandbox: return [.sandbox]
        case .all: return Set(CountSegment.allCases)
        }
    }
}

/// A range of days to count, in one time zone.
public struct DailyRequest: Equatable, Sendable {
    public var from: String
    public var to: String
    public var zone: TimeZone
    public var segment: DailySegment
    public var period: CountPeriod
    /// Only this product, group, storefront or offer type (`:daily product=ID`).
    public var filter: SegmentFilter?

    public init(from: String, to: String, zone: TimeZone, segment: DailySegment, period: CountPeriod = .day,
                filter: SegmentFilter? = nil) {
        self.from = from
        self.to = to
        self.zone = zone
        self.segment = segment
        self.period = period
        self.filter = filter
    }

    /// The segment as the header and the chart name it: `paid`, `paid, product=app.monthly`.
    public var segmentLabel: String { segment.rawValue + (filter.map { ", \($0)" } ?? "") }
}

/// The daily counts screen: metrics by day, and a chart of the selected metric.
public struct DailyState: Sendable {
    public var rangeDays = 30
    /// Days the range ends before today: 0 ends today, 7 a week ago.
    public var endOffset = 0
    public var segment: DailySegment = .paid
    /// Only this product, group, storefront or offer type.
    public var filter: SegmentFilter?
    /// Days, weeks from Monday, or months per column.
    public var period: CountPeriod = .day
    /// Index into `metrics`.
    public var metric = 0
    public var scrollOffset = 0
    /// Days of the range hidden to the right of the columns: 0 shows the latest that fit.
    public var dayOffset = 0
    public var request: DailyRequest?
    public var days: [DayCounts] = []
    public var loaded = false

    public init() {}

    /// The metrics the rows show: those the counts were computed with.
    public var metrics: [Metric] { days.first?.metrics ?? Metric.all }

    public var selectedMetric: Metric { metrics[min(max(0, metric), metrics.count - 1)] }
}

/// The on-call signals as last judged, for `:health` and the feed's header line.
public struct HealthState: Sendable {
    public var signals: [HealthSignal] = []
    public var loaded = false
    /// The clock when the signals were judged (ages are as of then).
    public var readAt: Millis = 0
    /// When a reading was last asked for, so ticks re-read at most every `refreshInterval`.
    public var lastRequest: Millis = 0
    /// Silence and deadlines move with the clock, not only with writes: re-judge this often.
    public static let refreshInterval: Millis = 5000

    public init() {}

    public var firing: [HealthSignal] { signals.filter(\.isFiring) }
}

/// The relay's targets as last read, for `:forward`.
public struct ForwardScreenState: Sendable {
    public var rows: [ForwardTargetStatus] = []
    public var loaded = false
    /// The clock when the rows were read (ages are as of then).
    public var readAt: Millis = 0
    /// When a reading was last asked for, so ticks re-read at most every `refreshInterval`.
    public var lastRequest: Millis = 0
    /// Ages move with the clock, not only with writes: re-read this often.
    public static let refreshInterval: Millis = 5000

    public init() {}
}

/// `:retention`: the figures of Apple's retention messaging report, by one grouping; Tab
/// shows the console's side: the app's messages and images as the store keeps them (text,
/// review state, checksum), its default messages, and the last performance test.
public struct RetentionState: Sendable {
    public enum Pane: Sendable, Equatable {
        case report
        /// Messages, images and default messages, with the console's actions.
        case content
    }

    public var grouping: RetentionGrouping = .product
    public var report: RetentionReport?
    public var loaded = false

    public var pane: Pane = .report
    /// The environment the console's side shows and acts in (the performance test is always the sandbox's).
    public var environment: AppStoreEnvironment = .production
    /// The store's records of the desk's app in `environment`: messages, images and default messages.
    public var records: [RetentionRecord] = []
    public var contentLoaded = false
    public var selection = 0
    public var scrollOffset = 0
    /// Apple's lists as the last refresh read them (in `environment`), by identifier.
    public var appleLists: [String: RetentionComparison] = [:]
    /// When Apple's lists were last read, nil before.
    public var refreshedAt: Millis?
    /// The last performance test's result, and its request id.
    public var performance: RetentionPerformanceResult?
    public var performanceRequest: String?

    public init() {}

    /// The messages and images the list shows, messages first: the store's records, with
    /// what Apple's list said at the last refresh; then what only Apple's list shows.
    public var contentRows: [RetentionContentRow] {
        var rows: [RetentionContentRow] = []
        for kind in [RetentionRecord.Kind.message, .image] {
            for record in records where record.kind == kind {
                let listed = appleLists[kind.rawValue + " " + record.identifier]
                rows.append(RetentionContentRow(kind: kind, identifier: record.identifier, state: record.state,
                                                summary: RetentionComparison.summary(record), checksum: record.checksum,
                                                difference: refreshedAt == nil ? nil : (listed == nil ? .onlyHere : .same)))
            }
            for (key, listed) in appleLists.sorted(by: { $0.key < $1.key })
            where key.hasPrefix(kind.rawValue + " ") && listed.difference == .onlyAtApple {
                rows.append(RetentionContentRow(kind: kind, identifier: listed.identifier, state: listed.appleState,
                                                summary: listed.summary ?? "", checksum: nil, difference: .onlyAtApple))
            }
        }
        return rows
    }

    public var selected: RetentionContentRow? {
        let rows = contentRows
        return rows.indices.contains(selection) ? rows[selection] : nil
    }

    /// The default messages kept, product then locale.
    public var defaults: [RetentionRecord] { records.filter { $0.kind == .defaultMessage } }
}

/// One message or image on `:retention`'s console side.
public struct RetentionContentRow: Equatable, Sendable {
    public var kind: RetentionRecord.Kind
    public var identifier: String
    /// The review state as last read from Apple (PENDING, APPROVED, REJECTED), nil before.
    public var state: String?
    /// A message's header, an image's size class.
    public var summary: String
    public var checksum: String?
    /// How the store and Apple's list differed at the last refresh; nil before one.
    public var difference: RetentionComparison.Difference?
}

/// Delivery gaps found by backfills, newest found first.
public struct GapsState: Sendable {
    public var entries: [DeliveryGap] = []
    public var selection = 0
    public var scrollOffset = 0
    public var loaded = false
    public static let limit = 500

    public init() {}
}

/// One refund request as the queue shows it: what the store knows and what the policy
/// would send.
public struct RefundQueueEntry: Equatable, Sendable {
    public var request: RefundRequest
    public var facts: RefundRequestFacts
    public var suggested: ConsumptionAnswer

    public init(request: RefundRequest, facts: RefundRequestFacts, suggested: ConsumptionAnswer) {
        self.request = request
        self.facts = facts
        self.suggested = suggested
    }
}

/// The refund-request queue: undecided requests, nearest deadline first, then decided ones.
public struct RefundsState: Sendable {
    public var entries: [RefundQueueEntry] = []
    public var selection = 0
    public var scrollOffset = 0
    public var loaded = false
    public static let limit = 200

    public init() {}

    public var selected: RefundQueueEntry? { entries.indices.contains(selection) ? entries[selection] : nil }
}

/// Rejected bodies, newest first, and the one being read.
public struct QuarantineState: Sendable {
    public var entries: [QuarantineEntry] = []
    public var selection = 0
    public var scrollOffset = 0
    public var loaded = false
    /// The body being read: its entry and its lines, decoded and escaped.
    public var openEntry: QuarantineEntry?
    public var bodyLines: [String] = []
    public var bodyScroll = 0
    /// A rejected body the feed asked to open (by when it was last refused and why), opened
    /// as soon as the list arrives.
    public var pendingOpen: (at: Millis, reason: String)?

    public static let limit = 200

    public init() {}
}

/// The `:consent` screen: consent withdrawals, open ones first, each newest first.
public struct ConsentState: Sendable {
    /// Every stored withdrawal, handled ones included, in the order the screen lists them.
    public var entries: [ConsentWithdrawal] = []
    /// Whether handled withdrawals are listed too (`a`), as `subdesk consent --all`.
    public var includeHandled = false
    public var selection = 0
    public var scrollOffset = 0
    public var loaded = false

    public init() {}

    /// Open withdrawals first (they need an operator), each group newest first.
    public static func ordered(_ withdrawals: [ConsentWithdrawal]) -> [ConsentWithdrawal] {
        let newest = withdrawals.sorted { ($0.signedDate, $1.notificationUUID) > ($1.signedDate, $0.notificationUUID) }
        return newest.filter { !$0.isHandled } + newest.filter(\.isHandled)
    }

    public var openCount: Int { entries.filter { !$0.isHandled }.count }

    /// The rows on screen: the open ones, or all with `includeHandled`.
    public var visible: [ConsentWithdrawal] { includeHandled ? entries : entries.filter { !$0.isHandled } }

    public var selected: ConsentWithdrawal? {
        let rows = visible
        return rows.indices.contains(selection) ? rows[selection] : nil
    }
}
