import Foundation

/// A store failure that names the operation and the engine's reason.
public struct StoreError: Error, CustomStringConvertible {
    public let operation: String
    public let message: String
    /// SQLite's (extended) result code; 0 for a PostgreSQL error.
    public let code: Int32
    /// PostgreSQL's SQLSTATE, when the error came from PostgreSQL.
    public var sqlState: String? = nil
    /// A privilege the server refused this role, said in the role model's words.
    public var denial: PermissionDenial? = nil

    public init(operation: String, message: String, code: Int32, sqlState: String? = nil) {
        self.operation = operation
        self.message = message
        self.code = code
        self.sqlState = sqlState
    }

    public var description: String { denial?.description ?? "\(operation): \(message)" }

    /// PostgreSQL: this write lost a race with a concurrent one (a deadlock, a serialization
    /// failure, or a row another writer inserted first) and may simply be run again.
    public var isConflict: Bool { ["40P01", "40001", "23505", "23P01"].contains(sqlState ?? "") }

    /// PostgreSQL: the connection itself is gone (the server restarted or shut down, the
    /// network failed): a new connection may succeed where this one cannot.
    public var isConnectionLoss: Bool {
        guard let state = sqlState else { return false }
        return state.hasPrefix("08") || ["57P01", "57P02", "57P03"].contains(state)
    }

    /// Busy, locked, full or read-only, or (PostgreSQL) a serialization failure, a
    /// deadlock, a lost connection or a server short of resources: conditions a caller
    /// may retry later. Each engine reads its own codes.
    public var isTransient: Bool {
        if let state = sqlState { return StoreError.isTransient(sqlState: state) }
        return StoreError.isTransient(sqliteCode: code)
    }
}

/// The store's path no longer names the file this connection writes: another file was
/// moved there (a restore), or it was deleted (and perhaps made again by `init`). Nothing
/// more is written through this connection; open the store again.
public struct FileReplacedError: Error, CustomStringConvertible {
    public let path: String
    /// Nothing is at the path now.
    public let missing: Bool
    /// The write that found it had committed, into the file no path names any more.
    public let committed: Bool

    public var description: String {
        let what = missing ? "was deleted" : "names another file (a restore, or a new store)"
        return committed
            ? "the store file \(path) \(what) while this write committed: it went to the replaced file, not to the store at \(path)"
            : "the store file \(path) \(what) since it was opened: nothing was written; open it again"
    }
}

/// A command that reads (or writes without creating) named a store that does not exist.
public struct StoreNotFound: Error, CustomStringConvertible {
    public let path: String
    public var description: String { "no store at \(path)" }
}
