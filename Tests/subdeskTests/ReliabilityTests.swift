import Foundation
import FakeApple
import XCTest
@testable import SubscriptionCore
@testable import SubdeskScenarios
import SubdeskTestKit

/// The store under abuse: SIGKILL mid-ingest, concurrent writers and readers, broken
/// disks and set-ups, and hostile strings on the way to a terminal.
final class ReliabilityTests: SubdeskTestCase, RunsOnEveryEngine {
    /// A crash, concurrent writers, a held lock and hostile strings meet each engine's own
    /// transactions and locks; a full or read-only disk and a broken set-up are SQLite's file.
    static let engineTests: Set<String>? = ["testSIGKILLMidIngestLosesNothingAndDuplicatesNothing",
                                            "testConcurrentWritersCGIAndReadersLoseNothing",
                                            "testALockHeldPastTheTimeoutAnswers503AndWritesNothing",
                                            "testHostileStringsReachPlainTextOutputEscaped"]
    static let root = SubdeskTestCase.repoRoot + "/sample-data/test-ca/root.der"
    static let policyFlags = ["--root-ca", root, "--bundle-id", ScenarioBuilder.demoBundleId,
                              "--app-apple-id", String(ScenarioBuilder.demoAppAppleId)]

    /// `count` distinct signed notifications (whole scenario lifecycles), as NDJSON.
    static func signedBodies(count: Int, firstInstance: Int = 100_000) throws -> Data {
        let sample = SampleData(directory: repoRoot + "/sample-data")
        var instance = firstInstance
        let bodies = try ScenarioBuilder(signer: try sample.signer())
            .bodies(count: count, cycling: try sample.scenarios(), instance: &instance, anchor: DateText.nowMillis())
        return bodies.reduce(into: Data()) { $0.append($1); $0.append(UInt8(ascii: "\n")) }
    }

    func sqlite(_ db: String, _ sql: String) throws -> String { try engineQuery(db, sql) }

    /// The store is whole: SQLite's integrity check on a file. PostgreSQL checks its own
    /// pages and constraints as it writes, and has no such statement.
    func assertIntact(_ db: String, file: StaticString = #filePath, line: UInt = #line) throws {
        guard !PostgresLocation.isPostgres(db) else { return }
        XCTAssertEqual(try sqlite(db, "PRAGMA integrity_check"), "ok", file: file, line: line)
    }

