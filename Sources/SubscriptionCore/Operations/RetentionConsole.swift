import Foundation

/// The retention console's writes at Apple's Retention Messaging API for one app and
/// environment: each validated before the call, kept in the store (`retention_content`)
/// and audited in the same write as what Apple answered.
public final class RetentionConsole {
    public let store: Store
    public let client: RetentionMessagingClient
    public let operatorName: String
    var app: String { client.key.bundleId }
    var environment: String { client.environment.rawValue }

    public init(store: Store, client: RetentionMessagingClient, operatorName: String) {
        self.store = store
        self.client = client
        self.operatorName = operatorName
    }

    /// How an upload ended.
    public enum UploadOutcome: Equatable, Sendable {
        case uploaded
        /// An earlier attempt got no answer, and Apple's list shows the identifier: it was not sent again.
        case foundAfterTimeout(RetentionReviewState)
    }

    public func uploadImage(id rawId: String, kind: RetentionImageKind, png: Data, reason: String?) throws -> (UploadOutcome, AuditEntry) {
        let id = try RetentionText.identifier(rawId, field: "image id")
        try RetentionPNG(png).check(as: kind)
        let checksum = ContentDigest.sha256Hex(png)
        try refuseReuse(.image, id, checksum)
        let outcome = try uploadOnce(id: id, list: { try self.client.images() }) { try self.client.uploadImage(id: id, kind: kind, png: png) }
        let record = RetentionRecord(app: app, environment: environment, kind: .image, identifier: id, content: kind.rawValue,
                                     checksum: checksum, state: Self.state(outcome), uploadedMs: DateText.nowMillis())
        return (outcome, try keep(record, action: .retentionUpload, target: "image \(id)", reason: reason,
                                  detail: "\(kind.rawValue), \(png.count) bytes, sha256 \(checksum.prefix(16))"))
    }

    public func uploadMessage(id rawId: String, message: RetentionMessage, reason: String?) throws -> (UploadOutcome, AuditEntry) {
        let id = try RetentionText.identifier(rawId, field: "message id")
        let body = message.requestBody
        let checksum = ContentDigest.sha256Hex(body)
        try refuseReuse(.message, id, checksum)
        let outcome = try uploadOnce(id: id, list: { try self.client.messages() }) { try self.client.uploadMessage(id: id, body: body) }
        let record = RetentionRecord(app: app, environment: environment, kind: .message, identifier: id,
                                     content: String(decoding: body, as: UTF8.self), checksum: checksum, state: Self.state(outcome),
                                     uploadedMs: DateText.nowMillis())
        return (outcome, try keep(record, action: .retentionUpload, target: "message \(id)", reason: reason,
                                  detail: "header \(message.header.escapingControlCharacters(limit: 80))"))
    }

    static func state(_ outcome: UploadOutcome) -> String {
        if case .foundAfterTimeout(let state) = outcome { return state.rawValue }
        return RetentionReviewState.pending.rawValue
    }

    /// An identifier this store already used for other content is not sent again: Apple keeps the first.
    func refuseReuse(_ kind: RetentionRecord.Kind, _ id: String, _ checksum: String) throws {
        if let kept = try store.retention.content.records(kind: kind, app: app, environment: environment).first(where: { $0.identifier == id }),
           kept.checksum != checksum {
            throw RetentionContentError("\(kind.rawValue) id", "\(id) was uploaded with other content (sha256 \(kept.checksum?.prefix(16) ?? "?")); Apple keeps an identifier's first upload: choose a new UUID, or delete it first")
        }
    }

    /// Uploads at most once at Apple: an attempt that got no answer is followed by a read of
    /// the list, and the upload is sent again only when the list does not show it.
    func uploadOnce(id: String, list: () throws -> [RetentionListedItem], upload: () throws -> Void) throws -> UploadOutcome {
        var unanswered = 0
        while true {
            do {
                // Sent again only when the list lacked it: this answer is the one upload Apple kept.
                try upload()
                return .uploaded
            } catch let lost as RetentionMessagingClient.Unanswered {
                unanswered += 1
                if let seen = try list().first(where: { $0.identifier.lowercased() == id }) { return .foundAfterTimeout(seen.state) }
                guard unanswered < client.policy.maxAttempts else { throw lost }
            } catch let refusal as RevalidationError where unanswered > 0
                        && [RetentionAPIError.imageAlreadyExists, .messageAlreadyExists].contains(where: { $0 == refusal.retentionError }) {
                let seen = try list().first { $0.identifier.lowercased() == id }
                return .foundAfterTimeout(seen?.state ?? .pending)
            }
        }
    }

    public func deleteImage(id rawId: String, reason: String?) throws -> AuditEntry {
        let id = try RetentionText.identifier(rawId, field: "image id")
        try client.deleteImage(id: id)
        return try drop(.image, id, target: "image \(id)", reason: reason)
    }

    public func deleteMessage(id rawId: String, reason: String?) throws -> AuditEntry {
        let id = try RetentionText.identifier(rawId, field: "message id")
        try client.deleteMessage(id: id)
        return try drop(.message, id, target: "message \(id)", reason: reason)
    }

