import Foundation

/// A value that can be bound to a statement parameter, on any engine.
public protocol SQLBindable {
    /// The value, engine-neutral.
    var sqlValue: SQLValue { get }
    /// Hands the value to `sink` as what it is, without making a `SQLValue` of it first:
    /// an engine that binds values in place (SQLite) copies nothing and counts no
    /// references per value.
    func bind<Sink: SQLValueSink>(to sink: inout Sink)
}

/// Where an engine takes a parameter's value; each call hands over one value.
public protocol SQLValueSink {
    mutating func null()
    mutating func integer(_ value: Int64)
    mutating func real(_ value: Double)
    mutating func text(_ value: String)
    mutating func blob(_ value: Data)
}

/// A parameter's value, engine-neutral.
public enum SQLValue {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob(Data)
}

extension Int64: SQLBindable {
    public var sqlValue: SQLValue { .integer(self) }
    public func bind<Sink: SQLValueSink>(to sink: inout Sink) { sink.integer(self) }
}
extension Int: SQLBindable {
    public var sqlValue: SQLValue { .integer(Int64(self)) }
    public func bind<Sink: SQLValueSink>(to sink: inout Sink) { sink.integer(Int64(self)) }
}
extension Bool: SQLBindable {
    public var sqlValue: SQLValue { .integer(self ? 1 : 0) }
    public func bind<Sink: SQLValueSink>(to sink: inout Sink) { sink.integer(self ? 1 : 0) }
}
extension Double: SQLBindable {
    public var sqlValue: SQLValue { .real(self) }
    public func bind<Sink: SQLValueSink>(to sink: inout Sink) { sink.real(self) }
}
extension String: SQLBindable {
    public var sqlValue: SQLValue { .text(self) }
    public func bind<Sink: SQLValueSink>(to sink: inout Sink) { sink.text(self) }
}
extension Data: SQLBindable {
    public var sqlValue: SQLValue { .blob(self) }
    public func bind<Sink: SQLValueSink>(to sink: inout Sink) { sink.blob(self) }
}
extension Optional: SQLBindable where Wrapped: SQLBindable {
    public var sqlValue: SQLValue { self?.sqlValue ?? .null }
    public func bind<Sink: SQLValueSink>(to sink: inout Sink) {
        switch self {
        case .some(let v): v.bind(to: &sink)
        case .none: sink.null()
        }
    }
}
extension SQLValue: SQLBindable {
    public var sqlValue: SQLValue { self }
    public func bind<Sink: SQLValueSink>(to sink: inout Sink) {
        switch self {
        case .null: sink.null()
        case .integer(let v): sink.integer(v)
        case .real(let v): sink.real(v)
        case .text(let v): sink.text(v)
        case .blob(let v): sink.blob(v)
        }
    }
}

/// One row of a result, read by column index. Each engine reads its own rows (`SQLiteRow`,
/// `PostgresRow`); the row says once, here, which one it holds, and every accessor hands
/// the read to it: no allocation and no dynamic dispatch per column.
public struct SQLRow {
    enum Source {
        case sqlite(SQLiteRow)
        case postgres(PostgresRow)
    }
    let source: Source

    init(_ row: SQLiteRow) { source = .sqlite(row) }
    init(_ row: PostgresRow) { source = .postgres(row) }

    public func isNull(_ i: Int32) -> Bool {
        switch source {
        case .sqlite(let r): return r.isNull(i)
        case .postgres(let r): return r.isNull(i)
        }
    }
    public func int64(_ i: Int32) -> Int64 {
        switch source {
        case .sqlite(let r): return r.int64(i)
        case .postgres(let r): return r.int64(i)
        }
    }
    public func double(_ i: Int32) -> Double {
        switch source {
        case .sqlite(let r): return r.double(i)
        case .postgres(let r): return r.double(i)
        }
    }
    public func string(_ i: Int32) -> String {
        switch source {
        case .sqlite(let r): return r.string(i)
        case .postgres(let r): return r.string(i)
        }
    }
    public func data(_ i: Int32) -> Data {
        switch source {
        case .sqlite(let r): return r.data(i)
        case .postgres(let r): return r.data(i)
        }
    }
    /// The column's value as the engine typed it, for copying rows between engines.
    func value(_ i: Int32) -> SQLValue {
        switch source {
        case .sqlite(let r): return r.value(i)
        case .postgres(let r): return r.value(i)
        }
    }

    public func int(_ i: Int32) -> Int { Int(int64(i)) }
    public func bool(_ i: Int32) -> Bool { int64(i) != 0 }
    public func optionalInt64(_ i: Int32) -> Int64? { isNull(i) ? nil : int64(i) }
    public func optionalInt(_ i: Int32) -> Int? { isNull(i) ? nil : int(i) }
    public func optionalString(_ i: Int32) -> String? { isNull(i) ? nil : string(i) }
}
