import Foundation
import FakeApple
import SubscriptionCore

/// Runs `executable` to its end with stdout and stderr gathered together; `environment`
/// nil inherits this process's. The one way these tests run a helper program to completion.
func runToEnd(_ executable: String, _ arguments: [String],
              environment: [String: String]? = nil) throws -> (status: Int32, output: String) {
    try ChildOutput.run(executable, arguments, environment: environment)
}

/// Asks a store's engine directly, past subdesk, as an operator would: sqlite3 for a file,
/// psql in the store's schema for a postgres:// location. Columns are joined by `|` and
/// rows by newlines on both; an error comes back as its message.
func engineQuery(_ db: String, _ sql: String) throws -> String {
    guard PostgresLocation.isPostgres(db) else {
        return try runToEnd("/usr/bin/env", ["sqlite3", db, sql]).output.trimmingCharacters(in: .whitespacesAndNewlines)
    }
    let location = try PostgresLocation(db)
    let path = location.schema.map { "SET search_path TO \($0);" } ?? ""
    let r = try runToEnd("/usr/bin/env", ["psql", "-d", location.conninfo, "-AtqX", "-v", "ON_ERROR_STOP=1",
                                          "-c", "SET client_min_messages = warning;" + path, "-c", sql])
    return r.output.trimmingCharacters(in: .whitespacesAndNewlines)
}

/// A value that several test threads fill in, behind a lock.
final class Shared<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func update(_ change: (inout Value) -> Void) {
        lock.lock()
        defer { lock.unlock() }
        change(&value)
    }
    var current: Value {
        lock.lock()
        defer { lock.unlock() }
        return value
    }
}
