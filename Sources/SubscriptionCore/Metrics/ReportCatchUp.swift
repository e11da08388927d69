import Foundation

/// The phases of a by-segment catch-up (`Store.catchUpSegments`), as recorded in the store.
public enum SegmentCatchUpPhase: String, Sendable {
    /// Taking the pending notes, each with the share it will add.
    case claiming
    /// Adding the taken shares, summed, to the aggregates in their key order.
    case writing
    /// Striking the notes whose share was added and has not changed since.
    case releasing
}

/// How far a by-segment catch-up has come: in `phase`, `done` of `total` notes (claiming,
/// releasing) or aggregate rows (writing).
public struct SegmentCatchUpProgress: Sendable, Equatable {
    public let phase: SegmentCatchUpPhase
    public let done: Int
    public let total: Int
}

/// What a report's catch-ups tell `Store.reportProgress`.
public enum ReportCatchUpProgress: Sendable, Equatable {
    /// Shares an earlier subdesk computed, recomputed: done of total subscriptions.
    case recomputing(done: Int, total: Int)
    /// The by-segment aggregates brought up to date.
    case segments(SegmentCatchUpProgress)
    /// Another connection's by-segment catch-up runs: this report waits for it.
    case waitingForAnotherCatchUp
}

extension MetricAggregates {
    /// Brings up to date, as far as this connection may write, what a report reads: the
    /// shares an earlier subdesk computed, and with `bySegment` the by-segment aggregates.
    /// Every report entry point (`DailyCountsReport.compute`, `CohortReport.compute`) calls
    /// it first, so none can forget it. A reader (or a store this connection may not write)
    /// reads as it stands: the by-segment part still exact, through the overlay.
    ///
    /// When another connection's by-segment catch-up runs, this waits for it (up to
    /// `waitSeconds`; it is taken over when its last write goes stale) instead of walking
    /// the same notes, then catches up what was noted meanwhile. A report reads the
    /// overlay either way, so it answers with every share pending when it started.
    public func bringReportsUpToDate(bySegment: Bool, waitSeconds: Double = 60) throws {
        guard mayCatchUp else { return }
        if try pendingShareCount() > 0 {
            try catchUpShares { [reportProgress = store.reportProgress] done, total in reportProgress?(.recomputing(done: done, total: total)) }
        }
        guard bySegment else { return }
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(max(0, waitSeconds) * 1e9)
        while try catchUpSegments(progress: { [reportProgress = store.reportProgress] in reportProgress?(.segments($0)) }) == nil,
              DispatchTime.now().uptimeNanoseconds < deadline {
            store.reportProgress?(.waitingForAnotherCatchUp)
            usleep(200_000)
        }
    }
}
