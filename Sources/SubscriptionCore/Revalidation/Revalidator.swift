import Foundation

/// Revalidates subscriptions against Apple: asks the App Store Server API (or, with no
/// API key, verifyReceipt with the stored receipt), verifies the answer as intake would,
/// merges it through `Intake.merge`, and appends an audit entry in the same write.
/// Failures are audited too.
///
/// Safe to call from any thread: each call opens its own `Store` (a store is one
/// connection, used by one thread), so the dashboard can revalidate from a worker.
public final class Revalidator: @unchecked Sendable {
    public let operatorName: String
    public let configuration: RevalidationConfiguration
    let openStore: @Sendable () throws -> Store
    let verifier: SignedPayloadVerifier
    public let policy: IntakePolicy
    /// The first configured app's (the only one's) lookup.
    let lookup: AppStoreLookup
    /// One lookup per configured app, each signing for its app with its key and held to its rules.
    let appLookups: [AppLookup]
    let clock: @Sendable () -> Millis

    /// One app's way to Apple.
    struct AppLookup: @unchecked Sendable {
        var name: String
        var bundleId: String?
        var lookup: AppStoreLookup
        var label: String { ConfiguredApps.label(name: name, bundleId: bundleId) }
    }

    /// - Parameters:
    ///   - openStore: opens a connection to the store; called once per revalidation or sweep.
    ///   - verifier: the intake verifier (the same trust roots as notifications).
    ///   - maxConnections: concurrent connections per Apple host (a sweep's concurrency).
    public init(openStore: @escaping @Sendable () throws -> Store, configuration: RevalidationConfiguration,
                verifier: SignedPayloadVerifier, policy: IntakePolicy, operatorName: String,
                maxConnections: Int = 8, clock: @escaping @Sendable () -> Millis = { DateText.nowMillis() }) {
        self.openStore = openStore
        self.configuration = configuration
        self.verifier = verifier
        self.policy = policy
        self.operatorName = operatorName
        self.clock = clock
        if policy.apps.count > 1 {
            appLookups = policy.apps.map { app in
                var own = configuration
                own.apiKey = app.bundleId.flatMap { configuration.appKeys[$0] }
                own.sharedSecret = app.sharedSecret
                let rules = (try? policy.forApp(bundleId: app.bundleId, field: "")) ?? policy
                return AppLookup(name: app.name, bundleId: app.bundleId,
                                 lookup: AppStoreLookup(configuration: own, verifier: verifier, policy: rules, maxConnections: maxConnections))
            }
        } else {
            appLookups = [AppLookup(name: policy.apps.first?.name ?? ConfiguredApps.flatAppName, bundleId: policy.bundleId,
                                    lookup: AppStoreLookup(configuration: configuration, verifier: verifier, policy: policy,
                                                           maxConnections: maxConnections))]
        }
        lookup = appLookups[0].lookup
    }

    /// Whether some configured app has the App Store Server API key settings (with several
    /// apps each has its own, and `configuration.apiKey` is none of them).
    public var hasServerAPIKey: Bool { appLookups.contains { $0.lookup.apiClient != nil } }

    /// Whether some app can ask Apple: an API key, or a shared secret for verifyReceipt.
    var canAskApple: Bool {
        appLookups.contains { $0.lookup.apiClient != nil || $0.lookup.configuration.sharedSecret != nil }
    }

    /// One app and one environment that a command acting on the whole store (ping, backfill)
    /// asks Apple about.
    public struct AppleTarget: Sendable, Equatable {
        public let app: String
        /// The app's bundle id (nil for a configuration that names none).
        public let bundleId: String?
        /// `fitness (com.example.fitness)`: what each of the command's lines is for.
        public let label: String
        public let environment: AppStoreEnvironment

        /// The ones of `targets` that are `scope`'s app (all of them without a scope): what a
        /// store-wide call to Apple asks when the command line's `--app` or the desk's `:app`
        /// names one app.
        public static func within(_ scope: AppScope?, _ targets: [AppleTarget]) -> [AppleTarget] {
            guard let scope else { return targets }
            return targets.filter { $0.bundleId == scope.bundleId }
        }
    }

