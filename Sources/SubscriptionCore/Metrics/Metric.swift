import Foundation

/// One metric of the daily counts, declared once (`Metric.churned`, named by its case of
/// `MetricName`, whose order is `Metric.all`'s): its stable name (the JSON key and CSV column
/// scripts read), its label (the screen's row, the README's entry), what it counts, whether it
/// is a level, a flow or a rate, and what it is computed from (other metrics by their
/// declaration, never by name).
/// `DailyCountsReport`, `:daily`, `subdesk counts` (JSON, CSV and the text table) and the
/// README's definitions all read `Metric.all`, so a metric added there appears in each.
public struct Metric: Hashable, Sendable, CustomStringConvertible {
    /// How a value behaves over time.
    public enum Kind: Sendable {
        /// As at the end of the period (active paid, MRR): a longer period takes its last day's.
        case level
        /// Events during the period (renewals, revenue): they add up over days.
        case flow
        /// A share of two counts, taken again from a longer period's sums.
        case rate
    }

    /// Where the value comes from: the subscriptions' shares (`MetricContributions`), summed.
    public indirect enum Source: Sendable {
        /// Keys of the shares added (`plus`) or taken away (`minus`): a level sums every entry
        /// up to the period's end (never below 0), a flow the period's entries.
        case keys(plus: [MetricContributions.PeriodKey], minus: [MetricContributions.PeriodKey])
        /// Other metrics of the table added up.
        case sum([Metric])
        /// A source no greater than another metric's value (set to cancel: within active paid).
        case within(Source, Metric)
        /// One metric less another.
        case remainder(Metric, less: Metric)
        /// A numerator divided by a denominator; undefined where the denominator is 0.
        case ratio(RateTerm, RateTerm)
        /// Money kept by currency (`MetricContributions.AmountKind`), in the reporting currency.
        case money(MetricContributions.AmountKind)

        /// One key of the shares.
        public static func key(_ key: MetricContributions.PeriodKey) -> Source { .keys(plus: [key], minus: []) }
    }

    /// A rate's numerator or denominator.
    public enum RateTerm: Sendable {
        /// A metric of the table, in the period.
        case metric(Metric)
        /// A level metric as at the period's start.
        case atStart(Metric)
        /// The period's entries of one key of the shares.
        case key(MetricContributions.PeriodKey)
        /// Refunds, each weighed by the share refunded (`p:refund_share`, in thousandths of a
        /// refund); a refund counted by an earlier subdesk, which split into neither kind, as a whole one.
        case weighedRefunds
    }

    /// Whether a metric follows each subscription's transactions, or its notifications (the
    /// README lists the two apart).
    public enum Basis: Sendable {
        case transactions, notifications
    }

    /// The name in `counts --json` and `--csv`: scripts depend on it, so never rename one.
    public let key: String
    public let label: String
    public let kind: Kind
    public let source: Source
    public let basis: Basis
    /// The heading of its column in `subdesk counts`' text table; nil leaves it to JSON and CSV.
    public let column: String?
    /// A shorter label where the screen's METRIC column is narrow, or the period longer than a day.
    public let narrowLabel: String?
    /// What the metric counts, as the README and the dashboard's chart say it.
    public let definition: String
    /// The name's hash, taken once: reports key dictionaries by metric for every day.
    private let keyHash: Int

    /// One of the table's metrics, named by its case.
    init(_ name: MetricName, _ label: String, _ kind: Kind, _ source: Source, _ basis: Basis,
         column: String? = nil, narrowLabel: String? = nil, definition: String) {
        self.init(name.rawValue, label, kind, source, basis, column: column, narrowLabel: narrowLabel, definition: definition)
    }

    /// A metric of one's own (a report or a screen may be given any list of metrics).
    public init(_ key: String, _ label: String, _ kind: Kind, _ source: Source, _ basis: Basis,
                column: String? = nil, narrowLabel: String? = nil, definition: String) {
        self.key = key
        self.label = label
        self.kind = kind
        self.source = source
        self.basis = basis
        self.column = column
        self.narrowLabel = narrowLabel
        self.definition = definition
        keyHash = key.hashValue
    }

