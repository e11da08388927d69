import Foundation

/// Sends one target's owed deliveries (`store.outbox`, `ForwardOutboxTable`), on its own store connection.
///
/// spread what intake owed and claim what is due (a short write) -> build each body -> POST
/// them, a few at a time, with no transaction open -> record every answer, spread and claim
/// the next (a short write) -> again; when nothing is due,
/// sleep until the next delivery falls due or another process commits (the store's change
/// counter: `PRAGMA data_version` on SQLite, `LISTEN` on PostgreSQL).
public final class ForwardDeliverer {
    /// How a deliverer paces itself; the defaults are the product's, tests shorten them.
    public struct Pacing: Sendable {
        /// Deliveries sent at once to the target.
        public var concurrency = 8
        /// Deliveries claimed in one write.
        public var batch = 64
        /// The wait before the first retry; it doubles each time, up to `maxBackoff`, with up to
        /// half again added at random so that many deliveries do not retry in step.
        public var initialBackoff: TimeInterval = 5
        public var maxBackoff: TimeInterval = 3_600
        /// Attempts a delivery the target refuses (a 4xx but 408 and 429, a 3xx: redirects are
        /// not followed) is given before it is dead.
        public var refusedAttempts = 3
        /// How often an idle deliverer looks at the change counter.
        public var idleLook: TimeInterval = 0.1
        /// How long a deliverer woken by a commit waits for more before it claims.
        public var gather: TimeInterval = 0.05
        /// How long a deliverer that is not behind (its last batch was not full) waits after
        /// its sends before the write that keeps their answers and claims the next: a steady
        /// trickle of notifications then costs the writers answering Apple one short write
        /// this often, instead of one after every send. It adds to the lag at most this.
        public var settle: TimeInterval = 0.05
        /// When set (`serve`), a deliverer that is behind (its batch was full) rests after
        /// each batch in proportion to how busy intake was since the batch before: the
        /// batch's own time times `intakeShare × b / (1 − b)`, b the share of that time
        /// during which a request was being answered (at most `maxBusy`), but never so long
        /// that it delivers fewer than `floorPerSecond`. With intake quiet it goes at full
        /// speed; while answering Apple fills the time, a backlog drains with what is left.
        public var intake: IntakeLoad?
        public var intakeShare: Double = 6
        public var maxBusy: Double = 0.98
        public var floorPerSecond: Double = 50

        public init() {}
    }

    /// What a run did.
    public struct Counts: Sendable, Equatable {
        public var delivered = 0, retried = 0, dead = 0
        public init() {}
    }

    /// The first bytes of a target's answer kept with the attempt.
    public static let keptAnswerBytes = 4 << 10
    /// The most of an answer read: past it the attempt fails (and is retried), unread.
    static let maxAnswerBytes = 64 << 10

    public let target: ForwardTarget
    let store: Store
    let signature: DeliverySignature
    let pacing: Pacing
    let client: HTTPClient
    let claimant = UUID().uuidString
    /// The clock; tests move it.
    public var now: () -> Millis = { DateText.nowMillis() }
    /// The seconds this deliverer rested to give way to intake.
    public private(set) var rested: TimeInterval = 0
    /// Told of each attempt as it is recorded.
    public var onAttempt: ((ForwardDelivery, ForwardAttempt) -> Void)?

    /// `helper`: where the sends go (`serve` gives its deliverers one of their own).
    public init(target: ForwardTarget, store: Store, signature: DeliverySignature, pacing: Pacing = Pacing(),
                helper: HTTPHelper = .shared) {
        self.target = target
        self.store = store
        self.signature = signature
        self.pacing = pacing
        client = HTTPClient(policy: ForwardDeliverer.policy(target, pacing), maxConnectionsPerHost: pacing.concurrency,
                            helper: helper, maxResponseBytes: ForwardDeliverer.maxAnswerBytes)
    }

