import Foundation

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

    /// What the by-segment aggregates lack while subscriptions wait in
    /// `metric_segments_pending`, for a connection that may not bring them up to date (a
    /// reader): the pending shares summed in memory, as `catchUpSegments` would write them.
    /// Every role then reads the numbers the owner reads. nil when nothing is pending or
    /// this connection can catch up itself. Summed again only after another commit.
    func segmentOverlay() throws -> SegmentOverlay? {
        guard isReadOnly else { return nil }
        let version = try dataVersion()
        if let cached = segmentOverlayCache, cached.version == version { return cached.overlay.isEmpty ? nil : cached.overlay }
        let overlay = SegmentOverlay(try pendingSegmentSums().sums.rows())
        segmentOverlayCache = (version, overlay)
        return overlay.isEmpty ? nil : overlay
    }

    /// What the pending subscriptions change in the by-segment aggregates: each one's share
    /// now, less the share the aggregates last took, summed in memory; and how many were
    /// read. A reader's overlay sums every one; the catch-up sums those of `only`.
    private func pendingSegmentSums(only: ArraySlice<String>? = nil) throws -> (sums: SegmentSums, count: Int) {
        var sums = SegmentSums()
        var count = 0
        let part = only.map { "WHERE p.original_transaction_id IN (\($0.map { _ in "?" }.joined(separator: ",")))" } ?? ""
        try db.query("""
            SELECT p.applied, s.metrics FROM metric_segments_pending p
            LEFT JOIN subscriptions s ON s.original_transaction_id = p.original_transaction_id \(part)
            """, only.map { $0.map { $0 as SQLBindable? } } ?? []) { r in
            if !r.isNull(0) { sums.add(encoded: r.data(0), sign: -1) }
            if !r.isNull(1) { sums.add(encoded: r.data(1), sign: 1) }
            count += 1
        }
        return (sums, count)
    }

    /// Calls `each(keyIndex, bucketStart, delta)` for every non-zero aggregate of `keys[keyIndex]`
    /// in [from, to) in the given segments (and only `filter`'s part, when given), in bucket
    /// order per key and segment. Reads key by key through a covering index, so no row's
    /// text is decoded: a year of a large store is a few hundred thousand rows.
    public func forEachMetricBucket(keys: [String], from: Millis, to: Millis, segments: Set<CountSegment>,
                                    filter: SegmentFilter? = nil, _ each: (Int, Millis, Int) -> Void) throws {
        let overlay = filter == nil ? nil : try segmentOverlay()
        for (index, key) in keys.enumerated() {
            for segment in CountSegment.allCases where segments.contains(segment) {
                if let filter {
                    // Stored rows and the pending part merged in bucket order.
                    var merged = overlay?.deltas(filter, key: key, segment: segment, from: from, to: to) ?? [:]
                    try db.query("""
                        SELECT bucket, delta FROM metric_segments
                        WHERE dimension = ? AND value = ? AND key = ? AND segment = ? AND bucket >= ? AND bucket < ? AND delta <> 0
                        """, [filter.dimension.rawValue, filter.value, key, segment.rawValue, from, to]) { r in
                        if overlay == nil { each(index, r.int64(0), r.int(1)) } else { merged[r.int64(0), default: 0] += r.int(1) }
                    }
                    if overlay != nil {
                        for (bucket, delta) in merged.sorted(by: { $0.key < $1.key }) where delta != 0 { each(index, bucket, delta) }
                    }
                } else {
                    try db.query("""
                        SELECT bucket, delta FROM metric_buckets INDEXED BY metric_buckets_key
                        WHERE key = ? AND segment = ? AND bucket >= ? AND bucket < ? AND delta <> 0
                        """, [key, segment.rawValue, from, to]) { r in each(index, r.int64(0), r.int(1)) }
                }
            }
        }
    }

    /// Sums of the level keys (`p:new_paid`, `p:churn`, ...) over every bucket before `instant`
    /// (of `filter`'s part only, when given).
    public func metricTotals(before instant: Millis, keys: [String], filter: SegmentFilter? = nil) throws
        -> [(key: String, segment: CountSegment, total: Int)] {
        let marks = keys.map { _ in "?" }.joined(separator: ",")
        let read: (SQLRow) -> (key: String, segment: CountSegment, total: Int) = { r in
            (r.string(0), CountSegment(rawValue: r.string(1)) ?? .paid, r.int(2))
        }
        if let filter {
            let stored = try db.rows("""
                SELECT key, segment, sum(delta) FROM metric_segments
                WHERE dimension = ? AND value = ? AND key IN (\(marks)) AND bucket < ? GROUP BY key, segment
                """, [filter.dimension.rawValue, filter.value] + keys.map { $0 as SQLBindable? } + [instant], read)
            guard let overlay = try segmentOverlay() else { return stored }
            var totals: [String: [CountSegment: Int]] = [:]
            for row in stored { totals[row.key, default: [:]][row.segment, default: 0] += row.total }
            for (key, segment, delta) in overlay.totals(filter, keys: Set(keys), before: instant) {
                totals[key, default: [:]][segment, default: 0] += delta
            }
            return totals.flatMap { key, bySegment in bySegment.map { (key, $0.key, $0.value) } }
        }
        return try db.rows("""
            SELECT key, segment, sum(delta) FROM metric_buckets INDEXED BY metric_buckets_key
            WHERE key IN (\(marks)) AND bucket < ? GROUP BY key, segment
            """, keys.map { $0 as SQLBindable? } + [instant], read)
    }

    /// The values `dimension` takes in the by-segment aggregates, in order: one index seek
    /// per value.
    public func segmentValues(_ dimension: SegmentDimension) throws -> [String] {
        var values: [String] = []
        while let next = try db.first("""
            SELECT value FROM metric_segments WHERE dimension = ? AND value > ? ORDER BY value LIMIT 1
            """, [dimension.rawValue, values.last ?? ""], { $0.string(0) }) {
            values.append(next)
        }
        guard let overlay = try segmentOverlay() else { return values }
        return Array(Set(values).union(overlay.values(dimension))).sorted { Array($0.utf8).lexicographicallyPrecedes($1.utf8) }
    }

    /// Subscriptions whose share changed since the by-segment aggregates last took it in.
    public func pendingSegmentsCount() throws -> Int {
        try db.first("SELECT count(*) FROM metric_segments_pending") { $0.int(0) } ?? 0
    }

    /// Empties the by-segment aggregates and notes every subscription's share as not yet in
    /// them, as on a store no report by segment has read: the next one builds them from
    /// every share (after a change to how a share splits by segment; the benchmark's first
    /// report). One write.
    public func forgetSegmentAggregates() throws {
        try write {
            try db.run("DELETE FROM metric_segments", [])
            try db.run("DELETE FROM metric_segments_pending", [])
            try db.run("INSERT INTO metric_segments_pending SELECT original_transaction_id, NULL FROM subscriptions", [])
        }
    }

    /// Brings the by-segment aggregates up to every subscription's share, telling
    /// `progress` (done, total) after each write. Intake only notes which subscriptions
    /// changed (and the share the aggregates last took), so a notification never pays for
    /// the four dimensions; a report by segment pays once for what changed.
    ///
    /// In short writes, so no writer waits long behind a report. The noted subscriptions are
    /// listed first, without the lock, in an order that puts alike shares side by side
    /// (product, then first purchase: their parts fall in the same aggregate rows, so a
    /// write of many adds up to few rows); then taken in that order, as many to a write as
    /// take about `turnMs` (starting at `batch`), each write summing its part in memory,
    /// adding it to the aggregates and striking it from the notes before it commits, with
    /// the engine's pause for a waiting writer between writes. Every subscription noted
    /// when it started is reached; stopped half-way (an error, `progress` throwing), what
    /// was written stays written, and the next catch-up goes on with the rest.
    @discardableResult
    public func catchUpSegments(batch: Int = 512, turnMs: Double = 100,
                                progress: ((Int, Int) throws -> Void)? = nil) throws -> Int {
        let noted = try db.rows("""
            SELECT p.original_transaction_id FROM metric_segments_pending p
            LEFT JOIN subscriptions s ON s.original_transaction_id = p.original_transaction_id
            ORDER BY s.product_id, s.original_purchase_ms, p.original_transaction_id
            """) { $0.string(0) }
        guard !noted.isEmpty else { return 0 }
        var done = 0, next = 0, size = max(1, batch)
        while next < noted.count {
            let part = noted[next..<min(noted.count, next + size)]
            var started: UInt64 = 0
            let count = try write { () -> Int in
                started = DispatchTime.now().uptimeNanoseconds
                let (sums, count) = try pendingSegmentSums(only: part)
                let rows = sums.rows()
                var values: [SQLBindable?] = []
                values.reserveCapacity(rows.count * 6)
                for row in rows { values += [row.dimension.rawValue, row.value, row.key, row.segment.rawValue, row.bucket, row.delta] }
                try addDeltas(to: "metric_segments", keys: ["dimension", "value", "key", "segment", "bucket"], values: values)
                // Every note of the part was read under this write's lock, so none is lost.
                try db.run("DELETE FROM metric_segments_pending WHERE original_transaction_id IN (\(part.map { _ in "?" }.joined(separator: ",")))",
                           part.map { $0 as SQLBindable? })
                return count
            }
            done += count
            next += part.count
            try progress?(done, noted.count)
            guard next < noted.count else { break }
            // The next write holds the lock about turnMs, whatever this machine's speed
            // (timed from when it had the lock, not from when it asked, to its commit).
            let took = max(0.001, Double(DispatchTime.now().uptimeNanoseconds - started) / 1e6)
            // A power of two, so the statements prepared for a part are few.
            let wanted = max(1, min(4_096, Int(Double(size) * min(2, turnMs / took))))
            size = 1 << (Int.bitWidth - 1 - wanted.leadingZeroBitCount)
            if db.dialect.writeTurnPauseMs > 0 { usleep(UInt32(db.dialect.writeTurnPauseMs) * 1000) }
        }
        return done
    }

    /// Moves the aggregates from a subscription's stored share (`stored`, its stored form;
    /// `decoded`, the same read, when the caller has it) to `fresh`, notes the change for the
    /// by-segment aggregates, and returns `fresh`'s stored form for the caller to write.
    func moveShare(_ otid: String, to fresh: MetricContributions, from stored: Data?,
                   decoded: MetricContributions? = nil) throws -> Data {
        try applyMetrics(fresh, replacing: decoded ?? stored.map(MetricContributions.init(encoded:)) ?? MetricContributions())
        let encoded = fresh.encoded()
        // The first noted share is the one the by-segment aggregates hold: a change already
        // noted keeps it.
        if encoded != stored {
            try db.run("INSERT OR IGNORE INTO metric_segments_pending (original_transaction_id, applied) VALUES (?, ?)", [otid, stored])
        }
        return encoded
    }
}

