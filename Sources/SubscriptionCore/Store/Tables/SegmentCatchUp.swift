import Foundation

/// The by-segment aggregates' catch-up: intake only notes which subscriptions changed
/// (`metric_segments_pending`), and a report by segment brings `metric_segments` up to date
/// first, in short writes that any connection may take over.
extension MetricAggregates {
    /// The catch-up's one row (`metric_segments_catchup`): its phase and the last aggregate row written.
    enum CatchUpRow: Int, SelectedValues, CodingKey {
        case phase, throughDimension, throughValue, throughKey, throughSegment, throughBucket
    }
    /// Who holds the catch-up, and when it last wrote.
    enum Holder: Int, SelectedValues, CodingKey { case owner, heartbeatMs }
    /// A taken note's two shares.
    enum TakenNote: Int, SelectedValues, CodingKey { case applied, taken }
    /// A taken note's subscription and the share taken.
    enum NoteTaken: Int, SelectedValues, CodingKey { case originalTransactionId, taken }
    /// A subscription and its share now (`subscriptions`).
    enum ShareNow: Int, SelectedValues, CodingKey { case originalTransactionId, metrics }

    /// The same, counted up to `atMost` only: what a scrape reads, however many are noted.
    func pendingSegmentCount(atMost: Int) throws -> Int {
        try db.count("SELECT count(*) FROM (SELECT 1 FROM metric_segments_pending LIMIT \(atMost)) AS capped")
    }

    /// Subscriptions whose share changed since the by-segment aggregates last took it in.
    public func pendingSegmentCount() throws -> Int {
        try db.count("SELECT count(*) FROM metric_segments_pending")
    }

