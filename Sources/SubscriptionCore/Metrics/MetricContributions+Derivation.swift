import Foundation

extension MetricContributions {
    /// The share of a subscription with this history (`renewal`: its latest renewal info;
    /// `realtime`: the real-time retention requests the responder answered for it), its
    /// notifications read through `meanings`, counted by `rules`. Derived part by part
    /// (`Derivation`), each reading what the parts before it found.
    public static func of(transactions: [TransactionRecord], events: [NotificationEvent],
                          renewal: RenewalRecord? = nil, meanings: NotificationMeanings = .standard,
                          realtime: [RealtimeRetentionAnswer] = [], rules: DerivationRules = .current) -> MetricContributions {
        var d = Derivation(transactions: transactions, events: events, renewal: renewal, meanings: meanings, rules: rules)
        d.paidPeriods()
        let saved = d.saves(realtime: realtime)
        d.runsOfPaidAccess()
        d.cohorts(saved: saved)
        d.autoRenewOff()
        d.expiryReasons()
        d.billingPhases()
        return d.c
    }

    /// A subscription's history as `of` reads it, and its share as it is built.
    struct Derivation {
        typealias Paid = (t: TransactionRecord, starts: Millis, ends: Millis, segment: CountSegment, variant: UInt8)
        /// A run of paid access: periods that follow one another, of its latest period's segment and attributes.
        typealias Run = (starts: Millis, ends: Millis, segment: CountSegment, variant: UInt8)

        let ordered: [TransactionRecord]
        /// Each notification with what it means, looked up once.
        let chronological: [(event: NotificationEvent, effect: NotificationMeaning.Effect?)]
        let renewal: RenewalRecord?
        let rules: DerivationRules
        /// Periods an upgrade ended at once, each where it ended: the upgrade's purchase, named
        /// by its notification even where that purchase was refunded in full later.
        let upgradedAt: [String: Millis]
        let superseded: Set<String>
        /// What each gap's grace is known by: the grace period ends Apple signed (kept with each
        /// notification, and the latest renewal info's), and the notifications that put the
        /// subscription into billing trouble (into grace, or billing retry without it).
        let graceEnds: [Millis]
        let troubles: [GapFailure]

        /// The share.
        var c = MetricContributions()
        private var variants: [Attributes: UInt8] = [:]
        private var lastVariant: (t: TransactionRecord, v: UInt8)?
        /// What the cohort share is made of: revenue as it came and went back, refund dates,
        /// the first trial, and trials' conversions.
        var cohortMoney: [CohortShare.MoneyEvent] = [], cohortRefunds: [Millis] = []
        var firstTrial: (t: TransactionRecord, segment: CountSegment, ends: Millis)?
        var conversions: [(trialStart: Millis, at: Millis)] = []
        /// The paid periods that count (not refunded), each with where it ends (`paidPeriods`).
        var paid: [Paid] = []
        var renewedTrials: [Millis] = []
        /// The retention-offer saves, and when the first was.
        var retentionSaves = Set<String>()
        var firstRetentionSave: Millis?
        /// The runs of paid access, and the paid periods in the order they start (`runsOfPaidAccess`).
        var runs: [Run] = []
        var paidByStart: [Paid] = []
        /// The runs that ended with auto-renew off (`autoRenewOff`).
        var offAtEnd = Set<Int>()

        init(transactions: [TransactionRecord], events: [NotificationEvent], renewal: RenewalRecord?,
             meanings: NotificationMeanings, rules: DerivationRules) {
            self.renewal = renewal
            self.rules = rules
            ordered = transactions.sorted(by: StateDerivation.purchaseOrder)
            let chronological = events.sorted(by: NotificationEvent.chronological).map { (event: $0, effect: meanings[$0]?.effect) }
            self.chronological = chronological
            upgradedAt = rules.isTurnedBack(.upgradeRefundedInFull) || rules.isTurnedBack(.upgradeRefundedInPart)
                ? [:] : StateDerivation.upgradeEnds(ordered, upgrades: chronological.filter { $0.effect?.upgradesNow == true }.map(\.event))
            superseded = StateDerivation.supersededByUpgrade(ordered, rules: rules).union(upgradedAt.keys)
            graceEnds = events.compactMap(\.graceExpires) + (renewal?.gracePeriodExpiresDate.map { [$0] } ?? [])
            troubles = chronological.compactMap { e -> GapFailure? in
                guard let billing = e.effect?.billing, billing.isTrouble else { return nil }
                return GapFailure(signedDate: e.event.signedDate, transactionId: e.event.transactionId, grace: billing == .entersGrace)
            }
        }

