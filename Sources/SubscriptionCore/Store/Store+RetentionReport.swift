import Foundation

/// A row of Apple's retention messaging report as the store keeps it: the row, and when it was imported.
struct StoredRetentionRow {
    var row: RetentionReportRow
    var importedMs: Millis
}

/// The columns of `retention_messaging` (migration 35), in the table's order.
enum RetentionMessagingColumn: Int, StoreColumn {
    case rowKey, day, appName, appAppleId, groupName, groupId, subscriptionName, subscriptionId, event, messageType,
         device, platformVersion, territory, counts, importedMs

    func value(in s: StoredRetentionRow) -> SQLBindable? {
        switch self {
        case .rowKey: return s.row.key
        case .day: return s.row.day
        case .appName: return s.row.appName
        case .appAppleId: return s.row.appAppleId
        case .groupName: return s.row.groupName
        case .groupId: return s.row.groupId
        case .subscriptionName: return s.row.subscriptionName
        case .subscriptionId: return s.row.subscriptionId
        case .event: return s.row.event
        case .messageType: return s.row.messageType
        case .device: return s.row.device
        case .platformVersion: return s.row.platformVersion
        case .territory: return s.row.territory
        case .counts: return s.row.counts
        case .importedMs: return s.importedMs
        }
    }
}

extension Store {
    static let retentionTable = StoreTable<RetentionMessagingColumn>("retention_messaging", key: .rowKey)
    static let retentionSelection = retentionTable.selection(excluding: [.rowKey, .importedMs])

    /// Stores `rows`, each replacing the stored row of the same dimensions and day (a file
    /// imported again, or Apple's corrected instance of a day, does not add its counts twice).
    /// Call inside `write`, with the audit entry that records it.
    public func replaceRetentionRows(_ rows: [RetentionReportRow], importedMs: Millis) throws {
        for row in rows {
            let stored = StoredRetentionRow(row: row, importedMs: importedMs)
            try db.run(Store.retentionTable.upsert, Store.retentionTable.values(stored))
        }
    }

    /// The stored rows `query` selects, by day.
    public func retentionRows(_ query: RetentionReportQuery = RetentionReportQuery()) throws -> [RetentionReportRow] {
        let t = Store.retentionTable
        var conditions: [String] = []
        var values: [SQLBindable?] = []
        if let app = query.app {
            let ids = [app] + query.appAppleIds
            conditions.append("(\(t.name(.appName)) = ? OR \(t.name(.appAppleId)) IN (\(ids.map { _ in "?" }.joined(separator: ", "))))")
            values += [app] + ids
        }
        if let since = query.since {
            conditions.append("\(t.name(.day)) >= ?")
            values.append(since)
        }
        if let until = query.until {
            conditions.append("\(t.name(.day)) <= ?")
            values.append(until)
        }
        let selection = Store.retentionSelection
        return try db.rows("""
            SELECT \(selection.list) FROM \(t.name)\(conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND "))
            ORDER BY \(t.name(.day)), \(t.name(.rowKey))
            """, values) { raw in
            let r = selection.row(raw)
            return RetentionReportRow(
                day: r.string(.day), appName: r.string(.appName), appAppleId: r.string(.appAppleId),
                groupName: r.string(.groupName), groupId: r.string(.groupId), subscriptionName: r.string(.subscriptionName),
                subscriptionId: r.string(.subscriptionId), event: r.string(.event), messageType: r.string(.messageType),
                device: r.string(.device), platformVersion: r.string(.platformVersion), territory: r.string(.territory),
                counts: r.int64(.counts))
        }
    }
}
