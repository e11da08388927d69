import Foundation

/// A row of Apple's retention messaging report as the store keeps it: the row, and when it was imported.
struct StoredRetentionRow {
    var row: RetentionReportRow
    var importedMs: Millis
}

/// Apple's retention messaging report as imported (`retention_messaging`): the only code
/// that names the table's columns (`store.retentionReport`).
public struct RetentionReportTable {
    let db: any SQLConnection

    /// The columns (migration 35; page, selection type and save type
    /// migration 41's), in the table's order.
    enum Column: Int, StoreColumn {
        case rowKey, day, appName, appAppleId, groupName, groupId, subscriptionName, subscriptionId, event, messageType,
             device, platformVersion, territory, counts, importedMs, page, selectionType, saveType

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
            case .page: return s.row.page
            case .selectionType: return s.row.selectionType
            case .saveType: return s.row.saveType
            }
        }
    }

    static let table = StoreTable<Column>("retention_messaging", key: .rowKey)
    static let stored = table.selection(excluding: [.rowKey, .importedMs])

    /// Stores `rows`, each replacing the stored row of the same dimensions and day (a file
    /// imported again, or Apple's corrected instance of a day, does not add its counts twice).
    /// Call inside `write`, with the audit entry that records it.
    public func replace(_ rows: [RetentionReportRow], importedMs: Millis) throws {
        for row in rows {
            let stored = StoredRetentionRow(row: row, importedMs: importedMs)
            try db.run(Self.table.upsert, Self.table.values(stored))
        }
    }

    /// The stored rows `query` selects, by day: those imported with Apple's columns (migration
    /// 41 and after).
    public func rows(_ query: RetentionReportQuery = RetentionReportQuery()) throws -> [RetentionReportRow] {
        let t = Self.table
        let (conditions, values) = Self.conditions(query, earlier: false)
        let selection = Self.stored
        return try db.rows("""
            SELECT \(selection.list) FROM \(t.name) WHERE \(conditions)
            ORDER BY \(t.name(.day)), \(t.name(.rowKey))
            """, values) { raw in
            let r = selection.row(raw)
            return RetentionReportRow(
                day: r.string(.day), appName: r.string(.appName), appAppleId: r.string(.appAppleId),
                groupName: r.string(.groupName), groupId: r.string(.groupId), subscriptionName: r.string(.subscriptionName),
                subscriptionId: r.string(.subscriptionId), page: r.string(.page), messageType: r.string(.messageType),
                selectionType: r.string(.selectionType), event: r.string(.event), saveType: r.string(.saveType),
                device: r.string(.device), platformVersion: r.string(.platformVersion), territory: r.string(.territory),
                counts: r.int64(.counts))
        }
    }

    /// The report's figures over the rows `query` selects, by `grouping`, with the count of
    /// earlier rows left out: what `retention report` and `:retention` show.
    public func report(_ query: RetentionReportQuery, by grouping: RetentionGrouping) throws -> RetentionReport {
        RetentionReport(rows: try rows(query), grouping: grouping, earlierRows: try earlierRowCount(query))
    }

    /// How many stored rows `query` selects of those imported before the import read Apple's
    /// columns (their selection type NULL): kept as they were, in no figure.
    public func earlierRowCount(_ query: RetentionReportQuery = RetentionReportQuery()) throws -> Int {
        let (conditions, values) = Self.conditions(query, earlier: true)
        return try db.count("SELECT count(*) FROM \(Self.table.name) WHERE \(conditions)", values)
    }

    /// The WHERE conditions of `query`, of the rows imported with Apple's columns or (`earlier`) before.
    static func conditions(_ query: RetentionReportQuery, earlier: Bool) -> (String, [SQLBindable?]) {
        let t = Self.table
        var conditions = ["\(t.name(.selectionType)) IS \(earlier ? "" : "NOT ")NULL"]
        var values: [SQLBindable?] = []
        if let app = query.app {
            let ids = [app] + query.appAppleIds
            conditions.append("(\(t.name(.appName)) = ? OR \(t.name(.appAppleId)) IN (\(SQLText.placeholders(ids.count))))")
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
        return (conditions.joined(separator: " AND "), values)
    }
}
