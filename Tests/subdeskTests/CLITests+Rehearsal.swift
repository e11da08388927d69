import Foundation
import XCTest

/// Rehearsing intake on the demo: fresh bodies from `simulate --ndjson` go into the demo
/// store with settings that trust the test CA, a refusal says the test CA signed them,
/// `--since` takes seconds, and a fresh demo's doctor does not warn about its own bad bodies.
extension CLITests {
    func testFreshDemoBodiesRehearseIntakeAndARefusalNamesTheTestCA() throws {
        let db = try demoStore()
        let fresh = try run(["simulate", "--ndjson", "--count", "6"])
        XCTAssertEqual(fresh.status, 0, fresh.stderr)
        let lines = fresh.stdout.split(separator: "\n")
        XCTAssertEqual(lines.count, 6, fresh.stdout)

        let root = Self.repoRoot + "/sample-data/test-ca/root.der"
        let stored = try run(["ingest", "--db", db, "--root-ca", root, "--bundle-id", "com.example.subdesk.demo",
                              "--app-apple-id", "1234567890"], stdin: Data(fresh.stdout.utf8))
        XCTAssertEqual(stored.status, 0, stored.stderr)
        XCTAssertTrue(stored.stdout.contains("ingested 6, duplicates 0, rejected 0"), stored.stdout + stored.stderr)

        // The same bodies again, into a store whose settings trust only Apple: refused, and why.
        let again = try run(["simulate", "--ndjson", "--count", "1"])
        let refused = try run(["ingest", "--db", db], stdin: Data(again.stdout.utf8))
        XCTAssertEqual(refused.status, 1, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("signed by the demo's test CA (sample-data/test-ca), which this store's settings do not trust"),
                      refused.stderr)

        let recent = try run(["notifications", "--db", db, "--since", "-30s"])
        XCTAssertEqual(recent.status, 0, recent.stderr)
        XCTAssertTrue(recent.stdout.split(separator: "\n").count >= 7, "the header and the six just stored:\n\(recent.stdout)")
    }

    func testAFreshDemosDoctorDoesNotWarnAboutItsOwnRefusedBodies() throws {
        let db = try demoStore()
        let doctor = try run(["doctor", "--db", db])
        XCTAssertTrue(doctor.stdout.contains("OK    quarantine") && doctor.stdout.contains("a demo store: its bad bodies are refused on purpose"),
                      doctor.stdout)
        XCTAssertFalse(doctor.stdout.contains("WARN  quarantine"), doctor.stdout)
    }
}

extension CLITests {
    /// `subdesk refunds` is a table with a header, its columns aligned, in the order of `:refunds`.
    func testRefundsListsUnderAHeader() throws {
        let db = try demoStore()
        let listed = try run(["refunds", "--db", db, "--all"])
        XCTAssertEqual(listed.status, 0, listed.stderr)
        let lines = listed.stdout.split(separator: "\n").map(String.init)
        XCTAssertTrue(lines.first?.hasPrefix("STANDING    ORIGINAL TX       REASON") == true, listed.stdout)
        XCTAssertEqual(lines.count, 3, listed.stdout)
        let column = try XCTUnwrap(lines[0].range(of: "ORIGINAL TX")).lowerBound.utf16Offset(in: lines[0])
        for line in lines.dropFirst() {
            XCTAssertEqual(line.range(of: "200000040000")?.lowerBound.utf16Offset(in: line), column, line)
        }
    }
}
