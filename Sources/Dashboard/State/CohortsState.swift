import SubscriptionCore

/// Which cohort report to compute: as `subdesk cohorts --metric --period --segment --where`.
public struct CohortsRequest: Equatable, Sendable {
    public var metric: CohortMetric
    public var period: CohortPeriod
    public var segment: DailySegment
    /// Only this product, group, storefront, offer type, start or duration (`:cohorts product=ID`).
    public var filter: CohortFilter?

    public init(metric: CohortMetric = .retention, period: CohortPeriod = .month, segment: DailySegment = .paid,
                filter: CohortFilter? = nil) {
        self.metric = metric
        self.period = period
        self.segment = segment
        self.filter = filter
    }

    /// The segment as the header names it: `paid`, `paid, product=app.monthly`.
    public var segmentLabel: String { segment.rawValue + (filter.map { ", \($0)" } ?? "") }
}

/// The `:cohorts` screen: the report shown, and where the triangle is scrolled to.
public struct CohortsState: Sendable {
    /// What `report` answers (or will, once loaded): a change takes effect when its report
    /// arrives, so a `:cohorts D=V` the store refuses leaves the screen as it was.
    public var choice = CohortsRequest()
    /// The last request asked for; an answer to any other is out of date and dropped.
    public var asked: CohortsRequest?
    public var report: CohortReport?
    /// Table lines hidden above the window (a cohort's `came back` line is a line of its own).
    public var scrollOffset = 0
    /// Period columns hidden on the left: 0 starts at period 0.
    public var columnOffset = 0

    public init() {}

    public var loaded: Bool { report != nil }
}
