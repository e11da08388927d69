import Foundation
import XCTest
@testable import SubscriptionCore
@testable import SubdeskScenarios
import SubdeskTestKit

/// The daily counts and the cohort tables held, cell for cell, to a second computation
/// written from the README's definitions alone: plain loops over each generated
/// subscription's own purchases, day by day and period by period, sharing nothing with
/// `MetricContributions`, `CohortShare`, `CohortReport` or `DailyCountsReport`.
///
/// The store is built through intake's repair path (each transaction arrives on its own,
/// in shuffled order, and the subscription is derived again each time), so the
/// by-difference aggregates are what is checked, not one fresh computation.
///
/// `SUBDESK_REFERENCE_BREAK=N` turns rule N of the derivation back to how an earlier
/// subdesk counted (1 grace recoveries, 2 comebacks, 3 prorated refunds' periods, 4 a trial
/// paid for after billing retry, 5 family money, 6 upgrades refunded in part, 11 cohorts
/// without the `saved` dimension, 12 no real-time saves); the test must then fail.
final class ReferenceMetricsTests: XCTestCase, RunsOnEveryEngine {
    static let day: Millis = 86_400_000
    static let hour: Millis = 3_600_000
    /// 2026-06-01T00:00Z.
    static let now: Millis = 1_780_272_000_000
    static let subscriptions = 2_400
    static let rates = ExchangeRates(reporting: "USD", rates: ["USD": 1, "EUR": 1.1])
    static var utc: Calendar {
        var c = Calendar(identifier: .gregorian)
        c.timeZone = TimeZone(identifier: "UTC")!
        return c
    }

    // MARK: Histories, as plain facts

    struct Purchase {
        var id: String
        var product: String
        var start: Millis
        var expires: Millis
        var price: Int64
        var trial = false
        /// A pay-as-you-go introductory offer (offerType 1).
        var intro = false
        /// A period bought with a retention offer (offerType 5), taken on the cancellation sheet.
        var retention = false
        /// A period bought with a promotional offer (offerType 2) of this identifier.
        var promo: String?
        var renewal = false
        /// A refund: its date and the share refunded in thousandths of a percent (100000 full).
        var refund: (date: Millis, percentMilli: Int)?
        var familyRevoked: Millis?
    }

    /// A notification the history's store keeps: a renewal that failed (into grace, with the
    /// grace period's end Apple signed, or billing retry without it) or an upgrade.
    struct Note {
        var type: String
        var subtype: String?
        var signed: Millis
        var transactionId: String
        var graceExpires: Millis?
        /// The renewal info it carried: auto-renew on or off, and the product it renews into.
        var autoRenew: Bool?
        var renewalProduct: String?
    }

    /// A real-time retention request serve decided: answered (a kind and its identifier), or not.
    struct Decision {
        var at: Millis
        var kind: String
        var value: String
        var answered = true
    }

    /// The latest renewal info the store keeps.
    struct StoredRenewal {
        var signed: Millis
        var autoRenew: Bool
        var product: String
    }

    struct History {
        var otid: String
        var family: Bool
        var currency: String
        var purchases: [Purchase]
        var notes: [Note] = []
        var decisions: [Decision] = []
        var renewal: StoredRenewal?
    }

    static func months(_ product: String) -> Int { product == "app.yearly" ? 12 : 1 }

    static func adding(months: Int, to t: Millis) -> Millis {
        let date = utc.date(byAdding: .month, value: months, to: Date(timeIntervalSince1970: Double(t) / 1000))!
        return Millis((date.timeIntervalSince1970 * 1000).rounded())
    }

    /// The generator's own reproducible SplitMix64.
    typealias Random = StoreGenerator.Random