    /// One attempt per send (the outbox schedules the next), the retry waits as the Apple
    /// client bounds them.
    static func policy(_ target: ForwardTarget, _ pacing: Pacing) -> HTTPPolicy {
        HTTPPolicy(timeout: target.timeout, maxAttempts: 1, initialBackoff: pacing.initialBackoff, maxBackoff: pacing.maxBackoff,
                   maxRetryAfter: pacing.maxBackoff, jitter: 0.5)
    }

    /// How long a claim lasts: the send's timeout and a margin to record its answer. A
    /// deliverer killed mid-send leaves the delivery to another after this.
    var lease: Millis { Millis(target.timeout * 1000) + 15_000 }

    /// Sends what is due until `stop` says so; with `once`, until nothing is due now.
    @discardableResult
    public func run(once: Bool = false, stop: () -> Bool = { false }) throws -> Counts {
        var counts = Counts()
        let senders = SenderPool(threads: pacing.concurrency, name: "subdesk-forward-\(target.name)")
        defer { senders.close() }
        var due = try claim()
        var lastLook = pacing.intake?.reading()
        while !stop() {
            if due.isEmpty {
                if once { return counts }
                try idle(stop: stop)
                due = try claim()
                continue
            }
            let started = DispatchTime.now().uptimeNanoseconds
            let attempts = send(due, on: senders)
            // Not behind (the batch was not full): let more notifications be stored before the
            // next write (`settle`).
            if due.count < pacing.batch && !once && !stop() { Thread.sleep(forTimeInterval: pacing.settle) }
            // The answers kept and the next deliveries claimed in one write: a write less per
            // batch for the writers that answer Apple to wait behind.
            due = try claim(recording: attempts, stop: stop)
            // Intake's share of the time since the last look (the rest before this batch and
            // the batch itself) decides this rest.
            if let intake = pacing.intake, let before = lastLook, !once {
                let look = intake.reading()
                lastLook = look
                if attempts.count >= pacing.batch {
                    let work = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
                    let pause = rest(after: work, busy: IntakeLoad.fraction(from: before, to: look))
                    rested += pause
                    let until = Date().addingTimeInterval(pause)
                    while !stop(), case let left = until.timeIntervalSinceNow, left > 0 { Thread.sleep(forTimeInterval: min(left, 0.1)) }
                }
            }
            for (d, a) in attempts {
                onAttempt?(d, a)
                switch a.next {
                case .delivered: counts.delivered += 1
                case .retry: counts.retried += 1
                case .dead: counts.dead += 1
                }
            }
        }
        return counts
    }

    /// Keeps `attempts`, spreads what intake owed into the outbox (every target's) and claims
    /// what is due, in one write: a steady trickle costs the writers that answer Apple one
    /// write per deliverer and batch to wait behind (a spread of its own cost serve more:
    /// BENCHMARKS.md). While nothing is due and a whole batch was spread, spreads the next
    /// (a backlog owed while no deliverer ran, whose first rows wait behind failing ones).
    func claim(recording attempts: [(delivery: ForwardDelivery, attempt: ForwardAttempt)] = [],
               stop: () -> Bool = { false }) throws -> [ForwardDelivery] {
        try store.write {
            try store.outbox.record(attempts)
            while !stop() {
                let spread = try store.outbox.spread()
                let due = try store.outbox.claim(target: target.name, now: now(), limit: pacing.batch, lease: lease, claimant: claimant)
                if !due.isEmpty || spread < ForwardOutboxTable.spreadBatch { return due }
            }
            return []
        }
    }

    /// How long to rest after a full batch that took `work` seconds, intake having been busy
    /// `busy` of the time since the batch before (0 to 1).
    func rest(after work: TimeInterval, busy: Double) -> TimeInterval {
        let b = min(max(0, busy), pacing.maxBusy)
        return max(0, min(work * pacing.intakeShare * b / (1 - b), Double(pacing.batch) / max(1, pacing.floorPerSecond) - work))
    }

