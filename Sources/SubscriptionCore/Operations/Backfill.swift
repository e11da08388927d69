import Foundation

/// Fetches notifications Apple says it sent (Get Notification History) and feeds each
/// signed payload through ordinary intake: verified, deduplicated, ordered, or
/// quarantined with its reason. A notification that was not yet stored is a delivery
/// gap, kept with Apple's send attempts.
///
/// Each page is stored in one write together with the token of the next page, so a run
/// stopped at any point (kill -9 included) resumes from the first page not wholly stored:
/// nothing is lost, and a page stored twice only adds duplicates.
public final class Backfill {
    /// How far back Apple keeps notification history.
    public static let maxAgeDays = 180
    /// Notifications stored per write at most (whole pages, at least one): as `subdesk
    /// ingest` batches, since a commit costs about as much as a few notifications.
    static let writeSize = 500

    public struct Request: Equatable, Sendable {
        public var since: Millis
        public var until: Millis
        public var onlyFailures: Bool
        public var environment: AppStoreEnvironment
        /// The app asked about (its bundle id), recorded with the run so a resume asks it again.
        public var bundleId: String?

        public init(since: Millis, until: Millis, onlyFailures: Bool, environment: AppStoreEnvironment, bundleId: String? = nil) {
            self.bundleId = bundleId
            self.since = since
            self.until = until
            self.onlyFailures = onlyFailures
            self.environment = environment
        }
    }

    /// How far one run goes before it stops, to be resumed: a history whose pagination
    /// token advances forever (a broken or hostile server) must not keep a run, or the
    /// dashboard's worker, busy for ever. A stopped run keeps every page it stored and
    /// `subdesk backfill --resume` goes on from the next.
    public struct Limits: Equatable, Sendable {
        /// Pages one run fetches at most.
        public var maxPages: Int
        /// Pages in a row that brought nothing new (every notification already stored or
        /// refused, or none at all) before the run stops.
        public var maxPagesWithNothingNew: Int

        public init(maxPages: Int, maxPagesWithNothingNew: Int) {
            self.maxPages = max(1, maxPages)
            self.maxPagesWithNothingNew = max(1, maxPagesWithNothingNew)
        }

        /// A run of some minutes against Apple (about 20 pages a second): large enough
        /// that an ordinary window finishes in one, small enough that a runaway one ends.
        public static let standard = Limits(maxPages: 10_000, maxPagesWithNothingNew: 1_000)
    }

    /// A run ended at one of its `Limits`, not finished: what it stored stays, and a resume
    /// goes on from the next page.
    public struct Stopped: Error, CustomStringConvertible {
        public let run: BackfillRun
        /// Which limit, in words.
        public let reason: String

        public var description: String {
            "backfill #\(run.id) stopped: \(reason); \(Backfill.summary(run)) so far, all kept"
        }
    }

    /// A limit reached; becomes `Stopped` with the run as stored.
    private struct LimitReached: Error {
        let reason: String
    }

    let store: Store
    let intake: Intake
    /// Checks each page's bodies once the page is fetched, on a thread and a connection of
    /// its own, so the writer only stores them (nil: the writer checks each body as it
    /// stores it).
    let checker: Intake?
    let client: AppStoreServerAPIClient
    let operatorName: String
    let clock: () -> Millis
    let limits: Limits

    /// `checker`, an intake on another connection to the store, verifies the bodies beside
    /// the writer (as `subdesk ingest`'s workers do).
    public init(store: Store, intake: Intake, checker: Intake? = nil, client: AppStoreServerAPIClient, operatorName: String,
                limits: Limits = .standard, clock: @escaping () -> Millis = DateText.nowMillis) {
        self.store = store
        self.intake = intake
        self.checker = checker
        self.client = client
        self.operatorName = operatorName
        self.limits = limits
        self.clock = clock
        // A backfill verifies many bodies signed with a few certificates.
        intake.verifier.expectMany()
        checker?.verifier.expectMany()
    }

