import Foundation

/// An engine's dialect: its name, how it spells the few things the engines spell
/// differently, and the facts about its schema that the Store's SQL depends on. Each
/// engine gives one (`SQLDialect.sqlite` beside `SQLiteConnection`, `.postgres` beside
/// `PostgresConnection`); the Store reads from it rather than asking which engine it has.
public struct SQLDialect: Sendable, Equatable, CustomStringConvertible {
    /// The engine's short name, for labels (`engine="sqlite"`).
    public let name: String
    /// The engine as people call it, for messages.
    public let displayName: String
    /// The function that finds a text in another, `find(haystack, needle)`: 1-based, 0 when absent.
    let find: String
    /// The function that gives the larger of two values.
    let greatest: String
    /// A line end, as an SQL expression.
    let lineFeed: String
    /// How a read transaction that keeps one snapshot starts.
    let beginRead: String
    /// Rows a multi-row INSERT of small rows carries: where each statement is a round
    /// trip (a server), many; where it is a call (a library), one, so the statement is
    /// prepared once and reused.
    let rowsPerInsert: Int
    /// Whether writes of different subscriptions run side by side (`Store.write(touching:)`).
    let writersRunSideBySide: Bool
    /// Whether the store keeps a trigram index for search (`Store.textCondition`).
    let hasSearchIndex: Bool
    /// How long a long job that writes in short transactions (`Store.catchUpSegments`)
    /// pauses between them, in milliseconds, so a writer waiting meanwhile gets its turn:
    /// where waiters poll for the lock, long enough for a poll to land in the pause; where
    /// the server queues them and hands the lock over in order, none.
    let writeTurnPauseMs: Int
    /// The page sizes a page of subscriptions is read with, its limit written in the
    /// statement (a page of `limit` rows reads the first size at or over it, and the rows
    /// past `limit` are dropped); empty: the limit is a parameter. Where a statement whose
    /// limit is a parameter is planned anew at each run (a plan made without the limit reads
    /// the whole list, in parallel, and planning one app's page, which weighs every index
    /// that leads with the bundle id, took longer than reading it), a limit written in keeps
    /// one plan after its first runs. Few sizes, so that a process prepares few statements
    /// whatever its windows' heights.
    let pageSizesWrittenIn: [Int]
    /// Whether a page after a cursor bounds the sort key alone before the row value: where
    /// the engine seeks the list's index by it, and reads the row value alone (over an
    /// expression) as a test of each entry from the list's start, so that a page deep in the
    /// list would read every entry before it. An engine that seeks by the row value goes
    /// without: the bound beside it has its plan for a prepared page start parallel workers
    /// (12 ms a page at 1M, for 0.7).
    let pageBoundsSortKeyFirst: Bool
    /// Drops the subscriber `?1` when it owns no subscription and carries no user id. On a
    /// server, through a function the store's owner defines (`subdesk_drop_empty_subscriber`),
    /// so the roles that call it need no DELETE on the table (with which they could lock it).
    let dropEmptySubscriber: String
    /// What `doctor` says was checked when the audit log's guards are whole.
    public let auditGuardsWhole: String
    /// A condition on an `audit_log` row: its writer (the `operator` the server recorded)
    /// is the store's owner or a member of one of the roles given. On an engine without
    /// roles, always true.
    let auditWrittenBy: @Sendable ([String]) -> String

    // The schema's words: how the migrations (`Migrations.swift`) spell what the engines
    // spell otherwise, so a statement both engines run is written once.

    /// A whole-number column.
    let integer: String
    /// A text column: compared and sorted bytewise on both engines.
    let text: String
    /// A column of bytes.
    let bytes: String
    /// A generated row id, the table's primary key.
    let generatedID: String
    /// What ends a table that needs no separate row id (its primary key is the row's key).
    let withoutRowID: String
    /// The function that gives its second argument where the first is NULL, as a shared
    /// statement spells it (an expression index matches only the very same expression).
    let ifNull: String
    /// What ends a SELECT that claims rows for the writer: rows another writer is claiming
    /// at the same moment are skipped, not waited for, where writers run side by side
    /// (PostgreSQL's `FOR UPDATE SKIP LOCKED`); nothing where they take turns.
    let skipLocked: String
    /// What ends a SELECT whose rows the writer takes in turn with any other writer taking
    /// them: waited for, not skipped (PostgreSQL's `FOR UPDATE`); nothing where writers take
    /// turns anyway.
    let forUpdate: String
    /// An insert that skips rows whose key is already there: the statement's start, and
    /// what ends it.
    let insertOrIgnore: String
    let onConflictIgnore: String

    public var description: String { name }
    public static func == (a: SQLDialect, b: SQLDialect) -> Bool { a.name == b.name }
}