        /// The attributes' place in the share's table (254 past 255 of them).
        mutating func variant(_ t: TransactionRecord) -> UInt8 {
            // Renewals mostly repeat the transaction before: no strings to hash then.
            if let last = lastVariant, last.t.productId == t.productId, last.t.storefront == t.storefront,
               last.t.offerType == t.offerType, last.t.isFreeTrial == t.isFreeTrial, last.t.billingPlanType == t.billingPlanType,
               last.t.subscriptionGroupIdentifier == t.subscriptionGroupIdentifier, last.t.bundleId == t.bundleId { return last.v }
            let a = Attributes(t)
            let v: UInt8
            if let known = variants[a] {
                v = known
            } else if c.attributes.count < 255 {
                v = UInt8(c.attributes.count)
                c.attributes.append(a)
                variants[a] = v
            } else {
                v = 254
            }
            lastVariant = (t, v)
            return v
        }

        mutating func money(_ t: Millis, _ kind: AmountKind, _ currency: String, _ segment: CountSegment, _ v: UInt8, _ amount: Int64) {
            if kind == .revenue { cohortMoney.append(.init(date: t, currency: currency, amount: amount)) }
            let k = AmountKey(bucket: MetricContributions.bucket(t), kind: kind, currency: currency, segment: segment, variant: v)
            let sum = (c.amounts[k] ?? 0) + amount
            c.amounts[k] = sum == 0 ? nil : sum
        }

        mutating func add(_ t: Millis, _ key: PeriodKey, _ segment: CountSegment, _ v: UInt8, _ n: Int = 1) {
            let k = Key(bucket: MetricContributions.bucket(t), key: key, segment: segment, variant: v)
            let sum = (c.counts[k] ?? 0) + n
            c.counts[k] = sum == 0 ? nil : sum
        }

        mutating func refund(_ date: Millis, full: Bool, shareMilli: Int, _ segment: CountSegment, _ v: UInt8) {
            cohortRefunds.append(date)
            add(date, .refund, segment, v)
            add(date, full ? .refundFull : .refundProrated, segment, v)
            add(date, .refundShare, segment, v, shareMilli)
        }

