import Foundation
import SubscriptionCore
import TerminalUI

/// `subdesk retention report`: Apple's retention messaging report, imported and read.
enum RetentionCommand {
    static let spec: CommandSpec = CommandSpec(
        name: "retention", arguments: "report|images|messages|default|realtime-url|performance-test|coverage ...",
        abstract: "retention messaging: Apple's report, and the console over the Retention Messaging API",
        usage: """
        subdesk retention report [--json] [--app NAME] [--since DAY] [--until DAY] [--by product|territory|message|selection]
        subdesk retention report import FILE [--reason TEXT] [--operator NAME]
        subdesk retention images [upload FILE --id UUID --kind FULL_SIZE|BULLET_POINT | delete UUID] [--environment E]
        subdesk retention messages [upload --id UUID --header TEXT --body TEXT [--image UUID --alt TEXT]
                                   [--bullet TEXT --bullet-image UUID --bullet-alt TEXT]... [--header-position ABOVE_BODY|ABOVE_IMAGE]
                                   | delete UUID] [--environment E]
        subdesk retention default PRODUCT LOCALE | default set PRODUCT LOCALE MESSAGE_UUID | default delete PRODUCT LOCALE
        subdesk retention realtime-url [set URL | delete] [--environment Production|Sandbox]
        subdesk retention performance-test --transaction ID | --request UUID [--wait SECONDS]
        subdesk retention coverage [--locale LOCALE]...
        """,
        discussion: """
        Apple's "App Store Retention Messaging" analytics report (Analytics Reports API) counts
        the page views of the App Store's cancellation sheet and what subscribers did there
        (Page views, Saves, Cancels), by day, subscription, page, retention message type,
        message selection type (Default or Real-time), save type, device, platform version and
        territory. `import` reads one report file (tab-separated with a header row, as Apple
        delivers it: gunzip it first) and stores its rows in one write, audited as
        retention_report_import: a file refused (its line and column named) stores nothing,
        and a row imported again replaces its counts, so importing the same file twice counts
        it once. The columns read are Apple's, named as Apple names them (case and surrounding
        spaces aside), in any order; a file with another column or without one is refused.

        `report` prints views, saves (Apple's Saves, split by Save Type: offers redeemed, plans
        switched, don't cancel), cancellations and Apple's save rate, Saves / Page views, in
        total and by product (default), territory, message type or selection (default or
        real-time), over the days --since and --until name (YYYY-MM-DD, both included, days as
        Apple's report dates them). --app takes the app's name or Apple ID.

        The console (Retention Messaging API, /inApps/v1/messaging on the App Store Server API's
        hosts, signed with the app's App Store Server API key; --app names the app when several
        are configured, --environment the environment, default Production): `images` and
        `messages` list Apple's list beside the records this store keeps, with both review
        states (PENDING, APPROVED, REJECTED) and where they differ; `upload` checks Apple's
        rules first (a PNG without transparency: colour types 4 and 6 and a tRNS chunk refused;
        FULL_SIZE 3840 wide and 160 to 2160 high; header 66, body 144, up to 5 bullets of 66,
        alt text 150, counted in UTF-16 code units) and sends nothing when they fail. Apple's
        uploads are not idempotent: an upload that gets no answer is not sent again until
        Apple's list has been read and does not show it. `default set` reads Apple's message
        list first: only an APPROVED message (with APPROVED images) is made a default.
        `performance-test` runs Apple's sandbox test of the real-time URL and shows its result
        against Apple's thresholds (exit 1 on FAIL). `coverage` says, for each app, product
        (from the transactions stored) and locale (the defaults' and --locale's), whether a
        default message answers the cancellation sheet or nothing does. Calls are paced to
        Apple's limits (1 a second per endpoint and app, 10 for Configure Default Message; a
        tenth in the sandbox); a 429's Retry-After is waited out up to 60 s. Each write is kept
        in the store and audited (retention_upload, retention_delete, retention_default,
        retention_realtime_url, retention_performance_test).
        """,
        options: [
            .value(.since, "DAY", "from this day (YYYY-MM-DD, included)"),
            .value(.until, "DAY", "to this day (YYYY-MM-DD, included)"),
            .value(.by, "product|territory|message|selection", "what the figures are broken down by (default product)"),
            .value(.reason, "TEXT", "why, for the audit log (import)"),
            .operatorName,
            .value(.environment, "Production|Sandbox", "the console's environment at Apple (default Production)"),
            .value(.id, "UUID", "the image or message identifier to upload"),
            .value(.kind, "FULL_SIZE|BULLET_POINT", "the image's size class"),
            .value(.header, "TEXT", "the message's header (66 at most)"),
            .value(.body, "TEXT", "the message's body (144 at most)"),
            .value(.image, "UUID", "the message's FULL_SIZE image"),
            .value(.alt, "TEXT", "the image's alternative text (150 at most)"),
            .repeatable(.bullet, "TEXT", "a bullet point (66 at most; up to 5)"),
            .repeatable(.bulletImage, "UUID", "each bullet's BULLET_POINT image, in order"),
            .repeatable(.bulletAlt, "TEXT", "each bullet image's alternative text, in order"),
            .value(.headerPosition, "ABOVE_BODY|ABOVE_IMAGE", "where the header goes (default above the body)"),
            .value(.transaction, "ID", "performance-test: an active sandbox subscription's original transaction id"),
            .value(.request, "UUID", "performance-test: follow a test already started"),
            .value(.wait, "SECONDS", "how long performance-test follows a PENDING test (default 60)"),
            .repeatable(.locale, "LOCALE", "coverage: also this locale"),
            .quiet,
        ],
        groups: [.apple],
        action: .retentionImport,
        argumentCompletion: .words(["report", "import", "images", "messages", "default", "realtime-url", "performance-test",
                                    "coverage", "upload", "delete", "set"]),
        run: run)