extension Store {
    /// Moves the aggregates from a subscription's `old` share to `new`: counts, money and cohorts.
    func applyMetrics(_ new: MetricContributions, replacing old: MetricContributions) throws {
        for (k, delta) in new.difference(from: old) {
            try addToMetric(bucket: k.bucket, key: k.key.name, segment: k.segment, delta: delta)
        }
        for (k, delta) in new.amountDifference(from: old) {
            try addToMetric(bucket: k.bucket, key: k.kind.name(k.currency), segment: k.segment, delta: Int(delta))
        }
        // The cohort cells ride in the same aggregates under `c:` keys, held and written with
        // them at commit (in key order, once per batch).
        try new.cohorts.difference(from: old.cohorts) { bucket, key, segment, delta in
            try addToMetric(bucket: bucket, key: key, segment: segment, delta: delta)
        }
    }

    /// The currencies the aggregates hold money in, from the keys alone.
    /// A handful of money keys stand among every bucket's rows: each is found by one seek
    /// of the key index past the one before, instead of reading every row to drop duplicates.
    public func metricCurrencies() throws -> [String] {
        var keys: [String] = [], after = "a:"
        while let next = try db.first("""
            SELECT key FROM metric_buckets INDEXED BY metric_buckets_key WHERE key > ? AND key < 'a;' ORDER BY key LIMIT 1
            """, [after], { $0.string(0) }) {
            keys.append(next)
            after = next
        }
        return Array(Set(keys.compactMap { $0.split(separator: ":").last.map(String.init) })).sorted()
    }

