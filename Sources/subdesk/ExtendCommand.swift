import Foundation
import SubscriptionCore
import TerminalUI

enum ExtendCommand {
    static let spec: CommandSpec = CommandSpec(
        name: "extend", arguments: "[ID]", abstract: "extend renewal dates at Apple: one subscription, or all active of a product",
        usage: """
        subdesk extend ID --days N --reason-code C --reason TEXT [--yes]
        subdesk extend --all --product PRODUCT --days N --reason-code C --reason TEXT
                       [--storefront USA,CAN] [--wait SECONDS] [--yes]
        subdesk extend --status REQUEST_ID [--wait SECONDS]
        subdesk extend --list [ID]
        """,
        discussion: """
        Extends renewal dates at Apple, as after an outage: one subscription (Extend a
        Subscription Renewal Date), or every active subscriber of a product (Extend
        Subscription Renewal Dates for All Active Subscribers), then follows the mass request
        (Get Status of Subscription Renewal Date Extensions) until Apple reports it complete
        or --wait (default 60 s) passes; --status follows it again later. A mass extension
        is asked of each app whose subscriptions in the store are of the product (or the one
        --app names), once per environment, each line naming its app; --json prints one
        document, {"extensions": [...]}, an entry per app and environment. Apple's rules are
        checked first: 1 to 90 days, a reason code (0 undeclared, 1 customer satisfaction,
        2 other, 3 service issue or outage), at most two extensions of one subscription in
        365 days, none of a family-shared one. Asks for confirmation on a terminal (--yes
        skips it; elsewhere --yes is required). Every request is kept and audited with its
        reason; a single extension is followed by a revalidation that stores Apple's new
        expiry. A local override stays for what Apple cannot do.
        """,
        options: [
            .value(.days, "N", "days to extend by, 1 to 90"),
            .value(.reasonCode, "C", "0 undeclared, 1 customer satisfaction, 2 other, 3 service issue or outage"),
            .value(.reason, "TEXT", "why, kept with the request and in the audit log"),
            .flag(.all, "every active subscriber of --product"),
            .value(.product, "PRODUCT", "the product whose active subscribers --all extends"),
            .value(.storefront, "USA,CAN", "with --all, only these storefronts"),
            .value(.status, "REQUEST_ID", "follow a mass extension request again"),
            .value(.wait, "SECONDS", "how long to follow a mass request (default 60)"),
            .flag(.yes, "extend without asking for confirmation"),
            .flag(.list, "the extension requests made, or those of ID"),
            .quiet,
        ],
        groups: [.apple],
        action: .extension_,
        run: run)