        /// Each transaction's money, refunds, trial and retention-offer save, and the paid
        /// periods that count, each from where it starts (its kept renewal date when recovered
        /// within grace) to where it ends.
        mutating func paidPeriods() {
            // The day a run's periods renew on: its first period's purchase.
            var anchor: Millis = .min
            var previous: TransactionRecord?
            for (index, t) in ordered.enumerated() {
                defer { previous = t }
                let segment = MetricContributions.segment(environment: t.environment.rawValue, ownership: t.ownershipType)
                let v = variant(t)
                // Saved: a period bought with a retention offer after one bought without (a run
                // of the offer's periods is one save), refunded ones too, in its own segment.
                if t.offerType == .retention, previous?.offerType != t.offerType {
                    add(t.purchaseDate, .saved, segment, v)
                    retentionSaves.insert(t.transactionId)
                    if firstRetentionSave == nil { firstRetentionSave = t.purchaseDate }
                }
                // A family member pays nothing (the purchaser's own transaction is the payment):
                // family-shared access moves no money and is no paid transaction; its revocation
                // is counted as one.
                if t.isFamilyShared && !rules.isTurnedBack(.familyMoney) {
                    if let revoked = t.revocationDate, t.revocationKind != nil { add(revoked, .familyRevoke, segment, v) }
                } else if !t.isFreeTrial {
                    add(t.purchaseDate, .paidTransaction, segment, v)
                    let currency = t.currency.flatMap { MetricContributions.isCurrency($0) ? $0 : nil }
                    if let price = t.price, price > 0, let currency {
                        money(t.purchaseDate, .revenue, currency, segment, v, price)
                    }
                    if !t.advancedCommerceRefunds.isEmpty {
                        // Advanced Commerce refunds item by item, each by its own amount (Apple
                        // sends no revocationType for these): the amounts are what came back.
                        for r in t.advancedCommerceRefunds {
                            let date = r.date ?? t.revocationDate ?? t.purchaseDate
                            let share = (t.price ?? 0) > 0 ? Int(min(1000, r.amount * 1000 / t.price!)) : 1000
                            refund(date, full: r.type == "FULL", shareMilli: share, segment, v)
                            if let currency, r.amount != 0 { money(date, .revenue, currency, segment, v, -r.amount) }
                        }
                    } else if let revoked = t.revocationDate, let kind = t.revocationKind {
                        switch kind {
                        case .familyRevoke: add(revoked, .familyRevoke, segment, v)
                        case .fullRefund: refund(revoked, full: true, shareMilli: 1000, segment, v)
                        case .proratedRefund(let percentMilli): refund(revoked, full: false, shareMilli: percentMilli / 100, segment, v)
                        }
                        if let price = t.price, price > 0, let currency {
                            let back = kind.refunded(of: price)
                            if back != 0 { money(revoked, .revenue, currency, segment, v, -back) }
                        }
                    }
                }
                // A fully refunded or revoked transaction is as if never bought; a prorated refund
                // bought access until the refund.
                guard !t.isVoided, var ends = t.accessEnds else { continue }
                // An upgrade ends the period it replaced at its purchase, though that purchase was
                // refunded in part later (see `StateDerivation.supersededByUpgrade`).
                if let at = upgradedAt[t.transactionId] {
                    ends = min(ends, at)
                } else if superseded.contains(t.transactionId), let next = ordered[(index + 1)...].first(where: { !$0.isVoided }) {
                    ends = min(ends, next.purchaseDate)
                }
                // A trial's start and end make the trial level; paid periods move the paid level
                // through runs (below), so they keep no `start` or `end` entries of their own.
                if t.isFreeTrial {
                    if firstTrial == nil { firstTrial = (t, segment, ends) }
                    add(t.purchaseDate, .trialStart, segment, v)
                    add(ends, .trialEnd, segment, v)
                } else {
                    if let p = previous, p.isFreeTrial, !p.isVoided {
                        if (p.expiresDate ?? 0) >= t.purchaseDate - 86_400_000 {
                            add(t.purchaseDate, .conversion, segment, v)
                            conversions.append((p.purchaseDate, t.purchaseDate))
                            // The cohort is the trial's: its product, storefront and offer.
                            add(p.purchaseDate, .trialConvertedByStart, segment, variant(p))
                        } else if t.isRenewalByApple && !rules.isTurnedBack(.trialAfterRetry) {
                            // Apple billed the trial's renewal once billing retry succeeded: the
                            // subscription started with the trial, though it converted late.
                            renewedTrials.append(t.purchaseDate)
                        }
                    }
                    // A renewal recovered within the billing grace period keeps its renewal date:
                    // its access runs from the end of the period before, so the grace days are paid.
                    var starts = t.purchaseDate
                    if let before = paid.last, t.purchaseDate > before.ends + MetricContributions.contiguity,
                       MetricContributions.recoveredWithinGrace(t, after: before.t, startedAt: before.starts, anchor: anchor,
                                                 graceEnds: graceEnds, failures: troubles, rules: rules),
                       let kept = before.t.expiresDate {
                        starts = min(t.purchaseDate, kept)
                    } else if let before = paid.last, abs(t.purchaseDate - (before.t.expiresDate ?? before.ends)) <= MetricContributions.contiguity {
                        // A renewal on its date: the same anniversary.
                    } else {
                        // The first paid period, one after a gap, or one bought before the period
                        // before ended (an upgrade): a new anniversary.
                        anchor = starts
                    }
                    paid.append((t, starts, ends, segment, v))
                    if !t.isFamilyShared || rules.isTurnedBack(.familyMoney),
                       let price = t.price, price > 0, let currency = t.currency, MetricContributions.isCurrency(currency), let expires = t.expiresDate {
                        // A commitment billed monthly is billed a month at a time, whatever the
                        // length of the commitment.
                        let perMonth = t.billingPlanType == "MONTHLY" ? price : MetricContributions.monthly(price: price, periodMs: expires - starts)
                        money(starts, .mrr, currency, segment, v, perMonth)
                        money(ends, .mrr, currency, segment, v, -perMonth)
                    }
                }
            }
        }

        /// Saves in real time counted on their day, and how the subscription was first saved.
        mutating func saves(realtime: [RealtimeRetentionAnswer]) -> SaveKind {
            // Saved in real time: an answered request the history after it shows was taken or left
            // auto-renew on (`RealtimeSave`), on its day, in the segment of the transaction then.
            let realtimeSaves = rules.isTurnedBack(.realtimeUnsaved) ? []
                : RealtimeSave.saves(realtime, ordered: ordered, retentionSaves: retentionSaves, events: chronological, renewal: renewal)
            for at in realtimeSaves {
                guard let then = ordered.last(where: { $0.purchaseDate <= at }) ?? ordered.first else { break }
                add(at, .saved, MetricContributions.segment(environment: then.environment.rawValue, ownership: then.ownershipType), variant(then))
            }
            // How the subscription was first saved from cancelling (the cohorts' `saved`).
            var firstSave = SaveKind.none
            if firstRetentionSave != nil { firstSave = .retention }
            if let first = realtimeSaves.first, first < (firstRetentionSave ?? .max) { firstSave = .realtime }
            return firstSave
        }

