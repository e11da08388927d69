import Foundation

/// What became of one body.
public enum IntakeOutcome: Equatable, Sendable {
    case stored(NotificationEvent)
    case duplicate(notificationUUID: String)
    /// Refused and quarantined; `reason` names its kind, field and fault.
    case rejected(reason: Refusal, quarantineId: Int64)
}


/// body -> decode -> verify -> dedupe -> apply -> commit, or quarantine.
///
/// Every body ends stored, a duplicate, or quarantined with its reason; only a
/// failure of the store itself, or a revocation check that could not be made
/// (`RevocationStatusUnavailable`), is thrown (the caller answers 5xx so Apple retries).
public final class Intake {
    public let store: Store
    let verifier: SignedPayloadVerifier
    public var policy: IntakePolicy
    /// What each notification type means: the derivation, the counts and V1 ordering read it.
    public let meanings: NotificationMeanings
    /// The rules the derivation counts by: `current` but in a test.
    public let rules: DerivationRules
    /// The `[forward]` targets each stored notification is owed to, in the write that stores it.
    public var forwarding = ForwardTargets()

    public init(store: Store, verifier: SignedPayloadVerifier, policy: IntakePolicy, meanings: NotificationMeanings = .standard,
                rules: DerivationRules = .current) {
        self.rules = rules
        self.store = store
        self.verifier = verifier
        self.policy = policy
        self.meanings = meanings
    }

    /// One notification decoded and verified, ready to apply.
    struct Decoded {
        var event: NotificationEvent
        var transactions: [TransactionRecord]
        var renewals: [RenewalRecord]
        var isDuplicate: Bool
        /// A V1 body's `latest_receipt`: kept so verifyReceipt can revalidate without an API key.
        var latestReceipt: String? = nil
        /// A V2 body's decoded JWS pieces, for storing it compactly without decoding it again;
        /// `check` turns them into `compact`.
        var pieces: NotificationPieces? = nil
        /// The body's compact form but for its headers' ids, made while it is checked.
        var compact: CompactBody.Prepared? = nil
        /// A V2 body's `signedPayload`: what identifies its content, whatever surrounds it.
        var signedPayload: String? = nil
        /// What the feed says beside `stored` (a summary's counts, a consumption request's reason).
        var feedDetail: String? = nil
        /// The app download a RESCIND_CONSENT names, to find its subscription again when it is
        /// stored (a purchase checked earlier in the same batch is stored by then).
        var appTransactionId: String? = nil
        /// The app the body was signed for (a V2 payload's bundleId, a V1 body's `bid`).
        var bundleId: String? = nil
    }

    /// Ingests one body. With `quarantine` false (a replay of an already quarantined body)
    /// a refusal is reported but not written again.
    ///
    /// - Parameter postedFor: the app the webhook URL names (`?app=NAME`): a body signed for
    ///   another app is refused and quarantined, never stored.
    @discardableResult
    public func ingest(_ body: Data, source: String? = nil, receivedAt: Millis = DateText.nowMillis(),
                       quarantine keep: Bool = true, postedFor: String? = nil) throws -> IntakeOutcome {
        try commit(try check(body, source: source, receivedAt: receivedAt, quarantine: keep, postedFor: postedFor))
    }

    /// A body decoded, verified and checked against the policy: what intake does before it
    /// needs the store's write lock. A batch checks its bodies first and then commits them
    /// in one write, so writers on several hosts verify side by side and take turns only
    /// to store.
    public struct CheckedBody {
        enum Verdict {
            case oversized
            case refused(Refusal)
            case decoded(Decoded)
        }
        let body: Data
        let digest: String
        let source: String?
        let receivedAt: Millis
        let keep: Bool
        let verdict: Verdict

        /// What storing this body changes that another writer might change at once: the
        /// notification, every subscription it carries records of, or a refused body's
        /// quarantine entry. Writers lock these (`Store.write(touching:)`).
        public var lockKeys: [String] {
            guard case .decoded(let d) = verdict else { return ["q:" + digest] }
            var keys = ["n:" + d.event.notificationUUID]
            if let otid = d.event.originalTransactionId { keys.append(otid) }
            keys += d.transactions.map(\.originalTransactionId) + d.renewals.map(\.originalTransactionId)
            return keys
        }
    }

