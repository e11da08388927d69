import Foundation

/// What the on-call metrics and `subdesk check` are computed from: everything read from the
/// store in one go, with indexed queries over small tables or recent windows only, so a
/// scrape every 15 s costs little on a store of a million subscribers.
public struct OnCallReading: Sendable {
    public struct IntakeCount: Sendable {
        /// The app's bundle id as the body was signed for it; '' when it could not be read
        /// (and for every count made before intake counted apps, migration 27);
        /// `IntakePolicy.unconfiguredApp` for refused bodies naming a bundle id no app had.
        public var bundleId: String
        public var environment: String
        public var type: String
        public var outcome: String
        public var reason: String
        public var count: Int64
        public var last: Millis

        public init(bundleId: String = "", environment: String, type: String, outcome: String, reason: String, count: Int64, last: Millis) {
            self.bundleId = bundleId
            self.environment = environment
            self.type = type
            self.outcome = outcome
            self.reason = reason
            self.count = count
            self.last = last
        }
    }

    public var now: Millis
    public var engine: SQLDialect
    public var intakeCounts: [IntakeCount] = []

    public init(now: Millis, engine: SQLDialect) {
        self.now = now
        self.engine = engine
    }
    /// Delivery lag (arrival minus Apple's signedDate, ms) of the notifications stored in
    /// the window before `now`, sorted.
    public var lags: [Millis] = []
    public static let lagWindow: Millis = 3_600_000
    /// The most lags read per scrape: a burst is described by its newest notifications.
    public static let lagSampleLimit = 5_000
    public var rejectedLastHour = 0
    public var quarantineEntries = 0
    public var quarantineBytes: Int64 = 0
    public var openRefunds = 0
    /// The nearest answer deadline among open, unanswered refund requests.
    public var nextRefundDeadline: Millis?
    public var refundAnswersAccepted = 0
    public var refundAnswersRefused = 0
    /// Answers never sent (the App Store Server API key settings were missing).
    public var refundAnswersNotSent = 0
    /// Answers lost on the way (no answer from Apple: a timeout, the network).
    public var refundAnswersFailed = 0
    public var refundAnswersLate = 0
    /// Open requests whose deadline passed in the last day with no accepted answer: still
    /// worth waking someone for (Apple has not decided yet).
    public var refundsMissedLastDay = 0
    public var ping: PingRecord?
    public var gapsByType: [(type: String, count: Int)] = []
    /// Notifications a backfill found missing in the day before `now`: what the gaps alert
    /// judges (a gap found last month was dealt with then).
    public var gapsFoundLastDay = 0
    public var lastSweep: AuditEntry?
    /// When a backfill of the notifications Apple failed to deliver (`backfill
    /// --only-failures`, what subdesk-reconcile.timer runs hourly) last finished, for each app
    /// (its bundle id, '' for a run from before apps) and environment.
    public var lastReconcile: [AppEnvironment: Millis] = [:]
    public var revalidationFailuresLastDay = 0
    public var pendingExtensions = 0
    public var schemaVersion = 0
    public var binarySchemaVersion = 0
    public var storeBytes: Int64?
    public var walBytes: Int64?
    /// Subscriptions whose by-segment counts have not been caught up, counted up to `pendingCap`.
    public var pendingSegments = 0
    public static let pendingCap = 100_000

    /// The latest call to the App Store Server API the store has a record of; nil when it
    /// has none (nothing here has called Apple, or no record of it is kept).
    public var lastAppleCall: AppleCallRecord?

    /// Each forward target's outbox (`Store.forwardReadings`): the configured targets, then
    /// any other the outbox still names, by name.
    public var forwarding: [ForwardReading] = []

    /// When the last notification was stored (a duplicate or a refusal proves less: neither
    /// passed every check a stored body did); nil before the first.
    public var lastStored: Millis? {
        intakeCounts.filter { $0.outcome == IntakeLogEntry.Result.stored.rawValue }.map(\.last).max()
    }

