import Foundation
import SubscriptionCore

// Where the tests and the benchmark keep the stores they open: beside the product, not in it,
// so the Store carries no hooks for them.

extension Store {
    /// An in-memory store, for tests. With SUBDESK_TEST_POSTGRES set to a postgres:// URI,
    /// a store in a new schema of that database instead, so the suite runs on both engines.
    public static func inMemory() throws -> Store { try Store(path: testLocation(file: ":memory:")) }

    /// Where a test keeps a store it opens by location: `file`, or with SUBDESK_TEST_POSTGRES
    /// set, a new schema of that database, so such tests run on both engines too.
    public static func testLocation(file: String) -> String {
        if let base = ProcessInfo.processInfo.environment["SUBDESK_TEST_POSTGRES"], !base.isEmpty {
            return freshPostgresLocation(base)
        }
        return file
    }

    /// `base` (a postgres:// URI) with a schema of its own that no store uses yet.
    public static func freshPostgresLocation(_ base: String) -> String {
        let name = "t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(20)
        return base + (base.contains("?") ? "&" : "?") + "schema=" + name
    }
}
