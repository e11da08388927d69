import SubscriptionCore
import TerminalUI

/// Something that happened: a key, a resize, the clock, or a load the runtime finished.
public enum DashboardAction: Sendable {
    /// The dashboard opened: load the first screen.
    case start
    case key(Key)
    case resize(width: Int, height: Int)
    case tick(now: Millis)
    /// Another process committed to the store.
    case storeChanged
    /// The store's file was deleted or moved away: what is on screen is what was loaded.
    case storeFileGone(path: String)
    /// The store's file was replaced (another inode at the path) and has been opened again.
    case storeFileReopened(path: String)

    case subscribersLoaded(SubscriberPageRequest, SubscriberPage)
    case statusCountsLoaded([SubscriptionStatus: Int], total: Int)
    case detailLoaded(originalTransactionId: String, DetailContent?)
    case payloadLoaded(originalTransactionId: String, entryKey: String, lines: [String])
    /// `readTo`: the newest intake line the read looked at, which the next poll starts after
    /// even when it was another app's (a scoped feed's read leaves lines out).
    case feedLoaded([IntakeLogEntry], rate: [Int], now: Millis, readTo: Int64 = 0)
    case dailyLoaded(DailyRequest, [DayCounts])
    case quarantineLoaded([QuarantineEntry])
    case gapsLoaded([DeliveryGap])
    case retentionLoaded(RetentionReport)
    /// The store's retention console records of the desk's app in an environment.
    case retentionContentLoaded(AppStoreEnvironment, [RetentionRecord])
    /// Apple's lists of messages and images as a refresh read them (review states noted in the store).
    case retentionRefreshed(AppStoreEnvironment, messages: [RetentionComparison], images: [RetentionComparison])
    /// What a console call at Apple (a delete, a default message) came to.
    case retentionConsoleAnswered(message: String, failed: Bool)
    /// A performance test's result (nil when it could not be run), and what to say.
    case retentionPerformanceTested(requestId: String?, RetentionPerformanceResult?, message: String, failed: Bool)
    /// The on-call signals judged from the store at `now`.
    case healthLoaded([HealthSignal], now: Millis)
    /// The relay's targets as `subdesk forward status` sums them, read at `now`.
    case forwardLoaded([ForwardTargetStatus], now: Millis)
    case cohortsLoaded(CohortsRequest, CohortReport)
    /// The store refused a cohort request (a segment value no cohort has), saying why.
    case cohortsRefused(CohortsRequest, message: String)
    case refundsLoaded([RefundQueueEntry])
    /// Every stored consent withdrawal, handled ones included.
    case consentLoaded([ConsentWithdrawal])
    /// What marking a consent withdrawal handled came to.
    case consentHandled(message: String, failed: Bool)
    /// What sending a refund request's answer came to.
    case refundAnswered(message: String, failed: Bool)
    case themeApplied(name: String, warnings: [String])
    case auditLoaded(filter: String, [AuditEntry])
    /// A background revalidation finished; it arrives whatever screen is shown by then.
    case revalidated(RevalidationResult)
    case revalidationFailed(originalTransactionId: String, message: String)
    /// What a job at Apple about one subscription (an extension, a refund-history look-up)
    /// came to: a message, whether it failed, and the subscription to reload.
    case appleAnswered(originalTransactionId: String, message: String, failed: Bool)
    /// An order id looked up at Apple: the subscription it bought, or why not.
    case orderLookedUp(orderId: String, originalTransactionId: String?, message: String?)
    /// What `:ping` found: a message for the message line, and whether it is bad news.
    case pinged(message: String, failed: Bool)
    /// `Operations` carried out a confirmed override request.
    /// An override placed or lifted, and what is in force afterwards, in words.
    case overrideApplied(OverrideRequest, Override, inForce: String)
    /// A load or command failed; shown as a flash message.
    case failed(String)
    /// Something the operator should know that is not a failure, such as a theme shown in fewer colours.
    case notice(String)
    /// What is still running on workers (each as `DashboardEffect.workDescription` says), oldest first.
    case backgroundWorkChanged([String])
}

