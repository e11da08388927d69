import Foundation
import SubscriptionCore
import TerminalUI

enum IngestCommand {
    static let spec: CommandSpec = CommandSpec(
        name: "ingest", arguments: "[PATH|-]...", abstract: "verify and store notifications from files, stdin, or CGI (--cgi)",
        usage: """
        subdesk ingest [--root-ca FILE]... [--bundle-id ID] [--app-apple-id N]
                       [--environment Production|Sandbox] [--allow-environment Xcode|LocalTesting]
                       [--allow-v1] [--shared-secret-file FILE] [--revocation-check off|ocsp]
                       [--batch-size N] [--workers N] [--json] [PATH|-]...
        subdesk ingest --cgi
        """,
        discussion: """
        Verifies and stores App Store server notifications. Each PATH holds one JSON body
        or NDJSON (one body per line); `-` (or no PATH) reads standard input. Every body is
        stored, recognised as a duplicate, or quarantined with the reason it was refused.
        Prints `ingested N, duplicates D, rejected R`; exits 0 when nothing was rejected, 1 otherwise.
        Signatures are verified on --workers threads (one per core by default), each on a connection
        of its own and at a lower CPU priority than the writer, which commits what they checked in
        input order; --workers 1 checks each batch on the writer's connection before writing it. The
        store is the same either way.
        Bodies are committed in batches (--batch-size, 500 by default). When the store stops a batch
        (a full disk, a lock held too long), what was committed stays, the command says how much and
        the first input line not stored, prints the command that resumes from there, and exits 3.
        """,
        options: [
            .flag(.cgi, "CGI/1.1 mode: reads one POST body (CONTENT_LENGTH) from stdin and answers Status 200 once "
                  + "stored or a duplicate, 4xx for a body that can never be valid (it is quarantined), 5xx when it "
                  + "could not be stored, so Apple retries"),
            .value(.batchSize, "N", "bodies committed together at most (default \(BatchIngest.standardBatchSize))"),
            .value(.workers, "N", "threads that verify bodies ahead of the writer, 1 to \(maxWorkers) (default: one per core)"),
            .quiet,
        ],
        groups: [.intake],
        action: StoreAction(words: "store notifications", privilege: .insert, table: "notifications"),
        run: run)

    static let maxWorkers = 64

    static func run(_ context: Context) throws -> Int32 {
        if context.arguments.has(.cgi) { return CGIIngest.run(context) }
        var batchSize = BatchIngest.standardBatchSize
        if let text = context.arguments.value(.batchSize) {
            guard let n = Int(text), n >= 1 else { throw UsageError("--batch-size must be a whole number of bodies, got \(text)") }
            batchSize = n
        }
        var workers = min(ProcessInfo.processInfo.activeProcessorCount, 16)
        if let text = context.arguments.value(.workers) {
            guard let n = Int(text), (1...maxWorkers).contains(n) else {
                throw UsageError("--workers must be a whole number from 1 to \(maxWorkers), got \(text)")
            }
            workers = n
        }
        // A batch job can wait its turn behind other writers longer than a web request can.
        let store = try context.openStore(busyTimeoutMs: 120_000, mode: .createIfMissing)
        let intake = try context.makeIntake(store: store)
        if intake.policy.bundleId == nil && intake.policy.apps.count <= 1 {
            Output.warn("no bundle id configured: bundle ids are not checked (set bundle_id or pass --bundle-id)")
        }
        // Each worker checks on a connection of its own; one worker checks on the writer's.
        let checkers = workers < 2 ? [] : try (0..<workers).map { _ in
            try context.makeIntake(store: try context.openStore(busyTimeoutMs: 120_000, mode: .existing))
        }
        var batches = try BatchIngest(intake: intake, checkers: checkers, batchSize: batchSize)
        var emptyInputs = 0
        let paths = context.arguments.positionals.isEmpty ? ["-"] : context.arguments.positionals
        for (pathIndex, path) in paths.enumerated() {
            let handle: FileHandle
            if path == "-" {
                if isatty(STDIN_FILENO) == 1 && !context.arguments.has(.quiet) {
                    Output.warn("reading notifications from standard input (end with Ctrl-D; give a PATH to read a file)")
                }
                handle = FileHandle.standardInput
            } else {
                var isDirectory: ObjCBool = false
                guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue,
                      let opened = FileHandle(forReadingAtPath: path) else {
                    throw UsageError("cannot read \(path): no such file or not readable")
                }
                handle = opened
            }
            defer { if path != "-" { try? handle.close() } }
            let label = path == "-" ? "stdin" : path
            // Read as the bodies are taken in: only those in flight are held.
            let bodies: BodyStream
            do { bodies = try BodyStream(handle: handle) } catch { throw UsageError("cannot read \(label): \(error)") }
            if bodies.isEmpty {
                // Not a body to quarantine: there is nothing there at all.
                Output.warn("\(label) holds no notification (it is empty): nothing to ingest from it")
                emptyInputs += 1
                continue
            }
            do {
                try batches.ingest(next: {
                    try bodies.next().map { BatchIngest.Body(ExportedBody.unwrap($0.data), source: bodies.several ? "\(label):\($0.line)" : label) }
                }, rejected: { source, reason, id in
                    if !context.arguments.has(.quiet) {
                        Output.error("rejected \(source): \(SafeText.sanitize(reason)) (quarantine #\(id))")
                    }
                })
            } catch let stopped as BatchIngest.Stopped {
                // The batch's first body was read; one that could not be read is after the last that was.
                let line = stopped.firstUncommitted < bodies.lines.count ? bodies.lines[stopped.firstUncommitted] : (bodies.lines.last ?? 0) + 1
                let stop = BatchStopped(cause: "\(stopped.cause)", committed: stopped.committed, resumeAt: "\(label) line \(line)",
                                        resume: path == "-" ? nil : (path, line), laterFiles: paths.count - pathIndex - 1)
                stop.report(json: context.wantsJSON)
                throw ExitStatus(code: BatchStopped.exitCode)
            }
        }
        let counts = batches.committed
        if context.wantsJSON {
            Output.json(["ingested": counts.stored, "duplicates": counts.duplicates, "rejected": counts.rejected])
        } else {
            Output.line("ingested \(counts.stored), duplicates \(counts.duplicates), rejected \(counts.rejected)")
        }
        if emptyInputs == paths.count { return 2 }
        return counts.rejected == 0 ? 0 : 1
    }

