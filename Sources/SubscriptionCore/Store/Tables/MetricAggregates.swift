import Foundation

/// The aggregates every count, money figure and cohort is read from: `metric_buckets` (each
/// hour's deltas by key and segment, written with intake's commits), `metric_segments` (the
/// same by app, product, offer and ownership, brought up to date when a report asks, see
/// `catchUpSegments`), and the notes of what they lack (`metrics_pending`,
/// `metric_segments_pending`). The only code that names these tables' columns
/// (`store.metrics`); the daily counts (`DailyCounts`) read through it.
public struct MetricAggregates {
    let store: Store
    var db: any SQLConnection { store.db }
    var memory: SegmentCatchUpMemory { store.segmentMemory }

    /// An aggregate row as the reads select it (`metric_buckets`, `metric_segments`).
    enum Delta: Int, SelectedValues, CodingKey { case bucket, key, segment, delta }
    /// One key's deltas by bucket (`forEachBucket`).
    enum BucketDelta: Int, SelectedValues, CodingKey { case bucket, delta }
    /// Sums by key and segment (`totals`).
    enum Total: Int, SelectedValues {
        case key, segment, total
        var sql: String { self == .total ? "sum(delta)" : "\(self)" }
    }
    /// A by-segment note with the share its subscription holds now (`pendingSegmentRows`).
    enum NoteAndShare: Int, SelectedValues {
        case claimed, applied, taken, metrics
        var sql: String { self == .metrics ? "s.metrics" : "p.\(self)" }
    }

    /// Aggregates in [from, to) for the given segments.
    public func buckets(from: Millis, to: Millis, segments: Set<CountSegment> = Set(CountSegment.allCases)) throws -> [MetricsBucket] {
        let names = CountSegment.allCases.filter(segments.contains)
        guard !names.isEmpty else { return [] }
        return try db.rows("""
            SELECT \(Delta.list) FROM metric_buckets
            WHERE bucket >= ? AND bucket < ? AND delta <> 0 AND segment IN (\(SQLText.placeholders(names.count)))
            """, [from, to] + names.map { $0.rawValue as SQLBindable? }) { row in
            let r = Delta.row(row)
            return MetricsBucket(bucketStart: r.int64(.bucket), key: r.string(.key),
                                 segment: CountSegment(rawValue: r.string(.segment)) ?? .paid, count: r.int(.delta))
        }
    }

    /// What the by-segment aggregates lack while subscriptions wait in
    /// `metric_segments_pending`: the pending shares summed in memory, as the catch-up
    /// would write them, and the part of a running catch-up's sums it has not written yet.
    /// Every report reads the stored aggregates plus this, so every role reads the same
    /// numbers whether a catch-up has run, runs, or stopped half-way. nil when nothing is
    /// pending. Summed again only after another commit.
    func segmentOverlay() throws -> SegmentOverlay? {
        let version = try db.changeVersion()
        if let cached = memory.overlayCache, cached.version == version { return cached.overlay.isEmpty ? nil : cached.overlay }
        let overlay = SegmentOverlay(try pendingSegmentRows())
        memory.overlayCache = (version, overlay)
        return overlay.isEmpty ? nil : overlay
    }

    /// The overlay's rows (see the invariant at `catchUpSegments`): for a note not taken,
    /// its share now less the share the aggregates hold; for one taken, its share now less
    /// the share taken, plus (taken less held) in the aggregate rows the catch-up has not
    /// written yet. Read in one snapshot, so the catch-up's phase and the notes agree.
    func pendingSegmentRows() throws -> [SegmentSums.Row] {
        try db.readTransaction {
            let state = try segmentCatchUpState()
            let unwrittenToo = state?.phase != .releasing
            var sums = SegmentSums(), unwritten = SegmentSums()
            try db.query("""
                SELECT \(NoteAndShare.list) FROM metric_segments_pending p
                LEFT JOIN subscriptions s ON s.original_transaction_id = p.original_transaction_id
                """) { row in
                let r = NoteAndShare.row(row)
                if let now = r.optionalData(.metrics) { sums.add(encoded: now, sign: 1) }
                if r.int(.claimed) == 0 {
                    if let applied = r.optionalData(.applied) { sums.add(encoded: applied, sign: -1) }
                    return
                }
                if let taken = r.optionalData(.taken) {
                    sums.add(encoded: taken, sign: -1)
                    if unwrittenToo { unwritten.add(encoded: taken, sign: 1) }
                }
                if let applied = r.optionalData(.applied), unwrittenToo { unwritten.add(encoded: applied, sign: -1) }
            }
            let through = state?.phase == .writing ? state?.through : nil
            return sums.rows() + unwritten.rows().filter { row in through.map { SegmentRowKey(row) > $0 } ?? true }
        }
    }

