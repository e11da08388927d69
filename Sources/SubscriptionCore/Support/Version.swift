import Foundation
import CBuildInfo

/// The version `subdesk --version` prints, and what the build knew about itself.
public enum SubdeskVersion {
    public static let string = "0.1.0"

    /// The commit built, `-dirty` when the tree had changes; "unknown" for a build that was
    /// not told (deploy/package.sh tells it).
    public static var commit: String { String(cString: subdesk_build_commit()) }

    /// When it was built (`SOURCE_DATE_EPOCH` where set, so a build can be reproduced), as
    /// `yyyy-MM-ddTHH:mm:ssZ`; "unknown" for a build that was not told.
    public static var buildDate: String {
        let epoch = subdesk_build_epoch()
        guard epoch > 0 else { return "unknown" }
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(epoch)))
    }

    /// How the Swift runtime was linked: `static-stdlib` (the package), `static` (deploy/build.sh),
    /// `dynamic`, or "unknown".
    public static var linking: String { String(cString: subdesk_build_linking()) }

    /// The store engines this build can open.
    public static var engines: [String] {
        #if SUBDESK_NO_POSTGRES
        return ["sqlite"]
        #else
        return ["sqlite", "postgresql"]
        #endif
    }

    /// What `subdesk --version` prints after the first line, and `subdesk_build_info`'s
    /// labels: each name and its value.
    public static var details: [(name: String, value: String)] {
        [("commit", commit), ("built", buildDate), ("engines", engines.joined(separator: ",")), ("linking", linking)]
    }

    /// `subdesk --version`.
    public static var text: String {
        (["subdesk \(string)"] + details.map { "\($0.name): \($0.value)" }).joined(separator: "\n")
    }
}