    /// SUBDESK_CRASH_BODIES sets how many bodies (default 2,000, each run killed at a random
    /// point of the rest's first quarter); set 20,000 or more for a soak.
    func testSIGKILLMidIngestLosesNothingAndDuplicatesNothing() throws {
        let count = Int(ProcessInfo.processInfo.environment["SUBDESK_CRASH_BODIES"] ?? "").map { min(max($0, 1_000), 1_000_000) } ?? 2_000
        let file = dir + "/bodies.ndjson"
        try Self.signedBodies(count: count).write(to: URL(fileURLWithPath: file))

        let clean = dir + "/clean.db"
        let reference = try run(["ingest", "--db", clean, "--quiet"] + Self.policyFlags + [file])
        XCTAssertEqual(reference.status, 0, reference.stderr)
        XCTAssertEqual(reference.stdout, "ingested \(count), duplicates 0, rejected 0\n")

        // The reference run is always a SQLite file; the killed runs write the engine under test.
        let crashed = Store.testLocation(file: dir + "/crashed.db")
        var kills = 0
        var generator = SystemRandomNumberGenerator()
        var killedAt: [Int] = []
        // Runs killed at random points until three kills have landed mid-ingest (some work
        // stored, some left). A kill that lands after the run stored its last body, while it
        // was exiting, is no mid-ingest kill: it is kept in `killedAt` and not counted, and
        // another run follows while enough is left to stop one part-way.
        var round = 0
        while kills < 3 && round < 12 {
            let before = round == 0 ? 0 : (Int(try sqlite(crashed, "SELECT count(*) FROM notifications")) ?? 0)
            guard count - before > 200 else { break }
            round += 1
            let p = Process()
            p.executableURL = URL(fileURLWithPath: Self.binary)
            // Batches of 100: tens of commits in each run, so each kill lands between two of
            // them whatever point it picks, and the clean run's batches of 500 differ from these.
            p.arguments = ["ingest", "--db", crashed, "--quiet", "--batch-size", "100"] + Self.policyFlags + [file]
            p.standardOutput = FileHandle.nullDevice
            p.standardError = FileHandle.nullDevice
            // Kill at a random point of the first quarter of what is left, once this run has
            // committed some new work, so each kill lands mid-ingest rather than while the
            // file is still being read, and leaves work for the runs after it.
            let target = before + Int.random(in: 100...max(101, (count - before) / 4), using: &generator)
            try p.run()
            let deadline = Date().addingTimeInterval(120)
            while p.isRunning && Date() < deadline {
                Thread.sleep(forTimeInterval: 0.02)
                if PostgresLocation.isPostgres(crashed) || FileManager.default.fileExists(atPath: crashed),
                   let n = Int(try sqlite(crashed, "SELECT count(*) FROM notifications")), n >= target {
                    Thread.sleep(forTimeInterval: Double.random(in: 0...0.05, using: &generator))
                    break
                }
            }
            if p.isRunning {
                kill(p.processIdentifier, SIGKILL)
                let stored = Int(try sqlite(crashed, "SELECT count(*) FROM notifications")) ?? -1
                killedAt.append(stored)
                if stored > 0 && stored < count { kills += 1 }
            }
            p.waitUntilExit()
        }
        let finish = try run(["ingest", "--db", crashed, "--quiet"] + Self.policyFlags + [file])
        XCTAssertEqual(finish.status, 0, finish.stderr)
        print("crash consistency: \(count) bodies, \(kills) SIGKILLs with \(killedAt) stored, final run: \(finish.stdout)", terminator: "")
        XCTAssertGreaterThanOrEqual(kills, 3, "runs were killed mid-way: \(killedAt)")
        XCTAssertEqual(try sqlite(crashed, "SELECT count(*), count(DISTINCT notification_uuid) FROM notifications"), "\(count)|\(count)")
        try assertIntact(crashed)
        XCTAssertEqual(try sqlite(crashed, "SELECT count(*) FROM quarantine"), "0")
        XCTAssertEqual(try states(crashed), try states(clean), "derived state identical to a clean run")
    }

    func testConcurrentWritersCGIAndReadersLoseNothing() throws {
        let db = Store.testLocation(file: dir + "/shared.db")
        let shards = try (0..<3).map { i -> String in
            let f = dir + "/shard\(i).ndjson"
            try Self.signedBodies(count: 400, firstInstance: 200_000 + i * 1000).write(to: URL(fileURLWithPath: f))
            return f
        }
        // A fourth writer replays shard 0: every one of its bodies is a duplicate or stored once.
        let cgiBodies = String(decoding: try Self.signedBodies(count: 60, firstInstance: 300_000), as: UTF8.self)
            .split(separator: "\n").map { Data($0.utf8) }
        _ = try run(["ingest", "--db", db] + Self.policyFlags + [shards[0]].prefix(0))   // create the store first
        var processes: [(Process, Pipe, String)] = []
        for f in shards + [shards[0]] {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: Self.binary)
            p.arguments = ["ingest", "--db", db, "--quiet"] + Self.policyFlags + [f]
            let err = Pipe()
            p.standardError = err
            p.standardOutput = FileHandle.nullDevice
            try p.run()
            processes.append((p, err, f))
        }
        let readerStop = dir + "/stop"
        let reader = Process()
        reader.executableURL = URL(fileURLWithPath: "/bin/sh")
        reader.arguments = ["-c", "n=0; while [ ! -f '\(readerStop)' ]; do '\(Self.binary)' search --db '\(db)' 2000 --limit 20 >/dev/null || echo READER-FAILED; '\(Self.binary)' counts --db '\(db)' --json >/dev/null || echo READER-FAILED; n=$((n+1)); done; echo reads=$n"]
        let readerOut = Pipe()
        reader.standardOutput = readerOut
        reader.standardError = readerOut
        try reader.run()

