import Foundation

/// What a scrape is computed from: the store's reading and the facts of this host's
/// configuration that the store does not hold.
public struct OnCallInputs: Sendable {
    public var reading: OnCallReading
    /// The configured trust roots: subject and end of validity.
    public var roots: [(subject: String, notAfter: Date, fingerprint: String)]
    public var quarantineBudgetBytes: Int64?
    public var version: String
    /// What the `subdesk serve` the configuration names (`serve_socket`) said of its 503s;
    /// nil when there is none or it did not answer.
    public var serveUnavailability: ServeUnavailability?
    /// The configured apps, which name the `app` label's values (a bundle id is the store's,
    /// its name the configuration's). By default the one app of a configuration that names
    /// no bundle id, whose every count is.
    public var apps = ConfiguredApps(apps: [ConfiguredApp(name: ConfiguredApps.flatAppName, bundleId: nil)], fromSections: false)
    /// One app's name (`--app`): the samples of another app's label are left out; nil for all.
    public var appScope: String?
    /// Whether intake asks OCSP responders (`revocation_check = ocsp`).
    public var revocationCheck = false

    public init(reading: OnCallReading, roots: [(subject: String, notAfter: Date, fingerprint: String)], quarantineBudgetBytes: Int64?,
                version: String = SubdeskVersion.string) {
        self.reading = reading
        self.roots = roots
        self.quarantineBudgetBytes = quarantineBudgetBytes
        self.version = version
    }
}

/// One on-call metric, declared once: the exposition, the README's list and the tests all
/// come from this table, so a metric cannot be documented one way and served another.
public struct OnCallMetric: Sendable {
    public enum Kind: String, Sendable { case counter, gauge, summary }

    /// One line of the exposition: `suffix` is `_sum`/`_count` for a summary's parts.
    public struct Sample: Sendable, Equatable {
        public var labels: [(String, String)]
        public var suffix: String
        public var value: Double

        public init(_ labels: [(String, String)] = [], suffix: String = "", _ value: Double) {
            self.labels = labels
            self.suffix = suffix
            self.value = value
        }

        public init(_ value: Double) { self.init([], value) }

        public static func == (a: Sample, b: Sample) -> Bool {
            a.labels.map { $0.0 + "=" + $0.1 } == b.labels.map { $0.0 + "=" + $0.1 } && a.suffix == b.suffix && a.value == b.value
        }
    }

    public let name: String
    public let kind: Kind
    public let help: String
    /// The base unit the name ends in (seconds, bytes, ratio), or "" for a plain count.
    public let unit: String
    public let labels: [String]
    /// Where the value comes from, and so who could have written it.
    public let source: [Source]
    public let samples: @Sendable (OnCallInputs) -> [Sample]

    /// Where a metric's value comes from. On PostgreSQL what a login may write is the
    /// server's to enforce: a store table's writers are the roles `PostgresRoles.rights`
    /// lets insert or update it, an audit action's those `PostgresRoles.auditActions`
    /// lets write it (the audit log's trigger refuses it from any other role, and dates
    /// each entry itself), the owner besides.
    public enum Source: Sendable, Equatable {
        /// Rows of these store tables.
        case tables([String])
        /// Audit entries of this action (its time and action are the server's to check).
        case auditAction(AuditAction)
        /// A setting of this host's configuration.
        case configuration(String)
        /// The running subdesk binary itself.
        case binary
        /// The running `subdesk serve`, asked on its socket.
        case serve
        /// The store's engine: its file, or the server's accounting of the schema.
        case engine

        /// The subdesk roles that may write what this reads (the owner always may); empty
        /// for what no login writes.
        public var writtenBy: [String] {
            switch self {
            case .tables(let tables):
                return PostgresRoles.all.filter { role in
                    tables.contains { PostgresRoles.holds(role, .insert, on: $0) || PostgresRoles.holds(role, .update, on: $0) }
                }
            case .auditAction(let action):
                return PostgresRoles.auditWriters(of: action)
            case .configuration, .binary, .serve, .engine:
                return []
            }
        }