    /// Subscriptions with every case the rules are about: trials converting, and paid for
    /// only after billing retry; renewals recovered within grace (renewal date kept) and
    /// after it (date moved); upgrades, their purchases refunded in full or in part; churn
    /// and comebacks; full and prorated refunds; family sharing and its revocation; two
    /// currencies; monthly and yearly.
    static func histories() -> [History] {
        var rng = Random(state: 32)
        var out: [History] = []
        // Counts every paid period made, across histories: what picks retention offers.
        var retentionTick = 0
        for i in 0..<subscriptions {
            let otid = String(5_000_000_000_000_000 + Int64(i) * 100)
            let family = rng.chance(0.08)
            let currency = rng.chance(0.3) ? "EUR" : "USD"
            var product = rng.chance(0.12) ? "app.yearly" : "app.monthly"
            func price(_ product: String) -> Int64 {
                let usd: Int64 = product == "app.yearly" ? 99_990 : product == "app.premium.monthly" ? 14_990 : 9_990
                return currency == "EUR" ? usd + 1_000 : usd
            }
            var n = 0
            var purchases: [Purchase] = []
            var notes: [Note] = []
            func add(_ p: Purchase) { purchases.append(p); n += 1 }
            var t = now - Millis(rng.int(0..<420)) * day - Millis(rng.int(1..<59)) * 60_000 - Millis(rng.int(1..<59)) * 1000
            // Some begin on their month's last day (the 29th to 31st), so that their
            // anniversaries are clamped in shorter months.
            if rng.chance(0.15) {
                let date = Date(timeIntervalSince1970: Double(t) / 1000)
                let last = utc.range(of: .day, in: .month, for: date)!.count
                t += Millis(last - utc.component(.day, from: date)) * day
            }
            if rng.chance(0.2) {
                add(Purchase(id: "\(otid)-\(n)", product: product, start: t, expires: t + 7 * day, price: 0, trial: true))
                switch rng.int(0..<10) {
                case 0..<5: t += 7 * day                                     // converts at the trial's end
                case 5..<8: t += 7 * day + Millis(rng.int(2..<20)) * day + 3_600_000 * 5   // paid after billing retry
                default: t = .max                                            // never paid
                }
            }
            var renewal = !purchases.isEmpty
            var upgrading = false
            // Apple renews on the run's anniversary: each period ends whole calendar months
            // after the run began (31 → 30 → 31), not a month after the period before.
            var anchor: Millis = .min, periods = 0, runEnd: Millis = .min
            while t < now {
                let upgradePurchase = upgrading
                upgrading = false
                if t != runEnd { anchor = t; periods = 0 }
                periods += 1
                var p = Purchase(id: "\(otid)-\(n)", product: product, start: t,
                                 expires: adding(months: months(product) * periods, to: anchor), price: price(product), renewal: renewal)
                runEnd = p.expires
                // Now and then the first period is a month's pay-as-you-go introductory offer.
                if purchases.isEmpty, product == "app.monthly", rng.chance(0.25) {
                    p.intro = true
                    p.price /= 2
                }
                // Now and then a renewal is a retention offer's, one or two periods in a row
                // (chosen without the random numbers, so each history stays as it was).
                retentionTick += 1
                p.retention = renewal && !upgradePurchase && [5, 6, 17].contains(retentionTick % 23)
                // Apple says an upgrade at once.
                if upgradePurchase { notes.append(Note(type: "DID_CHANGE_RENEWAL_PREF", subtype: "UPGRADE", signed: t, transactionId: p.id)) }
                // What happens next: renewed, recovered within grace or after it, upgraded, or ended.
                let fate = rng.int(0..<100)
                var next: Millis = .max
                var nextRenewal = true
                var upgradeAt: Millis?
                switch fate {
                case 0..<68: next = p.expires
                case 68..<74: next = p.expires + Millis(rng.int(1..<5)) * day + Millis(rng.int(1..<600)) * 60_000
                case 74..<79:
                    // Billing retry, recovered weeks later (a new renewal date); now and then
                    // exactly a month after the expiry, so the new date falls on an anniversary.
                    let kind = rng.int(0..<10)
                    switch kind {
                    case 0..<3: next = adding(months: 1, to: p.expires) + Millis(rng.int(1..<50)) * 60_000
                    // Billing retry without grace, recovered within days: what a grace recovery
                    // looks like where a 31-day period is followed by a shorter month.
                    case 3..<6: next = p.expires + Millis(rng.int(1..<5)) * day + Millis(rng.int(1..<600)) * 60_000
                    default: next = p.expires + Millis(rng.int(17..<45)) * day + Millis(rng.int(1..<600)) * 60_000
                    }
                    // The failure: billing retry without grace, or a grace period long over.
                    switch kind >= 3 && kind < 6 ? 0 : rng.int(0..<3) {
                    case 0: notes.append(Note(type: "DID_FAIL_TO_RENEW", subtype: nil, signed: p.expires, transactionId: p.id))
                    case 1: notes.append(Note(type: "DID_FAIL_TO_RENEW", subtype: "GRACE_PERIOD", signed: p.expires, transactionId: p.id,
                                              graceExpires: p.expires + 6 * day))
                    default: break
                    }
                case 79..<84 where product == "app.monthly":
                    upgradeAt = p.start + Millis(rng.int(2..<25)) * day + Millis(rng.int(1..<600)) * 60_000
                default:
                    if rng.chance(0.45) {
                        next = p.expires + Millis(rng.int(3..<130)) * day + Millis(rng.int(1..<600)) * 60_000
                        nextRenewal = false
                    }
                }
                if fate >= 68 && fate < 74 {
                    // Within grace Apple keeps the renewal date; its failure is mostly delivered.
                    if rng.chance(0.6) {
                        notes.append(Note(type: "DID_FAIL_TO_RENEW", subtype: "GRACE_PERIOD", signed: p.expires, transactionId: p.id,
                                          graceExpires: p.expires + 6 * day))
                    }
                    add(p)
                    periods += 1
                    var recovered = Purchase(id: "\(otid)-\(n)", product: product, start: next,
                                             expires: adding(months: months(product) * periods, to: anchor), price: price(product), renewal: true)
                    guard recovered.start < now else { break }
                    t = recovered.expires
                    runEnd = t
                    if !family, rng.chance(0.03) { recovered.refund = (recovered.start + 2 * day, 100_000) }
                    add(recovered)
                    if recovered.refund != nil { break }
                    // What follows renews it (after an upgrade's purchase, too).
                    renewal = true
                    continue
                }
                if let u = upgradeAt, u < now {
                    add(p)
                    product = "app.premium.monthly"
                    t = u
                    renewal = false
                    upgrading = true
                    continue
                }
                // Refunds end the subscription, as they mostly do. An upgrade's purchase is
                // refunded more often, in part more than in full: one refunded in part still
                // replaced the period before, one refunded in full did not; after a refund in
                // part the customer sometimes comes back to the monthly plan, often while the
                // period the upgrade replaced would still have run.
                let refundable = upgradePurchase || renewal || purchases.last?.product == p.product || purchases.isEmpty
                if !family, !p.trial, refundable, rng.chance(upgradePurchase ? 0.3 : 0.07), p.start + 2 * day < now {
                    let full = rng.chance(upgradePurchase ? 0.3 : 0.5)
                    // An upgrade is mostly regretted soon.
                    let span = max(1, min(upgradePurchase ? 12 : .max, Int((min(p.expires, now) - p.start) / day) - 1))
                    let refunded = p.start + Millis(rng.int(1..<(span + 1))) * day + 7 * 60_000
                    p.refund = (refunded, full ? 100_000 : [25_000, 50_000, 75_000][rng.int(0..<3)])
                    next = .max
                    if upgradePurchase, !full, rng.chance(0.7) {
                        next = refunded + Millis(rng.int(1..<8)) * day + Millis(rng.int(1..<600)) * 60_000
                        nextRenewal = false
                        product = "app.monthly"
                    }
                }
                if family, rng.chance(0.04), p.start + day < now {
                    p.familyRevoked = p.start + day
                    next = .max
                }
                add(p)
                t = next
                renewal = nextRenewal
            }
            out.append(History(otid: otid, family: family, currency: currency, purchases: purchases, notes: notes))
        }
        addRealtimeRequests(&out)
        return out
    }

