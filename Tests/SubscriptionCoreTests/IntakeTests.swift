import Foundation
import XCTest
@testable import SubscriptionCore
import SubdeskScenarios
import SubdeskTestKit

/// Intake end to end: decode, verify, check policy, dedupe, store or quarantine.
final class IntakeTests: XCTestCase, RunsOnEveryEngine {
    var store: Store!
    var intake: Intake!

    override func setUpWithError() throws {
        store = try Store.inMemory()
        intake = TestKit.intake(store)
    }

    /// Every (type, subtype) pair Apple documents, plus types and subtypes it may add later.
    static let documentedPairs: [(String, String?)] = [
        ("SUBSCRIBED", "INITIAL_BUY"), ("SUBSCRIBED", "RESUBSCRIBE"), ("DID_RENEW", nil), ("DID_RENEW", "BILLING_RECOVERY"),
        ("DID_CHANGE_RENEWAL_PREF", "UPGRADE"), ("DID_CHANGE_RENEWAL_PREF", "DOWNGRADE"), ("DID_CHANGE_RENEWAL_PREF", nil),
        ("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_ENABLED"), ("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED"),
        ("OFFER_REDEEMED", "INITIAL_BUY"), ("OFFER_REDEEMED", "RESUBSCRIBE"), ("OFFER_REDEEMED", "UPGRADE"),
        ("OFFER_REDEEMED", "DOWNGRADE"), ("OFFER_REDEEMED", nil), ("DID_FAIL_TO_RENEW", nil),
        ("DID_FAIL_TO_RENEW", "GRACE_PERIOD"), ("GRACE_PERIOD_EXPIRED", nil), ("EXPIRED", "VOLUNTARY"),
        ("EXPIRED", "BILLING_RETRY"), ("EXPIRED", "PRICE_INCREASE"), ("EXPIRED", "PRODUCT_NOT_FOR_SALE"),
        ("PRICE_INCREASE", "PENDING"), ("PRICE_INCREASE", "ACCEPTED"), ("REFUND", nil), ("REFUND_DECLINED", nil),
        ("REFUND_REVERSED", nil), ("CONSUMPTION_REQUEST", nil), ("RENEWAL_EXTENDED", nil),
        ("RENEWAL_EXTENSION", "SUMMARY"), ("RENEWAL_EXTENSION", "FAILURE"), ("REVOKE", nil), ("TEST", nil),
        ("EXTERNAL_PURCHASE_TOKEN", "UNREPORTED"), ("ONE_TIME_CHARGE", nil),
        ("A_TYPE_APPLE_ADDS_LATER", "AND_A_NEW_SUBTYPE"),
    ]

    func testEveryDocumentedTypeAndSubtypeIsDecodedAndStored() throws {
        for (index, (type, subtype)) in Self.documentedPairs.enumerated() {
            let uuid = "00000000-0000-4000-8000-\(String(format: "%012d", index))"
            var transaction: [String: Any]? = TestKit.transaction(id: "20000009000001\(String(format: "%02d", index))")
            var renewal: [String: Any]? = TestKit.renewal()
            var extra: [String: Any] = [:]
            switch type {
            case "TEST":
                transaction = nil; renewal = nil
            case "RENEWAL_EXTENSION":
                transaction = nil; renewal = nil
                extra["summary"] = ["requestIdentifier": "r-1", "environment": "Production", "appAppleId": ScenarioBuilder.demoAppAppleId,
                                    "bundleId": ScenarioBuilder.demoBundleId, "productId": "app.monthly",
                                    "storefrontCountryCodes": ["USA"], "succeededCount": 10, "failedCount": 1]
            case "EXTERNAL_PURCHASE_TOKEN":
                transaction = nil; renewal = nil
                extra["externalPurchaseToken"] = ["externalPurchaseId": "x-1", "tokenCreationDate": TestKit.anchor,
                                                  "appAppleId": ScenarioBuilder.demoAppAppleId, "bundleId": ScenarioBuilder.demoBundleId]
            case "ONE_TIME_CHARGE", "CONSUMPTION_REQUEST":
                transaction = TestKit.transaction(id: "30000009000001\(index)", original: "30000009000001\(index)",
                                                  product: "app.coins", expires: nil, extra: ["type": "Consumable"])
                renewal = nil
            default: break
            }
            let body = TestKit.body(type: type, subtype: subtype, uuid: uuid, transaction: transaction, renewal: renewal,
                                    extraPayload: extra)
            let outcome = try intake.ingest(body)
            guard case .stored(let event) = outcome else {
                XCTFail("\(type)/\(subtype ?? "-") was not stored: \(outcome)")
                continue
            }
            XCTAssertEqual(event.type.rawValue, type)
            XCTAssertEqual(event.subtype?.rawValue, subtype)
            let stored = try XCTUnwrap(try store.notifications.find(uuid: uuid), "\(type) not in the store")
            XCTAssertEqual(stored.event.type.rawValue, type)
            XCTAssertEqual(stored.event.subtype?.rawValue, subtype)
            XCTAssertEqual(stored.body, body, "the raw body is kept byte for byte")
        }
        XCTAssertEqual(try store.notifications.count(), Self.documentedPairs.count)
        XCTAssertEqual(try store.quarantine.unresolvedCount(), 0)
        // A consumable is kept as a transaction but is not a subscription.
        let oneTime = Self.documentedPairs.firstIndex { $0.0 == "ONE_TIME_CHARGE" }!
        XCTAssertEqual(try store.transactions.find(id: "30000009000001\(oneTime)")?.productId, "app.coins")
        XCTAssertNil(try store.subscriptions.find(originalTransactionId: "30000009000001\(oneTime)"))
    }

