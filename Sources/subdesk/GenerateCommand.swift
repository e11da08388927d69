import Foundation
import SubdeskScenarios
import SubscriptionCore

enum GenerateCommand {
    static let spec: CommandSpec = CommandSpec(
        name: "generate", abstract: "build a large generated store for benchmarks",
        usage: "subdesk generate --subscribers N [--db PATH] [--seed N]",
        discussion: """
        Builds a large, realistic store for benchmarks and load tests directly through the
        store (not through intake): about ten transactions per subscription, every status,
        about 5% family-shared, notifications over the past year. Generated notifications
        are unsigned placeholders and are marked as generated. Refuses to touch an
        existing file.
        """,
        options: [
            .value(.subscribers, "N", "how many subscribers (1 to 50,000,000)"),
            .value(.seed, "N", "the random seed (default 42)"),
        ],
        action: StoreAction(words: "generate a store", privilege: .insert, table: "notifications"),
        installedConfig: false,
        run: run)

    static func run(_ context: Context) throws -> Int32 {
        guard let n = try context.arguments.int(.subscribers), n > 0, n <= 50_000_000 else {
            throw UsageError("generate needs --subscribers N (1 to 50,000,000)")
        }
        let path = context.databasePath
        if FileManager.default.fileExists(atPath: path) {
            throw UsageError("\(path) exists; generate writes only new stores")
        }
        let store = try Store(path: path)
        let tty = isatty(STDERR_FILENO) == 1
        let summary = try StoreGenerator(subscribers: n, seed: UInt64(bitPattern: Int64(try context.arguments.int(.seed) ?? 42)))
            .generate(into: store) { done in
                if tty { FileHandle.standardError.write(Data("\rgenerated \(done) of \(n) subscribers".utf8)) }
            }
        if tty { FileHandle.standardError.write(Data("\n".utf8)) }
        Output.line("generated \(summary.subscribers) subscribers, \(summary.transactions) transactions, "
                    + "\(summary.notifications) notifications in \(String(format: "%.1f", summary.seconds))s into \(path)")
        return 0
    }
}
