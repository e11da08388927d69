import Foundation

/// Counts a write adds to, held in memory and written just before it commits, in key order,
/// so that concurrent writers (PostgreSQL) take these few shared rows only while they
/// commit, and always in the same order (in different orders concurrent batches deadlock).
struct HeldCounts {
    /// Daily-count deltas (many notifications of a batch add to the same hour bucket).
    var metrics: [Store.MetricRowKey: Int] = [:]
    /// Changes to how many subscriptions have each status.
    var statuses: [Int: Int] = [:]
    /// Intake outcomes counted for the on-call metrics.
    var intake: [Store.IntakeCountKey: (count: Int, last: Millis)] = [:]
}

extension Store {
    struct IntakeCountKey: Hashable, Comparable {
        /// The app's bundle id; '' when it could not be read.
        var bundleId: String
        var environment: String
        var type: String
        var outcome: String
        var reason: String

        static func < (a: Self, b: Self) -> Bool {
            (a.bundleId, a.environment, a.type, a.outcome, a.reason) < (b.bundleId, b.environment, b.type, b.outcome, b.reason)
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

    func flushMetrics() throws {
        let pending = held.metrics.filter { $0.value != 0 }.sorted {
            ($0.key.bucket, $0.key.key, $0.key.segment.rawValue) < ($1.key.bucket, $1.key.key, $1.key.segment.rawValue)
        }
        let statuses = held.statuses.filter { $0.value != 0 }.sorted { $0.key < $1.key }
        let intakeCounts = held.intake.sorted { $0.key < $1.key }
        held = HeldCounts()
        for (key, held) in intakeCounts { try intakeLog.addCount(key, count: held.count, last: held.last) }
        for (status, delta) in statuses {
            try db.run("""
                INSERT INTO status_counts (status, count) VALUES (?, ?)
                ON CONFLICT (status) DO UPDATE SET count = status_counts.count + excluded.count
                """, [status, delta])
        }
        var values: [SQLBindable?] = []
        values.reserveCapacity(pending.count * 4)
        for (k, delta) in pending { values += [k.bucket, k.key, k.segment.rawValue, delta] }
        try addDeltas(to: "metric_buckets", keys: ["bucket", "key", "segment"], values: values)
    }

    /// Adds deltas to an aggregate table whose last column is `delta`: `values` holds each
    /// row's `keys` then its delta, one row after another, each key once (no statement
    /// meets a row twice). As many rows to a statement as the engine takes (a server: one
    /// round trip for many); a row whose key is there already adds to it.
    func addDeltas(to table: String, keys: [String], values: [SQLBindable?]) throws {
        let width = keys.count + 1
        let row = "(" + SQLText.placeholders(width) + ")"
        let rowsPerStatement = db.dialect.rowsPerInsert
        // One text for the full statements and one for the last, shorter one: a flush of
        // many rows one to a statement (SQLite) builds its text once, not once a row.
        func statement(rows: Int) -> String {
            """
            INSERT INTO \(table) (\((keys + ["delta"]).joined(separator: ", "))) VALUES \(Array(repeating: row, count: rows).joined(separator: ","))
            ON CONFLICT (\(keys.joined(separator: ", "))) DO UPDATE SET delta = \(table).delta + excluded.delta
            """
        }
        lazy var full = statement(rows: rowsPerStatement)
        var start = 0
        while start < values.count {
            let end = min(values.count, start + rowsPerStatement * width)
            let rows = (end - start) / width
            try db.run(rows == rowsPerStatement ? full : statement(rows: rows),
                       start == 0 && end == values.count ? values : Array(values[start..<end]))
            start = end
        }
    }

    /// Adds `delta` to an aggregate; written when the write around it commits.
    func addToMetric(bucket: Millis, key: String, segment: CountSegment, delta: Int) throws {
        held.metrics[MetricRowKey(bucket: bucket, key: key, segment: segment), default: 0] += delta
        if !deferringMetrics && !db.isInTransaction { try flushMetrics() }
    }

    /// Moves the aggregates from a subscription's stored share (`stored`, its stored form) to
    /// `fresh`, notes the change for the by-segment aggregates, and returns `fresh`'s stored
    /// form for the caller to write.
    func moveShare(_ otid: String, to fresh: MetricContributions, from stored: Data?) throws -> Data {
        let encoded = fresh.encoded()
        // A share that encodes to the stored bytes is the stored one (a share decodes to what
        // it encoded, and encodes in one order): nothing moves, and the stored form is not
        // even decoded. Most notifications that change no count (a renewal preference, a
        // price consent, a consumption request) end here.
        guard encoded != stored else { return encoded }
        try applyMetrics(fresh, replacing: stored.map(MetricContributions.init(encoded:)) ?? MetricContributions())
        // The first noted share is the one the by-segment aggregates hold: a change already
        // noted keeps it.
        try db.run("INSERT OR IGNORE INTO metric_segments_pending (original_transaction_id, applied) VALUES (?, ?)", [otid, stored])
        return encoded
    }

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
}