    public func check(_ body: Data, source: String? = nil, receivedAt: Millis = DateText.nowMillis(),
                      quarantine keep: Bool = true, postedFor: String? = nil) throws -> CheckedBody {
        let digest = ContentDigest.sha256Hex(body)
        func checked(_ verdict: CheckedBody.Verdict) -> CheckedBody {
            CheckedBody(body: body, digest: digest, source: source, receivedAt: receivedAt, keep: keep, verdict: verdict)
        }
        if body.count > policy.maxBodyBytes { return checked(.oversized) }
        do {
            var decoded = try decode(body, digest: digest, postedFor: postedFor)
            if let pieces = decoded.pieces {
                try store.headers.register([pieces.outer.header] + pieces.nested.map(\.pieces.header))
                // Compacted here, where the work is spread over the checkers, not in the writer.
                decoded.compact = CompactBody.prepare(body, pieces: pieces)
                decoded.pieces = nil
            }
            return checked(.decoded(decoded))
        } catch let r as Refusal {
            return checked(.refused(r))
        } catch let v as VerificationError {
            return checked(.refused(Refusal(v)))
        } catch let f as DecodingFault {
            return checked(.refused(Refusal(f)))
        } catch let e as StoreError {
            throw e
        } catch let e as RevocationStatusUnavailable {
            // A responder that cannot be reached says nothing about the body: it is neither
            // stored nor quarantined, and the caller answers so that Apple sends it again.
            throw e
        } catch {
            return checked(.refused(Refusal(.other, field: "", fault: "\(error)")))
        }
    }

    /// Stores a checked body: the notification and what it changes, its refusal in the
    /// quarantine, or a duplicate noted as such.
    public func commit(_ c: CheckedBody) throws -> IntakeOutcome {
        let (body, digest, source, receivedAt, keep) = (c.body, c.digest, c.source, c.receivedAt, c.keep)
        let decoded: Decoded
        switch c.verdict {
        case .oversized:
            return try rejectOversized(prefix: body.prefix(Intake.keptPrefixBytes), trueLength: body.count, digest: digest,
                                       source: source, receivedAt: receivedAt, quarantine: keep)
        case .refused(let reason):
            return try store.write(touching: c.lockKeys) {
                try reject(body, digest: digest, reason: reason, source: source, receivedAt: receivedAt, keep: keep)
            }
        case .decoded(let d):
            decoded = d
        }
        if decoded.isDuplicate {
            try logDuplicate(decoded.event, app: decoded.bundleId, source: source, receivedAt: receivedAt)
            return .duplicate(notificationUUID: decoded.event.notificationUUID)
        }
        return try store.write(touching: c.lockKeys) {
            // A concurrent writer may have stored the same notification since we looked.
            if let existing = try store.notifications.digest(uuid: decoded.event.notificationUUID) {
                if try existing == digest || sameSignedPayload(decoded) {
                    try logDuplicate(decoded.event, app: decoded.bundleId, source: source, receivedAt: receivedAt)
                    return .duplicate(notificationUUID: decoded.event.notificationUUID)
                }
                return try reject(body, digest: digest, reason: differentContent(decoded.event.notificationUUID),
                                  source: source, receivedAt: receivedAt, keep: keep)
            }
            var decoded = decoded
            var rederive = true
            if decoded.event.originalTransactionId == nil, let app = decoded.appTransactionId,
               let concerned = try store.transactions.originalTransactionId(appTransactionId: app) {
                // Named on the notification only: this write holds no lock on that subscription,
                // and a withdrawal changes nothing its state is derived from.
                decoded.event.originalTransactionId = concerned
                rederive = false
            }
            try apply(decoded, body: body, digest: digest, source: source, receivedAt: receivedAt, rederive: rederive)
            return .stored(decoded.event)
        }
    }

