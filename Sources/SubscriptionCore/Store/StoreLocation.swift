import Foundation

/// Where a store lives, as a command is given it (`--db`): a SQLite file, SQLite in memory,
/// or a PostgreSQL database (`postgres://`). The command line asks it what it needs to know
/// (is there a file beside which to look, how to show it) instead of asking each engine's own
/// type.
public struct StoreLocation: Equatable, Sendable {
    public enum Kind: Sendable, Equatable {
        case file, memory, postgres
    }

    /// As given.
    public let text: String
    public let kind: Kind

    public init(_ text: String) {
        self.text = text
        kind = PostgresLocation.isPostgres(text) ? .postgres : text == ":memory:" ? .memory : .file
    }

    public var isPostgres: Bool { kind == .postgres }
    /// Whether the store is a file on this machine: one a command may look for, whose folder
    /// holds what sits beside the store.
    public var isFile: Bool { kind == .file }
    /// Fit to print: any secret a server's location holds replaced by `***`.
    public var redacted: String { PostgresLocation.redacted(text) }
    /// A short name for a screen's header: the file's name, or the database, schema and host.
    public var shortName: String {
        isPostgres ? PostgresLocation.displayName(text) : URL(fileURLWithPath: text).lastPathComponent
    }
    /// Why the text is refused as a store's place (a libpq keyword string, which may hold a
    /// password), if it is.
    public var problem: String? { PostgresLocation.keywordStringProblem(text) }
}
