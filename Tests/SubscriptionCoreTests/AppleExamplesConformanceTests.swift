import Foundation
import XCTest
@testable import SubscriptionCore
import SubdeskTestKit

/// Apple's own example payloads (Fixtures/apple-models, from Apple's App Store Server
/// Library), signed with the test CA and nested as Apple nests them, then ingested: every
/// shape is accepted, every field Apple sends is visible in `show --json`'s report, and the
/// state is right. Adapted only as far as a test must: dates moved by one offset into the
/// test CA's validity, each notification given its own UUID (the examples share one), and
/// the policy set to Apple's example app (com.example, LocalTesting allowed).
final class AppleExamplesConformanceTests: XCTestCase, RunsOnEveryEngine {
    static let directory: URL = VerificationTests.fixtureDirectory.deletingLastPathComponent().appendingPathComponent("apple-models")
    /// Apple's examples are signed 2023-10-24; the test CA's chain is checked at signedDate.
    static let shift: Millis = TestKit.anchor - 1_698_148_900_000

    static func example(_ name: String) throws -> [String: Any] {
        let data = try Data(contentsOf: directory.appendingPathComponent(name + ".json"))
        return try XCTUnwrap(try JSONSerialization.jsonObject(with: data) as? [String: Any], name)
    }

    /// Every numeric field whose name ends in `Date`, at any depth, moved by `shift`.
    static func shifted(_ value: Any, key: String? = nil) -> Any {
        if let d = value as? [String: Any] { return Dictionary(uniqueKeysWithValues: d.map { ($0.key, shifted($0.value, key: $0.key)) }) }
        if let a = value as? [Any] { return a.map { shifted($0) } }
        if let key, key.hasSuffix("Date"), let n = value as? NSNumber, !(value is Bool) { return n.int64Value + shift }
        return value
    }

