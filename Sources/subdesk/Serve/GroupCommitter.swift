import Foundation
import SubscriptionCore

/// Commits the bodies of concurrent requests together: one thread owns the writing
/// connection, and each time it is free it takes every request that arrived meanwhile
/// (up to `maxGroup`) and stores them in one transaction, so one fsync (SQLite) or one
/// commit (PostgreSQL) serves them all. Each request runs in a savepoint of its own, so
/// one that fails is undone alone and answered 503 while the others commit. Requests are
/// stored in the order they arrived, and intake looks for an earlier copy inside the same
/// write, so two bodies of one notification in one group are stored once, the second a
/// duplicate, as `BatchIngest` does. Each request is answered only after its group commits.
final class GroupCommitter: @unchecked Sendable {
    typealias Work = (Intake) throws -> IntakeOutcome

    private final class Job {
        let keys: [String]
        let work: Work
        var result: Result<IntakeOutcome, Error>?
        let done = DispatchSemaphore(value: 0)
        init(keys: [String], work: @escaping Work) {
            self.keys = keys
            self.work = work
        }
    }

    static let maxGroup = 256

    private let condition = NSCondition()
    private var queue: [Job] = []
    private var retired = false
    private var finished = false
    /// Opens the writing connection; called again after a failure dropped it (a PostgreSQL
    /// server that restarted, a store replaced).
    private let open: () throws -> Intake
    private var intake: Intake?
    /// How many requests and groups were committed, and the largest group: `serve` says so
    /// when it stops (read once the thread has finished).
    private(set) var requests = 0
    private(set) var groups = 0
    private(set) var largestGroup = 0
    /// Seconds the writing connection spent committing groups (the serial part of intake).
    private(set) var busySeconds = 0.0

    /// Told when the store's path was found naming another file (or none).
    private let replaced: () -> Void
    /// How often an idle committer looks at the store's path: a file moved there is opened
    /// (and its single-writer lock taken) within this, requests or not.
    static let watchInterval: TimeInterval = 1

    /// Keeps the store's WAL short beside the committer (nil: nobody does, as in tests).
    private let checkpoint: BackgroundCheckpoint?

    init(open: @escaping () throws -> Intake, opened: Intake? = nil, checkpointStore: (() throws -> Store)? = nil,
         replaced: @escaping () -> Void = {}) {
        self.open = open
        self.intake = opened
        self.replaced = replaced
        checkpoint = checkpointStore.map { BackgroundCheckpoint(open: $0) }
        let thread = Thread { [self] in loop() }
        thread.name = "subdesk-commit"
        thread.start()
    }

    /// Stores one request's body with the next group and returns once it is committed (or
    /// throws what kept it from being stored).
    func submit(touching keys: [String], _ work: @escaping Work) throws -> IntakeOutcome {
        let job = Job(keys: keys, work: work)
        condition.lock()
        if retired {
            condition.unlock()
            throw StoreError(operation: "store the request", message: "serve is reloading or stopping", code: 0)
        }
        queue.append(job)
        condition.signal()
        condition.unlock()
        job.done.wait()
        return try job.result!.get()
    }

    /// Commits what is queued, then ends the thread; `waitUntilFinished` waits for that.
    func retire() {
        condition.lock()
        retired = true
        condition.broadcast()
        condition.unlock()
    }

    func waitUntilFinished() {
        condition.lock()
        while !finished { condition.wait() }
        condition.unlock()
    }

    private func loop() {
        while true {
            condition.lock()
            while queue.isEmpty && !retired {
                if !condition.wait(until: Date().addingTimeInterval(Self.watchInterval)) && queue.isEmpty && !retired {
                    condition.unlock()
                    watchStoreFile()
                    condition.lock()
                }
            }
            if queue.isEmpty {
                finished = true
                // A file replaced at the store's path is let go without touching the files
                // SQLite keeps beside that path (they may be the new store's).
                if intake?.store.fileReplacedAtPath() != nil { intake?.store.closeAfterReplacement() }
                intake = nil
                checkpoint?.stop()
                condition.broadcast()
                condition.unlock()
                return
            }
            let group = Array(queue.prefix(Self.maxGroup))
            queue.removeFirst(group.count)
            condition.unlock()
            commit(group)
        }
    }

