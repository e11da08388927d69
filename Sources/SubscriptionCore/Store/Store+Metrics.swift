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
    /// Aggregates in [from, to) for the given segments.
    public func metricBuckets(from: Millis, to: Millis, segments: Set<CountSegment> = Set(CountSegment.allCases)) throws -> [MetricsBucket] {
        let names = CountSegment.allCases.filter(segments.contains)
        guard !names.isEmpty else { return [] }
        return try db.rows("""
            SELECT bucket, key, segment, delta FROM metric_buckets
            WHERE bucket >= ? AND bucket < ? AND delta <> 0 AND segment IN (\(names.map { _ in "?" }.joined(separator: ",")))
            """, [from, to] + names.map { $0.rawValue as SQLBindable? }) { r in
            MetricsBucket(bucketStart: r.int64(0), key: r.string(1), segment: CountSegment(rawValue: r.string(2)) ?? .paid, count: r.int(3))
        }
    }

    /// Calls `each(keyIndex, bucketStart, delta)` for every non-zero aggregate of `keys[keyIndex]`
    /// in [from, to) in the given segments, in bucket order per key and segment. Reads key by
    /// key through the covering index, so no row's text is decoded: a year of a large store
    /// is a few hundred thousand rows.
    public func forEachMetricBucket(keys: [String], from: Millis, to: Millis, segments: Set<CountSegment>,
                                    _ each: (Int, Millis, Int) -> Void) throws {
        for (index, key) in keys.enumerated() {
            for segment in CountSegment.allCases where segments.contains(segment) {
                try db.query("""
                    SELECT bucket, delta FROM metric_buckets INDEXED BY metric_buckets_key
                    WHERE key = ? AND segment = ? AND bucket >= ? AND bucket < ? AND delta <> 0
                    """, [key, segment.rawValue, from, to]) { r in each(index, r.int64(0), r.int(1)) }
            }
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

extension Store {
    /// Moves the aggregates from a subscription's `old` share to `new`: counts and money.
    func applyMetrics(_ new: MetricContributions, replacing old: MetricContributions) throws {
        for (k, delta) in new.difference(from: old) {
            try addToMetric(bucket: k.bucket, key: k.key.name, segment: k.segment, delta: delta)
        }
        for (k, delta) in new.amountDifference(from: old) {
            try addToMetric(bucket: k.bucket, key: k.kind.name(k.currency), segment: k.segment, delta: Int(delta))
        }
    }

    /// The currencies the aggregates hold money in, from the keys alone.
    public func metricCurrencies() throws -> [String] {
        let keys = try db.rows("SELECT DISTINCT key FROM metric_buckets WHERE key >= 'a:' AND key < 'a;'") { $0.string(0) }
        return Array(Set(keys.compactMap { $0.split(separator: ":").last.map(String.init) })).sorted()
    }

    /// Subscriptions whose share of the counts was computed by an older subdesk.
    public func pendingMetricsCount() throws -> Int {
        try db.first("SELECT count(*) FROM metrics_pending") { $0.int(0) } ?? 0
    }

    /// Recomputes the share of the counts of every subscription `pendingMetricsCount`
    /// counts, `batch` to a write, telling `progress` (done, total) after each.
    @discardableResult
    public func catchUpMetrics(batch: Int = 2_000, progress: ((Int, Int) -> Void)? = nil) throws -> Int {
        let total = try pendingMetricsCount()
        var done = 0
        while true {
            let count = try write { () -> Int in
                let otids = try db.rows("SELECT original_transaction_id FROM metrics_pending LIMIT ?", [batch]) { $0.string(0) }
                for otid in otids {
                    let history = try history(originalTransactionId: otid)
                    let fresh = MetricContributions.of(transactions: history.transactions, events: history.events, renewal: history.renewal)
                    let stored = try db.first("SELECT metrics FROM subscriptions WHERE original_transaction_id = ?", [otid]) {
                        $0.isNull(0) ? MetricContributions() : MetricContributions(encoded: $0.data(0))
                    } ?? MetricContributions()
                    try applyMetrics(fresh, replacing: stored)
                    try db.run("UPDATE subscriptions SET metrics = ? WHERE original_transaction_id = ?", [fresh.encoded(), otid])
                    try db.run("DELETE FROM metrics_pending WHERE original_transaction_id = ?", [otid])
                }
                return otids.count
            }
            done += count
            progress?(done, total)
            if count < batch { return done }
        }
    }
}