    func testEveryTransactionAndRenewalFieldIsDecoded() throws {
        let t = TestKit.transaction(extra: [
            "webOrderLineItemId": "2000000012345", "subscriptionGroupIdentifier": "21000001", "quantity": 1,
            "offerType": 1, "offerIdentifier": "intro-7d", "offerDiscountType": "FREE_TRIAL",
            "revocationDate": TestKit.anchor - 2 * TestKit.day, "revocationReason": 1, "isUpgraded": true,
            "inAppOwnershipType": "FAMILY_SHARED", "transactionReason": "RENEWAL", "price": 12990, "currency": "EUR",
            "appAccountToken": "7d1b2c3a-0000-4000-8000-000000000001", "storefront": "FRA",
            "expiresDate": 1_780_272_000_123.5,
        ])
        let r = TestKit.renewal(extra: [
            "autoRenewProductId": "app.yearly", "autoRenewStatus": 0, "expirationIntent": 3,
            "isInBillingRetryPeriod": true, "gracePeriodExpiresDate": TestKit.anchor + 5 * TestKit.day,
            "priceIncreaseStatus": 0, "offerType": 2, "offerIdentifier": "promo", "renewalDate": TestKit.anchor,
            "renewalPrice": 14990, "currency": "EUR",
        ])
        guard case .stored = try intake.ingest(TestKit.body(type: "DID_RENEW", transaction: t, renewal: r)) else {
            return XCTFail("not stored")
        }
        let stored = try XCTUnwrap(try store.transactions.find(id: "2000000900000001"))
        XCTAssertEqual(stored.expiresDate, 1_780_272_000_123, "fractional Xcode dates are read, not refused")
        XCTAssertEqual(stored.offerType, .introductory)
        XCTAssertEqual(stored.offerIdentifier, "intro-7d")
        XCTAssertEqual(stored.offerDiscountType, "FREE_TRIAL")
        XCTAssertEqual(stored.revocationDate, TestKit.anchor - 2 * TestKit.day)
        XCTAssertEqual(stored.revocationReason, .issueInApp)
        XCTAssertTrue(stored.isUpgraded)
        XCTAssertEqual(stored.ownershipType, .familyShared)
        XCTAssertEqual(stored.transactionReason, .renewal)
        XCTAssertEqual(stored.price, 12990)
        XCTAssertEqual(stored.currency, "EUR")
        XCTAssertEqual(stored.environment, .production)
        XCTAssertEqual(stored.appAccountToken, "7d1b2c3a-0000-4000-8000-000000000001")
        XCTAssertEqual(stored.webOrderLineItemId, "2000000012345")
        let renewal = try XCTUnwrap(try store.renewals.find(originalTransactionId: "2000000900000001"))
        XCTAssertEqual(renewal.autoRenewProductId, "app.yearly")
        XCTAssertFalse(renewal.autoRenewStatus)
        XCTAssertEqual(renewal.expirationIntent, 3)
        XCTAssertTrue(renewal.isInBillingRetryPeriod)
        XCTAssertEqual(renewal.gracePeriodExpiresDate, TestKit.anchor + 5 * TestKit.day)
        XCTAssertEqual(renewal.priceIncreaseStatus, 0)
        XCTAssertEqual(renewal.offerType, .promotional)
        XCTAssertEqual(renewal.renewalPrice, 14990)
        // The subscriber is found by the appAccountToken.
        XCTAssertNotNil(try store.subscribers.lookup("7d1b2c3a-0000-4000-8000-000000000001"))
    }

