import Foundation
import XCTest
@testable import SubscriptionCore
import SubdeskTestKit

/// Nothing a user types creates, replaces or pollutes a store by accident.
final class StoreSafetyTests: SubdeskTestCase, RunsOnEveryEngine {
    /// The demo store, the fallback to it and simulate are SQLite files by design: they run once.
    static let engineTests: Set<String>? = [
        "testBackupsArePrivateAndNeverOverwrite",
        "testDoctorFlagsTheTestRootOnAStoreThatIsNoDemoStore",
    ]

    /// `XDG_DATA_HOME` of `run`: where the default and the demo store live.
    var dataHome: String { dir + "/data/subdesk" }

    func testDemoReplacesOnlyADemoStore() throws {
        let notes = dir + "/notes.txt"
        try "my notes\n".write(toFile: notes, atomically: true, encoding: .utf8)
        let overText = try run(["demo", "--no-dashboard", "--copies", "1", "--db", notes])
        XCTAssertEqual(overText.status, 2)
        XCTAssertTrue(overText.stderr.contains("\(notes) is not a SQLite database, not a demo store; refusing to replace it"), overText.stderr)
        XCTAssertEqual(try String(contentsOfFile: notes, encoding: .utf8), "my notes\n", "untouched")

        let real = dir + "/real.db"
        XCTAssertEqual(try run(["init", "--db", real]).status, 0)
        let overReal = try run(["demo", "--no-dashboard", "--copies", "1", "--db", real])
        XCTAssertEqual(overReal.status, 2)
        XCTAssertTrue(overReal.stderr.contains("\(real) is a subdesk store that is not a demo store (0 notifications)"), overReal.stderr)
        XCTAssertEqual(StoreLocation.kind(ofFileAt: real), .store(notifications: 0))

        let demo = dir + "/demo.db"
        let first = try run(["demo", "--no-dashboard", "--copies", "1", "--db", demo])
        XCTAssertEqual(first.status, 0, first.stderr)
        XCTAssertTrue(first.stderr.contains("open it again with: subdesk --db \(demo)"), first.stderr)
        XCTAssertEqual(StoreLocation.kind(ofFileAt: demo), .demo)
        XCTAssertEqual(try run(["demo", "--no-dashboard", "--copies", "1", "--db", demo]).status, 0, "a demo store is rebuilt")
        // --force is the one way over another file.
        XCTAssertEqual(try run(["demo", "--no-dashboard", "--copies", "1", "--db", notes, "--force"]).status, 0)
        XCTAssertEqual(StoreLocation.kind(ofFileAt: notes), .demo)
    }

    /// A backup holds what the store holds (user ids, tokens, purchases): it is made 0600
    /// like a store, whatever the umask, and never over an existing file.
    func testBackupsArePrivateAndNeverOverwrite() throws {
        let store = Store.testLocation(file: dir + "/s.db")
        XCTAssertEqual(try run(["demo", "--no-dashboard", "--copies", "1", "--db", store]).status, 0)
        let backup = dir + "/backup.copy"
        let made = try run(["backup", "--db", store, backup])
        XCTAssertEqual(made.status, 0, made.stderr)
        let mode = try XCTUnwrap(try FileManager.default.attributesOfItem(atPath: backup)[.posixPermissions] as? Int)
        XCTAssertEqual(mode & 0o777, 0o600, String(mode & 0o777, radix: 8))
        let size = try XCTUnwrap(try FileManager.default.attributesOfItem(atPath: backup)[.size] as? Int)
        XCTAssertGreaterThan(size, 10_000)

        let notes = dir + "/notes.txt"
        try "keep me\n".write(toFile: notes, atomically: true, encoding: .utf8)
        let over = try run(["backup", "--db", store, notes])
        XCTAssertNotEqual(over.status, 0)
        XCTAssertTrue(over.stderr.contains("file exists; refusing to overwrite it"), over.stderr)
        XCTAssertEqual(try String(contentsOfFile: notes, encoding: .utf8), "keep me\n")
    }