    /// What ping and backfill go through: with `[app]` sections, every app and each of its
    /// environments; otherwise the one app's one environment (the configured one, else
    /// Production), as before apps had sections.
    public var appleTargets: [AppleTarget] {
        guard policy.appsFromSections else {
            return [AppleTarget(app: appLookups[0].name, bundleId: appLookups[0].bundleId, label: appLookups[0].label,
                                environment: policy.environment ?? .production)]
        }
        return appLookups.flatMap { app in
            (app.lookup.policy.environment.map { [$0] } ?? [.production, .sandbox]).map {
                AppleTarget(app: app.name, bundleId: app.bundleId, label: app.label, environment: $0)
            }
        }
    }

    func appLookup(for target: AppleTarget?) -> AppLookup {
        target.flatMap { t in appLookups.first { $0.name == t.app } } ?? appLookups[0]
    }

    /// What the first app that knows it answers, for an id that names no stored subscription
    /// (an order id, an app transaction): each app with a key is asked in turn (or only the
    /// app `bundleId` names), and one that does not know the id (nil, refused as unknown, or
    /// refused as another app's) passes to the next. When none knows it, what they said:
    /// unknown, else refused.
    func askingEachApp<T>(bundleId: String? = nil, _ ask: (AppStoreLookup) throws -> T?) throws -> T? {
        var apps = appLookups.count == 1 ? appLookups : appLookups.filter { $0.lookup.apiClient != nil }
        if let bundleId, appLookups.count > 1 { apps = [try appLookup(bundleId: bundleId)] }
        guard !apps.isEmpty else { return try ask(lookup) }
        var passed = PassedApps()
        for (index, app) in apps.enumerated() {
            do {
                if let found = try ask(app.lookup) { return found }
            } catch let error as RevalidationError where index < apps.count - 1 && passed.note(error) {}
        }
        try passed.rethrow()
        return nil
    }

    /// What the apps that did not know an id said, as each app is asked in turn: an app that
    /// does not know it, or that Apple refuses for it (401, 404: the id is another app's),
    /// passes to the next.
    struct PassedApps {
        var unknown: Error?
        var refused: Error?

        /// Keeps `error` and says true when it passes to the next app.
        mutating func note(_ error: RevalidationError) -> Bool {
            switch error {
            case .unknownSubscription, .transactionNotFound: unknown = unknown ?? error
            case .http(_, let status, _, _, _) where status == 401 || status == 404: refused = refused ?? error
            default: return false
            }
            return true
        }

        /// Throws what the apps said, a not-knowing before a refusal; nothing when none passed.
        func rethrow() throws {
            if let error = unknown ?? refused { throw error }
        }
    }

    /// The lookup of the app with this bundle id (nil: the only app); refused when no app is configured with it.
    func appLookup(bundleId: String?) throws -> AppLookup {
        guard appLookups.count > 1 else { return appLookups[0] }
        guard let bundleId, let found = appLookups.first(where: { $0.bundleId == bundleId }) else {
            throw RevalidationError.notConfigured("the record is app \(bundleId ?? "(no bundle id)")'s, and no configured app has that "
                                                  + "bundle id (apps: \(appLookups.map(\.label).joined(separator: ", ")))")
        }
        return found
    }

    /// The app a stored subscription belongs to: the bundle id its transactions were signed
    /// for (with one app, that app, asked for nothing).
    func appLookup(forSubscription otid: String, store: Store) throws -> AppLookup {
        guard appLookups.count > 1 else { return appLookups[0] }
        let bundleId = try store.transactions.find(id: otid)?.bundleId
            ?? store.subscriptions.history(originalTransactionId: otid).transactions.lazy.compactMap(\.bundleId).first
        return try appLookup(bundleId: bundleId)
    }

    public convenience init(storePath: String, configuration: RevalidationConfiguration, verifier: SignedPayloadVerifier,
                            policy: IntakePolicy, operatorName: String, maxConnections: Int = 8) {
        self.init(openStore: { try Store(path: storePath) }, configuration: configuration, verifier: verifier,
                  policy: policy, operatorName: operatorName, maxConnections: maxConnections)
    }

