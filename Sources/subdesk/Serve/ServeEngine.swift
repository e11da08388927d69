import Foundation
import SubscriptionCore
import TerminalUI

/// One configuration at work: the store and trust settings `serve` read at start (or at
/// the last SIGHUP), a pool of connections that verify bodies side by side, and the group
/// committer that stores them. A reload builds a new engine and retires the old one once
/// its requests are answered.
final class ServeEngine: @unchecked Sendable {
    let context: Context
    /// The body size limit, as the CGI reads it.
    let maxBodyBytes: Int
    private let committer: GroupCommitter
    private let pool = NSCondition()
    private var idle: [Intake] = []
    private var checking = 0
    /// Counts the store files the committer has found replaced: a checking connection opened
    /// before the latest is closed as one whose file is gone, not kept.
    private var file = 0
    let workers: Int
    /// Answers Apple's real-time Retention Messaging requests (the `/retention` path).
    let retention: RetentionResponder

    init(context: Context, workers: Int, lock: ServeLock? = nil) throws {
        self.context = context
        self.workers = workers
        maxBodyBytes = try context.intakePolicy().maxBodyBytes
        // Opened now, so that a store or trust setting that is wrong stops `serve` at start.
        let first = try ServeEngine.openIntake(context, committing: true)
        retention = try context.retentionResponder(store: first.store)
        weak var engine: ServeEngine?
        committer = GroupCommitter(open: {
            // The single-writer lock on the file the path names now, before writing to it.
            try lock?.hold()
            return try ServeEngine.openIntake(context, committing: true)
        }, opened: first, checkpointStore: { try context.openStore(mode: .existing) }, replaced: { engine?.storeFileReplaced() })
        engine = self
    }

    /// The committer found the store's path naming another file (or none): the checking
    /// connections to the old one are closed as such, so none reads it again.
    private func storeFileReplaced() {
        pool.lock()
        file += 1
        let old = idle
        idle.removeAll()
        pool.unlock()
        for c in old { c.store.closeAfterReplacement() }
    }

    /// A connection to the store as the CGI opens it: commits reach the disk before they
    /// return, and a PostgreSQL server's waits are bounded.
    static func openIntake(_ context: Context, committing: Bool = false) throws -> Intake {
        let store = try context.openStore(mode: .existing)
        try store.upkeep.configureForOneShotWrites()
        try store.upkeep.boundServerWaitsForIntake()
        // The committer's: the pages its groups write stay in memory between groups, and the
        // log beside the store is written over after each checkpoint, not grown again.
        if committing {
            try store.upkeep.cachePages(kibibytes: StoreUpkeep.writerCacheKibibytes)
            try store.upkeep.reuseWriteAheadLog()
        }
        return try context.makeIntake(store: store)
    }

    /// Stores one request's body: verified on a checking connection (side by side with
    /// other requests), then committed with the next group.
    func store(_ read: BodyReader.Result, source: String, postedFor app: Result<String?, Refusal> = .success(nil)) throws -> IntakeOutcome {
        var attempt = 0
        while true {
            attempt += 1
            do {
                return try storeOnce(read, source: source, postedFor: app)
            } catch let e as StoreError where e.isConnectionLoss && attempt < 3 {
                // A PostgreSQL server that restarted broke every kept connection: the idle
                // checking ones are dropped with the one that failed (the committer drops its
                // own), and the request is tried again on new ones.
                pool.lock()
                idle.removeAll()
                pool.unlock()
            }
        }
    }

    private func storeOnce(_ read: BodyReader.Result, source: String, postedFor app: Result<String?, Refusal>) throws -> IntakeOutcome {
        guard read.isWhole else {
            return try committer.submit(touching: ["q:" + read.digest]) {
                try $0.rejectOversized(prefix: read.kept, trueLength: read.length, digest: read.digest, source: source)
            }
        }
        let checked: Intake.CheckedBody
        switch app {
        case .success(let app): checked = try withChecker { try $0.check(read.kept, source: source, postedFor: app) }
        case .failure(let refusal): checked = .refused(read.kept, source: source, refusal: refusal)
        }
        return try committer.submit(touching: checked.lockKeys) { try $0.commit(checked) }
    }

    /// Runs `body` with a checking connection, at most `workers` at once. A connection that
    /// failed with a store error is dropped, and the next request opens a new one.
    private func withChecker<T>(_ body: (Intake) throws -> T) throws -> T {
        let asked = DispatchTime.now().uptimeNanoseconds
        pool.lock()
        while checking >= workers { pool.wait() }
        checking += 1
        let reused = idle.popLast()
        let openedFor = file
        let started = DispatchTime.now().uptimeNanoseconds
        checkWaitSeconds += Double(started - asked) / 1e9
        pool.unlock()
        var keep: Intake?
        defer {
            pool.lock()
            checkSeconds += Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
            checking -= 1
            let stale = openedFor != file
            if let keep, !stale { idle.append(keep) }
            pool.signal()
            pool.unlock()
            if let keep, stale { keep.store.closeAfterReplacement() }
        }
        let intake = try reused ?? ServeEngine.openIntake(context)
        do {
            let result = try body(intake)
            keep = intake
            return result
        } catch let e as StoreError {
            throw e
        } catch {
            keep = intake
            throw error
        }
    }