    // MARK: Refusals

    func assertRejected(_ body: Data, policy: IntakePolicy? = nil, containing expected: String,
                        file: StaticString = #filePath, line: UInt = #line) throws {
        if let policy { intake.policy = policy }
        let before = try store.quarantine.unresolvedCount()
        let notifications = try store.notifications.count()
        let subscriptions = try store.subscriptions.count()
        let outcome = try intake.ingest(body, source: "test")
        guard case .rejected(let reason, let id) = outcome else {
            return XCTFail("expected a rejection containing '\(expected)', got \(outcome)", file: file, line: line)
        }
        XCTAssertTrue(reason.description.contains(expected), "reason '\(reason)' does not name '\(expected)'", file: file, line: line)
        XCTAssertEqual(try store.quarantine.unresolvedCount(), before + 1, file: file, line: line)
        let kept = try XCTUnwrap(try store.quarantine.entries(limit: 1).first, file: file, line: line)
        XCTAssertEqual(kept.id, id, file: file, line: line)
        // Kept byte for byte; a body over the size limit keeps its first 64 KiB and its true length.
        let expectedBody = body.count > intake.policy.maxBodyBytes ? body.prefix(Intake.keptPrefixBytes) : body
        XCTAssertEqual(kept.body, expectedBody, "the rejected body is kept byte for byte", file: file, line: line)
        XCTAssertEqual(kept.bodyBytes, body.count, file: file, line: line)
        XCTAssertEqual(kept.reason, reason.description, file: file, line: line)
        XCTAssertEqual(kept.kind, reason.kind, file: file, line: line)
        XCTAssertEqual(try store.notifications.count(), notifications, "nothing stored", file: file, line: line)
        XCTAssertEqual(try store.subscriptions.count(), subscriptions, "no state written", file: file, line: line)
        intake.policy = TestKit.policy
    }