    /// Refuses a window Apple would refuse, naming the problem.
    public static func check(_ request: Request, now: Millis) throws {
        let oldest = now - Millis(maxAgeDays) * 86_400_000
        guard request.since < request.until else {
            throw OperationError("the window is empty: --since \(DateText.minute(request.since)) is not before --until \(DateText.minute(request.until))")
        }
        guard request.since >= oldest else {
            throw OperationError("--since \(DateText.minute(request.since)) is more than \(maxAgeDays) days ago; Apple keeps notification history for \(maxAgeDays) days (since \(DateText.minute(oldest)) at the earliest)")
        }
        guard request.until <= now + 60_000 else {
            throw OperationError("--until \(DateText.minute(request.until)) is in the future")
        }
    }

    /// Starts a new run of `request`, or goes on with `resume` (an unfinished run), page by
    /// page until Apple has no more, or until a limit (see `Limits`) stops it with
    /// `Stopped`. `progress` hears after each write. Audited when it ends, finished or stopped.
    public func run(_ request: Request, resume: BackfillRun? = nil,
                    progress: ((BackfillRun) -> Void)? = nil) throws -> BackfillRun {
        var run: BackfillRun
        if let resume {
            run = resume
        } else {
            try Backfill.check(request, now: clock())
            run = try store.backfills.start(environment: request.environment.rawValue, since: request.since, until: request.until,
                                          onlyFailures: request.onlyFailures, operatorName: operatorName, now: clock(),
                                          bundleId: request.bundleId)
        }
        let environment = AppStoreEnvironment(rawValue: run.environment)
        let asked = AppStoreServerAPIClient.NotificationHistoryRequest(start: run.since, end: run.until, onlyFailures: run.onlyFailures)
        do {
            // A run with pages behind it and no next page has fetched everything. Pages are
            // fetched on a thread of their own (and their bodies checked on another, with a
            // checker) while the ones before are stored, and stored several to a write: up
            // to `writeSize` notifications, with the token after the last of them, so a stop
            // at any point resumes from the first page not stored.
            if !(run.pages > 0 && run.nextPage == nil) {
                // Fetched pages go to the checker's thread, when there is a checker, and from
                // there, their bodies checked, to the writer; without one, to the writer.
                let fetched = PageQueue(capacity: 64)
                let pages = checker == nil ? fetched : PageQueue(capacity: 64)
                let first = run.nextPage
                let limits = self.limits
                let fetcher = Thread { [client] in
                    var token = first
                    var count = 0
                    do {
                        while true {
                            if count == limits.maxPages {
                                throw LimitReached(reason: "it fetched \(limits.maxPages) pages, the most one run fetches")
                            }
                            count += 1
                            let page = try client.notificationHistory(asked, environment: environment, paginationToken: token)
                            let next = page.hasMore ? page.paginationToken : nil
                            if page.hasMore && (next == nil || next == token) {
                                throw RevalidationError.malformedResponse(request: "notification history",
                                                                          problem: "hasMore is true but paginationToken did not advance")
                            }
                            guard fetched.push((page, next, nil)) else { return }
                            guard let next else { break }
                            token = next
                        }
                        fetched.finish(nil)
                    } catch {
                        fetched.finish(error)
                    }
                }
                fetcher.start()
                if let checker {
                    let clock = self.clock
                    Thread {
                        do {
                            // A page at a time, in the order fetched.
                            while let taken = try fetched.pop(upTo: 0) {
                                for (page, next, _) in taken {
                                    let checked = try page.items.map {
                                        try checker.check(Backfill.body(signedPayload: $0.signedPayload), source: "backfill", receivedAt: clock())
                                    }
                                    guard pages.push((page, next, checked)) else { fetched.cancel(); return }
                                }
                            }
                            pages.finish(nil)
                        } catch {
                            fetched.cancel()
                            pages.finish(error)
                        }
                    }.start()
                }
                defer {
                    pages.cancel()
                    fetched.cancel()
                }
                var nothingNew = 0
                while let group = try pages.pop(upTo: Backfill.writeSize) {
                    var limitReached: LimitReached?
                    try store.write {
                        for (page, next, checked) in group where limitReached == nil {
                            var counts = (new: 0, duplicates: 0, rejected: 0)
                            for (index, item) in page.items.enumerated() {
                                let outcome = try checked.map { try intake.commit($0[index]) }
                                    ?? intake.ingest(Backfill.body(signedPayload: item.signedPayload), source: "backfill", receivedAt: clock())
                                switch outcome {
                                case .stored(let event):
                                    counts.new += 1
                                    try store.backfills.recordGap(notificationUUID: event.notificationUUID, run: run.id,
                                                        attempts: item.sendAttempts, now: clock())
                                case .duplicate:
                                    counts.duplicates += 1
                                case .rejected:
                                    counts.rejected += 1
                                }
                            }
                            try store.backfills.recordPage(run.id, nextPage: next, new: counts.new, duplicates: counts.duplicates,
                                                         rejected: counts.rejected)
                            nothingNew = counts.new == 0 ? nothingNew + 1 : 0
                            // Only while more pages follow: a last page with nothing new still finishes the run.
                            if nothingNew >= limits.maxPagesWithNothingNew && next != nil {
                                limitReached = LimitReached(reason: "\(nothingNew) pages in a row brought nothing new "
                                                            + "(every notification already stored or refused)")
                            }
                        }
                    }
                    run = try store.backfills.run(id: run.id) ?? run
                    progress?(run)
                    if let limitReached { throw limitReached }
                }
            }
            try store.backfills.finish(run.id, now: clock())
            run = try store.backfills.run(id: run.id) ?? run
            try audit(run, outcome: Backfill.summary(run), reason: nil)
            return run
        } catch {
            let stored = (try? store.backfills.run(id: run.id)) ?? run
            let stopped = (error as? LimitReached).map { Stopped(run: stored, reason: $0.reason) }
            try? audit(stored, outcome: "stopped after \(Backfill.summary(stored)): \(stopped?.reason ?? "\(error)")",
                       reason: "resume with: subdesk backfill --resume")
            throw stopped ?? error
        }
    }

