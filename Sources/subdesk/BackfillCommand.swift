import Foundation
import SubscriptionCore
import TerminalUI

enum BackfillCommand {
    static let spec: CommandSpec = CommandSpec(
        name: "backfill", abstract: "fetch notifications Apple sent in a window and take in the missing ones",
        usage: """
        subdesk backfill --since DATE [--until DATE] [--only-failures] [--environment Production|Sandbox] [--max-pages N]
        subdesk backfill --resume [--max-pages N]
        subdesk backfill --list
        """,
        discussion: """
        Asks Apple for the notifications it sent in a window (Get Notification History, at
        most 180 days back; --until defaults to now) and feeds every signed payload through
        intake, as if it had arrived: verified, deduplicated, ordered, or quarantined with its
        reason. A notification the store did not have is a delivery gap: `subdesk gaps` and
        the dashboard's :gaps list them with Apple's send attempts. The feed marks backfilled
        rows. Each page is stored with the place of the next, so a backfill that stops (an
        error, Ctrl-C, kill -9) goes on from there with --resume. Every run is audited.

        A run stops, to be resumed, after \(Backfill.Limits.standard.maxPages) pages (--max-pages), or after \(Backfill.Limits.standard.maxPagesWithNothingNew) pages in a
        row that brought nothing new: a history that never ends cannot keep it going.

        Needs the App Store Server API key (api_key_file, api_key_id, api_issuer_id) and the
        bundle id. With several apps, asks each app in each of its environments, each line
        starting with the app; one that fails does not stop the others. Prints how many
        notifications were new, duplicates and rejected; --json prints one document,
        {"runs": [...]}, an entry per app and environment. Exits 1 when Apple could not be
        asked, its answer was refused, or a run stopped at a limit (each can be resumed).
        """,
        options: [
            .value(.since, "DATE", "the window's start (at most 180 days back)"),
            .value(.until, "DATE", "the window's end (default now)"),
            .flag(.onlyFailures, "only notifications Apple failed to deliver"),
            .value(.environment, "Production|Sandbox", "which of Apple's environments to ask (default Production)",
                   config: .environment),
            .flag(.resume, "go on with the last backfill that did not finish"),
            .value(.maxPages, "N", "pages this run fetches at most (default \(Backfill.Limits.standard.maxPages))"),
            .flag(.list, "the backfills run on this store, newest first"),
            .quiet,
        ],
        groups: [.apple],
        action: .backfill,
        run: run)