    /// Whether the stored notification with this body's UUID carries the same signed payload:
    /// a redelivery that differs only around the JWS (white space, key order) is a duplicate.
    private func sameSignedPayload(_ decoded: Decoded) throws -> Bool {
        guard let jws = decoded.signedPayload,
              let stored = try store.notifications.find(uuid: decoded.event.notificationUUID) else { return false }
        let storedJWS = JWSBytes.signedPayloadFastPath(stored.body)
            ?? (try? JSONFields(data: stored.body, path: "body").string("signedPayload")) ?? nil
        return storedJWS == jws
    }

    private func differentContent(_ uuid: String) -> Refusal {
        Refusal(.conflict, field: "", fault: "notificationUUID \(uuid) is already stored with different content")
    }

    /// The feed's note on a consent withdrawal whose app download no stored purchase names.
    static let noStoredPurchase = " (no stored purchase)"

    /// How much of a body over the size limit the quarantine keeps.
    public static let keptPrefixBytes = 64 << 10

    /// Refuses a body over the size limit that the caller read only in part (CGI stops
    /// reading at the limit): its first bytes are kept with its true length and digest.
    public func rejectOversized(prefix: Data, trueLength: Int, digest: String, source: String?,
                                receivedAt: Millis = DateText.nowMillis(), quarantine keep: Bool = true) throws -> IntakeOutcome {
        try reject(prefix.prefix(Intake.keptPrefixBytes), digest: digest,
                   reason: Intake.oversizedReason(trueLength, limit: policy.maxBodyBytes),
                   source: source, receivedAt: receivedAt, keep: keep, trueLength: trueLength)
    }

    /// Ends the feed line of a body refused past the quarantine's budget.
    static let pastBudgetMark = "[body not kept: quarantine over its budget; more such bodies are counted on its entry]"

    public static func oversizedReason(_ length: Int, limit: Int) -> Refusal {
        Refusal(.oversized, field: "body", fault: "\(length) bytes is over the \(limit)-byte limit")
    }

    private func reject(_ body: Data, digest: String, reason refusal: Refusal, source: String?, receivedAt: Millis,
                        keep: Bool = true, trueLength: Int? = nil) throws -> IntakeOutcome {
        guard keep else { return .rejected(reason: refusal, quarantineId: 0) }
        let reason = refusal.description
        // Filed under the app the body names, when it can be read, and counted under it when
        // it is a configured app's.
        let app = trueLength == nil ? Intake.statedBundleId(body) : nil
        return try store.write {
            let kept = try store.quarantine.keep(body: body, reason: reason, kind: refusal.kind, source: source, receivedDate: receivedAt, bodySHA256: digest,
                                            trueLength: trueLength, budgetBytes: policy.quarantineBudgetBytes, bundleId: app)
            // The feed says when the quarantine is past its budget and kept only the digest;
            // past it, one line a minute tells of the flood (the quarantine entry counts every
            // body), so a client sending junk cannot grow the log by a row a request.
            let detail = kept.bodyKept ? reason : reason + " " + Intake.pastBudgetMark
            let floodLogged = kept.bodyKept ? false : try store.intakeLog.hasRefusal(saying: Intake.pastBudgetMark, since: receivedAt - 60_000)
            let entry = IntakeLogEntry(receivedDate: receivedAt, result: .rejected, detail: detail, source: source,
                                       rejection: refusal.kind)
            let counted = policy.countedApp(app)
            if floodLogged { try store.countIntake(entry, app: counted) } else { try store.logIntake(entry, app: counted) }
            return .rejected(reason: refusal, quarantineId: kept.id)
        }
    }

