import Foundation

/// The limits intake's health is judged against. `subdesk check` and the dashboard's
/// `:health` screen both judge with this one definition, so a terminal never calls healthy
/// what the check pages for; the alert rules in deploy/prometheus carry the same numbers.
public struct OnCallThresholds: Sendable, Equatable {
    /// Silence past this is critical (`--max-silence`).
    public var maxSilence: Millis
    /// More refusals than this in the last hour is a warning (`--max-rejected-per-hour`).
    public var maxRejectedPerHour: Int
    /// An unanswered refund request due within this is a warning (`--refund-deadline`).
    public var refundWindow: Millis
    /// The share of the quarantine's budget in use from which it is a warning.
    public var quarantineShare: Double
    /// A ping older than this is a warning: the round trip has not been tested lately.
    public var maxPingAge: Millis
    /// A trusted root expiring within this is a warning; an expired one is critical.
    public var rootExpiryWarning: Millis
    /// A forward target whose oldest pending delivery has waited longer is a warning
    /// (`--max-forward-lag`); so is a delivery to it that died in the last day.
    public var maxForwardLag: Millis

    public init(maxSilence: Millis = 7_200_000, maxRejectedPerHour: Int = 10, refundWindow: Millis = 7_200_000,
                quarantineShare: Double = 0.8, maxPingAge: Millis = 86_400_000, rootExpiryWarning: Millis = 30 * 86_400_000,
                maxForwardLag: Millis = 600_000) {
        self.maxSilence = maxSilence
        self.maxRejectedPerHour = maxRejectedPerHour
        self.refundWindow = refundWindow
        self.quarantineShare = quarantineShare
        self.maxPingAge = maxPingAge
        self.rootExpiryWarning = rootExpiryWarning
        self.maxForwardLag = maxForwardLag
    }

    public static let standard = OnCallThresholds()
}

/// One judged signal: what it is, its value now, its limit, and whether it fires.
public struct HealthSignal: Sendable, Equatable {
    /// Ordered so that the worst of several is their `max`; the raw values are Nagios's codes.
    public enum Level: Int, Sendable, Comparable {
        case ok = 0, warning = 1, critical = 2

        public var word: String { ["OK", "WARNING", "CRITICAL"][rawValue] }
        public static func < (a: Level, b: Level) -> Bool { a.rawValue < b.rawValue }
    }

    public var name: String
    public var value: String
    /// The limit, in words: `critical past 2h`.
    public var threshold: String
    public var level: Level
    /// What is wrong, as one sentence naming what to run; nil while the signal is quiet.
    public var problem: String?
    /// The command on-call runs for this signal.
    public var runs: String

    public init(name: String, value: String, threshold: String, level: Level, problem: String? = nil, runs: String) {
        self.name = name
        self.value = value
        self.threshold = threshold
        self.level = level
        self.problem = problem
        self.runs = runs
    }

    public var isFiring: Bool { level != .ok }
}

/// Judges an on-call reading against thresholds: the signals `subdesk check` sums up in one
/// Nagios line and the `:health` screen lists one per row.
public enum OnCallHealth {
    /// The environments whose intake silence is judged: the one intake expects first, then
    /// every other that has sent something (the silence alert watches those too).
    public static func environments(_ reading: OnCallReading, expected: String) -> [String] {
        [expected] + reading.lastArrivalByEnvironment.keys.filter { $0 != expected }.sorted()
    }

