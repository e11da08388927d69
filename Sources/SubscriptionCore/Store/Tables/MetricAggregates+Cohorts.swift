import Foundation

extension MetricAggregates {
    /// Every cohort aggregate of `kind` gathered by `period` in the given segments, its key
    /// taken apart (cohorts of every start: a report checks its filters' values against all
    /// of them). Read through the aggregates' covering index, by key range: a few thousand
    /// rows for a store of a million subscriptions.
    public func cohortCells(kind: CohortKind, period: CohortPeriod,
                            segments: Set<CountSegment> = [.paid]) throws -> [CohortShare.Cell] {
        let (low, high) = CohortShare.keyRange(kind, period)
        var cells: [CohortShare.Cell] = []
        try db.query("""
            SELECT \(Delta.list) FROM metric_buckets INDEXED BY metric_buckets_key
            WHERE key >= ? AND key < ? AND delta <> 0
            """, [low, high]) { row in
            let r = Delta.row(row)
            guard let segment = CountSegment(rawValue: r.string(.segment)), segments.contains(segment),
                  let cell = CohortShare.cell(key: r.string(.key), bucket: r.int64(.bucket), segment: segment,
                                              delta: r.int64(.delta)) else { return }
            cells.append(cell)
        }
        return cells
    }
}