    /// Revalidates the subscription `id` names (an originalTransactionId, a transactionId,
    /// or a user whose subscriber has one subscription; with an API key, also a transaction
    /// id the store has never seen).
    ///
    /// - Parameters:
    ///   - reason: why, for the audit log.
    ///   - receipt: a receipt to send to verifyReceipt instead of asking the Server API.
    ///   - dryRun: merge and compare, then roll back: nothing is stored or audited.
    public func revalidate(_ id: String, reason: String? = nil, receipt: String? = nil,
                           dryRun: Bool = false) throws -> RevalidationResult {
        let store = try openStore()
        return try revalidate(id, store: store, reason: reason, receipt: receipt, dryRun: dryRun)
    }

    /// The same on a store the calling thread already owns.
    public func revalidate(_ id: String, store: Store, reason: String? = nil, receipt: String? = nil,
                           dryRun: Bool = false) throws -> RevalidationResult {
        let job: Job
        do {
            job = try prepare(id, store: store, receipt: receipt)
        } catch {
            if !dryRun { recordFailure(target: id, error: error, reason: reason, store: store) }
            throw error
        }
        let answer: AppleAnswer
        do {
            answer = try fetch(job)
        } catch {
            if !dryRun { recordFailure(target: job.originalTransactionId ?? id, error: error, reason: reason, store: store) }
            throw error
        }
        return try apply(job, answer, store: store, reason: reason, dryRun: dryRun)
    }

    // MARK: Phases (the sweep runs `fetch` on workers and the rest on its store thread)

    /// What to ask Apple about one subscription, worked out from the store.
    struct Job: Sendable {
        enum Mode: Sendable {
            case serverAPI
            case verifyReceipt(receipt: String)
        }
        var requestedId: String
        /// nil when the store does not know the id and Apple must say which subscription it is.
        var originalTransactionId: String?
        var queryTransactionId: String
        var mode: Mode
        /// The app asked: the stored subscription's; nil when the store does not know it, and
        /// each app is asked in turn.
        var app: AppLookup?
    }

    func prepare(_ id: String, store: Store, receipt: String? = nil) throws -> Job {
        let trimmed = id.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty else { throw RevalidationError.unknownSubscription("no id given") }
        var otid: String?
        do {
            otid = try Operations(store: store, operatorName: operatorName).resolveSubscription(trimmed)
        } catch let error as OperationError {
            // An id naming a subscriber with several subscriptions is ambiguous; one that names
            // nothing may still be a transaction Apple knows.
            if try store.subscribers.lookup(trimmed) != nil { throw RevalidationError.unknownSubscription(error.description) }
        }
        let app = try otid.map { try appLookup(forSubscription: $0, store: store) }
        let mode: Job.Mode
        if let receipt {
            mode = .verifyReceipt(receipt: receipt)
        } else if (app.map { [$0] } ?? appLookups).contains(where: { $0.lookup.apiClient != nil }) {
            mode = .serverAPI
        } else if let otid, let stored = try store.receipts.find(originalTransactionId: otid) {
            mode = .verifyReceipt(receipt: stored)
        } else if otid == nil {
            throw RevalidationError.unknownSubscription("no subscriber, subscription or transaction matches \(trimmed.escapingControlCharacters())")
        } else {
            throw RevalidationError.notConfigured(
                "no App Store Server API key (api_key_file, api_key_id, api_issuer_id) and no stored receipt for \(otid ?? trimmed) to send to verifyReceipt")
        }
        return Job(requestedId: trimmed, originalTransactionId: otid, queryTransactionId: otid ?? trimmed, mode: mode, app: app)
    }

    /// The network half: no store, so it may run on any thread. A subscription the store does
    /// not know is asked of each app in turn, until one knows it.
    func fetch(_ job: Job) throws -> AppleAnswer {
        let apps = job.app.map { [$0] } ?? appLookups
        var passed = PassedApps()
        for app in apps {
            do {
                switch job.mode {
                case .serverAPI:
                    guard app.lookup.apiClient != nil || apps.count == 1 else { continue }
                    return try app.lookup.serverAPI(transactionId: job.queryTransactionId)
                case .verifyReceipt(let receipt): return try app.lookup.verifyReceipt(receipt)
                }
            } catch let error as RevalidationError where apps.count > 1 && passed.note(error) {}
        }
        try passed.rethrow()
        throw RevalidationError.needsServerAPI(action: ServerAPIAction.revalidate, place: configuration.keyPlace)
    }

    private struct DryRunRollback: Error {}