/// Work the reducer asks for; the runtime performs it and answers with actions.
public enum DashboardEffect: Equatable, Sendable {
    case loadSubscribers(SubscriberPageRequest)
    case loadStatusCounts
    case loadDetail(originalTransactionId: String)
    /// Decode what a timeline line refers to: a notification body or a transaction.
    case loadPayload(originalTransactionId: String, entryKey: String, kind: TimelineEvent.Kind, reference: String)
    case pollFeed(afterId: Int64)
    case loadDaily(DailyRequest)
    case loadQuarantine
    case loadGaps
    /// Read Apple's retention messaging report as `subdesk retention report` does.
    case loadRetention(RetentionReportQuery, RetentionGrouping)
    /// Read the retention console's records of the desk's app in an environment.
    case loadRetentionContent(AppStoreEnvironment)
    /// Read Apple's message and image lists and note their review states, off the thread that draws.
    case refreshRetention(AppStoreEnvironment)
    /// Delete a message or an image at Apple (confirmed, audited), off the thread that draws.
    case deleteRetentionContent(RetentionRecord.Kind, identifier: String, AppStoreEnvironment)
    /// Make an APPROVED message the default for a product and locale (confirmed, audited).
    case setRetentionDefault(product: String, locale: String, messageId: String, AppStoreEnvironment)
    /// Run Apple's performance test of the sandbox real-time URL (confirmed, audited) and follow it.
    case retentionPerformanceTest(originalTransactionId: String)
    /// Read the store's on-call facts and judge them, as `subdesk check` does.
    case loadHealth
    /// Sum up the relay's outbox per target, as `subdesk forward status` does.
    case loadForward
    /// Compute a cohort report from the store's cohort aggregates, as `subdesk cohorts` does.
    case loadCohorts(CohortsRequest)
    case loadRefunds
    case loadConsent
    /// Mark a consent withdrawal handled through `Operations` (confirmed, audited as `consent_handled`).
    case markConsentHandled(notificationUUID: String, reason: String)
    /// Send Apple the consumption information for a refund request (confirmed), off the thread that draws.
    case answerRefund(notificationUUID: String, answer: ConsumptionAnswer, reason: String?)
    case applyTheme(String)
    /// The newest audit entries, for targets the filter names when it is not empty.
    case loadAudit(filter: String)
    /// Ask Apple about a subscription, off the thread that draws and reads keys.
    case revalidate(originalTransactionId: String)
    case applyOverride(OverrideRequest)
    /// Ask Apple for a TEST notification and wait for it, off the thread that draws.
    case ping
    /// Ask Apple to extend one subscription's renewal date (confirmed), off the thread that draws.
    case extendRenewal(originalTransactionId: String, days: Int, reasonCode: Int, reason: String)
    /// Ask Apple to extend every active subscriber of a product (confirmed) and follow it to completion.
    case extendAll(productId: String, days: Int, reasonCode: Int, reason: String, storefronts: [String])
    /// Link a user id to a subscription's subscriber (confirmed, audited); with `atApple`,
    /// then set the subscriber's app account token on it at Apple, off the thread that draws.
    case linkUser(originalTransactionId: String, userId: String, force: Bool, atApple: Bool)
    /// Backfill the last `days` days from Apple's notification history (nil: resume the
    /// unfinished run), off the thread that draws.
    case backfill(days: Int?, onlyFailures: Bool)
    /// Ask Apple for a subscription's refund history and latest transaction, off the thread that draws.
    case lookUpAtApple(originalTransactionId: String)
    /// Ask Apple which subscription an order id bought (Look Up Order ID), off the thread that draws.
    case lookUpOrder(String)
    /// Text for the terminal's clipboard, which only the terminal backend can reach.
    case copyToClipboard(String)

