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
        // A batch job can wait its turn behind other writers longer than a web request can.
        let store = try context.openStore(busyTimeoutMs: 120_000)
        try store.checkpointEvery(pages: Store.batchCheckpointPages)
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
            // Bodies share a commit in small batches (a refused body is quarantined inside it;
            // a failing store stops the command with the batch rolled back, to be ingested
            // again: duplicates are answered as such); a batch ends after 500 bodies or 250 ms so other
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
        var lines: [Range<Int>] = []
        data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) in
            let bytes = raw.bindMemory(to: UInt8.self)
            var start = 0
            func flush(_ end: Int) {
                // Skip lines holding only whitespace.
                var i = start
                while i < end, bytes[i] == 32 || bytes[i] == 9 || bytes[i] == 13 { i += 1 }
                if i < end { lines.append(start..<end) }
            }
            for i in 0..<bytes.count where bytes[i] == 10 {
                flush(i)
                start = i + 1
            }
            flush(bytes.count)
        }
        if lines.count <= 1 { return [data] }
        // A pretty-printed single document spans lines too: its first line is not a whole body.
        let first = data.subdata(in: lines[0])
        if (try? JSONSerialization.jsonObject(with: first, options: [.fragmentsAllowed])) == nil,
           (try? JSONSerialization.jsonObject(with: data)) != nil {
            return [data]
        }
        let base = data.startIndex
        return lines.map { data[(base + $0.lowerBound)..<(base + $0.upperBound)] }
    }
}