    func testReadCommandsRefuseAMissingStoreAndFallBackToTheDemoStoreByDefault() throws {
        let missing = dir + "/typo/subdesk.db"
        for args in [["show", "x"], ["search", "x"], ["counts"], ["notifications"], ["audit"], ["quarantine"]] {
            let r = try run(args + ["--db", missing])
            XCTAssertEqual(r.status, 2, "\(args)")
            XCTAssertTrue(r.stderr.contains("no store at \(missing): create it with `subdesk init --db \(missing)`"), "\(args): \(r.stderr)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/typo"), "nothing created, not even the folder")
        // No store named and none at the default place: the demo store stands in, and says so.
        XCTAssertEqual(try run(["demo", "--no-dashboard", "--copies", "1"]).status, 0)
        let shown = try run(["show", "user-1010"])
        XCTAssertEqual(shown.status, 0, shown.stderr)
        XCTAssertTrue(shown.stdout.contains("GRACE PERIOD"), shown.stdout)
        XCTAssertTrue(shown.stderr.contains("no store at \(dataHome)/subdesk.db yet; showing the demo store \(dataHome)/demo.db"), shown.stderr)
        // A command that writes to an existing store never writes into the demo store instead.
        let auditBefore = try run(["audit", "--db", "\(dataHome)/demo.db", "--json"]).stdout
        let granted = try run(["override", "grant", "user-1010", "--until", "+30d", "--reason", "goodwill"])
        XCTAssertEqual(granted.status, 2, granted.stderr)
        XCTAssertTrue(granted.stderr.contains("no store at \(dataHome)/subdesk.db: create it with `subdesk init"), granted.stderr)
        XCTAssertFalse(granted.stderr.contains("showing the demo store"), granted.stderr)
        XCTAssertEqual(try run(["audit", "--db", "\(dataHome)/demo.db", "--json"]).stdout, auditBefore, "nothing was written to the demo store")
        // A writing command creates the real store at the default place, and says where.
        let created = try run(["ingest", "-"], stdin: Data())
        XCTAssertTrue(created.stderr.contains("created a new store at \(dataHome)/subdesk.db"), created.stderr)
        XCTAssertEqual(try run(["show", "user-1010"]).status, 2, "the real store is read from now on")
    }