    /// Every signal, in the order the screen lists them. An environment in `environments`
    /// that never sent anything is a warning (nothing has proved the webhook works).
    public static func signals(_ inputs: OnCallInputs, environments: [String],
                               thresholds t: OnCallThresholds = .standard) -> [HealthSignal] {
        let r = inputs.reading
        var signals: [HealthSignal] = []
        let arrivals = r.lastArrivalByEnvironment
        for environment in environments {
            let limit = "critical past \(span(t.maxSilence))"
            guard let last = arrivals[environment] else {
                signals.append(HealthSignal(name: "\(environment) intake", value: "nothing received yet", threshold: limit,
                                            level: .warning, problem: "no \(environment) notification received yet",
                                            runs: "subdesk ping"))
                continue
            }
            let silence = max(0, r.now - last)
            let silent = silence > t.maxSilence
            signals.append(HealthSignal(
                name: "\(environment) intake", value: "last \(span(silence)) ago", threshold: limit,
                level: silent ? .critical : .ok,
                problem: silent ? "no \(environment) notification for \(span(silence)) (limit \(span(t.maxSilence)))" : nil,
                runs: "subdesk ping, subdesk backfill"))
        }

        let rejecting = r.rejectedLastHour > t.maxRejectedPerHour
        signals.append(HealthSignal(
            name: "refused, last hour", value: "\(r.rejectedLastHour)", threshold: "warning above \(t.maxRejectedPerHour)",
            level: rejecting ? .warning : .ok,
            problem: rejecting ? "\(r.rejectedLastHour) bodies refused in the last hour (limit \(t.maxRejectedPerHour)); see subdesk quarantine" : nil,
            runs: "subdesk quarantine"))

        let sharePercent = Int((t.quarantineShare * 100).rounded())
        if let budget = inputs.quarantineBudgetBytes, budget > 0 {
            let ratio = Double(r.quarantineBytes) / Double(budget)
            let full = ratio >= t.quarantineShare
            signals.append(HealthSignal(
                name: "quarantine budget", value: "\(Int(ratio * 100))% (\(r.quarantineEntries) entries)",
                threshold: "warning from \(sharePercent)%", level: full ? .warning : .ok,
                problem: full ? "quarantine at \(Int(ratio * 100))% of its budget; see subdesk quarantine" : nil,
                runs: "subdesk quarantine"))
        } else {
            signals.append(HealthSignal(name: "quarantine budget", value: "no budget (\(r.quarantineEntries) entries)",
                                        threshold: "warning from \(sharePercent)%", level: .ok, runs: "subdesk quarantine"))
        }

        let window = "warning within \(span(t.refundWindow))"
        if let deadline = r.nextRefundDeadline {
            let left = max(0, deadline - r.now)
            let due = deadline - r.now <= t.refundWindow
            signals.append(HealthSignal(
                name: "refund answer due", value: "in \(span(left)) (\(r.openRefunds) open)", threshold: window,
                level: due ? .warning : .ok,
                problem: due ? "a refund answer is due in \(span(left)) and not sent; run subdesk refunds" : nil,
                runs: "subdesk refunds"))
        } else {
            signals.append(HealthSignal(name: "refund answer due", value: "none open", threshold: window, level: .ok,
                                        runs: "subdesk refunds"))
        }
        let missed = r.refundsMissedLastDay > 0
        signals.append(HealthSignal(
            name: "refunds missed, 1 day", value: "\(r.refundsMissedLastDay)", threshold: "critical above 0",
            level: missed ? .critical : .ok,
            problem: missed ? "\(r.refundsMissedLastDay) refund request(s) past the answer deadline in the last day, unanswered; run subdesk refunds" : nil,
            runs: "subdesk refunds"))

        if let ping = r.ping {
            let age = max(0, r.now - ping.requested)
            let arrived = ping.arrived != nil
            signals.append(HealthSignal(
                name: "last ping arrived",
                value: ping.roundTrip.map { "yes, round trip \(span(max(0, $0)))" } ?? "no",
                threshold: "critical when not", level: arrived ? .ok : .critical,
                problem: arrived ? nil : "the last ping's TEST notification (\(ping.environment)) did not arrive; run subdesk ping",
                runs: "subdesk ping"))
            let stale = age > t.maxPingAge
            signals.append(HealthSignal(
                name: "last ping age", value: "\(span(age)) ago", threshold: "warning past \(span(t.maxPingAge))",
                level: stale ? .warning : .ok,
                problem: stale ? "no ping for \(span(age)); run subdesk ping" : nil, runs: "subdesk ping"))
        } else {
            // As the alert rules do: a store never pinged has nothing to judge, and says so.
            signals.append(HealthSignal(name: "last ping", value: "never pinged", threshold: "warning past \(span(t.maxPingAge))",
                                        level: .ok, runs: "subdesk ping"))
        }

        let gaps = r.gapsFoundLastDay > 0
        signals.append(HealthSignal(
            name: "backfill gaps, 1 day", value: "\(r.gapsFoundLastDay)", threshold: "warning above 0",
            level: gaps ? .warning : .ok,
            problem: gaps ? "a backfill found \(r.gapsFoundLastDay) notification(s) the webhook never received in the last day; run subdesk gaps" : nil,
            runs: "subdesk gaps"))

        for target in r.forwarding {
            let lag = target.lag(at: r.now)
            let lagging = (lag ?? 0) > t.maxForwardLag
            signals.append(HealthSignal(
                name: "forward \(target.target) lag",
                value: lag.map { "oldest pending \(span($0)) (\(target.pending) pending)" } ?? "nothing pending",
                threshold: "warning past \(span(t.maxForwardLag))", level: lagging ? .warning : .ok,
                problem: lagging ? "forward target \(target.target): the oldest of \(target.pending) pending deliveries has waited "
                    + "\(span(lag ?? 0)) (limit \(span(t.maxForwardLag))); see subdesk forward status" : nil,
                runs: "subdesk forward status"))
            let died = target.deadLastDay > 0
            signals.append(HealthSignal(
                name: "forward \(target.target) dead, 1 day", value: "\(target.deadLastDay)", threshold: "warning above 0",
                level: died ? .warning : .ok,
                problem: died ? "forward target \(target.target): \(target.deadLastDay) deliver\(target.deadLastDay == 1 ? "y" : "ies") "
                    + "died in the last day, never taken; subdesk forward retry --dead sends them again" : nil,
                runs: "subdesk forward status"))
        }

        for root in inputs.roots {
            let left = Millis(root.notAfter.timeIntervalSince1970 * 1000) - r.now
            let level: HealthSignal.Level = left <= 0 ? .critical : left <= t.rootExpiryWarning ? .warning : .ok
            let subject = commonName(root.subject)
            let value = left <= 0 ? "expired \(span(-left)) ago" : "expires in \(span(left))"
            signals.append(HealthSignal(
                name: "root \(subject)", value: value, threshold: "warning within \(span(t.rootExpiryWarning))", level: level,
                problem: level == .ok ? nil : "trusted root \(subject) \(value); install its successor and run subdesk doctor",
                runs: "subdesk doctor"))
        }

        let ahead = r.schemaVersion > r.binarySchemaVersion
        signals.append(HealthSignal(
            name: "store schema", value: "\(r.schemaVersion) (binary knows \(r.binarySchemaVersion))",
            threshold: "critical when ahead", level: ahead ? .critical : .ok,
            problem: ahead ? "store schema \(r.schemaVersion) is newer than this subdesk's \(r.binarySchemaVersion)" : nil,
            runs: "subdesk doctor"))
        return signals
    }