    public static func == (a: Metric, b: Metric) -> Bool { a.key == b.key }
    public func hash(into hasher: inout Hasher) { hasher.combine(keyHash) }
    public var description: String { key }

    /// Whether the value is a level at the end of the period rather than a count of events.
    public var isEndOfDayLevel: Bool { kind == .level }

    /// Whether the value is money (`money`), in the report's currency.
    public var isMoney: Bool {
        if case .money = source { return true }
        return false
    }

    /// Whether the value is a share of two counts (`rates`), not a count.
    public var isRate: Bool { kind == .rate }

    /// Whether it is derived from the transactions (the rest follow notifications).
    public var isFromTransactions: Bool { basis == .transactions }

    /// Whether a range's total means something: events add up and rates come from the
    /// range's sums, but a level is a moment's, and a rate of a level at the period's start
    /// (the churn rate) is one period's.
    public var hasRangeTotal: Bool {
        if kind == .level { return false }
        if case .ratio(_, .atStart) = source { return false }
        return true
    }

    /// The metrics as the README lists them (`- **label** (`key`): definition.`): those from
    /// the transactions, then those from the notifications, as two lists.
    public static func readmeLists(_ metrics: [Metric] = all) -> [String] {
        [Basis.transactions, .notifications].map { basis in
            metrics.filter { $0.basis == basis }.map { "- **\($0.label)** (`\($0.key)`): \($0.definition)." }.joined(separator: "\n")
        }
    }
}

extension Metric {
    /// Every daily metric, in the order the screen, JSON and CSV give them: `MetricName`'s
    /// cases, each its row below. Code and tests name a metric by that row (`Metric.churned`,
    /// and a source's `.metric(.churned)`), so a misspelt name does not compile.
    public static let all: [Metric] = MetricName.allCases.map(\.metric)
}

/// The daily metrics subdesk declares, in the order the screen, JSON and CSV give them; a
/// case is its metric's stable name (`counts --json`'s key), and `metric` its row, so a name
/// without a row, or a row outside the table, does not compile.
public enum MetricName: String, CaseIterable, Sendable {
    case activePaid
    case activeTrials
    case activeSubscriptions
    case newPaidSubscriptions
    case renewals
    case reactivations
    case recoveries
    case churned
    case churnRate
    case expiredVoluntary
    case expiredBillingRetry
    case expiredPriceIncrease
    case expiredProductNotForSale
    case expiredOther
    case trialStarts
    case trialConversions
    case trialConversionRate
    case paidTransactions
    case refunds
    case refundsFull
    case refundsProrated
    case refundRate
    case mrr
    case revenue
    case revocations
    case upgrades
    case downgrades
    case inGracePeriod
    case inBillingRetry
    case setToRenew
    case setToCancel
    case autoRenewOff
    case autoRenewOn
    case renewalFailures
    case gracePeriodEntries
    case billingRecoveries
    // Added after the rest, so a script that reads the CSV's columns by position keeps them.
    case saved

    /// Its row: the declaration the case names.
    public var metric: Metric {
        switch self {
        case .activePaid: return .activePaid
        case .activeTrials: return .activeTrials
        case .activeSubscriptions: return .activeSubscriptions
        case .newPaidSubscriptions: return .newPaidSubscriptions
        case .renewals: return .renewals
        case .reactivations: return .reactivations
        case .recoveries: return .recoveries
        case .churned: return .churned
        case .churnRate: return .churnRate
        case .expiredVoluntary: return .expiredVoluntary
        case .expiredBillingRetry: return .expiredBillingRetry
        case .expiredPriceIncrease: return .expiredPriceIncrease
        case .expiredProductNotForSale: return .expiredProductNotForSale
        case .expiredOther: return .expiredOther
        case .trialStarts: return .trialStarts
        case .trialConversions: return .trialConversions
        case .trialConversionRate: return .trialConversionRate
        case .paidTransactions: return .paidTransactions
        case .refunds: return .refunds
        case .refundsFull: return .refundsFull
        case .refundsProrated: return .refundsProrated
        case .refundRate: return .refundRate
        case .mrr: return .mrr
        case .revenue: return .revenue
        case .revocations: return .revocations
        case .upgrades: return .upgrades
        case .downgrades: return .downgrades
        case .inGracePeriod: return .inGracePeriod
        case .inBillingRetry: return .inBillingRetry
        case .setToRenew: return .setToRenew
        case .setToCancel: return .setToCancel
        case .autoRenewOff: return .autoRenewOff
        case .autoRenewOn: return .autoRenewOn
        case .renewalFailures: return .renewalFailures
        case .gracePeriodEntries: return .gracePeriodEntries
        case .billingRecoveries: return .billingRecoveries
        case .saved: return .saved
        }
    }
}