        /// The README's words for it.
        public var markdown: String {
            func writers() -> String {
                let roles = writtenBy.map { $0.replacingOccurrences(of: "subdesk_", with: "") }
                return roles.isEmpty ? "the owner" : roles.joined(separator: ", ")
            }
            switch self {
            case .tables(let tables): return tables.map { "`\($0)`" }.joined(separator: ", ") + " (written by \(writers()))"
            case .auditAction(let action): return "`audit_log` entries `\(action.rawValue)` (written by \(writers()))"
            case .configuration(let setting): return "config `\(setting)`"
            case .binary: return "this binary"
            case .serve: return "`subdesk serve`"
            case .engine: return "the engine"
            }
        }
    }
}

/// A source intake and the operators' commands depend on, whose health a scrape reports
/// (`subdesk_source_up`) from what is recorded, never by calling it: a scrape reaches
/// neither Apple nor an OCSP responder. Declared once: the metric's help, the README and
/// the samples come from here.
public enum OnCallSource: String, CaseIterable, Sendable {
    case store
    case appleAPI = "apple_api"
    case ocsp
    // The relay's targets are not sources: each has metrics of its own (`subdesk_forward_*`,
    // its lag and its dead deliveries), which say more than up or down.

    /// What 1 and 0 mean, and when there is no sample.
    public var meaning: String {
        switch self {
        case .store:
            return "store: 1 when the scrape read the store, its schema is one this subdesk knows, and no write intake tried "
                + "failed after the last notification stored (serve counts its 503s by reason and when, the store cannot); "
                + "0 otherwise (a store that cannot be read at all answers the scrape 503 instead, so up is 0)"
        case .appleAPI:
            return "apple_api: the latest recorded call to the App Store Server API (an audited revalidation, a refund "
                + "request's answer, a ping): 1 when Apple answered it, 0 when it got no answer or could not be made; "
                + "absent while nothing is recorded"
        case .ocsp:
            return "ocsp: with revocation_check = ocsp, 0 when subdesk serve answered a notification 503 because an OCSP "
                + "responder could not say whether a certificate was revoked, later than the last notification stored, "
                + "else 1; absent with the check off, or without serve's counts (the store records no OCSP answer)"
        }
    }

    /// 1 or 0 as `meaning` says; nil when there is nothing to judge (no sample).
    public func up(_ i: OnCallInputs) -> Bool? {
        let stored = i.reading.lastStored ?? Millis.min
        switch self {
        case .store:
            guard i.reading.schemaVersion <= i.reading.binarySchemaVersion else { return false }
            guard let failed = i.serveUnavailability?.latest({ $0.isTheStore }) else { return true }
            return failed < stored
        case .appleAPI:
            return i.reading.lastAppleCall?.answered
        case .ocsp:
            guard i.revocationCheck, let serve = i.serveUnavailability else { return nil }
            guard let failed = serve.latest({ $0 == .revocation }) else { return true }
            return failed < stored
        }
    }
}

