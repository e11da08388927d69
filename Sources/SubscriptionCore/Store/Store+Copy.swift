import Foundation

/// How far a copy between stores has come.
public struct CopyProgress: Sendable {
    public var table: String
    public var rows: Int
    public var tableDone: Bool
}

extension StoreUpkeep {
    /// The tables a store's data lives in, on both engines, parents before children. The
    /// search index (SQLite) and the version and change counters (PostgreSQL) belong to
    /// an engine and are rebuilt or kept by it, not copied.
    static let copiedTables = [
        "subscribers", "subscriptions", "transactions", "renewal_info", "notifications", "jws_headers",
        "quarantine", "intake_log", "metric_buckets", "status_counts", "metrics_pending", "metric_segments",
        "metric_segments_pending", "metric_segments_catchup", "audit_log", "overrides", "receipts", "verified_chains", "store_facts",
        "backfill_runs", "delivery_gaps", "renewal_extensions", "refund_requests", "intake_counts", "retention_messaging",
        "forward_owed", "forward_outbox", "forward_attempts", "retention_decisions",
    ]

    /// The columns of `table`, in order.
    func columns(of table: String) throws -> [String] { try db.columns(of: table) }

    /// Whether the store holds anything a copy could overwrite or mix with.
    public func holdsData() throws -> Bool {
        for table in ["notifications", "subscriptions", "quarantine", "audit_log", "overrides"] {
            if try db.holds("SELECT EXISTS (SELECT 1 FROM \(table))") { return true }
        }
        return false
    }

    /// Copies every row of `source` into this store, which must hold nothing, in one write:
    /// the same tables, columns and values, ids included. On PostgreSQL the tables'
    /// triggers are off meanwhile (they would open refund requests again and stamp the
    /// audit log with the copying user), which needs the tables' owner.
    public func copyAll(from source: Store, batch: Int = 5_000, progress: (CopyProgress) -> Void = { _ in }) throws {
        guard try !holdsData() else {
            throw StoreError(operation: "copy into \(store.path)", message: "it already holds data; copying would mix two stores", code: 0)
        }
        try store.write { try source.inOneSnapshot {
            try db.copyStarts(into: Self.copiedTables)
            for table in Self.copiedTables {
                let theirs = Set(try source.upkeep.columns(of: table))
                let columns = try columns(of: table).filter { theirs.contains($0) }
                guard !columns.isEmpty else { continue }
                // Rows the triggers made while earlier tables were copied are replaced by the source's.
                try db.run("DELETE FROM \(table)")
                let list = columns.joined(separator: ", ")
                // Many rows to a statement: one round trip per chunk on PostgreSQL, and under
                // either engine's limit on parameters (PostgreSQL's is 65,535).
                let perStatement = max(1, min(100, 30_000 / columns.count))
                let tuple = "(" + SQLText.placeholders(columns.count) + ")"
                func insert(_ count: Int) -> String {
                    "INSERT INTO \(table) (\(list)) VALUES " + Array(repeating: tuple, count: count).joined(separator: ",")
                }
                let full = insert(perStatement)
                var rows = 0
                var pending = 0
                var values: [SQLBindable?] = []
                values.reserveCapacity(columns.count * perStatement)
                try source.db.stream("SELECT \(list) FROM \(table)") { row in
                    for i in 0..<columns.count { values.append(row.value(Int32(i))) }
                    pending += 1
                    rows += 1
                    if pending == perStatement {
                        try db.run(full, values)
                        values.removeAll(keepingCapacity: true)
                        pending = 0
                    }
                    if rows % batch == 0 { progress(CopyProgress(table: table, rows: rows, tableDone: false)) }
                }
                if pending > 0 { try db.run(insert(pending), values) }
                progress(CopyProgress(table: table, rows: rows, tableDone: true))
            }
            try db.copyEnded(into: Self.copiedTables)
        } }
    }

    /// Each copied table's row count, for checking a copy.
    public func tableCounts() throws -> [String: Int] {
        var counts: [String: Int] = [:]
        for table in Self.copiedTables { counts[table] = try db.count("SELECT count(*) FROM \(table)") }
        return counts
    }

    /// A digest of every copied table's rows, equal for two stores holding the same data on
    /// either engine: each row's values in a canonical text are hashed, and the row hashes
    /// added up lane by lane, so the order rows come in does not matter and no table is
    /// held in memory. Read from one consistent state of the store.
    public func contentDigest() throws -> [String: String] {
        try store.inOneSnapshot {
            var digests: [String: String] = [:]
            for table in Self.copiedTables {
                let columns = try columns(of: table)
                var lanes: [UInt64] = [0, 0, 0, 0]
                var rows = 0
                try db.stream("SELECT \(columns.joined(separator: ", ")) FROM \(table)") { row in
                    // Each value as its kind, its length and its bytes, so no two rows share a text.
                    var line = Data()
                    func add(_ kind: String, _ bytes: Data) {
                        line.append(contentsOf: Array("\(kind)\(bytes.count):".utf8))
                        line.append(bytes)
                    }
                    for i in 0..<columns.count {
                        switch row.value(Int32(i)) {
                        case .null: add("N", Data())
                        case .integer(let v): add("i", Data(String(v).utf8))
                        case .real(let v): add("r", Data("\(v)".utf8))
                        case .text(let v): add("t", Data(v.utf8))
                        case .blob(let v): add("b", v)
                        }
                    }
                    let hash = ContentDigest.sha256(line)
                    hash.withUnsafeBytes { bytes in
                        for lane in 0..<4 { lanes[lane] &+= bytes.loadUnaligned(fromByteOffset: lane * 8, as: UInt64.self) }
                    }
                    rows += 1
                }
                digests[table] = "\(rows):" + lanes.map { String(format: "%016llx", $0) }.joined()
            }
            return digests
        }
    }
}