    /// What this effect is doing while it runs, in words a quit question can use.
    public var workDescription: String {
        switch self {
        case .revalidate(let id): return "revalidating \(id) at Apple"
        case .ping: return "a ping waiting for Apple's TEST notification"
        case .extendRenewal(let id, let days, _, _): return "extending \(id) by \(days) days at Apple"
        case .extendAll(let product, let days, _, _, _): return "extending every subscriber of \(product) by \(days) days at Apple"
        case .answerRefund(let uuid, _, _): return "sending Apple the answer to refund request \(uuid)"
        case .linkUser(let id, let user, _, _): return "linking \(id) to \(user) and setting its token at Apple"
        case .backfill: return "a backfill from Apple's notification history"
        case .lookUpAtApple(let id): return "asking Apple about \(id)"
        case .lookUpOrder(let order): return "looking up order \(order) at Apple"
        case .refreshRetention(let environment): return "reading the retention messages and images at Apple (\(environment))"
        case .deleteRetentionContent(let kind, let id, let environment): return "deleting \(kind.rawValue) \(id) at Apple (\(environment))"
        case .setRetentionDefault(let product, let locale, _, let environment):
            return "setting the default message of \(product) in \(locale) at Apple (\(environment))"
        case .retentionPerformanceTest: return "Apple's retention performance test"
        default: return "work at Apple"
        }
    }
}

/// A page of the subscribers table to load, and where it goes.
public struct SubscriberPageRequest: Equatable, Sendable {
    public enum Position: Equatable, Sendable {
        case first
        /// The last page, read with the query reversed.
        case last
        case after(PageCursor)
        case before(PageCursor)
        /// Rows before and from `cursor`, to refresh the window in place.
        case around(PageCursor)
    }

    public var query: SubscriptionQuery
    public var position: Position
    public var limit: Int
    /// The row to select once loaded, counted in the window as it was when asking (may be past either end).
    public var target: Int?
    /// The subscription to keep selected, when refreshing.
    public var keep: String?

    public init(query: SubscriptionQuery, position: Position, limit: Int, target: Int? = nil, keep: String? = nil) {
        self.query = query
        self.position = position
        self.limit = limit
        self.target = target
        self.keep = keep
    }
}

/// Rows the runtime loaded for a `SubscriberPageRequest`.
public struct SubscriberPage: Sendable {
    public var rows: [SubscriptionRow]
    /// Whether the rows reach the start (or end) of the list; meaningful for the side that was read.
    public var reachesStart: Bool
    public var reachesEnd: Bool
    /// The kind of the override in force, newest first, for rows that have one.
    public var overrides: [String: Override.Kind]
    /// Rows an open consent withdrawal concerns.
    public var consentWithdrawn: Set<String>
    /// When access ended for the revoked rows (their refund), as their detail says.
    public var accessEnded: [String: Millis] = [:]
    /// False when the query's scan limit stopped the read before the page filled: more
    /// matches may lie further down the list.
    public var complete: Bool

    public init(rows: [SubscriptionRow], reachesStart: Bool, reachesEnd: Bool, overrides: [String: Override.Kind] = [:],
                consentWithdrawn: Set<String> = [], complete: Bool = true) {
        self.rows = rows
        self.consentWithdrawn = consentWithdrawn
        self.reachesStart = reachesStart
        self.reachesEnd = reachesEnd
        self.overrides = overrides
        self.complete = complete
    }
}

extension DashboardEffect {
    /// What the effect writes to the store, in the words a refused login is told.
    var write: StoreWrite? {
        switch self {
        case .markConsentHandled: return .consentHandling
        case .answerRefund: return .refundAnswers
        case .revalidate: return .revalidation
        case .applyOverride: return .overrides
        case .ping: return .ping
        case .extendRenewal, .extendAll: return .extension_
        case .linkUser: return .linking
        case .backfill: return .backfill
        case .refreshRetention, .deleteRetentionContent, .setRetentionDefault, .retentionPerformanceTest: return .retentionConsole
        default: return nil
        }
    }
}