    static func run(_ context: Context) throws -> Int32 {
        let p = context.arguments.positionals
        if let form = p.first, RetentionConsoleCommand.forms.contains(form) { return try RetentionConsoleCommand.run(form, context) }
        guard p.first == "report" else {
            throw UsageError("name what to do: retention report, or retention report import FILE (see subdesk retention --help)")
        }
        if p.count > 1 {
            guard p[1] == "import" else { throw UsageError("unknown retention report action \(SafeText.sanitize(p[1])) (import FILE)") }
            guard p.count == 3 else { throw UsageError("retention report import takes one FILE") }
            return try importFile(p[2], context)
        }
        return try report(context)
    }

    static func query(_ context: Context) throws -> RetentionReportQuery {
        var query = RetentionReportQuery()
        for option in [OptionName.since, .until] {
            guard let day = context.arguments.value(option) else { continue }
            guard RetentionReportQuery.isDay(day) else {
                throw UsageError("--\(option) takes a day YYYY-MM-DD, got \(SafeText.sanitize(day))")
            }
            if option == .since { query.since = day } else { query.until = day }
        }
        if let app = context.arguments.value(.app) {
            query.app = app
            if let id = try context.configuredApps().app(named: app)?.appAppleId { query.appAppleIds = [String(id)] }
        }
        return query
    }

    static func grouping(_ context: Context) throws -> RetentionGrouping {
        guard let text = context.arguments.value(.by) else { return .product }
        guard let grouping = RetentionGrouping(rawValue: text) else {
            throw UsageError("--by takes \(RetentionGrouping.choices), got \(SafeText.sanitize(text))")
        }
        return grouping
    }

    static func report(_ context: Context) throws -> Int32 {
        let query = try query(context)
        let grouping = try grouping(context)
        let store = try context.openStore(mode: .reading)
        let report = try store.retention.report.report(query, by: grouping)
        if context.wantsJSON {
            Output.json(report.jsonObject())
            return 0
        }
        if let note = report.earlierNote { Output.line(note) }
        guard let first = report.firstDay, let last = report.lastDay else {
            Output.line("no retention messaging rows" + (query == RetentionReportQuery() ? " (import Apple's report: subdesk retention report import FILE)"
                                                                                          : " for these days and app"))
            return 0
        }
        Output.line("retention messaging \(first) to \(last) (days as Apple's report dates them), by \(grouping.rawValue)")
        Output.line(RetentionTable.lines(report).joined(separator: "\n"))
        Output.line("save rate = " + RetentionReport.saveRateDefinition)
        return 0
    }

    static func importFile(_ path: String, _ context: Context) throws -> Int32 {
        let attributes = try? FileManager.default.attributesOfItem(atPath: path)
        guard let size = attributes?[.size] as? Int else { throw UsageError("cannot read \(SafeText.sanitize(path))") }
        guard size <= RetentionReportFile.maxBytes else {
            throw UsageError("\(SafeText.sanitize(path)): \(size) bytes, more than the \(RetentionReportFile.maxBytes) read")
        }
        guard let data = FileManager.default.contents(atPath: path) else { throw UsageError("cannot read \(SafeText.sanitize(path))") }
        let store = try context.openStore(mode: .existing)
        do {
            let imported = try Operations(store: store, operatorName: context.operatorName)
                .importRetentionReport(data, file: path, reason: context.arguments.value(.reason))
            let entry = imported.audit
            if context.wantsJSON {
                Output.json(["file": path, "rows": imported.rows.count, "auditId": entry.id, "operator": entry.operatorName,
                             "detail": entry.detail as Any? ?? NSNull()])
            } else {
                Output.line(SafeText.sanitize("\(path): \(entry.outcome) by \(entry.operatorName) (audit #\(entry.id)); \(entry.detail ?? "")"))
            }
            return 0
        } catch let refusal as RetentionReportError {
            if context.wantsJSON { Output.json(["error": refusal.description]) }
            Output.error(SafeText.sanitize(refusal.description) + "; nothing was imported")
            return 2
        }
    }
}

/// The report's figures as text columns, the total last: what the command prints.
enum RetentionTable {
    static func lines(_ report: RetentionReport) -> [String] {
        let heading = report.grouping.rawValue.uppercased()
        let rows = report.groups.map { ($0.label, $0.figures) } + [("total", report.total)]
        let width = min(40, max(heading.count, rows.map { $0.0.count }.max() ?? 0))
        func pad(_ text: String) -> String {
            let cut = text.count > width ? String(text.prefix(width - 1)) + "…" : text
            return cut.padding(toLength: width, withPad: " ", startingAt: 0)
        }
        func number(_ text: String, _ w: Int) -> String { String(repeating: " ", count: max(0, w - text.count)) + text }
        let widths = RetentionReport.headings.map { max(10, $0.count + 2) }
        func cells(_ texts: [String]) -> String { zip(texts, widths).map { number($0, $1) }.joined() }
        var lines = [pad(heading) + "  " + cells(RetentionReport.headings)]
        for (label, f) in rows { lines.append(SafeText.sanitize(pad(label)) + "  " + cells(f.cells)) }
        return lines
    }
}