    /// The worst level among `signals`.
    public static func level(of signals: [HealthSignal]) -> HealthSignal.Level {
        signals.map(\.level).max() ?? .ok
    }

    /// A certificate's CN when it has one, else the whole subject: the name people know it by.
    static func commonName(_ subject: String) -> String {
        for part in subject.components(separatedBy: ", ") where part.hasPrefix("CN=") { return String(part.dropFirst(3)) }
        return subject
    }

    /// A duration as people read it on a pager: `45s`, `12m`, `3h20m`, `4d`.
    public static func span(_ ms: Millis) -> String {
        let s = ms / 1000
        if s < 120 { return "\(s)s" }
        if s < 7200 { return "\(s / 60)m" }
        if s < 172_800 { return "\(s / 3600)h\(s % 3600 / 60 > 0 ? "\(s % 3600 / 60)m" : "")" }
        return "\(s / 86400)d"
    }
}

/// What judging health needs besides the store: this host's configuration (trust roots,
/// quarantine budget, the environment intake expects) and the thresholds.
public struct OnCallSettings: Sendable {
    public var roots: [(subject: String, notAfter: Date, fingerprint: String)]
    public var quarantineBudgetBytes: Int64?
    public var environment: String
    public var thresholds: OnCallThresholds

    public init(roots: [(subject: String, notAfter: Date, fingerprint: String)] = [], quarantineBudgetBytes: Int64? = nil,
                environment: String = AppStoreEnvironment.production.rawValue, thresholds: OnCallThresholds = .standard) {
        self.roots = roots
        self.quarantineBudgetBytes = quarantineBudgetBytes
        self.environment = environment
        self.thresholds = thresholds
    }

    public func inputs(_ reading: OnCallReading) -> OnCallInputs {
        OnCallInputs(reading: reading, roots: roots, quarantineBudgetBytes: quarantineBudgetBytes)
    }

    /// Every signal of `reading`, intake judged for each environment seen as well as the expected one.
    public func signals(_ reading: OnCallReading) -> [HealthSignal] {
        OnCallHealth.signals(inputs(reading), environments: OnCallHealth.environments(reading, expected: environment),
                             thresholds: thresholds)
    }
}