    /// Apple's list of `kind` beside the records kept, each record's state noted as Apple has it now.
    public func compare(_ kind: RetentionRecord.Kind) throws -> [RetentionComparison] {
        let listed = kind == .image ? try client.images() : try client.messages()
        let kept = try store.retention.content.records(kind: kind, app: app, environment: environment)
        let now = DateText.nowMillis()
        try store.write {
            for item in listed where kept.contains(where: { $0.identifier == item.identifier.lowercased() }) {
                try store.retention.content.noteState(app: app, environment: environment, kind: kind, identifier: item.identifier.lowercased(),
                                             state: item.state.rawValue, seenMs: now)
            }
        }
        return RetentionComparison.of(listed: listed, kept: kept)
    }

    /// Makes `messageId` the default for `product` in `locale`, after reading Apple's list:
    /// only an APPROVED message (and its APPROVED images) may be one.
    public func setDefault(product rawProduct: String, locale rawLocale: String, messageId rawId: String, reason: String?) throws -> AuditEntry {
        let product = try RetentionText.productId(rawProduct)
        let locale = try RetentionText.locale(rawLocale)
        let id = try RetentionText.identifier(rawId, field: "message id")
        guard let listed = try client.messages().first(where: { $0.identifier.lowercased() == id }) else {
            throw RetentionContentError("message id", "Apple's message list has no \(id)")
        }
        guard listed.state == .approved else {
            throw RetentionContentError("message id", "\(id) is \(listed.state) at Apple; only an APPROVED message can be a default")
        }
        if let kept = try store.retention.content.records(kind: .message, app: app, environment: environment).first(where: { $0.identifier == id }),
           let object = (try? JSONSerialization.jsonObject(with: Data(kept.content.utf8))) as? [String: Any] {
            var images = ((object["bulletPoints"] as? [[String: Any]]) ?? []).compactMap { $0["imageIdentifier"] as? String }
            if let image = (object["image"] as? [String: Any])?["imageIdentifier"] as? String { images.append(image) }
            if !images.isEmpty {
                let states = try client.images()
                for image in images where states.first(where: { $0.identifier.lowercased() == image })?.state != .approved {
                    throw RetentionContentError("message id", "\(id) shows image \(image), which is not APPROVED at Apple; only approved content can be a default")
                }
            }
        }
        try client.setDefaultMessage(product: product, locale: locale, messageId: id)
        let record = RetentionRecord(app: app, environment: environment, kind: .defaultMessage, identifier: "\(product) \(locale)",
                                     content: id, state: RetentionReviewState.approved.rawValue, uploadedMs: DateText.nowMillis())
        return try keep(record, action: .retentionDefault, target: "\(product) \(locale)", reason: reason, detail: "default message \(id)")
    }

    public func deleteDefault(product rawProduct: String, locale rawLocale: String, reason: String?) throws -> AuditEntry {
        let product = try RetentionText.productId(rawProduct)
        let locale = try RetentionText.locale(rawLocale)
        try client.deleteDefaultMessage(product: product, locale: locale)
        return try drop(.defaultMessage, "\(product) \(locale)", target: "\(product) \(locale)", reason: reason, action: .retentionDefault)
    }

    public func setRealtimeURL(_ rawURL: String, reason: String?) throws -> AuditEntry {
        let url = try RetentionText.realtimeURL(rawURL)
        try client.setRealtimeURL(url)
        let record = RetentionRecord(app: app, environment: environment, kind: .realtimeURL, identifier: environment, content: url,
                                     uploadedMs: DateText.nowMillis())
        return try keep(record, action: .retentionRealtimeURL, target: environment, reason: reason, detail: url.escapingControlCharacters(limit: 256))
    }

    public func deleteRealtimeURL(reason: String?) throws -> AuditEntry {
        try client.deleteRealtimeURL()
        return try drop(.realtimeURL, environment, target: environment, reason: reason, action: .retentionRealtimeURL)
    }

    public func startPerformanceTest(originalTransactionId: String, reason: String?) throws -> (requestId: String, config: [String: Int], audit: AuditEntry) {
        let started = try client.startPerformanceTest(originalTransactionId: originalTransactionId)
        let entry = try store.write { () -> AuditEntry in
            var entry = AuditEntry(at: DateText.nowMillis(), operatorName: operatorName, action: .retentionPerformanceTest,
                                   target: started.requestId, reason: reason, outcome: "started", detail: "with \(originalTransactionId)")
            entry.bundleId = app
            entry.id = try store.audit.append(entry)
            return entry
        }
        return (started.requestId, started.config, entry)
    }

    func keep(_ record: RetentionRecord, action: AuditAction, target: String, reason: String?, detail: String) throws -> AuditEntry {
        try store.write {
            try store.retention.content.keep(record)
            var entry = AuditEntry(at: record.uploadedMs, operatorName: operatorName, action: action, target: target, reason: reason,
                                   outcome: "done at Apple (\(environment))", detail: detail)
            entry.bundleId = app
            entry.id = try store.audit.append(entry)
            return entry
        }
    }