    /// Subscriptions whose share of the counts was computed by an older subdesk.
    public func pendingMetricsCount() throws -> Int {
        try db.first("SELECT count(*) FROM metrics_pending") { $0.int(0) } ?? 0
    }

    /// Recomputes the share of the counts of every subscription `pendingMetricsCount`
    /// counts, `batch` to a write, telling `progress` (done, total) after each: `share`
    /// derives a share from the subscription's history (intake's derivation, as for every
    /// save; see `Intake.metricShare`), the store reads the history and stores the result.
    @discardableResult
    public func catchUpMetrics(deriving share: (SubscriptionHistory) -> MetricContributions,
                               batch: Int = 2_000, progress: ((Int, Int) -> Void)? = nil) throws -> Int {
        let total = try pendingMetricsCount()
        var done = 0
        while true {
            let count = try write { () -> Int in
                let otids = try db.rows("SELECT original_transaction_id FROM metrics_pending LIMIT ?", [batch]) { $0.string(0) }
                for otid in otids {
                    let fresh = share(try history(originalTransactionId: otid))
                    let stored = try db.first("SELECT metrics FROM subscriptions WHERE original_transaction_id = ?", [otid]) {
                        $0.isNull(0) ? nil : $0.data(0)
                    } ?? nil
                    let encoded = try moveShare(otid, to: fresh, from: stored)
                    try db.run("UPDATE subscriptions SET metrics = ? WHERE original_transaction_id = ?", [encoded, otid])
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
