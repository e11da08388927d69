import Foundation
import XCTest
@testable import SubscriptionCore
import SubdeskScenarios
import SubdeskTestKit

/// Overrides and the audit log, through the core API.
final class OperationsTests: XCTestCase, RunsOnEveryEngine {
    var store: Store!
    var ops: Operations!
    let now = TestKit.anchor

    override func setUpWithError() throws {
        store = try Store.inMemory()
        let scenarios = try TestKit.sample.scenarios()
        let intake = TestKit.intake(store)
        for name in ["voluntary-expiry", "renewals"] {
            let index = try XCTUnwrap(scenarios.firstIndex { $0.name == name })
            for body in try ScenarioBuilder(signer: TestKit.signer).bodies(for: scenarios[index], instance: index, anchor: now) {
                _ = try intake.ingest(body, receivedAt: now)
            }
            try store.subscribers.link(scenarios[index].userId!, originalTransactionId: ScenarioBuilder.originalTransactionId(instance: index))
        }
        ops = Operations(store: store, operatorName: "ana")
    }

    func report(_ id: String, at: Millis) throws -> SubscriptionReport {
        try XCTUnwrap(try SubscriberReport.load(store: store, id: id, now: at)?.subscriptions.first)
    }

    func testGrantEntitlesUntilItExpiresWhileAppleStateStaysVisible() throws {
        let before = try report("user-1013", at: now)
        XCTAssertFalse(before.entitlement.entitled)
        let o = try ops.grant("user-1013", until: now + 7 * TestKit.day, reason: "goodwill", now: now)
        let during = try report("user-1013", at: now + TestKit.day)
        XCTAssertTrue(during.entitlement.entitled)
        XCTAssertFalse(during.entitlement.appleEntitled)
        XCTAssertEqual(during.state.status, .expired, "Apple's status is unchanged")
        XCTAssertEqual(during.entitlement.override?.id, o.id)
        XCTAssertEqual(during.timeline.last?.kind, .override)
        let json = during.jsonObject()
        XCTAssertEqual(json["entitled"] as? Bool, true)
        XCTAssertEqual(json["appleEntitled"] as? Bool, false)
        let after = try report("user-1013", at: now + 8 * TestKit.day)
        XCTAssertFalse(after.entitlement.entitled, "the grant ran out")
    }

    func testRevokeAndLift() throws {
        let o = try ops.revoke("user-1004", reason: "chargeback fraud", now: now)
        XCTAssertFalse(try report("user-1004", at: now + 1).entitlement.entitled)
        _ = try ops.lift(overrideId: o.id, reason: "resolved", now: now + 10)
        XCTAssertTrue(try report("user-1004", at: now + 20).entitlement.entitled)
        XCTAssertThrowsError(try ops.lift(overrideId: o.id, reason: "again", now: now + 30)) { error in
            XCTAssertTrue("\(error)".contains("already lifted"), "\(error)")
        }
        let actions = try store.audit.entries().map(\.action)
        XCTAssertEqual(actions, ["override_revoke", "override_lift"])
    }

    func testAReasonIsRequiredAndNothingIsWrittenWithout() throws {
        XCTAssertThrowsError(try ops.grant("user-1013", until: now + TestKit.day, reason: "  ", now: now)) { error in
            XCTAssertEqual("\(error)", "a reason is required")
        }
        XCTAssertThrowsError(try ops.grant("nobody", until: now + TestKit.day, reason: "x", now: now)) { error in
            XCTAssertTrue("\(error)".contains("no subscriber"), "\(error)")
        }
        XCTAssertTrue(try store.overrides.list().isEmpty)
        XCTAssertTrue(try store.audit.entries().isEmpty)
    }

    func testTheAuditLogRefusesUpdateAndDelete() throws {
        _ = try ops.grant("user-1013", until: now + TestKit.day, reason: "goodwill", now: now)
        XCTAssertThrowsError(try store.executeForTesting("UPDATE audit_log SET operator = 'mallory'")) { error in
            XCTAssertTrue("\(error)".contains("append-only"), "\(error)")
        }
        XCTAssertThrowsError(try store.executeForTesting("DELETE FROM audit_log")) { error in
            XCTAssertTrue("\(error)".contains("append-only"), "\(error)")
        }
        // On PostgreSQL the server records the database user, whatever name the client gave.
        XCTAssertEqual(try store.audit.entries().first?.operatorName, try store.server.databaseUser() ?? "ana")
    }
}

extension OperationsTests {
    /// Linking a subscription to the user it already has moves nothing, and the audit log
    /// says so instead of naming the same user as previous and new owner.
    func testALinkToTheSameOwnerIsNotAuditedAsAMove() throws {
        let scenarios = try TestKit.sample.scenarios()
        let index = try XCTUnwrap(scenarios.firstIndex { $0.name == "renewals" })
        let otid = ScenarioBuilder.originalTransactionId(instance: index)
        let owner = try XCTUnwrap(scenarios[index].userId)
        _ = try ops.link(userId: owner, to: otid, force: false, now: now)
        let same = try XCTUnwrap(try store.audit.entries().last { $0.action == "link" })
        XCTAssertEqual(same.detail, "already linked to user \(owner): no change of owner")
        _ = try ops.link(userId: "user-new", to: otid, force: true, now: now)
        let moved = try XCTUnwrap(try store.audit.entries().last { $0.action == "link" })
        XCTAssertEqual(moved.detail, "previous owner: user \(owner); new owner: user user-new")
    }
}
