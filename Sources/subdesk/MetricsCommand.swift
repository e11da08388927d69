import Foundation
import SubscriptionCore
import TerminalUI

/// `subdesk metrics` (Prometheus's text format, printed or as a CGI answer) and `subdesk
/// check` (one Nagios status line): the same reading of the store, for on-call.
enum MetricsCommand {
    static let metricsHelp = """
    usage: subdesk metrics [--cgi]

    Prints the on-call metrics in Prometheus's text exposition format (0.0.4), computed from
    the store alone: counters come from stored rows, so they survive restarts. Reads only:
    never waits for intake and never makes it wait. With --cgi, answers as a CGI program
    (Status and Content-Type headers first) for a web server's /metrics location.
    The metrics and what each says: README, "Alerting".

    """

    static let checkHelp = """
    usage: subdesk check [--max-silence DURATION] [--max-rejected-per-hour N]
                         [--refund-deadline DURATION] [--environment Production|Sandbox]

    Checks intake's health for cron, Nagios, Icinga or a systemd OnFailure=, and prints one
    status line with perfdata. Exit codes: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN.
      CRITICAL  no notification of the environment for longer than --max-silence (default 2h),
                or a refund request's answer deadline passed unanswered
      WARNING   more than --max-rejected-per-hour bodies refused in the last hour (default 10),
                a refund answer due within --refund-deadline (default 2h) and not sent,
                the quarantine at 90% of its budget, or no notification of the environment yet
      UNKNOWN   the store cannot be read, or an option is wrong
    DURATION is seconds, or a number with s, m, h or d.

    """

    static let checkOptions: Set<String> = ["max-silence", "max-rejected-per-hour", "refund-deadline", "environment"]

    static func inputs(_ context: Context) throws -> OnCallInputs {
        let store = try context.openStore(mode: .reading)
        let reading = try store.onCallReading(now: DateText.nowMillis())
        let policy = try context.intakePolicy()
        let roots = try context.trustRoots().certificates.map { (subject: $0.subjectSummary, notAfter: $0.notAfter) }
        return OnCallInputs(reading: reading, roots: roots, quarantineBudgetBytes: policy.quarantineBudgetBytes)
    }

    static func metrics(_ context: Context) throws -> Int32 {
        guard context.arguments.positionals.isEmpty else { throw UsageError("metrics takes no arguments") }
        guard context.arguments.has("cgi") else {
            FileHandle.standardOutput.write(Data(OnCallMetrics.exposition(try inputs(context)).utf8))
            return 0
        }
        // A web server shows its own error page for a CGI program that prints no headers;
        // Prometheus reads a 503 with the reason as a failed scrape (up == 0), which pages.
        let answer: String
        do {
            answer = "Status: 200 OK\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n\r\n"
                + OnCallMetrics.exposition(try inputs(context))
        } catch {
            Output.error("metrics: \(error)")
            answer = "Status: 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n"
                + "subdesk metrics: the store could not be read: \(error)\n"
        }
        FileHandle.standardOutput.write(Data(answer.utf8))
        return 0
    }

