import Foundation

/// Many bodies into one store in batches, as `subdesk ingest` takes in a file.
///
/// A batch's bodies are checked (decoded and verified) before the write, then stored in
/// one write that locks only what they touch (`Store.write(touching:)`), so writers on
/// several hosts verify side by side and take turns only to store. A batch ends after
/// `batchSize` bodies or `batchTime`, whichever comes first, so other writers (a CGI
/// request, another ingest) never wait long for the lock. A refused body is quarantined
/// inside its batch. A store that fails, or a revocation check that could not be made,
/// stops the run (`Stopped`): that batch is rolled back and every batch before it stays
/// committed, to be resumed from the batch's first body (duplicates are answered as such).
///
/// Given `checkers` (intakes on connections of their own), bodies are checked on one thread
/// each, ahead of the writer (`CheckAhead`), while this thread commits them in input order:
/// the same store as checking them here, one after another.
public struct BatchIngest {
    /// What became of the bodies committed so far.
    public struct Counts: Equatable, Sendable {
        public var stored = 0, duplicates = 0, rejected = 0
        public init() {}
    }

    /// One body and the name a rejection gives it (`file:12`).
    public struct Body {
        public var data: Data
        public var source: String
        public init(_ data: Data, source: String) {
            self.data = data
            self.source = source
        }
    }

    /// A batch that could not be checked or stored; what was committed before it stays.
    public struct Stopped: Error, CustomStringConvertible {
        public let cause: Error
        /// Every body committed by this `BatchIngest`, over all its calls.
        public let committed: Counts
        /// The index (in the call that stopped) of the stopped batch's first body.
        public let firstUncommitted: Int
        public var description: String { "\(cause)" }
    }

    public static let standardBatchSize = 500
    /// The first batch's size when bodies are checked ahead (`checkers`).
    static let firstBatchAhead = 16
    public static let standardBatchTime: Duration = .milliseconds(250)

    public let intake: Intake
    /// The intakes that check bodies ahead of the writer, one thread each; none: `intake`
    /// checks each batch before writing it.
    public let checkers: [Intake]
    public var batchSize: Int
    public var batchTime: Duration
    /// When each body is taken to have been received (its checking's moment; a test fixes it).
    public var clock: @Sendable () -> Millis = { DateText.nowMillis() }
    /// Every body committed so far, over all calls.
    public private(set) var committed = Counts()

    /// Readies `intake`'s store for many batches in a row: fewer WAL checkpoints and a larger
    /// page cache on SQLite, bounded server-side waits on PostgreSQL; and its verifiers for
    /// many bodies (`SignedPayloadVerifier.expectMany`).
    public init(intake: Intake, checkers: [Intake] = [], batchSize: Int = standardBatchSize,
                batchTime: Duration = standardBatchTime) throws {
        precondition(batchSize >= 1, "a batch holds at least one body")
        self.intake = intake
        self.checkers = checkers
        self.batchSize = batchSize
        self.batchTime = batchTime
        try intake.store.upkeep.checkpointEvery(pages: StoreUpkeep.batchCheckpointPages)
        try intake.store.upkeep.cachePages(kibibytes: StoreUpkeep.writerCacheKibibytes)
        for verifying in [intake] + checkers { verifying.verifier.expectMany() }
        try intake.store.upkeep.boundServerWaitsForIntake()
    }

    /// Checks and commits `count` bodies in order, `body(i)` giving the i-th; `rejected`
    /// hears each refused body (its source, the reason, the quarantine entry) inside the
    /// write that quarantines it. Returns the counts committed so far; throws `Stopped`.
    @discardableResult
    public mutating func ingest(count: Int, body: (Int) throws -> Body,
                                rejected: (_ source: String, _ reason: String, _ quarantineId: Int64) -> Void = { _, _, _ in }) throws -> Counts {
        var index = 0
        return try ingest(next: {
            guard index < count else { return nil }
            defer { index += 1 }
            return try body(index)
        }, rejected: rejected)
    }

