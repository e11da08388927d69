import Foundation

/// How a sweep runs.
public struct SweepOptions: Sendable {
    /// Revalidations in flight at once. Only the network calls run concurrently; every
    /// store write happens on the sweep's one connection, in turn.
    public var concurrency: Int
    /// Ask Apple and compare, but store and audit nothing.
    public var dryRun: Bool
    /// The reason recorded with each revalidation and the sweep's own audit entry.
    public var reason: String
    /// Check at most this many candidates (the first by originalTransactionId).
    public var limit: Int?
    /// Only candidates after this originalTransactionId: where a sweep stopped by Apple's
    /// rate limit left off (`ExpirySweep.resumePoint`).
    public var after: String?
    /// Only this app's subscriptions (`--app`); nil for every app's.
    public var app: AppScope?

    public init(concurrency: Int = 4, dryRun: Bool = false, reason: String = "expiry sweep", limit: Int? = nil, after: String? = nil,
                app: AppScope? = nil) {
        self.app = app
        self.concurrency = min(max(1, concurrency), 64)
        self.dryRun = dryRun
        self.reason = reason
        self.limit = limit
        self.after = after
    }
}

/// Tallies of a sweep. `checked` counts every candidate, failed ones included.
public struct SweepCounts: Equatable, Sendable {
    public var checked = 0
    public var renewed = 0
    public var expired = 0
    public var changed = 0
    public var unchanged = 0
    public var failed = 0

    public init() {}

    mutating func add(_ outcome: RevalidationResult.Outcome) {
        checked += 1
        switch outcome {
        case .renewed: renewed += 1
        case .expired: expired += 1
        case .changed: changed += 1
        case .unchanged: unchanged += 1
        }
    }

    mutating func addFailure() {
        checked += 1
        failed += 1
    }

    public var summary: String {
        "checked \(checked): renewed \(renewed), expired \(expired), changed \(changed), unchanged \(unchanged), failed \(failed)"
    }

    public func jsonObject() -> [String: Any] {
        ["checked": checked, "renewed": renewed, "expired": expired, "changed": changed,
         "unchanged": unchanged, "failed": failed]
    }
}

/// Where a running sweep has got to, for a progress line.
public struct SweepProgress: Sendable {
    public var total: Int
    public var counts: SweepCounts
    /// The subscription just finished, if any.
    public var last: String?
}

/// One candidate the sweep could not revalidate.
public struct SweepFailure: Equatable, Sendable {
    public var originalTransactionId: String
    public var reason: String
    /// Whether tomorrow's sweep may well succeed (timeouts, 5xx, 429, retryable statuses).
    public var isTransient: Bool
    /// The app the subscription belongs to (`fitness (com.example.fitness)`), when several are configured.
    public var app: String? = nil
}

public struct SweepReport: Sendable {
    public var counts: SweepCounts
    public var results: [RevalidationResult]
    public var failures: [SweepFailure]
    public var startedAt: Millis
    public var finishedAt: Millis
    public var dryRun: Bool
    /// The sweep's own audit entry; nil for a dry run.
    public var auditId: Int64?
    /// Set when Apple's rate limit stopped the sweep: the error (naming when Apple said to
    /// ask again) and how many candidates were left unchecked for `subdesk sweep --resume`.
    public var stoppedBy: RevalidationError?
    public var unchecked = 0

    public func jsonObject() -> [String: Any] {
        var o = counts.jsonObject()
        o["dryRun"] = dryRun
        o["startedAt"] = DateText.iso(startedAt)
        o["finishedAt"] = DateText.iso(finishedAt)
        o["auditId"] = auditId as Any? ?? NSNull()
        o["results"] = results.filter { $0.outcome != .unchanged }.map { $0.jsonObject() }
        o["failures"] = failures.map { f in
            var o: [String: Any] = ["originalTransactionId": f.originalTransactionId, "reason": f.reason, "transient": f.isTransient]
            if let app = f.app { o["app"] = app }
            return o
        }
        if let stoppedBy {
            o["stopped"] = stoppedBy.description
            o["unchecked"] = unchecked
            if let at = stoppedBy.rateLimitResumeAt { o["retryAfter"] = DateText.iso(at) }
        }
        return o
    }
}

