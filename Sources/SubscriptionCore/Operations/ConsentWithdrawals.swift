import Foundation

/// A parent's or guardian's withdrawal of consent (RESCIND_CONSENT): Apple stops the app
/// from launching for that user, and the operator has to act on it (end the account's
/// access, delete data, tell the family). Derived, not stored apart: the notification is
/// the withdrawal, the subscriptions are those whose stored transactions carry its
/// appTransactionId, and "handled" is a `consent_handled` audit entry naming its UUID.
public struct ConsentWithdrawal: Sendable {
    /// The marker the feed, the subscriber list, `show` and the detail show.
    public static let badge = "consent withdrawn"

    public var notificationUUID: String
    public var signedDate: Millis
    public var receivedDate: Millis
    public var environment: String?
    /// The app download it names, from the nested `signedAppTransactionInfo` (verified at intake).
    public var appTransaction: AppTransaction?
    /// The subscriptions it concerns: those whose transactions carry its appTransactionId
    /// now (a purchase stored after the notification counts), else the one intake found.
    public var originalTransactionIds: [String]
    public var handled: AuditEntry?

    public var appTransactionId: String? { appTransaction?.appTransactionId }
    /// The app whose download it names, by the bundle id Apple signed.
    public var bundleId: String? { appTransaction?.bundleId }
    public var isHandled: Bool { handled != nil }

    /// `handled by ana 2026-12-02 18:15 UTC: <reason>` or `open`.
    public var statusText: String {
        guard let h = handled else { return "open" }
        return "handled by \(h.operatorName) \(DateText.minute(h.at)) UTC" + (h.reason.map { ": \($0)" } ?? "")
    }

    public func jsonObject() -> [String: Any] {
        var o: [String: Any] = [
            "notificationUUID": notificationUUID, "signedDate": signedDate, "receivedDate": receivedDate,
            "environment": environment as Any? ?? NSNull(), "appTransactionId": appTransactionId as Any? ?? NSNull(),
            "appTransaction": appTransaction?.jsonObject() as Any? ?? NSNull(),
            "originalTransactionIds": originalTransactionIds, "handled": isHandled,
        ]
        if let h = handled {
            o["handledBy"] = h.operatorName
            o["handledAt"] = h.at
            o["handledReason"] = h.reason as Any? ?? NSNull()
        }
        return o
    }
}

extension ConsentWithdrawal {
    /// The first `consent_handled` audit entry of each of these notification UUIDs.
    static func handled(in store: Store, uuids: [String]) throws -> [String: AuditEntry] {
        guard !uuids.isEmpty else { return [:] }
        var byTarget: [String: AuditEntry] = [:]
        for e in try store.audit.entries(targets: uuids, limit: 100_000) where e.kind == .consentHandled {
            if let t = e.target, byTarget[t] == nil { byTarget[t] = e }
        }
        return byTarget
    }

    /// Every stored consent withdrawal, newest first; only those not yet handled unless
    /// `includeHandled`; with `app`, only its.
    public static func load(store: Store, includeHandled: Bool = true, app: AppScope? = nil) throws -> [ConsentWithdrawal] {
        try made(from: try store.notifications.consentWithdrawals(app: app), store: store, includeHandled: includeHandled)
    }

    /// The withdrawals these stored RESCIND_CONSENT notifications are, in their order.
    private static func made(from notifications: [StoredNotification], store: Store,
                             includeHandled: Bool = true) throws -> [ConsentWithdrawal] {
        let handled = try ConsentWithdrawal.handled(in: store, uuids: notifications.map(\.event.notificationUUID))
        var list: [ConsentWithdrawal] = []
        for n in notifications {
            let uuid = n.event.notificationUUID
            if !includeHandled, handled[uuid] != nil { continue }
            let app = appTransaction(body: n.body)
            var otids = try app?.appTransactionId.map { try store.transactions.originalTransactionIds(appTransactionId: $0) } ?? []
            if otids.isEmpty, let found = n.event.originalTransactionId { otids = [found] }
            list.append(ConsentWithdrawal(notificationUUID: uuid, signedDate: n.event.signedDate, receivedDate: n.receivedDate,
                                          environment: n.event.environment, appTransaction: app,
                                          originalTransactionIds: otids, handled: handled[uuid]))
        }
        return list
    }

    /// The withdrawals that concern any of these subscriptions.
    /// A subscriber's detail asks this on every look-up: only the withdrawals that may
    /// concern them are read whole. One concerns a subscription when its app transaction is
    /// on one of the subscription's transactions, or, when no stored subscription holds its
    /// app transaction, when intake found the subscription as it arrived. So with none of
    /// their transactions naming an app transaction, only the bodies of the withdrawals intake
    /// found for them are read; otherwise every withdrawal's, in one query, to read its app
    /// transaction.
    public static func concerning(_ originalTransactionIds: Set<String>, store: Store) throws -> [ConsentWithdrawal] {
        guard !originalTransactionIds.isEmpty else { return [] }
        let theirApps = Set(try store.transactions.appTransactionIds(originalTransactionIds: Array(originalTransactionIds)).values
            .flatMap { $0 })
        func foundForThem(_ otid: String?) -> Bool { otid.map(originalTransactionIds.contains) ?? false }
        let candidates: [StoredNotification]
        if theirApps.isEmpty {
            // Only a withdrawal found for them can concern them: their keys, then those bodies.
            candidates = try store.notifications.consentWithdrawalKeys().filter { foundForThem($0.originalTransactionId) }
                .compactMap { try store.notifications.find(uuid: $0.uuid) }
        } else {
            candidates = try store.notifications.consentWithdrawals().filter { n in
                foundForThem(n.event.originalTransactionId)
                    || appTransaction(body: n.body)?.appTransactionId.map(theirApps.contains) == true
            }
        }
        return try made(from: candidates, store: store).filter { !Set($0.originalTransactionIds).isDisjoint(with: originalTransactionIds) }
    }


