import Foundation

/// What the console keeps of something it put at Apple's Retention Messaging API: a message,
/// an image, a default message or a real-time URL, for one app (bundle id) and environment.
public struct RetentionRecord: Equatable, Sendable {
    public enum Kind: String, CaseIterable, Sendable {
        case message, image
        /// `identifier` is `PRODUCT LOCALE`, `content` the message id.
        case defaultMessage = "default"
        /// `identifier` is the environment, `content` the URL.
        case realtimeURL = "realtime_url"
    }

    public var app: String
    public var environment: String
    public var kind: Kind
    public var identifier: String
    /// A message's request body (JSON), an image's size class, a default's message id, a URL.
    public var content: String
    /// SHA-256 (hex) of the bytes sent: a message's body, an image's file.
    public var checksum: String?
    /// Apple's review state when last read (PENDING, APPROVED, REJECTED), nil before.
    public var state: String?
    public var uploadedMs: Millis
    /// When Apple's list last showed it.
    public var seenMs: Millis?

    public init(app: String, environment: String, kind: Kind, identifier: String, content: String, checksum: String? = nil,
                state: String? = nil, uploadedMs: Millis, seenMs: Millis? = nil) {
        self.app = app
        self.environment = environment
        self.kind = kind
        self.identifier = identifier
        self.content = content
        self.checksum = checksum
        self.state = state
        self.uploadedMs = uploadedMs
        self.seenMs = seenMs
    }

    var key: String { [app, environment, kind.rawValue, identifier].joined(separator: "\n") }
}

/// The retention messages and images kept as uploaded to Apple (`retention_content`): the
/// only code that names the table's columns (`store.retentionContent`).
public struct RetentionContentTable {
    let db: any SQLConnection

    /// The columns (migration 37), in the table's order.
    enum Column: Int, StoreColumn {
        case recordKey, app, environment, kind, identifier, content, checksum, state, uploadedMs, seenMs

        func value(in r: RetentionRecord) -> SQLBindable? {
            switch self {
            case .recordKey: return r.key
            case .app: return r.app
            case .environment: return r.environment
            case .kind: return r.kind.rawValue
            case .identifier: return r.identifier
            case .content: return r.content
            case .checksum: return r.checksum
            case .state: return r.state
            case .uploadedMs: return r.uploadedMs
            case .seenMs: return r.seenMs
            }
        }
    }

    static let table = StoreTable<Column>("retention_content", key: .recordKey)

    /// Keeps `record`, replacing the one of the same app, environment, kind and identifier.
    /// Call inside `write`, with the audit entry that records it.
    public func keep(_ record: RetentionRecord) throws {
        try db.run(Self.table.upsert, Self.table.values(record))
    }

    /// Forgets a record (deleted at Apple). Call inside `write`.
    public func drop(app: String, environment: String, kind: RetentionRecord.Kind, identifier: String) throws {
        let t = Self.table
        try db.run("DELETE FROM \(t.name) WHERE \(t.name(.recordKey)) = ?",
                   [RetentionRecord(app: app, environment: environment, kind: kind, identifier: identifier, content: "", uploadedMs: 0).key])
    }

    /// Notes what Apple's list says of a record now. Call inside `write`.
    public func noteState(app: String, environment: String, kind: RetentionRecord.Kind, identifier: String,
                      state: String, seenMs: Millis) throws {
        let t = Self.table
        try db.run("UPDATE \(t.name) SET \(t.name(.state)) = ?, \(t.name(.seenMs)) = ? WHERE \(t.name(.recordKey)) = ?",
                   [state, seenMs, RetentionRecord(app: app, environment: environment, kind: kind, identifier: identifier, content: "", uploadedMs: 0).key])
    }

    /// The records kept, of `kind` and `app` when given, in identifier order.
    public func records(kind: RetentionRecord.Kind? = nil, app: String? = nil, environment: String? = nil) throws -> [RetentionRecord] {
        let t = Self.table
        var conditions: [String] = []
        var values: [SQLBindable?] = []
        if let kind { conditions.append("\(t.name(.kind)) = ?"); values.append(kind.rawValue) }
        if let app { conditions.append("\(t.name(.app)) = ?"); values.append(app) }
        if let environment { conditions.append("\(t.name(.environment)) = ?"); values.append(environment) }
        let selection = t.selection(excluding: [.recordKey])
        return try db.rows("""
            SELECT \(selection.list) FROM \(t.name)\(conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND "))
            ORDER BY \(t.name(.app)), \(t.name(.environment)), \(t.name(.kind)), \(t.name(.identifier))
            """, values) { raw in
            let r = selection.row(raw)
            return RetentionRecord(app: r.string(.app), environment: r.string(.environment),
                                   kind: RetentionRecord.Kind(rawValue: r.string(.kind)) ?? .message, identifier: r.string(.identifier),
                                   content: r.string(.content), checksum: r.optionalString(.checksum), state: r.optionalString(.state),
                                   uploadedMs: r.int64(.uploadedMs), seenMs: r.optionalInt64(.seenMs))
        }
    }

    /// An app's product, as `products` selects them.
    enum AppProduct: Int, SelectedValues {
        case app, product
        var sql: String { self == .app ? "COALESCE(s.bundle_id, '')" : "t.product_id" }
    }

    /// Each app's products, from the transactions stored (bundle id, product id), in order.
    public func products() throws -> [(app: String, product: String)] {
        try db.rows("""
            SELECT DISTINCT \(AppProduct.list) FROM transactions t
                JOIN subscriptions s ON s.original_transaction_id = t.original_transaction_id ORDER BY 1, 2
            """, []) { row in
            let r = AppProduct.row(row)
            return (r.string(.app), r.string(.product))
        }
    }
}

/// Retention Messaging's tables: the content uploaded, Apple's report, and the real-time
/// responder's decisions (`store.retention`).
public struct RetentionTables {
    let store: Store

    /// The retention messages and images kept.
    public var content: RetentionContentTable { RetentionContentTable(db: store.db) }
    /// Apple's retention messaging report as imported.
    public var report: RetentionReportTable { RetentionReportTable(db: store.db) }
    /// Every real-time retention decision.
    public var decisions: RetentionDecisionTable { RetentionDecisionTable(db: store.db, memory: store.retentionDecisionMemory) }
}

extension Store {
    /// Retention Messaging's tables.
    public var retention: RetentionTables { RetentionTables(store: self) }
}