/// The daily expiry sweep: Apple does not always tell us when a subscription renews
/// (a renewal that succeeds before expiry sends no V1 notification, and notifications
/// get lost), so every subscription whose stored expiry has passed while it still counts
/// as active, and every one in grace or billing retry, is asked about again.
///
/// Safe to run daily from cron: a candidate that fails is audited and left for the next
/// run; re-running merges nothing twice (the newest signed version of a record wins).
public final class ExpirySweep {
    public let revalidator: Revalidator

    public init(revalidator: Revalidator) {
        self.revalidator = revalidator
    }

    /// Runs the sweep. `progress` is called on the calling thread after each candidate.
    public func run(options: SweepOptions = SweepOptions(), progress: ((SweepProgress) -> Void)? = nil) throws -> SweepReport {
        // With neither way to ask Apple, every candidate would fail alike: say so once
        // instead of auditing the same failure for each of them every day.
        guard revalidator.canAskApple else {
            throw RevalidationError.notConfigured("the sweep needs an App Store Server API key (api_key_file, api_key_id, "
                                                  + "api_issuer_id) or, for verifyReceipt, the shared secret (shared_secret_file)")
        }
        let store = try revalidator.openStore()
        let startedAt = revalidator.clock()
        let candidates = try collectCandidates(store: store, now: startedAt, after: options.after ?? "", limit: options.limit, app: options.app)
        var counts = SweepCounts()
        var results: [RevalidationResult] = []
        var failures: [SweepFailure] = []
        let reason = options.reason

        let severalApps = revalidator.appLookups.count > 1
        func fail(_ id: String, _ error: Error, job: Revalidator.Job? = nil) {
            counts.addFailure()
            failures.append(SweepFailure(originalTransactionId: id, reason: "\(error)",
                                         isTransient: (error as? RevalidationError)?.isTransient ?? false,
                                         app: severalApps ? job?.app?.label : nil))
        }
        progress?(SweepProgress(total: candidates.count, counts: counts, last: nil))

        // The store is read here, on this thread, before any worker starts.
        var jobs: [Revalidator.Job] = []
        for id in candidates {
            do {
                jobs.append(try revalidator.prepare(id, store: store))
            } catch let error as StoreError {
                throw error
            } catch {
                if !options.dryRun { revalidator.recordFailure(target: id, error: error, reason: reason, store: store) }
                fail(id, error)
                progress?(SweepProgress(total: candidates.count, counts: counts, last: id))
            }
        }

        let answers = Channel<(Int, Result<AppleAnswer, Error>)>()
        let next = Counter()
        let revalidator = self.revalidator
        let workerCount = min(options.concurrency, jobs.count)
        let sharedJobs = jobs
        for _ in 0..<workerCount {
            let worker = Thread {
                while true {
                    let index = next.take()
                    guard index < sharedJobs.count else { return }
                    answers.push((index, Result { try revalidator.fetch(sharedJobs[index]) }))
                }
            }
            worker.name = "subdesk-sweep"
            worker.start()
        }

        // Apple's rate limit stops the sweep: the jobs already taken finish, no new one
        // starts, and the first job not done decides where `--resume` goes on.
        var stoppedBy: RevalidationError?
        var done: Set<Int> = []
        var received = 0
        while received < jobs.count {
            if stoppedBy != nil && received >= next.taken(upTo: jobs.count) { break }
            let (index, answer) = answers.pop()
            received += 1
            let job = jobs[index]
            let id = job.originalTransactionId ?? job.requestedId
            var limitedByApple = false
            if case .failure(let error) = answer { limitedByApple = (error as? RevalidationError)?.isRateLimit == true }
            if !limitedByApple { done.insert(index) }
            switch answer {
            case .success(let answer):
                do {
                    let result = try revalidator.apply(job, answer, store: store, reason: reason, dryRun: options.dryRun)
                    counts.add(result.outcome)
                    results.append(result)
                } catch let error as StoreError {
                    next.stop()
                    throw error
                } catch {
                    fail(id, error, job: job)
                }
            case .failure(let error):
                if let limit = error as? RevalidationError, limit.isRateLimit {
                    if stoppedBy == nil {
                        stoppedBy = limit
                        next.stop()
                    }
                    continue
                }
                if !options.dryRun { revalidator.recordFailure(target: id, error: error, reason: reason, store: store) }
                fail(id, error, job: job)
            }
            progress?(SweepProgress(total: candidates.count, counts: counts, last: id))
        }

        let finishedAt = revalidator.clock()
        // Workers finish in any order; the report reads the same run after run.
        results.sort { $0.originalTransactionId < $1.originalTransactionId }
        failures.sort { $0.originalTransactionId < $1.originalTransactionId }
        var report = SweepReport(counts: counts, results: results, failures: failures, startedAt: startedAt,
                                 finishedAt: finishedAt, dryRun: options.dryRun, auditId: nil)
        var resumeAfter: String?
        if let stoppedBy {
            report.stoppedBy = stoppedBy
            // Every job before the first one not done was answered: a resumed sweep takes
            // the candidates after the last of them.
            let firstNotDone = (0..<jobs.count).first { !done.contains($0) } ?? jobs.count
            report.unchecked = jobs.count - done.count
            resumeAfter = firstNotDone == 0 ? (options.after ?? "") : (jobs[firstNotDone - 1].originalTransactionId ?? jobs[firstNotDone - 1].requestedId)
        }
        if !options.dryRun {
            var detail = "concurrency \(options.concurrency); \(String(format: "%.1f", Double(finishedAt - startedAt) / 1000)) s"
            if !failures.isEmpty {
                let shown = failures.prefix(20).map { "\($0.originalTransactionId): \($0.reason)" }
                detail += "; failed: " + shown.joined(separator: " | ") + (failures.count > 20 ? " | ..." : "")
            }
            var outcome = counts.summary
            if let stoppedBy, let resumeAfter {
                outcome = "stopped by Apple's rate limit after \(counts.summary); \(report.unchecked) not checked"
                // Read back by `resumePoint`: keep this shape.
                detail = "\(ExpirySweep.resumeMarker)\(resumeAfter.isEmpty ? "-" : resumeAfter); \(stoppedBy); " + detail
            }
            let entry = AuditEntry(at: finishedAt, operatorName: revalidator.operatorName, action: .sweep,
                                   target: nil, reason: reason, outcome: outcome, detail: detail)
            report.auditId = try store.write { try store.audit.append(entry) }
        }
        return report
    }