    /// One app's last stored notification of each environment, when a check is of one app
    /// (`subdesk check --app`): its silence is judged by these instead of every app's arrivals.
    public var appArrivals: [String: Millis]?

    /// When the last notification of each environment arrived (stored or duplicate); of one
    /// app, when `appArrivals` are read.
    public var lastArrivalByEnvironment: [String: Millis] {
        if let appArrivals { return appArrivals }
        var last: [String: Millis] = [:]
        for (key, at) in lastArrivalByAppAndEnvironment { last[key.environment] = max(last[key.environment] ?? 0, at) }
        return last
    }

    /// When the last notification of each app (its bundle id, '' unknown) and environment
    /// arrived (stored or duplicate).
    public var lastArrivalByAppAndEnvironment: [AppEnvironment: Millis] {
        var last: [AppEnvironment: Millis] = [:]
        for c in intakeCounts where c.outcome != IntakeLogEntry.Result.rejected.rawValue && !c.environment.isEmpty {
            let key = AppEnvironment(bundleId: c.bundleId, environment: c.environment)
            last[key] = max(last[key] ?? 0, c.last)
        }
        return last
    }

    public struct AppEnvironment: Hashable, Sendable {
        public var bundleId: String
        public var environment: String
    }

    /// Failures the last sweep reported (`failed N` in its outcome).
    public var lastSweepFailures: Int? {
        guard let outcome = lastSweep?.outcome, let range = outcome.range(of: "failed ") else { return nil }
        return Int(outcome[range.upperBound...].prefix { $0.isNumber })
    }
}

/// A call to the App Store Server API as the store records it: when, and whether Apple
/// answered (any answer, an error code included: Apple was there to give it).
public struct AppleCallRecord: Sendable, Equatable {
    /// Which record says so.
    public enum Record: String, Sendable {
        /// An audited revalidation (`audit_log`, action `revalidate`): one audited `failed`
        /// is a call that got no usable answer, or could not be made (no key settings).
        case revalidation
        /// The last refund request's answer (`refund_requests`): accepted or refused is
        /// Apple's answer; failed (no answer) or not sent (no key settings) is none.
        case refundAnswer = "refund_answer"
        /// The last `subdesk ping` (`store_facts`): kept only once Apple took the request.
        case ping
    }

    public var at: Millis
    public var answered: Bool
    public var record: Record

    public init(at: Millis, answered: Bool, record: Record) {
        self.at = at
        self.answered = answered
        self.record = record
    }
}

/// The last `subdesk ping`, as the store remembers it (`store_facts`).
public struct PingRecord: Sendable, Equatable {
    public var environment: String
    public var requested: Millis
    public var arrived: Millis?
    public var roundTrip: Millis? { arrived.map { $0 - requested } }

    public init(environment: String, requested: Millis, arrived: Millis?) {
        self.environment = environment
        self.requested = requested
        self.arrived = arrived
    }
}

extension StoreFactsTable {
    static let pingKeys = ["ping.environment", "ping.requested_ms", "ping.arrived_ms"]

    /// Remembers a ping's outcome, so monitoring can tell whether the webhook's round trip
    /// still works without asking Apple itself; inside a write.
    func recordPing(environment: String, requested: Millis, arrived: Millis?) throws {
        let values = [environment, String(requested), arrived.map(String.init) ?? ""]
        for (key, value) in zip(Self.pingKeys, values) { try set(key, value) }
    }

    /// The last ping recorded, if any.
    public func lastPing() throws -> PingRecord? {
        let facts = try values(Self.pingKeys)
        guard let environment = facts["ping.environment"], let requested = facts["ping.requested_ms"].flatMap({ Millis($0) }) else { return nil }
        return PingRecord(environment: environment, requested: requested, arrived: facts["ping.arrived_ms"].flatMap { Millis($0) })
    }
}

