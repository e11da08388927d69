import Foundation
import SubscriptionCore
import TerminalUI

/// `subdesk metrics` (Prometheus's text format, printed or as a CGI answer) and `subdesk
/// check` (one Nagios status line): the same reading of the store, for on-call.
enum MetricsCommand {
    static let metricsSpec: CommandSpec = CommandSpec(
        name: "metrics", abstract: "on-call metrics in Prometheus's text format (--cgi for a /metrics location)",
        usage: "subdesk metrics [--cgi]",
        discussion: """
        Prints the on-call metrics in Prometheus's text exposition format (0.0.4), computed from
        the store alone: counters come from stored rows, so they survive restarts. Reads only:
        never waits for intake and never makes it wait. The intake metrics carry an app label
        (the configured app's name, or other); with --app NAME only that app's samples of them
        are printed, beside the store's own. The metrics and what each says: README, "Alerting".
        """,
        options: [
            .flag(.cgi, "answer as a CGI program (Status and Content-Type headers first), for a web server's "
                  + "/metrics location"),
        ],
        run: metrics)

    static let checkSpec: CommandSpec = CommandSpec(
        name: "check", abstract: "intake health as one Nagios status line and exit code (0 OK .. 3 UNKNOWN)",
        usage: """
        subdesk check [--max-silence DURATION] [--max-rejected-per-hour N]
                      [--refund-deadline DURATION] [--max-forward-lag DURATION]
                      [--environment Production|Sandbox]
        """,
        discussion: """
        Checks intake's health for cron, Nagios, Icinga or a systemd OnFailure=, and prints one
        status line with perfdata. Exit codes: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN.
          CRITICAL  no notification of the environment for longer than --max-silence (default 2h),
                    a refund request's answer deadline passed unanswered, the last ping's TEST
                    notification not arrived, an expired trusted root, or the store's schema
                    newer than this subdesk
          WARNING   more than --max-rejected-per-hour bodies refused in the last hour (default 10),
                    a refund answer due within --refund-deadline (default 2h) and not sent,
                    the quarantine at 90% of its budget, no notification of the environment yet,
                    no ping for a day, gaps a backfill found in the last day, a trusted root
                    expiring within 30 days, the subdesk serve of serve_socket answering
                    requests 503 in the last hour (the store could not take them), a [forward]
                    target whose oldest pending delivery waited past --max-forward-lag
                    (default 10m), or a delivery to it that died in the last day
          UNKNOWN   the store cannot be read, or an option is wrong
        DURATION is seconds, or a number with s, m, h or d. Perfdata: silence, refusals,
        refunds, the quarantine, and forward_lag_TARGET and forward_dead_1d_TARGET for each
        forward target.
        """,
        options: [
            .value(.maxSilence, "DURATION", "CRITICAL after this long without a notification (default 2h)"),
            .value(.maxRejectedPerHour, "N", "WARNING above this many bodies refused in the last hour (default 10)"),
            .value(.refundDeadline, "DURATION", "WARNING when a refund answer is due this soon and not sent (default 2h)"),
            .value(.maxForwardLag, "DURATION", "WARNING when a forward target's oldest pending delivery waited longer (default 10m)"),
            .value(.environment, "Production|Sandbox", "the environment whose intake is judged (default: the "
                   + "configured one, else Production)", config: .environment),
        ],
        run: check)

    /// The configuration health is judged with, as `subdesk check` and the dashboard read it.
    static func settings(_ context: Context, thresholds: OnCallThresholds = .standard) throws -> OnCallSettings {
        let policy = try context.intakePolicy()
        let roots = try context.trustRoots().expiries
        return OnCallSettings(roots: roots, quarantineBudgetBytes: policy.quarantineBudgetBytes,
                              environment: policy.environment?.rawValue ?? AppStoreEnvironment.production.rawValue,
                              thresholds: thresholds)
    }

    /// What the on-call metrics and the check are computed from. `serve` says what the
    /// subdesk serve counted of its 503s (the store could not take those requests, so it
    /// cannot count them): by default the one `serve_socket` names, asked on its socket.
    /// `storePath` nil reads as other reading commands do (the demo store standing in while no
    /// store exists); serve names its own store, so a scrape never reads another.
    static func inputs(_ context: Context, storePath: String? = nil,
                       serve: (Context) -> ServeUnavailability? = askedOfServeSocket) throws -> OnCallInputs {
        let store = try context.openStore(path: storePath, mode: .reading)
        let reading = try OnCallReading.read(from: store, now: DateText.nowMillis(), forwardTargets: try context.forwardTargets().targets.map(\.name))
        var inputs = try settings(context).inputs(reading)
        inputs.apps = try context.configuredApps()
        inputs.revocationCheck = try context.intakePolicy().revocationCheck == .ocsp
        inputs.serveUnavailability = serve(context)
        return inputs
    }