    static let resumeMarker = "resume after "

    /// Where `subdesk sweep --resume` goes on: after the originalTransactionId the last
    /// sweep's audit entry names, when Apple's rate limit stopped that sweep ("" for the
    /// start); nil when the last sweep finished (or none ran). Also the entry, to name it.
    public static func resumePoint(store: Store) throws -> (after: String?, entry: AuditEntry?) {
        guard let entry = try store.audit.last(action: .sweep) else { return (nil, nil) }
        guard let detail = entry.detail, detail.hasPrefix(resumeMarker),
              let end = detail.firstIndex(of: ";") else { return (nil, entry) }
        let id = String(detail[detail.index(detail.startIndex, offsetBy: resumeMarker.count)..<end])
        return (id == "-" ? "" : id, entry)
    }

    /// Every candidate up front: revalidating moves subscriptions out of the candidate set,
    /// which must not shift the pages still to be read.
    private func collectCandidates(store: Store, now: Millis, after start: String, limit: Int?, app: AppScope?) throws -> [String] {
        var all: [String] = []
        var after = start
        let page = 500
        while true {
            let ids = try store.subscriptions.sweepCandidates(now: now, after: after, limit: page, app: app)
            all += ids
            if let limit, all.count >= limit { return Array(all.prefix(limit)) }
            guard ids.count == page, let last = ids.last else { return all }
            after = last
        }
    }
}

/// A blocking FIFO between sweep workers and the store thread.
final class Channel<Element>: @unchecked Sendable {
    private let condition = NSCondition()
    private var items: [Element] = []

    func push(_ item: Element) {
        condition.lock()
        items.append(item)
        condition.signal()
        condition.unlock()
    }

    func pop() -> Element {
        condition.lock()
        defer { condition.unlock() }
        while items.isEmpty { condition.wait() }
        return items.removeFirst()
    }
}

/// Hands out job indexes to workers; `stop` makes every later `take` past the end.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0
    private var stopped = false

    func take() -> Int {
        lock.lock()
        defer { lock.unlock() }
        if stopped { return Int.max }
        value += 1
        return value - 1
    }

    func stop() {
        lock.lock()
        stopped = true
        lock.unlock()
    }

    /// How many indexes below `count` were handed out.
    func taken(upTo count: Int) -> Int {
        lock.lock()
        defer { lock.unlock() }
        return min(value, count)
    }
}
