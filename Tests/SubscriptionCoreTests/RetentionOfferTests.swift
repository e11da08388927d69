import Foundation
import XCTest
@testable import SubscriptionCore

/// Apple's offer types as one table: a retention offer (offerType 5, redeemed on the App
/// Store's cancellation sheet) is a segment of its own, `offer=retention`, and the timeline
/// names it; a type Apple adds later is kept as its number.
final class OfferTypeTests: XCTestCase {
    func testEachRawValueHasItsSegmentAndWordsAndAnUnknownOneKeepsItsNumber() {
        XCTAssertEqual((1...5).map { OfferType(rawValue: $0) }, [.introductory, .promotional, .offerCode, .winBack, .retention])
        XCTAssertEqual((1...5).map { OfferType(rawValue: $0).rawValue }, [1, 2, 3, 4, 5])
        XCTAssertEqual((1...5).map { OfferType(rawValue: $0).segmentValue(freeTrial: false) },
                       ["introductory", "promotional", "offer_code", "win_back", "retention"])
        XCTAssertEqual(OfferType(rawValue: 1).segmentValue(freeTrial: true), "free_trial")
        XCTAssertEqual(OfferType(rawValue: 9), .unknown(9))
        XCTAssertEqual(OfferType(rawValue: 9).segmentValue(freeTrial: false), "type_9")
        XCTAssertEqual(OfferType(rawValue: 9).words, "offer type 9")
        XCTAssertEqual(OfferType.segmentValues, ["none", "free_trial", "introductory", "promotional", "offer_code", "win_back", "retention"])
    }

    /// Apple's example of a redeemed retention offer: three months free.
    func testTheTimelineNamesARetentionOfferWithWhatItGave() {
        XCTAssertEqual(Timeline.offerDescription(type: .retention, discount: "FREE_TRIAL", identifier: "stay3"), "retention offer stay3, free trial")
        XCTAssertEqual(Timeline.offerDescription(type: .retention, discount: nil, identifier: nil), "retention offer")
        XCTAssertEqual(Timeline.offerDescription(type: .promotional, discount: "PAY_AS_YOU_GO", identifier: "back"), "promotional offer back")
        XCTAssertEqual(Timeline.offerDescription(type: .unknown(7), discount: nil, identifier: "x"), "offer type 7")
    }
}

extension MetricsDefinitionTests {
    /// A subscriber who, about to cancel, took a retention offer of three free months at
    /// their renewal (Apple's example: a RENEWAL at price 0, offerType 5, FREE_TRIAL, P3M).
    func deliverARetentionSave() throws {
        try deliver("SUBSCRIBED", "INITIAL_BUY", period("6300", 1, from: 0, to: 30))
        try deliver("DID_RENEW", nil, period("6300", 2, from: 30, to: 120, extra: [
            "offerType": 5, "offerIdentifier": "stay3", "offerDiscountType": "FREE_TRIAL", "offerPeriod": "P3M", "price": 0]))
    }

    func testARetentionOfferIsItsOwnOfferSegment() throws {
        try deliverARetentionSave()
        let days = try report(130)
        try store.metrics.catchUpSegments()
        let offers = try store.metrics.segmentValues(.offer)
        XCTAssertTrue(offers.contains("retention"), "\(offers)")
        let retention = try DailyCountsReport.compute(store: store, from: DateText.format(d0, "yyyy-MM-dd", zone: utc),
                                                      to: DateText.format(d0 + 130 * day, "yyyy-MM-dd", zone: utc), timeZone: utc,
                                                      segments: [.paid], filter: SegmentFilter(dimension: .offer, value: "retention"))
        let none = try DailyCountsReport.compute(store: store, from: DateText.format(d0, "yyyy-MM-dd", zone: utc),
                                                 to: DateText.format(d0 + 130 * day, "yyyy-MM-dd", zone: utc), timeZone: utc,
                                                 segments: [.paid], filter: SegmentFilter(dimension: .offer, value: "none"))
        // The first month is no offer's; the saved quarter is the retention offer's.
        XCTAssertEqual(none[10][.activeSubscriptions], 1)
        XCTAssertEqual(retention[10][.activeSubscriptions], 0)
        XCTAssertEqual(retention[60][.activeSubscriptions], 1)
        XCTAssertEqual(none[60][.activeSubscriptions], 0)
        for i in [10, 60] { XCTAssertEqual(days[i][.activeSubscriptions], 1) }
        XCTAssertTrue(try store.metrics.segmentValues(.offer).allSatisfy { !$0.hasPrefix("type_") })
    }
}

extension SeveralAppsRecordsTests {
    /// Migration 32 recomputes the share of each subscription with a retention offer (its
    /// stored segment was type_5), and of no other.
    func testMigration32RecomputesTheSharesOfSubscriptionsWithARetentionOffer() throws {
        let made = try Store(path: Store.testLocation(file: scratchStoreFile("retention-made")))
        let intake = TestKit.intake(made)
        for (otid, offer) in [("8200000000000010", 5), ("8200000000000020", 2), ("8200000000000030", 0)] {
            let t = TestKit.transaction(id: otid, original: otid, purchase: TestKit.anchor - 20 * TestKit.day,
                                        expires: TestKit.anchor + 10 * TestKit.day,
                                        extra: offer == 0 ? [:] : ["offerType": offer, "offerIdentifier": "o\(offer)"])
            guard case .stored = try intake.ingest(TestKit.body(type: "DID_RENEW", uuid: "r-\(otid)", transaction: t,
                                                                renewal: TestKit.renewal(original: otid))) else {
                return XCTFail("\(otid) is stored")
            }
        }
        let (pending, location) = try pendingAfterMigrating(made, from: 31)
        XCTAssertEqual(pending, ["8200000000000010"])
        let migrated = try Store(path: location)
        try migrated.metrics.catchUpSegments()
        XCTAssertTrue(try migrated.metrics.segmentValues(.offer).contains("retention"))
    }
}