    static func run(_ context: Context) throws -> Int32 {
        guard context.arguments.positionals.isEmpty else {
            throw UsageError("backfill takes no arguments, only options (see subdesk backfill --help)")
        }
        if context.arguments.has(.list) { return try list(context) }
        let store = try context.openStore(mode: .existing)
        let policy = try context.intakePolicy()
        let revalidator = try context.makeRevalidator(maxConnections: 2)
        try ExtendCommand.requireKey(revalidator, ServerAPIAction.backfill)
        var limits = Backfill.Limits.standard
        if let maxPages = try context.arguments.int(.maxPages) {
            guard maxPages >= 1 else { throw UsageError("--max-pages must be 1 or more, got \(maxPages)") }
            limits.maxPages = maxPages
        }
        let now = DateText.nowMillis()
        var resume: BackfillRun?
        var request: Backfill.Request
        if context.arguments.has(.resume) {
            guard context.arguments.value(.since) == nil else { throw UsageError("--resume goes on with the last run's window; leave out --since") }
            guard let unfinished = try store.backfills.unfinished() else {
                throw UsageError("no backfill to resume: every backfill on this store finished (subdesk backfill --list)")
            }
            resume = unfinished
            request = Backfill.Request(since: unfinished.since, until: unfinished.until, onlyFailures: unfinished.onlyFailures,
                                       environment: AppStoreEnvironment(rawValue: unfinished.environment))
        } else {
            guard let sinceText = context.arguments.value(.since) else {
                throw UsageError("backfill needs --since DATE (at most \(Backfill.maxAgeDays) days ago), or --resume")
            }
            let since = try ListCommands.parseSince(sinceText)
            let until = try context.arguments.value(.until).map(ListCommands.parseSince) ?? now
            request = Backfill.Request(since: since, until: until, onlyFailures: context.arguments.has(.onlyFailures),
                                       environment: policy.environment ?? .production)
            do { try Backfill.check(request, now: now) } catch let e as OperationError { throw UsageError(e.description) }
            if let unfinished = try store.backfills.unfinished() {
                Output.warn("backfill #\(unfinished.id) did not finish (\(Backfill.summary(unfinished))); starting a new one. "
                            + "`subdesk backfill --resume` would have gone on with it")
            }
        }
        // Every app and each of its environments, each line naming which (one app: as before,
        // unnamed); a resumed run asks the app and environment it recorded.
        let targets = try context.scoped(try ExtendCommand.following { try revalidator.backfillTargets(resuming: resume) })
        if let resume, targets.isEmpty {
            throw UsageError("backfill #\(resume.id) asked \(resume.bundleId ?? "an app this store did not record"), not the app --app names: "
                             + "resume it without --app, or run subdesk --app NAME backfill --since DATE")
        }
        // Each app and environment in turn: one that fails is said and the next is asked; the
        // exit status is 1 when any failed. --json prints one document, an entry per run.
        let several = revalidator.appleTargets.count > 1
        var runs: [[String: Any]] = []
        var failed = false
        for target in targets {
            if resume == nil { request.environment = target.environment }
            request.bundleId = target.bundleId
            let prefix = several ? "\(target.label) " : ""
            var entry: [String: Any]
            do {
                // The bodies are verified beside the writer, on a connection of their own.
                let backfill = Backfill(store: store, intake: try context.makeIntake(store: store),
                                        checker: try context.makeIntake(store: try context.openStore(mode: .existing)),
                                        client: try revalidator.serverAPIClient(for: ServerAPIAction.backfill, target: target),
                                        operatorName: context.operatorName, limits: limits)
                entry = try run(context, backfill, request, resume: resume, prefix: prefix)
            } catch let error as RevalidationError {
                entry = failure(error, prefix: prefix)
            }
            failed = entry["exitCode"] != nil || failed
            entry["app"] = target.app
            entry["bundleId"] = target.bundleId as Any? ?? NSNull()
            entry["environment"] = entry["environment"] ?? request.environment.rawValue
            runs.append(entry)
        }
        if context.wantsJSON { Output.json(["runs": runs]) }
        return failed ? 1 : 0
    }

    /// A run that could not go on because of Apple or the settings: said on stderr, and its JSON entry.
    static func failure(_ error: RevalidationError, prefix: String) -> [String: Any] {
        let message = "\(prefix)backfill stopped: \(error.description); what was stored stays, resume with: subdesk backfill --resume"
        Output.error(message)
        var object: [String: Any] = ["error": message, "exitCode": 1]
        if let at = error.rateLimitResumeAt { object["retryAfter"] = DateText.iso(at) }
        return object
    }

