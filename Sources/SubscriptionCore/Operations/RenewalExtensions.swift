import Foundation

/// Renewal-date extensions: what an operator does after an outage. Apple's rules are
/// checked before Apple is asked (1-90 days, a reason code 0-3, at most two extensions of
/// one subscription in 365 days), every request is kept and audited with its reason, and
/// a mass extension is followed until Apple reports it complete.
extension Revalidator {
    public static let extensionReasonCodes = [0: "undeclared", 1: "customer satisfaction", 2: "other", 3: "service issue or outage"]

    public static func checkExtension(days: Int, reasonCode: Int, reason: String) throws {
        guard (1...90).contains(days) else {
            throw OperationError("an extension is 1 to 90 days; \(days) is not")
        }
        guard extensionReasonCodes[reasonCode] != nil else {
            throw OperationError("the reason code is 0 (undeclared), 1 (customer satisfaction), 2 (other) or 3 (service issue or outage); \(reasonCode) is none of them")
        }
        guard !reason.trimmingCharacters(in: .whitespaces).isEmpty else {
            throw OperationError("an extension needs a reason for the audit log (--reason)")
        }
    }

    /// Extends one subscription's renewal date at Apple, then revalidates it so the store
    /// holds Apple's signed new expiry.
    public func extendRenewalDate(_ id: String, days: Int, reasonCode: Int, reason: String) throws -> RenewalExtension {
        try Revalidator.checkExtension(days: days, reasonCode: reasonCode, reason: reason)
        let store = try openStore()
        let otid = try Operations(store: store, operatorName: operatorName).resolveSubscription(id)
        guard let row = try store.subscriptions.find(originalTransactionId: otid) else { throw OperationError("no subscription \(otid)") }
        let now = clock()
        let lastYear = try store.extensions.list(originalTransactionId: otid)
            .filter { $0.outcome == "extended" && $0.requested > now - 365 * 86_400_000 }
        guard lastYear.count < 2 else {
            throw OperationError("\(otid) was extended twice in the last 365 days (\(lastYear.map { DateText.minute($0.requested) }.joined(separator: ", ")) UTC); Apple allows no more")
        }
        guard row.state.ownershipType != .familyShared else {
            throw OperationError("\(otid) is family shared: Apple extends the purchaser's subscription, not a family member's")
        }
        let client = try appLookup(forSubscription: otid, store: store).lookup.serverAPI(for: ServerAPIAction.extend)
        let request = UUID().uuidString.lowercased()
        var record = RenewalExtension(id: 0, requestIdentifier: request, originalTransactionId: otid, productId: row.state.productId,
                                      storefronts: [], days: days, reasonCode: reasonCode, reason: reason, operatorName: operatorName,
                                      requested: now, outcome: "pending", effective: nil, succeeded: nil, failed: nil, completed: nil)
        do {
            let answer = try client.extendRenewalDate(originalTransactionId: otid, days: days, reasonCode: reasonCode,
                                                      requestIdentifier: request, environment: AppStoreEnvironment(rawValue: row.state.environment))
            record.outcome = answer.success ? "extended" : "refused: Apple answered success false"
            record.effective = answer.effectiveDate
        } catch {
            record.outcome = "refused: \(error)"
        }
        try store.write {
            record.id = try store.extensions.record(record)
            try store.audit.append(AuditEntry(at: now, operatorName: operatorName, action: .extend, target: otid, reason: reason,
                                             outcome: record.outcome == "extended"
                                                ? "extended by \(days) days" + (record.effective.map { " to \(DateText.minute($0)) UTC" } ?? "")
                                                : record.outcome,
                                             detail: "request \(request), reason code \(reasonCode)"))
        }
        guard record.outcome == "extended" else { throw OperationError("Apple did not extend \(otid): \(record.outcome)") }
        _ = try? revalidate(otid, store: store, reason: "after extension \(request)")
        return record
    }

    /// Where a mass extension of `productId` goes: Apple extends a product for the app that
    /// sells it (the token's `bid`), so each app and environment whose subscriptions in the
    /// store are of the product, or only those of the app `bundleId` names (`--app`). A
    /// configuration without `[app]` sections, and no app named, asks its one app in its one
    /// environment, as before apps had sections. Refused when no app (or not the named one)
    /// has a subscription of the product: Apple would be asked for the wrong app.
    public func massExtensionTargets(productId: String, app bundleId: String? = nil) throws -> [AppleTarget] {
        let targets = appleTargets
        let scoped = bundleId.map { b in targets.filter { $0.bundleId == b } } ?? targets
        guard policy.appsFromSections || bundleId != nil else { return scoped }
        let selling = try openStore().subscriptions.appsSelling(productId: productId)
        let found = scoped.filter { target in
            selling.contains { ($0.bundleId == target.bundleId || ($0.bundleId == nil && appLookups.count == 1))
                               && $0.environment == target.environment.rawValue }
        }
        guard found.isEmpty else { return found }
        if let bundleId {
            let label = appLookups.first { $0.bundleId == bundleId }?.label ?? bundleId
            throw OperationError("app \(label) has no subscription of product \(productId) in this store"
                                 + (selling.isEmpty ? "" : " (the apps that have: \(Self.sellers(selling, appLookups)))")
                                 + ": Apple extends a product only for the app that sells it")
        }
        throw OperationError("product \(productId) is in no configured app's subscriptions in this store"
                             + (selling.isEmpty ? "" : " in the environments asked (it is in \(Self.sellers(selling, appLookups)))")
                             + " (apps: \(appLookups.map(\.label).joined(separator: ", "))): check the product id")
    }

