import Foundation

/// Which subscriptions a list shows, and in what order.
public struct SubscriptionQuery: Equatable, Sendable {
    public enum Sort: String, CaseIterable, Sendable {
        case expires, lastEvent
        var column: String { self == .expires ? "IFNULL(s.expires_ms, 0)" : "IFNULL(s.last_event_ms, 0)" }
    }

    public var statuses: Set<SubscriptionStatus>
    /// Text found anywhere, ignoring ASCII case, in an originalTransactionId, latest
    /// transactionId, product, user id or appAccountToken.
    public var text: String
    public var sort: Sort
    public var descending: Bool
    /// At most this many rows of the list are read per page when `text` is tested row by
    /// row; nil reads as far as it takes. See `Store.page(_:after:backward:limit:)`.
    public var scanLimit: Int?
    /// The scan limit of a filter applied as it is typed: few enough rows for a keystroke
    /// to stay within 50 ms at a million subscribers (`subdesk-bench`).
    public static let keystrokeScanLimit = 10_000
    /// Only this app's subscriptions; nil for every app's.
    public var app: AppScope?

    public init(statuses: Set<SubscriptionStatus> = [], text: String = "", sort: Sort = .expires, descending: Bool = false,
                app: AppScope? = nil) {
        self.app = app
        self.statuses = statuses
        self.text = text
        self.sort = sort
        self.descending = descending
    }
}

/// A position in a sorted list: the sort key and id of a row, exclusive.
public struct PageCursor: Equatable, Sendable {
    public var key: Int64
    public var originalTransactionId: String
}

extension SubscriptionTable {
    /// Up to `limit` rows after (or before) `cursor`, in query order. Keyset paging: the
    /// cost of any page is that of the first, however deep it is.
    public func page(_ q: SubscriptionQuery, after cursor: PageCursor? = nil, backward: Bool = false,
                     limit: Int) throws -> [SubscriptionRow] {
        try pageWithin(q, after: cursor, backward: backward, limit: limit).rows
    }

    /// As `page`, reading at most `q.scanLimit` rows of the list when a filter text is tested
    /// row by row (one that matches many rows; see `textCondition`). `complete` is false
    /// when the page is short because that bound was reached, not because the list ended:
    /// more matches may lie further on. A filter applied as it is typed bounds each
    /// keystroke's work this way, whatever the order of the list puts first.
    public func pageWithin(_ q: SubscriptionQuery, after cursor: PageCursor? = nil, backward: Bool = false,
                           limit: Int) throws -> (rows: [SubscriptionRow], complete: Bool) {
        let bounds = Self.pageBounds(q, after: cursor, backward: backward, dialect: db.dialect)
        var conditions = bounds.conditions, values = bounds.values
        let order = bounds.order
        let match = q.text.isEmpty ? nil : try textCondition(q.text)
        let rows: [SubscriptionRow]
        var complete = true
        if let match, let scanLimit = q.scanLimit, match.testsEachRow {
            // Read the list in order, test each row, and stop at a full page or at the
            // bound; only rows that match are decoded.
            var found: [SubscriptionRow] = []
            var read = 0
            try db.scan("""
                SELECT \(Self.rowColumns), \(match.sql) AS matched FROM \(Self.rowSource)
                \(conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND "))
                ORDER BY \(order) LIMIT ?
                """, [match.value] + values + [scanLimit]) { r in
                read += 1
                if Matched.row(r, from: Self.rowColumnCount).bool(.matched) { found.append(Self.row(r)) }
                return found.count < limit
            }
            rows = found
            complete = found.count == limit || read < scanLimit
        } else {
            if let match {
                conditions.append(match.sql)
                values.append(match.value)
            }
            // The statement may read a few rows past the page (`SQLDialect.pageSizesWrittenIn`): they
            // are neither decoded nor fetched once the page is full.
            let read = Self.pageRead(conditions, order: order, limit: limit, dialect: db.dialect)
            var found: [SubscriptionRow] = []
            if limit > 0 {
                try db.scan(read.sql, values + read.values) { r in
                    found.append(Self.row(r))
                    return found.count < limit
                }
            }
            rows = found
        }
        return (backward ? rows.reversed() : rows, complete)
    }

