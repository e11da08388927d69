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
    /// `metric_segments_pending`: the pending shares summed in memory, as the catch-up
    /// would write them, and the part of a running catch-up's sums it has not written yet.
    /// Every report reads the stored aggregates plus this, so every role reads the same
    /// numbers whether a catch-up has run, runs, or stopped half-way. nil when nothing is
    /// pending. Summed again only after another commit.
    func segmentOverlay() throws -> SegmentOverlay? {
        let version = try dataVersion()
        if let cached = segmentOverlayCache, cached.version == version { return cached.overlay.isEmpty ? nil : cached.overlay }
        let overlay = SegmentOverlay(try pendingSegmentRows())
        segmentOverlayCache = (version, overlay)
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
                SELECT p.claimed, p.applied, p.taken, s.metrics FROM metric_segments_pending p
                LEFT JOIN subscriptions s ON s.original_transaction_id = p.original_transaction_id
                """) { r in
                if !r.isNull(3) { sums.add(encoded: r.data(3), sign: 1) }
                if r.int(0) == 0 {
                    if !r.isNull(1) { sums.add(encoded: r.data(1), sign: -1) }
                    return
                }
                if !r.isNull(2) {
                    sums.add(encoded: r.data(2), sign: -1)
                    if unwrittenToo { unwritten.add(encoded: r.data(2), sign: 1) }
                }
                if !r.isNull(1), unwrittenToo { unwritten.add(encoded: r.data(1), sign: -1) }
            }
            let through = state?.phase == .writing ? state?.through : nil
            return sums.rows() + unwritten.rows().filter { row in through.map { SegmentRowKey(row) > $0 } ?? true }
        }
    }

    /// Calls `each(keyIndex, bucketStart, delta)` for every non-zero aggregate of `keys[keyIndex]`
    /// in [from, to) in the given segments (and only `filter`'s part, when given), in bucket
    /// order per key and segment. Reads key by key through a covering index, so no row's
    /// text is decoded: a year of a large store is a few hundred thousand rows.
    public func forEachMetricBucket(keys: [String], from: Millis, to: Millis, segments: Set<CountSegment>,
                                    filter: SegmentFilter? = nil, _ each: (Int, Millis, Int) -> Void) throws {
        guard let filter else {
            for (index, key) in keys.enumerated() {
                for segment in CountSegment.allCases where segments.contains(segment) {
                    try db.query("""
                        SELECT bucket, delta FROM metric_buckets INDEXED BY metric_buckets_key
                        WHERE key = ? AND segment = ? AND bucket >= ? AND bucket < ? AND delta <> 0
                        """, [key, segment.rawValue, from, to]) { r in each(index, r.int64(0), r.int(1)) }
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
                    let read = Store.segmentBucketsRead(filter, key: key, segment: segment, from: from, to: to)
                    try db.query(read.sql, read.values) { r in
                        if overlay == nil { each(index, r.int64(0), r.int(1)) } else { merged[r.int64(0), default: 0] += r.int(1) }
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
    public func metricTotals(before instant: Millis, keys: [String], filter: SegmentFilter? = nil) throws
        -> [(key: String, segment: CountSegment, total: Int)] {
        let marks = keys.map { _ in "?" }.joined(separator: ",")
        let read: (SQLRow) -> (key: String, segment: CountSegment, total: Int) = { r in
            (r.string(0), CountSegment(rawValue: r.string(1)) ?? .paid, r.int(2))
        }
        if let filter {
            return try db.readTransaction {
                let stored = try db.rows("""
                    SELECT key, segment, sum(delta) FROM metric_segments
                    WHERE \(Store.dimensionCondition(filter.dimension)) AND value = ? AND key IN (\(marks)) AND bucket < ? GROUP BY key, segment
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
            SELECT key, segment, sum(delta) FROM metric_buckets INDEXED BY metric_buckets_key
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

    /// `forEachMetricBucket`'s read of one key's buckets in [from, to) of `filter`'s part.
    static func segmentBucketsRead(_ filter: SegmentFilter, key: String, segment: CountSegment,
                                   from: Millis, to: Millis) -> (sql: String, values: [SQLBindable?]) {
        ("""
         SELECT bucket, delta FROM metric_segments
         WHERE \(dimensionCondition(filter.dimension)) AND value = ? AND key = ? AND segment = ? AND bucket >= ? AND bucket < ? AND delta <> 0
         """, [filter.value, key, segment.rawValue, from, to])
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

    /// Whether the by-segment aggregates (or a share still pending) hold `dimension`'s
    /// `value`: one index seek, where listing the values takes one per value.
    public func segmentHasValue(_ dimension: SegmentDimension, _ value: String) throws -> Bool {
        if try db.first("SELECT 1 FROM metric_segments WHERE dimension = ? AND value = ? LIMIT 1",
                        [dimension.rawValue, value], { _ in true }) == true {
            return true
        }
        return try segmentOverlay()?.values(dimension).contains(value) ?? false
    }

    /// Runs `body` with every read it makes in one snapshot of the store (one read
    /// transaction, however many of its reads would open their own).
    public func inOneSnapshot<T>(_ body: () throws -> T) throws -> T {
        try db.readTransaction(body)
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
            try db.run("DELETE FROM metric_segments_catchup", [])
            try db.run("DELETE FROM metric_segments_pending", [])
            try db.run("""
                INSERT INTO metric_segments_pending (original_transaction_id, applied) SELECT original_transaction_id, NULL FROM subscriptions
                """, [])
        }
    }

    /// Whether this connection may bring the aggregates reports read up to date: not a
    /// reader, nor a role without the derived tables' writes (support, on PostgreSQL).
    public var mayCatchUpAggregates: Bool {
        !isReadOnly && ((try? db.mayWrite("DELETE", on: "metric_segments_pending")) ?? false)
    }

    /// How long a catch-up that has not written may be taken over by another: longer than
    /// it goes between writes (the longest is the summing of every taken share in memory,
    /// some seconds at a million subscriptions).
    static let segmentCatchUpStaleMs: Millis = 30_000

    /// Brings the by-segment aggregates up to every subscription's share, telling
    /// `progress` after each write; returns the subscriptions taken in, or nil when another
    /// connection's catch-up is running (its last write younger than
    /// `segmentCatchUpStaleMs`): this one then leaves the work to it, and reports read
    /// what is not written yet from the overlay. Intake only notes which subscriptions
    /// changed (and the share the aggregates hold), so a notification never pays for the
    /// four dimensions; a report by segment pays once for what changed.
    ///
    /// In short writes (about `turnMs` each, with the engine's pause for a waiting writer
    /// between them), in three phases recorded in `metric_segments_catchup`, so that no
    /// writer waits long and each aggregate row is written once, however many shares reach it
    /// (each write finds its part by key, from a list read before, outside the lock, so
    /// what it reads grows with the part, not with the table, whatever plan the server picks):
    /// 1. claiming: the notes are taken in key order, each keeping the share the aggregates
    ///    hold (`applied`) and copying the subscription's share now (`taken`, `claimed` 1);
    /// 2. writing: every taken note's (taken - applied) is summed in memory, outside the
    ///    lock (no write changes a taken note), and added to the aggregates in their key
    ///    order, each write recording the last row it wrote (`through_*`);
    /// 3. releasing: each taken note is struck when its subscription's share is still the
    ///    one taken, and otherwise kept, not taken, with `applied` = taken.
    ///
    /// The invariant, at every commit: the stored aggregates plus the overlay
    /// (`pendingSegmentRows`) equal every subscription's share summed. The overlay holds,
    /// for a note not taken, (now - applied); for a taken note, (now - taken), plus
    /// (taken - applied) in the rows past `through` while writing (in every row while
    /// claiming, in none while releasing). Intake never changes a note that exists (a
    /// change moves `now` alone), so intake mid-catch-up stays exact. Stopped at any point,
    /// the next catch-up (this connection's, or another's once this one's last write is
    /// stale) goes on from the recorded phase and row: nothing is lost or written twice.
    @discardableResult
    public func catchUpSegments(batch: Int = 512, turnMs: Double = 50,
                                progress: ((SegmentCatchUpProgress) throws -> Void)? = nil) throws -> Int? {
        // Read first, so a report on a store with nothing pending takes no write lock.
        let noted = try db.first("SELECT 1 FROM metric_segments_pending LIMIT 1") { _ in true } ?? false
        guard try noted || segmentCatchUpState() != nil else { return 0 }
        guard var state = try takeSegmentCatchUp() else { return try pendingSegmentsCount() == 0 ? 0 : nil }
        let notes = try pendingSegmentsCount()
        if state.phase == .claiming {
            // The notes to take, read outside the lock; each write then takes its part by
            // key. A write that looked for them itself (the first notes not taken past the
            // last one) walked every note taken before and, on PostgreSQL, every dead row
            // an earlier catch-up left, or scanned the whole table when the statistics said
            // few were left: work in the lock that grew with the table, not with the part.
            let untaken = try db.rows("""
                SELECT original_transaction_id FROM metric_segments_pending WHERE claimed = 0 ORDER BY original_transaction_id
                """) { $0.string(0) }
            var claimed = 0
            guard try inShortWrites(.claiming, batch: batch, least: min(64, batch), turnMs: turnMs, { size in
                let part = untaken[claimed..<min(untaken.count, claimed + size)].map { $0 as SQLBindable? }
                if !part.isEmpty {
                    try db.run("""
                        UPDATE metric_segments_pending SET claimed = 1, taken = (SELECT s.metrics FROM subscriptions s
                            WHERE s.original_transaction_id = metric_segments_pending.original_transaction_id)
                        WHERE claimed = 0 AND original_transaction_id IN (\(Self.marks(part.count)))
                        """, part)
                }
                claimed += part.count
                guard claimed < untaken.count else {
                    try setSegmentCatchUp(phase: .writing)
                    return false
                }
                return true
            }, committed: { try progress?(SegmentCatchUpProgress(phase: .claiming, done: claimed, total: notes)) }) else { return nil }
            state = (.writing, nil)
        }
        if state.phase == .writing {
            // No write changes a taken note, so they are summed outside the lock.
            var sums = SegmentSums()
            try db.query("SELECT applied, taken FROM metric_segments_pending WHERE claimed = 1") { r in
                if !r.isNull(0) { sums.add(encoded: r.data(0), sign: -1) }
                if !r.isNull(1) { sums.add(encoded: r.data(1), sign: 1) }
            }
            let through = state.through
            let rows = sums.rows().filter { row in through.map { SegmentRowKey(row) > $0 } ?? true }
            var next = 0
            // Rows are small and written in key order.
            guard try inShortWrites(.writing, batch: batch * 8, least: 64, turnMs: turnMs, { size in
                let part = rows[next..<min(rows.count, next + size)]
                var values: [SQLBindable?] = []
                values.reserveCapacity(part.count * 6)
                for row in part { values += [row.dimension.rawValue, row.value, row.key, row.segment.rawValue, row.bucket, row.delta] }
                try addDeltas(to: "metric_segments", keys: ["dimension", "value", "key", "segment", "bucket"], values: values)
                next += part.count
                try setSegmentCatchUp(phase: next < rows.count ? .writing : .releasing, through: part.last.map(SegmentRowKey.init) ?? through)
                return next < rows.count
            }, committed: { try progress?(SegmentCatchUpProgress(phase: .writing, done: next, total: rows.count)) }) else { return nil }
        }
        // The taken notes, read outside the lock as for claiming: each write reads and
        // strikes its part by key (the notes by key, then their subscriptions by key: each a
        // plain index read on either engine; a join here lets PostgreSQL's generic plan
        // scan both).
        let taken = try db.rows("""
            SELECT original_transaction_id FROM metric_segments_pending WHERE claimed = 1 ORDER BY original_transaction_id
            """) { $0.string(0) }
        var released = 0, next = 0
        guard try inShortWrites(.releasing, batch: batch, least: min(64, batch), turnMs: turnMs, { size in
            let part = taken[next..<min(taken.count, next + size)].map { $0 as SQLBindable? }
            next += part.count
            if !part.isEmpty {
                var shares: [(String, Data?)] = [], now: [String: Data] = [:]
                try db.query("""
                    SELECT original_transaction_id, taken FROM metric_segments_pending
                    WHERE claimed = 1 AND original_transaction_id IN (\(Self.marks(part.count)))
                    """, part) { shares.append(($0.string(0), $0.isNull(1) ? nil : $0.data(1))) }
                try db.query("""
                    SELECT original_transaction_id, metrics FROM subscriptions
                    WHERE metrics IS NOT NULL AND original_transaction_id IN (\(Self.marks(part.count)))
                    """, part) { now[$0.string(0)] = $0.data(1) }
                var struck: [SQLBindable?] = [], kept: [SQLBindable?] = []
                for (otid, share) in shares {
                    if now[otid] == share { struck.append(otid) } else { kept.append(otid) }
                }
                for (otids, change) in [(struck, "DELETE FROM metric_segments_pending"),
                                        (kept, "UPDATE metric_segments_pending SET applied = taken, taken = NULL, claimed = 0")]
                where !otids.isEmpty {
                    try db.run("\(change) WHERE original_transaction_id IN (\(Self.marks(otids.count)))", otids)
                }
                released += struck.count + kept.count
            }
            // The last taken notes: the catch-up ends in the same write.
            guard next < taken.count else {
                try db.run("DELETE FROM metric_segments_catchup", [])
                return false
            }
            return true
        }, committed: { try progress?(SegmentCatchUpProgress(phase: .releasing, done: released, total: notes)) }) else { return nil }
        return released
    }

    /// A running catch-up's phase and the last aggregate row it wrote, as committed.
    func segmentCatchUpState() throws -> (phase: SegmentCatchUpPhase, through: SegmentRowKey?)? {
        try db.first("""
            SELECT phase, through_dimension, through_value, through_key, through_segment, through_bucket
            FROM metric_segments_catchup WHERE id = 1
            """) { r in
            // A phase this build does not know reads as claiming: every taken share then
            // counts as not yet written.
            (SegmentCatchUpPhase(rawValue: r.string(0)) ?? .claiming,
             r.isNull(1) ? nil : SegmentRowKey(dimension: r.string(1), value: r.string(2), key: r.string(3),
                                               segment: r.string(4), bucket: r.int64(5)))
        }
    }

    /// Takes the catch-up for this connection (one write): a new one when none runs, or the
    /// one recorded when it is this connection's or its last write is stale. nil when
    /// another connection's runs.
    private func takeSegmentCatchUp() throws -> (phase: SegmentCatchUpPhase, through: SegmentRowKey?)? {
        try write {
            let now = DateText.nowMillis()
            let holder = try db.first("SELECT owner, heartbeat_ms FROM metric_segments_catchup WHERE id = 1") { ($0.string(0), $0.int64(1)) }
            if let holder {
                // A last write in the future (a clock set back) counts as stale too.
                guard holder.0 == segmentCatchUpOwner || abs(now - holder.1) > Self.segmentCatchUpStaleMs else { return nil }
                try db.run("UPDATE metric_segments_catchup SET owner = ?, heartbeat_ms = ? WHERE id = 1", [segmentCatchUpOwner, now])
                return try segmentCatchUpState()
            }
            // Whether anything is pending was read before the write (`catchUpSegments`): a
            // look for one note here could walk the dead rows of a catch-up just ended. A
            // catch-up started for nothing claims, writes and releases nothing.
            try db.run("INSERT INTO metric_segments_catchup (id, owner, heartbeat_ms, phase) VALUES (1, ?, ?, ?)",
                       [segmentCatchUpOwner, now, SegmentCatchUpPhase.claiming.rawValue])
            return (.claiming, nil)
        }
    }

    /// `?` marks for a list of `count` values.
    static func marks(_ count: Int) -> String { Array(repeating: "?", count: count).joined(separator: ",") }

    /// Records the catch-up's phase and the last row written, inside one of its writes.
    private func setSegmentCatchUp(phase: SegmentCatchUpPhase, through: SegmentRowKey? = nil) throws {
        try db.run("""
            UPDATE metric_segments_catchup SET phase = ?, through_dimension = ?, through_value = ?,
                through_key = ?, through_segment = ?, through_bucket = ? WHERE id = 1
            """, [phase.rawValue, through?.dimension, through?.value, through?.key, through?.segment, through?.bucket])
    }

    /// Where each catch-up write's times go, one line a write, when `SUBDESK_CATCHUP_TRACE`
    /// names a file (the benchmark's segments section sets it to find a long write).
    static let catchUpTrace: FileHandle? = {
        guard let path = ProcessInfo.processInfo.environment["SUBDESK_CATCHUP_TRACE"], !path.isEmpty else { return nil }
        if !FileManager.default.fileExists(atPath: path) { _ = FileManager.default.createFile(atPath: path, contents: nil) }
        let handle = FileHandle(forWritingAtPath: path)
        _ = try? handle?.seekToEnd()
        return handle
    }()

    /// Runs `part(size)` in writes of its own until it returns false, each holding the lock
    /// about `turnMs` (the size starts at `batch` and follows the time a write took: a power
    /// of two, so the statements prepared are few; at least `least`, so a cost each write
    /// pays whatever its size cannot shrink it to nothing), with the engine's pause for a waiting
    /// writer between them. Each write first checks that the catch-up is still this
    /// connection's (another may have taken a stale one over) and records its time; false
    /// when it no longer is, and the writes stop. `committed` is called after each commit.
    private func inShortWrites(_ phase: SegmentCatchUpPhase, batch: Int, least: Int = 1, turnMs: Double, _ part: (Int) throws -> Bool,
                               committed: () throws -> Void) throws -> Bool {
        var size = max(least, batch)
        while true {
            let asked = DispatchTime.now().uptimeNanoseconds
            var started: UInt64 = 0, worked: UInt64 = 0
            let more = try write { () -> Bool? in
                started = DispatchTime.now().uptimeNanoseconds
                let owner = try db.first("SELECT owner FROM metric_segments_catchup WHERE id = 1") { $0.string(0) }
                guard owner == segmentCatchUpOwner else { return nil }
                try db.run("UPDATE metric_segments_catchup SET heartbeat_ms = ? WHERE id = 1", [DateText.nowMillis()])
                defer { worked = DispatchTime.now().uptimeNanoseconds }
                try segmentCatchUpWriteProbe?(phase, size, false)
                let more = try part(size)
                try segmentCatchUpWriteProbe?(phase, size, true)
                return more
            }
            if let trace = Self.catchUpTrace {
                let ms = { (from: UInt64, to: UInt64) in String(format: "%.1f", Double(to &- from) / 1e6) }
                trace.write(Data("\(DateText.nowMillis()) \(phase.rawValue) size \(size): lock \(ms(asked, started)) ms, work \(ms(started, worked)) ms, commit \(ms(worked, DispatchTime.now().uptimeNanoseconds)) ms\n".utf8))
            }
            guard let more else { return false }
            try committed()
            guard more else { return true }
            // The next write holds the lock about turnMs, whatever this machine's speed
            // (timed from when it had the lock, not from when it asked, to its commit).
            let took = max(0.001, Double(DispatchTime.now().uptimeNanoseconds - started) / 1e6)
            let wanted = max(least, min(16_384, Int(Double(size) * min(2, turnMs / took))))
            size = 1 << (Int.bitWidth - 1 - wanted.leadingZeroBitCount)
            if db.dialect.writeTurnPauseMs > 0 { usleep(UInt32(db.dialect.writeTurnPauseMs) * 1000) }
        }
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
