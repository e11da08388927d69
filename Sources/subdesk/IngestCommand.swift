import Foundation
import SubscriptionCore
import TerminalUI

enum IngestCommand {
    static let help = """
    usage: subdesk ingest [--root-ca FILE]... [--bundle-id ID] [--app-apple-id N]
                          [--environment Production|Sandbox] [--allow-environment Xcode|LocalTesting]
                          [--allow-v1] [--shared-secret-file FILE] [--json] [PATH|-]...
           subdesk ingest --cgi

    Verifies and stores App Store server notifications. Each PATH holds one JSON body
    or NDJSON (one body per line); `-` (or no PATH) reads standard input. Every body is
    stored, recognised as a duplicate, or quarantined with the reason it was refused.
    Prints `ingested N, duplicates D, rejected R`; exits 0 when nothing was rejected, 1 otherwise.

    --cgi   CGI/1.1 mode: reads one POST body (CONTENT_LENGTH) from stdin and answers
            Status 200 once stored or a duplicate, 4xx for a body that can never be valid
            (it is quarantined), 5xx when it could not be stored, so Apple retries.
    """

    static let options: Set<String> = ["root-ca", "bundle-id", "app-apple-id", "environment", "allow-environment",
                                       "allow-v1", "shared-secret-file", "cgi", "quiet"]

    struct Counts { var stored = 0, duplicates = 0, rejected = 0 }

    static func run(_ context: Context) throws -> Int32 {
        if context.arguments.has("cgi") { return CGIIngest.run(context) }
        let store = try context.openStore()
        let intake = try context.makeIntake(store: store)
        if intake.policy.bundleId == nil {
            Output.warn("no bundle id configured: bundle ids are not checked (set bundle_id or pass --bundle-id)")
        }
        var counts = Counts()
        let paths = context.arguments.positionals.isEmpty ? ["-"] : context.arguments.positionals
        for path in paths {
            let data: Data
            if path == "-" {
                data = FileHandle.standardInput.readDataToEndOfFile()
            } else {
                guard let d = FileManager.default.contents(atPath: path) else {
                    throw UsageError("cannot read \(path): no such file or not readable")
                }
                data = d
            }
            let label = path == "-" ? "stdin" : path
            let bodies = splitBodies(data)
            // Bodies share a commit in small batches, each body still succeeding or failing
            // alone (a savepoint each); a batch ends after 500 bodies or 250 ms so other
            // writers (a CGI request, another ingest) never wait long for the lock.
            var index = 0
            while index < bodies.count {
                let started = DispatchTime.now().uptimeNanoseconds
                try store.write {
                    repeat {
                        let body = bodies[index]
                        let where_ = bodies.count > 1 ? "\(label):\(index + 1)" : label
                        switch try intake.ingest(body, source: where_) {
                        case .stored: counts.stored += 1
                        case .duplicate: counts.duplicates += 1
                        case .rejected(let reason, let id):
                            counts.rejected += 1
                            if !context.arguments.has("quiet") {
                                Output.error("rejected \(where_): \(SafeText.sanitize(reason)) (quarantine #\(id))")
                            }
                        }
                        index += 1
                    } while index < bodies.count && index % 500 != 0
                        && DispatchTime.now().uptimeNanoseconds - started < 250_000_000
                }
            }
        }
        if context.wantsJSON {
            Output.json(["ingested": counts.stored, "duplicates": counts.duplicates, "rejected": counts.rejected])
        } else {
            Output.line("ingested \(counts.stored), duplicates \(counts.duplicates), rejected \(counts.rejected)")
        }
        return counts.rejected == 0 ? 0 : 1
    }

    /// One JSON document, or NDJSON with one body per non-empty line.
    static func splitBodies(_ data: Data) -> [Data] {
        let newline = UInt8(ascii: "\n")
        let lines = data.split(separator: newline, omittingEmptySubsequences: true)
            .map { Data($0) }
            .filter { !$0.allSatisfy { $0 == 32 || $0 == 9 || $0 == 13 } }
        if lines.count <= 1 { return data.isEmpty || lines.isEmpty ? [data] : [data] }
        // A pretty-printed single document spans lines too: it parses whole.
        if (try? JSONSerialization.jsonObject(with: data)) != nil { return [data] }
        return lines
    }
}