    /// The app transaction a stored RESCIND_CONSENT body carries. The body was verified when
    /// it was stored (and the store keeps only what was), so its payload is read, not checked again.
    static func appTransaction(body: Data) -> AppTransaction? {
        guard let payload = ApplePayloads.nestedPayload(body: body, field: "signedAppTransactionInfo"),
              let json = try? JSONFields(data: payload, path: "signedAppTransactionInfo") else { return nil }
        return try? AppTransaction(json: json)
    }
}

extension Operations {
    /// Marks a consent withdrawal handled: one audit entry (action `consent_handled`, the
    /// notification UUID as its target) saying what was done and which subscriptions it
    /// concerned. A withdrawal is handled once; a second attempt names who handled it.
    @discardableResult
    public func markConsentHandled(_ uuid: String, reason: String, now: Millis = DateText.nowMillis()) throws -> AuditEntry {
        let trimmed = reason.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { throw OperationError("a reason is required (say what was done for the family)") }
        return try store.write {
            guard let n = try store.notifications.event(uuid: uuid) else {
                throw OperationError("no stored notification \(uuid.escapingControlCharacters())")
            }
            guard n.type == .rescindConsent else {
                throw OperationError("notification \(uuid) is a \(n.typeAndSubtype), not a RESCIND_CONSENT")
            }
            if let earlier = try ConsentWithdrawal.handled(in: store, uuids: [uuid])[uuid] {
                throw OperationError("consent withdrawal \(uuid) was already handled by \(earlier.operatorName) at \(DateText.minute(earlier.at)) UTC")
            }
            let withdrawal = try ConsentWithdrawal.load(store: store).first { $0.notificationUUID == uuid }
            let concerned = withdrawal?.originalTransactionIds ?? []
            var entry = AuditEntry(at: now, operatorName: operatorName, action: .consentHandled, target: uuid,
                                   reason: trimmed, outcome: "consent withdrawal marked handled",
                                   detail: "app transaction \(withdrawal?.appTransactionId ?? "?"); "
                                       + (concerned.isEmpty ? "no stored subscription" : "subscriptions " + concerned.joined(separator: ", ")))
            entry.id = try store.audit.append(entry)
            return entry
        }
    }
}

extension ConsentWithdrawal {
    /// How many withdrawals no operator has marked handled yet (with `app`, of that app).
    /// Reads no bodies.
    public static func openCount(store: Store, app: AppScope? = nil) throws -> Int {
        let keys = try store.notifications.consentWithdrawalKeys(app: app)
        guard !keys.isEmpty else { return 0 }
        let handled = try ConsentWithdrawal.handled(in: store, uuids: keys.map(\.uuid))
        return keys.filter { handled[$0.uuid] == nil }.count
    }
}

/// Which subscriptions of a page an open consent withdrawal concerns, for the subscriber
/// list's badge: the list asks for every page it loads, so this reads the withdrawals'
/// keys through their partial index, the page's app transactions in one query, and each
/// withdrawal's body once per process (a stored body never changes under its UUID).
public final class ConsentBadgeIndex {
    /// The appTransactionId each withdrawal names, by notification UUID; nil when unreadable.
    private var appTransactionIdByUUID: [String: String?] = [:]

    public init() {}

    /// What the list shows for one page.
    public struct Marks: Equatable, Sendable {
        /// The page's subscriptions an open withdrawal concerns.
        public var withdrawn: Set<String> = []
        /// Open withdrawals in the whole store, whichever subscriptions they concern.
        public var openCount = 0

        public init(withdrawn: Set<String> = [], openCount: Int = 0) {
            self.withdrawn = withdrawn
            self.openCount = openCount
        }
    }

    /// The original transaction ids among `originalTransactionIds` that an open (not yet
    /// handled) withdrawal concerns (its appTransactionId is on one of their transactions,
    /// or intake found the subscription when the withdrawal arrived), and how many are open.
    public func marks(among originalTransactionIds: [String], store: Store) throws -> Marks {
        let keys = try store.notifications.consentWithdrawalKeys()
        guard !keys.isEmpty else { return Marks() }
        let handled = try ConsentWithdrawal.handled(in: store, uuids: keys.map(\.uuid))
        let open = keys.filter { handled[$0.uuid] == nil }
        return Marks(withdrawn: try withdrawn(among: originalTransactionIds, open: open, store: store), openCount: open.count)
    }

    private func withdrawn(among originalTransactionIds: [String], open: [(uuid: String, originalTransactionId: String?)],
                           store: Store) throws -> Set<String> {
        guard !originalTransactionIds.isEmpty, !open.isEmpty else { return [] }
        let page = Set(originalTransactionIds)
        var marked = Set(open.compactMap(\.originalTransactionId)).intersection(page)
        var openApps = Set<String>()
        for key in open {
            if let id = try appTransactionId(key.uuid, store: store) { openApps.insert(id) }
        }
        guard !openApps.isEmpty else { return marked }
        for (otid, apps) in try store.transactions.appTransactionIds(originalTransactionIds: originalTransactionIds)
        where !apps.isDisjoint(with: openApps) {
            marked.insert(otid)
        }
        return marked
    }

    private func appTransactionId(_ uuid: String, store: Store) throws -> String? {
        if let known = appTransactionIdByUUID[uuid] { return known }
        let id = try store.notifications.find(uuid: uuid).flatMap { ConsentWithdrawal.appTransaction(body: $0.body)?.appTransactionId }
        appTransactionIdByUUID[uuid] = .some(id)
        return id
    }
}
