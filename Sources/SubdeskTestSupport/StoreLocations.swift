import Foundation
import SubscriptionCore

// Where the tests and the benchmark keep the stores they open: beside the product, not in it,
// so the Store carries no hooks for them. The tests open theirs through SubdeskTestKit, which
// knows which tests depend on the engine.

extension Store {
    /// `base` (a postgres:// URI) with a schema of its own that no store uses yet.
    public static func freshPostgresLocation(_ base: String) -> String {
        let name = "t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(20)
        return base + (base.contains("?") ? "&" : "?") + "schema=" + name
    }
}