    /// The bundle id a refused body says it was signed for, when it can be read: a V2
    /// payload's (wherever its type carries it), a V1 body's `bid`. What it says, not what
    /// was verified: a quarantined body is kept for its app's operators to look at, and its
    /// app is only where to file it.
    static func statedBundleId(_ body: Data) -> String? {
        guard let json = try? JSONFields(data: body, path: "body") else { return nil }
        if let jws = try? json.string("signedPayload") {
            let segments = jws.split(separator: ".", omittingEmptySubsequences: false)
            guard segments.count == 3, let bytes = Base64URL.decodeUnpadded(segments[1]),
                  let payload = try? JSONFields(data: bytes, path: "payload"),
                  let decoded = try? NotificationPayloadV2(json: payload) else { return nil }
            return decoded.bundleId
        }
        return (try? json.string("bid")) ?? nil
    }

    /// Logs a redelivery, counted under the app the stored notification was signed for.
    private func logDuplicate(_ e: NotificationEvent, app: String?, source: String?, receivedAt: Millis) throws {
        try store.write {
            try store.logIntake(IntakeLogEntry(receivedDate: receivedAt, result: .duplicate, notificationUUID: e.notificationUUID,
                                               type: e.type.rawValue, subtype: e.subtype?.rawValue, originalTransactionId: e.originalTransactionId,
                                               productId: e.productId, environment: e.environment, source: source), app: app)
        }
    }

    // MARK: Decoding

    func decode(_ body: Data, digest: String, postedFor: String? = nil) throws -> Decoded {
        if body.isEmpty { throw Refusal(.malformed, field: "body", fault: "empty") }
        if let jws = JWSBytes.signedPayloadFastPath(body) {
            return try decodeV2(jws: jws, digest: digest, keepPieces: true, postedFor: postedFor)
        }
        let json = try JSONFields(data: body, path: "body")
        if json.has("signedPayload") {
            return try decodeV2(jws: try json.requiredString("signedPayload"), digest: digest, keepPieces: false, postedFor: postedFor)
        }
        if json.has("notification_type") {
            return try decodeV1(json, digest: digest, postedFor: postedFor)
        }
        throw Refusal(.malformed, field: "body", fault: "neither a V2 notification (signedPayload) nor a V1 notification (notification_type)")
    }