    /// `recipes (com.example.recipes) Sandbox, com.example.other Production`: who has a product, as the store says.
    private static func sellers(_ selling: [(bundleId: String?, environment: String)], _ apps: [AppLookup]) -> String {
        selling.map { s in
            (s.bundleId.map { b in apps.first { $0.bundleId == b }?.label ?? b } ?? "an unknown app") + " " + s.environment
        }.joined(separator: ", ")
    }

    /// Asks Apple to extend every active subscriber of `productId` (in `storefronts`, or
    /// all) for the app `target` names (nil: the only, or first, app), then polls the status
    /// every `pollEvery` seconds, telling `progress`, until Apple reports it complete or
    /// `wait` seconds pass (the request stays pending and `extensionStatus` asks again later).
    public func extendForAllActive(productId: String, days: Int, reasonCode: Int, reason: String, storefronts: [String],
                                   environment: AppStoreEnvironment, target: AppleTarget? = nil, wait: TimeInterval,
                                   pollEvery: TimeInterval = 5,
                                   progress: ((MassExtensionStatus) -> Void)? = nil) throws -> RenewalExtension {
        try Revalidator.checkExtension(days: days, reasonCode: reasonCode, reason: reason)
        let client = try appLookup(for: target).lookup.serverAPI(for: ServerAPIAction.extendAll)
        let store = try openStore()
        let request = UUID().uuidString.lowercased()
        let now = clock()
        try client.extendForAllActive(productId: productId, days: days, reasonCode: reasonCode, requestIdentifier: request,
                                      storefronts: storefronts, environment: environment)
        try store.write {
            try store.extensions.record(RenewalExtension(id: 0, requestIdentifier: request, originalTransactionId: nil, productId: productId,
                                                       storefronts: storefronts, days: days, reasonCode: reasonCode, reason: reason,
                                                       operatorName: operatorName, requested: now, outcome: "pending", effective: nil,
                                                       succeeded: nil, failed: nil, completed: nil))
            try store.audit.append(AuditEntry(at: now, operatorName: operatorName, action: .extendAll, target: productId, reason: reason,
                                             outcome: "asked Apple to extend every active subscriber by \(days) days",
                                             detail: "request \(request), reason code \(reasonCode)"
                                                + (storefronts.isEmpty ? "" : ", storefronts \(storefronts.joined(separator: ","))")
                                                + (target.map { ", app \($0.label), \($0.environment)" } ?? "")))
        }
        return try followMassExtension(request, environment: environment, target: target, wait: wait, pollEvery: pollEvery,
                                       progress: progress)
    }

    /// Asks Apple how a mass extension is going until it is complete or `wait` passes, and
    /// keeps what it said; signed for the app `target` names (nil: the only, or first, app).
    public func followMassExtension(_ request: String, environment: AppStoreEnvironment, target: AppleTarget? = nil, wait: TimeInterval,
                                    pollEvery: TimeInterval = 5,
                                    progress: ((MassExtensionStatus) -> Void)? = nil) throws -> RenewalExtension {
        let store = try openStore()
        guard let record = try store.extensions.find(requestIdentifier: request), let productId = record.productId else {
            throw OperationError("no mass extension with request identifier \(request) in this store")
        }
        let client = try appLookup(for: target).lookup.serverAPI(for: ServerAPIAction.followExtension)
        let deadline = Date().addingTimeInterval(wait)
        while true {
            let status = try client.massExtensionStatus(productId: productId, requestIdentifier: request, environment: environment)
            progress?(status)
            if status.complete {
                try store.extensions.update(requestIdentifier: request, outcome: "complete", succeeded: status.succeededCount,
                                          failed: status.failedCount, completed: status.completeDate ?? clock())
                try store.write {
                    try store.audit.append(AuditEntry(at: clock(), operatorName: operatorName, action: .extendAll, target: productId,
                                                     reason: record.reason,
                                                     outcome: "complete: \(status.succeededCount ?? 0) extended, \(status.failedCount ?? 0) failed",
                                                     detail: "request \(request)"))
                }
                break
            }
            try store.extensions.update(requestIdentifier: request, outcome: "pending", succeeded: status.succeededCount,
                                      failed: status.failedCount, completed: nil)
            if Date().addingTimeInterval(pollEvery) > deadline { break }
            Thread.sleep(forTimeInterval: pollEvery)
        }
        return try store.extensions.find(requestIdentifier: request) ?? record
    }

    /// What Apple's RENEWAL_EXTENSION/SUMMARY notification for `request` said, when it has
    /// arrived: its counts beside the ones the status endpoint gave.
    public func summaryNotification(for request: String) throws -> (succeeded: Int64?, failed: Int64?)? {
        let store = try openStore()
        for stored in try store.notifications.received(type: .renewalExtension, since: 0).reversed() {
            guard let notification = try store.notifications.find(uuid: stored.uuid),
                  let summary = RenewalExtensionSummary.read(notification.body), summary.requestIdentifier == request else { continue }
            return (summary.succeeded, summary.failed)
        }
        return nil
    }
}

/// The `summary` of a RENEWAL_EXTENSION/SUMMARY body, read from the stored bytes (intake
/// verified them when they arrived).
enum RenewalExtensionSummary {
    static func read(_ body: Data) -> (requestIdentifier: String?, succeeded: Int64?, failed: Int64?)? {
        guard let jws = ApplePayloads.signedPayload(body: body), let data = ApplePayloads.payload(ofJWS: jws),
              let payload = try? JSONFields(data: data, path: "payload"), let summary = try? payload.object("summary") else { return nil }
        return ((try? summary.string("requestIdentifier")) ?? nil, (try? summary.int64("succeededCount")) ?? nil,
                (try? summary.int64("failedCount")) ?? nil)
    }
}
