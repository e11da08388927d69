import Foundation
import SubscriptionCore

/// Builds a large, realistic store directly through the Store API, for benchmarks and
/// load tests: about ten transactions per subscription, every status, about 5%
/// family-shared, notifications spread over the past year.
///
/// Generated notifications are not signed and did not pass through intake: their stored
/// bodies are small placeholders saying so (`{"generated":...}`). Nothing generated may
/// be mistaken for Apple's data.
public struct StoreGenerator {
    public var subscribers: Int
    public var seed: UInt64
    public var now: Millis
    /// The apps subscriptions are spread over, in turn (subscriber n is the app n mod count's).
    public var bundleIds: [String]

    public init(subscribers: Int, seed: UInt64 = 42, now: Millis = DateText.nowMillis(),
                bundleIds: [String] = [ScenarioBuilder.demoBundleId]) {
        self.bundleIds = bundleIds.isEmpty ? [ScenarioBuilder.demoBundleId] : bundleIds
        self.subscribers = subscribers
        self.seed = seed
        self.now = now
    }

    /// A small, fast, reproducible generator (SplitMix64): the same sequence for the same seed.
    public struct Random: RandomNumberGenerator {
        var state: UInt64
        public init(state: UInt64) { self.state = state }
        public mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        mutating func int(_ range: Range<Int>) -> Int { range.lowerBound + Int(next() % UInt64(range.count)) }
        mutating func chance(_ p: Double) -> Bool { Double(next() % 1_000_000) / 1_000_000 < p }
    }

    static let day: Millis = 86_400_000

    /// The ids of generated subscriber `i`, for benchmarks that look them up.
    public static func ids(_ i: Int) -> (userId: String, token: String, originalTransactionId: String) {
        let otid = 3_000_000_000_000_000 + Int64(i) * 20
        return ("user-\(i)", "9e000000-0000-4000-8000-" + hex(i, width: 12), String(otid))
    }

    /// `value` in lowercase hex, zero-padded to `width` (what `%0*x` gives, without Foundation's formatter).
    static func hex(_ value: Int, width: Int) -> String {
        let digits = String(value, radix: 16)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }

    public struct Summary: Sendable {
        public var subscribers: Int
        public var transactions: Int
        public var notifications: Int
        public var seconds: Double
    }

    public func generate(into store: Store, progress: ((Int) -> Void)? = nil) throws -> Summary {
        let started = Date()
        var rng = Random(state: seed)
        var transactions = 0, notifications = 0
        try store.upkeep.setBulkLoading(true)
        var loaded = false
        defer { if !loaded { try? store.upkeep.setBulkLoading(false) } }
        // Daily-count deltas are summed in memory for the whole load: a year of hour buckets
        // is a few hundred thousand rows, where writing them per batch would be tens of millions.
        try store.deferMetrics(true)
        var i = 0
        while i < subscribers {
            let end = min(subscribers, i + 5_000)
            try store.write {
                for n in i..<end {
                    let counts = try generateOne(n, into: store, rng: &rng)
                    transactions += counts.0
                    notifications += counts.1
                }
            }
            i = end
            progress?(i)
        }
        try store.write { try store.deferMetrics(false) }
        try store.upkeep.setBulkLoading(false)
        loaded = true
        return Summary(subscribers: subscribers, transactions: transactions, notifications: notifications,
                       seconds: Date().timeIntervalSince(started))
    }