    /// What the subdesk serve of `serve_socket` says of its 503s; nil without one, or when it does not answer.
    static func askedOfServeSocket(_ context: Context) -> ServeUnavailability? {
        ServeProbe.socketPath(context).flatMap { ServeProbe.unavailability(at: $0) }
    }

    static func metrics(_ context: Context) throws -> Int32 {
        guard context.arguments.positionals.isEmpty else { throw UsageError("metrics takes no arguments") }
        guard context.arguments.has(.cgi) else {
            FileHandle.standardOutput.write(Data(OnCallMetrics.exposition(try scoped(try inputs(context), context)).utf8))
            return 0
        }
        // A web server shows its own error page for a CGI program that prints no headers;
        // Prometheus reads a 503 with the reason as a failed scrape (up == 0), which pages.
        let answer = MetricsAnswer.answer(params: context.environment, context: context, serve: askedOfServeSocket, log: Output.error)
        FileHandle.standardOutput.write(Data(answer.cgiText.utf8))
        return 0
    }

    /// `inputs` narrowed to the app `--app` names (an unknown one refused): the samples of
    /// another app's `app` label are left out; those of no app's (the store's) stay.
    static func scoped(_ inputs: OnCallInputs, _ context: Context) throws -> OnCallInputs {
        guard let text = context.arguments.value(.app) else { return inputs }
        _ = try context.appScope()
        var inputs = inputs
        inputs.appScope = inputs.apps.app(named: text)?.name
        return inputs
    }

    /// The CGI answer when the metrics cannot be read (a store, or the set-up before it: a
    /// config file SUBDESK_CONFIG names that is missing): a 503 with the reason, which
    /// Prometheus records as a failed scrape (up == 0), never a web server's 500 page.
    static func respondUnavailable(_ reason: String) -> Int32 {
        FileHandle.standardOutput.write(Data(MetricsAnswer.unavailable(reason).cgiText.utf8))
        return 0
    }

    /// The longest duration a threshold may be: ten years, far past any useful alert.
    static let maxDurationDays = 3650.0