    /// - Parameter keepPieces: the body is exactly `{"signedPayload":"<jws>"}` (give or take
    ///   trailing white space), so the verified pieces can build its compact form.
    private func decodeV2(jws: String, digest: String, keepPieces: Bool, postedFor: String?) throws -> Decoded {
        // A retry of a body we already verified and stored is answered without verifying again,
        // unless its URL names an app: then it is verified again and held to that app, so a
        // body stored once is never answered as a duplicate on another app's URL.
        if postedFor == nil, let uuid = try store.notifications.uuid(bodySHA256: digest),
           let stored = try store.notifications.eventAndApp(uuid: uuid) {
            return Decoded(event: stored.0, transactions: [], renewals: [], isDuplicate: true, bundleId: stored.1)
        }
        let field = "signedPayload"
        let verified = try verifier.verifyNotification(jws, field: field)
        let payload = verified.decoded
        // App facts are checked in whichever object carries them (data, summary,
        // externalPurchaseToken, appData). A validly signed payload in a shape newer than this
        // subdesk carries none that it knows: it is Apple's, so it is kept, not refused.
        // The app is the one it was signed for; its nested records are held to that app's rules.
        let policy = payload.hasKnownShape ? try self.policy.forApp(bundleId: payload.bundleId, field: field, postedFor: postedFor)
            : self.policy
        if payload.hasKnownShape {
            if payload.notificationType != .test || payload.environment != nil {
                if let p = policy.environmentProblem(payload.environment, field: field) { throw p }
            }
            if let p = policy.bundleProblem(payload.bundleId, field: field) { throw p }
            if let p = policy.appAppleIdProblem(payload.appAppleId, environment: payload.environment, field: field) {
                throw p
            }
        }
        // A UUID stored with other content is refused when applying, inside the write.

        var transactions: [TransactionRecord] = []
        var renewals: [RenewalRecord] = []
        let checks = SignedRecordChecks(verifier: verifier, policy: policy)
        let context = SignedRecordChecks.Context(environment: payload.environment, owner: "the notification's")
        var nested: [(text: String, pieces: JWSPieces)] = []
        if let signed = payload.data?.signedTransactionInfo {
            let checked = try checks.verifiedTransaction(signed, field: "signedTransactionInfo", in: context)
            transactions.append(checked.carried(by: payload))
            nested.append((signed, checked.jws.pieces))
        }
        if let signed = payload.data?.signedRenewalInfo {
            let expected = transactions.first.map { (id: $0.originalTransactionId, source: "signedTransactionInfo") }
            let checked = try checks.verifiedRenewal(signed, field: "signedRenewalInfo", in: context, expectedOriginal: expected)
            renewals.append(checked.carried(by: payload))
            nested.append((signed, checked.jws.pieces))
        }
        // RESCIND_CONSENT names the app transaction (the app's download), verified like any JWS;
        // the subscription it concerns is the one a stored transaction with that id belongs to.
        var concerned: String?
        var appTransactionId: String?
        var feedDetail = Intake.feedDetail(payload)
        if let signed = payload.appData?.signedAppTransactionInfo {
            let checked = try checks.verifiedAppTransaction(signed, field: "signedAppTransactionInfo", in: context)
            nested.append((signed, checked.jws.pieces))
            let app = checked.decoded
            appTransactionId = app.appTransactionId
            if let id = app.appTransactionId { concerned = try store.transactions.originalTransactionId(appTransactionId: id) }
            if payload.notificationType == .rescindConsent {
                // `(no stored purchase)` is added when it is logged, if it still concerns none.
                feedDetail = ConsentWithdrawal.badge + " · app transaction \(app.appTransactionId ?? "?")"
            }
        }
        let t = transactions.first
        let event = NotificationEvent(
            notificationUUID: payload.notificationUUID, version: 2, type: payload.notificationType,
            subtype: payload.subtype, signedDate: payload.signedDate,
            originalTransactionId: t?.originalTransactionId ?? renewals.first?.originalTransactionId ?? concerned,
            transactionId: t?.transactionId, productId: t?.productId ?? payload.summary?.productId,
            environment: payload.environment?.rawValue, graceExpires: renewals.first?.gracePeriodExpiresDate,
            autoRenew: renewals.first?.autoRenewStatus, autoRenewProductId: renewals.first?.autoRenewProductId)
        let pieces = keepPieces ? NotificationPieces(outer: verified.jws.pieces, nested: nested) : nil
        return Decoded(event: event, transactions: transactions, renewals: renewals, isDuplicate: false, pieces: pieces,
                       signedPayload: jws, feedDetail: feedDetail,
                       appTransactionId: payload.notificationType == .rescindConsent ? appTransactionId : nil,
                       bundleId: payload.bundleId)
    }

    private func decodeV1(_ json: JSONFields, digest: String, postedFor: String?) throws -> Decoded {
        let type = (try? json.string("notification_type")) ?? nil
        func refusedV1(_ app: String) -> Refusal {
            Refusal(.policy, field: "body",
                    fault: "V1 notification \(type ?? "?") refused\(app): V1 bodies carry no signature (allow them with --allow-v1 or allow_v1 = true)")
        }
        guard policy.anyAllowsV1 else { throw refusedV1("") }
        let v1 = try NotificationV1(json: json, meanings: meanings)
        // A V1 body names its app by `bid`; whether V1 is allowed, and its password, are that app's.
        let policy = try self.policy.forApp(bundleId: v1.bundleId, field: "body.bid", postedFor: postedFor)
        guard policy.allowV1 else { throw refusedV1(" for \(v1.bundleId ?? "?")") }
        if let secret = policy.sharedSecret, v1.password != secret {
            throw Refusal(.policy, field: "body.password", fault: "does not match the configured shared secret")
        }
        if let p = policy.bundleProblem(v1.bundleId, field: "body.bid") { throw p }
        if let p = policy.environmentProblem(v1.environment, field: "body") { throw p }
        // A V1 body has no id of its own: it is named by the digest of its canonical form (keys
        // sorted, no white space), so a redelivery formatted otherwise is still a duplicate.
        // Stores written before keep ids from the raw body's digest; both are looked up.
        let uuid = "v1-" + Intake.canonicalDigest(json, fallback: digest)
        let legacy = "v1-" + digest
        let main = v1.subscriptionOriginalTransactionId(explicit: try json.stringOrNumber("original_transaction_id"))
        let latest = v1.transactions.filter { $0.originalTransactionId == main }.max(by: StateDerivation.purchaseOrder)
        let carried = v1.renewal(of: main)
        let event = NotificationEvent(notificationUUID: uuid, version: 1, type: v1.notificationType, subtype: nil,
                                      signedDate: v1.versionDate + meanings.v1Rank(v1.notificationType), originalTransactionId: main,
                                      transactionId: latest?.transactionId, productId: latest?.productId,
                                      environment: v1.environment.rawValue, graceExpires: carried?.gracePeriodExpiresDate,
                                      autoRenew: carried?.autoRenewStatus, autoRenewProductId: carried?.autoRenewProductId)
        let duplicate = try store.notifications.digest(uuid: uuid) != nil
            || (legacy != uuid && store.notifications.digest(uuid: legacy) != nil)
        return Decoded(event: event, transactions: v1.transactions, renewals: v1.renewals, isDuplicate: duplicate,
                       latestReceipt: v1.latestReceipt.flatMap { $0.isEmpty ? nil : $0 }, bundleId: v1.bundleId)
    }

