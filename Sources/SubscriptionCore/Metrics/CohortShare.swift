import Foundation

/// Which cohort a cohort report is of: subscriptions by the start of their first paid
/// period, or free trials by the trial's start.
public enum CohortKind: String, CaseIterable, Sendable {
    case paid, trial

    var code: String { self == .paid ? "p" : "t" }
}

/// What a cohort aggregate cell counts. Stored as one letter in the aggregate's key, so
/// never rename one.
public enum CohortMeasure: String, CaseIterable, Sendable {
    /// The cohort's members, at period 0.
    case members = "n"
    /// In the first run of paid access at period k (k >= 1).
    case retained = "r"
    /// Paying again at period k after the first run ended (a reactivation or a recovery).
    case reactivated = "x"
    /// +1 at the period from which the subscription's cumulative revenue net of refunds is
    /// positive, -1 at one where it no longer is.
    case payers = "p"
    /// Revenue net of refunds (milliunits of the key's currency), at the period it came or
    /// went back in.
    case revenue = "v"
    /// Money refunded (milliunits), at the refund's period.
    case refunded = "b"
    /// Refunds, at the refund's period.
    case refunds = "f"
    /// Trials that converted, at the day since the trial began.
    case conversions = "c"
}

/// Cohorts are gathered by UTC month or ISO week (from Monday, UTC).
public enum CohortPeriod: String, CaseIterable, Sendable {
    case month, week

    var code: String { self == .month ? "m" : "w" }

    /// The start of the month or week `t` falls in, UTC.
    public func start(of t: Millis) -> Millis {
        let day: Millis = 86_400_000
        let days = t >= 0 ? t / day : (t - day + 1) / day
        switch self {
        case .week:
            // 1970-01-01 was a Thursday.
            let sinceMonday = ((days + 3) % 7 + 7) % 7
            return (days - sinceMonday) * day
        case .month:
            let (y, m, _) = CohortCalendar.civil(days)
            return CohortCalendar.days(y, m, 1) * day
        }
    }

    /// The start of the next month or week after the one starting at `start`.
    public func next(_ start: Millis) -> Millis {
        switch self {
        case .week: return start + 7 * 86_400_000
        case .month:
            let (y, m, _) = CohortCalendar.civil(start / 86_400_000)
            return CohortCalendar.days(m == 12 ? y + 1 : y, m == 12 ? 1 : m + 1, 1) * 86_400_000
        }
    }

    /// `2026-03` or `2026-W11` (ISO week numbering).
    public func label(_ start: Millis) -> String {
        let days = start / 86_400_000
        let (y, m, _) = CohortCalendar.civil(days)
        switch self {
        case .month: return String(format: "%04d-%02d", y, m)
        case .week:
            // The ISO week-year is the year of the week's Thursday.
            let (ty, _, _) = CohortCalendar.civil(days + 3)
            let week = (days + 3 - CohortCalendar.days(ty, 1, 1)) / 7 + 1
            return String(format: "%04d-W%02d", ty, week)
        }
    }

    /// The years a cohort bound may name: four digits, from the UNIX epoch on.
    public static let years: ClosedRange<Int64> = 1970...9999

    /// Reads `2026-03` (month) or `2026-W11` / a day `2026-03-09` (week, the week holding it).
    /// The year is four digits within `years`, each other part at most two: a sign, a
    /// longer number or an empty part is no date.
    public func parse(_ text: String) -> Millis? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false).map(String.init)
        func digits(_ s: Substring, _ counts: ClosedRange<Int>) -> Int64? {
            guard counts.contains(s.count), s.allSatisfy({ ("0"..."9").contains($0) }) else { return nil }
            return Int64(s)
        }
        guard parts.count >= 2, parts.count <= 3, let y = digits(Substring(parts[0]), 4...4), Self.years.contains(y) else { return nil }
        if self == .week, parts.count == 2, parts[1].hasPrefix("W"), let w = digits(parts[1].dropFirst(), 1...2),
           (1...53).contains(w) {
            let fourth = CohortCalendar.days(y, 1, 4) * 86_400_000
            return start(of: fourth) + (w - 1) * 7 * 86_400_000
        }
        guard let m = digits(Substring(parts[1]), 1...2), (1...12).contains(m) else { return nil }
        let d = parts.count == 3 ? digits(Substring(parts[2]), 1...2) ?? 0 : 1
        guard (1...31).contains(d) else { return nil }
        return start(of: CohortCalendar.days(y, m, d) * 86_400_000)
    }
}

