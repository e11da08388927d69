import Foundation

/// An operator action refused before anything was written, with the reason.
public struct OperationError: Error, CustomStringConvertible, Equatable {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Operator actions (overrides now; revalidation and sweeps through `Revalidator`), each
/// appended to the audit log in the same write as its effect. The dashboard and the
/// command line share this one implementation.
public final class Operations {
    public let store: Store
    public let operatorName: String

    public init(store: Store, operatorName: String) {
        self.store = store
        self.operatorName = store.audit.operatorOfRecord(operatorName)
    }

    /// The operator name for this process: `--operator`, else the login name.
    public static func defaultOperator(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        environment["USER"].flatMap { $0.isEmpty ? nil : $0 } ?? environment["LOGNAME"] ?? ProcessInfo.processInfo.userName
    }

    /// The one subscription `id` names: an originalTransactionId, a transactionId, or a
    /// user id / appAccountToken whose subscriber has exactly one subscription.
    public func resolveSubscription(_ id: String) throws -> String {
        if try store.subscriptions.find(originalTransactionId: id) != nil { return id }
        if let t = try store.transactions.find(id: id), try store.subscriptions.find(originalTransactionId: t.originalTransactionId) != nil {
            return t.originalTransactionId
        }
        guard let subscriber = try store.subscribers.lookup(id) else {
            throw OperationError("no subscriber, subscription or transaction matches \(id)")
        }
        let subs = try store.subscriptions.of(subscriberId: subscriber.id)
        guard subs.count == 1 else {
            let ids = subs.map(\.state.originalTransactionId).joined(separator: ", ")
            throw OperationError("\(id) has \(subs.count) subscriptions (\(ids)); name one by its originalTransactionId")
        }
        return subs[0].state.originalTransactionId
    }

    private func requireReason(_ reason: String) throws -> String {
        let trimmed = reason.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { throw OperationError("a reason is required") }
        return trimmed
    }

    /// Grants entitlement until `until`, whatever Apple's state says.
    public func grant(_ id: String, until: Millis, reason: String, now: Millis = DateText.nowMillis()) throws -> Override {
        guard until > now else { throw OperationError("--until \(DateText.minute(until)) UTC is not in the future") }
        return try place(.grant, id, until: until, reason: reason, now: now)
    }

    /// Withdraws entitlement until `until` (or until lifted), whatever Apple's state says.
    public func revoke(_ id: String, until: Millis? = nil, reason: String, now: Millis = DateText.nowMillis()) throws -> Override {
        if let until, until <= now { throw OperationError("--until \(DateText.minute(until)) UTC is not in the future") }
        return try place(.revoke, id, until: until, reason: reason, now: now)
    }

    private func place(_ kind: Override.Kind, _ id: String, until: Millis?, reason: String, now: Millis) throws -> Override {
        let reason = try requireReason(reason)
        let otid = try resolveSubscription(id)
        return try store.write {
            var o = Override(id: 0, originalTransactionId: otid, kind: kind, until: until, reason: reason,
                             operatorName: operatorName, created: now)
            o.id = try store.overrides.insert(o)
            try store.audit.append(AuditEntry(at: now, operatorName: operatorName, action: .placing(kind),
                                             target: otid, reason: reason, outcome: "override #\(o.id) placed; " + (try inForce(otid, now: now)),
                                             detail: until.map { "until \(DateText.minute($0)) UTC" } ?? "until lifted"))
            return o
        }
    }

    /// Deletes quarantine entries last seen before `before`, audited with how many and how
    /// many body bytes went. The one way quarantined bodies are ever deleted.
    public func purgeQuarantine(before: Millis, reason: String, now: Millis = DateText.nowMillis()) throws -> (entries: Int, bytes: Int64) {
        let reason = try requireReason(reason)
        guard before <= now else { throw OperationError("--before \(DateText.minute(before)) UTC is in the future") }
        return try store.write {
            let purged = try store.quarantine.purge(before: before)
            try store.audit.append(AuditEntry(at: now, operatorName: operatorName, action: .quarantinePurge, target: nil,
                                             reason: reason, outcome: "\(purged.entries) entries deleted",
                                             detail: "last seen before \(DateText.minute(before)) UTC; \(purged.bytes) body bytes"))
            return purged
        }
    }