    /// `{"signedPayload":"..."}`: the body Apple would have posted. A JWS is base64url and
    /// dots, which JSON takes as they are; anything else is escaped by the serializer.
    static func body(signedPayload: String) -> Data {
        let plain = signedPayload.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == 0x2D || byte == 0x5F || byte == 0x2E || byte == 0x3D
        }
        guard plain else { return (try? JSONSerialization.data(withJSONObject: ["signedPayload": signedPayload])) ?? Data() }
        var body = Data(#"{"signedPayload":""#.utf8)
        body.append(contentsOf: signedPayload.utf8)
        body.append(contentsOf: #""}"#.utf8)
        return body
    }

    public static func summary(_ run: BackfillRun) -> String {
        "\(run.pages) page\(run.pages == 1 ? "" : "s"): \(run.new) new, \(run.duplicates) duplicate\(run.duplicates == 1 ? "" : "s"), \(run.rejected) rejected"
    }

    private func audit(_ run: BackfillRun, outcome: String, reason: String?) throws {
        try store.write {
            try store.audit.append(AuditEntry(
                at: clock(), operatorName: operatorName, action: .backfill, target: nil, reason: reason, outcome: outcome,
                detail: "backfill #\(run.id): \(run.environment) \(DateText.minute(run.since)) to \(DateText.minute(run.until)) UTC"
                    + (run.onlyFailures ? ", only failed deliveries" : "")))
        }
    }
}

/// Pages fetched and not yet stored, in order, between the thread that fetches them and the
/// one that stores them. Bounded, so a slow store holds back fetching rather than memory.
final class PageQueue: @unchecked Sendable {
    /// A page, the token of the one after it, and its bodies checked (when a checker checks
    /// them as they are fetched).
    typealias Entry = (page: NotificationHistoryResponse, next: String?, checked: [Intake.CheckedBody]?)
    private let condition = NSCondition()
    private var entries: [Entry] = []
    private var finished = false
    private var failure: Error?
    private var cancelled = false
    private let capacity: Int

    init(capacity: Int) { self.capacity = capacity }

    /// Waits for room; false once the reader has stopped.
    func push(_ entry: Entry) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while entries.count >= capacity && !cancelled { condition.wait() }
        guard !cancelled else { return false }
        entries.append(entry)
        condition.broadcast()
        return true
    }