public enum OnCallMetrics {
    public static let all: [OnCallMetric] = [
        OnCallMetric(name: "subdesk_build_info", kind: .gauge,
                     help: "Always 1; the labels say which subdesk serves these metrics (as subdesk --version does) and the store engine it reads.",
                     unit: "", labels: ["version"] + SubdeskVersion.details.map(\.name) + ["engine"], source: [.binary]) { i in
            [.init([("version", i.version)] + SubdeskVersion.details.map { ($0.name, $0.value) } + [("engine", i.reading.engine.name)], 1)]
        },
        OnCallMetric(name: "subdesk_source_up", kind: .gauge,
                     help: "Each source's health as recorded, never asked at the scrape. "
                        + OnCallSource.allCases.map(\.meaning).joined(separator: ". ") + ".",
                     unit: "", labels: ["source"],
                     source: [.tables(["intake_counts", "refund_requests", "store_facts"]), .auditAction(.revalidate),
                              .configuration("revocation_check"), .serve]) { i in
            OnCallSource.allCases.compactMap { source in source.up(i).map { .init([("source", source.rawValue)], $0 ? 1 : 0) } }
        },
        OnCallMetric(name: "subdesk_notifications_received_total", kind: .counter,
                     help: "Bodies intake answered, by app, environment, notification type, outcome (stored, duplicate, rejected) and, for rejections, the kind of refusal.",
                     unit: "", labels: ["app", "environment", "type", "outcome", "reason"], source: [.tables(["intake_counts"])]) { i in
            var merged: [String: (labels: [(String, String)], value: Double)] = [:]
            for c in i.reading.intakeCounts {
                let labels = [("app", appLabel(c.bundleId, i.apps)), ("environment", environmentLabel(c.environment)), ("type", typeLabel(c.type)),
                              ("outcome", outcomeLabel(c.outcome)), ("reason", c.reason.isEmpty ? "none" : reasonLabel(c.reason))]
                let key = labels.map { $0.1 }.joined(separator: "\u{1}")
                merged[key, default: (labels, 0)].value += Double(c.count)
            }
            return merged.keys.sorted().map { .init(merged[$0]!.labels, merged[$0]!.value) }
        },
        OnCallMetric(name: "subdesk_last_notification_timestamp_seconds", kind: .gauge,
                     help: "When the last notification of each app and environment arrived (stored or duplicate), Unix time.",
                     unit: "seconds", labels: ["app", "environment"], source: [.tables(["intake_counts"])]) { i in
            lastArrivals(i).map { .init([("app", $0.app), ("environment", $0.environment)], seconds($0.last)) }
        },
        OnCallMetric(name: "subdesk_last_notification_age_seconds", kind: .gauge,
                     help: "Seconds since the last notification of each app and environment arrived, at the time of the scrape.",
                     unit: "seconds", labels: ["app", "environment"], source: [.tables(["intake_counts"])]) { i in
            lastArrivals(i).map { .init([("app", $0.app), ("environment", $0.environment)], seconds(i.reading.now - $0.last)) }
        },
        OnCallMetric(name: "subdesk_notification_delivery_lag_seconds", kind: .summary,
                     help: "Arrival minus Apple's signedDate of the notifications stored in the last hour (at most the newest 5000).",
                     unit: "seconds", labels: ["quantile"], source: [.tables(["notifications"])]) { i in
            let lags = i.reading.lags
            var samples: [OnCallMetric.Sample] = []
            if !lags.isEmpty {
                for q in [0.5, 0.9, 0.99] {
                    let rank = min(lags.count - 1, max(0, Int((q * Double(lags.count)).rounded(.up)) - 1))
                    samples.append(.init([("quantile", String(q))], seconds(lags[rank])))
                }
            }
            samples.append(.init(suffix: "_sum", seconds(lags.reduce(0, +))))
            samples.append(.init(suffix: "_count", Double(lags.count)))
            return samples
        },
        OnCallMetric(name: "subdesk_rejected_last_hour", kind: .gauge,
                     help: "Bodies refused in the hour before the scrape, as the intake log records them.",
                     unit: "", labels: [], source: [.tables(["intake_log"])]) { i in [.init(Double(i.reading.rejectedLastHour))] },
        OnCallMetric(name: "subdesk_quarantine_entries", kind: .gauge,
                     help: "Quarantined bodies not yet resolved by a replay.",
                     unit: "", labels: [], source: [.tables(["quarantine"])]) { i in [.init(Double(i.reading.quarantineEntries))] },
        OnCallMetric(name: "subdesk_quarantine_bytes", kind: .gauge,
                     help: "Body bytes the quarantine keeps, resolved entries included (what its budget counts).",
                     unit: "bytes", labels: [], source: [.tables(["quarantine"])]) { i in [.init(Double(i.reading.quarantineBytes))] },
        OnCallMetric(name: "subdesk_quarantine_budget_bytes", kind: .gauge,
                     help: "The quarantine's budget (quarantine_budget_mb); absent when it has none.",
                     unit: "bytes", labels: [], source: [.configuration("quarantine_budget_mb")]) { i in
            i.quarantineBudgetBytes.flatMap { $0 > 0 ? [.init(Double($0))] : nil } ?? []
        },
        OnCallMetric(name: "subdesk_quarantine_budget_ratio", kind: .gauge,
                     help: "Share of the quarantine's budget in use, 0 to 1 (past 1 bodies are counted, not kept).",
                     unit: "ratio", labels: [], source: [.tables(["quarantine"]), .configuration("quarantine_budget_mb")]) { i in
            guard let budget = i.quarantineBudgetBytes, budget > 0 else { return [] }
            return [.init(Double(i.reading.quarantineBytes) / Double(budget))]
        },
        OnCallMetric(name: "subdesk_refund_requests_open", kind: .gauge,
                     help: "Refund requests (CONSUMPTION_REQUEST) still open, unanswered and within Apple's 12-hour answer window.",
                     unit: "", labels: [], source: [.tables(["refund_requests"])]) { i in [.init(Double(i.reading.openRefunds))] },
        OnCallMetric(name: "subdesk_refund_next_deadline_seconds", kind: .gauge,
                     help: "Seconds until the nearest answer deadline among open, unanswered refund requests; absent when there is none.",
                     unit: "seconds", labels: [], source: [.tables(["refund_requests"])]) { i in
            i.reading.nextRefundDeadline.map { [.init(seconds($0 - i.reading.now))] } ?? []
        },
        OnCallMetric(name: "subdesk_refund_answers_total", kind: .counter,
                     help: "Refund requests by what became of the last answer: accepted (Apple took it), refused (Apple answered with an error), not_sent (never sent: the App Store Server API key settings were missing), failed (sent, no answer from Apple: a timeout or the network); late counts requests with no accepted answer by the deadline that were not closed before it.",
                     unit: "", labels: ["outcome"], source: [.tables(["refund_requests"])]) { i in
            [.init([("outcome", "accepted")], Double(i.reading.refundAnswersAccepted)),
             .init([("outcome", "refused")], Double(i.reading.refundAnswersRefused)),
             .init([("outcome", "not_sent")], Double(i.reading.refundAnswersNotSent)),
             .init([("outcome", "failed")], Double(i.reading.refundAnswersFailed)),
             .init([("outcome", "late")], Double(i.reading.refundAnswersLate))]
        },
        OnCallMetric(name: "subdesk_ping_last_timestamp_seconds", kind: .gauge,
                     help: "When the last `subdesk ping` asked Apple for a TEST notification, Unix time; absent before the first.",
                     unit: "seconds", labels: ["environment"], source: [.tables(["store_facts"])]) { i in
            i.reading.ping.map { [.init([("environment", environmentLabel($0.environment))], seconds($0.requested))] } ?? []
        },
        OnCallMetric(name: "subdesk_ping_last_age_seconds", kind: .gauge,
                     help: "Seconds since the last `subdesk ping` asked, at the time of the scrape.",
                     unit: "seconds", labels: [], source: [.tables(["store_facts"])]) { i in
            i.reading.ping.map { [.init(seconds(i.reading.now - $0.requested))] } ?? []
        },
        OnCallMetric(name: "subdesk_ping_last_arrived", kind: .gauge,
                     help: "1 when the last ping's TEST notification came through the webhook in time, else 0.",
                     unit: "", labels: [], source: [.tables(["store_facts"])]) { i in
            i.reading.ping.map { [.init($0.arrived == nil ? 0 : 1)] } ?? []
        },
        OnCallMetric(name: "subdesk_ping_last_round_trip_seconds", kind: .gauge,
                     help: "The last arrived ping's round trip, from asking Apple to the TEST notification stored.",
                     unit: "seconds", labels: [], source: [.tables(["store_facts"])]) { i in
            i.reading.ping?.roundTrip.map { [.init(seconds($0))] } ?? []
        },
        OnCallMetric(name: "subdesk_delivery_gaps_total", kind: .counter,
                     help: "Notifications Apple sent that first reached the store through a backfill (`subdesk gaps`), by notification type.",
                     unit: "", labels: ["type"], source: [.tables(["delivery_gaps", "notifications"])]) { i in
            var merged: [String: Double] = [:]
            for g in i.reading.gapsByType { merged[typeLabel(g.type), default: 0] += Double(g.count) }
            return merged.keys.sorted().map { .init([("type", $0)], merged[$0]!) }
        },
        OnCallMetric(name: "subdesk_sweep_last_run_timestamp_seconds", kind: .gauge,
                     help: "When the last expiry sweep finished, from the audit log (the latest-dated entry, ignoring any dated more than \(AuditTable.futureToleranceMillis / 60_000) minutes after the scrape), Unix time; absent before the first.",
                     unit: "seconds", labels: [], source: [.auditAction(.sweep)]) { i in
            i.reading.lastSweep.map { [.init(seconds($0.at))] } ?? []
        },
        OnCallMetric(name: "subdesk_sweep_last_failures", kind: .gauge,
                     help: "Subscriptions the last expiry sweep could not revalidate.",
                     unit: "", labels: [], source: [.auditAction(.sweep)]) { i in
            i.reading.lastSweepFailures.map { [.init(Double($0))] } ?? []
        },
        OnCallMetric(name: "subdesk_reconcile_last_success_timestamp_seconds", kind: .gauge,
                     help: "When a backfill of the notifications Apple failed to deliver (`backfill --only-failures`: subdesk-reconcile.timer runs one hourly) last finished for each app and environment, Unix time; absent before the first. A run that fails leaves it as it was.",
                     unit: "seconds", labels: ["app", "environment"], source: [.tables(["backfill_runs"])]) { i in
            labelledByAppAndEnvironment(i.reading.lastReconcile, i).map { .init([("app", $0.app), ("environment", $0.environment)], seconds($0.last)) }
        },
        OnCallMetric(name: "subdesk_revalidation_failures_last_day", kind: .gauge,
                     help: "Revalidations that failed (audit log) in the 24 hours before the scrape.",
                     unit: "", labels: [], source: [.auditAction(.revalidate)]) { i in [.init(Double(i.reading.revalidationFailuresLastDay))] },
        OnCallMetric(name: "subdesk_renewal_extensions_pending", kind: .gauge,
                     help: "Renewal-date extensions asked of Apple whose outcome is still pending (`subdesk extend`).",
                     unit: "", labels: [], source: [.tables(["renewal_extensions"])]) { i in [.init(Double(i.reading.pendingExtensions))] },
        OnCallMetric(name: "subdesk_store_schema_version", kind: .gauge,
                     help: "The store's schema version.",
                     unit: "", labels: [], source: [.tables(["schema_version"])]) { i in [.init(Double(i.reading.schemaVersion))] },
        OnCallMetric(name: "subdesk_binary_schema_version", kind: .gauge,
                     help: "The newest schema version this subdesk knows; below the store's means an older binary reads a newer store.",
                     unit: "", labels: [], source: [.binary]) { i in [.init(Double(i.reading.binarySchemaVersion))] },
        OnCallMetric(name: "subdesk_store_size_bytes", kind: .gauge,
                     help: "The store's size: the SQLite file, or the PostgreSQL schema's tables with their indexes.",
                     unit: "bytes", labels: [], source: [.engine]) { i in i.reading.storeBytes.map { [.init(Double($0))] } ?? [] },
        OnCallMetric(name: "subdesk_store_wal_bytes", kind: .gauge,
                     help: "The SQLite write-ahead log's size; absent on PostgreSQL.",
                     unit: "bytes", labels: [], source: [.engine]) { i in i.reading.walBytes.map { [.init(Double($0))] } ?? [] },
        OnCallMetric(name: "subdesk_segments_pending", kind: .gauge,
                     help: "Subscriptions whose by-segment counts wait to be caught up (counted up to 100000).",
                     unit: "", labels: [], source: [.tables(["metric_segments_pending"])]) { i in [.init(Double(i.reading.pendingSegments))] },
        forwardMetric("subdesk_forward_pending",
                      "Deliveries owed to each [forward] target and not yet taken by it (the configured targets, and any other the outbox still names).",
                      tables: ["forward_owed", "forward_outbox"]) {
            Double($0.pending)
        },
        forwardMetric("subdesk_forward_oldest_pending_age_seconds",
                      "Seconds since the oldest delivery still pending for each target was owed, at the time of the scrape; absent when none is pending.",
                      unit: "seconds", tables: ["forward_owed", "forward_outbox"]) { r, now in r.lag(at: now).map(seconds) },
        forwardMetric("subdesk_forward_delivered_last_hour", "Deliveries each target answered 2xx in the hour before the scrape.") {
            Double($0.deliveredLastHour)
        },
        forwardMetric("subdesk_forward_failed_attempts_last_hour",
                      "Attempts at a delivery to each target in the hour before the scrape that got no 2xx (an error status, a timeout, no connection).",
                      tables: ["forward_outbox", "forward_attempts"]) { Double($0.failedAttemptsLastHour) },
        forwardMetric("subdesk_forward_dead",
                      "Dead deliveries the outbox keeps for each target: given up past the target's max_age, or refused by it too often; never sent again.") {
            Double($0.dead)
        },
        forwardMetric("subdesk_forward_dead_last_day",
                      "Deliveries to each target that died in the 24 hours before the scrape (last tried then, or never tried and past max_age then).") {
            Double($0.deadLastDay)
        },
        OnCallMetric(name: "subdesk_serve_unavailable_total", kind: .counter,
                     help: "Requests the running subdesk serve (serve_socket) answered 503 since it started, by reason (locked, connection, store_missing, store_replaced, incomplete_body, revocation, other): the store (for revocation, an OCSP responder) could not take them, so serve counts them itself; absent without serve_socket or when serve does not answer (serve answering the scrape gives its own).",
                     unit: "", labels: ["reason"], source: [.serve]) { i in
            guard let u = i.serveUnavailability else { return [] }
            return ServeUnavailableReason.allCases.map { .init([("reason", $0.rawValue)], Double(u.totals[$0] ?? 0)) }
        },
        OnCallMetric(name: "subdesk_serve_retention_requests_total", kind: .counter,
                     help: "Apple's real-time Retention Messaging requests the running subdesk serve (serve_socket) answered since it started, by outcome: answered (a rule's answer), no_rule, store_unavailable and offer_key_unreadable (answered with nothing, so Apple falls back), refused:WHY (malformed, oversized, unsigned, signature, unknown_app, other_app_than_url, environment, stale); absent without serve_socket or when serve does not answer.",
                     unit: "", labels: ["outcome"], source: [.serve]) { i in
            guard let u = i.serveUnavailability else { return [] }
            return RetentionOutcome.keys.map { .init([("outcome", $0)], Double(u.retention[$0] ?? 0)) }
        },
        OnCallMetric(name: "subdesk_trusted_root_expiry_seconds", kind: .gauge,
                     help: "Seconds until each configured trust root's certificate expires (negative once it has); fingerprint is the first 16 hex digits of the SHA-256 of its DER, so a root and its successor of the same subject are two series.",
                     unit: "seconds", labels: ["subject", "fingerprint"], source: [.configuration("root_ca")]) { i in
            i.roots.map {
                .init([("subject", $0.subject), ("fingerprint", $0.fingerprint)],
                      ($0.notAfter.timeIntervalSince1970 * 1000 - Double(i.reading.now)) / 1000)
            }
        },
    ]