    /// Merges a verified answer and audits it, in one write (rolled back for a dry run).
    func apply(_ job: Job, _ answer: AppleAnswer, store: Store, reason: String?, dryRun: Bool) throws -> RevalidationResult {
        let target: String
        do {
            target = try subscriptionId(job, answer)
        } catch {
            if !dryRun { recordFailure(target: job.requestedId, error: error, reason: reason, store: store) }
            throw error
        }
        let now = clock()
        let body = { () throws -> RevalidationResult in
            let before = try store.subscriptions.find(originalTransactionId: target)?.state
            let known = Set(try store.subscriptions.history(originalTransactionId: target).transactions.map(\.transactionId))
            let intake = Intake(store: store, verifier: self.verifier, policy: self.policy)
            var touched = try intake.merge(transactions: answer.transactions, renewals: answer.renewals, now: now)
            // Even when Apple has nothing new, re-deriving at `now` is what turns a stored
            // "active" whose expiry has passed into "expired".
            if !touched.contains(target) {
                try intake.rederive(target, now: now)
                touched.append(target)
            }
            for (otid, receipt) in answer.receipts.sorted(by: { $0.key < $1.key }) {
                try store.receipts.put(receipt, originalTransactionId: otid, at: now)
            }
            let after = try store.subscriptions.find(originalTransactionId: target)?.state
            let newIds = Array(Set(answer.transactions.filter { $0.originalTransactionId == target && !known.contains($0.transactionId) }
                .map(\.transactionId))).sorted()
            var result = RevalidationResult(
                requestedId: job.requestedId, originalTransactionId: target, source: answer.source, before: before, after: after,
                outcome: RevalidationResult.outcome(before: before, after: after),
                changes: RevalidationResult.changes(before: before, after: after, newTransactionIds: newIds),
                newTransactionIds: newIds, appleStatus: answer.appleStatuses[target], touched: touched.sorted(),
                transactionCount: answer.transactions.count, renewalCount: answer.renewals.count, auditId: nil, dryRun: dryRun)
            if !dryRun {
                result.auditId = try store.audit.append(AuditEntry(at: now, operatorName: self.operatorName, action: .revalidate,
                                                                  target: target, reason: reason, outcome: result.auditOutcome,
                                                                  detail: result.auditDetail))
            }
            return result
        }
        guard dryRun else { return try store.write(body) }
        var captured: RevalidationResult?
        try store.write {
            do {
                try store.savepoint {
                    captured = try body()
                    throw DryRunRollback()
                }
            } catch is DryRunRollback {}
        }
        guard let captured else { throw RevalidationError.refused(reason: "dry run produced no result") }
        return captured
    }

    /// The subscription an answer is about: the stored one, else the one Apple's records
    /// tie to the transaction id that was asked about.
    private func subscriptionId(_ job: Job, _ answer: AppleAnswer) throws -> String {
        if let otid = job.originalTransactionId { return otid }
        let id = job.queryTransactionId
        if let t = answer.transactions.first(where: { $0.transactionId == id || $0.originalTransactionId == id })
            ?? answer.transactions.first(where: { $0.appTransactionId == id }) {
            return t.originalTransactionId
        }
        if let r = answer.renewals.first(where: { $0.originalTransactionId == id }) { return r.originalTransactionId }
        throw RevalidationError.unknownSubscription("Apple's answer for \(id) holds no transaction with that id")
    }

    /// Audits a failed revalidation. An audit write that itself fails is dropped so the
    /// caller still sees the failure that matters.
    func recordFailure(target: String, error: Error, reason: String?, store: Store) {
        _ = try? store.write {
            try store.audit.append(AuditEntry(at: clock(), operatorName: operatorName, action: .revalidate, target: target,
                                             reason: reason, outcome: "failed", detail: "\(error)"))
        }
    }
}

extension Revalidator {
    /// `subdesk ping` with this revalidator's settings and a store connection of its own,
    /// for callers on another thread (the dashboard's worker). Each request gives up after
    /// 10 s at most: the wait for the notification is the loop's, not one request's.
    public func ping(wait: TimeInterval, target: AppleTarget? = nil) throws -> Ping.Result {
        let client = try appLookup(for: target).lookup.serverAPI(for: ServerAPIAction.ping, maxTimeout: 10)
        let store = try openStore()
        let environment = target?.environment ?? policy.environment ?? .production
        let result = try Ping(store: store, client: client).run(environment: environment, timeout: wait)
        // Kept for the on-call metrics; a store this role may not write still gets its answer.
        try? store.recordPing(environment: environment.rawValue, requested: result.requested, arrived: result.arrived)
        return result
    }
}

