import Foundation
import SubscriptionCore
import TerminalUI

/// Runs the dashboard against a store: reduces actions, performs the effects, watches for changes.
///
/// Everything a terminal backend needs and nothing terminal-specific: the
/// backend feeds keys, sizes and clock ticks in, and asks for frames and the
/// theme. The store is used from the calling thread only, as `Store` requires;
/// a revalidation, which waits on Apple for seconds, runs on a worker with a
/// connection of its own and comes back as an action on the next `tick`.
public final class DashboardSession {
    public private(set) var state: DashboardState
    /// The theme frames should be painted in; changes when `:theme` succeeds.
    public private(set) var theme: Theme
    /// The store, opened again when its file is replaced under the session.
    public var store: Store { operations.store }
    /// The session's operator actions on its store, made again only when the store is.
    private(set) var operations: Operations
    /// The device and inode of the store's file when it was opened.
    private var storeIdentity: FileIdentity?
    let themes: ThemeCatalog
    let clock: () -> Millis
    /// Who the audit log names for overrides placed from this session.
    public let operatorName: String
    /// The revalidator `r` uses, or why there is none (a setting that could not be read).
    let revalidator: Result<Revalidator, RevalidationUnavailable>
    /// How refund requests are answered: consent and the suggested preference.
    let refundPolicy: RefundPolicy
    /// What puts money in several currencies into one for `:daily`, when the config names a rates file.
    let exchangeRates: ExchangeRates?
    /// The configuration and limits `:health` judges with: those of `subdesk check`.
    let healthSettings: OnCallSettings
    private var lastDataVersion: Int?
    /// Texts `y` copied that the terminal backend has not yet sent to the terminal.
    private var clipboardOutbox: [String] = []
    private let background = BackgroundWork()
    /// What the effect being performed would be doing on a worker, for `withRevalidator`.
    private var workLabel = ""
    /// Which subscriptions of a page an open consent withdrawal concerns, remembering what it read.
    private var consentBadges = ConsentBadgeIndex()

    /// At most this many actions per dispatch: a guard against two loads asking for each other forever.
    static let actionBudget = 64

    public init(store: Store, state: DashboardState, theme: Theme = .standard, themes: ThemeCatalog = ThemeCatalog(searchPaths: []),
                clock: @escaping () -> Millis = DateText.nowMillis, operatorName: String = Operations.defaultOperator(),
                revalidator: Result<Revalidator, RevalidationUnavailable> = .failure(RevalidationUnavailable(
                    "revalidation is not set up in this session")), refundPolicy: RefundPolicy = RefundPolicy(),
                exchangeRates: ExchangeRates? = nil, healthSettings: OnCallSettings = OnCallSettings()) {
        self.refundPolicy = refundPolicy
        self.healthSettings = healthSettings
        self.exchangeRates = exchangeRates
        self.operations = Operations(store: store, operatorName: operatorName)
        self.state = state
        self.theme = theme
        self.themes = themes
        self.clock = clock
        self.operatorName = operatorName
        self.revalidator = revalidator
        if self.state.availableThemes.isEmpty { self.state.availableThemes = themes.availableNames() }
        // Whether some app has the key `:extend`, `:ping` and `:backfill` need, whichever app it is.
        if case .success(let ready) = revalidator {
            self.state.withoutServerAPIKey = !ready.hasServerAPIKey
            self.state.serverAPIKeyPlace = ready.configuration.keyPlace
        }
    }

    public var shouldQuit: Bool { state.quitRequested }

    /// Loads the first screen.
    public func start() {
        storeIdentity = FileIdentity(path: store.path)
        lastDataVersion = try? store.dataVersion()
        send(.start)
    }

    /// Reduces `action` and performs every effect that follows from it, in order.
    public func send(_ action: DashboardAction) {
        var queue = [action]
        var budget = DashboardSession.actionBudget
        while !queue.isEmpty && budget > 0 {
            budget -= 1
            let effects = DashboardReducer.reduce(into: &state, queue.removeFirst())
            for effect in effects { queue += perform(effect) }
        }
        reportBackgroundWork()
    }

