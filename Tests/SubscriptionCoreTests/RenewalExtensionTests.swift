import Foundation
import XCTest
import SubdeskTestKit
import FakeApple
@testable import SubscriptionCore
import SubdeskScenarios

/// Renewal-date extensions against the fake Apple: Apple's rules checked first, every
/// request kept and audited, a mass extension followed to completion and set beside
/// Apple's SUMMARY notification.
final class RenewalExtensionTests: XCTestCase, RunsOnEveryEngine {
    var fixture: RevalidationFixture!

    override func setUpWithError() throws { fixture = try RevalidationFixture() }
    override func tearDown() { fixture?.tearDown() }

    let otid = "2000000660000001"

    func seed(ownership: String = "PURCHASED") throws {
        try fixture.seed(transaction: TestKit.transaction(id: otid, original: otid, extra: ["inAppOwnershipType": ownership]),
                         renewal: TestKit.renewal(original: otid), receivedAt: TestKit.anchor - TestKit.day)
    }

    func testOneSubscriptionIsExtendedKeptAndAudited() throws {
        try seed()
        let effective = TestKit.anchor + 27 * TestKit.day
        fixture.server.route("PUT", "/prod/inApps/v1/subscriptions/extend/\(otid)",
                             .json(["originalTransactionId": otid, "webOrderLineItemId": "9993", "success": true, "effectiveDate": effective]))
        let record = try fixture.revalidator().extendRenewalDate(otid, days: 7, reasonCode: 3, reason: "outage 11-20")
        XCTAssertEqual(record.outcome, "extended")
        XCTAssertEqual(record.effective, effective)
        let sent = try XCTUnwrap(fixture.server.requests("PUT", "/prod/inApps/v1/subscriptions/extend/\(otid)").first?.json)
        XCTAssertEqual(sent["extendByDays"] as? Int, 7)
        XCTAssertEqual(sent["extendReasonCode"] as? Int, 3)
        XCTAssertEqual(sent["requestIdentifier"] as? String, record.requestIdentifier)
        XCTAssertNotNil(UUID(uuidString: record.requestIdentifier))
        let store = try fixture.openStore()
        XCTAssertEqual(try store.extensions.list(originalTransactionId: otid).map(\.outcome), ["extended"])
        let audit = try XCTUnwrap(try store.audit.entries().first { $0.action == "extend" })
        XCTAssertEqual(audit.reason, "outage 11-20")
        XCTAssertTrue(audit.outcome.hasPrefix("extended by 7 days to "), audit.outcome)
    }

    /// Without the key settings the command says what it needs before any y/n question,
    /// and nothing is asked of Apple or kept.
    func testExtendWithoutTheAPIKeyIsRefusedBeforeTheQuestion() throws {
        try seed()
        // The command line names the config file it reads; the core, knowing none, the config file.
        let needs = "extending a renewal date needs the App Store Server API key: set api_key_file, api_key_id and api_issuer_id "
            + "in the config file"
        let single = try fixture.subdesk(["extend", otid, "--days", "7", "--reason-code", "3", "--reason", "outage"]
                                         + fixture.commandLineFlagsWithoutKey)
        XCTAssertEqual(single.status, 2, single.output)
        XCTAssertTrue(single.output.contains(needs), single.output)
        XCTAssertFalse(single.output.contains("--yes"), "asked to confirm first: \(single.output)")
        XCTAssertFalse(single.output.contains("not configured"), single.output)
        let all = try fixture.subdesk(["extend", "--all", "--product", "app.monthly", "--days", "3", "--reason-code", "3", "--reason", "outage"]
                                      + fixture.commandLineFlagsWithoutKey)
        XCTAssertEqual(all.status, 2, all.output)
        XCTAssertTrue(all.output.contains("extending renewal dates for every active subscriber needs the App Store Server API key: set api_key_file"),
                      all.output)
        XCTAssertTrue(fixture.server.requests.isEmpty)
        XCTAssertEqual(try fixture.openStore().extensions.list(originalTransactionId: otid).count, 0)
        // The core says the same to any other caller.
        XCTAssertThrowsError(try fixture.revalidator(apiKey: false).extendRenewalDate(otid, days: 7, reasonCode: 3, reason: "outage")) { error in
            XCTAssertEqual("\(error)", needs + " (or pass --api-key-file, --api-key-id, --api-issuer-id)")
        }
    }

