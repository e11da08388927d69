import Foundation
import XCTest
@testable import SubscriptionCore
import SubdeskTestKit

/// Several intake processes writing one PostgreSQL store at once, as two CGI hosts behind a
/// load balancer do. Runs when SUBDESK_TEST_POSTGRES names a server (`scripts/pg-cluster`).
final class PostgresConcurrencyTests: SubdeskTestCase, RunsOnEveryEngine {
    var base: String!

    override func setUpWithError() throws {
        try super.setUpWithError()
        let base = try TestEngine.requirePostgres()
        self.base = base
    }

    func start(_ args: [String], output: String) throws -> Process {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Self.binary)
        p.arguments = args
        _ = FileManager.default.createFile(atPath: output, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
        p.standardOutput = handle
        p.standardError = handle
        try p.run()
        return p
    }

    func ndjson(_ lines: [Substring]) -> Data { Data((lines.joined(separator: "\n") + "\n").utf8) }

    /// Four writers (two taking the notifications in order, two replaying the same ones
    /// backwards), a reader polling the feed and the counts, and one writer killed with
    /// SIGKILL mid-batch: every notification is stored once, nothing committed is lost, no
    /// command fails, and the derived state equals a single writer's on SQLite.
    func testFourWritersTwoReplayingBackwardsAndAKilledOneLoseNothing() throws {
        let count = 1_200
        let all = String(decoding: try ReliabilityTests.signedBodies(count: count, firstInstance: 300_000), as: UTF8.self)
            .split(separator: "\n")
        XCTAssertEqual(all.count, count)
        let halves = [Array(all[..<(count / 2)]), Array(all[(count / 2)...])]
        var files: [String] = []
        for (i, lines) in [halves[0], halves[1], halves[0].reversed(), halves[1].reversed()].enumerated() {
            let file = dir + "/part\(i).ndjson"
            try ndjson(lines).write(to: URL(fileURLWithPath: file))
            files.append(file)
        }
        let whole = dir + "/all.ndjson"
        try ndjson(all).write(to: URL(fileURLWithPath: whole))

        let clean = dir + "/clean.db"
        let reference = try run(["ingest", "--db", clean, "--quiet"] + ReliabilityTests.policyFlags + [whole])
        XCTAssertEqual(reference.status, 0, reference.stderr)

        let location = Store.freshPostgresLocation(base)
        XCTAssertEqual(try run(["db", "init", "--db", location]).status, 0)

        // A writer killed mid-batch first: what it committed must survive.
        let killed = try start(["ingest", "--db", location, "--quiet", "--batch-size", "50"] + ReliabilityTests.policyFlags + [whole],
                               output: dir + "/killed.log")
        let observer = try Store(path: location, mode: .reading)
        let deadline = Date().addingTimeInterval(60)
        while killed.isRunning && Date() < deadline, try observer.notifications.count() < 150 {
            Thread.sleep(forTimeInterval: 0.02)
        }
        kill(killed.processIdentifier, SIGKILL)
        killed.waitUntilExit()
        let committedBeforeKill = try observer.notifications.count()
        XCTAssertGreaterThan(committedBeforeKill, 0)
        XCTAssertLessThan(committedBeforeKill, count, "the writer was killed mid-way")

        // The dashboard open on the store meanwhile, in a real terminal, as on-call would have it.
        var terminal: TerminalSession?
        if let tmux = TerminalSession.findTmux() {
            terminal = TerminalSession(tmux: tmux)
            try terminal!.start(width: 120, height: 40)
            try terminal!.shell("'\(Self.binary)' --db '\(location)'")
            try terminal!.waitFor(text: "subdesk ▸ subscribers")
        }
        defer { terminal?.stop() }

        var writers: [Process] = []
        for (i, file) in files.enumerated() {
            writers.append(try start(["ingest", "--db", location, "--quiet", "--batch-size", "25"] + ReliabilityTests.policyFlags + [file],
                                     output: dir + "/writer\(i).log"))
        }
        // A reader beside them, as a dashboard or a report would be.
        var readerFailures: [String] = []
        var reads = 0
        while writers.contains(where: \.isRunning) {
            for args in [["notifications", "--limit", "5", "--json"], ["counts", "--json"], ["search", "2000000", "--json"]] {
                let r = try run(["--db", location] + args)
                reads += 1
                if r.status != 0 { readerFailures.append("\(args.first!): \(r.stderr)") }
            }
        }
        for (i, w) in writers.enumerated() {
            w.waitUntilExit()
            let log = (try? String(contentsOfFile: dir + "/writer\(i).log", encoding: .utf8)) ?? ""
            XCTAssertEqual(w.terminationStatus, 0, "writer \(i): \(log)")
        }
        XCTAssertEqual(readerFailures, [], "a reader saw an error")
        XCTAssertGreaterThan(reads, 0)

        let store = try Store(path: location, mode: .reading)
        XCTAssertEqual(try store.notifications.count(), count, "every notification stored once")
        if let terminal {
            // The open dashboard followed the other processes' writes (LISTEN/NOTIFY) without a key pressed.
            let subscriptions = try Store(path: clean, mode: .reading).subscriptions.count()
            try terminal.waitFor(text: "\(subscriptions) subscriptions", timeout: 15)
            try terminal.send(keys: "q")
        }
        XCTAssertGreaterThanOrEqual(try store.notifications.count(), committedBeforeKill)
        XCTAssertEqual(try store.quarantine.unresolvedCount(), 0)
        XCTAssertEqual(try states(location), try states(clean), "derived state equal to a single writer's")
        print("postgres concurrency: \(count) notifications, a writer killed after \(committedBeforeKill) committed, "
              + "4 writers then, \(reads) reads beside them", terminator: "")
    }
}