    /// Reads the store on a checking connection (one of `workers`).
    func reading<T>(_ body: (Store) throws -> T) throws -> T {
        try withChecker { try body($0.store) }
    }

    /// Answers one real-time retention request and logs its decision in the store.
    func answerRetention(body: BodyReader.Result, postedApp: String?, log: @escaping @Sendable (String) -> Void) -> RetentionResponse {
        let started = DispatchTime.now().uptimeNanoseconds
        let response = retention.respond(body: body.kept, length: body.length, postedApp: postedApp, now: DateText.nowMillis()) { otid in
            try boundedRead(otid)
        }
        let micros = Int64((DispatchTime.now().uptimeNanoseconds - started) / 1000)
        if case .refused(let why, let detail) = response.outcome {
            log("retention request refused (\(why.rawValue)): \(SafeText.sanitize(detail))")
        }
        let decision = RetentionDecision(response: response, decidedMs: DateText.nowMillis(), micros: micros)
        // Logged after the answer, so that a store that is slow or down never holds it up;
        // those waiting are written together, in one commit. Past a bound of waiting
        // decisions (a store down long) the newest go unlogged. While decisions wait, the
        // writing of them counts as a request on this engine: a reload or a stop retires the
        // committer only once they are written, instead of refusing them.
        pool.lock()
        let room = pendingDecisions.count < Self.maximumDecisionsWaiting
        if room { pendingDecisions.append(decision) }
        let first = room && pendingDecisions.count == 1
        if first { users += 1 }
        pool.unlock()
        guard room else {
            log("retention decision not logged: \(Self.maximumDecisionsWaiting) are waiting for the store")
            return response
        }
        if first { decisionLog.async { self.logPendingDecisions(log: log) } }
        return response
    }

    /// Writes the decisions waiting, all in one commit, until none waits.
    private func logPendingDecisions(log: @escaping @Sendable (String) -> Void) {
        pool.lock()
        let batch = pendingDecisions
        pool.unlock()
        do {
            _ = try committer.submit(touching: []) { intake in
                for decision in batch { try intake.store.retention.decisions.record(decision) }
                return .duplicate(notificationUUID: "")
            }
        } catch {
            log("\(batch.count) retention decision(s) not logged: \(error)")
        }
        pool.lock()
        pendingDecisions.removeFirst(batch.count)
        let more = !pendingDecisions.isEmpty
        pool.unlock()
        if more { decisionLog.async { self.logPendingDecisions(log: log) } } else { release() }
    }

    /// The decisions made and not yet written, oldest first (the first is being written).
    private let decisionLog = DispatchQueue(label: "subdesk.retention-decisions")
    private var pendingDecisions: [RetentionDecision] = []
    static let maximumDecisionsWaiting = 10_000
    /// How long a real-time answer waits for the store: Apple allows 700 ms for the whole answer.
    static let retentionReadBound: DispatchTimeInterval = .milliseconds(150)

    /// The subscription's state, or an error when the store does not give it within the bound
    /// (the read goes on in the background and its result is dropped).
    private func boundedRead(_ otid: String) throws -> SubscriptionState? {
        let box = ResultBox()
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            box.set(Result { try self.reading { try $0.subscriptions.find(originalTransactionId: otid)?.state } })
            done.signal()
        }
        guard done.wait(timeout: .now() + Self.retentionReadBound) == .success, let result = box.get() else {
            throw StoreError(operation: "read the subscription", message: "the store did not answer within the bound", code: 0)
        }
        return try result.get()
    }

    private final class ResultBox: @unchecked Sendable {
        private let lock = NSLock()
        private var result: Result<SubscriptionState?, Error>?
        func set(_ r: Result<SubscriptionState?, Error>) { lock.lock(); result = r; lock.unlock() }
        func get() -> Result<SubscriptionState?, Error>? { lock.lock(); defer { lock.unlock() }; return result }
    }

    private var users = 0
    private var replaced = false

    /// A request starts on this engine; `release` when it is answered.
    func acquire() {
        pool.lock()
        users += 1
        pool.unlock()
    }

    func release() {
        pool.lock()
        users -= 1
        let done = replaced && users == 0
        pool.unlock()
        if done { committer.retire() }
    }

    /// A newer engine takes the next requests: this one stops once those it has are answered;
    /// `waitUntilRetired` waits for that.
    func retire() {
        pool.lock()
        replaced = true
        let done = users == 0
        pool.unlock()
        if done { committer.retire() }
    }

    /// What the committer did: requests, groups, the largest group, seconds spent committing;
    /// and the seconds requests spent verifying and waiting for a verifier.
    var commitFigures: (requests: Int, groups: Int, largest: Int, commitSeconds: Double, checkSeconds: Double, checkWaitSeconds: Double) {
        pool.lock()
        defer { pool.unlock() }
        return (committer.requests, committer.groups, committer.largestGroup, committer.busySeconds, checkSeconds, checkWaitSeconds)
    }
    private var checkSeconds = 0.0
    private var checkWaitSeconds = 0.0

    func waitUntilRetired() {
        committer.waitUntilFinished()
        pool.lock()
        let old = idle
        idle.removeAll()
        pool.unlock()
        for c in old where c.store.fileReplacedAtPath() != nil { c.store.closeAfterReplacement() }
    }
}
