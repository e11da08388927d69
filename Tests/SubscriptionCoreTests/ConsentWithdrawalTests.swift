import Foundation
import XCTest
import FakeApple
@testable import SubscriptionCore
import SubdeskScenarios
import SubdeskTestKit

/// RESCIND_CONSENT built from Apple's example payloads (signed with the test CA, dates moved
/// into its validity as `AppleExamplesConformanceTests` does), moved to Production and the
/// demo app so that the fake Apple can be asked about it: the withdrawal lands on the
/// subscription whose purchase carries its appTransactionId, is listed until an operator
/// marks it handled (audited), and one that no stored purchase matches is resolved at Apple.
final class ConsentWithdrawalTests: XCTestCase, RunsOnEveryEngine {
    typealias Examples = AppleExamplesConformanceTests
    let a = TestKit.anchor, day = TestKit.day
    static let rescindUUID = "002e14d5-51f5-4503-b5a8-c3a1af68eb20"

    let examples = ConsentExamples()
    func appTransaction(_ changes: [String: Any] = [:]) throws -> [String: Any] { try examples.appTransaction(changes) }
    func purchase() throws -> [String: Any] { try examples.purchase() }
    func purchaseBody() throws -> Data { try examples.purchaseBody() }
    func rescindBody(app: [String: Any]? = nil, signedApp: String? = nil) throws -> Data { try examples.rescindBody(app: app, signedApp: signedApp) }

    func ingest(_ intake: Intake, _ body: Data) throws {
        let outcome = try intake.ingest(body, source: "test")
        guard case .stored = outcome else { return XCTFail("not stored: \(outcome)") }
    }

    func testARescindConsentWithAMatchingPurchaseIsFlaggedListedAndHandledOnce() throws {
        let store = try Store.inMemory()
        let intake = TestKit.intake(store)
        try ingest(intake, try purchaseBody())
        try ingest(intake, try rescindBody())
        XCTAssertEqual(try store.notifications.event(uuid: Self.rescindUUID)?.type, .rescindConsent)
        XCTAssertTrue(NotificationType.rescindConsent.isDocumented)

        // The feed row carries the badge and the app transaction.
        let row = try XCTUnwrap(try store.intakeLog.entries(limit: 10).first { $0.notificationUUID == Self.rescindUUID })
        XCTAssertEqual(row.detail, "consent withdrawn · app transaction 71134")
        XCTAssertEqual(row.originalTransactionId, "12345")

        // The subscription says it, with the app download's own facts.
        let report = try XCTUnwrap(try SubscriberReport.load(store: store, id: "12345", now: a))
        let sub = try XCTUnwrap(report.subscriptions.first)
        XCTAssertEqual(sub.consentWithdrawals.map(\.notificationUUID), [Self.rescindUUID])
        XCTAssertEqual(sub.appTransaction?.originalPlatform, "iOS")
        XCTAssertEqual(sub.appTransaction?.originalApplicationVersion, "1.1.2")
        XCTAssertEqual(sub.appTransaction?.environment, .production)
        XCTAssertEqual(sub.jsonObject()["consentWithdrawn"] as? Bool, true)
        // The app transaction id finds the customer too.
        XCTAssertEqual(try SubscriberReport.load(store: store, id: "71134", now: a)?.subscriptions.first?.state.originalTransactionId, "12345")
        XCTAssertEqual(try store.subscriptions.search("71134").map(\.state.originalTransactionId), ["12345"])

        // Listed until handled; handling is audited and happens once.
        var open = try ConsentWithdrawal.load(store: store, includeHandled: false)
        XCTAssertEqual(open.map(\.originalTransactionIds), [["12345"]])
        XCTAssertEqual(open.first?.appTransactionId, "71134")
        let ops = Operations(store: store, operatorName: "ana")
        XCTAssertThrowsError(try ops.markConsentHandled(Self.rescindUUID, reason: "  ")) { error in
            XCTAssertTrue("\(error)".contains("a reason is required"), "\(error)")
        }
        XCTAssertThrowsError(try ops.markConsentHandled("consent-buy", reason: "x")) { error in
            XCTAssertTrue("\(error)".contains("SUBSCRIBED/INITIAL_BUY, not a RESCIND_CONSENT"), "\(error)")
        }
        let entry = try ops.markConsentHandled(Self.rescindUUID, reason: "account closed, family told", now: a)
        XCTAssertEqual(entry.action, "consent_handled")
        let audit = try XCTUnwrap(try store.audit.entries(targets: [Self.rescindUUID]).last)
        XCTAssertEqual(audit.action, "consent_handled")
        XCTAssertEqual(audit.reason, "account closed, family told")
        XCTAssertEqual(audit.detail, "app transaction 71134; subscriptions 12345")
        open = try ConsentWithdrawal.load(store: store, includeHandled: false)
        XCTAssertTrue(open.isEmpty)
        XCTAssertEqual(try ConsentWithdrawal.load(store: store).first?.statusText,
                       "handled by ana \(DateText.minute(a)) UTC: account closed, family told")
        XCTAssertThrowsError(try ops.markConsentHandled(Self.rescindUUID, reason: "again", now: a + 1)) { error in
            XCTAssertTrue("\(error)".contains("already handled by ana"), "\(error)")
        }
    }

