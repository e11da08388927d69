import Foundation
import SubscriptionCore
import TerminalUI

/// `search`, `notifications`, `quarantine` and `link`: read the store, print rows.
enum ListCommands {
    static let searchSpec: CommandSpec = CommandSpec(
        name: "search", arguments: "TEXT", abstract: "subscriptions whose id, user, token or product contain TEXT",
        usage: "subdesk search TEXT [--limit N] [--json]",
        discussion: """
        Lists subscriptions with TEXT anywhere in their originalTransactionId, product, user
        id or appAccountToken (ASCII case ignored; every character means itself), those holding
        a transaction whose transactionId starts with TEXT, and one-time purchases whose
        transactionId starts with TEXT.
        """,
        options: [.value(.limit, "N", "at most N subscriptions and N purchases (default 50)")],
        run: search)

    static let notificationsSpec: CommandSpec = CommandSpec(
        name: "notifications", abstract: "stored notifications, newest first",
        usage: "subdesk notifications [--since DATE] [--limit N] [--json | --ndjson]",
        discussion: """
        Lists stored notifications, newest first. DATE is 2026-11-16, 2026-11-16T09:14 (UTC),
        or a relative offset like -2h or -7d. --ndjson prints the bodies, oldest first, one
        per line, ready for `subdesk ingest`: a body on one line as received, and a body that
        spans lines (a pretty-printed V1 body) as {"subdeskExportedBody": "<the body as a JSON
        string>"}, which `subdesk ingest` unwraps into the very same bytes. --ndjson exports
        every notification (since DATE) unless --limit N is given, and then says on stderr
        how many it left out. The listing shows the newest 100 unless --limit says otherwise.
        """,
        options: [
            .value(.since, "DATE", "only those received since DATE"),
            .value(.limit, "N", "at most N (default 100; --ndjson: all)"),
            .flag(.ndjson, "the bodies, oldest first, one per line, ready for `subdesk ingest`"),
        ],
        run: notifications)

    static let quarantineSpec: CommandSpec = CommandSpec(
        name: "quarantine", arguments: "[show|replay|purge]", abstract: "rejected bodies and why they were refused",
        usage: """
        subdesk quarantine [--all] [--limit N] [--json]
        subdesk quarantine show ID
        subdesk quarantine replay [ID]... [intake settings]
        subdesk quarantine purge --before DATE --reason TEXT [--operator NAME]
        """,
        discussion: """
        Lists rejected bodies waiting, newest first, with the reason each was refused
        (--all includes those a replay resolved). `show` prints one body (escaped).
        `replay` ingests quarantined bodies again under the current configuration (after
        fixing a missing root or bundle id, say); accepted ones are marked resolved, never
        deleted. A body refused again for the same reason is counted on its entry, not kept
        twice. A body over the size limit keeps its first 64 KiB with its true length and
        digest; past the quarantine budget (quarantine_budget_mb, 256 by default) new bodies
        are counted on one entry (how many, their bytes, the latest reason and sender) and
        not kept. `purge` deletes entries last seen before DATE,
        and is audited: the only way quarantined bodies are deleted.
        """,
        options: [
            .flag(.all, "also the entries a replay resolved"),
            .limit,
            .value(.before, "DATE", "purge: the entries last seen before DATE"),
            .value(.reason, "TEXT", "purge: why, for the audit log"),
            .operatorName,
            .quiet,
        ],
        groups: [.intake],
        action: StoreAction(words: "replay or purge quarantined bodies", privilege: .delete, table: "quarantine"),
        run: quarantine)

