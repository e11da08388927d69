import Foundation
import XCTest
@testable import SubscriptionCore

/// The cohorts' `saved` dimension: how a subscription was first saved from cancelling
/// (`retention`, a retention offer; `realtime`, a real-time save; `none`).
final class SavedCohortTests: XCTestCase {
    func testSavedTakesItsThreeValuesOnlyAndAValueNoCohortHasReportsNone() throws {
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
        let made = try Store(path: Store.testLocation(file: scratchStoreFile("saved-made")))
        let intake = TestKit.intake(made, rules: .turningBack(.cohortsUnsaved))
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

    /// Migration 39 keeps each stored notification's auto-renew status and renewal product,
    /// read back from its body, and recomputes the share of each subscription with an
    /// answered real-time request, and of no other: the catch-up then counts its save.
    func testMigration39FillsEachNotificationsAutoRenewAndCountsTheRealtimeSavesOfTheStore() throws {
        let made = try Store(path: Store.testLocation(file: scratchStoreFile("realtime-made")))
        let intake = TestKit.intake(made)
        let start = TestKit.anchor - 50 * TestKit.day, asked = TestKit.anchor - 40 * TestKit.day
        for otid in ["8400000000000010", "8400000000000020"] {
            let t = TestKit.transaction(id: otid, original: otid, purchase: start, expires: start + 30 * TestKit.day)
            for (type, signed, product) in [("SUBSCRIBED", start, "app.monthly"), ("DID_CHANGE_RENEWAL_PREF", asked + TestKit.day / 2, "app.yearly"),
                                            ("DID_RENEW", asked + 2 * TestKit.day, "app.yearly")] {
                guard case .stored = try intake.ingest(TestKit.body(type: type, uuid: "\(type)-\(otid)", signed: signed, transaction: t,
                                                                    renewal: TestKit.renewal(original: otid, signed: signed,
                                                                                             extra: ["autoRenewProductId": product]))) else {
                    return XCTFail("\(otid) \(type) is stored")
                }
            }
        }
        // The first was answered with the plan it then switched to; the second fell back.
        for (otid, answered) in [("8400000000000010", true), ("8400000000000020", false)] {
            var decision = RetentionDecision(response: RetentionResponse(
                status: 200, body: "{}", outcome: answered ? .answered(rule: "switch", answer: .alternateProduct(productId: "app.yearly", billingPlanType: nil, messageId: nil))
                    : .fellBack(.noRule, rule: nil)), decidedMs: asked, micros: 700)
            (decision.requestId, decision.originalTransactionId) = ("request-\(otid)", otid)
            try made.retention.decisions.record(decision)
        }
        let (pending, location) = try pendingAfterMigrating(made, from: 38)
        XCTAssertEqual(pending, ["8400000000000010"])
        let migrated = try Store(path: location)
        let events = try migrated.subscriptions.history(originalTransactionId: "8400000000000010").events
        XCTAssertEqual(events.map { "\($0.type.rawValue) \($0.autoRenew.map(String.init) ?? "-") \($0.autoRenewProductId ?? "-")" },
                       ["SUBSCRIBED true app.monthly", "DID_CHANGE_RENEWAL_PREF true app.yearly", "DID_RENEW true app.yearly"])
        try migrated.metrics.catchUpShares()
        let days = try DailyCountsReport.compute(store: migrated, from: DateText.format(start, "yyyy-MM-dd", zone: .gmt),
                                                 to: DateText.format(TestKit.anchor, "yyyy-MM-dd", zone: .gmt), timeZone: .gmt)
        XCTAssertEqual(days.filter { $0[.saved] > 0 }.map { "\($0.day) \($0[.saved])" },
                       ["\(DateText.format(asked, "yyyy-MM-dd", zone: .gmt)) 1"])
        let cohorts = try CohortReport.compute(store: migrated, metric: .retention, from: start, to: TestKit.anchor, by: .saved, now: TestKit.anchor)
        XCTAssertEqual(cohorts.rows.map { "\($0.value ?? "") \($0.size)" }, ["none 1", "realtime 1"])
    }
}