    /// Real-time requests before some periods (without the random numbers, so each history
    /// stays as it was), each shape of evidence in turn: the promotional offer redeemed in the
    /// day after (or another offer, or a day and more after), the plan switched in the day
    /// after (or to another product), auto-renew said on or off after the day (by a
    /// notification or the stored renewal info), turned off in the day, requests repeated
    /// within a day and a later one, not answered, and one before a retention offer's save.
    static func addRealtimeRequests(_ histories: inout [History]) {
        var tick = 0
        for i in histories.indices {
            var h = histories[i]
            for k in h.purchases.indices.dropFirst() {
                let p = h.purchases[k], before = h.purchases[k - 1]
                guard !p.trial else { continue }
                tick += 1
                guard tick % 7 == 0 else { continue }
                var shape = (tick / 7) % 11
                let plain = !p.retention && !p.intro && p.promo == nil
                if shape == 10 && !(p.retention && !before.retention) { shape = 5 }
                if shape <= 2 && !plain { shape = 6 }
                if shape == 5 && h.renewal != nil { shape = 6 }
                let t = p.start - (shape == 2 ? 30 : 5) * hour
                guard t > before.start + hour, p.start + 100 * hour < now else { continue }
                func decide(_ at: Millis, _ kind: String, _ value: String) { h.decisions.append(Decision(at: at, kind: kind, value: value)) }
                func note(_ at: Millis, _ on: Bool?, product: String? = nil, disabled: Bool = false) {
                    h.notes.append(Note(type: disabled ? "DID_CHANGE_RENEWAL_STATUS" : "DID_CHANGE_RENEWAL_PREF", subtype: disabled ? "AUTO_RENEW_DISABLED" : nil,
                                        signed: at, transactionId: before.id, autoRenew: on, renewalProduct: product ?? p.product))
                }
                switch shape {
                case 0, 2:
                    decide(t, "promotional_offer", "stay-\(tick % 3)")
                    h.purchases[k].promo = "stay-\(tick % 3)"
                case 1:
                    decide(t, "promotional_offer", "stay-\(tick % 3)")
                    h.purchases[k].promo = "other"
                case 3:
                    decide(t, "alternate_product", "app.yearly")
                    note(t + 3 * hour, true, product: "app.yearly")
                case 4:
                    decide(t, "alternate_product", "app.yearly")
                    note(t + 3 * hour, true, product: "app.premium.monthly")
                case 5:
                    decide(t, "message", "m1")
                    h.renewal = StoredRenewal(signed: t + 30 * hour, autoRenew: tick % 2 == 0, product: p.product)
                case 6:
                    decide(t, "message", "m1")
                    note(t + 30 * hour, tick % 2 == 0)
                case 7:
                    decide(t, "message", "m1")
                    // Turned off: with the renewal info saying so, or only by the notification's type.
                    note(t + 2 * hour, tick % 2 == 0 ? false : nil, disabled: true)
                    note(t + 40 * hour, true)
                case 8:
                    // Three within a day, then one more than a day after the first.
                    for d in [0, 2, 20, 50] as [Millis] { decide(t + d * hour, "message", "m\(d)") }
                    note(t + 30 * hour, true)
                    note(t + 90 * hour, true)
                case 9:
                    h.decisions.append(Decision(at: t, kind: "message", value: "m1", answered: false))
                    note(t + 30 * hour, true)
                default:
                    decide(t, "message", "m1")
                    note(t + 30 * hour, true)
                }
            }
            histories[i] = h
        }
    }

    /// The README's real-time saves of one history, computed plainly: each answered request,
    /// oldest first, is a save when the history shows the offer redeemed or the plan switched
    /// in the day after it, or auto-renew left on; one a day at most, and not where the period
    /// after it is a retention offer's save.
    static func realtimeSaves(_ h: History) -> [Millis] {
        var infos: [(at: Millis, on: Bool, product: String)] = []
        for n in h.notes { if let on = n.autoRenew { infos.append((n.signed, on, n.renewalProduct ?? "")) } }
        if let r = h.renewal { infos.append((r.signed, r.autoRenew, r.product)) }
        var out: [Millis] = []
        for d in h.decisions.filter(\.answered).sorted(by: { $0.at < $1.at }) {
            let end = d.at + day
            if let last = out.last, d.at < last + day { continue }
            var saved = false
            if d.kind == "promotional_offer" {
                for p in h.purchases where p.start > d.at && p.start <= end && p.promo == d.value { saved = true }
            }
            if d.kind == "alternate_product" {
                for i in infos where i.at > d.at && i.at <= end && i.product == d.value { saved = true }
            }
            var later = false
            for n in h.notes where n.signed > end { later = true }
            if let r = h.renewal, r.signed > end { later = true }
            if !saved && later {
                var on = true
                for i in infos where i.at >= d.at && i.at <= end && !i.on { on = false }
                for n in h.notes where n.signed >= d.at && n.signed <= end && n.subtype == "AUTO_RENEW_DISABLED" { on = false }
                var first: (at: Millis, on: Bool, product: String)?
                for i in infos where i.at > end && (first == nil || i.at < first!.at) { first = i }
                if let first, !first.on { on = false }
                saved = on
            }
            guard saved else { continue }
            // The period after the request.
            var next: Int?
            for (k, p) in h.purchases.enumerated() where p.start > d.at && next == nil { next = k }
            if let k = next, h.purchases[k].retention, k == 0 || !h.purchases[k - 1].retention { continue }
            out.append(d.at)
        }
        return out
    }