    /// The statement reading a page of `limit` rows that meet `conditions` in `order` on
    /// `dialect`'s engine, and the value it binds after the conditions' own. It may read
    /// more rows than `limit` (`SQLDialect.pageSizesWrittenIn`): the first `limit` are the page.
    static func pageRead(_ conditions: [String], order: String, limit: Int, dialect: SQLDialect)
        -> (sql: String, values: [SQLBindable?]) {
        var clause = "LIMIT ?", values: [SQLBindable?] = [limit]
        if limit > 0, let size = dialect.pageSizesWrittenIn.first(where: { $0 >= limit }) {
            (clause, values) = ("LIMIT \(size)", [])
        }
        return ("""
            SELECT \(Self.rowColumns) FROM \(Self.rowSource)
            \(conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND "))
            ORDER BY \(order) \(clause)
            """, values)
    }

    /// The conditions (with the values they bind) and the order of the rows of `q` after
    /// `cursor` on `dialect`'s engine, its text apart.
    static func pageBounds(_ q: SubscriptionQuery, after cursor: PageCursor?, backward: Bool, dialect: SQLDialect)
        -> (conditions: [String], values: [SQLBindable?], order: String) {
        var conditions: [String] = []
        var values: [SQLBindable?] = []
        if !q.statuses.isEmpty {
            conditions.append("s.status IN (\(q.statuses.map { String($0.rawValue) }.sorted().joined(separator: ",")))")
        }
        if let app = q.app {
            conditions.append(app.condition("s.bundle_id"))
            values.append(app.bundleId)
        }
        // Reading forward in a descending list is reading backward in key order, and so on.
        let ascendingScan = q.descending == backward
        if let cursor {
            let after = ascendingScan ? ">" : "<"
            if dialect.pageBoundsSortKeyFirst {
                conditions.append("\(q.sort.column) \(after)= ?")
                values.append(cursor.key)
            }
            conditions.append("(\(q.sort.column), s.original_transaction_id) \(after) (?, ?)")
            values += [cursor.key, cursor.originalTransactionId]
        }
        let order = "\(q.sort.column) \(ascendingScan ? "ASC" : "DESC"), s.original_transaction_id \(ascendingScan ? "ASC" : "DESC")"
        return (conditions, values, order)
    }

    /// Whether a row read for a filter tested on each row matched it: selected after the row.
    enum Matched: Int, SelectedValues {
        case matched
        var sql: String { "matched" }
    }

    /// Matches of at most this many rows are read from the trigram index and then sorted;
    /// a text that matches more is found by reading the list in order until a page is full.
    static let sparseMatchLimit = 10_000

    /// How `page` and `search` find a text: through the trigram index, or by testing each
    /// row while reading the list in order.
    enum SearchPlan: Equatable {
        /// Three characters or more: a GLOB on the indexed text, which the index narrows to
        /// the rows holding every trigram of the text and then checks.
        case glob(String)
        /// One or two characters: an FTS5 query for any of the index's trigrams that start with them.
        case trigrams(String)
        case scan
        case nothing
    }

    /// The condition on `s` (a subscription) and `b` (its subscriber) that `text` found in
    /// one of the searched fields means, with the value it binds to `placeholder`, and
    /// whether it is tested on each row read (`.scan`) rather than looked up.
    ///
    /// Both ways match the same rows; which is faster depends on how many match. A text
    /// that matches few rows (an id's tail, a user id) is looked up in the trigram index.
    /// One that matches many (`premium`, `1`) is faster to test row by row while reading
    /// the list in its order, which stops once a page is full: with more than
    /// `sparseMatchLimit` matches, that is within a few thousand rows. The plan is
    /// remembered for the text where it cannot go stale, as paging asks again.
    func textCondition(_ text: String, placeholder: String = "?") throws -> (sql: String, value: SQLBindable, testsEachRow: Bool) {
        let needle = Self.asciiLowercased(text)
        // Without a trigram index (PostgreSQL), the search text is tested on each row read.
        guard db.dialect.hasSearchIndex else { return (containsCondition(placeholder), needle, true) }
        let plan: SearchPlan
        if try !refreshSearchIndex() {
            // An index behind the store answers wrongly, and a reader that cannot write
            // cannot bring it up to date: read the list instead.
            plan = .scan
        } else if let known = memory.searchPlans[needle] {
            plan = known
        } else {
            plan = try searchPlan(needle)
            // Only a plan that holds whatever is written next is kept: `.nothing` and a list
            // of trigrams are true of the store as it is now.
            if case .trigrams = plan {} else if plan != .nothing {
                if memory.searchPlans.count > 256 { memory.searchPlans.removeAll() }
                memory.searchPlans[needle] = plan
            }
        }
        switch plan {
        case .glob(let pattern):
            return ("s.rowid IN (SELECT rowid FROM subscription_search WHERE text GLOB \(placeholder))", pattern, false)
        case .trigrams(let query):
            return ("s.rowid IN (SELECT rowid FROM subscription_search WHERE subscription_search MATCH \(placeholder))", query, false)
        case .scan:
            return (containsCondition(placeholder), needle, true)
        case .nothing:
            return ("\(placeholder) IS NULL", needle, false)
        }
    }