    /// Checks and commits bodies in the order `next` gives them, until it gives nil: an input
    /// read as it is taken in, so that only the bodies in flight (a few batches) are held.
    /// `next` is called one call at a time, in order, from this thread or a checker's.
    @discardableResult
    public mutating func ingest(next: () throws -> Body?,
                                rejected: (_ source: String, _ reason: String, _ quarantineId: Int64) -> Void = { _, _, _ in }) throws -> Counts {
        guard !checkers.isEmpty else { return try run(ahead: nil, next: next, rejected: rejected) }
        // The workers stop before this returns, so `next` does not outlive the call.
        return try withoutActuallyEscaping(next) { next in
            // Checked ahead: two batches at most wait for the writer.
            let ahead = CheckAhead(checkers: checkers, window: max(2 * batchSize, 4 * checkers.count), clock: clock, next: next)
            defer { ahead.stop() }
            return try run(ahead: ahead, next: next, rejected: rejected)
        }
    }

    private mutating func run(ahead: CheckAhead?, next: () throws -> Body?,
                              rejected: (_ source: String, _ reason: String, _ quarantineId: Int64) -> Void) throws -> Counts {
        let store = intake.store
        let limit = UInt64(batchTime.components.seconds) * 1_000_000_000 + UInt64(batchTime.components.attoseconds / 1_000_000_000)
        var index = 0
        var ended = false
        // Checked ahead, the first batch is small and each next one twice as large, up to
        // `batchSize`: the writer starts once a few bodies are checked, instead of waiting
        // while the checkers check a whole batch (at 500 bodies, a fifth of a 3,000-body run).
        var size = ahead == nil ? batchSize : min(batchSize, Self.firstBatchAhead)
        while !ended {
            let started = DispatchTime.now().uptimeNanoseconds
            let batchStart = index
            do {
                var checked: [CheckAhead.Checked] = []
                repeat {
                    if let ahead {
                        // A batch ends on time even while the next body is still being read.
                        let elapsed = DispatchTime.now().uptimeNanoseconds - started
                        let deadline = Date(timeIntervalSinceNow: Double(limit > elapsed ? limit - elapsed : 0) / 1e9)
                        let taken = try ahead.take(index, by: deadline)
                        guard case .body(let c) = taken else {
                            if case .end = taken { ended = true }
                            break
                        }
                        checked.append(c)
                    } else {
                        guard let body = try next() else { ended = true; break }
                        checked.append((try intake.check(body.data, source: body.source, receivedAt: clock()), body.source))
                    }
                    index += 1
                } while (index - batchStart) < size && DispatchTime.now().uptimeNanoseconds - started < limit
                size = min(batchSize, 2 * size)
                // Nothing came within the batch's time (a slow input): wait on, in a new batch.
                if checked.isEmpty { if ended { break } else { continue } }
                var batch = committed
                try store.write(touching: checked.flatMap(\.body.lockKeys)) {
                    // A write that is tried again starts its counts again.
                    batch = committed
                    for c in checked {
                        switch try intake.commit(c.body) {
                        case .stored: batch.stored += 1
                        case .duplicate: batch.duplicates += 1
                        case .rejected(let reason, let id):
                            batch.rejected += 1
                            rejected(c.source, reason.description, id)
                        }
                    }
                }
                committed = batch
                ahead?.retire(&checked)
            } catch {
                throw Stopped(cause: error, committed: committed, firstUncommitted: batchStart)
            }
        }
        return committed
    }

    /// Checks and commits `bodies` in order, named `source` and their index.
    @discardableResult
    public mutating func ingest(_ bodies: [Data], source: String = "body") throws -> Counts {
        try ingest(count: bodies.count, body: { Body(bodies[$0], source: "\(source) \($0 + 1)") })
    }
}