    /// `2h`, `30m`, `90s`, `1d` or plain seconds, as milliseconds.
    static func duration(_ text: String, option: String) throws -> Millis {
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86400]
        var number = Substring(text), scale = 1.0
        if let last = text.last, let unit = units[last] { number = text.dropLast(); scale = unit }
        guard let value = Double(number), value > 0, value.isFinite else {
            throw UsageError("--\(option) must be a duration such as 90s, 30m, 2h or 1d, got \(text)")
        }
        return Millis(value * scale * 1000)
    }

    enum Status: Int32, Comparable {
        case ok = 0, warning = 1, critical = 2, unknown = 3
        var word: String { ["OK", "WARNING", "CRITICAL", "UNKNOWN"][Int(rawValue)] }
        static func < (a: Status, b: Status) -> Bool { a.rawValue < b.rawValue }
    }

    static func check(_ context: Context) throws -> Int32 {
        do {
            guard context.arguments.positionals.isEmpty else { throw UsageError("check takes no arguments") }
            let maxSilence = try duration(context.arguments.value("max-silence") ?? "2h", option: "max-silence")
            let refundWindow = try duration(context.arguments.value("refund-deadline") ?? "2h", option: "refund-deadline")
            var maxRejected = 10
            if let text = context.arguments.value("max-rejected-per-hour") {
                guard let n = Int(text), n >= 0 else { throw UsageError("--max-rejected-per-hour must be a whole number, got \(text)") }
                maxRejected = n
            }
            var environment = (try? context.intakePolicy().environment)??.rawValue ?? AppStoreEnvironment.production.rawValue
            if let text = context.arguments.value("environment") {
                guard let env = AppStoreEnvironment.parse(text) else { throw UsageError("--environment must be Production or Sandbox, got \(text)") }
                environment = env.rawValue
            }
            let inputs = try inputs(context)
            let result = evaluate(inputs, environment: environment, maxSilence: maxSilence, maxRejected: maxRejected,
                                  refundWindow: refundWindow)
            Output.line(result.line)
            return result.status.rawValue
        } catch {
            // Nagios reads 2 as CRITICAL: a check that could not look says UNKNOWN instead.
            Output.line("SUBDESK UNKNOWN - \(error)")
            return Status.unknown.rawValue
        }
    }

    static func evaluate(_ inputs: OnCallInputs, environment: String, maxSilence: Millis, maxRejected: Int,
                         refundWindow: Millis) -> (status: Status, line: String) {
        let r = inputs.reading
        var status = Status.ok
        var problems: [String] = []
        func raise(_ s: Status, _ text: String) { status = max(status, s); problems.append(text) }

        let last = r.lastArrivalByEnvironment[environment]
        let silence = last.map { max(0, r.now - $0) }
        if let silence {
            if silence > maxSilence { raise(.critical, "no \(environment) notification for \(span(silence)) (limit \(span(maxSilence)))") }
        } else {
            raise(.warning, "no \(environment) notification received yet")
        }
        if r.rejectedLastHour > maxRejected {
            raise(.warning, "\(r.rejectedLastHour) bodies refused in the last hour (limit \(maxRejected)); see subdesk quarantine")
        }
        if r.refundsMissedLastDay > 0 {
            raise(.critical, "\(r.refundsMissedLastDay) refund request(s) past the answer deadline in the last day, unanswered; run subdesk refunds")
        }
        if let deadline = r.nextRefundDeadline, deadline - r.now <= refundWindow {
            raise(.warning, "a refund answer is due in \(span(max(0, deadline - r.now))) and not sent; run subdesk refunds")
        }
        var ratio: Double?
        if let budget = inputs.quarantineBudgetBytes, budget > 0 {
            ratio = Double(r.quarantineBytes) / Double(budget)
            if ratio! >= 0.9 { raise(.warning, "quarantine at \(Int(ratio! * 100))% of its budget; see subdesk quarantine") }
        }
        if r.schemaVersion > r.binarySchemaVersion {
            raise(.critical, "store schema \(r.schemaVersion) is newer than this subdesk's \(r.binarySchemaVersion)")
        }
        let summary = problems.isEmpty
            ? "\(environment) intake healthy, last notification \(silence.map { span($0) + " ago" } ?? "never")"
            : problems.joined(separator: "; ")
        var perf = [
            "silence=\(silence.map { String($0 / 1000) } ?? "U")s;\(maxSilence / 1000);\(maxSilence / 1000);0",
            "rejected_1h=\(r.rejectedLastHour);\(maxRejected);;0",
            "refunds_open=\(r.openRefunds);;;0",
            "quarantine_entries=\(r.quarantineEntries);;;0",
        ]
        if let deadline = r.nextRefundDeadline { perf.append("refund_deadline=\((deadline - r.now) / 1000)s;\(refundWindow / 1000);;") }
        if let ratio { perf.append("quarantine_budget=\(Int((ratio * 100).rounded()))%;90;100;0;100") }
        return (status, "SUBDESK \(status.word) - \(SafeText.sanitize(summary)) | " + perf.joined(separator: " "))
    }

    static func span(_ ms: Millis) -> String {
        let s = ms / 1000
        if s < 120 { return "\(s)s" }
        if s < 7200 { return "\(s / 60)m" }
        if s < 172_800 { return "\(s / 3600)h\(s % 3600 / 60 > 0 ? "\(s % 3600 / 60)m" : "")" }
        return "\(s / 86400)d"
    }
}