/// Civil dates from days since 1970 and back (proleptic Gregorian, UTC), without a Calendar.
enum CohortCalendar {
    static func days(_ y0: Int64, _ m: Int64, _ d: Int64) -> Int64 {
        let y = m <= 2 ? y0 - 1 : y0
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    static func civil(_ z0: Int64) -> (Int64, Int64, Int64) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }
}

/// A subscription's place in the cohort reports: the cohort it belongs to (by its first
/// paid period, and by its first free trial) and what it adds to each period of it.
/// Computed with the rest of its share of the counts (`MetricContributions.of`), from the
/// same transactions, and moved in the aggregates by difference like the rest.
public struct CohortShare: Equatable, Sendable {
    /// What puts a subscription in a cohort: its start (the first paid period's purchase,
    /// or the trial's), its segment, and the values it is reported by.
    public struct Membership: Hashable, Sendable {
        public var kind: CohortKind
        public var start: Millis
        public var segment: CountSegment
        /// Product, subscription group, storefront, offer type, starting offer, duration, app,
        /// first save (in `CohortDimension.allCases` order).
        public var values: [String]
    }

    public struct Entry: Hashable, Sendable {
        public var measure: CohortMeasure
        public var period: Int
        /// ISO 4217 for money, empty for counts.
        public var currency: String
    }

    public var memberships: [Membership] = []
    /// Entries by membership (same index).
    public var entries: [[Entry: Int64]] = []

    public init() {}

    public var isEmpty: Bool { memberships.isEmpty }

    // MARK: Computing it

    /// Money and refunds as `MetricContributions.of` dates them.
    struct MoneyEvent { var date: Millis; var currency: String; var amount: Int64 }

    /// A nominal length for a period of `ms`, and its ISO name: weekly, monthly, two-,
    /// three-, six-monthly and yearly as Apple sells them, else a number of days.
    static func duration(_ ms: Millis) -> (name: String, nominal: Millis, months: Double) {
        let days = Double(ms) / 86_400_000
        switch days {
        case 6.5...7.5: return ("P1W", 7 * 86_400_000, 12.0 / 52)
        case 27.5...31.5: return ("P1M", 2_629_800_000, 1)
        case 58...62.5: return ("P2M", 2 * 2_629_800_000, 2)
        case 88...92.5: return ("P3M", 3 * 2_629_800_000, 3)
        case 180...184.5: return ("P6M", 6 * 2_629_800_000, 6)
        case 364...366.5: return ("P1Y", 12 * 2_629_800_000, 12)
        default:
            let whole = max(1, Int64(days.rounded()))
            return ("P\(whole)D", whole * 86_400_000, Double(whole) / 30.4375)
        }
    }

    /// Months in one period of a duration named as `duration` names them.
    public static func months(inDuration name: String) -> Double {
        switch name {
        case "P1W": return 12.0 / 52
        case "P1M": return 1
        case "P2M": return 2
        case "P3M": return 3
        case "P6M": return 6
        case "P1Y": return 12
        default:
            if name.hasPrefix("P"), name.hasSuffix("D"), let days = Double(name.dropFirst().dropLast()) { return days / 30.4375 }
            return 1
        }
    }