    static func run(_ context: Context) throws -> Int32 {
        let store = try context.openStore(mode: .existing)
        if context.arguments.has(.list) { return try list(context, store) }
        let revalidator = try context.makeRevalidator(maxConnections: 2)
        let wait = try context.arguments.value(.wait).map { text -> TimeInterval in
            guard let seconds = Double(text), seconds >= 0, seconds <= 3600 else { throw UsageError("--wait must be 0 to 3600 seconds, got \(text)") }
            return seconds
        } ?? 60
        let showProgress = isatty(STDERR_FILENO) == 1 && !context.arguments.has(.quiet)
        let progress: (MassExtensionStatus) -> Void = { status in
            guard showProgress else { return }
            FileHandle.standardError.write(Data("\r\u{1B}[Kextend: \(status.complete ? "complete" : "in progress"), \(status.succeededCount ?? 0) extended, \(status.failedCount ?? 0) failed".utf8))
        }
        let scope = try context.appScope()
        if let request = context.arguments.value(.status) {
            try requireKey(revalidator, ServerAPIAction.followExtension)
            guard let asked = try store.extensions.find(requestIdentifier: request), let product = asked.productId else {
                throw UsageError("no mass extension with request identifier \(request) in this store (subdesk extend --list)")
            }
            // The store does not say which app a request was for: the apps that sell its
            // product are asked in turn, one that does not know it passing to the next.
            let targets = try following { try revalidator.massExtensionTargets(productId: product, app: scope?.bundleId) }
            for (index, target) in targets.enumerated() {
                do {
                    let record = try following {
                        try revalidator.followMassExtension(request, environment: target.environment, target: target, wait: wait, progress: progress)
                    }
                    if showProgress { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
                    return report(record, revalidator: revalidator, context, prefix: revalidator.appleTargets.count > 1 ? "\(target.label) \(target.environment): " : "")
                } catch RevalidationError.http(_, let status, _, _, _) where [401, 404].contains(status) && index < targets.count - 1 {
                    continue
                }
            }
            return 1
        }
        guard let daysText = context.arguments.value(.days), let days = Int(daysText) else { throw UsageError("extend needs --days N (1 to 90)") }
        guard let codeText = context.arguments.value(.reasonCode), let code = Int(codeText) else {
            throw UsageError("extend needs --reason-code: 0 undeclared, 1 customer satisfaction, 2 other, 3 service issue or outage")
        }
        let reason = context.arguments.value(.reason) ?? ""
        do { try Revalidator.checkExtension(days: days, reasonCode: code, reason: reason) } catch let e as OperationError { throw UsageError(e.description) }
        let codeName = Revalidator.extensionReasonCodes[code] ?? "?"
        if context.arguments.has(.all) {
            guard let product = context.arguments.value(.product), context.arguments.positionals.isEmpty else {
                throw UsageError("extend --all needs --product PRODUCT and no ID")
            }
            let storefronts = context.arguments.value(.storefront).map { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).uppercased() } } ?? []
            try requireKey(revalidator, ServerAPIAction.extendAll)
            // One request per app that sells the product and environment, each signed for its app.
            let targets = try following { try revalidator.massExtensionTargets(productId: product, app: scope?.bundleId) }
            let several = revalidator.appleTargets.count > 1
            let apps = several ? " for " + targets.map { "\($0.label) \($0.environment)" }.joined(separator: " and ") : ""
            try confirm("Extend EVERY active subscriber of \(product)\(storefronts.isEmpty ? "" : " in \(storefronts.joined(separator: ","))")\(apps) by \(days) days (reason code \(code): \(codeName))?", context)
            var entries: [[String: Any]] = []
            var failed = false
            for target in targets {
                let prefix = several ? "\(target.label) \(target.environment): " : ""
                do {
                    let record = try following {
                        try revalidator.extendForAllActive(productId: product, days: days, reasonCode: code, reason: reason, storefronts: storefronts,
                                                           environment: target.environment, target: target, wait: wait, progress: progress)
                    }
                    if showProgress { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
                    if context.wantsJSON {
                        entries.append(jsonWithSummary(record, revalidator: revalidator).merging(appJSON(target)) { $1 })
                        failed = record.outcome.hasPrefix("refused") || failed
                    } else {
                        failed = report(record, revalidator: revalidator, context, prefix: prefix) != 0 || failed
                    }
                } catch let error as RevalidationError {
                    if showProgress { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
                    Output.error("\(prefix)\(error.description)")
                    entries.append(["error": error.description].merging(appJSON(target)) { $1 })
                    failed = true
                }
            }
            // One document, whatever the number of apps: an entry per app and environment.
            if context.wantsJSON { Output.json(["extensions": entries]) }
            return failed ? 1 : 0
        }
        guard let id = context.arguments.positionals.first, context.arguments.positionals.count == 1 else {
            throw UsageError("extend takes one ID, or --all --product PRODUCT (see subdesk extend --help)")
        }
        try requireKey(revalidator, ServerAPIAction.extend)
        try confirm("Extend \(id)'s renewal date by \(days) days (reason code \(code): \(codeName))?", context)
        do {
            let record = try revalidator.extendRenewalDate(id, days: days, reasonCode: code, reason: reason)
            return report(record, revalidator: revalidator, context)
        } catch let e as OperationError {
            if context.wantsJSON { Output.json(["error": e.description]) }
            Output.error(e.description)
            return 2
        } catch let e as RevalidationError {
            Output.error(e.description)
            return 1
        }
    }

    /// Refuses before the y/n question when the key settings are missing: an operator must
    /// not confirm an extension that cannot be sent.
    static func requireKey(_ revalidator: Revalidator, _ action: String) throws {
        do { try revalidator.requireServerAPI(for: action) } catch let e as RevalidationError { throw UsageError(e.description) }
    }

    /// A terminal user answers y; elsewhere --yes stands for the answer.
    static func confirm(_ question: String, _ context: Context) throws {
        if context.arguments.has(.yes) { return }
        guard isatty(STDIN_FILENO) == 1 else { throw UsageError("\(question) Not on a terminal: pass --yes to confirm") }
        FileHandle.standardError.write(Data("\(question) [y/N] ".utf8))
        guard let answer = readLine(), ["y", "yes"].contains(answer.lowercased()) else { throw UsageError("not extended") }
    }

    static func following<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch let e as OperationError { throw UsageError(e.description) }
    }