    /// Tells the reducer what is still running on workers when that changed, so that quitting
    /// can say what would be lost.
    private func reportBackgroundWork() {
        let running = background.runningLabels
        if running != state.runningWork { send(.backgroundWorkChanged(running)) }
    }

    /// Advances the clock, takes in what background work finished and, when another process
    /// (or a worker) wrote to the store, refreshes what is on screen.
    public func tick() {
        // The clock first: a revalidation's answer is shown (and the detail reloaded) as of now.
        send(.tick(now: clock()))
        for action in background.finished() { send(action) }
        reportBackgroundWork()
        watchStoreFile()
        if let version = try? store.dataVersion(), version != lastDataVersion {
            lastDataVersion = version
            send(.storeChanged)
        }
    }

    /// Notices a store file deleted, moved or replaced under the session (another `subdesk
    /// demo`, a restore from backup): a replaced one is opened again, a missing one is said so.
    func watchStoreFile() {
        guard let opened = storeIdentity else { return }
        let now = FileIdentity(path: store.path)
        if now == opened {
            if state.storeGone { send(.storeFileReopened(path: store.path)) }
            return
        }
        guard now != nil, let reopened = try? Store(path: store.path, mode: .existing) else {
            if !state.storeGone { send(.storeFileGone(path: store.path)) }
            return
        }
        store.closeAfterReplacement()
        operations = Operations(store: reopened, operatorName: operatorName)
        // Another store may hold other bodies under the same UUIDs.
        consentBadges = ConsentBadgeIndex()
        storeIdentity = now
        lastDataVersion = try? reopened.dataVersion()
        send(.storeFileReopened(path: store.path))
    }

    /// Texts for the terminal's clipboard since the last call, oldest first; the backend
    /// sends each (OSC 52), as only it writes to the terminal.
    public func takeClipboard() -> [String] {
        defer { clipboardOutbox.removeAll() }
        return clipboardOutbox
    }

    /// Whether a revalidation is still running on a worker.
    public var hasBackgroundWork: Bool { background.running > 0 }

    /// Waits until background work finishes (or `timeout` passes) and takes in its results;
    /// false on timeout. For tests and for leaving cleanly: the main loop polls with `tick`.
    @discardableResult
    public func waitForBackgroundWork(timeout: TimeInterval) -> Bool {
        let done = background.wait(timeout: timeout)
        for action in background.finished() { send(action) }
        reportBackgroundWork()
        return done
    }

    public func resize(width: Int, height: Int) {
        guard width != state.width || height != state.height else { return }
        send(.resize(width: width, height: height))
    }

    /// The current frame.
    public func render(into buffer: inout ScreenBuffer) {
        DashboardRenderer.render(state, into: &buffer)
    }

    // MARK: - Effects

    /// The records of the app the desk is scoped to (nil: every app's): what every load reads.
    var app: AppScope? { state.scope?.records }

    /// The scope as a counts filter, for the daily counts and the cohorts (which read their
    /// aggregates one dimension value at a time).
    var appFilter: SegmentFilter? { app.map { SegmentFilter(dimension: .app, value: $0.bundleId) } }