    /// The condition that the search text of `s` and `b` holds the text `placeholder` binds.
    func containsCondition(_ placeholder: String) -> String {
        "\(db.dialect.find)(\(Migrations.searchText("s", "b", dialect: db.dialect)), \(placeholder)) > 0"
    }

    /// Counts what the index holds for `needle` (lower-cased) and picks the plan.
    func searchPlan(_ needle: String) throws -> SearchPlan {
        // A line end separates fields in the indexed text; nothing typed spans two.
        if needle.isEmpty || needle.contains("\n") { return needle.isEmpty ? .scan : .nothing }
        let scalars = Array(needle.unicodeScalars)
        if scalars.count >= 3 {
            // Rows holding every trigram of the text: a superset of the matches, counted from
            // the index alone (a GLOB would read each row's text to check it).
            var grams: [String] = []
            for start in 0...(scalars.count - 3) {
                let gram = String(String.UnicodeScalarView(scalars[start..<(start + 3)]))
                if !grams.contains(gram) { grams.append(gram) }
            }
            let candidates = try db.count("""
                SELECT count(*) FROM (SELECT rowid FROM subscription_search WHERE subscription_search MATCH ? LIMIT ?)
                """, [grams.map(Self.ftsPhrase).joined(separator: " AND "), Self.sparseMatchLimit + 1])
            if candidates == 0 { return .nothing }
            return candidates <= Self.sparseMatchLimit ? .glob(Self.globContaining(needle)) : .scan
        }
        // Shorter than a trigram: every place it occurs starts one of the index's trigrams
        // (the indexed text ends in two line ends), so those trigrams find every match.
        // Their document counts, summed, bound the matches from above.
        // Counting a trigram's rows reads its whole list: past `manyTerms` trigrams the text
        // is common enough to be found by reading the list in order anyway.
        let manyTerms = 64
        let terms = try db.rows("""
            SELECT \(Term.list) FROM subscription_search_terms WHERE term >= ? AND term < ? LIMIT ?
            """, [needle, needle + "\u{10FFFF}", manyTerms + 1]) { row in
            let r = Term.row(row)
            return (term: r.string(.term), documents: r.int(.doc))
        }
        if terms.isEmpty { return .nothing }
        if terms.count > manyTerms || terms.reduce(0, { $0 + $1.documents }) > Self.sparseMatchLimit { return .scan }
        return .trigrams(terms.map { Self.ftsPhrase($0.term) }.joined(separator: " OR "))
    }

    /// A trigram of the search index and how many rows hold it (`subscription_search_terms`).
    enum Term: Int, SelectedValues, CodingKey { case term, doc }