    /// Empties the by-segment aggregates and notes every subscription's share as not yet in
    /// them, as on a store no report by segment has read: the next one builds them from
    /// every share (after a change to how a share splits by segment; the benchmark's first
    /// report). One write.
    public func forgetSegments() throws {
        try store.write {
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
    public var mayCatchUp: Bool {
        !store.opening.readOnly && ((try? db.mayWrite("DELETE", on: "metric_segments_pending")) ?? false)
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
        guard var state = try takeSegmentCatchUp() else { return try pendingSegmentCount() == 0 ? 0 : nil }
        let notes = try pendingSegmentCount()
        if state.phase == .claiming {
            // The notes to take, read outside the lock; each write then takes its part by
            // key. A write that looked for them itself (the first notes not taken past the
            // last one) walked every note taken before and, on PostgreSQL, every dead row
            // an earlier catch-up left, or scanned the whole table when the statistics said
            // few were left: work in the lock that grew with the table, not with the part.
            let untaken = try db.texts("""
                SELECT original_transaction_id FROM metric_segments_pending WHERE claimed = 0 ORDER BY original_transaction_id
                """)
            var claimed = 0
            guard try inShortWrites(.claiming, batch: batch, least: min(64, batch), turnMs: turnMs, { size in
                let part = untaken[claimed..<min(untaken.count, claimed + size)].map { $0 as SQLBindable? }
                if !part.isEmpty {
                    try db.run("""
                        UPDATE metric_segments_pending SET claimed = 1, taken = (SELECT s.metrics FROM subscriptions s
                            WHERE s.original_transaction_id = metric_segments_pending.original_transaction_id)
                        WHERE claimed = 0 AND original_transaction_id IN (\(SQLText.placeholders(part.count)))
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
            try db.query("SELECT \(TakenNote.list) FROM metric_segments_pending WHERE claimed = 1") { row in
                let r = TakenNote.row(row)
                if let applied = r.optionalData(.applied) { sums.add(encoded: applied, sign: -1) }
                if let taken = r.optionalData(.taken) { sums.add(encoded: taken, sign: 1) }
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
                try store.addDeltas(to: "metric_segments", keys: ["dimension", "value", "key", "segment", "bucket"], values: values)
                next += part.count
                try setSegmentCatchUp(phase: next < rows.count ? .writing : .releasing, through: part.last.map(SegmentRowKey.init) ?? through)
                return next < rows.count
            }, committed: { try progress?(SegmentCatchUpProgress(phase: .writing, done: next, total: rows.count)) }) else { return nil }
        }
        // The taken notes, read outside the lock as for claiming: each write reads and
        // strikes its part by key (the notes by key, then their subscriptions by key: each a
        // plain index read on either engine; a join here lets PostgreSQL's generic plan
        // scan both).
        let taken = try db.texts("""
            SELECT original_transaction_id FROM metric_segments_pending WHERE claimed = 1 ORDER BY original_transaction_id
            """)
        var released = 0, next = 0
        guard try inShortWrites(.releasing, batch: batch, least: min(64, batch), turnMs: turnMs, { size in
            let part = taken[next..<min(taken.count, next + size)].map { $0 as SQLBindable? }
            next += part.count
            if !part.isEmpty {
                var shares: [(String, Data?)] = [], now: [String: Data] = [:]
                try db.query("""
                    SELECT \(NoteTaken.list) FROM metric_segments_pending
                    WHERE claimed = 1 AND original_transaction_id IN (\(SQLText.placeholders(part.count)))
                    """, part) { row in
                    let r = NoteTaken.row(row)
                    shares.append((r.string(.originalTransactionId), r.optionalData(.taken)))
                }
                try db.query("""
                    SELECT \(ShareNow.list) FROM subscriptions
                    WHERE metrics IS NOT NULL AND original_transaction_id IN (\(SQLText.placeholders(part.count)))
                    """, part) { row in
                    let r = ShareNow.row(row)
                    now[r.string(.originalTransactionId)] = r.data(.metrics)
                }
                var struck: [SQLBindable?] = [], kept: [SQLBindable?] = []
                for (otid, share) in shares {
                    if now[otid] == share { struck.append(otid) } else { kept.append(otid) }
                }
                for (otids, change) in [(struck, "DELETE FROM metric_segments_pending"),
                                        (kept, "UPDATE metric_segments_pending SET applied = taken, taken = NULL, claimed = 0")]
                where !otids.isEmpty {
                    try db.run("\(change) WHERE original_transaction_id IN (\(SQLText.placeholders(otids.count)))", otids)
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
        try db.first("SELECT \(CatchUpRow.list) FROM metric_segments_catchup WHERE id = 1") { row in
            let r = CatchUpRow.row(row)
            // A phase this build does not know reads as claiming: every taken share then
            // counts as not yet written.
            return (SegmentCatchUpPhase(rawValue: r.string(.phase)) ?? .claiming,
                    r.isNull(.throughDimension) ? nil
                        : SegmentRowKey(dimension: r.string(.throughDimension), value: r.string(.throughValue),
                                        key: r.string(.throughKey), segment: r.string(.throughSegment),
                                        bucket: r.int64(.throughBucket)))
        }
    }

    /// Takes the catch-up for this connection (one write): a new one when none runs, or the
    /// one recorded when it is this connection's or its last write is stale. nil when
    /// another connection's runs.
    private func takeSegmentCatchUp() throws -> (phase: SegmentCatchUpPhase, through: SegmentRowKey?)? {
        try store.write {
            let now = DateText.nowMillis()
            let holder = try db.first("SELECT \(Holder.list) FROM metric_segments_catchup WHERE id = 1") { row in
                let r = Holder.row(row)
                return (owner: r.string(.owner), heartbeat: r.int64(.heartbeatMs))
            }
            if let holder {
                // A last write in the future (a clock set back) counts as stale too.
                guard holder.owner == memory.owner || abs(now - holder.heartbeat) > Self.segmentCatchUpStaleMs else { return nil }
                try db.run("UPDATE metric_segments_catchup SET owner = ?, heartbeat_ms = ? WHERE id = 1", [memory.owner, now])
                return try segmentCatchUpState()
            }
            // Whether anything is pending was read before the write (`catchUpSegments`): a
            // look for one note here could walk the dead rows of a catch-up just ended. A
            // catch-up started for nothing claims, writes and releases nothing.
            try db.run("INSERT INTO metric_segments_catchup (id, owner, heartbeat_ms, phase) VALUES (1, ?, ?, ?)",
                       [memory.owner, now, SegmentCatchUpPhase.claiming.rawValue])
            return (.claiming, nil)
        }
    }


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
            let more = try store.write { () -> Bool? in
                started = DispatchTime.now().uptimeNanoseconds
                let owner = try db.text("SELECT owner FROM metric_segments_catchup WHERE id = 1")
                guard owner == memory.owner else { return nil }
                try db.run("UPDATE metric_segments_catchup SET heartbeat_ms = ? WHERE id = 1", [DateText.nowMillis()])
                defer { worked = DispatchTime.now().uptimeNanoseconds }
                try memory.writeProbe?(phase, size, false)
                let more = try part(size)
                try memory.writeProbe?(phase, size, true)
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
}