    func perform(_ effect: DashboardEffect) -> [DashboardAction] {
        workLabel = effect.workDescription
        do {
            switch effect {
            case .loadSubscribers(let request):
                return [.subscribersLoaded(request, try loadPage(request))]
            case .loadStatusCounts:
                return [.statusCountsLoaded(try store.subscriptions.statusCounts(app: app), total: try store.subscriptions.count(app: app))]
            case .loadDetail(let id):
                return [.detailLoaded(originalTransactionId: id, try loadDetail(id))]
            case .loadPayload(let id, let key, let kind, let reference):
                return [.payloadLoaded(originalTransactionId: id, entryKey: key,
                                       lines: try payloadLines(kind: kind, reference: reference, originalTransactionId: id))]
            case .pollFeed(let afterId):
                let now = clock()
                // Read first: a scoped read leaves out other apps' lines, which the next poll need not read again.
                let readTo = app == nil ? 0 : try store.intakeLog.newestId()
                let entries = try store.intakeLog.entries(afterId: afterId, limit: FeedState.capacity, app: app)
                let rate = try store.intakeLog.perMinute(minutes: FeedState.rateMinutes, now: now, app: app)
                return [.feedLoaded(entries, rate: rate, now: now, readTo: readTo)]
            case .loadDaily(let request):
                let days = try DailyCountsReport.compute(store: store, from: request.from, to: request.to,
                                                         timeZone: request.zone, segments: request.segment.segments,
                                                         period: request.period, rates: exchangeRates, filter: request.filter ?? appFilter)
                return [.dailyLoaded(request, days)]
            case .loadQuarantine:
                return [.quarantineLoaded(try store.quarantine.entries(limit: QuarantineState.limit, app: app))]
            case .loadGaps:
                return [.gapsLoaded(try store.backfills.gaps(limit: GapsState.limit, app: app))]
            case .loadRetention(let query, let grouping):
                return [.retentionLoaded(try store.retention.report.report(query, by: grouping))]
            case .loadRetentionContent(let environment):
                let records = try store.retention.content.records(app: app?.bundleId, environment: environment.rawValue)
                return [.retentionContentLoaded(environment, records.filter { $0.kind != .realtimeURL })]
            case .refreshRetention(let environment):
                return withRetentionConsole(environment) { console in
                    let lists = try console.refresh()
                    return .retentionRefreshed(environment, messages: lists.messages, images: lists.images)
                }
            case .deleteRetentionContent(let kind, let id, let environment):
                return withRetentionConsole(environment) { console in
                    let entry = kind == .image ? try console.deleteImage(id: id, reason: nil) : try console.deleteMessage(id: id, reason: nil)
                    return .retentionConsoleAnswered(message: "\(kind.rawValue) \(id) deleted at Apple (\(environment)) by \(entry.operatorName) "
                                                     + "(audit #\(entry.id))", failed: false)
                }
            case .setRetentionDefault(let product, let locale, let messageId, let environment):
                return withRetentionConsole(environment) { console in
                    let entry = try console.setDefault(product: product, locale: locale, messageId: messageId, reason: nil)
                    return .retentionConsoleAnswered(message: "default message of \(product) in \(locale) set to \(messageId) at Apple (\(environment)) "
                                                     + "by \(entry.operatorName) (audit #\(entry.id))", failed: false)
                }
            case .retentionPerformanceTest(let transactionId):
                return withRetentionConsole(.sandbox, failure: { .retentionPerformanceTested(requestId: nil, nil, message: $0, failed: true) }) { console in
                    let started = try console.startPerformanceTest(originalTransactionId: transactionId, reason: nil)
                    let result = try console.followPerformanceTest(requestId: started.requestId, wait: DashboardSession.performanceTestWait)
                    let said = result.isPending ? "still PENDING after \(Int(DashboardSession.performanceTestWait)) s" : "result \(result.result)"
                    return .retentionPerformanceTested(requestId: started.requestId, result,
                                                       message: "performance test \(started.requestId) (audit #\(started.audit.id)): \(said)",
                                                       failed: result.verdict == .fail)
                }
            case .loadHealth:
                let now = clock()
                // The relay's lag and dead deliveries, per target, among intake's signals (as `subdesk check` judges them).
                return [.healthLoaded(healthSettings.signals(try OnCallReading.read(from: store, now: now, forwardTargets: state.forwardTargets)),
                                      now: now)]
            case .loadForward:
                let now = clock()
                return [.forwardLoaded(try store.outbox.status(targets: state.forwardTargets, now: now), now: now)]
            case .loadCohorts(let request):
                do {
                    let report = try CohortReport.compute(store: store, metric: request.metric, period: request.period,
                                                          filters: (request.filter.map { [$0] } ?? []) + (appFilter.map {
                                                              [CohortFilter(dimension: .app, value: $0.value)] } ?? []),
                                                          segments: request.segment.segments, rates: exchangeRates, now: clock())
                    return [.cohortsLoaded(request, report)]
                } catch let refusal as ConfigurationError {
                    return [.cohortsRefused(request, message: refusal.description)]
                }
            case .loadRefunds:
                return [.refundsLoaded(try loadRefunds())]
            case .loadConsent:
                return [.consentLoaded(try ConsentWithdrawal.load(store: store, includeHandled: true, app: app))]
            case .markConsentHandled(let uuid, let reason):
                do {
                    let entry = try operations.markConsentHandled(uuid, reason: reason, now: clock())
                    return [.consentHandled(message: SafeText.sanitize("consent withdrawal \(uuid) marked handled by \(entry.operatorName) "
                                                + "(audit #\(entry.id)); \(entry.detail ?? "")"), failed: false)]
                } catch let error as OperationError {
                    return [.consentHandled(message: "not marked handled: " + SafeText.sanitize(error.description), failed: true)]
                }
            case .answerRefund(let uuid, let answer, let reason):
                return withRevalidator({ _ in
                    .refundAnswered(message: "answering needs the App Store Server API key settings", failed: true)
                }) { revalidator in
                    do {
                        let answered = try revalidator.answerRefundRequest(uuid, answer: answer, reason: reason)
                        return .refundAnswered(message: "Apple accepted the answer for \(answered.originalTransactionId ?? uuid): \(answer.summary)",
                                               failed: false)
                    } catch {
                        return .refundAnswered(message: SafeText.sanitize("\(error)"), failed: true)
                    }
                }
            case .extendAll(let product, let days, let code, let reason, let storefronts):
                // Each app that sells the product (only the scoped one, when the desk is
                // scoped: with several apps `:extend all` asks for a scope), in each
                // environment it has it in, signed for that app.
                let scope = app?.bundleId
                return withRevalidator({ _ in .failed("extending needs the App Store Server API key settings") }) { revalidator in
                    do {
                        let targets = try revalidator.massExtensionTargets(productId: product, app: scope)
                        var notices: [String] = []
                        for target in targets {
                            let record = try revalidator.extendForAllActive(productId: product, days: days, reasonCode: code, reason: reason,
                                                                            storefronts: storefronts, environment: target.environment,
                                                                            target: target, wait: 600)
                            let summary = (try? revalidator.summaryNotification(for: record.requestIdentifier)) ?? nil
                            notices.append((targets.count > 1 ? "\(target.label) \(target.environment): " : "") + (record.outcome == "complete"
                                ? "Apple extended \(record.succeeded ?? 0) subscribers of \(product) by \(days) days (\(record.failed ?? 0) failed)"
                                    + (summary.map { "; its SUMMARY notification says \($0.succeeded ?? 0) extended, \($0.failed ?? 0) failed" } ?? "")
                                : "Apple is still extending \(product) after 10 minutes: subdesk extend --status \(record.requestIdentifier)"))
                        }
                        return .notice(notices.joined(separator: "; "))
                    } catch {
                        return .failed(SafeText.sanitize("\(error)"))
                    }
                }
            case .applyTheme(let name):
                let loaded = try themes.load(name)
                theme = loaded.theme
                return [.themeApplied(name: loaded.theme.name, warnings: loaded.warnings.map(\.description))]
            case .loadAudit(let filter):
                return [.auditLoaded(filter: filter, try loadAudit(filter))]
            case .revalidate(let id):
                return startRevalidation(id)
            case .ping:
                return startPing()
            case .extendRenewal(let otid, let days, let code, let reason):
                return withRevalidator({ _ in
                    .appleAnswered(originalTransactionId: otid, message: "extending needs the App Store Server API key settings", failed: true)
                }) { revalidator in
                    do {
                        let record = try revalidator.extendRenewalDate(otid, days: days, reasonCode: code, reason: reason)
                        return .appleAnswered(originalTransactionId: otid,
                                         message: "Apple extended \(otid) by \(days) days" + (record.effective.map { "; it renews \(DateText.minute($0)) UTC" } ?? ""),
                                         failed: false)
                    } catch {
                        return .appleAnswered(originalTransactionId: otid, message: SafeText.sanitize("\(error)"), failed: true)
                    }
                }
            case .linkUser(let otid, let userId, let force, let atApple):
                let linked = try operations.link(userId: userId, to: otid, force: force, now: clock())
                let local = "linked \(otid) to user \(userId)" + (linked.previousUser.map { " (was \($0))" } ?? "")
                guard atApple else { return [.appleAnswered(originalTransactionId: otid, message: local, failed: false)] }
                return withRevalidator({ _ in
                    .appleAnswered(originalTransactionId: otid, message: local + "; setting the token at Apple needs the App Store Server API key settings",
                                   failed: true)
                }) { revalidator in
                    do {
                        let token = try revalidator.setAppAccountTokenAtApple(otid, reason: "linked to user \(userId)")
                        return .appleAnswered(originalTransactionId: otid, message: local + "; Apple has app account token \(token)", failed: false)
                    } catch {
                        return .appleAnswered(originalTransactionId: otid, message: local + "; at Apple: " + SafeText.sanitize("\(error)"), failed: true)
                    }
                }
            case .backfill(let days, let onlyFailures):
                // A resumed run asks the app and environment it recorded; a new one every app's
                // (or the scoped app's) in each of its environments, one after the other.
                let unfinished = days == nil ? try store.backfills.unfinished() : nil
                return withEachAppleTarget({ .failed("backfill: " + $0) }, only: { targets in
                    guard let unfinished else { return .success(targets) }
                    return Revalidator.target(resuming: unfinished, among: targets).map { .success([$0]) }
                        ?? .failure(RevalidationUnavailable(Revalidator.notServed(unfinished) + ": start a new one with :backfill DAYS"))
                }) { revalidator, target, named, last in
                    do {
                        let run = try revalidator.backfill(days: days, onlyFailures: onlyFailures, target: target)
                        return .notice(named + "backfill #\(run.id): \(Backfill.summary(run))"
                                       + (run.new > 0 ? "; :gaps lists what had not arrived" : ""))
                    } catch {
                        return .failed(named + "backfill stopped: " + SafeText.sanitize("\(error)") + "; what was stored stays (:backfill resume)")
                    }
                }
            case .lookUpAtApple(let otid):
                return withRevalidator({ _ in
                    .appleAnswered(originalTransactionId: otid, message: "asking Apple needs the App Store Server API key settings", failed: true)
                }) { revalidator in
                    do {
                        let answer = try revalidator.refundsAndTransactionInfo(otid)
                        let refunds = answer.refunds.map(\.transactionId)
                        return .appleAnswered(originalTransactionId: otid,
                                              message: "Apple: " + (refunds.isEmpty ? "no refunded transactions"
                                                  : "refunded \(refunds.joined(separator: ", "))")
                                                  + "; latest transaction \(answer.transaction.transactionId) stored",
                                              failed: false)
                    } catch {
                        return .appleAnswered(originalTransactionId: otid, message: SafeText.sanitize("\(error)"), failed: true)
                    }
                }
            case .lookUpOrder(let orderId):
                return withRevalidator({ _ in
                    .orderLookedUp(orderId: orderId, originalTransactionId: nil, message: "order look-up needs the App Store Server API key settings")
                }) { revalidator in
                    do {
                        let found = try revalidator.lookUpOrder(orderId)
                        return .orderLookedUp(orderId: orderId, originalTransactionId: found.originalTransactionIds.first,
                                              message: "Apple's answer for order \(orderId) holds no transaction")
                    } catch {
                        return .orderLookedUp(orderId: orderId, originalTransactionId: nil, message: SafeText.sanitize("\(error)"))
                    }
                }
            case .copyToClipboard(let text):
                clipboardOutbox.append(text)
                return []
            case .applyOverride(let request):
                // The screen's clock moves to the override's own instant, or the reload that follows
                // would judge it as of the last tick, before it existed, and not show it in force.
                let now = clock()
                let result = try applyOverride(request, now: now)
                let inForce = try operations.inForce(request.originalTransactionId, now: now)
                return [.tick(now: now), .overrideApplied(request, result, inForce: inForce)]
            }
        } catch let error as StoreError where error.denial != nil {
            // What the server refused, in the command line's words: who, what, and which roles may.
            let write = effect.write
            return [.failed(error.denial!.explain(doing: write?.words ?? "change the store",
                                                  needs: write.map { ($0.privilege, $0.table) }))]
        } catch {
            return [.failed("\(error)")]
        }
    }