        /// The runs of paid access, and what moves the paid level: new, renewals, reactivations,
        /// recoveries, product changes, churn.
        mutating func runsOfPaidAccess() {
            // Movement: paid periods that follow one another within `contiguity` make one run of
            // paid access. A run starts as the subscription's first (new), or after a gap: bought
            // again (a reactivation) or renewed by Apple once billing succeeded (a recovery). It
            // ends in churn. Periods inside a run are renewals. The active paid level is the runs
            // begun less the runs ended, so it moves by exactly new + reactivations + recoveries
            // - churn, and a subscription renewed a little early still counts once.
            // A run is of its latest period's segment and attributes.
            var run: Run?
            var latest: TransactionRecord?
            paidByStart = paid.sorted(by: { $0.starts < $1.starts })
            for period in paidByStart {
                let start = period.starts
                defer { latest = period.t }
                if let current = run, start <= current.ends + MetricContributions.contiguity {
                    add(start, .renewal, period.segment, period.variant)
                    if let before = latest, before.productId != period.t.productId {
                        add(start, superseded.contains(before.transactionId) ? .productChangeNow : .productChangeAtRenewal,
                            period.segment, period.variant)
                    }
                    if (current.segment, current.variant) != (period.segment, period.variant) {
                        add(start, .paidShift, current.segment, current.variant, -1)
                        add(start, .paidShift, period.segment, period.variant)
                    }
                    run = (current.starts, max(current.ends, period.ends), period.segment, period.variant)
                    continue
                }
                if let ended = run {
                    add(ended.ends, .churn, ended.segment, ended.variant)
                    runs.append(ended)
                    add(start, period.t.isRenewalByApple ? .recovery : .reactivation, period.segment, period.variant)
                } else {
                    add(start, .newPaid, period.segment, period.variant)
                }
                run = (start, period.ends, period.segment, period.variant)
            }
            if let ended = run {
                add(ended.ends, .churn, ended.segment, ended.variant)
                runs.append(ended)
            }
        }

        /// The cohort share, from the paid periods and what `paidPeriods` gathered for it.
        mutating func cohorts(saved: SaveKind) {
            c.cohorts = CohortShare.of(paid: paidByStart.map { ($0.t, $0.starts, $0.ends, $0.segment) },
                                       revenue: cohortMoney, refunds: cohortRefunds, trial: firstTrial, conversions: conversions,
                                       renewedTrials: renewedTrials, saved: saved, rules: rules,
                                       values: { Array(Attributes($0).values.prefix(4)) })
        }

        /// Set to cancel, as a level, and the runs that ended with auto-renew off.
        mutating func autoRenewOff() {
            // Set to cancel: from a notification turning auto-renew off during paid access until
            // one turns it on again, a new purchase, or the end of that access. Renewal info
            // that says auto-renew is off, with no notification saying when, turns it off when
            // that info was signed (so revalidation repairs a missed notification).
            var off: (run: Int, since: Millis)?
            func turnOff(_ t: Millis) {
                guard off == nil, let index = runs.firstIndex(where: { $0.starts <= t && t < $0.ends }) else { return }
                add(t, .autoRenewOffLevel, runs[index].segment, runs[index].variant)
                add(t, .autoRenewDisabled, runs[index].segment, runs[index].variant)
                off = (index, t)
            }
            func turnOn(_ t: Millis, enabled: Bool) {
                guard let o = off else { return }
                if t >= runs[o.run].ends {
                    offAtEnd.insert(o.run)
                } else if enabled {
                    add(t, .autoRenewEnabled, runs[o.run].segment, runs[o.run].variant)
                }
                add(min(t, runs[o.run].ends), .autoRenewOffLevel, runs[o.run].segment, runs[o.run].variant, -1)
                off = nil
            }
            var lastChange: Millis?
            for e in chronological {
                if let o = off, runs[o.run].ends <= e.event.signedDate { turnOn(runs[o.run].ends, enabled: false) }
                switch e.effect?.autoRenew {
                case .disabled:
                    turnOff(e.event.signedDate)
                    lastChange = e.event.signedDate
                case .enabled:
                    turnOn(e.event.signedDate, enabled: true)
                    lastChange = e.event.signedDate
                case .boughtAgain:
                    turnOn(e.event.signedDate, enabled: false)
                case nil:
                    continue
                }
            }
            // For a commitment, the commitment's own renewal status decides (see `willRenew`).
            if let renewal, !renewal.willRenew, off == nil, renewal.signedDate > (lastChange ?? .min) {
                turnOff(renewal.signedDate)
            }
            if let o = off { turnOn(runs[o.run].ends, enabled: false) }
        }