    /// The share of a subscription whose paid periods that count (not refunded in full or
    /// revoked) are `paid`, in purchase order, with its money (`revenue`: prices when bought,
    /// negative amounts when refunded) and refund dates, and its trials and conversions.
    /// `renewedTrials`: purchases of paid periods that renewed a free trial after billing
    /// retry (not conversions, too late, but the subscription started with the trial).
    /// A period `starts` at its purchase, or where a recovery within grace kept it. `saved`:
    /// how the subscription was first saved from cancelling, anywhere in its history.
    static func of(paid: [(t: TransactionRecord, starts: Millis, ends: Millis, segment: CountSegment)],
                   revenue: [MoneyEvent], refunds: [Millis],
                   trial: (t: TransactionRecord, segment: CountSegment, ends: Millis)?, conversions: [(trialStart: Millis, at: Millis)],
                   renewedTrials: [Millis] = [], saved: SaveKind = .none, rules: DerivationRules = .current,
                   values: (TransactionRecord) -> [String]) -> CohortShare {
        var share = CohortShare()
        // Shares as subdesk wrote them before cohorts were split by how they were saved.
        let savedValues = rules.isTurnedBack(.cohortsUnsaved) ? [] : [saved.rawValue]
        if let trial {
            var entries: [Entry: Int64] = [Entry(measure: .members, period: 0, currency: ""): 1]
            if let c = conversions.first(where: { $0.trialStart == trial.t.purchaseDate }) {
                entries[Entry(measure: .conversions, period: Int(max(0, (c.at - c.trialStart) / 86_400_000)), currency: "")] = 1
            }
            let d = duration(trial.ends - trial.t.purchaseDate)
            share.memberships.append(Membership(kind: .trial, start: trial.t.purchaseDate, segment: trial.segment,
                                                values: values(trial.t) + ["free_trial", d.name, trial.t.bundleId ?? "unknown"] + savedValues))
            share.entries.append(entries)
        }
        guard let first = paid.first else { return share }
        let start = first.t.purchaseDate
        // The duration is the product's: the first period bought at the regular price, when
        // an introductory offer came first, from its start.
        var regular = first
        // The first run: periods that follow one another within the hour. A period that
        // begins as the one before it ends is the next renewal; one that replaces it before
        // its end (an upgrade) continues the same period.
        var boundaries: [Millis] = [start]
        // A period's own end is its expiry, even where an upgrade cut its access short.
        var periodEnd = first.t.expiresDate ?? first.ends, runEnd = first.ends
        var index = 1
        while index < paid.count, paid[index].starts <= runEnd + MetricContributions.contiguity {
            let p = paid[index]
            if p.starts >= periodEnd - MetricContributions.contiguity { boundaries.append(p.starts) }
            if regular.t.offerType != nil, p.t.offerType == nil { regular = p }
            periodEnd = p.t.expiresDate ?? p.ends
            runEnd = max(runEnd, p.ends)
            index += 1
        }
        // A period recovered within grace counts from its kept renewal date, not its purchase.
        let regularStart = rules.isTurnedBack(.recoveryDuration) ? regular.t.purchaseDate : regular.starts
        let d = duration((regular.t.expiresDate ?? regular.ends) - regularStart)
        // After the first run, periods go on from the end of its last period at the duration's
        // nominal length: from its expiry, even where a prorated refund ended access sooner
        // (the refund then falls in the period it cut short).
        let lastPeriodEnd = rules.isTurnedBack(.proratedRefundPeriod) ? runEnd : max(runEnd, periodEnd)
        boundaries.append(max(lastPeriodEnd, boundaries[boundaries.count - 1] + 1))
        let last = boundaries.count - 1
        func period(_ t: Millis) -> Int {
            if t < start { return 0 }
            if t >= boundaries[last] { return last + Int(min(10_000, (t - boundaries[last]) / d.nominal)) }
            var lo = 0, hi = last
            while lo < hi {
                let mid = (lo + hi + 1) / 2
                if boundaries[mid] <= t { lo = mid } else { hi = mid - 1 }
            }
            return lo
        }
        func boundary(_ k: Int) -> Millis { k <= last ? boundaries[k] : boundaries[last] + Millis(k - last) * d.nominal }
        var entries: [Entry: Int64] = [Entry(measure: .members, period: 0, currency: ""): 1]
        for k in stride(from: 1, to: last, by: 1) { entries[Entry(measure: .retained, period: k, currency: "")] = 1 }
        // Later runs: paying again, in each period a later run's access overlaps (periods
        // are half-open: access from a boundary on is in the period that begins there).
        while index < paid.count {
            let runStart = paid[index].starts
            var ends = paid[index].ends, latest = runStart
            index += 1
            while index < paid.count, paid[index].starts <= ends + MetricContributions.contiguity {
                ends = max(ends, paid[index].ends)
                latest = paid[index].starts
                index += 1
            }
            // Never as retained: from the period after the first run's last, even where the
            // customer came back before the expiry of a period a prorated refund cut short.
            var k = max(last, period(runStart))
            let through = rules.isTurnedBack(.comebackPeriods) ? max(period(latest), period(runStart)) : last + 10_000
            while k <= through, boundary(k) < ends {
                entries[Entry(measure: .reactivated, period: k, currency: "")] = 1
                k += 1
            }
        }
        var net: [Int: Int64] = [:]
        for m in revenue where m.amount != 0 {
            let k = period(m.date)
            entries[Entry(measure: .revenue, period: k, currency: m.currency), default: 0] += m.amount
            if m.amount < 0 { entries[Entry(measure: .refunded, period: k, currency: m.currency), default: 0] -= m.amount }
            net[k, default: 0] += m.amount
        }
        for r in refunds { entries[Entry(measure: .refunds, period: period(r), currency: ""), default: 0] += 1 }
        var cumulative: Int64 = 0, paying = false
        for k in net.keys.sorted() {
            cumulative += net[k]!
            if (cumulative > 0) != paying {
                paying.toggle()
                entries[Entry(measure: .payers, period: k, currency: "")] = paying ? 1 : -1
            }
        }
        let converted = conversions.contains { $0.at == start } || renewedTrials.contains(start)
        let startOffer = converted ? "free_trial" : first.t.isIntroductoryOffer ? "introductory" : "none"
        share.memberships.insert(Membership(kind: .paid, start: start, segment: first.segment,
                                            values: values(first.t) + [startOffer, d.name, first.t.bundleId ?? "unknown"] + savedValues), at: 0)
        share.entries.insert(entries.filter { $0.value != 0 }, at: 0)
        return share
    }