    /// A subscriber's detail reads only the withdrawals that may concern them, and finds the
    /// same ones as the plain definition over every withdrawal (`load`, then each one's
    /// subscriptions), for every set of subscriptions asked about: one whose app transaction
    /// names a withdrawal, one named by none, several at once, none.
    func testTheWithdrawalsConcerningSomeSubscriptionsAreTheOnesEveryWithdrawalWouldGive() throws {
        let store = try Store.inMemory()
        let intake = TestKit.intake(store)
        // w-702 arrives before the purchase it concerns: intake finds no subscription for it,
        // and only its app transaction ties it to 7000000000000002.
        try ingest(intake, try examples.rescindBody(uuid: "w-702", app: try appTransaction(["appTransactionId": "702"])))
        for (otid, app) in [("7000000000000001", "701"), ("7000000000000002", "702"), ("7000000000000003", nil as String?)] {
            try ingest(intake, try examples.purchaseBody(uuid: "buy-\(otid)", originalTransactionId: otid, appTransactionId: app))
        }
        for (uuid, app) in [("w-701", "701"), ("w-799", "799"), ("w-701-again", "701")] {
            try ingest(intake, try examples.rescindBody(uuid: uuid, app: try appTransaction(["appTransactionId": app])))
        }
        XCTAssertNil(try store.notifications.event(uuid: "w-702")?.originalTransactionId, "found for no subscription")
        let every = try ConsentWithdrawal.load(store: store)
        XCTAssertEqual(every.count, 4)
        let cases: [(Set<String>, Set<String>)] = [
            (["7000000000000001"], ["w-701", "w-701-again"]), (["7000000000000002"], ["w-702"]), (["7000000000000003"], []),
            (["7000000000000001", "7000000000000002"], ["w-701", "w-701-again", "w-702"]), ([], []), (["9"], []),
        ]
        for (asked, expected) in cases {
            let plain = every.filter { !Set($0.originalTransactionIds).isDisjoint(with: asked) }
            let concerning = try ConsentWithdrawal.concerning(asked, store: store)
            XCTAssertEqual(Set(concerning.map(\.notificationUUID)), expected, "\(asked)")
            XCTAssertEqual(concerning.map(\.notificationUUID), plain.map(\.notificationUUID), "\(asked): in the same order")
            XCTAssertEqual(concerning.map(\.originalTransactionIds), plain.map(\.originalTransactionIds), "\(asked)")
        }
    }

    func testATamperedOrForeignAppTransactionIsRefusedAndQuarantined() throws {
        let store = try Store.inMemory()
        let intake = TestKit.intake(store)
        // The payload segment changed after signing: the signature no longer covers it.
        let genuine = try Examples.sign(try appTransaction())
        var parts = genuine.split(separator: ".").map(String.init)
        parts[1] = Base64URL.encode(TestKit.json(try appTransaction(["appTransactionId": "99999"])))
        let tampered = try intake.ingest(try rescindBody(signedApp: parts.joined(separator: ".")), source: "test")
        guard case .rejected(let reason, _) = tampered else { return XCTFail("tampered app transaction accepted: \(tampered)") }
        XCTAssertTrue(reason.description.contains("signedAppTransactionInfo"), "\(reason)")
        // Another app's download, validly signed.
        let foreign = try intake.ingest(try rescindBody(app: try appTransaction(["bundleId": "com.other.app"])), source: "test")
        guard case .rejected(let why, _) = foreign else { return XCTFail("foreign app transaction accepted: \(foreign)") }
        XCTAssertTrue(why.description.contains("signedAppTransactionInfo: bundleId com.other.app"), "\(why)")
        // Another app Apple id in Production.
        let otherId = try intake.ingest(try rescindBody(app: try appTransaction(["appAppleId": 42])), source: "test")
        guard case .rejected(let idReason, _) = otherId else { return XCTFail("wrong appAppleId accepted: \(otherId)") }
        XCTAssertTrue(idReason.description.contains("appAppleId 42"), "\(idReason)")
        XCTAssertEqual(try store.quarantine.unresolvedCount(), 3)
        XCTAssertTrue(try ConsentWithdrawal.load(store: store).isEmpty)
    }

