import Foundation

/// The columns of one table, each declared once as a case, in the table's order: the SQL
/// name is the case's name in snake case (`expiresMs` is `expires_ms`; the name comes from
/// the `CodingKey` conformance the compiler writes, not from reflection, which costs a
/// process that writes one row more than the row does), and `value(in:)`
/// says what a record writes to it, a switch the compiler holds to every column. The
/// INSERT or upsert text, its placeholders, the order values are bound in and where a
/// SELECT finds each column all come from this (`StoreTable`), as GRDB's record
/// protocols derive them from a record's columns.
protocol StoreColumn: CodingKey, CaseIterable, RawRepresentable where RawValue == Int, AllCases == [Self] {
    /// What a row is written from.
    associatedtype Record
    /// This column's value in `record`, as it is bound.
    func value(in record: Record) -> SQLBindable?
}

/// What a table type opens its writes with: the store's own `write`, which nests (a
/// savepoint inside a write already open) and flushes the held counts as it commits.
protocol WriteTransactions: AnyObject {
    func write<T>(_ body: () throws -> T) throws -> T
}

extension Store: WriteTransactions {}

/// A table's statements and bind order, derived once from its columns (kept in a `static
/// let`, so no statement is built per call).
struct StoreTable<Column: StoreColumn> {
    let name: String
    let key: Column
    /// Every column, in the table's order (a column's raw value is its place).
    let columns: [Column]
    /// Each column's SQL name, by place.
    let names: [String]
    /// `INSERT INTO name (…) VALUES (?, …) ON CONFLICT (key) DO UPDATE SET c = excluded.c, …`:
    /// a row already there is updated in place (REPLACE would delete and re-insert it,
    /// touching every index twice).
    let upsert: String

    init(_ name: String, key: Column) {
        self.name = name
        self.key = key
        columns = Column.allCases
        precondition(columns.enumerated().allSatisfy { $0.offset == $0.element.rawValue }, "\(name): columns out of place")
        names = columns.map { Self.snakeCase($0.stringValue) }
        let keyName = names[key.rawValue]
        upsert = "INSERT INTO \(name) (\(names.joined(separator: ", ")))"
            + " VALUES (\(SQLText.placeholders(names.count)))"
            + " ON CONFLICT (\(keyName)) DO UPDATE SET "
            + names.filter { $0 != keyName }.map { "\($0) = excluded.\($0)" }.joined(separator: ", ")
    }

    func name(_ column: Column) -> String { names[column.rawValue] }

    /// The INSERT of every column but `excluded` (a generated id, what a new row never has),
    /// made once (kept in a `static let`): its text, and the values it binds.
    func insert(excluding excluded: [Column] = []) -> StoreInsert<Column> {
        let written = columns.filter { column in !excluded.contains { $0.rawValue == column.rawValue } }
        return StoreInsert(sql: "INSERT INTO \(name) (\(written.map(name).joined(separator: ", ")))"
                               + " VALUES (\(SQLText.placeholders(written.count)))",
                           columns: written)
    }

    /// The values of `record`, in the order `upsert` binds them.
    func values(_ record: Column.Record) -> [SQLBindable?] {
        columns.map { $0.value(in: record) }
    }

    /// A SELECT list of `columns` (each name after `prefix`, such as `s.`), and where each
    /// lands: from `start` on, when a join's columns come after another selection's.
    func selection(_ columns: [Column], prefix: String = "", from start: Int32 = 0) -> StoreSelection<Column> {
        var positions = [Int32](repeating: -1, count: self.columns.count)
        for (place, column) in columns.enumerated() { positions[column.rawValue] = start + Int32(place) }
        return StoreSelection(list: columns.map { prefix + name($0) }.joined(separator: ", "), positions: positions,
                              count: Int32(columns.count))
    }

    /// Every column but `excluded`, in the table's order.
    func selection(excluding excluded: [Column] = [], prefix: String = "", from start: Int32 = 0) -> StoreSelection<Column> {
        selection(columns.filter { column in !excluded.contains { $0.rawValue == column.rawValue } }, prefix: prefix, from: start)
    }

    /// `expiresMs` → `expires_ms`.
    static func snakeCase(_ name: String) -> String { SQLText.snakeCase(name) }
}

/// `INSERT INTO name (…) VALUES (?, …)` of some of a table's columns, and the values of a
/// record it binds, in that order.
struct StoreInsert<Column: StoreColumn> {
    let sql: String
    let columns: [Column]

    func values(_ record: Column.Record) -> [SQLBindable?] { columns.map { $0.value(in: record) } }
}