    /// Runs `job` on a worker with the session's revalidator, its action taken in on a later
    /// tick; without a revalidator, `unavailable` says why at once.
    func withRevalidator(_ unavailable: (String) -> DashboardAction,
                         _ job: @escaping @Sendable (Revalidator) -> DashboardAction) -> [DashboardAction] {
        switch revalidator {
        case .failure(let problem):
            return [unavailable(problem.description)]
        case .success(let ready):
            background.run(label: workLabel) { job(ready) }
            return []
        }
    }

    /// How long `t` on `:retention` follows Apple's performance test before leaving it PENDING.
    static let performanceTestWait: TimeInterval = 60

    /// Runs `job` on a worker with the retention console of the desk's app in `environment`
    /// (the same `RetentionConsole` as `subdesk retention`, on a store connection of its own);
    /// what it throws comes back through `failure` in the command line's words.
    func withRetentionConsole(_ environment: AppStoreEnvironment,
                              failure: @escaping @Sendable (String) -> DashboardAction = { .retentionConsoleAnswered(message: $0, failed: true) },
                              _ job: @escaping @Sendable (RetentionConsole) throws -> DashboardAction) -> [DashboardAction] {
        let bundleId = app?.bundleId
        return withRevalidator(failure) { revalidator in
            do {
                return try job(try revalidator.retentionConsole(bundleId: bundleId, environment: environment))
            } catch {
                return failure(SafeText.sanitize("\(error)"))
            }
        }
    }

