import Foundation
import XCTest
import SubscriptionCore
import SubdeskScenarios
@testable import Dashboard
import SubdeskTestKit

/// Consent withdrawals signed with the demo CA and taken in through intake: subscriptions
/// 7701 and 7702 bought from app transactions 880001 and 880002, and 7703 from 880003
/// (whose customer never withdrew); RESCIND_CONSENT for 880001 (two days ago), 880002
/// (a day ago) and 880009, which no stored purchase carries (three days ago).
enum ConsentFixture {
    struct FixtureError: Error, CustomStringConvertible { var description: String }

    static let day: Millis = 86_400_000
    static let uuid1 = "consent-880001"
    static let uuid2 = "consent-880002"
    static let unmatched = "consent-880009"

    static func store() throws -> Store {
        let store = try Store.inMemory()
        try add(to: store)
        return store
    }

    static func add(to store: Store) throws {
        let sample = try SampleData.locate(explicit: DashboardFixture.repositoryRoot.appendingPathComponent("sample-data").path)
        let signer = try sample.signer()
        let intake = Intake(store: store, verifier: SignedDataVerifier(roots: try sample.trustRoots()), policy: SampleData.demoPolicy)
        let now = DashboardFixture.anchor
        func signed(_ object: [String: Any]) throws -> String {
            try signer.sign(payload: try JSONSerialization.data(withJSONObject: object))
        }
        func ingest(_ payload: [String: Any]) throws {
            let body = try JSONSerialization.data(withJSONObject: ["signedPayload": try signed(payload)])
            let outcome = try intake.ingest(body, source: "test", receivedAt: now)
            guard case .stored = outcome else { throw FixtureError(description: "fixture notification not stored: \(outcome)") }
        }
        for (otid, app, user) in [("7701", "880001", "user-consent-1"), ("7702", "880002", "user-consent-2"), ("7703", "880003", "user-stays")] {
            let purchase: [String: Any] = [
                "transactionId": otid, "originalTransactionId": otid, "productId": "app.monthly",
                "bundleId": ScenarioBuilder.demoBundleId, "purchaseDate": now - 5 * day, "originalPurchaseDate": now - 5 * day,
                "expiresDate": now + 25 * day, "signedDate": now - 5 * day, "environment": "Production",
                "type": "Auto-Renewable Subscription", "inAppOwnershipType": "PURCHASED", "appTransactionId": app,
                "price": 9990, "currency": "USD",
            ]
            try ingest(["notificationType": "SUBSCRIBED", "subtype": "INITIAL_BUY", "notificationUUID": "buy-\(otid)",
                        "version": "2.0", "signedDate": now - 5 * day,
                        "data": ["bundleId": ScenarioBuilder.demoBundleId, "appAppleId": ScenarioBuilder.demoAppAppleId,
                                 "environment": "Production", "signedTransactionInfo": try signed(purchase)] as [String: Any]])
            _ = try Operations(store: store, operatorName: "test").link(userId: user, to: otid, force: true, now: now - 5 * day)
        }
        for (uuid, app, age) in [(uuid1, "880001", 2 * day), (uuid2, "880002", day), (unmatched, "880009", 3 * day)] {
            let appTransaction: [String: Any] = [
                "receiptType": "Production", "appAppleId": ScenarioBuilder.demoAppAppleId, "bundleId": ScenarioBuilder.demoBundleId,
                "appTransactionId": app, "originalPurchaseDate": now - 100 * day, "originalPlatform": "iOS",
                "originalApplicationVersion": "1.0", "applicationVersion": "1.4", "signedDate": now - age,
            ]
            try ingest(["notificationType": "RESCIND_CONSENT", "notificationUUID": uuid, "version": "2.0", "signedDate": now - age,
                        "appData": ["appAppleId": ScenarioBuilder.demoAppAppleId, "bundleId": ScenarioBuilder.demoBundleId,
                                    "environment": "Production", "signedAppTransactionInfo": try signed(appTransaction)] as [String: Any]])
        }
    }
}