    static let linkSpec: CommandSpec = CommandSpec(
        name: "link", arguments: "USER_ID ID", abstract: "link your user id to the subscriber owning a transaction",
        usage: "subdesk link USER_ID ID [--force] [--apple] [--operator NAME]",
        discussion: """
        Links your application's user id to the subscriber that owns ID (an
        originalTransactionId or transactionId), so `show USER_ID` finds them. A
        subscription already linked to another user id is moved only with --force. Every
        link is audited with the previous and the new owner.
        """,
        options: [
            .flag(.force, "move a subscription already linked to another user id"),
            .flag(.apple, "also set the subscriber's app account token on the subscription at Apple (Set App Account "
                  + "Token; a subscriber without one gets a new UUID), so Apple's later transactions and notifications "
                  + "name the subscriber. Audited; needs the App Store Server API key settings. Apple refuses "
                  + "family-shared purchases"),
        ],
        groups: [.apple],
        action: .linking,
        run: link)

    static func row(_ r: SubscriptionRow) -> [String: Any] {
        var o = r.state.jsonObject()
        o["subscriber"] = ["id": r.subscriber.id, "userId": r.subscriber.userId as Any? ?? NSNull(),
                           "appAccountToken": r.subscriber.appAccountToken as Any? ?? NSNull()] as [String: Any]
        return o
    }

    /// A list's columns with APP first when several apps are configured (`apps` not nil).
    static func withApp(_ apps: ConfiguredApps?, _ head: [String], _ widths: [Int]) -> ([String], [Int]) {
        guard let apps else { return (head, widths) }
        return (["APP"] + head, [min(16, max(4, (apps.apps.map(\.name.count).max() ?? 3) + 1))] + widths)
    }

    /// A row's APP cell (none when `apps` is nil): the configured name, else the bundle id.
    static func appCell(_ apps: ConfiguredApps?, _ bundleId: String?) -> [String] {
        apps.map { [$0.name(ofRecord: bundleId)] } ?? []
    }

    static func search(_ context: Context) throws -> Int32 {
        guard let text = context.arguments.positionals.first else { throw UsageError("search needs TEXT (see subdesk search --help)") }
        let store = try context.openStore(mode: .reading)
        let limit = try context.arguments.limit() ?? 50
        let app = try context.appScope()
        let rows = try store.subscriptions.search(text, limit: limit, app: app)
        let purchases = try store.transactions.searchPurchases(text, limit: limit, app: app)
        let named = try context.appsToName()
        // A revoked subscription's access ended at its refund, as `show` says, not at its signed expiry.
        let ended = try store.transactions.accessEnded(of: rows.map(\.state))
        if context.wantsJSON {
            // Subscriptions as before (with their app); purchases that are no subscription follow, marked as such.
            let apps = try context.configuredApps()
            Output.json(rows.map { r -> [String: Any] in
                var o = row(r)
                o["app"] = apps.appJSON(ofRecord: r.state.bundleId)
                if let end = ended[r.state.originalTransactionId] { o["accessEnded"] = DateText.iso(end) }
                return o
            } + purchases.map { p -> [String: Any] in
                var o = p.jsonObject()
                o["kind"] = "purchase"
                return o
            })
            return 0
        }
        for p in purchases { Output.line(ShowCommand.describePurchase(p)) }
        if rows.isEmpty {
            if purchases.isEmpty { Output.line("no subscriptions or purchases match \(SafeText.sanitize(text))") }
            return 0
        }
        let (head, widths) = withApp(named, ["ORIGINAL TX", "USER", "PRODUCT", "STATUS", "EXPIRES (UTC)", "ENV"], [18, 16, 22, 14, 17, 10])
        Output.line(pad(head, widths))
        for r in rows {
            Output.line(pad(appCell(named, r.state.bundleId) + [r.state.originalTransactionId, r.subscriber.userId ?? "-", r.state.productId,
                             r.state.status.name, SubscriptionReport.listedEnd(r.state, accessEnded: ended).map(DateText.minute) ?? "-",
                             r.state.environment], widths))
        }
        return 0
    }