    /// `2h`, `30m`, `90s`, `1d` or plain seconds, as milliseconds; more than
    /// `maxDurationDays` is refused, compared before any conversion to milliseconds.
    static func duration(_ text: String, option: String) throws -> Millis {
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86400]
        var number = Substring(text), scale = 1.0
        if let last = text.last, let unit = units[last] { number = text.dropLast(); scale = unit }
        guard let value = Double(number), value > 0, value.isFinite else {
            throw UsageError("--\(option) must be a duration such as 90s, 30m, 2h or 1d, got \(text)")
        }
        guard value * scale <= maxDurationDays * 86_400 else {
            throw UsageError("--\(option) must be at most \(Int(maxDurationDays))d, got \(text)")
        }
        return Millis(value * scale * 1000)
    }

    static func check(_ context: Context) throws -> Int32 {
        do {
            guard context.arguments.positionals.isEmpty else { throw UsageError("check takes no arguments") }
            var thresholds = OnCallThresholds.standard
            thresholds.maxSilence = try duration(context.arguments.value(.maxSilence) ?? "2h", option: "max-silence")
            thresholds.refundWindow = try duration(context.arguments.value(.refundDeadline) ?? "2h", option: "refund-deadline")
            thresholds.maxForwardLag = try duration(context.arguments.value(.maxForwardLag) ?? "10m", option: "max-forward-lag")
            if let text = context.arguments.value(.maxRejectedPerHour) {
                guard let n = Int(text), n >= 0 else { throw UsageError("--max-rejected-per-hour must be a whole number, got \(text)") }
                thresholds.maxRejectedPerHour = n
            }
            var environment = (try? context.intakePolicy().environment)??.rawValue ?? AppStoreEnvironment.production.rawValue
            if let text = context.arguments.value(.environment) {
                guard let env = AppStoreEnvironment.parse(text) else { throw UsageError("--environment must be Production or Sandbox, got \(text)") }
                environment = env.rawValue
            }
            // A responder that stopped answering is CRITICAL before any silence shows it.
            let serveProblem = ServeProbe.socketPath(context).flatMap { ServeProbe.problem(at: $0) }
            var inputs = try inputs(context)
            // --app NAME: that app's silence (a quiet app beside a busy one is still found).
            var scope: String?
            if let text = context.arguments.value(.app), let app = try context.appScope() {
                inputs.reading.appArrivals = try context.openStore(mode: .reading).notifications.lastReceivedByEnvironment(app: app)
                scope = try context.configuredApps().app(named: text)?.name
            }
            let result = evaluate(inputs, environment: environment, thresholds: thresholds, serveProblem: serveProblem, app: scope)
            Output.line(result.line)
            return result.status
        } catch {
            // Nagios reads 2 as CRITICAL: a check that could not look says UNKNOWN instead.
            Output.line("SUBDESK UNKNOWN - \(error)")
            return 3
        }
    }

    /// A target's name as a perfdata label: Nagios splits labels at spaces and `=`, and
    /// quotes are its own, so anything but letters, digits, `-`, `_` and `.` becomes `_`.
    static func perfdataLabel(_ name: String) -> String {
        String(name.unicodeScalars.map { scalar -> Character in
            scalar.isASCII && (CharacterSet.alphanumerics.contains(scalar) || "-_.".unicodeScalars.contains(scalar)) ? Character(scalar) : "_"
        })
    }

    /// The Nagios status (0 OK, 1 WARNING, 2 CRITICAL) and line: the worst signal, the
    /// firing ones' sentences, and perfdata. Only `environment`'s intake is judged.
    /// `serveProblem`: the configured `subdesk serve` did not answer (CRITICAL).
    static func evaluate(_ inputs: OnCallInputs, environment: String,
                         thresholds t: OnCallThresholds, serveProblem: String? = nil, app: String? = nil) -> (status: Int32, line: String) {
        let r = inputs.reading
        let signals = OnCallHealth.signals(inputs, environments: [environment], thresholds: t)
        var level = serveProblem == nil ? OnCallHealth.level(of: signals) : .critical
        var problems = (serveProblem.map { [$0] } ?? []) + signals.compactMap(\.problem)
        // serve answered 503s in the last hour: the store could not take those notifications
        // (Apple retries them), which no count in the store shows.
        if let u = inputs.serveUnavailability, u.lastHour > 0 {
            level = max(level, .warning)
            problems.append("subdesk serve answered \(u.lastHour) request\(u.lastHour == 1 ? "" : "s") 503 in the last hour "
                            + "(since it started: \(u.summary))")
        }
        let silence = r.lastArrivalByEnvironment[environment].map { max(0, r.now - $0) }
        let summary = (app.map { "app \($0): " } ?? "") + (problems.isEmpty
            ? "\(environment) intake healthy, last notification \(silence.map { OnCallHealth.span($0) + " ago" } ?? "never")"
            : problems.joined(separator: "; "))
        var perf = [
            "silence=\(silence.map { "\($0 / 1000)s" } ?? "U");\(t.maxSilence / 1000);\(t.maxSilence / 1000);0",
            "rejected_1h=\(r.rejectedLastHour);\(t.maxRejectedPerHour);;0",
            "refunds_open=\(r.openRefunds);;;0",
            "quarantine_entries=\(r.quarantineEntries);;;0",
        ]
        if let deadline = r.nextRefundDeadline { perf.append("refund_deadline=\((deadline - r.now) / 1000)s;\(t.refundWindow / 1000);;") }
        if let budget = inputs.quarantineBudgetBytes, budget > 0 {
            let ratio = Double(r.quarantineBytes) / Double(budget)
            perf.append("quarantine_budget=\(Int((ratio * 100).rounded()))%;\(Int((t.quarantineShare * 100).rounded()));100;0;100")
        }
        for target in r.forwarding {
            let name = perfdataLabel(target.target)
            perf.append("forward_lag_\(name)=\((target.lag(at: r.now) ?? 0) / 1000)s;\(t.maxForwardLag / 1000);;0")
            perf.append("forward_dead_1d_\(name)=\(target.deadLastDay);0;;0")
        }
        return (Int32(level.rawValue), "SUBDESK \(level.word) - \(SafeText.sanitize(summary)) | " + perf.joined(separator: " "))
    }
}
