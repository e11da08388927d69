import Foundation
import SubscriptionCore
import XCTest

/// Numbers typed into options are read into bounded values or refused by name: a usage
/// error exits 2, `check` exits 3 (Nagios UNKNOWN); none traps (exit 132).
final class OutsideNumberCLITests: SubdeskTestCase {
    func testHugeDurationsInCheckAreUnknownNotATrap() throws {
        let db = try demoStoreFile()
        for (option, value) in [("max-silence", "1e300"), ("refund-deadline", "1e17d"), ("max-silence", "9223372036854775807s"),
                                ("refund-deadline", "3651d")] {
            let r = try run(["check", "--db", db, "--\(option)", value])
            XCTAssertEqual(r.status, 3, "--\(option) \(value): \(r.stdout) \(r.stderr)")
            XCTAssertTrue(r.stdout.contains("SUBDESK UNKNOWN - --\(option) must be at most 3650d, got \(value)"), r.stdout)
        }
        let fine = try run(["check", "--db", db, "--max-silence", "3650d"])
        XCTAssertLessThan(fine.status, 3, fine.stdout)
    }

    func testCohortBoundsOutsideFourDigitYearsAreRefused() throws {
        let db = try demoStoreFile()
        for value in ["99999999999-01", "-0001-01", "0001-01", "2026-001", "2026--01"] {
            let r = try run(["cohorts", "--db", db, "--from", value])
            XCTAssertEqual(r.status, 2, "--from \(value): \(r.stderr)")
            XCTAssertTrue(r.stderr.contains("--from \(value) is not a month (YYYY-MM) from 1970 to 9999"), r.stderr)
        }
        let week = try run(["cohorts", "--db", db, "--period", "week", "--from", "99999999999-W01"])
        XCTAssertEqual(week.status, 2, week.stderr)
    }

    func testHugeOffsetsAndDatesAreRefused() throws {
        let db = try demoStoreFile()
        let grant = try run(["override", "grant", "user-1013", "--until", "+99999999999999d", "--reason", "x", "--db", db])
        XCTAssertEqual(grant.status, 2, grant.stderr)
        XCTAssertTrue(grant.stderr.contains("--until +99999999999999d is not a date"), grant.stderr)
        for since in ["-99999999999999d", "9223372036854775807"] {
            let audit = try run(["audit", "--since", since, "--db", db])
            XCTAssertEqual(audit.status, 2, audit.stderr)
            XCTAssertTrue(audit.stderr.contains("cannot read date \(since)"), audit.stderr)
        }
    }

    /// A negative limit would mean "no limit" to SQLite and an error to PostgreSQL.
    func testLimitsBelowOneAreRefusedByName() throws {
        let db = try demoStoreFile()
        for args in [["audit"], ["notifications"], ["gaps"], ["quarantine"], ["search", "user"]] {
            let r = try run(args + ["--db", db, "--limit", "-1"])
            XCTAssertEqual(r.status, 2, "\(args[0]): \(r.stderr)")
            XCTAssertTrue(r.stderr.contains("--limit must be at least 1, got -1"), "\(args[0]): \(r.stderr)")
        }
        let huge = try run(["notifications", "--db", db, "--limit", "9223372036854775807"])
        XCTAssertEqual(huge.status, 0, huge.stderr)
    }

    func testANegativeSeedIsASeed() throws {
        let r = try run(["generate", "--subscribers", "5", "--seed", "-1", "--db", dir + "/generated.db"])
        XCTAssertEqual(r.status, 0, r.stderr)
    }
}