    func testARescindConsentNoStoredPurchaseMatchesIsResolvedAtApple() throws {
        let fixture = try RevalidationFixture()
        defer { fixture.tearDown() }
        let store = try fixture.openStore()
        try ingest(TestKit.intake(store), try rescindBody())
        var withdrawal = try XCTUnwrap(try ConsentWithdrawal.load(store: store).first)
        XCTAssertEqual(withdrawal.originalTransactionIds, [])
        XCTAssertEqual(try store.intakeLog.entries(limit: 5).first?.detail, "consent withdrawn · app transaction 71134 (no stored purchase)")

        // Apple's Get App Transaction Info answer (appTransactionInfoResponse.json's shape),
        // then the customer's statuses and history asked for by the appTransactionId.
        var response = try Examples.example("appTransactionInfoResponse")
        response["signedAppTransactionInfo"] = try Examples.sign(try appTransaction())
        fixture.server.route("GET", "/prod/inApps/v1/transactions/appTransactions/71134", .json(response))
        fixture.answer("71134", statuses: RevalidationFixture.statuses([(1, try purchase(), nil)]),
                       history: RevalidationFixture.history([try purchase()]))
        let found = try XCTUnwrap(try fixture.revalidator().resolveAppTransaction("71134", reason: "consent"))
        XCTAssertEqual(found.appTransaction.originalPlatform, "iOS")
        XCTAssertEqual(found.originalTransactionIds, ["12345"])

        withdrawal = try XCTUnwrap(try ConsentWithdrawal.load(store: store).first)
        XCTAssertEqual(withdrawal.originalTransactionIds, ["12345"])
        let sub = try XCTUnwrap(try SubscriberReport.load(store: store, id: "12345", now: a)?.subscriptions.first)
        XCTAssertEqual(sub.consentWithdrawals.map(\.notificationUUID), [Self.rescindUUID])
        XCTAssertTrue(try store.audit.entries(targets: ["71134"]).contains { $0.action == "app_transaction_lookup" && $0.outcome.contains("subscriptions 12345") })
    }

    func testAnAppTransactionAppleDoesNotHaveOrThatIsTamperedIsNotTaken() throws {
        let fixture = try RevalidationFixture()
        defer { fixture.tearDown() }
        _ = try fixture.openStore()
        fixture.server.route("GET", "/prod/inApps/v1/transactions/appTransactions/71134",
                             RevalidationFixture.apiError(404, code: 4040019, message: "No AppTransaction exists for the customer."))
        fixture.server.route("GET", "/sandbox/inApps/v1/transactions/appTransactions/71134",
                             RevalidationFixture.apiError(404, code: 4040019, message: "No AppTransaction exists for the customer."))
        XCTAssertNil(try fixture.revalidator().resolveAppTransaction("71134"))

        let genuine = try Examples.sign(try appTransaction())
        var parts = genuine.split(separator: ".").map(String.init)
        parts[1] = Base64URL.encode(TestKit.json(try appTransaction(["originalPlatform": "macOS"])))
        fixture.server.route("GET", "/prod/inApps/v1/transactions/appTransactions/71135",
                             .json(["signedAppTransactionInfo": parts.joined(separator: ".")]))
        XCTAssertThrowsError(try fixture.revalidator().resolveAppTransaction("71135")) { error in
            XCTAssertTrue("\(error)".contains("app transaction info signedAppTransactionInfo"), "\(error)")
        }
        XCTAssertTrue(try fixture.openStore().audit.entries(targets: ["71135"]).contains { $0.outcome == "failed" })
    }
}

/// The same as a support agent meets it at the command line.
final class ConsentCommandTests: XCTestCase, RunsOnEveryEngine {
    let helper = ConsentExamples()

    func ingest(_ intake: Intake, _ body: Data) throws {
        let outcome = try intake.ingest(body, source: "test")
        guard case .stored = outcome else { return XCTFail("not stored: \(outcome)") }
    }