extension Revalidator {
    /// A support agent's order id (from the customer's e-mailed receipt): Apple says which
    /// transactions it bought; they are verified, and each subscription among them is
    /// revalidated in full (statuses and history) and stored. Returns the results, the
    /// first subscription first; an order of one-time purchases only stores those.
    /// Each app with a key is asked in turn until one knows the order, or only the app
    /// `bundleId` names (`--app`).
    public func lookUpOrder(_ orderId: String, reason: String? = nil, app bundleId: String? = nil) throws
        -> (originalTransactionIds: [String], results: [RevalidationResult]) {
        let store = try openStore()
        let order: (originalTransactionIds: [String], transactions: [TransactionRecord])
        do {
            guard let found = try askingEachApp(bundleId: bundleId, { try $0.order(orderId) }) else {
                throw RevalidationError.unknownSubscription("no configured app's Look Up Order ID knows order id \(orderId)")
            }
            order = found
        } catch {
            recordFailure(target: orderId, error: error, reason: reason, store: store)
            throw error
        }
        // The order's own transactions first, so one-time purchases are kept too.
        try store.write {
            _ = try Intake(store: store, verifier: verifier, policy: policy).merge(transactions: order.transactions, renewals: [], now: clock())
        }
        var results: [RevalidationResult] = []
        for otid in order.originalTransactionIds where try store.subscriptions.find(originalTransactionId: otid) != nil {
            results.append(try revalidate(otid, store: store, reason: reason ?? "order \(orderId)"))
        }
        return (order.originalTransactionIds, results)
    }
}

extension Revalidator {
    /// What Apple has about one subscription beyond its state: the customer's refunded
    /// transactions (Get Refund History) and the latest transaction as Apple has it now
    /// (Get Transaction Info), verified, merged into the store (newest version wins, as
    /// intake does) and audited.
    public func refundsAndTransactionInfo(_ id: String) throws -> (refunds: [TransactionRecord], transaction: TransactionRecord) {
        let store = try openStore()
        let otid = try Operations(store: store, operatorName: operatorName).resolveSubscription(id)
        guard let row = try store.subscriptions.find(originalTransactionId: otid) else {
            throw RevalidationError.unknownSubscription("no subscription \(otid)")
        }
        let environment = AppStoreEnvironment(rawValue: row.state.environment)
        do {
            let answer = try appLookup(forSubscription: otid, store: store).lookup.refundsAndTransaction(row.state.latestTransactionId ?? otid, environment: environment)
            try store.write {
                let now = clock()
                _ = try Intake(store: store, verifier: verifier, policy: policy)
                    .merge(transactions: answer.refunds + [answer.transaction], renewals: [], now: now)
                try store.audit.append(AuditEntry(at: now, operatorName: operatorName, action: .refundHistory, target: otid, reason: nil,
                                                 outcome: "\(answer.refunds.count) refunded transaction\(answer.refunds.count == 1 ? "" : "s") at Apple",
                                                 detail: answer.refunds.map(\.transactionId).joined(separator: ", ")))
            }
            return answer
        } catch {
            recordFailure(target: otid, error: error, reason: "refund history", store: store)
            throw error
        }
    }
}