    /// Links an application user id to the subscriber owning the subscription `id` names,
    /// audited with the previous and the new owner. Moving a subscription away from another
    /// user id needs `force`.
    public func link(userId: String, to id: String, force: Bool, now: Millis = DateText.nowMillis()) throws -> (otid: String, previousUser: String?) {
        let otid = try store.transactions.find(id: id)?.originalTransactionId ?? id
        guard let row = try store.subscriptions.find(originalTransactionId: otid) else {
            throw OperationError("no subscription with originalTransactionId or transactionId \(id)")
        }
        let previous = row.subscriber.userId
        if let previous, previous != userId, !force {
            throw OperationError("subscription \(otid) is linked to user \(previous); re-linking it to \(userId) moves it away "
                                 + "from that user: pass --force to do so")
        }
        try store.write {
            try store.subscribers.link(userId, originalTransactionId: otid)
            // Linking again to the user it already has moves nothing: audited as such, not as a move.
            let detail = previous == userId ? "already linked to user \(userId): no change of owner"
                : "previous owner: " + (previous.map { "user \($0)" } ?? "subscriber #\(row.subscriber.id), no user id")
                    + "; new owner: user \(userId)"
            try store.audit.append(AuditEntry(at: now, operatorName: operatorName, action: .link, target: otid, reason: nil,
                                             outcome: "linked to user \(userId)", detail: detail))
        }
        return (otid, previous)
    }

    /// Ends an override before its time.
    public func lift(overrideId: Int64, reason: String, now: Millis = DateText.nowMillis()) throws -> Override {
        let reason = try requireReason(reason)
        return try store.write {
            guard let o = try store.overrides.find(id: overrideId) else { throw OperationError("no override #\(overrideId)") }
            guard o.lifted == nil else {
                throw OperationError("override #\(overrideId) was already lifted by \(o.liftedBy ?? "?") at \(DateText.minute(o.lifted ?? 0)) UTC")
            }
            _ = try store.overrides.lift(id: overrideId, by: operatorName, reason: reason, at: now)
            try store.audit.append(AuditEntry(at: now, operatorName: operatorName, action: .overrideLift,
                                             target: o.originalTransactionId, reason: reason,
                                             outcome: "override #\(overrideId) lifted; " + (try inForce(o.originalTransactionId, now: now))))
            return try store.overrides.find(id: overrideId) ?? o
        }
    }

    /// What decides a subscription's entitlement at `now`, in words: the newest override in
    /// force, the ones it covers (a revoke placed over a grant leaves the grant underneath: it
    /// decides again once the revoke ends), or Apple's state when none is in force.
    public func inForce(_ otid: String, now: Millis) throws -> String {
        let overrides = try store.overrides.list(originalTransactionIds: [otid])
            .filter { $0.isInForce(at: now) }.sorted { ($0.created, $0.id) > ($1.created, $1.id) }
        func describe(_ o: Override) -> String {
            "\(o.kind.rawValue) #\(o.id) (\(o.entitles ? "entitled" : "not entitled") "
                + (o.until.map { "until \(DateText.minute($0)) UTC" } ?? "until lifted") + ")"
        }
        guard let top = overrides.first else {
            let apple = try store.subscriptions.history(originalTransactionId: otid)
            let state = StateDerivation.derive(originalTransactionId: otid, transactions: apple.transactions,
                                               renewal: apple.renewal, events: apple.events, now: now)
            return "in force now: no override; Apple's state decides (\(state?.entitled == true ? "entitled" : "not entitled"))"
        }
        var text = "in force now: " + describe(top)
        if overrides.count > 1 { text += "; underneath: " + overrides.dropFirst().map(describe).joined(separator: ", ") }
        return text
    }

    /// Overrides for the subscriptions `id` names (every one of a subscriber), or all.
    public func overrides(for id: String?) throws -> [Override] {
        guard let id else { return try store.overrides.list() }
        return try store.overrides.list(originalTransactionIds: try subscriptionIds(id))
    }

    /// Every originalTransactionId `id` names.
    public func subscriptionIds(_ id: String) throws -> [String] {
        if let otid = try? resolveSubscription(id) { return [otid] }
        guard let s = try store.subscribers.lookup(id) else { throw OperationError("no subscriber, subscription or transaction matches \(id)") }
        return try store.subscriptions.of(subscriberId: s.id).map(\.state.originalTransactionId)
    }
}

/// Entitlement as support should act on it: Apple's, unless an override is in force.
public struct Entitlement: Equatable, Sendable {
    public var entitled: Bool
    public var appleEntitled: Bool
    public var override: Override?

    public static func of(_ state: SubscriptionState, overrides: [Override], now: Millis) -> Entitlement {
        let inForce = overrides.filter { $0.originalTransactionId == state.originalTransactionId && $0.isInForce(at: now) }
            .max { ($0.created, $0.id) < ($1.created, $1.id) }
        return Entitlement(entitled: inForce?.entitles ?? state.entitled, appleEntitled: state.entitled, override: inForce)
    }
}