    /// `text` as one FTS5 phrase: quoted, with its quotes doubled, so nothing in it is syntax.
    static func ftsPhrase(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// Indexes the subscriptions noted in `search_pending` since the index was last asked,
    /// in one write; false when some are pending and this connection cannot write.
    @discardableResult
    public func refreshSearchIndex() throws -> Bool {
        guard db.dialect.hasSearchIndex else { return true }
        guard try db.holds("SELECT EXISTS (SELECT 1 FROM search_pending)") else { return true }
        if store.opening.readOnly { return false }
        try store.write {
            try db.execute("""
                DELETE FROM subscription_search WHERE rowid IN (SELECT subscription FROM search_pending);
                INSERT INTO subscription_search (rowid, text)
                    SELECT s.rowid, \(Migrations.searchText("s", "b")) FROM search_pending p
                    JOIN subscriptions s ON s.rowid = p.subscription JOIN subscribers b ON b.id = s.subscriber_id;
                DELETE FROM search_pending;
                """)
        }
        return true
    }

    /// A GLOB pattern for text containing `text`, in which `*`, `?` and `[` mean themselves.
    static func globContaining(_ text: String) -> String {
        var pattern = "*"
        for c in text {
            if c == "*" || c == "?" || c == "[" { pattern += "[\(c)]" } else { pattern.append(c) }
        }
        return pattern + "*"
    }

    /// ASCII letters lower-cased and everything else as it is: what SQLite's lower() does,
    /// so a typed text and the stored search text fold alike.
    static func asciiLowercased(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.map { scalar in
            (65...90).contains(scalar.value) ? Unicode.Scalar(scalar.value + 32)! : scalar
        }))
    }

    /// The cursor that stands for `row` in `query`'s order.
    public static func cursor(for row: SubscriptionRow, in query: SubscriptionQuery) -> PageCursor {
        let key = query.sort == .expires ? (row.state.expiresDate ?? 0) : (row.state.lastEventDate ?? 0)
        return PageCursor(key: key, originalTransactionId: row.state.originalTransactionId)
    }

    /// A status and how many subscriptions have it.
    enum StatusCount: Int, SelectedValues, CodingKey { case status, count }

    /// How many subscriptions have each status; with `app`, of its subscriptions (counted
    /// through the app's status index rather than read from the store-wide counters).
    public func statusCounts(app: AppScope? = nil) throws -> [SubscriptionStatus: Int] {
        var result: [SubscriptionStatus: Int] = [:]
        let read: (sql: String, values: [SQLBindable?]) = app.map {
            ("SELECT \(StatusCount.list) FROM (SELECT status, count(*) AS count FROM subscriptions WHERE \($0.condition("bundle_id")) GROUP BY status) AS counted",
             [$0.bundleId])
        } ?? ("SELECT \(StatusCount.list) FROM status_counts WHERE count <> 0", [])
        try db.query(read.sql, read.values) { row in
            let r = StatusCount.row(row)
            if let s = SubscriptionStatus(rawValue: r.int(.status)) { result[s] = r.int(.count) }
        }
        return result
    }

    /// Subscriptions with `text` anywhere in their ids, product, or owner's user id or
    /// token (ASCII case ignored), those holding a transaction whose id starts with
    /// `text`, and those bought from the app download (appTransactionId) `text`. Every character in `text` means itself (`%` and `_` too).
    /// With `app`, only that app's.
    public func search(_ text: String, limit: Int = 50, app: AppScope? = nil) throws -> [SubscriptionRow] {
        let match = try textCondition(text, placeholder: "?1")
        // Scoped, each way of finding a subscription finds only the app's, so the limit counts only theirs.
        let own = app.map { " AND " + $0.condition("s.bundle_id", placeholder: "?5") } ?? ""
        let ownTransaction = app.map {
            " AND EXISTS (SELECT 1 FROM subscriptions s WHERE s.original_transaction_id = transactions.original_transaction_id"
                + " AND \($0.condition("s.bundle_id", placeholder: "?5")))"
        } ?? ""
        return try db.rows("""
            SELECT \(Self.rowColumns) FROM \(Self.rowSource)
            WHERE s.original_transaction_id IN (
                SELECT s.original_transaction_id FROM \(Self.rowSource) WHERE \(match.sql)\(own)
                UNION SELECT original_transaction_id FROM transactions WHERE transaction_id >= ?2 AND transaction_id < ?3\(ownTransaction)
                UNION SELECT original_transaction_id FROM transactions WHERE app_transaction_id = ?2\(ownTransaction)
                LIMIT ?4)
            ORDER BY s.original_transaction_id LIMIT ?4
            """,
            [match.value, text, text + "\u{10FFFF}", limit] + (app.map { [$0.bundleId] } ?? []), Self.row)
    }
}