    /// Calls `each(keyIndex, bucketStart, delta)` for every non-zero aggregate of `keys[keyIndex]`
    /// in [from, to) in the given segments (and only `filter`'s part, when given), in bucket
    /// order per key and segment. Reads key by key through a covering index, so no row's
    /// text is decoded: a year of a large store is a few hundred thousand rows.
    public func forEachBucket(keys: [String], from: Millis, to: Millis, segments: Set<CountSegment>,
                                    filter: SegmentFilter? = nil, _ each: (Int, Millis, Int) -> Void) throws {
        guard let filter else {
            for (index, key) in keys.enumerated() {
                for segment in CountSegment.allCases where segments.contains(segment) {
                    try db.query("""
                        SELECT \(BucketDelta.list) FROM metric_buckets INDEXED BY metric_buckets_key
                        WHERE key = ? AND segment = ? AND bucket >= ? AND bucket < ? AND delta <> 0
                        """, [key, segment.rawValue, from, to]) { row in
                        let r = BucketDelta.row(row)
                        each(index, r.int64(.bucket), r.int(.delta))
                    }
                }
            }
            return
        }
        // The stored rows and the overlay read in one snapshot: a catch-up's write between
        // them would count a share twice or not at all.
        try db.readTransaction {
            let overlay = try segmentOverlay()
            for (index, key) in keys.enumerated() {
                for segment in CountSegment.allCases where segments.contains(segment) {
                    // Stored rows and the pending part merged in bucket order.
                    var merged = overlay?.deltas(filter, key: key, segment: segment, from: from, to: to) ?? [:]
                    let read = Self.segmentBucketsRead(filter, key: key, segment: segment, from: from, to: to)
                    try db.query(read.sql, read.values) { row in
                        let r = BucketDelta.row(row)
                        if overlay == nil {
                            each(index, r.int64(.bucket), r.int(.delta))
                        } else {
                            merged[r.int64(.bucket), default: 0] += r.int(.delta)
                        }
                    }
                    if overlay != nil {
                        for (bucket, delta) in merged.sorted(by: { $0.key < $1.key }) where delta != 0 { each(index, bucket, delta) }
                    }
                }
            }
        }
    }

    /// Sums of the level keys (`p:new_paid`, `p:churn`, ...) over every bucket before `instant`
    /// (of `filter`'s part only, when given).
    public func totals(before instant: Millis, keys: [String], filter: SegmentFilter? = nil) throws
        -> [(key: String, segment: CountSegment, total: Int)] {
        let marks = SQLText.placeholders(keys.count)
        let read: (SQLRow) -> (key: String, segment: CountSegment, total: Int) = { row in
            let r = Total.row(row)
            return (r.string(.key), CountSegment(rawValue: r.string(.segment)) ?? .paid, r.int(.total))
        }
        if let filter {
            return try db.readTransaction {
                let stored = try db.rows("""
                    SELECT \(Total.list) FROM metric_segments
                    WHERE \(Self.dimensionCondition(filter.dimension)) AND value = ? AND key IN (\(marks)) AND bucket < ? GROUP BY key, segment
                    """, [filter.value] + keys.map { $0 as SQLBindable? } + [instant], read)
                guard let overlay = try segmentOverlay() else { return stored }
                var totals: [String: [CountSegment: Int]] = [:]
                for row in stored { totals[row.key, default: [:]][row.segment, default: 0] += row.total }
                for (key, segment, delta) in overlay.totals(filter, keys: Set(keys), before: instant) {
                    totals[key, default: [:]][segment, default: 0] += delta
                }
                return totals.flatMap { key, bySegment in bySegment.map { (key, $0.key, $0.value) } }
            }
        }
        return try db.rows("""
            SELECT \(Total.list) FROM metric_buckets INDEXED BY metric_buckets_key
            WHERE key IN (\(marks)) AND bucket < ? GROUP BY key, segment
            """, keys.map { $0 as SQLBindable? } + [instant], read)
    }

    /// The condition on `metric_segments.dimension` of a report of one part: the dimension
    /// as a literal, not a parameter, so that a prepared statement's generic plan (which
    /// PostgreSQL settles on after a few runs) can use an index of that dimension's rows
    /// alone (migration 29's, of apps). The text is the enum's own raw value, never input.
    static func dimensionCondition(_ dimension: SegmentDimension) -> String {
        "dimension = '\(dimension.rawValue)'"
    }