    func testShowConsentAndHandleAtTheCommandLine() throws {
        let fixture = try RevalidationFixture()
        defer { fixture.tearDown() }
        let store = try fixture.openStore()
        try ingest(TestKit.intake(store), try helper.purchaseBody())
        try ingest(TestKit.intake(store), try helper.rescindBody())
        let uuid = ConsentWithdrawalTests.rescindUUID

        let shown = try fixture.subdesk(["show", "12345"] + fixture.commandLineFlagsWithoutKey)
        XCTAssertEqual(shown.status, 0, shown.output)
        XCTAssertTrue(shown.output.contains("Consent  WITHDRAWN \(DateText.minute(TestKit.anchor - TestKit.day)) UTC (RESCIND_CONSENT \(uuid)) · open"), shown.output)
        XCTAssertTrue(shown.output.contains("App      app transaction 71134 · iOS · downloaded"), shown.output)
        // The app transaction id finds the same customer, locally.
        let byApp = try fixture.subdesk(["show", "71134"] + fixture.commandLineFlagsWithoutKey)
        XCTAssertEqual(byApp.status, 0, byApp.output)
        XCTAssertTrue(byApp.output.contains("Subscription 12345"), byApp.output)

        let listed = try fixture.subdesk(["consent"] + fixture.commandLineFlagsWithoutKey)
        XCTAssertEqual(listed.status, 0, listed.output)
        XCTAssertTrue(listed.output.contains("\(uuid)  consent withdrawn  app transaction 71134 · iOS"), listed.output)
        XCTAssertTrue(listed.output.contains("subscriptions 12345  [open]"), listed.output)

        let refused = try fixture.subdesk(["consent", "handle", uuid] + fixture.commandLineFlagsWithoutKey)
        XCTAssertEqual(refused.status, 2, refused.output)
        XCTAssertTrue(refused.output.contains("a reason is required"), refused.output)
        let handled = try fixture.subdesk(["consent", "handle", uuid, "--reason", "account closed", "--operator", "ana"] + fixture.commandLineFlagsWithoutKey)
        XCTAssertEqual(handled.status, 0, handled.output)
        XCTAssertTrue(handled.output.contains("marked handled by ana"), handled.output)
        let audit = try fixture.subdesk(["audit", "--db", fixture.storePath])
        XCTAssertTrue(audit.output.contains("consent_handled"), audit.output)
        let after = try fixture.subdesk(["consent"] + fixture.commandLineFlagsWithoutKey)
        XCTAssertTrue(after.output.contains("no consent withdrawals to handle"), after.output)
        let all = try fixture.subdesk(["consent", "--all", "--json"] + fixture.commandLineFlagsWithoutKey)
        XCTAssertTrue(all.output.contains("\"handledBy\" : \"ana\"") || all.output.contains("\"handledBy\":\"ana\""), all.output)
    }

    func testShowAnAppTransactionIdTheStoreDoesNotKnowAsksApple() throws {
        let fixture = try RevalidationFixture()
        defer { fixture.tearDown() }
        _ = try fixture.openStore()
        var response = try AppleExamplesConformanceTests.example("appTransactionInfoResponse")
        response["signedAppTransactionInfo"] = try AppleExamplesConformanceTests.sign(try helper.appTransaction())
        fixture.server.route("GET", "/prod/inApps/v1/transactions/appTransactions/71134", .json(response))
        fixture.answer("71134", statuses: RevalidationFixture.statuses([(1, try helper.purchase(), nil)]),
                       history: RevalidationFixture.history([try helper.purchase()]))
        // Without the key nothing is asked: the id is unknown.
        let offline = try fixture.subdesk(["show", "71134"] + fixture.commandLineFlagsWithoutKey)
        XCTAssertEqual(offline.status, 2, offline.output)
        let shown = try fixture.subdesk(["show", "71134"] + fixture.commandLineFlags)
        XCTAssertEqual(shown.status, 0, shown.output)
        XCTAssertTrue(shown.output.contains("App      app transaction 71134 · iOS · downloaded"), shown.output)
        XCTAssertTrue(shown.output.contains("version 1.1.2 (now 1.2.3) · Production (from Apple)"), shown.output)
        XCTAssertTrue(shown.output.contains("Subscription 12345"), shown.output)
        XCTAssertEqual(fixture.server.requests("GET", "/prod/inApps/v1/transactions/appTransactions/71134").count, 1)
    }
}

/// Apple's examples made the demo app's, in Production, for both test classes.
struct ConsentExamples {
    typealias Examples = AppleExamplesConformanceTests
    let a = TestKit.anchor, day = TestKit.day