    /// The fetcher is done: with nothing more, or with what stopped it.
    func finish(_ error: Error?) {
        condition.lock()
        finished = true
        failure = error
        condition.broadcast()
        condition.unlock()
    }

    /// The reader stopped: the fetcher ends at its next page.
    func cancel() {
        condition.lock()
        cancelled = true
        condition.broadcast()
        condition.unlock()
    }

    /// Whole pages holding up to `limit` items (at least one page), waiting for the first;
    /// nil when every page has been taken, or once the reader stopped (a checker's thread
    /// reads one queue and writes the next: the writer stopping ends it, whether or not its
    /// fetcher finished); the fetcher's error once the pages before it are.
    func pop(upTo limit: Int) throws -> [Entry]? {
        condition.lock()
        defer { condition.unlock() }
        while entries.isEmpty && !finished && !cancelled { condition.wait() }
        if cancelled { return nil }
        if entries.isEmpty {
            if let failure { throw failure }
            return nil
        }
        var taken = 1
        var items = entries[0].page.items.count
        while taken < entries.count && items + entries[taken].page.items.count <= limit {
            items += entries[taken].page.items.count
            taken += 1
        }
        let group = Array(entries.prefix(taken))
        entries.removeFirst(taken)
        condition.broadcast()
        return group
    }
}

extension Revalidator {
    /// What a backfill asks: every app and each of its environments (`appleTargets`), or, to
    /// resume `run`, the app and environment it recorded (refused when the configuration no
    /// longer serves them).
    public func backfillTargets(resuming run: BackfillRun?) throws -> [AppleTarget] {
        guard let run else { return appleTargets }
        guard let target = Revalidator.target(resuming: run, among: appleTargets) else {
            throw OperationError(Revalidator.notServed(run) + ": start a new backfill")
        }
        return [target]
    }

    /// The target a resumed run must ask: the app and environment `run` recorded, among
    /// `targets`; nil when the configuration no longer serves them. With one target, that one.
    public static func target(resuming run: BackfillRun, among targets: [AppleTarget]) -> AppleTarget? {
        guard targets.count > 1 else { return targets.first }
        return targets.first { $0.bundleId == run.bundleId && $0.environment.rawValue == run.environment }
    }

    /// Why `run` cannot be resumed with this configuration (`target(resuming:among:)` found none).
    public static func notServed(_ run: BackfillRun) -> String {
        "backfill #\(run.id) asked \(run.bundleId ?? "an app this store did not record") in \(run.environment), "
            + "which the configuration no longer serves"
    }

    /// A backfill of the last `days` days (only failed deliveries when `onlyFailures`) asking
    /// `target`'s app in its environment, or with `days` nil the store's unfinished one resumed
    /// (`target` then being the one it recorded: `target(resuming:among:)`), on a connection
    /// of its own (and the bodies verified on another): the dashboard runs it on a worker,
    /// once per app and environment.
    public func backfill(days: Int?, onlyFailures: Bool, target: AppleTarget) throws -> BackfillRun {
        let store = try openStore()
        let backfill = Backfill(store: store, intake: Intake(store: store, verifier: verifier, policy: policy),
                                checker: Intake(store: try openStore(), verifier: verifier, policy: policy),
                                client: try serverAPIClient(for: ServerAPIAction.backfill, target: target), operatorName: operatorName, clock: clock)
        guard let days else {
            guard let unfinished = try store.backfills.unfinished() else {
                throw OperationError("no backfill to resume: every backfill on this store finished")
            }
            return try backfill.run(Backfill.Request(since: unfinished.since, until: unfinished.until, onlyFailures: unfinished.onlyFailures,
                                                     environment: AppStoreEnvironment(rawValue: unfinished.environment),
                                                     bundleId: unfinished.bundleId), resume: unfinished)
        }
        let now = clock()
        return try backfill.run(Backfill.Request(since: now - Millis(days) * 86_400_000, until: now, onlyFailures: onlyFailures,
                                                 environment: target.environment, bundleId: target.bundleId))
    }
}