extension Metric {
    // From the transactions (and renewal info)
    public static let activePaid = Metric(.activePaid, "active paid", .level, .keys(plus: [.newPaid, .reactivation, .recovery, .paidShift], minus: [.churn]), .transactions, column: "ACTIVE",
        definition: "subscriptions in a paid period at the end of the period: runs of paid periods that follow one another within the hour count once")
    public static let activeTrials = Metric(.activeTrials, "active trials", .level, .keys(plus: [.trialStart], minus: [.trialEnd]), .transactions, column: "TRIALS",
        definition: "subscriptions in a free trial at the end of the period")
    public static let activeSubscriptions = Metric(.activeSubscriptions, "active in all", .level, .sum([.activePaid, .activeTrials]), .transactions,
        definition: "active paid plus active trials at the end of the period")
    public static let newPaidSubscriptions = Metric(.newPaidSubscriptions, "new paid subscriptions", .flow, .key(.newPaid), .transactions, column: "NEW",
        definition: "subscriptions whose first paid period began (a trial that converts counts, on its conversion; a free trial does not)")
    public static let renewals = Metric(.renewals, "renewals", .flow, .key(.renewal), .transactions, column: "RENEW",
        definition: "paid periods that continue the one before within the hour (a renewal recovered within the billing grace period included: it keeps its renewal date)")
    public static let reactivations = Metric(.reactivations, "reactivations", .flow, .key(.reactivation), .transactions, column: "REACT",
        definition: "paid access bought again after a gap (a resubscription, a win-back)")
    public static let recoveries = Metric(.recoveries, "back from billing retry", .flow, .key(.recovery), .transactions, column: "RECOV",
        definition: "paid access Apple renewed after a gap, once billing succeeded in the billing retry period after the grace period (a recovery within grace continues the run: no churn, no recovery)")
    public static let churned = Metric(.churned, "churned", .flow, .key(.churn), .transactions, column: "CHURN",
        definition: "runs of paid access that ended (at the expiry, or the start of an upgrade's replacement) with nothing following within the hour; a renewal arriving later takes it back")
    public static let churnRate = Metric(.churnRate, "churn rate", .rate, .ratio(.metric(.churned), .atStart(.activePaid)), .transactions, column: "CHURN%",
        definition: "churned in the period divided by active paid at its start")
    public static let expiredVoluntary = Metric(.expiredVoluntary, "churned: voluntary", .flow, .key(.expiredVoluntary), .transactions,
        definition: "churned because the customer turned auto-renew off (EXPIRED/VOLUNTARY, expiration intent 1, a commitment set not to renew, or auto-renew off at the end)")
    public static let expiredBillingRetry = Metric(.expiredBillingRetry, "churned: billing", .flow, .key(.expiredBillingRetry), .transactions,
        definition: "churned because billing failed (EXPIRED/BILLING_RETRY, expiration intent 2, or a failed renewal at the end)")
    public static let expiredPriceIncrease = Metric(.expiredPriceIncrease, "churned: price rise", .flow, .key(.expiredPriceIncrease), .transactions,
        definition: "churned because the customer did not consent to a price increase (EXPIRED/PRICE_INCREASE, expiration intent 3)")
    public static let expiredProductNotForSale = Metric(.expiredProductNotForSale, "churned: not for sale", .flow, .key(.expiredProductNotForSale), .transactions,
        definition: "churned because the product was not for sale at renewal (EXPIRED/PRODUCT_NOT_FOR_SALE, expiration intent 4)")
    public static let expiredOther = Metric(.expiredOther, "churned: other", .flow, .key(.expiredOther), .transactions,
        definition: "churned for any other reason or none known (a refund of the last period, an upgrade never renewed, intent 5)")
    public static let trialStarts = Metric(.trialStarts, "trial starts", .flow, .key(.trialStart), .transactions, column: "T-START",
        definition: "free trials that began")
    public static let trialConversions = Metric(.trialConversions, "trial conversions", .flow, .key(.conversion), .transactions,
        definition: "paid periods that began at most a day after a free trial ended, on the day they began")
    public static let trialConversionRate = Metric(.trialConversionRate, "trial conversion (cohort)", .rate, .ratio(.key(.trialConvertedByStart), .metric(.trialStarts)), .transactions, column: "CONV%",
        definition: "of the trials that began in the period, the share that converted (so far)")
    public static let paidTransactions = Metric(.paidTransactions, "paid transactions", .flow, .key(.paidTransaction), .transactions,
        definition: "purchases and renewals of paid periods, refunded ones included (a family-shared transaction is none: the family member paid nothing)")
    public static let refunds = Metric(.refunds, "refunds", .flow, .key(.refund), .transactions, column: "REFUND",
        definition: "purchased transactions refunded, in full or in part, on the refund's date (each Advanced Commerce item refund counts; family-sharing revocations apart)")
    public static let refundsFull = Metric(.refundsFull, "refunds: full", .flow, .key(.refundFull), .transactions,
        definition: "refunds of the whole price (REFUND_FULL, or a revocation that names no type; an Advanced Commerce item refund of type FULL)")
    public static let refundsProrated = Metric(.refundsProrated, "refunds: prorated", .flow, .key(.refundProrated), .transactions,
        definition: "refunds of a share of the price (REFUND_PRORATED with its revocationPercentage; an Advanced Commerce item refund of another type); the customer paid for the period until the refund")
    public static let refundRate = Metric(.refundRate, "refund rate", .rate, .ratio(.weighedRefunds, .metric(.paidTransactions)), .transactions, column: "REFUND%",
        definition: "refunds in the period, each weighed by the share refunded (a full refund 1, half the price 0.5), divided by paid transactions in it")
    public static let mrr = Metric(.mrr, "MRR", .level, .money(.mrr), .transactions, column: "MRR",
        definition: "monthly recurring revenue at the end of the period: each active paid period's price per month (weekly x 52/12, yearly / 12, other lengths pro rata; a commitment billed monthly at its monthly price, one billed up front as its period's price; family-shared access none), in the reporting currency")
    public static let revenue = Metric(.revenue, "revenue", .flow, .money(.revenue), .transactions, column: "REVENUE",
        definition: "prices of paid transactions when bought, less what was refunded when refunded (the whole price, a prorated refund's share rounded to the milliunit, an Advanced Commerce item's refundAmount), in the reporting currency (Apple's prices, before its commission and taxes; family-shared access moves no money)")
    public static let revocations = Metric(.revocations, "revocations", .flow, .key(.familyRevoke), .transactions,
        definition: "family-shared access revoked (the purchaser stopped sharing, or was refunded), on the revocation date")
    public static let upgrades = Metric(.upgrades, "upgrades", .flow, .key(.productChangeNow), .transactions,
        definition: "paid periods of another product that replaced the previous one at once (an upgrade, or a crossgrade of the same duration)")
    public static let downgrades = Metric(.downgrades, "downgrades", .flow, .key(.productChangeAtRenewal), .transactions,
        definition: "paid periods of another product that followed the previous one at a renewal (a downgrade, or a crossgrade of another duration)")