/// Some columns of a table as a SELECT lists them, and where each lands in its rows.
struct StoreSelection<Column: StoreColumn> {
    /// `a, b, c`, for the SELECT.
    let list: String
    /// Each column's position in the row, by its place in the table; -1 for one not selected.
    let positions: [Int32]
    /// How many columns the list has: a join's columns start where this selection's end.
    let count: Int32

    /// A row of this selection, read by column.
    func row(_ row: SQLRow) -> ColumnRow<Column> { ColumnRow(row: row, positions: positions) }
}

/// A row whose values are read by name (a column, a selected expression), each name
/// standing for a position: the reads are written once here for both kinds of row.
protocol NamedRow {
    associatedtype Name
    var row: SQLRow { get }
    /// Where `name`'s value is in the row.
    func at(_ name: Name) -> Int32
}

extension NamedRow {
    func isNull(_ name: Name) -> Bool { row.isNull(at(name)) }
    func int64(_ name: Name) -> Int64 { row.int64(at(name)) }
    func int(_ name: Name) -> Int { row.int(at(name)) }
    func bool(_ name: Name) -> Bool { row.bool(at(name)) }
    func string(_ name: Name) -> String { row.string(at(name)) }
    func data(_ name: Name) -> Data { row.data(at(name)) }
    func optionalInt64(_ name: Name) -> Int64? { row.optionalInt64(at(name)) }
    func optionalInt(_ name: Name) -> Int? { row.optionalInt(at(name)) }
    func optionalString(_ name: Name) -> String? { row.optionalString(at(name)) }
    func optionalData(_ name: Name) -> Data? { isNull(name) ? nil : data(name) }
    func value(_ name: Name) -> SQLValue { row.value(at(name)) }
}

/// A row read by column rather than by position.
struct ColumnRow<Column: StoreColumn>: NamedRow {
    let row: SQLRow
    let positions: [Int32]

    func at(_ column: Column) -> Int32 {
        let position = positions[column.rawValue]
        precondition(position >= 0, "\(column) is not selected")
        return position
    }
}

extension SQLValue {
    /// Whether two values are the same as stored: a value about to be bound against one read back.
    func isSame(as other: SQLValue) -> Bool {
        switch (self, other) {
        case (.null, .null): return true
        case let (.integer(a), .integer(b)): return a == b
        case let (.real(a), .real(b)): return a == b
        case let (.text(a), .text(b)): return a == b
        case let (.blob(a), .blob(b)): return a == b
        default: return false
        }
    }
}

/// What one read selects that is not a table's column as it stands (a count, a sum, the
/// newest of something, a value from a subquery): each a case, in the SELECT's order, with
/// the expression it selects, so a row of them is read by case and not by position. The
/// aggregates' counterpart of `StoreColumn`; the query lists them with `list`.
protocol SelectedValues: CaseIterable, RawRepresentable where RawValue == Int, AllCases == [Self] {
    /// The expression, as the SELECT lists it.
    var sql: String { get }
}

extension SelectedValues {
    /// `a, b, c`: every case's expression, in order.
    static var list: String { allCases.map(\.sql).joined(separator: ", ") }

    /// How many values the list selects: what a join selects after them starts there.
    static var count: Int32 { Int32(allCases.count) }

    /// A row of these values, read by case; `start` is where the first is (0 unless a
    /// selection comes before them).
    static func row(_ row: SQLRow, from start: Int32 = 0) -> SelectedRow<Self> { SelectedRow(row: row, start: start) }
}

extension SelectedValues where Self: CodingKey {
    /// A plain column, named as the case is, in snake case (`bucket`, `heartbeatMs`).
    var sql: String { SQLText.snakeCase(stringValue) }
}

/// The app a row is about, selected after the row's own columns `AS bundle_id` (an audit
/// entry's target's, an intake line's).
enum SelectedApp: Int, SelectedValues, CodingKey { case bundleId }

/// A row of selected values, read by case.
struct SelectedRow<Value: SelectedValues>: NamedRow {
    let row: SQLRow
    let start: Int32

    func at(_ value: Value) -> Int32 { start + Int32(value.rawValue) }
}

/// How a Swift name, and a list of parameters, are spelled in SQL.
enum SQLText {
    /// `?,?,?`: the parameters of a list of `count` values (`IN (…)`, a row of an INSERT).
    static func placeholders(_ count: Int) -> String { Array(repeating: "?", count: count).joined(separator: ",") }

    /// `expiresMs` → `expires_ms`.
    static func snakeCase(_ name: String) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(name.utf8.count + 4)
        for byte in name.utf8 {
            if byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") {
                bytes += [UInt8(ascii: "_"), byte - UInt8(ascii: "A") + UInt8(ascii: "a")]
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
