import Foundation
import XCTest
import SubscriptionCore
import SubdeskScenarios
import TerminalUI
@testable import Dashboard
import SubdeskTestKit

/// A type Apple adds is one row of the table of meanings: with the row, intake derives its
/// effect, the counts count it and the desk colours it; without it, it is kept and shown
/// as it came and moves nothing.
final class NotificationMeaningRowTests: XCTestCase, RunsOnEveryEngine {
    static let accountHold = NotificationType(rawValue: "ACCOUNT_HOLD")
    static let row = NotificationMeaning(accountHold, "billing on hold, no access", .v2, .init(billing: .entersRetry),
                                         tone: .billingRetry)
    static let otid = "2000000977000001"

    struct NotStored: Error {
        let outcome: IntakeOutcome
    }
    static let day: Millis = 86_400_000
    static let purchased = DashboardFixture.anchor - 40 * day
    static let expires = purchased + 30 * day

    /// A store with a purchase, then the new type once its period ended, taken in by an
    /// intake that reads `meanings`.
    func store(meanings: NotificationMeanings) throws -> Store {
        let store = try Store.inMemory()
        let sample = try SampleData.locate(explicit: DashboardFixture.repositoryRoot.appendingPathComponent("sample-data").path)
        let signer = try sample.signer()
        let intake = Intake(store: store, verifier: SignedDataVerifier(roots: try sample.trustRoots()), policy: SampleData.demoPolicy,
                            meanings: meanings)
        func json(_ object: [String: Any]) throws -> Data { try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) }
        let transaction: [String: Any] = [
            "transactionId": Self.otid, "originalTransactionId": Self.otid, "productId": "app.monthly",
            "bundleId": ScenarioBuilder.demoBundleId, "purchaseDate": Self.purchased, "originalPurchaseDate": Self.purchased,
            "expiresDate": Self.expires, "signedDate": Self.purchased, "environment": "Production", "inAppOwnershipType": "PURCHASED",
            "type": "Auto-Renewable Subscription", "price": 9990, "currency": "USD", "transactionReason": "PURCHASE"]
        let renewal: [String: Any] = ["originalTransactionId": Self.otid, "productId": "app.monthly", "autoRenewProductId": "app.monthly",
                                      "autoRenewStatus": 1, "signedDate": Self.purchased, "environment": "Production"]
        func body(_ type: NotificationType, subtype: NotificationSubtype? = nil, signed: Millis, renewal: [String: Any]?) throws -> Data {
            var data: [String: Any] = ["bundleId": ScenarioBuilder.demoBundleId, "environment": "Production", "bundleVersion": "1.0",
                                       "appAppleId": ScenarioBuilder.demoAppAppleId,
                                       "signedTransactionInfo": try signer.sign(payload: try json(transaction))]
            if let renewal { data["signedRenewalInfo"] = try signer.sign(payload: try json(renewal)) }
            var payload: [String: Any] = ["notificationType": type.rawValue, "notificationUUID": UUID().uuidString.lowercased(),
                                          "version": "2.0", "signedDate": signed, "data": data]
            if let subtype { payload["subtype"] = subtype.rawValue }
            return try json(["signedPayload": try signer.sign(payload: try json(payload))])
        }
        for (b, at) in [(try body(.subscribed, subtype: .initialBuy, signed: Self.purchased, renewal: renewal), Self.purchased),
                        (try body(Self.accountHold, signed: Self.expires + 3_600_000, renewal: nil), Self.expires + 3_600_000)] {
            let outcome = try intake.ingest(b, receivedAt: at)
            guard case .stored = outcome else { throw NotStored(outcome: outcome) }
        }
        return store
    }

    /// The days from the purchase to the anchor, in UTC.
    func counts(_ store: Store) throws -> [DayCounts] {
        let utc = TimeZone(identifier: "UTC")!
        return try DailyCountsReport.compute(store: store, from: DateText.format(Self.purchased, "yyyy-MM-dd", zone: utc),
                                             to: DateText.format(DashboardFixture.anchor, "yyyy-MM-dd", zone: utc), timeZone: utc)
    }

    /// The feed over `store`, and the role of the new type's cell in it.
    func feed(_ store: Store, meanings: NotificationMeanings) throws -> (line: String, role: StyleRole) {
        var state = DashboardFixture.state(width: 120, height: 40)
        state.meanings = meanings
        state.stack = [.subscribers, .feed]
        state.feed.entries = try store.intakeLog.entries()
        state.feed.loaded = true
        // The selected line takes the selection's role: select the other one.
        state.feed.selection = try XCTUnwrap(state.feed.visible.firstIndex { $0.type != Self.accountHold.rawValue })
        let buffer = DashboardRenderer.render(state)
        for y in 0..<buffer.height {
            let line = buffer.row(y)
            guard let found = line.range(of: Self.accountHold.rawValue) else { continue }
            return (line, buffer[line.distance(from: line.startIndex, to: found.lowerBound), y].role)
        }
        XCTFail("no line of the feed shows \(Self.accountHold)")
        return ("", .normal)
    }

    func testOneRowMakesANewTypeDerivedCountedStyledAndShown() throws {
        let withRow = try store(meanings: NotificationMeanings.standard.adding(Self.row))
        let without = try store(meanings: .standard)

        // Derived: the subscription's state and its share of the counts, saved by intake.
        for store in [withRow, without] {
            let state = try XCTUnwrap(try store.subscriptions.find(originalTransactionId: Self.otid)?.state)
            XCTAssertEqual(state.lastNotificationType, Self.accountHold.rawValue, "the last event is shown whatever the table says")
        }
        // Counted: the row puts the subscription in billing retry.
        let counted = try counts(withRow), uncounted = try counts(without)
        XCTAssertEqual(counted.last?[.inBillingRetry], 1)
        XCTAssertEqual(counted.map { $0[.renewalFailures] }.reduce(0, +), 1)
        XCTAssertEqual(uncounted.last?[.inBillingRetry], 0, "without its row the type moves nothing")
        XCTAssertEqual(uncounted.map { $0[.renewalFailures] }.reduce(0, +), 0)

        // Styled and shown: the feed's line, coloured by the row's tone.
        let styled = try feed(withRow, meanings: NotificationMeanings.standard.adding(Self.row))
        XCTAssertTrue(styled.line.contains(Self.otid), styled.line)
        XCTAssertEqual(styled.role, .badgeBillingRetry)
        XCTAssertEqual(try feed(without, meanings: .standard).role, .normal, "an unknown type is shown plain, as it came")
    }
}