    /// SHA-256 (hex) of a JSON object written with sorted keys and no white space; `fallback`
    /// when it cannot be written again (it always can, once parsed).
    static func canonicalDigest(_ json: JSONFields, fallback: String) -> String {
        guard let data = try? JSONSerialization.data(withJSONObject: json.dictionary, options: [.sortedKeys, .withoutEscapingSlashes])
        else { return fallback }
        return ContentDigest.sha256Hex(data)
    }

    // MARK: Applying

    private func apply(_ d: Decoded, body: Data, digest: String, source: String?, receivedAt: Millis, rederive: Bool = true) throws {
        let ownership = d.transactions.first { $0.transactionId == d.event.transactionId }?.ownershipType
        try store.notifications.insert(StoredNotification(event: d.event, receivedDate: receivedAt, bodySHA256: digest,
                                                        body: body, source: source, ownership: ownership, bundleId: d.bundleId),
                                    compact: d.compact)
        try mergeRecords(d.transactions, d.renewals, alsoRederive: rederive ? d.event.originalTransactionId : nil, now: receivedAt)
        try store.outbox.owe(d.event, bundleId: d.bundleId,
                                to: forwarding.owed(bundleId: d.bundleId, environment: d.event.environment, type: d.event.type),
                                now: receivedAt)
        if let receipt = d.latestReceipt, let otid = d.event.originalTransactionId {
            try store.receipts.put(receipt, originalTransactionId: otid, at: receivedAt)
        }
        try store.logIntake(IntakeLogEntry(receivedDate: receivedAt, result: .stored, notificationUUID: d.event.notificationUUID,
                                           type: d.event.type.rawValue, subtype: d.event.subtype?.rawValue,
                                           originalTransactionId: d.event.originalTransactionId,
                                           productId: d.event.productId, environment: d.event.environment,
                                           detail: d.appTransactionId != nil && d.event.originalTransactionId == nil
                                               ? (d.feedDetail ?? "") + Intake.noStoredPurchase : d.feedDetail,
                                           source: source), app: d.bundleId)
    }

    /// The facts of a payload the feed shows beside `stored`: a renewal-date extension summary's
    /// counts, a consumption request's reason, an external purchase token's id.
    static func feedDetail(_ p: NotificationPayloadV2) -> String? {
        if let s = p.summary {
            var text = "extension: \(s.succeededCount ?? 0) succeeded, \(s.failedCount ?? 0) failed"
            if let stores = s.storefrontCountryCodes, !stores.isEmpty { text += " · " + stores.joined(separator: ", ") }
            return text
        }
        if let reason = p.data?.consumptionRequestReason { return "reason \(reason)" }
        if let token = p.externalPurchaseToken?.externalPurchaseId { return "token \(token)" }
        return nil
    }