    /// `forEachBucket`'s read of one key's buckets in [from, to) of `filter`'s part.
    static func segmentBucketsRead(_ filter: SegmentFilter, key: String, segment: CountSegment,
                                   from: Millis, to: Millis) -> (sql: String, values: [SQLBindable?]) {
        ("""
         SELECT \(BucketDelta.list) FROM metric_segments
         WHERE \(dimensionCondition(filter.dimension)) AND value = ? AND key = ? AND segment = ? AND bucket >= ? AND bucket < ? AND delta <> 0
         """, [filter.value, key, segment.rawValue, from, to])
    }

    /// The values `dimension` takes in the by-segment aggregates, in order: one index seek
    /// per value.
    public func segmentValues(_ dimension: SegmentDimension) throws -> [String] {
        var values: [String] = []
        while let next = try db.text("""
            SELECT value FROM metric_segments WHERE dimension = ? AND value > ? ORDER BY value LIMIT 1
            """, [dimension.rawValue, values.last ?? ""]) {
            values.append(next)
        }
        guard let overlay = try segmentOverlay() else { return values }
        return Array(Set(values).union(overlay.values(dimension))).sorted { Array($0.utf8).lexicographicallyPrecedes($1.utf8) }
    }

    /// Whether the by-segment aggregates (or a share still pending) hold `dimension`'s
    /// `value`: one index seek, where listing the values takes one per value.
    public func segmentHasValue(_ dimension: SegmentDimension, _ value: String) throws -> Bool {
        if try db.first("SELECT 1 FROM metric_segments WHERE dimension = ? AND value = ? LIMIT 1",
                        [dimension.rawValue, value], { _ in true }) == true {
            return true
        }
        return try segmentOverlay()?.values(dimension).contains(value) ?? false
    }

    /// The currencies the aggregates hold money in, from the keys alone.
    /// A handful of money keys stand among every bucket's rows: each is found by one seek
    /// of the key index past the one before, instead of reading every row to drop duplicates.
    public func currencies() throws -> [String] {
        var keys: [String] = [], after = "a:"
        while let next = try db.text("""
            SELECT key FROM metric_buckets INDEXED BY metric_buckets_key WHERE key > ? AND key < 'a;' ORDER BY key LIMIT 1
            """, [after]) {
            keys.append(next)
            after = next
        }
        return Array(Set(keys.compactMap { $0.split(separator: ":").last.map(String.init) })).sorted()
    }

    /// Subscriptions whose share of the counts was computed by an older subdesk.
    public func pendingShareCount() throws -> Int {
        try db.count("SELECT count(*) FROM metrics_pending")
    }

    /// Recomputes the share of the counts of every subscription `pendingShareCount`
    /// counts, `batch` to a write, telling `progress` (done, total) after each: `share`
    /// derives a share from the subscription's history (intake's derivation, as for every
    /// save; see `Intake.metricShare`), the store reads the history and stores the result.
    @discardableResult
    public func catchUpShares(deriving share: (SubscriptionHistory) -> MetricContributions,
                               batch: Int = 2_000, progress: ((Int, Int) -> Void)? = nil) throws -> Int {
        let total = try pendingShareCount()
        var done = 0
        while true {
            let count = try store.write { () -> Int in
                let otids = try db.texts("SELECT original_transaction_id FROM metrics_pending LIMIT ?", [batch])
                for otid in otids {
                    let fresh = share(try store.subscriptions.history(originalTransactionId: otid))
                    let stored = try db.bytes("SELECT metrics FROM subscriptions WHERE original_transaction_id = ?", [otid])
                    let encoded = try store.moveShare(otid, to: fresh, from: stored)
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

/// What a connection keeps between reads of the by-segment aggregates: the overlay it last
/// summed (`MetricAggregates.segmentOverlay`), who it is to another connection's catch-up,
/// and a test's probe.
final class SegmentCatchUpMemory {
    /// The by-segment aggregates' missing part as a reader last summed it, with the change
    /// counter it was summed at; dropped at each of this connection's commits (SQLite's
    /// change counter does not move for them).
    var overlayCache: (version: Int, overlay: SegmentOverlay)?
    /// Called inside each write of a by-segment catch-up with the phase and the part's
    /// size, before the part (false) and after it (true): tests read there what it did.
    var writeProbe: ((SegmentCatchUpPhase, Int, Bool) throws -> Void)?
    /// Who this connection is to another process's by-segment catch-up (`catchUpSegments`).
    let owner = UUID().uuidString
}

extension Store {
    /// The aggregates the counts, money and cohorts are read from.
    public var metrics: MetricAggregates { MetricAggregates(store: self) }
}
