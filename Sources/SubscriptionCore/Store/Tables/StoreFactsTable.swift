import Foundation

/// Facts the store keeps about itself, a text value by key (`store_facts`): what built it
/// (`kind`: `demo`), the last `subdesk ping`. The only code that names the table's columns
/// (`store.facts`).
public struct StoreFactsTable {
    let db: any SQLConnection

    /// The columns, in the table's order.
    enum Column: Int, StoreColumn {
        case key, value

        func value(in fact: (key: String, value: String)) -> SQLBindable? {
            switch self {
            case .key: return fact.key
            case .value: return fact.value
            }
        }
    }

    static let table = StoreTable<Column>("store_facts", key: .key)
    static let both = table.selection()

    /// The value kept under `key`, if any.
    func value(_ key: String) throws -> String? {
        try db.text("SELECT value FROM store_facts WHERE key = ?", [key])
    }

    /// The values kept under `keys`, by key; a key with none is absent.
    func values(_ keys: [String]) throws -> [String: String] {
        guard !keys.isEmpty else { return [:] }
        var facts: [String: String] = [:]
        try db.query("SELECT \(Self.both.list) FROM store_facts WHERE key IN (\(SQLText.placeholders(keys.count)))",
                     keys.map { $0 as SQLBindable? }) { row in
            let r = Self.both.row(row)
            facts[r.string(.key)] = r.string(.value)
        }
        return facts
    }

    /// Keeps `value` under `key`, in place of any value kept there; inside a write.
    func set(_ key: String, _ value: String) throws {
        try db.run(Self.table.upsert, Self.table.values((key, value)))
    }
}

extension Store {
    /// Facts the store keeps about itself.
    public var facts: StoreFactsTable { StoreFactsTable(db: db) }
}