    /// Stores verified transactions and renewal info (the newest signed version of each wins)
    /// and re-derives every subscription they touch: the one path for notifications and
    /// for revalidation alike. Returns the touched originalTransactionIds.
    @discardableResult
    public func merge(transactions: [TransactionRecord], renewals: [RenewalRecord], now: Millis) throws -> [String] {
        try store.write { try mergeRecords(transactions, renewals, alsoRederive: nil, now: now) }
    }

    @discardableResult
    private func mergeRecords(_ transactions: [TransactionRecord], _ renewals: [RenewalRecord],
                              alsoRederive extra: String?, now: Millis) throws -> [String] {
        // A version that loses to the stored one (older, or behind it in RecordVersionOrder)
        // changes nothing: the subscription is re-derived from the winning versions only, and
        // its owner follows the token they carry.
        var touched = Set<String>()
        for t in transactions {
            if let stored = try store.transactions.find(id: t.transactionId), !t.supersedes(stored) {} else {
                try store.transactions.put(t)
            }
            if Intake.isSubscription(t) { touched.insert(t.originalTransactionId) }
        }
        for r in renewals {
            if let stored = try store.renewals.find(originalTransactionId: r.originalTransactionId), !r.supersedes(stored) {} else {
                try store.renewals.put(r)
            }
            touched.insert(r.originalTransactionId)
        }
        if let otid = extra, !touched.contains(otid), try store.subscriptions.find(originalTransactionId: otid) != nil {
            touched.insert(otid)
        }
        let ordered = touched.sorted()
        for otid in ordered {
            try rederive(otid, now: now)
        }
        return ordered
    }

    /// Re-derives one subscription from its whole stored history and saves the result.
    public func rederive(_ otid: String, appAccountToken: String? = nil, now: Millis) throws {
        let history = try store.subscriptions.history(originalTransactionId: otid)
        guard var state = StateDerivation.derive(originalTransactionId: otid, transactions: history.transactions,
                                                 renewal: history.renewal, events: history.events, now: now,
                                                 meanings: meanings, rules: rules) else { return }
        // No transaction names the app (one known only by its renewal info): the app its
        // notifications were signed for.
        if state.bundleId == nil { state.bundleId = try store.notifications.bundleId(originalTransactionId: otid) }
        let token = appAccountToken ?? state.appAccountToken
        try store.subscriptions.save(state, appAccountToken: token, now: now, metrics: Intake.metricShare(of: history, meanings: meanings, rules: rules))
    }

    /// A subscription's share of the counts, from its whole stored history: derived with its
    /// state on every save, and again for a share an earlier subdesk computed.
    public static func metricShare(of history: SubscriptionHistory) -> MetricContributions {
        metricShare(of: history, meanings: .standard)
    }

    public static func metricShare(of history: SubscriptionHistory, meanings: NotificationMeanings,
                                   rules: DerivationRules = .current) -> MetricContributions {
        MetricContributions.of(transactions: history.transactions, events: history.events, renewal: history.renewal,
                               meanings: meanings, realtime: history.realtime, rules: rules)
    }

    /// Whether a transaction belongs to an auto-renewable subscription: by its `type` when
    /// it has one (V2), else by having an expiry (a V1 receipt entry without one is a
    /// consumable, non-consumable or non-renewing purchase).
    static func isSubscription(_ t: TransactionRecord) -> Bool {
        switch t.type {
        case "Consumable", "Non-Consumable", "Non-Renewing Subscription": return false
        case nil: return t.expiresDate != nil
        default: return true
        }
    }
}

extension MetricAggregates {
    /// Recomputes the shares an earlier subdesk computed (`metrics_pending`) through intake's
    /// derivation, `batch` to a write, telling `progress` (done, total) after each.
    @discardableResult
    public func catchUpShares(batch: Int = 2_000, progress: ((Int, Int) -> Void)? = nil) throws -> Int {
        try catchUpShares(deriving: Intake.metricShare, batch: batch, progress: progress)
    }
}
