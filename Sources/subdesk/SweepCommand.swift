import Foundation
import SubscriptionCore
import TerminalUI

enum SweepCommand {
    static let spec: CommandSpec = CommandSpec(
        name: "sweep", abstract: "revalidate every subscription whose stored expiry passed (daily, cron)",
        usage: "subdesk sweep [--resume] [--dry-run] [--concurrency N] [--limit N] [--quiet] [--json]",
        discussion: """
        The daily expiry sweep: revalidates every subscription whose stored expiry has passed
        while it still counts as active, and every one in grace period or billing retry,
        because Apple does not announce every renewal. Safe to run from cron once a day:
        a candidate that fails is audited and simply checked again next run.

        Prints the counts: checked, renewed, expired, changed, unchanged, failed; one audit
        entry records the run. Exits 0 when nothing failed, 1 when some candidate failed.
        A short wait Apple asks for (HTTP 429) is waited out; a longer one stops the sweep
        with the time Apple named, exit 1: run `subdesk sweep --resume` after it.
        """,
        options: [
            .value(.concurrency, "N", "requests to Apple in flight at once (default 4, at most 64); store writes "
                   + "stay on one connection, one at a time"),
            .value(.limit, "N", "check at most N candidates"),
            .flag(.dryRun, "ask Apple and count, but store and audit nothing"),
            .flag(.resume, "go on after the last subscription a sweep stopped by Apple's rate limit had checked "
                  + "(its audit entry keeps the place)"),
            .flag(.quiet, "no progress line (it only shows when stderr is a terminal)"),
            .value(.reason, "TEXT", "why, for the audit log (default: expiry sweep)"),
        ],
        groups: [.apple],
        action: StoreAction(words: "sweep expired subscriptions", privilege: .update, table: "transactions"),
        run: run)

    static func run(_ context: Context) throws -> Int32 {
        guard context.arguments.positionals.isEmpty else {
            throw UsageError("sweep takes no arguments (see subdesk sweep --help)")
        }
        let concurrency = try context.arguments.int(.concurrency) ?? 4
        guard (1...64).contains(concurrency) else { throw UsageError("--concurrency must be between 1 and 64, got \(concurrency)") }
        let limit = try context.arguments.limit()
        var options = SweepOptions(concurrency: concurrency, dryRun: context.arguments.has(.dryRun),
                                   reason: context.arguments.value(.reason) ?? "expiry sweep", limit: limit, app: try context.appScope())
        let revalidator = try context.makeRevalidator(maxConnections: concurrency)
        if context.arguments.has(.resume) {
            let point = try ExpirySweep.resumePoint(store: try context.openStore(mode: .existing))
            guard let after = point.after else {
                let last = point.entry.map { "the last sweep (audit #\($0.id), \(DateText.minute($0.at)) UTC) finished: \($0.outcome)" }
                    ?? "no sweep has run on this store"
                throw UsageError("no stopped sweep to resume: \(last); run subdesk sweep")
            }
            options.after = after
        }
        let sweep = ExpirySweep(revalidator: revalidator)
        let showProgress = isatty(STDERR_FILENO) == 1 && !context.arguments.has(.quiet)
        let report: SweepReport
        do {
            report = try sweep.run(options: options, progress: showProgress ? progressLine : nil)
        } catch let error as RevalidationError {
            if case .notConfigured = error { throw UsageError(error.description) }
            throw error
        }
        if showProgress { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }

        for failure in report.failures where !context.arguments.has(.quiet) {
            Output.error("sweep: \(failure.app.map { SafeText.sanitize($0) + ": " } ?? "")\(SafeText.sanitize(failure.originalTransactionId)): "
                         + SafeText.sanitize(failure.reason))
        }
        if let stopped = report.stoppedBy {
            Output.error("sweep stopped: \(SafeText.sanitize(stopped.description)); \(report.unchecked) not checked, "
                         + "what was checked is stored; resume with: subdesk sweep --resume"
                         + (stopped.rateLimitResumeAt.map { " (after \(RevalidationError.resumeText($0)))" } ?? ""))
        }
        if context.wantsJSON {
            Output.json(report.jsonObject())
        } else {
            let seconds = String(format: "%.1f", Double(report.finishedAt - report.startedAt) / 1000)
            Output.line("sweep\(report.dryRun ? " (dry run, nothing stored)" : ""): \(report.counts.summary) in \(seconds) s"
                        + (report.auditId.map { "; audit #\($0)" } ?? ""))
        }
        return report.counts.failed == 0 && report.stoppedBy == nil ? 0 : 1
    }

    private static func progressLine(_ p: SweepProgress) {
        let c = p.counts
        let text = "\r\u{1B}[Ksweep: \(c.checked)/\(p.total) checked  renewed \(c.renewed)  expired \(c.expired)  "
            + "changed \(c.changed)  unchanged \(c.unchanged)  failed \(c.failed)"
        FileHandle.standardError.write(Data(text.utf8))
    }
}