    // MARK: The aggregates

    /// The aggregate key of one entry of one membership, for cohorts by `period`:
    /// `c:m:p:r:3:` then the currency and the membership's values, separated by U+001F.
    private static func key(prefix: String, _ e: Entry, values: String) -> String {
        var key = prefix
        key.reserveCapacity(prefix.utf8.count + values.utf8.count + 12)
        key += e.measure.rawValue
        key += ":"
        key += String(e.period)
        key += ":"
        key += e.currency
        key += values
        return key
    }

    /// The first and last-plus-one keys of every aggregate of `kind` by `period`.
    static func keyRange(_ kind: CohortKind, _ period: CohortPeriod) -> (String, String) {
        ("c:\(period.code):\(kind.code):", "c:\(period.code):\(kind.code);")
    }

    /// What must be added to the aggregates to go from `old` to `self`: (bucket, key,
    /// segment, delta). Keys are built only for entries that changed (a renewal changes
    /// one or two).
    func difference(from old: CohortShare, _ each: (Millis, String, CountSegment, Int) throws -> Void) rethrows {
        if self == old { return }
        var built: (m: Membership, values: String, buckets: [Millis], prefixes: [String])?
        func emit(_ m: Membership, _ e: Entry, _ delta: Int64) throws {
            if built?.m != m {
                built = (m, "\u{1F}" + m.values.joined(separator: "\u{1F}"), CohortPeriod.allCases.map { $0.start(of: m.start) },
                         CohortPeriod.allCases.map { "c:" + $0.code + ":" + m.kind.code + ":" })
            }
            let b = built!
            for i in b.buckets.indices { try each(b.buckets[i], Self.key(prefix: b.prefixes[i], e, values: b.values), m.segment, Int(delta)) }
        }
        var matched = Set<Int>()
        for (i, m) in memberships.enumerated() {
            if let j = old.memberships.firstIndex(of: m) {
                matched.insert(j)
                let before = old.entries[j], now = entries[i]
                for (e, v) in now where before[e] != v { try emit(m, e, v - (before[e] ?? 0)) }
                for (e, v) in before where now[e] == nil { try emit(m, e, -v) }
            } else {
                for (e, v) in entries[i] { try emit(m, e, v) }
            }
        }
        for (j, m) in old.memberships.enumerated() where !matched.contains(j) {
            for (e, v) in old.entries[j] { try emit(m, e, -v) }
        }
    }

    /// One aggregate row read back: its key taken apart.
    public struct Cell: Sendable {
        public var start: Millis
        public var segment: CountSegment
        public var measure: CohortMeasure
        public var period: Int
        public var currency: String
        public var values: [String]
        public var delta: Int64
    }