    /// The apps and environments a store-wide action at Apple (`:ping`, `:backfill`) goes
    /// through: every app's, each in each of its environments, or the scoped app's only.
    var appleTargets: @Sendable (Revalidator) -> [Revalidator.AppleTarget] {
        let scope = app
        return { revalidator in Revalidator.AppleTarget.within(scope, revalidator.appleTargets) }
    }

    /// Runs `job` on the worker once for each of the targets `appleTargets` gives (narrowed
    /// by `only`), one after the other, each answer its own message naming its app and
    /// environment (`demo (com.example.demo) Production: `) when several are configured;
    /// `last` is true for the last target's. Without a revalidator, `unavailable` says why.
    func withEachAppleTarget(_ unavailable: (String) -> DashboardAction,
                             only: (([Revalidator.AppleTarget]) -> Result<[Revalidator.AppleTarget], RevalidationUnavailable>)? = nil,
                             _ job: @escaping @Sendable (Revalidator, Revalidator.AppleTarget, String, Bool) -> DashboardAction) -> [DashboardAction] {
        guard case .success(let ready) = revalidator else { return withRevalidator(unavailable) { _ in .notice("") } }
        let named = ready.appleTargets.count > 1
        var targets = appleTargets(ready)
        if let only {
            switch only(targets) {
            case .success(let narrowed): targets = narrowed
            case .failure(let refusal): return [unavailable(refusal.description)]
            }
        }
        guard !targets.isEmpty else { return [unavailable("no configured app is \(state.appName ?? "the scoped app")")] }
        let label = workLabel
        for (index, target) in targets.enumerated() {
            let prefix = named ? "\(target.label) \(target.environment): " : ""
            let last = index == targets.count - 1
            background.run(label: label + (named ? " (\(target.label) \(target.environment))" : "")) { job(ready, target, prefix, last) }
        }
        return []
    }

