import Foundation

extension Operations {
    /// Reads Apple's retention messaging report from `data` and stores its rows, in one
    /// write with the audit entry that records it: a refused file stores nothing, and a
    /// row imported again replaces its counts. `file` names the file in refusals and the
    /// audit log.
    public func importRetentionReport(_ data: Data, file: String, reason: String? = nil,
                                      now: Millis = DateText.nowMillis()) throws -> (rows: [RetentionReportRow], audit: AuditEntry) {
        let rows = try RetentionReportFile.parse(data, file: file)
        let days = rows.map(\.day)
        let span = days.min().map { first in first == days.max()! ? first : "\(first) to \(days.max()!)" } ?? "no days"
        var total = RetentionFigures()
        for row in rows { total.add(row) }
        return try store.write {
            try store.retention.report.replace(rows, importedMs: now)
            var entry = AuditEntry(at: now, operatorName: operatorName, action: .retentionReportImport,
                                   target: (file as NSString).lastPathComponent.escapingControlCharacters(limit: 200),
                                   reason: reason, outcome: "\(rows.count) rows imported",
                                   detail: "\(span); \(total.views) views, \(total.saves) saves, \(total.cancellations) cancellations")
            entry.id = try store.audit.append(entry)
            return (rows, entry)
        }
    }
}
