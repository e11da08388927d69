import Foundation

extension Store {
    /// Every cohort aggregate of `kind` gathered by `period` in the given segments, its key
    /// taken apart (cohorts of every start: a report checks its filters' values against all
    /// of them). Read through the aggregates' covering index, by key range: a few thousand
    /// rows for a store of a million subscriptions.
    public func cohortCells(kind: CohortKind, period: CohortPeriod,
                            segments: Set<CountSegment> = [.paid]) throws -> [CohortShare.Cell] {
        let (low, high) = CohortShare.keyRange(kind, period)
        var cells: [CohortShare.Cell] = []
        try db.query("""
            SELECT key, segment, bucket, delta FROM metric_buckets INDEXED BY metric_buckets_key
            WHERE key >= ? AND key < ? AND delta <> 0
            """, [low, high]) { r in
            guard let segment = CountSegment(rawValue: r.string(1)), segments.contains(segment),
                  let cell = CohortShare.cell(key: r.string(0), bucket: r.int64(2), segment: segment, delta: r.int64(3)) else { return }
            cells.append(cell)
        }
        return cells
    }
}