    static func notifications(_ context: Context) throws -> Int32 {
        let store = try context.openStore(mode: .reading)
        let since = try context.arguments.value(.since).map(parseSince)
        let limit = try context.arguments.limit()
        let app = try context.appScope()
        if context.arguments.has(.ndjson) {
            func write(_ n: StoredNotification) {
                FileHandle.standardOutput.write(ExportedBody.line(n.body) + Data("\n".utf8))
            }
            // An export is whole unless a limit is given, and says so when one cut it.
            guard let limit else {
                var last: Int64 = 0
                while true {
                    let page = try store.notifications.page(since: since, afterId: last, count: 1_000, app: app)
                    page.forEach { write($0.notification) }
                    guard let end = page.last?.id else { break }
                    last = end
                }
                return 0
            }
            try store.notifications.list(since: since, limit: limit, app: app).reversed().forEach(write)
            let total = try store.notifications.count(since: since ?? 0, app: app)
            if total > limit {
                Output.warn("exported the newest \(limit) of \(total) notifications (--limit \(limit)); "
                            + "leave --limit out to export them all")
            }
            return 0
        }
        let list = try store.notifications.list(since: since, limit: limit ?? 100, app: app)
        let named = try context.appsToName()
        if context.wantsJSON {
            let apps = try context.configuredApps()
            Output.json(list.map { n -> [String: Any] in
                let e = n.event
                return ["notificationUUID": e.notificationUUID, "version": e.version, "type": e.type.rawValue,
                        "subtype": e.subtype?.rawValue as Any? ?? NSNull(), "signedDate": DateText.iso(e.signedDate),
                        "receivedDate": DateText.iso(n.receivedDate),
                        "originalTransactionId": e.originalTransactionId as Any? ?? NSNull(),
                        "transactionId": e.transactionId as Any? ?? NSNull(),
                        "productId": e.productId as Any? ?? NSNull(), "environment": e.environment as Any? ?? NSNull(),
                        "bodyBytes": n.body.count, "app": apps.appJSON(ofRecord: n.bundleId),
                        // Every field Apple sent (nested JWS decoded; a V1 body without its password).
                        "apple": ApplePayloads.notificationObject(body: n.body) ?? NSNull()]
            })
            return 0
        }
        let (head, widths) = withApp(named, ["RECEIVED (UTC)", "TYPE/SUBTYPE", "ORIGINAL TX", "PRODUCT", "ENV"], [20, 36, 18, 22, 10])
        Output.line(pad(head, widths))
        for n in list {
            Output.line(pad(appCell(named, n.bundleId) + [DateText.second(n.receivedDate), n.event.typeAndSubtype,
                             n.event.originalTransactionId ?? "-", n.event.productId ?? "-", n.event.environment ?? "-"], widths))
        }
        return 0
    }