    // MARK: Labels: only ever from small fixed sets

    static let environments: Set<String> = ["Production", "Sandbox", "Xcode", "LocalTesting"]

    static func environmentLabel(_ text: String) -> String {
        if text.isEmpty { return "unknown" }
        if text == "PROD" { return "Production" }
        return environments.contains(text) ? text : "other"
    }

    /// Apple's type names (V2 and V1) are upper-case words; anything else (a body that did not
    /// decode says nothing trustworthy) is folded so it cannot grow the label set.
    static func typeLabel(_ text: String) -> String {
        if text.isEmpty { return "unknown" }
        let ok = text.count <= 64 && text.unicodeScalars.allSatisfy { ("A"..."Z").contains($0) || $0 == "_" || ("0"..."9").contains($0) }
        return ok ? text : "other"
    }

    static func outcomeLabel(_ text: String) -> String {
        IntakeLogEntry.Result(rawValue: text)?.rawValue ?? "other"
    }

    static func reasonLabel(_ text: String) -> String {
        RejectionClass(rawValue: text)?.rawValue ?? "other"
    }

    /// The `app` label of what was counted under `bundleId` ('' when the app could not be
    /// read): the configured app's name. What no configured app has is `other`, and so is an
    /// unknown app, but that it is the one configured app's when there is one (as a record
    /// of unknown app is): the label's values are the configured apps and `other`.
    static func appLabel(_ bundleId: String, _ apps: ConfiguredApps) -> String {
        (bundleId.isEmpty ? apps.app(ofRecord: nil) : apps.app(bundleId: bundleId))?.name ?? otherApp
    }