    static func sign(_ object: Any) throws -> String {
        try TestKit.signer.sign(payload: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]))
    }

    static var policy: IntakePolicy {
        var p = IntakePolicy(bundleId: "com.example")
        p.allowedTestEnvironments = ["LocalTesting"]
        return p
    }

    /// A notification example with its nested JWS fields filled with Apple's examples, signed.
    static func notification(_ name: String, uuid: String, nest: [String: String] = [:]) throws -> Data {
        var payload = shifted(try example(name)) as! [String: Any]
        payload["notificationUUID"] = uuid
        for container in ["data", "appData"] {
            guard var inner = payload[container] as? [String: Any] else { continue }
            for (field, exampleName) in nest where inner[field] != nil {
                inner[field] = try sign(shifted(try example(exampleName)))
            }
            payload[container] = inner
        }
        return TestKit.json(["signedPayload": try sign(payload)])
    }

    /// `expected` is contained in `actual`: every key, at every depth, with the same value.
    func assertContains(_ actual: Any?, _ expected: Any, _ path: String, file: StaticString = #filePath, line: UInt = #line) {
        switch expected {
        case let e as [String: Any]:
            guard let a = actual as? [String: Any] else { return XCTFail("\(path): not an object in the report", file: file, line: line) }
            for (k, v) in e { assertContains(a[k], v, path + "." + k, file: file, line: line) }
        case let e as [Any]:
            guard let a = actual as? [Any], a.count == e.count else { return XCTFail("\(path): array differs", file: file, line: line) }
            for (i, v) in e.enumerated() { assertContains(a[i], v, "\(path)[\(i)]", file: file, line: line) }
        default:
            XCTAssertEqual(actual.map { "\($0)" }, "\(expected)", "\(path) is not visible as Apple sent it", file: file, line: line)
        }
    }

    func testEveryNotificationTransactionAndRenewalExampleIsAcceptedAndFullyVisible() throws {
        let store = try Store.inMemory()
        let intake = TestKit.intake(store, policy: Self.policy)
        let nest = ["signedTransactionInfo": "signedTransaction", "signedRenewalInfo": "signedRenewalInfo",
                    "signedAppTransactionInfo": "appTransaction"]
        let bodies: [(String, Data)] = [
            ("signedNotification", try Self.notification("signedNotification", uuid: "ex-subscribed", nest: nest)),
            ("signedConsumptionRequestNotification", try Self.notification("signedConsumptionRequestNotification", uuid: "ex-consumption", nest: nest)),
            ("signedSummaryNotification", try Self.notification("signedSummaryNotification", uuid: "ex-summary")),
            ("signedExternalPurchaseTokenNotification", try Self.notification("signedExternalPurchaseTokenNotification", uuid: "ex-ept")),
            ("signedExternalPurchaseTokenSandboxNotification", try Self.notification("signedExternalPurchaseTokenSandboxNotification", uuid: "ex-ept-sandbox")),
            ("signedRescindConsentNotification", try Self.notification("signedRescindConsentNotification", uuid: "ex-rescind", nest: nest)),
        ]
        for (name, body) in bodies {
            let outcome = try intake.ingest(body, source: name)
            guard case .stored = outcome else { XCTFail("\(name): \(outcome)"); continue }
        }
        XCTAssertEqual(try store.notifications.count(), bodies.count)
        XCTAssertEqual(try store.quarantine.unresolvedCount(), 0)

        // Environments from wherever the shape keeps them.
        XCTAssertEqual(try store.notifications.event(uuid: "ex-ept")?.environment, "Production")
        XCTAssertEqual(try store.notifications.event(uuid: "ex-ept-sandbox")?.environment, "Sandbox")
        XCTAssertEqual(try store.notifications.event(uuid: "ex-summary")?.environment, "LocalTesting")
        XCTAssertEqual(try store.notifications.event(uuid: "ex-summary")?.productId, "com.example.product")
        // The feed says what a summary counted and why a consumption request was made.
        let log = try store.intakeLog.entries(limit: 20)
        XCTAssertEqual(log.first { $0.notificationUUID == "ex-summary" }?.detail, "extension: 5 succeeded, 2 failed · CAN, USA, MEX")
        XCTAssertEqual(log.first { $0.notificationUUID == "ex-consumption" }?.detail, "reason UNINTENDED_PURCHASE")
        XCTAssertEqual(log.first { $0.notificationUUID == "ex-ept" }?.detail, "token b2158121-7af9-49d4-9561-1f588205523e")
        // RESCIND_CONSENT lands on the subscription whose transaction names its app transaction (71134).
        XCTAssertEqual(try store.notifications.event(uuid: "ex-rescind")?.originalTransactionId, "12345")

        let report = try XCTUnwrap(try SubscriberReport.load(store: store, id: "12345", now: TestKit.anchor))
        let json = report.jsonObject()
        let subscription = try XCTUnwrap((json["subscriptions"] as? [[String: Any]])?.first)
        // The example transaction is revoked (revocationDate) and was upgraded: Apple's status 5.
        XCTAssertEqual(subscription["statusCode"] as? Int, 5)
        XCTAssertEqual(subscription["entitled"] as? Bool, false)
        let transaction = try XCTUnwrap((subscription["transactions"] as? [[String: Any]])?.first)
        assertContains(transaction["apple"], Self.shifted(try Self.example("signedTransaction")), "transaction")
        XCTAssertEqual(transaction["appTransactionId"] as? String, "71134")
        let renewal = try XCTUnwrap(subscription["renewalInfo"] as? [String: Any])
        assertContains(renewal["apple"], Self.shifted(try Self.example("signedRenewalInfo")), "renewalInfo")
        let notifications = try XCTUnwrap(subscription["notifications"] as? [[String: Any]])
        XCTAssertEqual(Set(notifications.compactMap { $0["notificationUUID"] as? String }), ["ex-subscribed", "ex-consumption", "ex-rescind"])
        for (uuid, name) in [("ex-subscribed", "signedNotification"), ("ex-consumption", "signedConsumptionRequestNotification"),
                             ("ex-rescind", "signedRescindConsentNotification")] {
            var expected = Self.shifted(try Self.example(name)) as! [String: Any]
            expected["notificationUUID"] = uuid
            // Nested JWS fields appear decoded: compare them with the examples they were made from.
            for container in ["data", "appData"] {
                guard var inner = expected[container] as? [String: Any] else { continue }
                for (field, exampleName) in nest where inner[field] != nil { inner[field] = Self.shifted(try Self.example(exampleName)) }
                expected[container] = inner
            }
            assertContains(notifications.first { $0["notificationUUID"] as? String == uuid }?["apple"], expected, uuid)
        }
        // Notifications about no subscription keep every field too.
        for (uuid, name) in [("ex-summary", "signedSummaryNotification"), ("ex-ept", "signedExternalPurchaseTokenNotification")] {
            var expected = Self.shifted(try Self.example(name)) as! [String: Any]
            expected["notificationUUID"] = uuid
            let stored = try XCTUnwrap(try store.notifications.find(uuid: uuid))
            assertContains(ApplePayloads.notificationObject(body: stored.body), expected, uuid)
        }
    }

    /// A validly signed payload in a shape this subdesk does not know is Apple's: kept, not refused.
    func testAValidlySignedUnknownShapeIsKept() throws {
        let store = try Store.inMemory()
        let payload: [String: Any] = ["notificationType": "SOMETHING_NEW", "notificationUUID": "ex-new", "version": "2.0",
                                      "signedDate": TestKit.anchor, "somethingNew": ["field": 1]]
        let outcome = try TestKit.intake(store, policy: Self.policy).ingest(TestKit.json(["signedPayload": try Self.sign(payload)]))
        guard case .stored(let e) = outcome else { return XCTFail("\(outcome)") }
        XCTAssertEqual(e.type.rawValue, "SOMETHING_NEW")
        XCTAssertNil(e.environment)
    }

    /// Apple's response examples with malformed fields are refused whole.
    func testMalformedResponseExamplesAreRefused() throws {
        let appleId = try Data(contentsOf: Self.directory.appendingPathComponent("transactionHistoryResponseWithMalformedAppAppleId.json"))
        XCTAssertThrowsError(try TransactionHistoryResponse(json: JSONFields(data: appleId, path: "history"))) {
            XCTAssertTrue("\($0)".contains("history.appAppleId"), "\($0)")
        }
        let environment = try Data(contentsOf: Self.directory.appendingPathComponent("transactionHistoryResponseWithMalformedEnvironment.json"))
        let response = try TransactionHistoryResponse(json: JSONFields(data: environment, path: "history"))
        XCTAssertEqual(Self.policy.environmentProblem(response.environment, field: "history")?.description, "history: unknown environment LocalTestingxxx")
        // The well-formed one passes the same checks.
        let good = try Data(contentsOf: Self.directory.appendingPathComponent("transactionHistoryResponse.json"))
        let fine = try TransactionHistoryResponse(json: JSONFields(data: good, path: "history"))
        XCTAssertNil(Self.policy.environmentProblem(fine.environment, field: "history"))
    }
}