    /// An Apple example, dates shifted, made the demo app's, in Production.
    func example(_ name: String, _ changes: [String: Any] = [:], removing: [String] = []) throws -> [String: Any] {
        var o = Examples.shifted(try Examples.example(name)) as! [String: Any]
        for key in removing { o.removeValue(forKey: key) }
        if o["bundleId"] != nil { o["bundleId"] = ScenarioBuilder.demoBundleId }
        if o["appAppleId"] != nil { o["appAppleId"] = ScenarioBuilder.demoAppAppleId }
        if o["environment"] != nil { o["environment"] = "Production" }
        if o["receiptType"] != nil { o["receiptType"] = "Production" }
        for (k, v) in changes { o[k] = v }
        return o
    }

    /// Apple's example app transaction (71134: iOS, first downloaded at version 1.1.2).
    func appTransaction(_ changes: [String: Any] = [:]) throws -> [String: Any] { try example("appTransaction", changes) }

    /// Apple's example subscription purchase, bought from app transaction 71134, active.
    func purchase() throws -> [String: Any] {
        try example("signedTransaction", ["purchaseDate": a - 10 * day, "originalPurchaseDate": a - 10 * day,
                                          "expiresDate": a + 20 * day, "signedDate": a - 10 * day],
                    removing: ["revocationDate", "revocationReason", "isUpgraded", "advancedCommerceInfo",
                               "revocationType", "revocationPercentage"])
    }

    func purchaseBody() throws -> Data {
        var payload = try example("signedNotification", ["notificationType": "SUBSCRIBED", "subtype": "INITIAL_BUY",
                                                         "notificationUUID": "consent-buy", "signedDate": a - 10 * day])
        var data = payload["data"] as! [String: Any]
        data["bundleId"] = ScenarioBuilder.demoBundleId
        data["appAppleId"] = ScenarioBuilder.demoAppAppleId
        data["environment"] = "Production"
        data["signedTransactionInfo"] = try Examples.sign(try purchase())
        data.removeValue(forKey: "signedRenewalInfo")
        payload["data"] = data
        return TestKit.json(["signedPayload": try Examples.sign(payload)])
    }

    /// Apple's example RESCIND_CONSENT with its app transaction signed in, or `signedApp` as given.
    func rescindBody(app: [String: Any]? = nil, signedApp: String? = nil) throws -> Data {
        var payload = try example("signedRescindConsentNotification", ["signedDate": a - day])
        var appData = payload["appData"] as! [String: Any]
        appData["bundleId"] = ScenarioBuilder.demoBundleId
        appData["appAppleId"] = ScenarioBuilder.demoAppAppleId
        appData["environment"] = "Production"
        appData["signedAppTransactionInfo"] = try signedApp ?? Examples.sign(try app ?? appTransaction())
        payload["appData"] = appData
        return TestKit.json(["signedPayload": try Examples.sign(payload)])
    }

    /// A subscription bought from app transaction `appTransactionId` (none: the purchase names none).
    func purchaseBody(uuid: String, originalTransactionId otid: String, appTransactionId: String?) throws -> Data {
        var transaction = try purchase()
        transaction["transactionId"] = otid
        transaction["originalTransactionId"] = otid
        transaction["appTransactionId"] = appTransactionId
        if appTransactionId == nil { transaction.removeValue(forKey: "appTransactionId") }
        var payload = try example("signedNotification", ["notificationType": "SUBSCRIBED", "subtype": "INITIAL_BUY",
                                                         "notificationUUID": uuid, "signedDate": a - 10 * day])
        var data = payload["data"] as! [String: Any]
        data["bundleId"] = ScenarioBuilder.demoBundleId
        data["appAppleId"] = ScenarioBuilder.demoAppAppleId
        data["environment"] = "Production"
        data["signedTransactionInfo"] = try Examples.sign(transaction)
        data.removeValue(forKey: "signedRenewalInfo")
        payload["data"] = data
        return TestKit.json(["signedPayload": try Examples.sign(payload)])
    }

    /// Apple's example RESCIND_CONSENT as `uuid`, with `app` signed in.
    func rescindBody(uuid: String, app: [String: Any]) throws -> Data {
        var payload = try example("signedRescindConsentNotification", ["signedDate": a - day, "notificationUUID": uuid])
        var appData = payload["appData"] as! [String: Any]
        appData["bundleId"] = ScenarioBuilder.demoBundleId
        appData["appAppleId"] = ScenarioBuilder.demoAppAppleId
        appData["environment"] = "Production"
        appData["signedAppTransactionInfo"] = try Examples.sign(app)
        payload["appData"] = appData
        return TestKit.json(["signedPayload": try Examples.sign(payload)])
    }
}
