import XCTest
@testable import SubscriptionCore

/// What serve's 503 counts mean and how they travel over FastCGI: a fixed set of reasons,
/// read from the store error's codes, folded to `other` when not known.
final class ServeUnavailabilityTests: XCTestCase {
    func testReasonsComeFromTheStoreErrorsCodes() {
        XCTAssertEqual(ServeUnavailableReason.of(StoreError(operation: "w", message: "", code: 5)), .locked)
        XCTAssertEqual(ServeUnavailableReason.of(StoreError(operation: "w", message: "", code: 5 | (2 << 8))), .locked)
        XCTAssertEqual(ServeUnavailableReason.of(StoreError(operation: "w", message: "", code: 0, sqlState: "55P03")), .locked)
        XCTAssertEqual(ServeUnavailableReason.of(StoreError(operation: "w", message: "", code: 0, sqlState: "57P01")), .connection)
        XCTAssertEqual(ServeUnavailableReason.of(StoreError(operation: "w", message: "", code: 0, sqlState: "08006")), .connection)
        XCTAssertEqual(ServeUnavailableReason.of(StoreNotFound(path: "x.db")), .storeMissing)
        XCTAssertEqual(ServeUnavailableReason.of(StoreError(operation: "w", message: "", code: 13)), .other, "disk full")
        XCTAssertEqual(ServeUnavailableReason.of(CocoaError(.fileReadUnknown)), .other)
    }

    func testTheCountsSurviveTheirEncodingAndUnknownReasonsFoldIntoOther() {
        let counts = ServeUnavailability(totals: [.locked: 3, .incompleteBody: 1], lastHour: 2)
        XCTAssertEqual(counts.encodedTotals, "locked=3,connection=0,store_missing=0,store_replaced=0,incomplete_body=1,revocation=0,other=0")
        XCTAssertEqual(ServeUnavailability.decode(totals: counts.encodedTotals, lastHour: "2"), counts)
        XCTAssertEqual(counts.summary, "locked 3, incomplete_body 1")
        XCTAssertEqual(ServeUnavailability.decode(totals: "locked=1,disk_on_fire=4,other=1", lastHour: "0")?.totals,
                       [.locked: 1, .other: 5])
        for (totals, hour) in [("locked=x", "0"), ("locked=-1", "0"), ("locked", "0"), ("locked=1", "-1"), ("locked=1", "")] {
            XCTAssertNil(ServeUnavailability.decode(totals: totals, lastHour: hour), "\(totals) / \(hour)")
        }
        XCTAssertNil(ServeUnavailability.decode(totals: nil, lastHour: "0"), "a serve that does not count says nothing")
    }

    /// When each reason was last answered travels with the counts; a serve of an earlier
    /// build, which does not say, leaves it empty.
    func testWhenEachReasonWasLastSeenSurvivesItsEncoding() {
        let counts = ServeUnavailability(totals: [.locked: 1, .revocation: 2], lastHour: 3,
                                         lastAt: [.locked: 1_790_000_000_000, .revocation: 1_790_000_100_000])
        XCTAssertEqual(counts.encodedLastAt, "locked=1790000000000,revocation=1790000100000")
        XCTAssertEqual(ServeUnavailability.decode(totals: counts.encodedTotals, lastHour: "3", lastAt: counts.encodedLastAt), counts)
        XCTAssertEqual(ServeUnavailability.decode(totals: counts.encodedTotals, lastHour: "3")?.lastAt, [:])
        XCTAssertEqual(counts.latest { $0.isTheStore }, 1_790_000_000_000)
        XCTAssertEqual(counts.latest { $0 == .revocation }, 1_790_000_100_000)
        XCTAssertNil(ServeUnavailability.decode(totals: counts.encodedTotals, lastHour: "3", lastAt: "locked=soon"))
        XCTAssertEqual(ServeUnavailableReason.of(RevocationStatusUnavailable(field: "signedPayload", position: .x5c(0), subject: "leaf",
                                                                             responder: "http://ocsp.example", reason: "timed out")),
                       .revocation)
    }
}
