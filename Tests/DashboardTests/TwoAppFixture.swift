import Foundation
import XCTest
import SubscriptionCore
import SubdeskScenarios
import TerminalUI
@testable import Dashboard
import SubdeskTestKit

/// A store of two apps' rows: the demo store (app `demo`) with the consent fixture, and a
/// second app `other` (`com.example.other`) with one subscription that asked for a refund
/// and whose customer's parent withdrew consent, one refused body signed for it, and a
/// delivery gap and an operator's action of each app.
enum TwoAppFixture {
    static let otherBundleId = "com.example.other"
    static let otherAppleId: Int64 = 2_234_567_890
    /// The other app's subscription.
    static let otherId = ScenarioBuilder.originalTransactionId(instance: 777)
    /// The quarantine reason of the other app's refused body.
    static let otherRefusal = "refused for the other app"

    static let apps = ConfiguredApps(apps: [ConfiguredApp(name: "demo", bundleId: ScenarioBuilder.demoBundleId, appAppleId: ScenarioBuilder.demoAppAppleId),
                                            ConfiguredApp(name: "other", bundleId: otherBundleId, appAppleId: otherAppleId)],
                                     fromSections: true)

    static var policy: IntakePolicy {
        var policy = IntakePolicy()
        policy.apps = [IntakePolicy.AppRules(name: "demo", bundleId: ScenarioBuilder.demoBundleId, appAppleId: ScenarioBuilder.demoAppAppleId),
                       IntakePolicy.AppRules(name: "other", bundleId: otherBundleId, appAppleId: otherAppleId)]
        policy.appsFromSections = true
        return policy
    }

    static func store() throws -> Store {
        let store = try Store.inMemory()
        try fill(store)
        return store
    }

    /// Builds the two apps' rows into an empty store.
    static func fill(_ store: Store) throws {
        let sample = try SampleData.locate(explicit: DashboardFixture.repositoryRoot.appendingPathComponent("sample-data").path)
        _ = try DemoStoreBuilder(sample: sample, copies: 1).build(into: store, anchor: DashboardFixture.anchor)
        try ConsentFixture.add(to: store)
        let intake = Intake(store: store, verifier: SignedDataVerifier(roots: try sample.trustRoots()), policy: policy)
        let scenario = try Scenario(json: JSONFields(data: Data("""
            {"name": "other app", "steps": [
              {"at": "-3d", "notification": "SUBSCRIBED/INITIAL_BUY", "transaction": {"product": "other.monthly", "period": "30d", "price": 4990}},
              {"at": "-2h", "notification": "CONSUMPTION_REQUEST", "consumptionRequestReason": "UNINTENDED_PURCHASE"},
              {"at": "-1h", "notification": "RESCIND_CONSENT"}],
             "expect": {"status": "active"}}
            """.utf8), path: "other.json"))
        let builder = ScenarioBuilder(signer: try sample.signer(), bundleId: otherBundleId, appAppleId: otherAppleId)
        var uuids: [String] = []
        for body in try builder.bodies(for: scenario, instance: 777, anchor: DashboardFixture.anchor) {
            guard case .stored(let stored) = try intake.ingest(body, source: "test", receivedAt: DashboardFixture.anchor) else {
                throw ConsentFixture.FixtureError(description: "the other app's notification was not stored")
            }
            uuids.append(stored.notificationUUID)
        }
        try store.write {
            _ = try store.quarantine.keep(body: Data("{}".utf8), reason: otherRefusal, kind: .other, source: "test",
                                     receivedDate: DashboardFixture.anchor, bodySHA256: "other-app-refusal", bundleId: otherBundleId)
        }
        let run = try store.backfills.start(environment: "Production", since: DashboardFixture.anchor - 86_400_000, until: DashboardFixture.anchor,
                                          onlyFailures: false, operatorName: "test", now: DashboardFixture.anchor)
        let demoNotification = try XCTUnwrap(try store.notifications.list(limit: 1, app: AppScope(bundleId: ScenarioBuilder.demoBundleId, includesUnknown: false)).first)
        try store.write {
            try store.backfills.recordGap(notificationUUID: uuids[0], run: run.id, attempts: [], now: DashboardFixture.anchor)
            try store.backfills.recordGap(notificationUUID: demoNotification.event.notificationUUID, run: run.id, attempts: [], now: DashboardFixture.anchor)
        }
        try store.backfills.finish(run.id, now: DashboardFixture.anchor)
        // An operator's action on a subscription of each app.
        try store.write {
            for target in [otherId, ScenarioBuilder.originalTransactionId(instance: 0)] {
                _ = try store.audit.append(AuditEntry(at: DashboardFixture.anchor, operatorName: "ana", action: .link, target: target,
                                                     reason: nil, outcome: "linked to user-\(target.suffix(4))"))
            }
        }
    }

    /// A started session over a two-app store, every app shown (`apps`: the configured ones).
    static func session(width: Int = 120, height: Int = 40, apps: ConfiguredApps = apps) throws -> DashboardSession {
        var state = DashboardFixture.state(width: width, height: height)
        state.apps = apps
        let themes = ThemeCatalog(searchPaths: [DashboardFixture.repositoryRoot.appendingPathComponent("themes").path])
        let session = DashboardSession(store: try store(), state: state, themes: themes, clock: { DashboardFixture.anchor })
        session.start()
        return session
    }
}