        // CGI requests, eight at a time, while the bulk writers run.
        let statuses = Shared<[String]>([])
        let group = DispatchGroup()
        let limit = DispatchSemaphore(value: 8)
        for body in cgiBodies {
            group.enter()
            limit.wait()
            DispatchQueue.global().async {
                defer { limit.signal(); group.leave() }
                let r = try? self.run(["ingest", "--cgi", "--db", db] + Self.policyFlags, stdin: body,
                                      env: ["REQUEST_METHOD": "POST", "CONTENT_LENGTH": String(body.count)])
                let status = r.map { String($0.stdout.prefix(15)) + ($0.stderr.contains("locked") ? " LOCKED" : "") } ?? "failed"
                statuses.update { $0.append(status) }
            }
        }
        group.wait()
        for (p, err, f) in processes {
            let stderr = String(decoding: ChildOutput.readAll(err.fileHandleForReading), as: UTF8.self)
            p.waitUntilExit()
            XCTAssertEqual(p.terminationStatus, 0, "\(f): \(stderr)")
            XCTAssertFalse(stderr.contains("locked"), stderr)
        }
        _ = FileManager.default.createFile(atPath: readerStop, contents: Data())
        let readerText = String(decoding: ChildOutput.readAll(readerOut.fileHandleForReading), as: UTF8.self)
        reader.waitUntilExit()
        XCTAssertFalse(readerText.contains("READER-FAILED"), readerText)
        XCTAssertEqual(Set(statuses.current), ["Status: 200 OK\r\n"], "every CGI request stored")
        XCTAssertEqual(try sqlite(db, "SELECT count(*) FROM notifications"), "\(3 * 400 + cgiBodies.count)")
        try assertIntact(db)
        print("concurrency: 4 bulk writers (1,600 bodies, 400 duplicates), \(cgiBodies.count) CGI requests, reader \(readerText.trimmingCharacters(in: .whitespacesAndNewlines))")
    }

    func testALockHeldPastTheTimeoutAnswers503AndWritesNothing() throws {
        let db = Store.testLocation(file: dir + "/locked.db")
        let body = try Self.signedBodies(count: 1, firstInstance: 400_000)
        _ = try run(["ingest", "--db", db] + Self.policyFlags + ["-"], stdin: Data())
        let release = try Self.holdWriteLock(on: db)
        Thread.sleep(forTimeInterval: 0.5)
        let r = try run(["ingest", "--cgi", "--db", db, "--busy-timeout-ms", "300"] + Self.policyFlags, stdin: body,
                        env: ["REQUEST_METHOD": "POST", "CONTENT_LENGTH": String(body.count)])
        release()
        XCTAssertTrue(r.stdout.hasPrefix("Status: 503"), r.stdout)
        XCTAssertTrue(r.stderr.contains("locked"), "the operator's log says why: \(r.stderr)")
        XCTAssertFalse(r.stdout.contains("locked") || r.stdout.contains(db), "the HTTP client is told no more than to retry: \(r.stdout)")
        XCTAssertEqual(try sqlite(db, "SELECT count(*) FROM notifications"), "0")
        let retry = try run(["ingest", "--cgi", "--db", db] + Self.policyFlags, stdin: body,
                            env: ["REQUEST_METHOD": "POST", "CONTENT_LENGTH": String(body.count)])
        XCTAssertTrue(retry.stdout.hasPrefix("Status: 200"), "Apple's retry succeeds: \(retry.stdout)")
    }

    func testBrokenSetupsGiveClearMessagesAndCGIAnswers503() throws {
        let body = try Self.signedBodies(count: 1, firstInstance: 500_000)
        let cgiEnv = ["REQUEST_METHOD": "POST", "CONTENT_LENGTH": String(body.count)]
        let missingRoot = try run(["ingest", "--db", dir + "/a.db", "--root-ca", dir + "/nope.der", "-"], stdin: body)
        XCTAssertNotEqual(missingRoot.status, 0)
        XCTAssertTrue(missingRoot.stderr.contains("nope.der"), missingRoot.stderr)
        let missingRootCGI = try run(["ingest", "--cgi", "--db", dir + "/a.db", "--root-ca", dir + "/nope.der"], stdin: body, env: cgiEnv)
        XCTAssertTrue(missingRootCGI.stdout.hasPrefix("Status: 503"), missingRootCGI.stdout)
        // A config path that cannot be read (a directory stands in for a file without permission).
        try FileManager.default.createDirectory(atPath: dir + "/config/subdesk/config", withIntermediateDirectories: true)
        let badConfig = try run(["ingest", "--cgi", "--db", dir + "/b.db"], stdin: body, env: cgiEnv)
        XCTAssertTrue(badConfig.stdout.hasPrefix("Status: 503"), badConfig.stdout)
        XCTAssertTrue(badConfig.stderr.contains("cannot be read"), badConfig.stderr)
        try FileManager.default.removeItem(atPath: dir + "/config/subdesk/config")
        // A config file the deployment names but that is missing: 503, and nothing created
        // (falling back to defaults would verify against other roots and answer 400).
        let namedMissing = try run(["ingest", "--cgi"], stdin: body,
                                   env: cgiEnv.merging(["SUBDESK_CONFIG": dir + "/etc/missing.conf"]) { $1 })
        XCTAssertTrue(namedMissing.stdout.hasPrefix("Status: 503"), namedMissing.stdout)
        XCTAssertTrue(namedMissing.stderr.contains("missing.conf"), namedMissing.stderr)
        XCTAssertFalse(namedMissing.stdout.contains(dir), "no server paths to the HTTP client: \(namedMissing.stdout)")
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/data/subdesk/subdesk.db"), "no store created by a broken set-up")
        // A configured store that does not exist: 503, nothing created.
        try "db = \(dir!)/var/lib/subdesk.db\nroot_ca = \(Self.root)\n".write(toFile: dir + "/deployed.conf", atomically: true, encoding: .utf8)
        let noStore = try run(["ingest", "--cgi"], stdin: body, env: cgiEnv.merging(["SUBDESK_CONFIG": dir + "/deployed.conf"]) { $1 })
        XCTAssertTrue(noStore.stdout.hasPrefix("Status: 503"), noStore.stdout)
        XCTAssertTrue(noStore.stderr.contains("no store at \(dir!)/var/lib/subdesk.db"), noStore.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/var"), "not even its folder")
        // A store in a directory that cannot exist.
        try "x".write(toFile: dir + "/file", atomically: true, encoding: .utf8)
        let noDir = try run(["show", "--db", dir + "/file/x.db", "anything"])
        XCTAssertEqual(noDir.status, 2)
        XCTAssertTrue(noDir.stderr.contains("no store at \(dir!)/file/x.db"), noDir.stderr)
        let cannotCreate = try run(["ingest", "--db", dir + "/file/x.db", "-"], stdin: Data())
        XCTAssertEqual(cannotCreate.status, 1)
        XCTAssertTrue(cannotCreate.stderr.contains("x.db: Not a directory"), cannotCreate.stderr)
    }

    /// Mounts a small tmpfs (root only); skips where mounting is not allowed.
    func mountTmpfs(size: String) throws -> String {
        let point = dir + "/mnt"
        try FileManager.default.createDirectory(atPath: point, withIntermediateDirectories: true)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/mount")
        p.arguments = ["-t", "tmpfs", "-o", "size=\(size)", "tmpfs", point]
        p.standardError = FileHandle.nullDevice
        try p.run()
        p.waitUntilExit()
        guard p.terminationStatus == 0 else { throw XCTSkip("cannot mount a tmpfs here (needs root)") }
        addTeardownBlock { _ = try? self.shell("umount '\(point)'") }
        return point
    }

    @discardableResult
    func shell(_ command: String) throws -> Int32 {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/sh")
        p.arguments = ["-c", command]
        try p.run()
        p.waitUntilExit()
        return p.terminationStatus
    }

    func testAFullDiskRefusesCleanlyAndLeavesTheStoreIntact() throws {
        let point = try mountTmpfs(size: "2m")
        let db = point + "/full.db"
        let bodies = String(decoding: try Self.signedBodies(count: 400, firstInstance: 600_000), as: UTF8.self)
            .split(separator: "\n").map { Data($0.utf8) + Data([10]) }
        XCTAssertEqual(try run(["ingest", "--db", db, "--quiet"] + Self.policyFlags + ["-"], stdin: bodies[0]).status, 0)
        // The batch input lives off the small disk, as an operator's export would.
        let batch = dir + "/batch.ndjson"
        try bodies[1...].reduce(Data(), +).write(to: URL(fileURLWithPath: batch))
        // Fill the disk but for room for some batches of 25 and not all of them.
        let free = try XCTUnwrap((try FileManager.default.attributesOfFileSystem(forPath: point)[.systemFreeSize] as? NSNumber)?.intValue)
        _ = try shell("dd if=/dev/zero of='\(point)/filler' bs=4k count=\(max(0, free - 400 * 1024) / 4096) 2>/dev/null")
        let bulk = try run(["ingest", "--db", db, "--quiet", "--json", "--batch-size", "25"] + Self.policyFlags + [batch])
        XCTAssertEqual(bulk.status, 3, "a stopped batch exits 3, apart from a refusal's 1: \(bulk.stderr)")
        XCTAssertTrue(bulk.stderr.contains("full") || bulk.stderr.contains("unable to open"), bulk.stderr)
        XCTAssertTrue(bulk.stderr.contains("committed before the stop: ingested "), bulk.stderr)
        let report = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(bulk.stdout.utf8)) as? [String: Any], bulk.stdout)
        let committed = try XCTUnwrap(report["ingested"] as? Int)
        let resumeLine = try XCTUnwrap(report["resume_line"] as? Int)
        XCTAssertGreaterThan(committed, 0, "some batches fitted")
        XCTAssertEqual(resumeLine, committed + 1, "one body a line: the first line not stored follows the last one stored")
        XCTAssertEqual(report["resume_file"] as? String, batch)
        XCTAssertTrue(bulk.stderr.contains("resume with: tail -n +\(resumeLine) \(batch) | subdesk ingest -"), bulk.stderr)
        _ = try shell("dd if=/dev/zero of='\(point)/filler2' bs=4k 2>/dev/null")
        let cgi = try run(["ingest", "--cgi", "--db", db] + Self.policyFlags, stdin: bodies[399],
                          env: ["REQUEST_METHOD": "POST", "CONTENT_LENGTH": String(bodies[399].count)])
        // A small write may still fit in pages the stopped batch left allocated (its write-ahead
        // log keeps its size): then it is stored and answered 200. Anything else is a 503
        // with nothing stored.
        let cgiStored = cgi.stdout.hasPrefix("Status: 200")
        XCTAssertTrue(cgiStored || cgi.stdout.hasPrefix("Status: 503"), cgi.stdout)
        _ = try shell("rm -f '\(point)/filler' '\(point)/filler2'")
        // The disk is no longer full: it grows to hold what the resume writes, so the rest of
        // the test cannot depend on when SQLite checkpoints (the write-ahead log of the 400
        // bodies peaks at about twice their size before one). Eight times the bodies' bytes
        // holds the store, its log and its indexes with room to spare.
        let room = max(16 << 20, 8 * bodies.reduce(0) { $0 + $1.count })
        XCTAssertEqual(try shell("mount -o remount,size=\(room) '\(point)'"), 0, "the tmpfs grows to \(room) bytes")
        XCTAssertEqual(try sqlite(db, "PRAGMA integrity_check"), "ok")
        XCTAssertEqual(try sqlite(db, "SELECT count(*) FROM notifications"), "\(1 + committed + (cgiStored ? 1 : 0))",
                       "what was reported committed, nothing half-written")
        XCTAssertEqual(try sqlite(db, "SELECT count(*) FROM quarantine"), "0", "a full disk is not the body's fault")
        // The resume point is exact: from it on, every remaining body is new.
        let rest = Data(try String(contentsOfFile: batch, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
            .dropFirst(resumeLine - 1).joined(separator: "\n").utf8)
        let resumed = try run(["ingest", "--db", db] + Self.policyFlags + ["-"], stdin: rest)
        XCTAssertEqual(resumed.status, 0, resumed.stderr)
        XCTAssertTrue(resumed.stdout.contains("ingested \(399 - committed - (cgiStored ? 1 : 0)), duplicates \(cgiStored ? 1 : 0)"),
                      resumed.stdout)
        XCTAssertEqual(try sqlite(db, "SELECT count(*) FROM notifications"), "400")
    }

    func testAReadOnlyDiskRefusesWithAClearMessage() throws {
        let point = try mountTmpfs(size: "8m")
        let db = point + "/ro.db"
        let body = try Self.signedBodies(count: 1, firstInstance: 700_000)
        XCTAssertEqual(try run(["init", "--db", db]).status, 0)
        XCTAssertEqual(try shell("mount -o remount,ro '\(point)'"), 0)
        let cgi = try run(["ingest", "--cgi", "--db", db] + Self.policyFlags, stdin: body,
                          env: ["REQUEST_METHOD": "POST", "CONTENT_LENGTH": String(body.count)])
        XCTAssertTrue(cgi.stdout.hasPrefix("Status: 503"), cgi.stdout)
        XCTAssertTrue(cgi.stderr.contains("read-only") || cgi.stderr.contains("readonly") || cgi.stderr.contains("unable to open"), cgi.stderr)
    }

    func testHostileStringsReachPlainTextOutputEscaped() throws {
        let db = Store.testLocation(file: dir + "/hostile.db")
        let sample = SampleData(directory: Self.repoRoot + "/sample-data")
        let signer = try sample.signer()
        let evil = "app.\u{1b}[2J\u{1b}]0;pwned\u{07}\u{202e}monthly\r\n"
        let now = DateText.nowMillis()
        let t: [String: Any] = ["transactionId": "9100", "originalTransactionId": "9100", "productId": evil,
                                "bundleId": ScenarioBuilder.demoBundleId, "purchaseDate": now - 1000, "expiresDate": now + 86_400_000,
                                "signedDate": now, "environment": "Production", "type": "Auto-Renewable Subscription",
                                "appAccountToken": "tok-\u{1b}[31m", "offerIdentifier": "\u{9b}31m"]
        let payload: [String: Any] = ["notificationType": "SUBSCRIBED", "subtype": "INITIAL_BUY\u{1b}[0m", "notificationUUID": "hostile-1",
                                      "signedDate": now, "data": ["bundleId": ScenarioBuilder.demoBundleId, "environment": "Production",
                                                                  "appAppleId": ScenarioBuilder.demoAppAppleId,
                                                                  "signedTransactionInfo": try signer.sign(payload: try JSONSerialization.data(withJSONObject: t))]]
        let body = try JSONSerialization.data(withJSONObject: ["signedPayload": try signer.sign(payload: try JSONSerialization.data(withJSONObject: payload))])
        XCTAssertEqual(try run(["ingest", "--db", db] + Self.policyFlags + ["-"], stdin: body).status, 0)
        for args in [["show", "9100"], ["search", "app."], ["notifications"], ["show", "9100", "--json"]] {
            let r = try run(args + ["--db", db])
            XCTAssertEqual(r.status, 0, "\(args): \(r.stderr)")
            for bad in ["\u{1b}", "\u{07}", "\u{9b}", "\u{202e}", "\r"] {
                XCTAssertFalse(r.stdout.contains(bad), "\(args) printed a raw \(bad.unicodeScalars.first!.value)")
            }
        }
        let show = try run(["show", "9100", "--db", db])
        XCTAssertTrue(show.stdout.contains("app.\\e[2J\\e]0;pwned\\x07\\u{202E}monthly"), show.stdout)
    }
}

extension SubdeskTestCase {
    /// Another client holds a write open on the store (sqlite3 with BEGIN IMMEDIATE, or psql
    /// with the notifications table locked) until the returned function is called.
    static func holdWriteLock(on db: String) throws -> () -> Void {
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        let input = Pipe()
        holder.standardInput = input
        holder.standardOutput = FileHandle.nullDevice
        if PostgresLocation.isPostgres(db) {
            let location = try PostgresLocation(db)
            holder.arguments = ["psql", "-d", location.conninfo, "-qX"]
            try holder.run()
            input.fileHandleForWriting.write(Data("SET search_path TO \(location.schema!);\nBEGIN;\nLOCK TABLE notifications IN ACCESS EXCLUSIVE MODE;\n".utf8))
        } else {
            holder.arguments = ["sqlite3", db]
            try holder.run()
            input.fileHandleForWriting.write(Data("BEGIN IMMEDIATE;\nINSERT INTO subscribers (created_ms) VALUES (1);\n".utf8))
        }
        return {
            try? input.fileHandleForWriting.close()
            holder.waitUntilExit()
        }
    }
}