    // From the subscription's notifications (and renewal info)
    public static let inGracePeriod = Metric(.inGracePeriod, "in grace", .level, .key(.graceLevel), .notifications, column: "GRACE",
        definition: "subscriptions in the billing grace period at the end of the period (from DID_FAIL_TO_RENEW/GRACE_PERIOD until the next change)")
    public static let inBillingRetry = Metric(.inBillingRetry, "in billing retry", .level, .key(.retryLevel), .notifications, column: "RETRY", narrowLabel: "billing retry",
        definition: "subscriptions in billing retry at the end of the period (from DID_FAIL_TO_RENEW until the next change)")
    public static let setToRenew = Metric(.setToRenew, "set to renew", .level, .remainder(.activePaid, less: .setToCancel), .notifications,
        definition: "active paid not set to cancel at the end of the period (a subscription in the grace period or billing retry is not active paid while billing has not recovered; once a renewal recovers within grace, its grace days become paid access; see in grace, in billing retry)")
    public static let setToCancel = Metric(.setToCancel, "set to cancel", .level, .within(.key(.autoRenewOffLevel), .activePaid), .notifications,
        definition: "active paid with auto-renew turned off at the end of the period (from DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED, or renewal info saying auto-renew is off, until it is turned on, bought again, or the access ends)")
    public static let autoRenewOff = Metric(.autoRenewOff, "auto-renew off", .flow, .key(.autoRenewDisabled), .notifications,
        definition: "customers turning auto-renew off during paid access (DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED, or renewal info saying so when it came without one)")
    public static let autoRenewOn = Metric(.autoRenewOn, "auto-renew on", .flow, .key(.autoRenewEnabled), .notifications,
        definition: "customers turning auto-renew on again before their paid access ended (DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_ENABLED)")
    public static let renewalFailures = Metric(.renewalFailures, "renewal failures", .flow, .key(.renewalFailure), .notifications,
        definition: "subscriptions entering billing trouble, the grace period or billing retry (DID_FAIL_TO_RENEW, or renewal info saying so when it came without one)")
    public static let gracePeriodEntries = Metric(.gracePeriodEntries, "grace period entries", .flow, .key(.graceEntry), .notifications,
        definition: "subscriptions entering the billing grace period (DID_FAIL_TO_RENEW/GRACE_PERIOD, or renewal info within a grace period)")
    public static let billingRecoveries = Metric(.billingRecoveries, "billing recoveries", .flow, .key(.billingRecovery), .notifications,
        definition: "subscriptions leaving the grace period or billing retry through a renewal (DID_RENEW, DID_RECOVER, or renewal info after a paid period began)")