    private func commit(_ group: [Job]) {
        let started = DispatchTime.now().uptimeNanoseconds
        defer { busySeconds += Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9 }
        var attempt = 0
        while true {
            attempt += 1
            do {
                let intake = try self.intake ?? open()
                self.intake = intake
                let store = intake.store
                var results: [Result<IntakeOutcome, Error>] = []
                try store.write(touching: group.flatMap(\.keys)) {
                    // A write tried again (a PostgreSQL conflict) starts its results again.
                    results = group.map { job in Result { try store.savepoint { try job.work(intake) } } }
                }
                for (job, result) in zip(group, results) { job.result = result }
                groups += 1
                requests += group.count
                largestGroup = max(largestGroup, group.count)
                // The WAL is kept short (copied and restarted once past 1 MiB, by what this
                // connection's commits left in it), on a thread of its own: the next group
                // does not wait for the copy.
                if store.upkeep.writeAheadLogIsPast() { checkpoint?.poke() }
            } catch let e as FileReplacedError {
                // Another file took the store's path: the old one is let go. Found before the
                // write, the group goes to the file there now; found after its commit, the
                // group is in the replaced file only, and is answered 503 (Apple sends again).
                dropReplaced()
                if !e.committed && !e.missing && attempt == 1 { continue }
                for job in group { job.result = .failure(e) }
            } catch {
                // The connection may be what failed: the next group opens a new one.
                intake = nil
                for job in group { job.result = .failure(error) }
            }
            break
        }
        for job in group { job.done.signal() }
    }

    /// Lets go of a store whose file no longer has its path.
    private func dropReplaced() {
        intake?.store.closeAfterReplacement()
        intake = nil
        checkpoint?.letGoOfReplacedFile()
        replaced()
    }

    /// Between requests: a store file replaced at its path is let go, and the file there now
    /// opened (taking the single-writer lock on it); a deleted one is opened once a store is
    /// there again (until then requests are answered 503).
    private func watchStoreFile() {
        if let intake, intake.store.fileReplacedAtPath() == nil { return }
        if intake != nil { dropReplaced() }
        intake = try? open()
    }
}

/// Copies serve's WAL into the store and restarts it once it passes 1 MiB, on a thread
/// and connection of its own, woken by the committer after a group: with the copy in the
/// committer's path, the requests of the next group waited for it (BENCHMARKS.md, the
/// relay's fifth pass). A store file replaced at the path is let go before the committer
/// writes to the file there now (no connection may stay open on a replaced file, whose
/// log and shared memory files have the new one's names), and the next wake opens that.
final class BackgroundCheckpoint: @unchecked Sendable {
    private let condition = NSCondition()
    private var poked = false
    private var stopped = false
    private let open: () throws -> Store
    /// Held while the connection is used, opened or let go.
    private let using = NSLock()
    private var store: Store?

    init(open: @escaping () throws -> Store) {
        self.open = open
        let thread = Thread { [self] in loop() }
        thread.name = "subdesk-checkpoint"
        thread.start()
    }

    /// Asks for a look at the WAL; returns at once.
    func poke() {
        condition.lock()
        poked = true
        condition.signal()
        condition.unlock()
    }

    /// Ends the thread after the look under way, if any, and closes its connection.
    func stop() {
        condition.lock()
        stopped = true
        condition.signal()
        condition.unlock()
    }

    /// Closes the connection when its file is no longer the one at the store's path; returns
    /// once it is closed (after the look under way, if any).
    func letGoOfReplacedFile() {
        using.lock()
        defer { using.unlock() }
        letGoIfReplaced()
    }

    /// With `using` held.
    private func letGoIfReplaced() {
        if store?.fileReplacedAtPath() != nil {
            store?.closeAfterReplacement()
            store = nil
        }
    }

    private func loop() {
        while true {
            condition.lock()
            while !poked && !stopped { condition.wait() }
            let stopping = stopped
            poked = false
            condition.unlock()
            using.lock()
            defer { using.unlock() }
            letGoIfReplaced()
            if stopping {
                store = nil
                return
            }
            // A store that cannot be opened now is tried again at the next wake.
            if store == nil { store = try? open() }
            store?.upkeep.checkpointBesideWriters()
        }
    }
}
