import Foundation
import SubscriptionCore

enum DashboardCommand {
    static let help = """
    usage: subdesk [dashboard] [--db PATH] [--theme NAME] [--tz ZONE]

    Opens the terminal dashboard on the store.
    """

    static func open(_ context: Context, databasePath: String) throws -> Int32 {
        Output.error("the dashboard is not available in this build; use show, search, notifications or quarantine on \(databasePath)")
        return 1
    }
}