    /// One backfill (one app, one environment), its progress and its lines; returns its JSON
    /// entry (with `exitCode` when it failed).
    static func run(_ context: Context, _ backfill: Backfill, _ request: Backfill.Request, resume: BackfillRun?,
                    prefix: String) throws -> [String: Any] {
        let showProgress = isatty(STDERR_FILENO) == 1 && !context.arguments.has(.quiet)
        let run: BackfillRun
        do {
            run = try backfill.run(request, resume: resume) { run in
                guard showProgress else { return }
                FileHandle.standardError.write(Data("\r\u{1B}[K\(prefix)backfill #\(run.id): \(Backfill.summary(run))".utf8))
            }
        } catch let stopped as Backfill.Stopped {
            if showProgress { FileHandle.standardError.write(Data("\n".utf8)) }
            Output.error("\(prefix)\(stopped.description); resume with: subdesk backfill --resume")
            var object = json(stopped.run)
            object["stopped"] = stopped.reason
            object["exitCode"] = 1
            return object
        } catch let error as RevalidationError {
            if showProgress { FileHandle.standardError.write(Data("\n".utf8)) }
            return failure(error, prefix: prefix)
        }
        if showProgress { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
        if !context.wantsJSON {
            Output.line("\(prefix)backfill #\(run.id) (\(run.environment), \(DateText.minute(run.since)) to \(DateText.minute(run.until)) UTC"
                        + (run.onlyFailures ? ", only failed deliveries" : "") + "): \(Backfill.summary(run))")
            if run.new > 0 { Output.line("\(run.new) notification\(run.new == 1 ? "" : "s") had not arrived: subdesk gaps lists them") }
        }
        return json(run)
    }

    static func json(_ run: BackfillRun) -> [String: Any] {
        var object: [String: Any] = [
            "id": run.id, "environment": run.environment, "since": DateText.iso(run.since), "until": DateText.iso(run.until),
            "onlyFailures": run.onlyFailures, "operator": run.operatorName, "started": DateText.iso(run.started),
            "pages": run.pages, "new": run.new, "duplicates": run.duplicates, "rejected": run.rejected, "finished": run.isFinished,
        ]
        if let finished = run.finished { object["finishedAt"] = DateText.iso(finished) }
        return object
    }

    static func list(_ context: Context) throws -> Int32 {
        let store = try context.openStore(mode: .reading)
        let runs = try store.backfills.runs()
        if context.wantsJSON { Output.json(runs.map(json)); return 0 }
        if runs.isEmpty { Output.line("no backfills yet"); return 0 }
        for run in runs {
            Output.line("#\(run.id) \(DateText.minute(run.started)) UTC by \(SafeText.sanitize(run.operatorName)): \(run.environment) "
                        + "\(DateText.minute(run.since)) to \(DateText.minute(run.until))\(run.onlyFailures ? " (failures)" : ""): "
                        + Backfill.summary(run) + (run.isFinished ? "" : ", not finished (subdesk backfill --resume)"))
        }
        return 0
    }

    static let gapsSpec: CommandSpec = CommandSpec(
        name: "gaps", abstract: "notifications that first arrived through a backfill, with Apple's attempts",
        usage: "subdesk gaps [--limit N] [--json]",
        discussion: """
        Notifications Apple says it sent that this store first received through a backfill,
        newest found first, with Apple's delivery attempts (date and result) for each.
        """,
        options: [.value(.limit, "N", "the newest N (default 500)")],
        run: gaps)

    static func gaps(_ context: Context) throws -> Int32 {
        let store = try context.openStore(mode: .reading)
        let gaps = try store.backfills.gaps(limit: try context.arguments.limit() ?? 500, app: try context.appScope())
        let named = try context.appsToName()
        if context.wantsJSON {
            Output.json(gaps.map { gap -> [String: Any] in
                var object: [String: Any] = ["notificationUUID": gap.notificationUUID, "backfill": gap.backfillRun,
                                             "found": DateText.iso(gap.found),
                                             "sendAttempts": gap.sendAttempts.map { ["attemptDate": DateText.iso($0.date),
                                                                                     "sendAttemptResult": $0.result] }]
                if let type = gap.type { object["notificationType"] = type }
                if let subtype = gap.subtype { object["subtype"] = subtype }
                if let otid = gap.originalTransactionId { object["originalTransactionId"] = otid }
                if let signed = gap.signedDate { object["signedDate"] = DateText.iso(signed) }
                if let named { object["app"] = named.appJSON(ofRecord: gap.bundleId) }
                return object
            })
            return 0
        }
        if gaps.isEmpty { Output.line("no delivery gaps: every notification a backfill saw had arrived"); return 0 }
        for gap in gaps {
            let what = [gap.type, gap.subtype].compactMap { $0 }.joined(separator: "/")
            let attempts = gap.sendAttempts.map { "\(DateText.minute($0.date)) \($0.result)" }.joined(separator: ", ")
            Output.line(SafeText.sanitize("\(gap.signedDate.map { DateText.minute($0) } ?? "-") UTC  "
                                          + (named.map { "app \($0.name(ofRecord: gap.bundleId))  " } ?? "") + "\(what)  "
                                          + "\(gap.originalTransactionId ?? "-")  \(gap.notificationUUID)  backfill #\(gap.backfillRun)  "
                                          + "attempts: \(attempts.isEmpty ? "none reported" : attempts)"))
        }
        return 0
    }
}