    /// The `app` label of what no configured app has.
    public static let otherApp = "other"

    struct AppAndEnvironment: Hashable {
        var app: String
        var environment: String
    }

    /// The last arrival of each `app` and `environment` label, in their order.
    static func lastArrivals(_ i: OnCallInputs) -> [(app: String, environment: String, last: Millis)] {
        labelledByAppAndEnvironment(i.reading.lastArrivalByAppAndEnvironment, i)
    }

    /// The latest of `times` under each `app` and `environment` label, in their order.
    static func labelledByAppAndEnvironment(_ times: [OnCallReading.AppEnvironment: Millis],
                                            _ i: OnCallInputs) -> [(app: String, environment: String, last: Millis)] {
        var merged: [AppAndEnvironment: Millis] = [:]
        for (key, last) in times {
            let labels = AppAndEnvironment(app: appLabel(key.bundleId, i.apps), environment: environmentLabel(key.environment))
            merged[labels] = max(merged[labels] ?? 0, last)
        }
        return merged.keys.sorted { ($0.app, $0.environment) < ($1.app, $1.environment) }
            .map { (app: $0.app, environment: $0.environment, last: merged[$0]!) }
    }

    static func seconds(_ ms: Millis) -> Double { Double(ms) / 1000 }

    /// A gauge with one sample per forward target, labelled with its name (a config section's
    /// name, or one the outbox still names: a handful), of `value` at the reading's time;
    /// none where it is nil.
    static func forwardMetric(_ name: String, _ help: String, unit: String = "", tables: [String] = ["forward_outbox"],
                              _ value: @escaping @Sendable (ForwardReading, Millis) -> Double?) -> OnCallMetric {
        OnCallMetric(name: name, kind: .gauge, help: help, unit: unit, labels: ["target"], source: [.tables(tables)]) { i in
            i.reading.forwarding.compactMap { r in value(r, i.reading.now).map { .init([("target", r.target)], $0) } }
        }
    }

