import Foundation

/// Counts a write adds to, held in memory and written just before it commits.
extension Store {
    struct IntakeCountKey: Hashable, Comparable {
        var environment: String
        var type: String
        var outcome: String
        var reason: String

        static func < (a: Self, b: Self) -> Bool {
            (a.environment, a.type, a.outcome, a.reason) < (b.environment, b.type, b.outcome, b.reason)
        }
    }

    struct MetricRowKey: Hashable {
        var bucket: Millis
        var key: String
        var segment: CountSegment
    }

    /// Sums daily-count deltas in memory until `flushMetrics()`, for bulk loads.
    public func deferMetrics(_ on: Bool) throws {
        if !on { try flushMetrics() }
        deferringMetrics = on
    }

    public func flushMetrics() throws {
        let pending = pendingMetrics.filter { $0.value != 0 }.sorted {
            ($0.key.bucket, $0.key.key, $0.key.segment.rawValue) < ($1.key.bucket, $1.key.key, $1.key.segment.rawValue)
        }
        pendingMetrics.removeAll()
        let statuses = pendingStatusCounts.filter { $0.value != 0 }.sorted { $0.key < $1.key }
        pendingStatusCounts.removeAll()
        let intakeCounts = pendingIntakeCounts.sorted { $0.key < $1.key }
        pendingIntakeCounts.removeAll()
        for (key, held) in intakeCounts { try writeIntakeCount(key, count: held.count, last: held.last) }
        for (status, delta) in statuses {
            try db.run("""
                INSERT INTO status_counts (status, count) VALUES (?, ?)
                ON CONFLICT (status) DO UPDATE SET count = status_counts.count + excluded.count
                """, [status, delta])
        }
        let rowsPerStatement = db.dialect.rowsPerInsert
        var start = 0
        while start < pending.count {
            let chunk = pending[start..<min(pending.count, start + rowsPerStatement)]
            var values: [SQLBindable?] = []
            values.reserveCapacity(chunk.count * 4)
            for (k, delta) in chunk { values += [k.bucket, k.key, k.segment.rawValue, delta] }
            try db.run("""
                INSERT INTO metric_buckets (bucket, key, segment, delta) VALUES \(Array(repeating: "(?,?,?,?)", count: chunk.count).joined(separator: ","))
                ON CONFLICT (bucket, key, segment) DO UPDATE SET delta = metric_buckets.delta + excluded.delta
                """, values)
            start += chunk.count
        }
    }

    /// Adds `delta` to an aggregate; written when the write around it commits.
    func addToMetric(bucket: Millis, key: String, segment: CountSegment, delta: Int) throws {
        pendingMetrics[MetricRowKey(bucket: bucket, key: key, segment: segment), default: 0] += delta
        if !deferringMetrics && !db.isInTransaction { try flushMetrics() }
    }
}