    /// `:ping` on a worker: a TEST notification can take seconds to come round. Each app
    /// (or the scoped one) is asked in each of its environments, each answer naming its app.
    func startPing() -> [DashboardAction] {
        withEachAppleTarget({ .pinged(message: "ping: " + $0, failed: true) }) { revalidator, target, named, last in
            let message: String, failed: Bool
            do {
                let result = try revalidator.ping(wait: 30, target: target)
                if let arrival = result.arrivalText {
                    (message, failed) = (named + arrival, false)
                } else {
                    (message, failed) = (named + "no TEST notification arrived within 30 s; Apple: \(Ping.describe(result.attempts))", true)
                }
            } catch {
                (message, failed) = ("ping: " + named + SafeText.sanitize("\(error)"), true)
            }
            // The last answer ends the wait the header shows; the others are messages of their own.
            if last { return .pinged(message: message, failed: failed) }
            return failed ? .failed(message) : .notice(message)
        }
    }

    func startRevalidation(_ id: String) -> [DashboardAction] {
        withRevalidator({ .revalidationFailed(originalTransactionId: id, message: $0) }) { revalidator in
            do {
                return .revalidated(try revalidator.revalidate(id))
            } catch {
                return .revalidationFailed(originalTransactionId: id, message: SafeText.sanitize("\(error)"))
            }
        }
    }