    static func json(_ e: RenewalExtension) -> [String: Any] {
        var o: [String: Any] = ["requestIdentifier": e.requestIdentifier, "days": e.days, "reasonCode": e.reasonCode, "reason": e.reason,
                                "operator": e.operatorName, "requested": DateText.iso(e.requested), "outcome": e.outcome]
        if let otid = e.originalTransactionId { o["originalTransactionId"] = otid }
        if let product = e.productId { o["productId"] = product }
        if !e.storefronts.isEmpty { o["storefronts"] = e.storefronts }
        if let effective = e.effective { o["effectiveDate"] = DateText.iso(effective) }
        if let succeeded = e.succeeded { o["succeededCount"] = succeeded }
        if let failed = e.failed { o["failedCount"] = failed }
        if let completed = e.completed { o["completeDate"] = DateText.iso(completed) }
        return o
    }

    static func describe(_ e: RenewalExtension) -> String {
        let target = e.originalTransactionId ?? "every active subscriber of \(e.productId ?? "?")"
            + (e.storefronts.isEmpty ? "" : " in \(e.storefronts.joined(separator: ","))")
        var text = "\(DateText.minute(e.requested)) UTC \(target) by \(e.days) days (request \(e.requestIdentifier)): \(SafeText.sanitize(e.outcome))"
        if let effective = e.effective { text += ", renews \(DateText.minute(effective)) UTC" }
        if e.originalTransactionId == nil { text += ", \(e.succeeded ?? 0) extended, \(e.failed ?? 0) failed" }
        return text
    }

    /// Which app and environment a mass extension entry is for.
    static func appJSON(_ target: Revalidator.AppleTarget) -> [String: Any] {
        ["app": target.app, "bundleId": target.bundleId as Any? ?? NSNull(), "environment": target.environment.rawValue]
    }

    /// The extension as JSON, with Apple's SUMMARY notification's counts once it has arrived.
    static func jsonWithSummary(_ e: RenewalExtension, revalidator: Revalidator) -> [String: Any] {
        var o = json(e)
        if e.originalTransactionId == nil, let summary = (try? revalidator.summaryNotification(for: e.requestIdentifier)) ?? nil {
            o["summaryNotification"] = ["succeededCount": summary.succeeded as Any, "failedCount": summary.failed as Any]
        }
        return o
    }

    /// Prints one extension; `prefix` names its app when several are configured.
    static func report(_ e: RenewalExtension, revalidator: Revalidator, _ context: Context, prefix: String = "") -> Int32 {
        if context.wantsJSON {
            Output.json(jsonWithSummary(e, revalidator: revalidator))
        } else {
            let summary = e.originalTransactionId == nil ? (try? revalidator.summaryNotification(for: e.requestIdentifier)) ?? nil : nil
            Output.line(prefix + describe(e))
            if let summary {
                Output.line(prefix + "Apple's RENEWAL_EXTENSION/SUMMARY notification: \(summary.succeeded ?? 0) extended, \(summary.failed ?? 0) failed")
            } else if e.originalTransactionId == nil && e.outcome == "complete" {
                Output.line(prefix + "Apple's RENEWAL_EXTENSION/SUMMARY notification has not arrived yet")
            } else if e.outcome == "pending" {
                Output.line(prefix + "still in progress at Apple: follow it with subdesk extend --status \(e.requestIdentifier)")
            }
        }
        return e.outcome.hasPrefix("refused") ? 1 : 0
    }

    static func list(_ context: Context, _ store: Store) throws -> Int32 {
        var records: [RenewalExtension]
        if let id = context.arguments.positionals.first {
            records = try store.extensions.list(originalTransactionId: try OperatorCommands.operations(context, store: store).resolveSubscription(id))
        } else {
            records = try store.extensions.list(originalTransactionId: nil)
        }
        records.sort { $0.requested > $1.requested }
        if context.wantsJSON { Output.json(records.map(json)); return 0 }
        if records.isEmpty { Output.line("no extensions"); return 0 }
        for r in records { Output.line(describe(r)) }
        return 0
    }
}