    /// Sleeps until the next pending delivery is due, another process commits, or `stop`;
    /// woken by a commit, it lets `pacing.gather` pass first, so that notifications stored
    /// in a burst are claimed together, in one write, rather than one write each.
    private func idle(stop: () -> Bool) throws {
        let version = try store.dataVersion()
        let due = try store.outbox.nextDue(target: target.name)
        while !stop() {
            if let due, now() >= due { return }
            if try store.dataVersion() != version {
                Thread.sleep(forTimeInterval: pacing.gather)
                return
            }
            Thread.sleep(forTimeInterval: pacing.idleLook)
        }
    }

    /// Builds and sends each delivery, `pacing.concurrency` at a time; the answers in order.
    func send(_ due: [ForwardDelivery], on senders: SenderPool) -> [(delivery: ForwardDelivery, attempt: ForwardAttempt)] {
        let prepared = due.map { d in (d, Result { try body(of: d) }) }
        let attempts = senders.run(prepared.count) { [self] index in attempt(prepared[index].0, body: prepared[index].1) }
        return zip(due, attempts).map { ($0, $1) }
    }

    /// A few threads that run the jobs of one call at a time, each job on whichever is free,
    /// until the pool is closed (a run of the deliverer makes one and closes it as it ends).
    final class SenderPool: @unchecked Sendable {
        private let condition = NSCondition()
        private var job: ((Int) -> ForwardAttempt)?
        private var count = 0, next = 0, finished = 0
        private var results: [ForwardAttempt?] = []
        private var closed = false

        init(threads: Int, name: String) {
            for index in 0..<max(1, threads) {
                let thread = Thread { [self] in work() }
                thread.name = "\(name)-\(index)"
                thread.start()
            }
        }

        /// Ends the threads once they are idle.
        func close() {
            condition.lock()
            closed = true
            condition.broadcast()
            condition.unlock()
        }

        /// Runs `job(0..<count)` on the pool's threads; the results in order.
        func run(_ count: Int, _ job: @escaping (Int) -> ForwardAttempt) -> [ForwardAttempt] {
            condition.lock()
            defer { condition.unlock() }
            self.job = job
            self.count = count
            next = 0
            finished = 0
            results = Array(repeating: nil, count: count)
            condition.broadcast()
            while finished < count { condition.wait() }
            self.job = nil
            return results.map { $0! }
        }

        private func work() {
            condition.lock()
            while !closed {
                guard let job, next < count else {
                    condition.wait()
                    continue
                }
                let index = next
                next += 1
                condition.unlock()
                let result = job(index)
                condition.lock()
                results[index] = result
                finished += 1
                if finished == count { condition.broadcast() }
            }
            condition.unlock()
        }
    }

    /// The body a delivery carries, read from the store as it is now.
    func body(of d: ForwardDelivery) throws -> Data {
        guard let stored = try store.notifications.find(uuid: d.notificationUUID) else { throw Missing() }
        switch target.body {
        case .apple: return stored.body
        case .envelope: return try ForwardEnvelope.document(for: d, body: stored.body, store: store, at: now())
        }
    }

    struct Missing: Error, CustomStringConvertible {
        var description: String { "the notification is no longer in the store" }
    }

    /// A TEST-shaped delivery sent now, marked as such (`Subdesk-Test: true`, a delivery id
    /// starting `test-`): nothing is stored, owed or kept; the answer is returned.
    public func sendTest() -> ForwardAttempt {
        let at = now()
        let uuid = "test-" + UUID().uuidString.lowercased()
        let d = ForwardDelivery(id: 0, target: target.name, notificationUUID: uuid, originalTransactionId: nil, bundleId: nil,
                                environment: nil, type: NotificationType.test.rawValue, owed: at, giveUp: at, state: .pending, attempts: 0, next: at)
        let body = try? JSONSerialization.data(withJSONObject: [
            "subdeskTest": true, "notificationType": NotificationType.test.rawValue, "notificationUUID": uuid, "target": target.name,
            "deliveryId": d.deliveryId, "asOf": DateText.iso(at),
        ] as [String: Any], options: [.sortedKeys, .withoutEscapingSlashes])
        return attempt(d, body: .success(body ?? Data()), test: true)
    }

