import Foundation
import XCTest
@testable import SubscriptionCore

/// The cohorts' `saved` dimension: how a subscription was first saved from cancelling
/// (`retention`, a retention offer; `realtime`, declared for a real-time save nothing records
/// yet; `none`).
final class SavedCohortTests: XCTestCase {
    func testSavedTakesItsThreeValuesOnlyAndARealtimeSaveIsKnownThoughNoCohortHasIt() throws {
        XCTAssertEqual(try CohortFilter.parse("saved=Retention").filter, CohortFilter(dimension: .saved, value: "retention"))
        XCTAssertEqual(try CohortFilter.parse("saved=realtime").filter, CohortFilter(dimension: .saved, value: "realtime"))
        XCTAssertThrowsError(try CohortFilter.parse("saved=maybe")) {
            XCTAssertEqual("\($0)", "saved is retention, realtime or none, not maybe")
        }
        let cell = CohortShare.Cell(start: 0, segment: .paid, measure: .members, period: 0, currency: "",
                                    values: ["app.monthly", "21000001", "USA", "none", "none", "P1M", "com.example", "none"], delta: 1)
        // A declared value no cohort has reports no cohort; another dimension's is refused.
        let realtime = try CohortReport.build(cells: [cell], metric: .retention, period: .month, from: 0, to: 0,
                                              filters: [CohortFilter(dimension: .saved, value: "realtime")], segments: [.paid],
                                              by: nil, rates: nil, now: 86_400_000)
        XCTAssertEqual(realtime.rows.count, 0)
        XCTAssertThrowsError(try CohortReport.build(cells: [cell], metric: .retention, period: .month, from: 0, to: 0,
                                                    filters: [CohortFilter(dimension: .offer, value: "retention")], segments: [.paid],
                                                    by: nil, rates: nil, now: 86_400_000))
    }

    /// A key written before cohorts were split by `saved` is one value short: a subscription
    /// never saved.
    func testAKeyWrittenBeforeSavedReadsAsNeverSaved() throws {
        let values = ["app.monthly", "21000001", "USA", "none", "none", "P1M", "com.example"]
        let old = CohortShare.cell(key: "c:m:p:n:0:\u{1F}" + values.joined(separator: "\u{1F}"), bucket: 0, segment: .paid, delta: 1)
        XCTAssertEqual(old?.values, values + ["none"])
        let saved = CohortShare.cell(key: "c:m:p:n:0:\u{1F}" + (values + ["retention"]).joined(separator: "\u{1F}"),
                                     bucket: 0, segment: .paid, delta: 1)
        XCTAssertEqual(saved?.values, values + ["retention"])
        XCTAssertNil(CohortShare.cell(key: "c:m:p:n:0:\u{1F}" + values.dropLast().joined(separator: "\u{1F}"), bucket: 0, segment: .paid, delta: 1))
    }
}

extension SeveralAppsRecordsTests {
    /// Migration 34 recomputes the share of each subscription with a retention offer, and of
    /// no other: the others' cohort keys, written without `saved`, read as never saved.
    func testMigration34PutsTheSubscriptionsWithARetentionOfferUnderSavedRetention() throws {
        // The shares as subdesk wrote them at 32, before cohorts were split by `saved`.
        ReferenceBreak.active = .cohortsUnsaved
        defer { ReferenceBreak.active = nil }
        let made = try Store(path: Store.testLocation(file: FileManager.default.temporaryDirectory
            .appendingPathComponent("saved-made-\(UUID().uuidString).db").path))
        let intake = TestKit.intake(made)
        for (otid, offer) in [("8300000000000010", 0), ("8300000000000020", 2), ("8300000000000030", 0)] {
            let first = TestKit.transaction(id: otid, original: otid, purchase: TestKit.anchor - 50 * TestKit.day,
                                            expires: TestKit.anchor - 20 * TestKit.day)
            // The first saved with Apple's example of a retention offer: three months free at renewal.
            var extra: [String: Any] = ["originalPurchaseDate": TestKit.anchor - 50 * TestKit.day, "transactionReason": "RENEWAL"]
            if otid.hasSuffix("10") {
                extra.merge(["offerType": 5, "offerIdentifier": "stay3", "offerDiscountType": "FREE_TRIAL", "offerPeriod": "P3M",
                             "price": 0]) { $1 }
            } else if offer != 0 {
                extra.merge(["offerType": offer, "offerIdentifier": "o\(offer)"]) { $1 }
            }
            let renewal = TestKit.transaction(id: String(otid.dropLast()) + "1", original: otid, purchase: TestKit.anchor - 20 * TestKit.day,
                                              expires: TestKit.anchor + 70 * TestKit.day, extra: extra)
            for (type, t) in [("SUBSCRIBED", first), ("DID_RENEW", renewal)] {
                guard case .stored = try intake.ingest(TestKit.body(type: type, uuid: "\(type)-\(otid)", transaction: t,
                                                                    renewal: TestKit.renewal(original: otid))) else {
                    return XCTFail("\(otid) \(type) is stored")
                }
            }
        }
        ReferenceBreak.active = nil
        let (pending, location) = try pendingAfterMigrating(made, from: 32)
        XCTAssertEqual(pending, ["8300000000000010"])
        let migrated = try Store(path: location)
        let report = try CohortReport.compute(store: migrated, metric: .retention, from: TestKit.anchor - 50 * TestKit.day,
                                              to: TestKit.anchor, by: .saved, now: TestKit.anchor)
        XCTAssertEqual(report.rows.map { "\($0.value ?? "") \($0.size)" }, ["none 2", "retention 1"])
        let saved = try CohortReport.compute(store: migrated, metric: .retention, from: TestKit.anchor - 50 * TestKit.day,
                                             to: TestKit.anchor, filters: [CohortFilter(dimension: .saved, value: "retention")],
                                             now: TestKit.anchor)
        // Saved at its first renewal, and still in its first run there.
        XCTAssertEqual(saved.rows.map(\.size), [1])
        XCTAssertEqual(saved.rows.first?.cells.first??.count, 1)
    }
}
