/// An aggregate row of the daily counts: an hour bucket, a key (`n:TYPE/SUBTYPE` for
/// notifications, `p:...` for periods and levels) and a segment.
public struct MetricsBucket: Equatable, Sendable {
    public var bucketStart: Millis
    public var key: String
    public var segment: CountSegment
    public var count: Int
}

/// Subscriptions counted apart: paid Production ones, family-shared access, and sandbox.
public enum CountSegment: String, CaseIterable, Sendable {
    case paid, familyShared = "family_shared", sandbox
}

extension Store {
    /// Aggregates in [from, to).
    public func metricBuckets(from: Millis, to: Millis) throws -> [MetricsBucket] {
        try db.rows("SELECT bucket, key, segment, delta FROM metric_buckets WHERE bucket >= ? AND bucket < ? AND delta <> 0",
                    [from, to]) { r in
            MetricsBucket(bucketStart: r.int64(0), key: r.string(1), segment: CountSegment(rawValue: r.string(2)) ?? .paid, count: r.int(3))
        }
    }

    /// Sums of the level keys (`p:start`, `p:end`, ...) over every bucket before `instant`.
    public func metricTotals(before instant: Millis, keys: [String]) throws -> [(key: String, segment: CountSegment, total: Int)] {
        let marks = keys.map { _ in "?" }.joined(separator: ",")
        return try db.rows("""
            SELECT key, segment, sum(delta) FROM metric_buckets INDEXED BY metric_buckets_key
            WHERE key IN (\(marks)) AND bucket < ? GROUP BY key, segment
            """, keys.map { $0 as SQLBindable? } + [instant]) { r in
            (r.string(0), CountSegment(rawValue: r.string(1)) ?? .paid, r.int(2))
        }
    }
}