    /// One POST and what it makes of the delivery.
    func attempt(_ d: ForwardDelivery, body: Result<Data, Error>, test: Bool = false) -> ForwardAttempt {
        let started = now()
        let clock = DispatchTime.now().uptimeNanoseconds
        func took() -> Int64 { Int64((DispatchTime.now().uptimeNanoseconds - clock) / 1_000_000) }
        let bytes: Data
        switch body {
        case .success(let data): bytes = data
        case .failure(let error):
            return ForwardAttempt(at: started, tookMs: 0, status: nil, error: "\(error)", answer: nil, next: .dead)
        }
        var headers = [
            "Content-Type": "application/json",
            "Subdesk-Delivery": d.deliveryId,
            "Subdesk-Attempt": String(d.attempts + 1),
            "Subdesk-Notification-Type": d.type,
            DeliverySignature.header: signature.value(body: bytes, time: started / 1000),
        ]
        if test { headers["Subdesk-Test"] = "true" }
        if let app = d.bundleId { headers["Subdesk-App"] = app }
        if let environment = d.environment { headers["Subdesk-Environment"] = environment }
        let request = HTTPRequest(method: "POST", url: target.url, headers: headers, body: bytes)
        do {
            let response = try client.send(request) { _, _ in .accept }
            let wait = HTTPClient.retryAfter(response.header("Retry-After"))
            return ForwardAttempt(at: started, tookMs: took(), status: response.status, error: nil,
                                  answer: response.body.prefix(ForwardDeliverer.keptAnswerBytes),
                                  next: next(after: d, status: response.status, retryAfter: wait, at: started))
        } catch {
            return ForwardAttempt(at: started, tookMs: took(), status: nil, error: ForwardDeliverer.problem(error), answer: nil,
                                  next: next(after: d, status: nil, retryAfter: nil, at: started))
        }
    }

    /// What kept an attempt from an answer, in the outbox's words (the HTTP client's speak of Apple).
    static func problem(_ error: Error) -> String {
        switch error {
        case RevalidationError.timedOut(_, let seconds, _): return "timed out after \(Int(seconds)) s"
        case RevalidationError.network(_, let reason, _): return reason
        case RevalidationError.responseTooLarge: return "answered more than \(maxAnswerBytes) bytes: not read"
        default: return "\(error)"
        }
    }

    /// What follows an attempt that got `status` (nil: no answer): 2xx is delivered; 408,
    /// 429, 5xx and no answer are tried again after the backoff (or the Retry-After asked,
    /// bounded as the Apple client bounds it); anything else is tried again until
    /// `refusedAttempts` (counted since it was last owed again), then dead. The last retry is
    /// made just before `giveUp` (the target's `max_age` after the delivery was owed); one
    /// that fails then is dead.
    func next(after d: ForwardDelivery, status: Int?, retryAfter: TimeInterval?, at: Millis) -> ForwardAttempt.Next {
        if let status, (200...299).contains(status) { return .delivered }
        // Counted from the last time the delivery was owed again: a replay or retry of one the
        // target refused is given its attempts anew, with the back-off from its start.
        let attempt = d.attempts + 1 - d.roundStart
        let transient = status.map { $0 == 408 || $0 == 429 || $0 >= 500 } ?? true
        if !transient && attempt >= pacing.refusedAttempts { return .dead }
        let backoff = client.policy.backoff(afterAttempt: attempt)
        let wait = min(retryAfter ?? backoff, client.policy.maxRetryAfter)
        let when = at + Millis(wait * 1000)
        if when < d.giveUp { return .retry(at: when) }
        return at + 1_000 >= d.giveUp ? .dead : .retry(at: d.giveUp - 1_000)
    }
}