    // From the transactions, added after the rest (see `all`)
    public static let saved = Metric(.saved, "saved", .flow, .key(.saved), .transactions,
        definition: "subscribers kept from cancelling on the App Store's cancellation sheet (Retention Messaging). A retention offer taken: periods bought with a retention offer (Apple's offerType 5) whose period before was bought without one, on the day they began (a run of the offer's periods counts once; refunded ones too). A real-time save: a request serve's responder answered (outcome answered: a message, an alternate product or a promotional offer) for the subscription at time t, followed in its own history by a transaction bought in (t, t+24 h] with the answered promotional offer (offerType 2, that offerIdentifier), or renewal info signed in (t, t+24 h] renewing into the answered alternate product, or, whatever the answer, auto-renew left on: a notification or renewal info signed after t+24 h, every renewal info signed in [t, t+24 h] and the first after saying auto-renew is on, and no AUTO_RENEW_DISABLED in [t, t+24 h]; on the day of t, in the segment of the transaction then. The store keeps only the latest renewal info, so renewal info is each notification's (taken as signed with it) and the latest stored one. Answered requests of one subscription within 24 h of a counted save count once; a real-time save whose next period is a retention offer's counted save is that save, counted once")
}

extension Metric {
    /// The money a money metric sums.
    var amountKind: MetricContributions.AmountKind? {
        if case .money(let kind) = source { return kind }
        return nil
    }
}
