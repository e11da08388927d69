import Foundation
import SubscriptionCore
import TerminalUI

/// `override` and `audit`: manual entitlement changes and the log of every operator action.
enum OperatorCommands {
    static let overrideSpec: CommandSpec = CommandSpec(
        name: "override", arguments: "grant|revoke|lift|list", abstract: "grant, revoke, lift or list manual entitlement overrides",
        usage: """
        subdesk override grant ID --until DATE --reason TEXT [--operator NAME] [--json]
        subdesk override revoke ID [--until DATE] --reason TEXT [--operator NAME] [--json]
        subdesk override lift OVERRIDE_ID --reason TEXT [--operator NAME] [--json]
        subdesk override list [ID] [--json]
        """,
        discussion: """
        An override decides `entitled` in `subdesk show` (Apple's own state stays visible
        beside it) until it expires or is lifted. ID is a user id, appAccountToken,
        originalTransactionId or transactionId. DATE is 2026-12-31 or 2026-12-31T12:00 (UTC)
        or an offset like +7d. The operator is --operator, else the login user name.
        Every action is written to the audit log.
        """,
        options: [
            .value(.until, "DATE", "when the override ends (grant: required)"),
            .reason,
            .operatorName,
        ],
        action: .overrides,
        run: override)

    static let auditSpec: CommandSpec = CommandSpec(
        name: "audit", arguments: "[ID]", abstract: "the append-only log of operator actions",
        usage: "subdesk audit [ID] [--since DATE] [--limit N] [--json]",
        discussion: """
        The audit log, newest first as on the dashboard's :audit: every revalidation,
        override granted, revoked or lifted, link and sweep run, with when, who, what,
        target, reason and outcome. The log is append-only: the database refuses to change
        or delete its entries.
        """,
        options: [
            .value(.since, "DATE", "only entries since DATE"),
            .value(.limit, "N", "the newest N (default 1000)"),
        ],
        run: audit)

    static func operations(_ context: Context, store: Store) -> Operations {
        Operations(store: store, operatorName: context.operatorName)
    }

    static func date(_ text: String?, flag: String) throws -> Millis? {
        guard let text else { return nil }
        guard let d = OperatorDate.parse(text, now: DateText.nowMillis()) else {
            throw UsageError("--\(flag) \(text) is not a date (\(OperatorDate.accepted))")
        }
        return d
    }

    static func override(_ context: Context) throws -> Int32 {
        let p = context.arguments.positionals
        guard let verb = p.first else { throw UsageError("override needs grant, revoke, lift or list (see subdesk override --help)") }
        let store = try context.openStore(mode: verb == "list" ? .reading : .existing)
        let ops = operations(context, store: store)
        let reason = context.arguments.value(.reason) ?? ""
        do {
            let result: Override
            switch verb {
            case "grant":
                guard p.count == 2 else { throw UsageError("override grant takes one ID") }
                guard let until = try date(context.arguments.value(.until), flag: "until") else {
                    throw UsageError("override grant needs --until DATE")
                }
                result = try ops.grant(p[1], until: until, reason: reason)
            case "revoke":
                guard p.count == 2 else { throw UsageError("override revoke takes one ID") }
                result = try ops.revoke(p[1], until: try date(context.arguments.value(.until), flag: "until"), reason: reason)
            case "lift":
                guard p.count == 2, let id = Int64(p[1].trimmingCharacters(in: CharacterSet(charactersIn: "#"))) else {
                    throw UsageError("override lift takes an override number")
                }
                result = try ops.lift(overrideId: id, reason: reason)
            case "list":
                let list = try ops.overrides(for: p.count > 1 ? p[1] : nil)
                if context.wantsJSON { Output.json(list.map { $0.jsonObject() }); return 0 }
                if list.isEmpty { Output.line("no overrides"); return 0 }
                let now = DateText.nowMillis()
                for o in list { Output.line(describe(o, now: now)) }
                return 0
            default:
                throw UsageError("unknown override action \(SafeText.sanitize(verb)) (grant, revoke, lift or list)")
            }
            let inForce = try ops.inForce(result.originalTransactionId, now: DateText.nowMillis())
            if context.wantsJSON {
                var object = result.jsonObject()
                object["inForce"] = inForce
                Output.json(object)
            } else {
                Output.line(describe(result, now: DateText.nowMillis()))
                Output.line(inForce)
            }
            return 0
        } catch let e as OperationError {
            Output.error(e.description)
            return 2
        }
    }

    static func describe(_ o: Override, now: Millis) -> String {
        let until = o.until.map { "until \(DateText.minute($0)) UTC" } ?? "until lifted"
        var state = o.isInForce(at: now) ? "in force" : (o.lifted != nil ? "lifted" : (o.until.map { $0 <= now } == true ? "expired" : "not yet"))
        if let lifted = o.lifted { state += " \(DateText.minute(lifted)) by \(SafeText.sanitize(o.liftedBy ?? "?")): \(SafeText.sanitize(o.liftReason ?? ""))" }
        return "#\(o.id)  \(o.kind.rawValue) \(o.originalTransactionId) \(until)  by \(SafeText.sanitize(o.operatorName)) at \(DateText.minute(o.created)) UTC: \(SafeText.sanitize(o.reason))  [\(state)]"
    }

    static func audit(_ context: Context) throws -> Int32 {
        let store = try context.openStore(mode: .reading)
        let since = try context.arguments.value(.since).map(ListCommands.parseSince)
        var targets: [String]?
        if let id = context.arguments.positionals.first {
            do { targets = try operations(context, store: store).subscriptionIds(id) } catch let e as OperationError {
                Output.error(e.description)
                return 2
            }
        }
        // Newest first, as the dashboard shows it.
        let named = try context.appsToName()
        let entries = try store.audit.entries(since: since, targets: targets, limit: try context.arguments.limit() ?? 1000,
                                      app: try context.appScope(), readsApp: named != nil).reversed()
        if context.wantsJSON {
            Output.json(entries.map { e -> [String: Any] in
                var o = e.jsonObject()
                if let named { o["app"] = named.appJSON(ofRecord: e.bundleId) }
                return o
            })
            return 0
        }
        if entries.isEmpty { Output.line("the audit log has no entries\(targets == nil ? "" : " for that target")"); return 0 }
        for e in entries {
            var line = "\(DateText.second(e.at)) UTC  \(SafeText.sanitize(e.operatorName))  \(e.action)"
            if let named { line += "  app \(SafeText.sanitize(named.name(ofRecord: e.bundleId)))" }
            if let t = e.target { line += "  \(SafeText.sanitize(t))" }
            line += "  -> \(SafeText.sanitize(e.outcome))"
            if let r = e.reason { line += "  reason: \(SafeText.sanitize(r))" }
            if let d = e.detail { line += "  (\(SafeText.sanitize(d)))" }
            Output.line(line)
        }
        return 0
    }
}