    static func quarantine(_ context: Context) throws -> Int32 {
        switch context.arguments.positionals.first {
        case "replay": return try MaintenanceCommands.replay(context)
        case "purge":
            guard context.arguments.positionals.count == 1 else { throw UsageError("quarantine purge takes no ID; give --before DATE") }
            guard let before = try OperatorCommands.date(context.arguments.value(.before), flag: "before") else {
                throw UsageError("quarantine purge needs --before DATE (entries last seen before it are deleted)")
            }
            let store = try context.openStore(mode: .existing)
            let purged = try OperatorCommands.operations(context, store: store)
                .purgeQuarantine(before: before, reason: context.arguments.value(.reason) ?? "")
            if context.wantsJSON {
                Output.json(["entries": purged.entries, "bytes": purged.bytes, "before": DateText.iso(before)])
            } else {
                Output.line("purged \(purged.entries) quarantine entries (\(purged.bytes) body bytes) last seen before "
                            + "\(DateText.minute(before)) UTC; audited")
            }
            return 0
        case "show":
            guard context.arguments.positionals.count == 2,
                  let id = Int64(context.arguments.positionals[1].trimmingCharacters(in: CharacterSet(charactersIn: "#"))) else {
                throw UsageError("quarantine show takes one quarantine number")
            }
            guard let q = try context.openStore(mode: .reading).quarantine.entries(limit: 1, includeResolved: true, ids: [id]).first else {
                Output.error("no quarantined body #\(id)")
                return 2
            }
            Output.line("#\(q.id)  \(DateText.second(q.receivedDate)) UTC  \(sizeAndRepeats(q))  \(SafeText.sanitize(q.reason))")
            Output.line(SafeText.sanitize(String(decoding: q.body.prefix(1 << 20), as: UTF8.self)))
            return 0
        case nil: break
        case let other?: throw UsageError("unknown quarantine action \(SafeText.sanitize(other)) (show or replay)")
        }
        let store = try context.openStore(mode: .reading)
        let list = try store.quarantine.entries(limit: try context.arguments.limit() ?? 100, includeResolved: context.arguments.has(.all),
                                         app: try context.appScope())
        if context.wantsJSON {
            Output.json(list.map { q -> [String: Any] in
                ["id": q.id, "receivedDate": DateText.iso(q.receivedDate), "reason": q.reason,
                 "source": q.source as Any? ?? NSNull(), "bodyBytes": q.bodyBytes, "keptBytes": q.body.count,
                 "timesSeen": q.timesSeen, "lastSeen": DateText.iso(q.lastSeen),
                 "resolution": q.resolution as Any? ?? NSNull(),
                 "body": String(decoding: q.body.prefix(65_536), as: UTF8.self)]
            })
            return 0
        }
        if list.isEmpty { Output.line("quarantine is empty"); return 0 }
        for q in list {
            Output.line("#\(q.id)  \(DateText.second(q.receivedDate)) UTC  \(sizeAndRepeats(q))  from \(SafeText.sanitize(q.source ?? "-"))")
            Output.line("    \(SafeText.sanitize(q.reason))")
            if let r = q.resolution { Output.line("    resolved: \(SafeText.sanitize(r))") }
        }
        return 0
    }

    /// `412 bytes`, `65536 of 50000000 bytes kept`, `... seen 1000 times, last 2026-11-24 07:00:01 UTC`.
    static func sizeAndRepeats(_ q: QuarantineEntry) -> String {
        var text = q.isBodyWhole ? "\(q.bodyBytes) bytes" : "\(q.body.count) of \(q.bodyBytes) bytes kept"
        if q.timesSeen > 1 { text += ", seen \(q.timesSeen) times, last \(DateText.second(q.lastSeen)) UTC" }
        return text
    }

    static func link(_ context: Context) throws -> Int32 {
        let p = context.arguments.positionals
        guard p.count == 2 else { throw UsageError("link takes USER_ID and ID (see subdesk link --help)") }
        let store = try context.openStore(mode: .existing)
        do {
            let linked = try OperatorCommands.operations(context, store: store).link(userId: p[0], to: p[1], force: context.arguments.has(.force))
            Output.line("linked user \(SafeText.sanitize(p[0])) to subscription \(linked.otid)"
                        + (linked.previousUser.map { $0 == p[0] ? "" : " (was user \(SafeText.sanitize($0)))" } ?? "") + "; audited")
            if context.arguments.has(.apple) {
                do {
                    let token = try context.makeRevalidator(maxConnections: 1).setAppAccountTokenAtApple(linked.otid)
                    Output.line("Apple has app account token \(token) on \(linked.otid); audited")
                } catch let e as RevalidationError {
                    Output.error("linked here, but Apple was not told: \(e.description)")
                    return 1
                }
            }
            return 0
        } catch let e as OperationError {
            Output.error(e.description)
            return 2
        }
    }

    /// An absolute date or an offset from now such as `-2h` or `-7d`.
    static func parseSince(_ text: String) throws -> Millis {
        guard let d = OperatorDate.parse(text, now: DateText.nowMillis()) else {
            throw UsageError("cannot read date \(text): use 2026-11-16, 2026-11-16T09:14, -2h or -30s")
        }
        return d
    }

    static func pad(_ cells: [String], _ widths: [Int]) -> String {
        zip(cells, widths).map { cell, width in
            TextWidth.fit(SafeText.sanitize(cell), toWidth: width)
        }.joined(separator: " ").trimmingCharacters(in: .whitespaces)
    }
}