    /// Takes an aggregate row apart; nil for a key this version does not know. A key written
    /// before cohorts were split by `saved` (one value short) is of a subscription never
    /// saved: migration 33 recomputed the share of every one with a retention offer.
    ///
    /// The key is `f0:f1:...:f5` then each dimension's value, all after a unit separator
    /// (0x1F). Every separator is ASCII, so the key is cut on its UTF-8 bytes, which cuts
    /// where a split on characters would without breaking graphemes: a report reads a row
    /// per cell, and this is most of its time.
    static func cell(key: String, bucket: Millis, segment: CountSegment, delta: Int64) -> Cell? {
        let bytes = key.utf8
        var fields: [Substring] = []
        fields.reserveCapacity(6)
        var values: [String] = []
        values.reserveCapacity(CohortDimension.allCases.count)
        var start = bytes.startIndex, index = bytes.startIndex, inHead = true
        while index != bytes.endIndex {
            let byte = bytes[index]
            if byte == 0x1F {
                if inHead { fields.append(key[start..<index]); inHead = false } else { values.append(String(key[start..<index])) }
                start = bytes.index(after: index)
            } else if inHead && byte == UInt8(ascii: ":") {
                fields.append(key[start..<index])
                start = bytes.index(after: index)
            }
            index = bytes.index(after: index)
        }
        guard !inHead else { return nil }
        values.append(String(key[start..<bytes.endIndex]))
        guard fields.count == 6, let measure = CohortMeasure(rawValue: String(fields[3])), let period = Int(fields[4]) else { return nil }
        if values.count == CohortDimension.saved.index { values.append(SaveKind.none.rawValue) }
        guard values.count == CohortDimension.allCases.count else { return nil }
        return Cell(start: bucket, segment: segment, measure: measure, period: period, currency: String(fields[5]), values: values, delta: delta)
    }

    // MARK: Stored form (a section after the rest of the share, format 4)

    func encode(into out: inout [UInt8]) {
        CompactBody.appendVarint(&out, UInt64(memberships.count))
        func string(_ s: String) {
            let bytes = Array(s.utf8)
            CompactBody.appendVarint(&out, UInt64(bytes.count))
            out += bytes
        }
        for (m, entries) in zip(memberships, entries) {
            out.append(m.kind == .paid ? 0 : 1)
            CompactBody.appendVarint(&out, UInt64(bitPattern: m.start))
            out.append(UInt8(CountSegment.allCases.firstIndex(of: m.segment)!))
            CompactBody.appendVarint(&out, UInt64(m.values.count))
            m.values.forEach(string)
            CompactBody.appendVarint(&out, UInt64(entries.count))
            for (e, v) in entries.sorted(by: { ($0.key.measure.rawValue, $0.key.period, $0.key.currency) < ($1.key.measure.rawValue, $1.key.period, $1.key.currency) }) {
                out.append(e.measure.rawValue.utf8.first!)
                CompactBody.appendVarint(&out, UInt64(e.period))
                string(e.currency)
                CompactBody.appendVarint(&out, UInt64(bitPattern: (v << 1) ^ (v >> 63)))
            }
        }
    }

    /// Reads the section at `i` of `b`; an empty share when it is cut short.
    static func decode(_ b: [UInt8], at start: Int) -> CohortShare {
        var i = start
        func varint() -> UInt64? { CompactBody.readVarint(b, &i) }
        func string() -> String? {
            guard let n = varint(), n <= UInt64(b.count - i) else { return nil }
            defer { i += Int(n) }
            return String(decoding: b[i..<(i + Int(n))], as: UTF8.self)
        }
        var share = CohortShare()
        guard let count = varint(), count <= 4 else { return share }
        for _ in 0..<count {
            guard i + 1 <= b.count else { return CohortShare() }
            let kind: CohortKind = b[i] == 0 ? .paid : .trial
            i += 1
            guard let startBits = varint(), i < b.count else { return CohortShare() }
            let segmentIndex = Int(b[i]); i += 1
            guard segmentIndex < CountSegment.allCases.count, let n = varint(), n <= 16 else { return CohortShare() }
            var values: [String] = []
            for _ in 0..<n { guard let s = string() else { return CohortShare() }; values.append(s) }
            guard let m = varint() else { return CohortShare() }
            var entries: [Entry: Int64] = [:]
            for _ in 0..<m {
                guard i < b.count, let measure = CohortMeasure(rawValue: String(UnicodeScalar(b[i]))) else { return CohortShare() }
                i += 1
                guard let period = varint(), let currency = string(), let z = varint() else { return CohortShare() }
                entries[Entry(measure: measure, period: Int(period), currency: currency)] = Int64(bitPattern: z >> 1) ^ -Int64(bitPattern: z & 1)
            }
            share.memberships.append(Membership(kind: kind, start: Int64(bitPattern: startBits),
                                                segment: CountSegment.allCases[segmentIndex], values: values))
            share.entries.append(entries)
        }
        return share
    }
}