    func testApplesRulesAreCheckedBeforeAppleIsAsked() throws {
        try seed()
        fixture.server.route("PUT", "/prod/inApps/v1/subscriptions/extend/\(otid)",
                             .json(["originalTransactionId": otid, "success": true, "effectiveDate": TestKit.anchor]))
        let revalidator = try fixture.revalidator()
        for (days, code, reason, expected) in [(0, 1, "x", "1 to 90 days"), (91, 1, "x", "1 to 90 days"), (7, 4, "x", "reason code"),
                                               (7, 1, " ", "needs a reason")] {
            XCTAssertThrowsError(try revalidator.extendRenewalDate(otid, days: days, reasonCode: code, reason: reason)) { error in
                XCTAssertTrue("\(error)".contains(expected), "\(error)")
            }
        }
        XCTAssertTrue(fixture.server.requests.isEmpty, "Apple was not asked")
        _ = try revalidator.extendRenewalDate(otid, days: 7, reasonCode: 1, reason: "goodwill")
        _ = try revalidator.extendRenewalDate(otid, days: 7, reasonCode: 1, reason: "goodwill")
        XCTAssertThrowsError(try revalidator.extendRenewalDate(otid, days: 7, reasonCode: 1, reason: "goodwill")) { error in
            XCTAssertTrue("\(error)".contains("extended twice in the last 365 days"), "\(error)")
        }
        XCTAssertEqual(fixture.server.requests("PUT", "/prod/inApps/v1/subscriptions/extend/\(otid)").count, 2)
    }

    func testAppleRefusingIsKeptAndAuditedAsRefused() throws {
        try seed()
        fixture.server.route("PUT", "/prod/inApps/v1/subscriptions/extend/\(otid)",
                             RevalidationFixture.apiError(400, code: 4030004, message: "Invalid request. The subscription has already been extended the maximum number of times."))
        XCTAssertThrowsError(try fixture.revalidator().extendRenewalDate(otid, days: 7, reasonCode: 1, reason: "goodwill"))
        let store = try fixture.openStore()
        let record = try XCTUnwrap(try store.extensions.list(originalTransactionId: otid).first)
        XCTAssertTrue(record.outcome.hasPrefix("refused: "), record.outcome)
        XCTAssertTrue(record.outcome.contains("maximum number of times"), record.outcome)
        XCTAssertTrue(try store.audit.entries().contains { $0.action == "extend" && $0.outcome.hasPrefix("refused") })
    }

    func testAFamilySharedSubscriptionIsRefusedFirst() throws {
        try seed(ownership: "FAMILY_SHARED")
        XCTAssertThrowsError(try fixture.revalidator().extendRenewalDate(otid, days: 7, reasonCode: 1, reason: "x")) { error in
            XCTAssertTrue("\(error)".contains("family shared"), "\(error)")
        }
        XCTAssertTrue(fixture.server.requests.isEmpty)
    }

    func testAMassExtensionIsFollowedToCompletionAndSetBesideApplesSummary() throws {
        _ = try fixture.openStore()
        let server = fixture.server
        server.route("POST", "/prod/inApps/v1/subscriptions/extend/mass") { request in
            let id = request.json?["requestIdentifier"] as? String ?? ""
            server.route("GET", "/prod/inApps/v1/subscriptions/extend/mass/app.monthly/\(id)",
                         .json(["requestIdentifier": id, "complete": false, "succeededCount": 10, "failedCount": 0]),
                         .json(["requestIdentifier": id, "complete": true, "completeDate": TestKit.anchor,
                                "succeededCount": 30, "failedCount": 2]))
            return .json(["requestIdentifier": id])
        }
        var seen: [Bool] = []
        let record = try fixture.revalidator().extendForAllActive(productId: "app.monthly", days: 3, reasonCode: 3, reason: "outage",
                                                                  storefronts: ["USA", "CAN"], environment: .production, wait: 10,
                                                                  pollEvery: 0.05) { seen.append($0.complete) }
        XCTAssertEqual(seen, [false, true])
        XCTAssertEqual(record.outcome, "complete")
        XCTAssertEqual(record.succeeded, 30)
        XCTAssertEqual(record.failed, 2)
        let asked = try XCTUnwrap(server.requests("POST", "/prod/inApps/v1/subscriptions/extend/mass").first?.json)
        XCTAssertEqual(asked["productId"] as? String, "app.monthly")
        XCTAssertEqual(asked["storefrontCountryCodes"] as? [String], ["USA", "CAN"])
        let store = try fixture.openStore()
        XCTAssertEqual(try store.audit.entries().filter { $0.action == "extend_all" }.map(\.outcome),
                       ["asked Apple to extend every active subscriber by 3 days", "complete: 30 extended, 2 failed"])

        // Apple's SUMMARY notification arrives later with its own counts.
        XCTAssertNil(try fixture.revalidator().summaryNotification(for: record.requestIdentifier))
        let summary = TestKit.body(type: "RENEWAL_EXTENSION", subtype: "SUMMARY", transaction: nil, renewal: nil,
                                   extraPayload: ["summary": ["requestIdentifier": record.requestIdentifier, "environment": "Production",
                                                              "appAppleId": ScenarioBuilder.demoAppAppleId,
                                                              "bundleId": ScenarioBuilder.demoBundleId, "productId": "app.monthly",
                                                              "storefrontCountryCodes": ["USA", "CAN"], "succeededCount": 30,
                                                              "failedCount": 2]])
        guard case .stored = try TestKit.intake(store).ingest(summary) else { return XCTFail("summary not stored") }
        let counts = try XCTUnwrap(try fixture.revalidator().summaryNotification(for: record.requestIdentifier))
        XCTAssertEqual(counts.succeeded, 30)
        XCTAssertEqual(counts.failed, 2)
    }
}
