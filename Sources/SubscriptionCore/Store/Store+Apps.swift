/// The app a command reads: the records carrying its bundle id, and those carrying none
/// (stored by an earlier subdesk from data that named no app) when it is the only app.
public struct AppScope: Equatable, Sendable {
    public var bundleId: String
    public var includesUnknown: Bool

    public init(bundleId: String, includesUnknown: Bool) {
        self.bundleId = bundleId
        self.includesUnknown = includesUnknown
    }

    /// Whether a record carrying `recorded` is this app's.
    public func contains(_ recorded: String?) -> Bool { recorded.map { $0 == bundleId } ?? includesUnknown }
}

extension AppScope {
    /// The condition that `column` (a bundle id) is this app's, binding the bundle id to `placeholder`.
    func condition(_ column: String, placeholder: String = "?") -> String {
        includesUnknown ? "(\(column) = \(placeholder) OR \(column) IS NULL)" : "\(column) = \(placeholder)"
    }
}

extension Store {
    /// `AND` the condition that a row's `bundle_id` is `app`'s, and the value it binds;
    /// nothing without one.
    static func appCondition(_ app: AppScope?) -> (sql: String, values: [SQLBindable?]) {
        guard let app else { return ("", []) }
        return (" AND " + app.condition("bundle_id"), [app.bundleId])
    }
}