    func testSimulateFeedsOnlyADemoStoreAndSaysWhich() throws {
        let real = dir + "/real.db"
        XCTAssertEqual(try run(["init", "--db", real]).status, 0)
        let refused = try run(["simulate", "--db", real, "--rate", "50", "--duration", "0.2"])
        XCTAssertEqual(refused.status, 2)
        XCTAssertTrue(refused.stderr.contains("\(real) is not a demo store"), refused.stderr)
        XCTAssertEqual(try run(["notifications", "--db", real, "--json"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines), "[\n\n]")
        let none = try run(["simulate", "--rate", "50", "--duration", "0.2"])
        XCTAssertEqual(none.status, 2)
        XCTAssertTrue(none.stderr.contains("no demo store at \(dataHome)/demo.db"), none.stderr)
        XCTAssertEqual(try run(["demo", "--no-dashboard", "--copies", "1"]).status, 0)
        let fed = try run(["simulate", "--rate", "50", "--duration", "0.3"])
        XCTAssertEqual(fed.status, 0, fed.stderr)
        XCTAssertTrue(fed.stderr.contains("simulating into the demo store \(dataHome)/demo.db"), fed.stderr)
    }

    func testDoctorFlagsTheTestRootOnAStoreThatIsNoDemoStore() throws {
        let real = dir + "/real.db"
        XCTAssertEqual(try run(["init", "--db", real]).status, 0)
        let root = Self.repoRoot + "/sample-data/test-ca/root.der"
        let doctor = try run(["doctor", "--db", real, "--root-ca", root])
        XCTAssertEqual(doctor.status, 1)
        XCTAssertTrue(doctor.stdout.contains("FAIL  test root") && doctor.stdout.contains("TEST ONLY Root CA") && doctor.stdout.contains("is trusted: anyone with the demo CA"), doctor.stdout)
        let demo = try demoStore()
        XCTAssertFalse(try run(["doctor", "--db", demo, "--root-ca", root]).stdout.contains("test root"), "a demo store may trust it")
    }
}

/// Operators see what is in force after every override, and every re-link is deliberate and audited.
final class OperatorTruthTests: SubdeskTestCase, RunsOnEveryEngine {
    func testEveryOverrideMessageSaysWhatIsInForceAfterwards() throws {
        let db = try demoStore()
        let grant = try run(["override", "grant", "user-1010", "--until", "+30d", "--reason", "goodwill", "--db", db])
        XCTAssertEqual(grant.status, 0, grant.stderr)
        XCTAssertTrue(grant.stdout.contains("in force now: grant #1 (entitled until"), grant.stdout)
        let revoke = try run(["override", "revoke", "user-1010", "--reason", "chargeback", "--db", db])
        XCTAssertTrue(revoke.stdout.contains("in force now: revoke #2 (not entitled until lifted); underneath: grant #1 (entitled until"), revoke.stdout)
        let lift = try run(["override", "lift", "2", "--reason", "resolved", "--db", db])
        XCTAssertTrue(lift.stdout.contains("in force now: grant #1 (entitled until"), "the grant stays underneath a revoke: \(lift.stdout)")
        XCTAssertFalse(lift.stdout.contains("Apple's state decides"), lift.stdout)
        let liftGrant = try run(["override", "lift", "1", "--reason", "done", "--db", db, "--json"])
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(liftGrant.stdout.utf8)) as? [String: Any])
        XCTAssertEqual(object["inForce"] as? String, "in force now: no override; Apple's state decides (entitled)")
        let audit = try run(["audit", "--db", db, "--json"])
        let outcomes = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(audit.stdout.utf8)) as? [[String: Any]]).compactMap { $0["outcome"] as? String }
        XCTAssertTrue(outcomes.contains { $0.hasPrefix("override #2 lifted; in force now: grant #1") }, "\(outcomes)")
    }

    func testRelinkingASubscriptionNeedsForceAndIsAudited() throws {
        let db = try demoStore()
        let shown = try run(["show", "user-1010", "--db", db, "--json"])
        let sub = try XCTUnwrap(((try JSONSerialization.jsonObject(with: Data(shown.stdout.utf8)) as? [String: Any])?["subscriptions"] as? [[String: Any]])?.first)
        let otid = try XCTUnwrap(sub["originalTransactionId"] as? String)
        let refused = try run(["link", "user-9999", otid, "--db", db])
        XCTAssertEqual(refused.status, 2)
        XCTAssertTrue(refused.stderr.contains("is linked to user user-1010; re-linking it to user-9999") && refused.stderr.contains("--force"), refused.stderr)
        XCTAssertEqual(try run(["show", "user-1010", "--db", db]).status, 0, "still linked")
        let forced = try run(["link", "user-9999", otid, "--db", db, "--force", "--operator", "ana"])
        XCTAssertEqual(forced.status, 0, forced.stderr)
        XCTAssertTrue(forced.stdout.contains("(was user user-1010); audited"), forced.stdout)
        let audit = try run(["audit", otid, "--db", db, "--json"])
        let entry = try XCTUnwrap((try JSONSerialization.jsonObject(with: Data(audit.stdout.utf8)) as? [[String: Any]])?.first { $0["action"] as? String == "link" })
        XCTAssertEqual(entry["operator"] as? String, "ana")
        XCTAssertEqual(entry["detail"] as? String, "previous owner: user user-1010; new owner: user user-9999")
    }
}