        /// Why each run of paid access ended.
        mutating func expiryReasons() {
            // Why each run of paid access ended: Apple's EXPIRED subtype when it came, else the
            // renewal info's expiration intent for the last run, else what the history shows
            // (auto-renew off at the end: voluntary; a failed renewal: billing).
            for (index, ended) in runs.enumerated() {
                let next = index + 1 < runs.count ? runs[index + 1].starts : Millis.max
                let after = chronological.lazy.filter { $0.event.signedDate >= ended.ends - 86_400_000 && $0.event.signedDate < next }
                var reason: PeriodKey?
                if let expiry = after.lazy.compactMap({ $0.effect?.endsPaidAccess }).first {
                    switch expiry {
                    case .voluntary: reason = .expiredVoluntary
                    case .billing: reason = .expiredBillingRetry
                    case .priceIncrease: reason = .expiredPriceIncrease
                    case .productNotForSale: reason = .expiredProductNotForSale
                    case .unstated: reason = nil
                    }
                }
                if reason == nil, index == runs.count - 1, let intent = renewal?.expirationIntent {
                    reason = [1: .expiredVoluntary, 2: .expiredBillingRetry, 3: .expiredPriceIncrease, 4: .expiredProductNotForSale][intent] ?? .expiredOther
                }
                // A commitment the customer chose not to renew ended as they asked.
                if reason == nil, index == runs.count - 1, renewal?.commitment?.autoRenewStatus == false {
                    reason = .expiredVoluntary
                }
                if reason == nil {
                    if offAtEnd.contains(index) {
                        reason = .expiredVoluntary
                    } else if after.contains(where: { $0.effect?.billing?.isTrouble == true })
                                || (index == runs.count - 1 && renewal?.isInBillingRetryPeriod == true) {
                        reason = .expiredBillingRetry
                    }
                }
                add(ended.ends, reason ?? .expiredOther, ended.segment, ended.variant)
            }
        }

        /// Grace and billing retry as levels, and the failures, entries and recoveries.
        mutating func billingPhases() {
            // Grace and billing retry as levels: +1 on entering a phase, -1 on leaving it.
            let current = ordered.last
            let segment = MetricContributions.segment(environment: current?.environment.rawValue ?? "Production",
                                                      ownership: current?.ownershipType ?? .purchased)
            var currentVariant: UInt8 = 0
            if let current { currentVariant = variant(current) }
            var phase: PeriodKey?
            var phaseSince: Millis = .min, lastPhaseEvent: Millis = .min
            func enter(_ next: PeriodKey?, at t: Millis, renewed: Bool) {
                guard next != phase else { return }
                if phase == nil, next != nil { add(t, .renewalFailure, segment, currentVariant) }
                if next == .graceLevel { add(t, .graceEntry, segment, currentVariant) }
                if phase != nil, next == nil, renewed { add(t, .billingRecovery, segment, currentVariant) }
                if let p = phase { add(t, p, segment, currentVariant, -1) }
                if let n = next { add(t, n, segment, currentVariant) }
                if next != nil && phase == nil { phaseSince = t }
                phase = next
            }
            for e in chronological {
                guard let billing = e.effect?.billing else { continue }
                let next: PeriodKey?
                switch billing {
                case .entersGrace: next = .graceLevel
                case .entersRetry: next = .retryLevel
                case .recovers, .leaves: next = nil
                }
                lastPhaseEvent = e.event.signedDate
                enter(next, at: e.event.signedDate, renewed: billing == .recovers)
            }
            // Renewal info signed after the last notification that moved the phase repairs a
            // missed one: in billing retry (in grace while its grace period lasts), or out of it
            // (a recovery when a paid period began since the trouble did).
            if let renewal, renewal.signedDate > lastPhaseEvent {
                if renewal.isInBillingRetryPeriod, phase == nil {
                    enter((renewal.gracePeriodExpiresDate ?? .min) > renewal.signedDate ? .graceLevel : .retryLevel,
                          at: renewal.signedDate, renewed: false)
                } else if !renewal.isInBillingRetryPeriod, phase != nil {
                    let since = phaseSince
                    enter(nil, at: renewal.signedDate, renewed: ordered.contains { !$0.isFreeTrial && $0.purchaseDate > since })
                }
            }
        }
    }
}