    func applyOverride(_ request: OverrideRequest, now: Millis) throws -> Override {
        switch request.kind {
        case .grant(let until):
            return try operations.grant(request.originalTransactionId, until: until, reason: request.reason, now: now)
        case .revoke(let until):
            return try operations.revoke(request.originalTransactionId, until: until, reason: request.reason, now: now)
        case .lift(let overrideId):
            return try operations.lift(overrideId: overrideId, reason: request.reason, now: now)
        }
    }

    /// Newest first. A filter naming a subscriber, subscription or transaction finds every entry
    /// about its subscriptions, however old; any other text matches targets containing it
    /// among the newest entries, so a partial id still finds something.
    func loadAudit(_ filter: String) throws -> [AuditEntry] {
        let text = filter.trimmingCharacters(in: .whitespaces)
        // The app of each entry's target, for the APP column with several apps; the scope's only.
        let readsApp = state.apps.apps.count > 1
        guard !text.isEmpty else { return try store.audit.entries(limit: AuditState.limit, app: app, readsApp: readsApp).reversed() }
        // A failed revalidation is logged under the id as typed, which may name no subscription.
        let targets = ((try? operations.subscriptionIds(text)) ?? []) + [text]
        var entries = try store.audit.entries(targets: targets, limit: AuditState.limit, app: app, readsApp: readsApp)
        let found = Set(entries.map(\.id))
        entries += try store.audit.entries(limit: AuditState.limit, app: app, readsApp: readsApp).filter {
            !found.contains($0.id) && ($0.target?.localizedCaseInsensitiveContains(text) ?? false)
        }
        return Array(entries.sorted { $0.id > $1.id }.prefix(AuditState.limit))
    }

    func loadPage(_ request: SubscriberPageRequest) throws -> SubscriberPage {
        var page = try loadRows(request)
        // Which rows an override decides: the newest in force on each.
        let now = clock()
        for o in try store.overrides.list(originalTransactionIds: page.rows.map(\.state.originalTransactionId))
        where o.isInForce(at: now) && page.overrides[o.originalTransactionId] == nil {
            page.overrides[o.originalTransactionId] = o.kind
        }
        let consent = try consentBadges.marks(among: page.rows.map(\.state.originalTransactionId), store: store)
        page.consentWithdrawn = consent.withdrawn
        page.accessEnded = try store.transactions.accessEnded(of: page.rows.map(\.state))
        return page
    }

    func loadRows(_ request: SubscriberPageRequest) throws -> SubscriberPage {
        var query = request.query
        query.app = app
        let limit = request.limit
        switch request.position {
        case .first:
            let read = try store.subscriptions.pageWithin(query, limit: limit)
            return SubscriberPage(rows: read.rows, reachesStart: true, reachesEnd: read.rows.count < limit, complete: read.complete)
        case .last:
            let read = try store.subscriptions.pageWithin(query, backward: true, limit: limit)
            return SubscriberPage(rows: read.rows, reachesStart: read.rows.count < limit, reachesEnd: true, complete: read.complete)
        case .after(let cursor):
            let read = try store.subscriptions.pageWithin(query, after: cursor, limit: limit)
            return SubscriberPage(rows: read.rows, reachesStart: false, reachesEnd: read.rows.count < limit, complete: read.complete)
        case .before(let cursor):
            let read = try store.subscriptions.pageWithin(query, after: cursor, backward: true, limit: limit)
            return SubscriberPage(rows: read.rows, reachesStart: read.rows.count < limit, reachesEnd: false, complete: read.complete)
        case .around(let cursor):
            let half = max(1, limit / 2)
            let before = try store.subscriptions.pageWithin(query, after: cursor, backward: true, limit: half)
            // With nothing before the cursor the window starts at the top of the list.
            let from = before.rows.last.map { SubscriptionTable.cursor(for: $0, in: query) }
            let rest = try store.subscriptions.pageWithin(query, after: from, limit: limit)
            return SubscriberPage(rows: before.rows + rest.rows, reachesStart: before.rows.count < half,
                                  reachesEnd: rest.rows.count < limit, complete: before.complete && rest.complete)
        }
    }