    private func generateOne(_ n: Int, into store: Store, rng: inout Random) throws -> (Int, Int) {
        let ids = Self.ids(n)
        let bundleId = bundleIds[n % bundleIds.count]
        let otid = Int64(ids.originalTransactionId)!
        let family = rng.chance(0.05)
        let yearly = rng.chance(0.15)
        let product = yearly ? "app.yearly" : (rng.chance(0.3) ? "app.premium.monthly" : "app.monthly")
        let period = (yearly ? 365 : 30) * Self.day
        let price: Int64 = yearly ? 99_990 : (product == "app.premium.monthly" ? 14_990 : 9_990)
        // Fates, roughly as a subscription business sees them.
        let fate = rng.int(0..<100)
        let periods = yearly ? rng.int(1..<3) : rng.int(4..<14)
        let trial = rng.chance(0.2)
        var start = now - Millis(periods) * period + Millis(rng.int(0..<Int(period / 60_000))) * 60_000
        if fate >= 60 { start -= Millis(rng.int(5..<90)) * Self.day }   // ended some time ago
        let environment: AppStoreEnvironment = rng.chance(0.02) ? .sandbox : .production
        var records: [TransactionRecord] = []
        var t = start
        for k in 0..<periods {
            let isTrial = trial && k == 0
            let length = isTrial ? 7 * Self.day : period
            records.append(TransactionRecord(
                transactionId: String(otid + Int64(k)), originalTransactionId: ids.originalTransactionId, productId: product,
                subscriptionGroupIdentifier: "21000001", purchaseDate: t, originalPurchaseDate: start, expiresDate: t + length,
                offerType: isTrial ? .introductory : nil, offerDiscountType: isTrial ? "FREE_TRIAL" : nil,
                ownershipType: family ? .familyShared : .purchased, transactionReason: k == 0 ? .purchase : .renewal,
                price: isTrial ? 0 : price, currency: "USD", environment: environment, appAccountToken: ids.token,
                signedDate: t, bundleId: bundleId, type: "Auto-Renewable Subscription"))
            t += length
        }
        let lastEnd = t
        var renewal = RenewalRecord(originalTransactionId: ids.originalTransactionId, productId: product,
                                    autoRenewProductId: product, autoRenewStatus: true, environment: environment,
                                    signedDate: records.last!.signedDate)
        var finalEvent: (String, String?)? = nil
        switch fate {
        case 0..<60:
            break   // active, renewing
        case 60..<75:
            renewal.autoRenewStatus = false; renewal.expirationIntent = 1; finalEvent = ("EXPIRED", "VOLUNTARY")
        case 75..<85:
            renewal.autoRenewStatus = false; renewal.expirationIntent = 2; finalEvent = ("EXPIRED", "BILLING_RETRY")
        case 85..<90:
            renewal.expirationIntent = 2; renewal.isInBillingRetryPeriod = true; finalEvent = ("DID_FAIL_TO_RENEW", nil)
        case 90..<94:
            renewal.expirationIntent = 2; renewal.isInBillingRetryPeriod = true
            renewal.gracePeriodExpiresDate = now + Millis(rng.int(1..<16)) * Self.day; finalEvent = ("DID_FAIL_TO_RENEW", "GRACE_PERIOD")
        case 94..<97:
            renewal.autoRenewStatus = false; renewal.expirationIntent = 3; finalEvent = ("EXPIRED", "PRICE_INCREASE")
        default:
            let refunded = records.count - 1
            records[refunded].revocationDate = records[refunded].purchaseDate + Self.day
            records[refunded].revocationReason = .other
            records[refunded].signedDate += Self.day
            finalEvent = (family ? "REVOKE" : "REFUND", nil)
        }
        if finalEvent != nil, fate < 94 {
            // Subscriptions that lapsed stopped renewing a while ago.
            while records.count > 1, let last = records.last, (last.expiresDate ?? 0) > now { records.removeLast() }
        }
        let eventDate = min(now, max(records.last!.expiresDate ?? lastEnd, records.last!.signedDate))
        renewal.signedDate = max(renewal.signedDate, eventDate)

        var events: [NotificationEvent] = []
        func event(_ type: String, _ subtype: String?, _ date: Millis, _ t: TransactionRecord) {
            events.append(NotificationEvent(
                notificationUUID: "6e" + Self.hex(n >> 24, width: 6) + "-" + Self.hex(events.count, width: 4) + "-4000-8000-"
                    + Self.hex(n & 0xffffff, width: 12), version: 2, type: NotificationType(rawValue: type),
                subtype: subtype.map(NotificationSubtype.init(rawValue:)), signedDate: date, originalTransactionId: ids.originalTransactionId,
                transactionId: t.transactionId, productId: t.productId, environment: environment.rawValue))
        }
        event("SUBSCRIBED", "INITIAL_BUY", records[0].purchaseDate, records[0])
        for r in records.dropFirst().suffix(2) { event("DID_RENEW", nil, r.purchaseDate, r) }
        if let (type, subtype) = finalEvent { event(type, subtype, eventDate, records.last!) }

        let subscriber = try store.subscribers.insert(userId: ids.userId, appAccountToken: ids.token, now: now)
        for r in records { try store.transactions.put(r) }
        try store.renewals.put(renewal)
        for e in events {
            let body = Data(#"{"generated":"subdesk generate","notificationUUID":"\#(e.notificationUUID)"}"#.utf8)
            try store.notifications.insert(StoredNotification(event: e, receivedDate: e.signedDate,
                                                            bodySHA256: ContentDigest.sha256Hex(body), body: body,
                                                            source: "generate",
                                                            ownership: family ? .familyShared : .purchased, bundleId: bundleId))
        }
        if let state = StateDerivation.derive(originalTransactionId: ids.originalTransactionId, transactions: records,
                                              renewal: renewal, events: events, now: now) {
            try store.subscriptions.save(state, subscriberId: subscriber, now: now,
                                metrics: MetricContributions.of(transactions: records, events: events, renewal: renewal))
        }
        return (records.count, events.count)
    }
}