    static func records(_ h: History) -> [TransactionRecord] {
        h.purchases.map { p in
            var r = TransactionRecord(transactionId: p.id, originalTransactionId: h.otid, productId: p.product,
                                      subscriptionGroupIdentifier: "21000001", purchaseDate: p.start,
                                      originalPurchaseDate: h.purchases[0].start, expiresDate: p.expires,
                                      offerType: (p.trial || p.intro ? 1 : p.retention ? 5 : p.promo != nil ? 2 : nil).map(OfferType.init(rawValue:)),
                                      offerIdentifier: p.promo,
                                      offerDiscountType: p.trial ? "FREE_TRIAL" : p.intro || p.retention ? "PAY_AS_YOU_GO" : nil,
                                      ownershipType: OwnershipType(rawValue: h.family ? "FAMILY_SHARED" : "PURCHASED"),
                                      transactionReason: TransactionReason(rawValue: p.renewal ? "RENEWAL" : "PURCHASE"), price: p.price, currency: h.currency,
                                      signedDate: p.start, type: "Auto-Renewable Subscription", storefront: "USA")
            if let refund = p.refund {
                r.revocationDate = refund.date
                r.revocationReason = RevocationReason(rawValue: 0)
                r.revocationType = refund.percentMilli == 100_000 ? "REFUND_FULL" : "REFUND_PRORATED"
                r.revocationPercentage = refund.percentMilli == 100_000 ? nil : refund.percentMilli
            }
            if let revoked = p.familyRevoked {
                r.revocationDate = revoked
                r.revocationType = "FAMILY_REVOKE"
            }
            // The store keeps the revocation's type and share in the payload, as intake does.
            if let type = r.revocationType {
                let share = r.revocationPercentage.map { #","revocationPercentage":\#($0)"# } ?? ""
                r.payload = Data(#"{"revocationType":"\#(type)"\#(share)}"#.utf8)
            }
            return r
        }
    }

    // MARK: The README's definitions, computed plainly

    /// A paid period as the README defines access: from its purchase (or the renewal date
    /// a recovery within grace kept) to its expiry, or the refund that ended it, or the
    /// purchase of the upgrade that replaced it.
    struct Access {
        var p: Purchase
        var from: Millis
        var to: Millis
    }

    static func paidAccess(_ h: History) -> [Access] {
        let kept = h.purchases.filter { !$0.trial && !($0.refund?.percentMilli == 100_000) && $0.familyRevoked == nil }
        var out: [Access] = []
        var anchor: Millis = 0
        for (i, p) in kept.enumerated() {
            var to = p.expires
            if let r = p.refund { to = min(to, r.date) }
            // Replaced by a purchase of another product before it expired: an upgrade, though
            // its purchase was refunded in part later (that bought access until the refund).
            if i + 1 < kept.count, kept[i + 1].product != p.product, kept[i + 1].start < p.expires { to = min(to, kept[i + 1].start) }
            // An upgrade Apple announced ends it at the upgrade's purchase, whatever became of
            // that purchase (refunded in full, it is as if never bought, and the period stays ended).
            if let j = h.purchases.firstIndex(where: { $0.id == p.id }), j + 1 < h.purchases.count {
                let u = h.purchases[j + 1]
                if h.notes.contains(where: { $0.subtype == "UPGRADE" && $0.transactionId == u.id }), u.start < p.expires {
                    to = min(to, u.start)
                }
            }
            var from = p.start
            var withinGrace = false
            if let before = out.last, p.renewal, p.start > before.to + hour {
                // Within grace (no failure notification says otherwise): its expiry is the
                // run's anniversary after the previous period's, whole calendar months from
                // the run's first day.
                let previous = before.p, m = months(previous.product)
                let failures = h.notes.filter { $0.type == "DID_FAIL_TO_RENEW" && $0.transactionId == previous.id }
                let graces = failures.compactMap(\.graceExpires).filter { $0 > previous.expires && $0 <= previous.expires + 60 * day }
                if let grace = graces.max() {
                    // A grace period end Apple signed for this gap decides.
                    withinGrace = p.start < grace
                } else if failures.contains(where: { $0.subtype == nil }) {
                    // Billing retry without grace: none.
                    withinGrace = false
                } else {
                    for k in 1...240 where abs(adding(months: m * k, to: anchor) - previous.expires) <= hour {
                        withinGrace = abs(p.expires - adding(months: m * (k + 1), to: anchor)) <= hour
                        break
                    }
                }
                if withinGrace { from = previous.expires }
            }
            // A purchase by the customer, or a renewal after a gap not within grace, begins a
            // new anniversary.
            if out.isEmpty || !p.renewal || (p.start > out.last!.to + hour && !withinGrace) { anchor = from }
            out.append(Access(p: p, from: from, to: to))
        }
        return out
    }

    /// Runs: periods that begin within the hour of the run's end continue it.
    static func runs(_ access: [Access]) -> [[Access]] {
        var runs: [[Access]] = []
        for a in access {
            if let last = runs.last, a.from <= last.map(\.to).max()! + hour { runs[runs.count - 1].append(a) } else { runs.append([a]) }
        }
        return runs
    }

    struct DayRow: Equatable {
        var counts: [String: Int] = [:]
        var money: [String: Int64] = [:]
    }

    /// Day by day (UTC), for one part (family-shared or paid).
    static func referenceDays(_ histories: [History], family: Bool, days: [Millis]) -> [DayRow] {
        var rows = Array(repeating: DayRow(), count: days.count)
        func on(_ t: Millis) -> Int? {
            let i = Int((t - days[0]) / day)
            return t >= days[0] && i < days.count ? i : nil
        }
        for h in histories where h.family == family {
            let access = paidAccess(h)
            let runs = runs(access)
            for (r, run) in runs.enumerated() {
                let end = run.map(\.to).max()!
                if let i = on(run[0].from) {
                    let what = r == 0 ? "newPaid" : run[0].p.renewal ? "recoveries" : "reactivations"
                    rows[i].counts[what, default: 0] += 1
                }
                if let i = on(end) { rows[i].counts["churned", default: 0] += 1 }
                for (k, a) in run.enumerated() where k > 0 {
                    if let i = on(a.from) { rows[i].counts["renewals", default: 0] += 1 }
                    if a.p.product != run[k - 1].p.product, a.p.start < run[k - 1].p.expires, let i = on(a.from) {
                        rows[i].counts["upgrades", default: 0] += 1
                    }
                }
                for (i, d) in days.enumerated() {
                    let dayEnd = d + day
                    if run[0].from < dayEnd && end >= dayEnd { rows[i].counts["activePaid", default: 0] += 1 }
                }
            }
            for (i, d) in days.enumerated() {
                let dayEnd = d + day
                for p in h.purchases where p.trial && p.start < dayEnd && p.expires >= dayEnd { rows[i].counts["activeTrials", default: 0] += 1 }
                // MRR: each paid period's price per month, a family member's none.
                if !family {
                    for a in access where a.from < dayEnd && a.to >= dayEnd {
                        rows[i].money["mrr:" + h.currency, default: 0] += a.p.product == "app.yearly" ? Int64((Double(a.p.price) / 12).rounded()) : a.p.price
                    }
                }
            }
            for (k, p) in h.purchases.enumerated() {
                if p.trial, let i = on(p.start) { rows[i].counts["trialStarts", default: 0] += 1 }
                if !p.trial, k > 0, h.purchases[k - 1].trial, h.purchases[k - 1].expires >= p.start - day,
                   p.refund?.percentMilli != 100_000, p.familyRevoked == nil, let i = on(p.start) {
                    rows[i].counts["trialConversions", default: 0] += 1
                }
                if let revoked = p.familyRevoked, let i = on(revoked) { rows[i].counts["revocations", default: 0] += 1 }
                // Saved: a retention offer's period after one without, on the day it began.
                if p.retention, k == 0 || !h.purchases[k - 1].retention, let i = on(p.start) { rows[i].counts["saved", default: 0] += 1 }
                // Saved in real time: on the day of the request.
                if k == 0 { for t in realtimeSaves(h) { if let i = on(t) { rows[i].counts["saved", default: 0] += 1 } } }
                guard !family, !p.trial else { continue }
                if let i = on(p.start) {
                    rows[i].counts["paidTransactions", default: 0] += 1
                    rows[i].money["revenue:" + h.currency, default: 0] += p.price
                }
                if let r = p.refund, let i = on(r.date) {
                    rows[i].counts["refunds", default: 0] += 1
                    rows[i].counts[r.percentMilli == 100_000 ? "refundsFull" : "refundsProrated", default: 0] += 1
                    rows[i].money["revenue:" + h.currency, default: 0] -= (p.price * Int64(r.percentMilli) + 50_000) / 100_000
                }
            }
        }
        return rows
    }

    static let dayMetrics: [(String, Metric)] = [
        ("activePaid", .activePaid), ("activeTrials", .activeTrials), ("newPaid", .newPaidSubscriptions), ("renewals", .renewals),
        ("reactivations", .reactivations), ("recoveries", .recoveries), ("churned", .churned), ("trialStarts", .trialStarts),
        ("trialConversions", .trialConversions), ("paidTransactions", .paidTransactions), ("refunds", .refunds),
        ("refundsFull", .refundsFull), ("refundsProrated", .refundsProrated), ("revocations", .revocations), ("upgrades", .upgrades),
        ("saved", .saved),
    ]

    /// One cohort member's cells: its cohort, duration, and what it adds at each period.
    struct Member {
        var start: Millis
        var duration: String
        var startOffer: String
        /// `retention` once a period was bought with a retention offer after one without,
        /// `realtime` when a real-time save came before that, else `none`.
        var saved: String
        var retained: Int
        var cameBack: Set<Int> = []
        var money: [Int: [String: Int64]] = [:]
        var refunds: [Int: Int] = [:]
    }

    static func referenceMember(_ h: History) -> Member? {
        let access = paidAccess(h)
        guard let first = access.first else { return nil }
        let runs = runs(access)
        // Retention: the renewals of the first run (an upgrade continues the period it replaced).
        var boundaries = [first.from]
        var periodEnd = first.p.expires
        for a in runs[0].dropFirst() {
            if a.from >= periodEnd - hour { boundaries.append(a.from) }
            periodEnd = a.p.expires
        }
        let retained = boundaries.count - 1
        // Then periods go on from the end of the first run's last period, at the nominal length.
        boundaries.append(max(runs[0].map(\.to).max()!, periodEnd))
        let nominal: Millis = months(first.p.product) == 12 ? 12 * 2_629_800_000 : 2_629_800_000
        func period(_ t: Millis) -> Int {
            if t < boundaries[0] { return 0 }
            var k = 0
            while k + 1 < boundaries.count, boundaries[k + 1] <= t { k += 1 }
            if k == boundaries.count - 1 { k += Int((t - boundaries[k]) / nominal) }
            return k
        }
        func start(of k: Int) -> Millis {
            k < boundaries.count ? boundaries[k] : boundaries[boundaries.count - 1] + Millis(k - boundaries.count + 1) * nominal
        }
        let trialBefore = h.purchases.firstIndex { $0.id == first.p.id }.flatMap { $0 > 0 ? h.purchases[$0 - 1] : nil }
        let offer = trialBefore.map { $0.trial && ($0.expires >= first.p.start - day || first.p.renewal) } == true ? "free_trial"
            : first.p.intro ? "introductory" : "none"
        // Saved: the README's rule over every purchase of the history, whenever it was.
        var saved = "none"
        for (k, p) in h.purchases.enumerated() where p.retention && (k == 0 || !h.purchases[k - 1].retention) {
            saved = "retention"
            if let t = realtimeSaves(h).first, t < p.start { saved = "realtime" }
            break
        }
        if saved == "none", !realtimeSaves(h).isEmpty { saved = "realtime" }
        var m = Member(start: first.from, duration: months(first.p.product) == 12 ? "P1Y" : "P1M", startOffer: offer, saved: saved,
                       retained: retained)
        for run in runs.dropFirst() {
            let end = run.map(\.to).max()!
            // Never as retained: not in the first run's periods, even where it came back before
            // the expiry of a period a refund in part cut short.
            var k = max(retained + 1, period(run[0].from))
            while start(of: k) < end {
                m.cameBack.insert(k)
                k += 1
            }
        }
        if !h.family {
            for p in h.purchases where !p.trial {
                m.money[period(p.start), default: [:]][h.currency, default: 0] += p.price
                if let r = p.refund {
                    m.money[period(r.date), default: [:]][h.currency, default: 0] -= (p.price * Int64(r.percentMilli) + 50_000) / 100_000
                    m.refunds[period(r.date), default: 0] += 1
                }
            }
        }
        return m
    }

    /// The Monday (UTC) of `t`'s week: 1970-01-01 was a Thursday.
    static func weekStart(_ t: Millis) -> Millis {
        let days = t / day
        return (days - (days + 3) % 7) * day
    }

    static func monthStart(_ t: Millis) -> Millis {
        let comps = utc.dateComponents([.year, .month], from: Date(timeIntervalSince1970: Double(t) / 1000))
        return Millis(utc.date(from: comps)!.timeIntervalSince1970 * 1000)
    }

    // MARK: The store, and the comparison

    static func buildStore(_ histories: [History], rules: DerivationRules = .current) throws -> Store {
        let store = try Store.inMemory()
        let intake = TestKit.intake(store, rules: rules)
        var rng = Random(state: 7)
        var arrivals: [(Int, TransactionRecord)] = []
        for (i, h) in histories.enumerated() { for r in records(h) { arrivals.append((i, r)) } }
        for i in stride(from: arrivals.count - 1, to: 0, by: -1) { arrivals.swapAt(i, rng.int(0..<(i + 1))) }
        try store.write {
            // The notifications first: each derivation then sees every one of its history's.
            for h in histories {
                for (k, note) in h.notes.enumerated() {
                    var event = NotificationEvent(
                        notificationUUID: "\(h.otid)-note-\(k)", version: 2, type: NotificationType(rawValue: note.type),
                        subtype: note.subtype.map(NotificationSubtype.init(rawValue:)), signedDate: note.signed,
                        originalTransactionId: h.otid, transactionId: note.transactionId, productId: nil, environment: "Production",
                        graceExpires: note.graceExpires)
                    event.autoRenew = note.autoRenew
                    event.autoRenewProductId = note.renewalProduct
                    let body = Data(#"{"reference":"\#(event.notificationUUID)"}"#.utf8)
                    try store.notifications.insert(StoredNotification(event: event, receivedDate: note.signed,
                                                                    bodySHA256: ContentDigest.sha256Hex(body), body: body, source: "reference",
                                                                    ownership: OwnershipType(rawValue: h.family ? "FAMILY_SHARED" : "PURCHASED"), bundleId: nil))
                }
            }
            for h in histories {
                for (k, d) in h.decisions.enumerated() {
                    let answer: RetentionAnswer = d.kind == "promotional_offer" ? .promotionalOffer(offerId: d.value, messageId: nil)
                        : d.kind == "alternate_product" ? .alternateProduct(productId: d.value, billingPlanType: nil, messageId: nil)
                        : .message(id: d.value)
                    var decision = RetentionDecision(response: RetentionResponse(
                        status: 200, body: "{}", outcome: d.answered ? .answered(rule: "r\(k)", answer: answer) : .fellBack(.noRule, rule: nil)),
                                                     decidedMs: d.at, micros: 900)
                    decision.originalTransactionId = h.otid
                    decision.requestId = "\(h.otid)-request-\(k)"
                    try store.retention.decisions.record(decision)
                }
                if let r = h.renewal {
                    try store.renewals.put(RenewalRecord(originalTransactionId: h.otid, productId: h.purchases.last?.product,
                                                       autoRenewProductId: r.product, autoRenewStatus: r.autoRenew, signedDate: r.signed))
                }
            }
            for (_, r) in arrivals {
                try store.transactions.put(r)
                try intake.rederive(r.originalTransactionId, now: now)
            }
        }
        return store
    }

    func testTheCountsAndCohortsAreTheReadmesDefinitionsComputedPlainly() throws {
        let turnedBack = ProcessInfo.processInfo.environment["SUBDESK_REFERENCE_BREAK"].flatMap(Int.init)
            .flatMap(DerivationRules.Rule.init(rawValue:))
        let histories = Self.histories()
        let store = try Self.buildStore(histories, rules: .turningBack(turnedBack))
        XCTAssertGreaterThanOrEqual(histories.count, 2_000)
        // Every case the rules are about is there, many times over.
        var cases: [String: Int] = [:]
        for h in histories {
            let access = Self.paidAccess(h)
            cases["within grace", default: 0] += access.filter { $0.from != $0.p.start }.count
            let runs = Self.runs(access)
            cases["recovery after grace", default: 0] += runs.dropFirst().filter { $0[0].p.renewal }.count
            cases["comeback", default: 0] += runs.dropFirst().filter { !$0[0].p.renewal }.count
            cases["full refund", default: 0] += h.purchases.filter { $0.refund?.percentMilli == 100_000 }.count
            cases["prorated refund", default: 0] += h.purchases.filter { ($0.refund?.percentMilli ?? 100_000) < 100_000 }.count
            cases["upgrade", default: 0] += h.purchases.filter { $0.product == "app.premium.monthly" && !$0.renewal }.count
            // Upgrades' purchases, each with the period it replaced.
            let upgrades = zip(h.purchases, h.purchases.dropFirst()).filter { before, u in
                u.product == "app.premium.monthly" && before.product == "app.monthly" && u.start < before.expires
            }
            cases["upgrade refunded in full", default: 0] += upgrades.filter { $0.1.refund?.percentMilli == 100_000 }.count
            let partly = upgrades.filter { ($0.1.refund?.percentMilli ?? 100_000) < 100_000 }
            cases["upgrade refunded in part", default: 0] += partly.count
            cases["back before the replaced period's end", default: 0] += partly.filter { before, u in
                h.purchases.contains { $0.start > u.refund!.date && $0.start < before.expires && $0.product == before.product }
            }.count
            cases["family", default: 0] += h.family ? 1 : 0
            cases["EUR", default: 0] += h.currency == "EUR" ? 1 : 0
            if let k = h.purchases.firstIndex(where: { !$0.trial }), k > 0, h.purchases[k - 1].expires < h.purchases[k].start - Self.day {
                cases["trial paid after billing retry", default: 0] += 1
            }
            // The shapes of the gaps' grace and of announced upgrades.
            cases["grace failure delivered", default: 0] += h.notes.filter { $0.subtype == "GRACE_PERIOD" }.count
            cases["billing retry without grace", default: 0] += h.notes.filter { $0.type == "DID_FAIL_TO_RENEW" && $0.subtype == nil }.count
            cases["upgrade announced", default: 0] += h.notes.filter { $0.subtype == "UPGRADE" }.count
            // Saves: a retention offer's run of one period and of two, and one of a family member.
            let saves = zip([nil] + h.purchases.map(\.retention), h.purchases).filter { $0.1.retention && $0.0 != true }.count
            cases["retention offer taken", default: 0] += saves
            cases["retention offer's two periods in a row", default: 0] += zip(h.purchases, h.purchases.dropFirst()).filter { $0.0.retention && $0.1.retention }.count
            cases["retention offer of a family member", default: 0] += h.family ? saves : 0
            // Real-time requests of each kind and shape, and saves of each.
            let realtime = Self.realtimeSaves(h)
            for d in h.decisions {
                let saved = realtime.contains(d.at)
                cases["request \(d.kind)\(d.answered ? "" : " not answered") \(saved ? "saved" : "not saved")", default: 0] += 1
            }
            cases["requests repeated within a day", default: 0] += zip(h.decisions, h.decisions.dropFirst()).filter { $0.1.at - $0.0.at < Self.day }.count
            cases["auto-renew turned off in the day after a request", default: 0] += h.notes.filter { n in
                n.subtype == "AUTO_RENEW_DISABLED" && h.decisions.contains { n.signed >= $0.at && n.signed <= $0.at + Self.day }
            }.count
            cases["stored renewal info after a request", default: 0] += h.renewal == nil ? 0 : 1
            cases["real-time save of a family member", default: 0] += h.family ? realtime.count : 0
            cases["real-time save before a retention offer's, counted once", default: 0] += h.decisions.filter { d in
                guard let k = h.purchases.firstIndex(where: { $0.start > d.at }) else { return false }
                return h.purchases[k].retention && (k == 0 || !h.purchases[k - 1].retention) && d.at > h.purchases[k].start - Self.day
            }.count
            cases["introductory offer, then a grace recovery", default: 0] += zip(access, access.dropFirst())
                .filter { $0.0.p.intro && $0.1.from != $0.1.p.start }.count
            cases["anniversary on the 29th to 31st", default: 0] += access.filter { a in
                let dayOfMonth = Self.utc.component(.day, from: Date(timeIntervalSince1970: Double(a.from) / 1000))
                return dayOfMonth >= 29 && a.from != a.p.start
            }.count
        }
        for (name, n) in cases { XCTAssertGreaterThanOrEqual(n, 20, name) }
        try compareDays(store, histories)
        try compareCohorts(store, histories)
    }

    func compareDays(_ store: Store, _ histories: [History]) throws {
        let days = (0..<430).map { Self.now - Millis(429 - $0) * Self.day }
        let utc = TimeZone(identifier: "UTC")!
        for family in [false, true] {
            let reference = Self.referenceDays(histories, family: family, days: days)
            let report = try DailyCountsReport.compute(store: store, from: DateText.format(days[0], "yyyy-MM-dd", zone: utc),
                                                       to: DateText.format(days[days.count - 1], "yyyy-MM-dd", zone: utc),
                                                       timeZone: utc, segments: family ? [.familyShared] : [.paid], rates: Self.rates)
            XCTAssertEqual(report.count, days.count)
            var wrong: [String: Int] = [:], example: [String: String] = [:]
            func check(_ name: String, _ day: DayCounts, _ got: Int64, _ expected: Int64) {
                guard got != expected else { return }
                wrong[name, default: 0] += 1
                if example[name] == nil { example[name] = "\(day.day): \(got), reference \(expected)" }
            }
            for (i, d) in report.enumerated() {
                for (name, metric) in Self.dayMetrics { check(name, d, Int64(d[metric]), Int64(reference[i].counts[name] ?? 0)) }
                for currency in ["USD", "EUR"] {
                    check("revenue " + currency, d, d.moneyByCurrency[currency]?[.revenue] ?? 0, reference[i].money["revenue:" + currency] ?? 0)
                    check("mrr " + currency, d, d.moneyByCurrency[currency]?[.mrr] ?? 0, reference[i].money["mrr:" + currency] ?? 0)
                }
                let converted = Double(reference[i].money["revenue:USD"] ?? 0) / 1000 + Double(reference[i].money["revenue:EUR"] ?? 0) / 1000 * 1.1
                if abs((d.money[.revenue] ?? 0) - converted) > 1e-6 { check("revenue in USD", d, Int64((d.money[.revenue] ?? 0) * 1000), Int64(converted * 1000)) }
            }
            XCTAssertEqual(wrong, [:], "\(family ? "family shared" : "paid"): days that differ, by metric; first of each: \(example)")
        }
    }

    func compareCohorts(_ store: Store, _ histories: [History]) throws {
        let from = Self.now - 440 * Self.day
        for family in [false, true] {
            let segments: Set<CountSegment> = family ? [.familyShared] : [.paid]
            var members: [String: [Member]] = [:]   // by "month start|duration"
            for h in histories where h.family == family {
                if let m = Self.referenceMember(h) { members["\(Self.monthStart(m.start))|\(m.duration)", default: []].append(m) }
            }
            var wrong: [String: Int] = [:], example: [String: String] = [:]
            func check(_ name: String, _ where_: String, _ got: Double, _ expected: Double) {
                guard abs(got - expected) > 1e-6 else { return }
                wrong[name, default: 0] += 1
                if example[name] == nil { example[name] = "\(where_): \(got), reference \(expected)" }
            }
            /// Retention and LTV by duration, cell for cell, of the members `keep` keeps
            /// (`filters` in the report): `part` names what is compared.
            func compareByDuration(_ part: String, filters: [CohortFilter], keep: (Member) -> Bool) throws {
                let retention = try CohortReport.compute(store: store, metric: .retention, from: from, to: Self.now, filters: filters,
                                                         segments: segments, by: .duration, rates: Self.rates, now: Self.now)
                let ltv = try CohortReport.compute(store: store, metric: .ltv, from: from, to: Self.now, filters: filters,
                                                   segments: segments, by: .duration, rates: Self.rates, now: Self.now)
                let kept = members.mapValues { $0.filter(keep) }.filter { !$0.value.isEmpty }
                XCTAssertEqual(Set(retention.rows.map { "\($0.start)|\($0.value ?? "")" }), Set(kept.keys), "cohorts and durations\(part)")
                for (row, money) in zip(retention.rows, ltv.rows) {
                    let cohort = kept["\(row.start)|\(row.value ?? "")"] ?? []
                    check("size" + part, row.label, Double(row.size), Double(cohort.count))
                    for (k, cell) in row.cells.enumerated() {
                        guard let cell else { continue }
                        let at = "\(row.label) \(row.value ?? "") period \(k)"
                        check("retained" + part, at, Double(cell.count), Double(k == 0 ? cohort.count : cohort.filter { $0.retained >= k }.count))
                        check("came back" + part, at, Double(cell.reactivated), Double(cohort.filter { $0.cameBack.contains(k) }.count))
                        guard k < money.cells.count, let m = money.cells[k] else { continue }
                        var total = 0.0, payers = 0, refunds = 0
                        for member in cohort {
                            var net: [String: Int64] = [:]
                            for (p, byCurrency) in member.money where p <= k { for (c, v) in byCurrency { net[c, default: 0] += v } }
                            let value = net.reduce(0.0) { $0 + Double($1.value) / 1000 * (Self.rates.rates[$1.key] ?? 0) }
                            total += value
                            if value > 1e-9 { payers += 1 }
                            refunds += member.refunds.filter { $0.key <= k }.values.reduce(0, +)
                        }
                        check("LTV" + part, at, m.total ?? 0, total)
                        check("payers" + part, at, Double(m.count), Double(payers))
                        check("refunds" + part, at, Double(m.refunds), Double(refunds))
                    }
                }
            }
            try compareByDuration("", filters: [], keep: { _ in true })
            // Saved by a retention offer: the same cells over those members alone.
            try compareByDuration(" (saved=retention)", filters: [CohortFilter(dimension: .saved, value: "retention")],
                                  keep: { $0.saved == "retention" })
            try compareByDuration(" (saved=realtime)", filters: [CohortFilter(dimension: .saved, value: "realtime")],
                                  keep: { $0.saved == "realtime" })
            /// Each row of a report of mixed durations, month by month, against `cohortOf` its row.
            func compareMixed(_ report: CohortReport, _ part: String, _ cohortOf: (CohortReport.Row) -> [Member]) {
                for row in report.rows {
                    let cohort = cohortOf(row)
                    check("size (mixed)" + part, row.label, Double(row.size), Double(cohort.count))
                    for (k, cell) in row.cells.enumerated() {
                        guard let cell else { continue }
                        let at = "\(row.label) \(row.value ?? "") month \(k)"
                        let periods = cohort.map { ($0, k / (($0.duration == "P1Y") ? 12 : 1)) }
                        check("retained (mixed)" + part, at, Double(cell.count),
                              Double(k == 0 ? cohort.count : periods.filter { $0.1 >= 1 && $0.0.retained >= $0.1 || $0.1 == 0 }.count))
                        check("came back (mixed)" + part, at, Double(cell.reactivated), Double(periods.filter { $0.0.cameBack.contains($0.1) }.count))
                    }
                }
            }
            // Durations mixed: columns are months since the start, each member read at its own
            // period covering the month (a yearly one's period k / 12).
            let mixed = try CohortReport.compute(store: store, metric: .retention, from: from, to: Self.now, segments: segments,
                                                 rates: Self.rates, now: Self.now)
            compareMixed(mixed, "") { row in Array(members.filter { $0.key.hasPrefix("\(row.start)|") }.values.joined()) }
            // Split by how they were saved: each cohort's members saved by a retention offer, and the rest.
            let bySaved = try CohortReport.compute(store: store, metric: .retention, from: from, to: Self.now, segments: segments,
                                                   by: .saved, rates: Self.rates, now: Self.now)
            compareMixed(bySaved, " by saved") { row in
                members.filter { $0.key.hasPrefix("\(row.start)|") }.values.joined().filter { $0.saved == row.value }
            }
            check("cohorts by saved", family ? "family" : "paid", Double(bySaved.rows.count),
                  Double(Set(members.values.joined().map { "\(Self.monthStart($0.start))|\($0.saved)" }).count))
            check("members saved in real time", family ? "family" : "paid", Double(bySaved.rows.filter { $0.value == "realtime" }.reduce(0) { $0 + $1.size }),
                  Double(members.values.joined().filter { $0.saved == "realtime" }.count))
            // ISO week cohorts: the same members and periods, gathered by the week (from Monday, UTC) they began.
            let weeks = try CohortReport.compute(store: store, metric: .retention, period: .week, from: from, to: Self.now,
                                                 segments: segments, by: .duration, rates: Self.rates, now: Self.now)
            for row in weeks.rows {
                let cohort = members.values.joined().filter { Self.weekStart($0.start) == row.start && $0.duration == row.value }
                check("week size", row.label, Double(row.size), Double(cohort.count))
                for (k, cell) in row.cells.enumerated() {
                    guard let cell, k > 0 else { continue }
                    check("week retained", "\(row.label) period \(k)", Double(cell.count), Double(cohort.filter { $0.retained >= k }.count))
                }
            }
            check("week cohorts' members", family ? "family" : "paid", Double(weeks.rows.reduce(0) { $0 + $1.size }),
                  Double(members.values.joined().filter { $0.start >= Self.weekStart(from) }.count))
            for offer in ["free_trial", "none"] {
                let expected = members.values.joined().filter { $0.startOffer == offer }.count
                let got = (try? CohortReport.compute(store: store, metric: .retention, from: from, to: Self.now,
                                                     filters: [CohortFilter(dimension: .start, value: offer)], segments: segments,
                                                     rates: Self.rates, now: Self.now))?.rows.reduce(0) { $0 + $1.size } ?? 0
                check("start=" + offer, family ? "family" : "paid", Double(got), Double(expected))
            }
            XCTAssertEqual(wrong, [:], "\(family ? "family shared" : "paid"): cohort cells that differ, by measure; first of each: \(example)")
        }
    }
}