    func drop(_ kind: RetentionRecord.Kind, _ identifier: String, target: String, reason: String?, action: AuditAction = .retentionDelete) throws -> AuditEntry {
        try store.write {
            try store.retention.content.drop(app: app, environment: environment, kind: kind, identifier: identifier)
            var entry = AuditEntry(at: DateText.nowMillis(), operatorName: operatorName, action: action, target: target, reason: reason,
                                   outcome: "deleted at Apple (\(environment))", detail: nil)
            entry.bundleId = app
            entry.id = try store.audit.append(entry)
            return entry
        }
    }
}

/// One identifier as Apple's list and the store's records have it, and how they differ.
public struct RetentionComparison: Equatable, Sendable {
    public enum Difference: String, Sendable {
        case same
        /// Apple has it; this store has no record (uploaded elsewhere, or the record lost).
        case onlyAtApple = "only at Apple"
        /// The store has a record; Apple's list does not show it (deleted elsewhere).
        case onlyHere = "only in the store"
    }
    public var identifier: String
    public var appleState: String?
    public var keptState: String?
    public var summary: String?
    public var difference: Difference

    static func of(listed: [RetentionListedItem], kept: [RetentionRecord]) -> [RetentionComparison] {
        var out: [RetentionComparison] = []
        for item in listed {
            let id = item.identifier.lowercased()
            let record = kept.first { $0.identifier == id }
            out.append(RetentionComparison(identifier: id, appleState: item.state.rawValue, keptState: record?.state,
                                           summary: record.map(Self.summary) ?? item.imageKind, difference: record == nil ? .onlyAtApple : .same))
        }
        for record in kept where !listed.contains(where: { $0.identifier.lowercased() == record.identifier }) {
            out.append(RetentionComparison(identifier: record.identifier, appleState: nil, keptState: record.state,
                                           summary: summary(record), difference: .onlyHere))
        }
        return out.sorted { $0.identifier < $1.identifier }
    }

    /// A message's header, or what else a record keeps (an image's size class).
    public static func summary(_ r: RetentionRecord) -> String {
        if r.kind == .message, let object = (try? JSONSerialization.jsonObject(with: Data(r.content.utf8))) as? [String: Any] {
            return object["header"] as? String ?? ""
        }
        return r.content
    }
}

extension RetentionConsole {
    /// The App Store Server API key that signs the console's calls for an app: with several
    /// apps configured, the app's own (`bundleId`'s); otherwise the one key.
    public static func apiKey(_ configuration: RevalidationConfiguration, severalApps: Bool, bundleId: String?) -> AppStoreAPIKey? {
        severalApps ? bundleId.flatMap { configuration.appKeys[$0] } : configuration.apiKey
    }

    /// Apple's lists of messages and images beside the records kept, each record's review
    /// state noted as Apple has it now: what `retention messages` and `retention images` print.
    public func refresh() throws -> (messages: [RetentionComparison], images: [RetentionComparison]) {
        (try compare(.message), try compare(.image))
    }

    /// Reads a performance test's result until it is no longer PENDING or `wait` seconds have
    /// passed, reading again every `every` seconds (the client paces the reads to Apple's limits).
    public func followPerformanceTest(requestId rawId: String, wait: TimeInterval, every: TimeInterval = 2,
                                      sleep: (TimeInterval) -> Void = { Thread.sleep(forTimeInterval: $0) }) throws -> RetentionPerformanceResult {
        let id = try RetentionText.identifier(rawId, field: "request id")
        let deadline = Date().addingTimeInterval(wait)
        var result = try client.performanceTestResult(requestId: id)
        while result.isPending && Date() < deadline {
            sleep(min(every, max(0, deadline.timeIntervalSinceNow)))
            result = try client.performanceTestResult(requestId: id)
        }
        return result
    }
}

extension Revalidator {
    /// The retention console for an app (`bundleId`; any, when one app is configured) in
    /// `environment`, on a store connection of its own: what the dashboard's worker uses, as
    /// `subdesk retention` builds its own from the same configuration.
    public func retentionConsole(bundleId: String?, environment: AppStoreEnvironment, pacer: RetentionPacer = .shared) throws -> RetentionConsole {
        let several = policy.apps.count > 1
        if several && bundleId == nil {
            throw RevalidationError.notConfigured("several apps are configured: the Retention Messaging API is one app's; name it")
        }
        guard let key = RetentionConsole.apiKey(configuration, severalApps: several, bundleId: bundleId) else {
            throw RevalidationError.needsServerAPI(action: ServerAPIAction.retentionMessaging, place: configuration.keyPlace)
        }
        let client = try RetentionMessagingClient(key: key, endpoints: configuration.endpoints, environment: environment,
                                                  policy: configuration.http, pacer: pacer)
        return RetentionConsole(store: try openStore(), client: client, operatorName: operatorName)
    }
}