    /// A batch the store could not commit (a full disk, a lock held too long): what was
    /// committed before it stays, and the operator is told where to resume.
    struct BatchStopped: Error, CustomStringConvertible {
        let cause: String
        let committed: BatchIngest.Counts
        let resumeAt: String
        let resume: (path: String, line: Int)?
        let laterFiles: Int
        /// Apart from 1 (some body was rejected), so a script can tell a stop from a refusal.
        static let exitCode: Int32 = 3

        func report(json: Bool) {
            Output.error(description)
            guard json else { return }
            var object: [String: Any] = ["error": "stopped: \(cause)", "ingested": committed.stored,
                                         "duplicates": committed.duplicates, "rejected": committed.rejected,
                                         "first_uncommitted": resumeAt]
            if let resume { object["resume_file"] = resume.path; object["resume_line"] = resume.line }
            Output.json(object)
        }

        var description: String {
            var text = "stopped: \(cause)\ncommitted before the stop: ingested \(committed.stored), duplicates "
                + "\(committed.duplicates), rejected \(committed.rejected); nothing from \(resumeAt) on was stored"
            if let resume {
                text += "\nresume with: tail -n +\(resume.line) \(resume.path) | subdesk ingest -"
            }
            if laterFiles > 0 { text += "\n\(laterFiles) later file(s) were not read" }
            return text
        }
    }

    /// One JSON document, or NDJSON with one body per non-empty line; each with the
    /// 1-based line it starts on.
    static func splitBodies(_ data: Data) -> [(data: Data, line: Int)] {
        var lines: [(range: Range<Int>, line: Int)] = []
        var lineNumber = 1
        data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) in
            let bytes = raw.bindMemory(to: UInt8.self)
            var start = 0
            func flush(_ end: Int) {
                if !BodyStream.isBlank(bytes[start..<end]) { lines.append((start..<end, lineNumber)) }
            }
            for i in 0..<bytes.count where bytes[i] == 10 {
                flush(i)
                start = i + 1
                lineNumber += 1
            }
            flush(bytes.count)
        }
        // Nothing but blank lines (an empty stdin ended with Ctrl-D, an empty file): no body.
        guard let only = lines.first else { return [] }
        // One body on one line is stored as that line, without its terminator, as each line
        // of a file of several is, so export -> ingest -> export gives the same bytes.
        if lines.count == 1 {
            let isDocumentOnItsLine = (try? JSONSerialization.jsonObject(with: data.subdata(in: only.range))) != nil
            return [(isDocumentOnItsLine ? data[(data.startIndex + only.range.lowerBound)..<(data.startIndex + only.range.upperBound)] : data,
                     only.line)]
        }
        // A pretty-printed single document spans lines too: its first line is not a whole body.
        let first = data.subdata(in: lines[0].range)
        if (try? JSONSerialization.jsonObject(with: first, options: [.fragmentsAllowed])) == nil,
           (try? JSONSerialization.jsonObject(with: data)) != nil {
            return [(data, 1)]
        }
        let base = data.startIndex
        return lines.map { (data[(base + $0.range.lowerBound)..<(base + $0.range.upperBound)], $0.line) }
    }
}