extension Store {
    /// Remembers a ping's outcome (`StoreFactsTable.recordPing`), in a write of its own.
    public func recordPing(environment: String, requested: Millis, arrived: Millis?) throws {
        try write { try facts.recordPing(environment: environment, requested: requested, arrived: arrived) }
    }
}

extension OnCallReading {
    /// Reads everything the on-call metrics need from `store`, each table its part. Only
    /// reads: it never starts a write, so a scrape never waits for intake or makes intake
    /// wait (SQLite readers see the last commit through the WAL; PostgreSQL readers never
    /// block writers). `forwardTargets`: the configured targets, read even while the outbox
    /// names none of them.
    public static func read(from store: Store, now: Millis, forwardTargets: [String] = []) throws -> OnCallReading {
        var r = OnCallReading(now: now, engine: store.dialect)
        r.intakeCounts = try store.intakeLog.counts()
        let since = now - OnCallReading.lagWindow
        r.lags = try store.notifications.lags(since: since, until: now, atMost: OnCallReading.lagSampleLimit)
        r.rejectedLastHour = try store.intakeLog.refusals(from: now - 3_600_000, to: now)
        r.quarantineEntries = try store.quarantine.unresolvedCount()
        r.quarantineBytes = try store.quarantine.keptBytes()
        try store.refundRequests.read(into: &r, now: now)
        r.ping = try store.facts.lastPing()
        try store.backfills.read(into: &r, now: now)
        // Facts from the audit log are read only from entries their writer may write
        // (OnCallMetric.Source.auditAction): on PostgreSQL the server checks each new one.
        r.lastSweep = try store.audit.last(action: .sweep, trusted: true, now: now)
        r.revalidationFailuresLastDay = try store.audit.revalidationFailures(since: now - 86_400_000)
        r.pendingExtensions = try store.extensions.pendingCount()
        r.schemaVersion = store.opening.newerSchemaVersion ?? store.schemaVersion
        r.binarySchemaVersion = Migrations.latestVersion
        r.pendingSegments = try store.metrics.pendingSegmentCount(atMost: OnCallReading.pendingCap)
        (r.storeBytes, r.walBytes) = try store.db.storageBytes()
        r.lastAppleCall = try lastAppleCall(store, now: now)
        r.forwarding = try store.outbox.readings(targets: forwardTargets, now: now)
        return r
    }

    /// The latest of the records of calls to the App Store Server API (`AppleCallRecord.Record`).
    /// Audit entries count only from the roles that may write them, and none dated more than
    /// `AuditTable.futureToleranceMillis` after `now`.
    static func lastAppleCall(_ store: Store, now: Millis) throws -> AppleCallRecord? {
        var found = [try store.audit.lastRevalidation(now: now), try store.refundRequests.lastAnswer()].compactMap { $0 }
        if let ping = try store.facts.lastPing() { found.append(AppleCallRecord(at: ping.requested, answered: true, record: .ping)) }
        return found.max { $0.at < $1.at }
    }
}

/// One forward target's outbox as a scrape reads it: what is waiting, what died, and the
/// last hour's deliveries and failed attempts. Counts of all time would grow with the
/// outbox (it keeps every delivery), so what is counted is a window an index finds.
public struct ForwardReading: Sendable, Equatable {
    public var target: String
    /// Deliveries not yet taken by the target.
    public var pending = 0
    /// When the oldest pending delivery was owed; nil when none is pending.
    public var oldestPending: Millis?
    /// Dead deliveries the outbox keeps (given up: past max_age, or refused too often).
    public var dead = 0
    /// Deliveries that died in the day before the reading: last tried then, or, never
    /// tried, whose max_age ran out then.
    public var deadLastDay = 0
    public var deliveredLastHour = 0
    /// Attempts in the hour before the reading that got no 2xx.
    public var failedAttemptsLastHour = 0

    public init(target: String) { self.target = target }

    /// How long the oldest pending delivery has waited at `now`; nil when none is pending.
    public func lag(at now: Millis) -> Millis? { oldestPending.map { max(0, now - $0) } }
}