extension Revalidator {
    /// Makes Apple's records follow subdesk's: sets the subscriber's app account token on
    /// the subscription at Apple (Set App Account Token). A subscriber without one gets a
    /// new UUID first, kept in the store, so Apple's later transactions name the subscriber.
    /// Audited, failed or not. Returns the token.
    public func setAppAccountTokenAtApple(_ id: String, reason: String? = nil) throws -> String {
        let store = try openStore()
        let otid = try Operations(store: store, operatorName: operatorName).resolveSubscription(id)
        guard let row = try store.subscriptions.find(originalTransactionId: otid) else {
            throw RevalidationError.unknownSubscription("no subscription \(otid)")
        }
        let client = try appLookup(forSubscription: otid, store: store).lookup.serverAPI(for: ServerAPIAction.appAccountToken)
        let token = row.subscriber.appAccountToken ?? UUID().uuidString.lowercased()
        do {
            try client.setAppAccountToken(originalTransactionId: otid, token: token,
                                          environment: AppStoreEnvironment(rawValue: row.state.environment))
        } catch {
            _ = try? store.write {
                try store.audit.append(AuditEntry(at: clock(), operatorName: operatorName, action: .setAppAccountToken, target: otid,
                                                 reason: reason, outcome: "failed", detail: "\(error)"))
            }
            throw error
        }
        try store.write {
            if row.subscriber.appAccountToken == nil { try store.subscribers.setAppAccountToken(token, subscriberId: row.subscriber.id) }
            try store.audit.append(AuditEntry(at: clock(), operatorName: operatorName, action: .setAppAccountToken, target: otid,
                                             reason: reason, outcome: "Apple has app account token \(token)",
                                             detail: row.subscriber.appAccountToken == nil ? "a new token for subscriber #\(row.subscriber.id)" : nil))
        }
        return token
    }
}

extension Revalidator {
    /// The App Store Server API client this revalidator's settings make, or an error
    /// naming `action` and the settings it needs.
    public func serverAPIClient(for action: String, target: AppleTarget? = nil) throws -> AppStoreServerAPIClient {
        try appLookup(for: target).lookup.serverAPI(for: action)
    }

    /// Whether the App Store Server API key settings are there; without them, the error
    /// that names `action` and what to set. Called before asking an operator to confirm,
    /// so nobody answers y to something that cannot be sent.
    public func requireServerAPI(for action: String) throws {
        guard let first = appLookups.first(where: { $0.lookup.apiClient != nil }) else { _ = try lookup.serverAPI(for: action); return }
        _ = try first.lookup.serverAPI(for: action)
    }
}

/// What Apple said about an app download: its verified facts and the subscriptions its
/// customer holds, now stored.
public struct AppTransactionLookup: Sendable {
    public var appTransaction: AppTransaction
    public var originalTransactionIds: [String]
}

extension Revalidator {
    /// Resolves an app transaction at Apple: Get App Transaction Info (verified, bundle id,
    /// app Apple id and environment checked), then the customer's statuses and history asked
    /// for by that appTransactionId (API 1.20), verified and stored as a revalidation stores
    /// them. Audited (`app_transaction_lookup`), failed or not. nil when Apple has no app
    /// transaction with that id.
    /// Each app with a key is asked in turn until one knows it, or only the app `bundleId` names.
    public func resolveAppTransaction(_ appTransactionId: String, reason: String? = nil, app bundleId: String? = nil) throws -> AppTransactionLookup? {
        let store = try openStore()
        func audit(_ outcome: String, _ detail: String?) {
            _ = try? store.write {
                try store.audit.append(AuditEntry(at: clock(), operatorName: operatorName, action: .appTransactionLookup,
                                                 target: appTransactionId, reason: reason, outcome: outcome, detail: detail))
            }
        }
        let app: AppTransaction
        do {
            guard let found = try askingEachApp(bundleId: bundleId, { try $0.appTransaction(appTransactionId) }) else {
                audit("Apple has no app transaction \(appTransactionId)", nil)
                return nil
            }
            app = found
        } catch {
            audit("failed", "\(error)")
            throw error
        }
        guard app.appTransactionId == appTransactionId else {
            let error = RevalidationError.refused(reason: "app transaction info: appTransactionId \(app.appTransactionId ?? "missing") differs from the \(appTransactionId) asked for")
            audit("failed", error.description)
            throw error
        }
        // The app was downloaded; the customer may have bought nothing (Apple then knows no
        // subscription for the id), which is an answer, not a failure.
        do {
            _ = try revalidate(appTransactionId, store: store, reason: reason ?? "app transaction \(appTransactionId)")
        } catch RevalidationError.unknownSubscription, RevalidationError.transactionNotFound {}
        let otids = try store.transactions.originalTransactionIds(appTransactionId: appTransactionId)
        audit("app transaction \(appTransactionId) found at Apple" + (otids.isEmpty ? "; no subscription" : "; subscriptions " + otids.joined(separator: ", ")),
              app.phrases.joined(separator: " · "))
        return AppTransactionLookup(appTransaction: app, originalTransactionIds: otids)
    }
}