    /// The body fast path's byte check agrees with the plain table for every byte value,
    /// wherever it stands in a 32-byte block or in the tail after the last block.
    func testBase64URLCheckAgreesWithTheTableForEveryByte() {
        let allowed = Set(Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.".utf8))
        for byte in 0...255 {
            for (length, position) in [(1, 0), (31, 30), (32, 0), (32, 31), (33, 32), (64, 17), (100, 99), (100, 64)] {
                var bytes = [UInt8](repeating: UInt8(ascii: "A"), count: length)
                bytes[position] = UInt8(byte)
                let checked = bytes.withUnsafeBufferPointer { JWSBytes.isBase64URLOrDots($0) }
                XCTAssertEqual(checked, allowed.contains(UInt8(byte)), "byte \(byte) at \(position) of \(length)")
            }
        }
    }

    func testTamperedSignatureIsRefused() throws {
        let body = TestKit.body(type: "DID_RENEW")
        var text = String(decoding: body, as: UTF8.self)
        // Alter one character of the payload segment after signing.
        let parts = text.components(separatedBy: ".")
        var payload = Array(parts[1])
        payload[10] = payload[10] == "A" ? "B" : "A"
        text = ([parts[0], String(payload)] + parts[2...]).joined(separator: ".")
        try assertRejected(Data(text.utf8), containing: "signedPayload:")
    }

    func testSignatureByAnotherKeyIsRefused() throws {
        let other = TestKit.fixtureSigner(leaf: "test-ca/leaf.der", intermediate: "test-ca/intermediate.der", key: "other-key.pem")
        try assertRejected(TestKit.body(type: "DID_RENEW", signer: other), containing: "signedPayload: ES256 signature does not match")
    }

    func testChainToAnotherRootIsRefused() throws {
        let other = TestKit.fixtureSigner(leaf: "other-ca/leaf.der", intermediate: "other-ca/intermediate.der",
                                          root: "other-ca/root.der", key: "other-ca/leaf-key.pem")
        try assertRejected(TestKit.body(type: "DID_RENEW", signer: other),
                           containing: "signedPayload: certificate chain does not lead to a configured root")
    }

    func testMissingMarkerOIDsAreRefused() throws {
        let noLeafOID = TestKit.fixtureSigner(leaf: "leaf-without-oid.der", intermediate: "test-ca/intermediate.der")
        try assertRejected(TestKit.body(type: "DID_RENEW", signer: noLeafOID),
                           containing: "signedPayload: x5c[0] lacks OID 1.2.840.113635.100.6.11.1")
        let noIntermediateOID = TestKit.fixtureSigner(leaf: "leaf-under-intermediate-without-oid.der",
                                                      intermediate: "intermediate-without-oid.der")
        try assertRejected(TestKit.body(type: "DID_RENEW", signer: noIntermediateOID),
                           containing: "signedPayload: x5c[1] lacks OID 1.2.840.113635.100.6.2.1")
    }

    func testNestedTransactionSignedByAnotherChainIsRefused() throws {
        let other = TestKit.fixtureSigner(leaf: "other-ca/leaf.der", intermediate: "other-ca/intermediate.der",
                                          root: "other-ca/root.der", key: "other-ca/leaf-key.pem")
        try assertRejected(TestKit.body(type: "DID_RENEW", nestedSigner: other),
                           containing: "signedTransactionInfo: certificate chain does not lead to a configured root")
    }

    func testExpiredCertificateAtSignedDateIsRefused() throws {
        let expired = TestKit.fixtureSigner(leaf: "leaf-expired-2021.der", intermediate: "test-ca/intermediate.der")
        try assertRejected(TestKit.body(type: "DID_RENEW", signer: expired), containing: "expired at signedDate")
    }

    func testWrongBundleIdIsRefused() throws {
        try assertRejected(TestKit.body(type: "DID_RENEW", bundleId: "com.someone.else"),
                           containing: "signedPayload: bundleId com.someone.else is not the configured com.example.subdesk.demo")
        let t = TestKit.transaction(bundleId: "com.someone.else")
        try assertRejected(TestKit.body(type: "DID_RENEW", transaction: t),
                           containing: "signedTransactionInfo: bundleId com.someone.else is not the configured")
    }

    func testWrongEnvironmentIsRefused() throws {
        var production = TestKit.policy
        production.environment = .production
        try assertRejected(TestKit.body(type: "DID_RENEW", environment: "Sandbox",
                                        transaction: TestKit.transaction(environment: "Sandbox"),
                                        renewal: TestKit.renewal(environment: "Sandbox")),
                           policy: production, containing: "signedPayload: environment Sandbox is not the configured Production")
        try assertRejected(TestKit.body(type: "DID_RENEW", environment: "Xcode"),
                           containing: "environment Xcode is never accepted unless explicitly allowed")
        try assertRejected(TestKit.body(type: "DID_RENEW", transaction: TestKit.transaction(environment: "Sandbox")),
                           containing: "signedTransactionInfo: environment Sandbox differs from the notification's Production")
    }

    func testXcodeEnvironmentAcceptedOnlyWhenAllowed() throws {
        var policy = TestKit.policy
        policy.allowedTestEnvironments = ["Xcode"]
        intake.policy = policy
        let body = TestKit.body(type: "DID_RENEW", environment: "Xcode", transaction: TestKit.transaction(environment: "Xcode"),
                                renewal: TestKit.renewal(environment: "Xcode"))
        guard case .stored = try intake.ingest(body) else { return XCTFail("allowed Xcode body was not stored") }
    }

    func testProductionWithoutAppAppleIdIsRefused() throws {
        try assertRejected(TestKit.body(type: "DID_RENEW", appAppleId: nil),
                           containing: "signedPayload: Production notification lacks appAppleId")
        try assertRejected(TestKit.body(type: "DID_RENEW", appAppleId: 42), containing: "appAppleId 42 is not the configured 1234567890")
    }

    func testMalformedBodiesAreRefusedWithTheirFault() throws {
        try assertRejected(Data(), containing: "body: empty")
        try assertRejected(Data("not json".utf8), containing: "body: not valid JSON")
        try assertRejected(Data("[1,2]".utf8), containing: "body: expected a JSON object")
        try assertRejected(Data("{\"x\":1}".utf8), containing: "neither a V2 notification")
        try assertRejected(Data("{\"signedPayload\":\"a.b\"}".utf8), containing: "signedPayload: not a JWS (expected 3 segments, found 2)")
        try assertRejected(Data("{\"signedPayload\":\"a.b.c.d\"}".utf8), containing: "found 4")
        try assertRejected(Data("{\"signedPayload\":42}".utf8), containing: "body.signedPayload: expected a string")
        try assertRejected(Data(repeating: 32, count: 2 << 20), containing: "over the 1048576-byte limit")
    }

    func testDatesOutOfRangeAreRefused() throws {
        let t = TestKit.transaction(extra: ["expiresDate": 1e20])
        try assertRejected(TestKit.body(type: "DID_RENEW", transaction: t), containing: "signedTransactionInfo.expiresDate: date")
    }

    // MARK: Duplicates and ordering

    func testDuplicateChangesNothing() throws {
        let body = TestKit.body(type: "SUBSCRIBED", subtype: "INITIAL_BUY", uuid: "dup-1")
        guard case .stored = try intake.ingest(body) else { return XCTFail("first copy not stored") }
        let before = try store.subscriptions.find(originalTransactionId: "2000000900000001")
        XCTAssertEqual(try intake.ingest(body), .duplicate(notificationUUID: "dup-1"))
        XCTAssertEqual(try intake.ingest(body), .duplicate(notificationUUID: "dup-1"))
        XCTAssertEqual(try store.notifications.count(), 1)
        XCTAssertEqual(try store.subscriptions.find(originalTransactionId: "2000000900000001"), before)
        XCTAssertEqual(try store.intakeLog.entries().map(\.result), [.duplicate, .duplicate, .stored])
    }

    func testSameUUIDWithDifferentContentIsRefused() throws {
        guard case .stored = try intake.ingest(TestKit.body(type: "DID_RENEW", uuid: "same-uuid")) else { return XCTFail() }
        try assertRejectedKeepingState(TestKit.body(type: "EXPIRED", subtype: "VOLUNTARY", uuid: "same-uuid"),
                                       containing: "notificationUUID same-uuid is already stored with different content")
    }

    /// Apple may resend a body formatted otherwise (a trailing newline, white space, another key
    /// order): the same signedPayload under the same UUID is a duplicate, never a conflict.
    func testARedeliveryDifferingOnlyAroundTheSignedPayloadIsADuplicate() throws {
        let body = TestKit.body(type: "DID_RENEW", uuid: "ws-1")
        guard case .stored = try intake.ingest(body) else { return XCTFail("first copy not stored") }
        let jws = try XCTUnwrap(try JSONSerialization.jsonObject(with: body) as? [String: String])["signedPayload"]!
        let variants = [body + Data("\n".utf8), Data("\r\n  ".utf8) + body,
                        Data("{\n  \"signedPayload\" : \"\(jws)\"\n}\n".utf8),
                        Data("{\"signedPayload\":\"\(jws)\",\"note\":\"proxy added this\"}".utf8)]
        for variant in variants {
            XCTAssertEqual(try intake.ingest(variant), .duplicate(notificationUUID: "ws-1"),
                           String(decoding: variant.prefix(40), as: UTF8.self))
        }
        XCTAssertEqual(try store.notifications.count(), 1)
        XCTAssertEqual(try store.quarantine.unresolvedCount(), 0)
        XCTAssertEqual(try store.notifications.find(uuid: "ws-1")?.body, body, "the body first received is the one kept")
    }

    func testAV1RedeliveryFormattedOtherwiseIsADuplicate() throws {
        var policy = TestKit.policy
        policy.allowV1 = true
        intake.policy = policy
        let compact = Self.v1Body(type: "DID_RENEW")
        guard case .stored(let e) = try intake.ingest(compact) else { return XCTFail("V1 not stored") }
        let object = try JSONSerialization.jsonObject(with: compact)
        let pretty = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted])
        XCTAssertNotEqual(pretty, compact)
        XCTAssertEqual(try intake.ingest(pretty), .duplicate(notificationUUID: e.notificationUUID))
        XCTAssertEqual(try intake.ingest(compact + Data("\n".utf8)), .duplicate(notificationUUID: e.notificationUUID))
        guard case .stored = try intake.ingest(Self.v1Body(type: "CANCEL")) else { return XCTFail("another V1 body is new") }
        XCTAssertEqual(try store.notifications.count(), 2)
    }

    func assertRejectedKeepingState(_ body: Data, containing expected: String) throws {
        let before = try store.subscriptions.find(originalTransactionId: "2000000900000001")
        guard case .rejected(let reason, _) = try intake.ingest(body) else { return XCTFail("not rejected") }
        XCTAssertTrue(reason.description.contains(expected), "\(reason)")
        XCTAssertEqual(try store.subscriptions.find(originalTransactionId: "2000000900000001"), before)
    }

    func testOlderSignedDateNeverOverwritesNewerState() throws {
        let d = TestKit.day, a = TestKit.anchor
        let newer = TestKit.body(type: "DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_DISABLED", signed: a - 2 * d,
                                 renewal: TestKit.renewal(signed: a - 2 * d, extra: ["autoRenewStatus": 0]))
        let older = TestKit.body(type: "SUBSCRIBED", subtype: "INITIAL_BUY", signed: a - 10 * d,
                                 renewal: TestKit.renewal(signed: a - 10 * d))
        _ = try intake.ingest(newer)
        _ = try intake.ingest(older)
        XCTAssertEqual(try store.renewals.find(originalTransactionId: "2000000900000001")?.autoRenewStatus, false)
        XCTAssertEqual(try TestKit.state(store, "2000000900000001")?.autoRenewStatus, false)
    }

    // MARK: V1

    static func v1Body(type: String, password: String? = "s3cret", environment: String = "PROD",
                       expires: Millis = TestKit.anchor + 20 * TestKit.day) -> Data {
        var body: [String: Any] = [
            "notification_type": type, "environment": environment, "bid": ScenarioBuilder.demoBundleId,
            "auto_renew_status": "true", "auto_renew_product_id": "app.monthly",
            "unified_receipt": [
                "status": 0, "environment": environment == "PROD" ? "Production" : "Sandbox", "latest_receipt": "MIIT...",
                "latest_receipt_info": [[
                    "transaction_id": "1000000111", "original_transaction_id": "1000000111", "product_id": "app.monthly",
                    "purchase_date_ms": String(TestKit.anchor - 10 * TestKit.day), "expires_date_ms": String(expires),
                    "is_trial_period": "false", "is_in_intro_offer_period": "false", "quantity": "1",
                    "in_app_ownership_type": "PURCHASED",
                ]],
                "pending_renewal_info": [[
                    "original_transaction_id": "1000000111", "product_id": "app.monthly",
                    "auto_renew_product_id": "app.monthly", "auto_renew_status": "1",
                ]],
            ] as [String: Any],
        ]
        if let password { body["password"] = password }
        return TestKit.json(body)
    }

    func testV1IsRefusedUnlessAllowed() throws {
        try assertRejected(Self.v1Body(type: "INITIAL_BUY"), containing: "V1 bodies carry no signature")
    }

    func testV1PasswordMustMatchTheSharedSecret() throws {
        var policy = TestKit.policy
        policy.allowV1 = true
        policy.sharedSecret = "s3cret"
        try assertRejected(Self.v1Body(type: "INITIAL_BUY", password: "wrong"), policy: policy,
                           containing: "body.password: does not match the configured shared secret")
        intake.policy = policy
        guard case .stored(let e) = try intake.ingest(Self.v1Body(type: "INITIAL_BUY")) else { return XCTFail("V1 not stored") }
        XCTAssertEqual(e.version, 1)
        XCTAssertEqual(e.type, .initialBuy)
        let state = try XCTUnwrap(try TestKit.state(store, "1000000111"))
        XCTAssertEqual(state.status, .active)
        XCTAssertTrue(state.entitled)
        XCTAssertEqual(state.environment, "Production")
        XCTAssertEqual(try intake.ingest(Self.v1Body(type: "INITIAL_BUY")), .duplicate(notificationUUID: e.notificationUUID))
    }

    func testEveryV1TypeDecodes() throws {
        var policy = TestKit.policy
        policy.allowV1 = true
        intake.policy = policy
        for (i, type) in NotificationV1.documentedTypes.enumerated() {
            let outcome = try intake.ingest(Self.v1Body(type: type.rawValue, expires: TestKit.anchor + Millis(i) * 1000))
            guard case .stored(let e) = outcome else { XCTFail("\(type): \(outcome)"); continue }
            XCTAssertEqual(e.type, type)
        }
        try assertRejected(Self.v1Body(type: "DID_RENEW", environment: "Xcode"), policy: policy, containing: "environment Xcode")
    }
}