/// The command line answers the same way everywhere.
final class CLIConsistencyTests: SubdeskTestCase, RunsOnEveryEngine {
    func testHelpConflictingFormatsAndJSONErrors() throws {
        let help = try run(["help"])
        XCTAssertEqual(help.status, 0)
        XCTAssertTrue(help.stdout.contains("usage: subdesk"), help.stdout)
        let topic = try run(["help", "show"])
        XCTAssertTrue(topic.stdout.hasPrefix("usage: subdesk show ID"), topic.stdout)
        XCTAssertEqual(try run(["help", "nosuch"]).status, 2)
        let db = try demoStore()
        let both = try run(["counts", "--json", "--csv", "--db", db])
        XCTAssertEqual(both.status, 2)
        XCTAssertTrue(both.stderr.contains("--json and --csv ask for different outputs"), both.stderr)
        // A --json command that fails prints its error as JSON too, with the exit code.
        let missing = try run(["search", "x", "--json", "--db", dir + "/none.db"])
        XCTAssertEqual(missing.status, 2)
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(missing.stdout.utf8)) as? [String: Any], missing.stdout)
        XCTAssertEqual(object["exitCode"] as? Int, 2)
        XCTAssertTrue((object["error"] as? String)?.hasPrefix("no store at") == true)
        XCTAssertFalse(missing.stderr.contains("store: "), "no internal prefixes: \(missing.stderr)")
    }

    func testDoctorSaysWhatRevalidationIsMissing() throws {
        let db = try demoStore()
        let partial = try run(["doctor", "--db", db, "--api-key-id", "ABC123"], env: ["SUBDESK_HTTP_HELPER": dir + "/no-helper"])
        XCTAssertEqual(partial.status, 1)
        XCTAssertTrue(partial.stdout.contains("FAIL  revalidation") && partial.stdout.contains("missing api_key_file, api_issuer_id"), partial.stdout)
        XCTAssertTrue(partial.stdout.contains("FAIL  http helper") && partial.stdout.contains("no-helper"), partial.stdout)
        let plain = try run(["doctor", "--db", db])
        XCTAssertTrue(plain.stdout.contains("WARN  api key") && plain.stdout.contains("WARN  shared secret"), plain.stdout)
        XCTAssertTrue(plain.stdout.contains("OK    http helper"), plain.stdout)
    }
}

/// A store this user cannot write: writing commands say why, reading commands still read it.
final class UnwritableStoreTests: SubdeskTestCase {
    func testWritesSayTheFileIsNotWritableAndReadsStillWork() throws {
        // A folder everyone may read but only its owner write, holding a store.
        let shared = FileManager.default.temporaryDirectory.appendingPathComponent("subdesk-unwritable-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: shared, withIntermediateDirectories: false,
                                                attributes: [.posixPermissions: 0o755])
        defer { try? FileManager.default.removeItem(atPath: shared) }
        let store = shared + "/demo.db"
        XCTAssertEqual(try run(["demo", "--no-dashboard", "--copies", "1", "--db", store]).status, 0)
        // Everything into the main file, as a backup or a copy would leave it.
        try SQLiteConnection(path: store).execute("PRAGMA wal_checkpoint(TRUNCATE)")
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: store + suffix) }
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: store)

        // Root may write anything: run as nobody then; another user is kept out by the modes.
        let asOther: ([String]) throws -> Result
        if getuid() == 0 {
            guard FileManager.default.isExecutableFile(atPath: "/usr/sbin/runuser") else { throw XCTSkip("no runuser to drop root") }
            // The checkout may sit in a folder nobody cannot enter (mktemp -d makes 0700
            // ones): nobody runs a copy of the binary from the shared folder instead.
            let binary = shared + "/subdesk"
            try FileManager.default.copyItem(atPath: Self.binary, toPath: binary)
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: binary)
            asOther = { try self.run(["-u", "nobody", "--", binary] + $0, executable: "/usr/sbin/runuser") }
        } else {
            try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: store)
            try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: shared)
            defer { try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: shared) }
            asOther = { try self.run($0) }
        }
        let ingest = try asOther(["ingest", "--db", store, "--quiet"])
        XCTAssertNotEqual(ingest.status, 0)
        XCTAssertTrue(ingest.stderr.contains("\(store): cannot write to it: the file is not writable by this user"), ingest.stderr)
        XCTAssertFalse(ingest.stderr.contains("readonly database") || ingest.stderr.contains("disk is full"), ingest.stderr)
        let shown = try asOther(["show", "user-1010", "--db", store])
        XCTAssertEqual(shown.status, 0, shown.stderr)
        XCTAssertTrue(shown.stdout.contains("Subscription 2000000400000901"), shown.stdout)
        XCTAssertTrue(shown.stderr.contains("is read as a snapshot"), shown.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: store + "-shm"), "nothing written beside the store")
    }
}