    static func forwardMetric(_ name: String, _ help: String, unit: String = "", tables: [String] = ["forward_outbox"],
                              _ value: @escaping @Sendable (ForwardReading) -> Double) -> OnCallMetric {
        forwardMetric(name, help, unit: unit, tables: tables) { r, _ in value(r) }
    }

    // MARK: Outputs

    /// The Prometheus text exposition format, version 0.0.4.
    public static func exposition(_ inputs: OnCallInputs) -> String {
        var out = ""
        for metric in all {
            out += "# HELP \(metric.name) \(escapeHelp(metric.help))\n"
            out += "# TYPE \(metric.name) \(metric.kind.rawValue)\n"
            for s in metric.samples(inputs) where inputs.appScope.map({ scope in s.labels.allSatisfy { $0.0 != "app" || $0.1 == scope } }) ?? true {
                out += metric.name + s.suffix
                if !s.labels.isEmpty {
                    out += "{" + s.labels.map { "\($0.0)=\"\(escapeLabel($0.1))\"" }.joined(separator: ",") + "}"
                }
                out += " " + number(s.value) + "\n"
            }
        }
        return out
    }

    static func escapeHelp(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\n", with: "\\n")
    }

    static func escapeLabel(_ text: String) -> String {
        escapeHelp(text).replacingOccurrences(of: "\"", with: "\\\"")
    }

    static func number(_ v: Double) -> String {
        if v.isNaN { return "NaN" }
        if v.isInfinite { return v > 0 ? "+Inf" : "-Inf" }
        if v == v.rounded(), abs(v) < 1e15 { return String(Int64(v)) }
        return String(v)
    }

    /// The README's list of metrics (Markdown), checked against the README by a test.
    public static func markdown() -> String {
        var lines = ["| metric | type | labels | what it says | from |", "| --- | --- | --- | --- | --- |"]
        for m in all {
            let labels = m.labels.isEmpty ? "" : m.labels.map { "`\($0)`" }.joined(separator: ", ")
            lines.append("| `\(m.name)` | \(m.kind.rawValue) | \(labels) | \(m.help.replacingOccurrences(of: "|", with: "\\|")) | "
                         + m.source.map(\.markdown).joined(separator: "; ") + " |")
        }
        return lines.joined(separator: "\n")
    }
}