    func loadDetail(_ id: String) throws -> DetailContent? {
        guard let row = try store.subscriptions.find(originalTransactionId: id) else { return nil }
        let report = try SubscriptionReport.load(store: store, row: row, now: state.now)
        let others = try store.subscriptions.of(subscriberId: row.subscriber.id)
            .map(\.state.originalTransactionId).filter { $0 != id }
        return DetailContent(subscriber: row.subscriber, report: report, otherSubscriptions: others,
                             refundRequests: try store.refundRequests.requests(originalTransactionId: id),
                             deliveries: try store.outbox.deliveries(originalTransactionId: id))
    }

    /// The refund queue with each request's facts and the policy's suggested answer.
    func loadRefunds() throws -> [RefundQueueEntry] {
        let queue = RefundQueue(store: store, operatorName: operatorName)
        return try queue.requests(includeClosed: true, now: state.now, limit: RefundsState.limit, app: app).map { request in
            let facts = try queue.facts(request, now: state.now)
            return RefundQueueEntry(request: request, facts: facts, suggested: refundPolicy.suggestedAnswer(for: facts))
        }
    }

    func payloadLines(kind: TimelineEvent.Kind, reference: String, originalTransactionId: String) throws -> [String] {
        let time = state.time
        if reference.hasPrefix("audit:") {
            // The timeline line shows the outcome; the detail (an error, what Apple sent) is only here.
            let number = Int64(reference.dropFirst("audit:".count))
            guard let entry = try store.audit.entries(targets: [originalTransactionId]).first(where: { $0.id == number }) else {
                return ["audit entry \(reference.dropFirst("audit:".count)) is not stored"]
            }
            var fields = [("operator", entry.operatorName), ("action", entry.action), ("outcome", entry.outcome)]
            if let reason = entry.reason { fields.append(("reason", reason)) }
            if let detail = entry.detail { fields.append(("detail", detail)) }
            // Under the timeline's date column, wrapped so a long error is read whole rather than cut.
            let width = max(20, state.width - 36)
            let indent = String(repeating: " ", count: 10)
            return ["audit entry #\(entry.id)  \(time.format(entry.at, "yyyy-MM-dd HH:mm:ss")) \(time.label)"]
                + fields.flatMap { label, value -> [String] in
                    let wrapped = TextWidth.wrap(SafeText.sanitize(value), toWidth: width)
                    return wrapped.enumerated().map { ($0.offset == 0 ? label.padding(toLength: 10, withPad: " ", startingAt: 0) : indent) + $0.element }
                }
        }
        if kind == .notification {
            guard let stored = try store.notifications.find(uuid: reference) else { return ["notification \(reference) is not stored"] }
            var received = "received \(time.format(stored.receivedDate, "yyyy-MM-dd HH:mm:ss")) \(time.label)"
            if let source = stored.source { received += " from " + SafeText.sanitize(source) }
            return ["notification " + SafeText.sanitize(reference), received]
                + PayloadText.notificationLines(stored.body, time: time)
        }
        guard let transaction = try store.transactions.find(id: reference) else { return ["transaction \(reference) is not stored"] }
        return PayloadText.transactionLines(transaction, time: time)
    }
}

/// Why `r` cannot revalidate in this session, such as an API key setting missing a part;
/// shown when the operator asks, not when the dashboard opens.
public struct RevalidationUnavailable: Error, CustomStringConvertible, Sendable {
    public let description: String
    public init(_ description: String) { self.description = description }
}
