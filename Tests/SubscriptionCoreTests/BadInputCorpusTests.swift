import Foundation
import XCTest
@testable import SubscriptionCore
import SubdeskTestKit

/// Hostile and broken bodies, each with the reason it must be refused. Every one is
/// quarantined with a reason naming the fault; none crashes intake, writes state, or
/// is accepted. Set SUBDESK_WRITE_CORPUS=DIR to write them out as fuzzing seeds.
final class BadInputCorpusTests: XCTestCase, RunsOnEveryEngine {
    struct Case { let name: String; let body: Data; let reason: String }

    static let leafKey = try! ES256.PrivateKey(pem: VerificationTests.fixture("test-ca/leaf-key.pem"))
    static let chain = [VerificationTests.testLeaf, VerificationTests.testIntermediate, VerificationTests.testRoot]

    static func b64(_ d: Data) -> String { Base64URL.encode(d) }
    static func text(_ s: String) -> Data { Data(s.utf8) }
    static func wrap(_ jws: String) -> Data { TestKit.json(["signedPayload": jws]) }

    /// A JWS with any header, signed by the test leaf key.
    static func jws(header: [String: Any], payload: Data) -> String {
        let input = b64(TestKit.json(header)) + "." + b64(payload)
        let sig = try! ES256.sign(message: Data(input.utf8), key: leafKey)
        return input + "." + b64(sig)
    }

    static var x5c: [String] { chain.map { $0.base64EncodedString() } }

    static func payload(_ mutate: (inout [String: Any]) -> Void = { _ in }) -> Data {
        let signed = TestKit.body(type: "DID_RENEW", uuid: "corpus-base")
        let jws = (try! JSONSerialization.jsonObject(with: signed) as! [String: Any])["signedPayload"] as! String
        let parts = jws.split(separator: ".")
        var object = try! JSONSerialization.jsonObject(with: Base64URL.decode(parts[1])!) as! [String: Any]
        mutate(&object)
        return TestKit.json(object)
    }

    static func signedBody(_ mutate: (inout [String: Any]) -> Void) -> Data {
        wrap(try! TestKit.signer.sign(payload: payload(mutate)))
    }

    static func nested(_ transaction: [String: Any]) -> Data {
        TestKit.body(type: "DID_RENEW", transaction: transaction)
    }

    static var cases: [Case] {
        let good = TestKit.body(type: "DID_RENEW", uuid: "corpus-good")
        let goodText = String(decoding: good, as: UTF8.self)
        let goodJWS = (try! JSONSerialization.jsonObject(with: good) as! [String: Any])["signedPayload"] as! String
        let seg = goodJWS.split(separator: ".").map(String.init)
        let other = TestKit.fixtureSigner(leaf: "other-ca/leaf.der", intermediate: "other-ca/intermediate.der",
                                          root: "other-ca/root.der", key: "other-ca/leaf-key.pem")
        var c: [Case] = []
        func add(_ name: String, _ body: Data, _ reason: String) { c.append(Case(name: name, body: body, reason: reason)) }

        // Shape
        add("empty", Data(), "body: empty")
        add("whitespace", text("   \n\t "), "body: not valid JSON")
        add("not-json", text("hello"), "body: not valid JSON")
        add("json-array", text("[1,2,3]"), "body: expected a JSON object")
        add("json-string", text("\"signedPayload\""), "body: expected a JSON object")
        add("json-number", text("42"), "body: expected a JSON object")
        add("json-null", text("null"), "body: expected a JSON object")
        add("truncated-json", text("{\"signedPayload\":\"ab"), "body: not valid JSON")
        add("truncated-body", Data(good.prefix(good.count / 2)), "body: not valid JSON")
        add("ten-megabytes", Data(repeating: UInt8(ascii: "a"), count: 10 << 20), "over the 1048576-byte limit")
        add("wrong-shape", text("{\"hello\":\"world\"}"), "neither a V2 notification")
        add("signed-payload-number", text("{\"signedPayload\":7}"), "body.signedPayload: expected a string")
        add("signed-payload-null", text("{\"signedPayload\":null}"), "neither a V2 notification")
        add("signed-payload-object", text("{\"signedPayload\":{}}"), "body.signedPayload: expected a string")
        add("invalid-utf8", Data([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]), "body: not valid JSON")
        add("deep-nesting", text(String(repeating: "{\"a\":", count: 2000) + "1" + String(repeating: "}", count: 2000)), "nested deeper")
        add("deep-nesting-arrays", text("{\"signedPayload\":" + String(repeating: "[", count: 600) + String(repeating: "]", count: 600) + "}"), "nested deeper")
        // JWS framing
        add("one-segment", wrap("abc"), "not a JWS (expected 3 segments, found 1)")
        add("empty-jws", wrap(""), "not a JWS (expected 3 segments, found 1)")
        add("two-segments", wrap(seg[0] + "." + seg[1]), "found 2")
        add("four-segments", wrap(goodJWS + ".AAAA"), "found 4")
        add("five-segments", wrap(goodJWS + ".AA.BB"), "found 5")
        add("bad-base64-header", wrap("*!*." + seg[1] + "." + seg[2]), "bad base64url in segment 1")
        add("bad-base64-payload", wrap(seg[0] + ".%%%." + seg[2]), "bad base64url in segment 2")
        add("bad-base64-signature", wrap(seg[0] + "." + seg[1] + ".@@@"), "bad base64url in segment 3")
        add("header-not-json", wrap(b64(text("nope")) + "." + seg[1] + "." + seg[2]), "header is not a JSON object")
        add("header-array", wrap(b64(text("[1]")) + "." + seg[1] + "." + seg[2]), "header is not a JSON object")
        // Algorithms and certificates
        add("alg-none", wrap(jws(header: ["alg": "none", "x5c": x5c], payload: payload())), "alg none is not ES256")
        add("alg-hs256", wrap(jws(header: ["alg": "HS256", "x5c": x5c], payload: payload())), "alg HS256 is not ES256")
        add("alg-rs256", wrap(jws(header: ["alg": "RS256", "x5c": x5c], payload: payload())), "alg RS256 is not ES256")
        add("alg-es384", wrap(jws(header: ["alg": "ES384", "x5c": x5c], payload: payload())), "alg ES384 is not ES256")
        add("alg-missing", wrap(jws(header: ["x5c": x5c], payload: payload())), "alg missing")
        add("x5c-missing", wrap(jws(header: ["alg": "ES256"], payload: payload())), "x5c missing")
        add("x5c-empty", wrap(jws(header: ["alg": "ES256", "x5c": [String]()], payload: payload())), "x5c is empty")
        add("x5c-not-array", wrap(jws(header: ["alg": "ES256", "x5c": "MIIB"], payload: payload())), "x5c is not an array")
        add("x5c-not-base64", wrap(jws(header: ["alg": "ES256", "x5c": ["***", "***", "***"]], payload: payload())), "x5c[0] is not base64")
        add("x5c-garbage", wrap(jws(header: ["alg": "ES256", "x5c": ["aGVsbG8=", "aGVsbG8=", "aGVsbG8="]], payload: payload())),
            "x5c[0] is not a certificate")
        add("x5c-leaf-only", wrap(jws(header: ["alg": "ES256", "x5c": [x5c[0]]], payload: payload())), "needs at least leaf and intermediate")
        add("chain-to-other-root", TestKit.body(type: "DID_RENEW", signer: other), "certificate chain does not lead to a configured root")
        add("leaf-without-oid", TestKit.body(type: "DID_RENEW", signer: TestKit.fixtureSigner(leaf: "leaf-without-oid.der", intermediate: "test-ca/intermediate.der")),
            "x5c[0] lacks OID 1.2.840.113635.100.6.11.1")
        add("intermediate-without-oid", TestKit.body(type: "DID_RENEW", signer: TestKit.fixtureSigner(leaf: "leaf-under-intermediate-without-oid.der", intermediate: "intermediate-without-oid.der")),
            "x5c[1] lacks OID 1.2.840.113635.100.6.2.1")
        add("leaf-issued-by-root", TestKit.body(type: "DID_RENEW", signer: TestKit.fixtureSigner(leaf: "leaf-issued-by-root.der", intermediate: "test-ca/intermediate.der")),
            "signedPayload:")
        add("certificate-expired", TestKit.body(type: "DID_RENEW", signer: TestKit.fixtureSigner(leaf: "leaf-expired-2021.der", intermediate: "test-ca/intermediate.der")),
            "expired at signedDate")
        add("signed-by-other-key", TestKit.body(type: "DID_RENEW", signer: TestKit.fixtureSigner(leaf: "test-ca/leaf.der", intermediate: "test-ca/intermediate.der", key: "other-key.pem")),
            "ES256 signature does not match")
        var altered = Array(seg[1])
        altered[20] = altered[20] == "a" ? "b" : "a"
        add("payload-altered", wrap(seg[0] + "." + String(altered) + "." + seg[2]), "signedPayload:")
        add("signature-truncated", wrap(seg[0] + "." + seg[1] + "." + String(seg[2].prefix(40))), "signature is")
        add("signature-empty", wrap(seg[0] + "." + seg[1] + "."), "signedPayload:")
        add("signature-of-other-payload", wrap(seg[0] + "." + b64(payload { $0["notificationType"] = "REFUND" }) + "." + seg[2]),
            "ES256 signature does not match")
        // Nested JWS
        add("nested-transaction-other-chain", TestKit.body(type: "DID_RENEW", nestedSigner: other), "signedTransactionInfo: certificate chain does not lead")
        add("nested-transaction-not-jws", signedBody { p in var d = p["data"] as! [String: Any]; d["signedTransactionInfo"] = "x.y"; p["data"] = d },
            "signedTransactionInfo: not a JWS")
        add("nested-renewal-tampered", signedBody { p in
            var d = p["data"] as! [String: Any]
            let parts = (d["signedRenewalInfo"] as! String).split(separator: ".").map(String.init)
            d["signedRenewalInfo"] = parts[0] + "." + b64(TestKit.json(TestKit.renewal(extra: ["autoRenewStatus": 0]))) + "." + parts[2]
            p["data"] = d
        }, "signedRenewalInfo: ES256 signature does not match")
        add("nested-transaction-number", signedBody { p in var d = p["data"] as! [String: Any]; d["signedTransactionInfo"] = 5; p["data"] = d },
            "signedPayload.data.signedTransactionInfo: expected a string")
        // Policy
        add("wrong-bundle-id", TestKit.body(type: "DID_RENEW", bundleId: "com.evil.app"), "bundleId com.evil.app is not the configured")
        add("wrong-bundle-id-nested", nested(TestKit.transaction(bundleId: "com.evil.app")), "signedTransactionInfo: bundleId com.evil.app")
        add("environment-xcode", TestKit.body(type: "DID_RENEW", environment: "Xcode"), "environment Xcode is never accepted")
        add("environment-local-testing", TestKit.body(type: "DID_RENEW", environment: "LocalTesting"), "environment LocalTesting is never accepted")
        add("environment-unknown", TestKit.body(type: "DID_RENEW", environment: "Staging"), "unknown environment Staging")
        add("environment-missing", signedBody { p in var d = p["data"] as! [String: Any]; d.removeValue(forKey: "environment"); p["data"] = d },
            "environment missing")
        add("nested-environment-differs", nested(TestKit.transaction(environment: "Sandbox")), "differs from the notification's Production")
        add("production-without-app-apple-id", TestKit.body(type: "DID_RENEW", appAppleId: nil), "Production notification lacks appAppleId")
        add("wrong-app-apple-id", TestKit.body(type: "DID_RENEW", appAppleId: 99), "appAppleId 99 is not the configured")
        add("renewal-other-subscription", TestKit.body(type: "DID_RENEW", renewal: TestKit.renewal(original: "999")),
            "signedRenewalInfo: originalTransactionId 999 differs")
        // Fields
        add("date-out-of-range", nested(TestKit.transaction(extra: ["expiresDate": 1e20])), "signedTransactionInfo.expiresDate: date")
        add("date-negative", nested(TestKit.transaction(extra: ["purchaseDate": -5])), "signedTransactionInfo.purchaseDate: date")
        add("date-not-number", nested(TestKit.transaction(extra: ["expiresDate": "tomorrow"])), "signedTransactionInfo.expiresDate: expected a date")
        add("signed-date-missing", signedBody { $0.removeValue(forKey: "signedDate") }, "signedPayload.signedDate: missing")
        add("uuid-missing", signedBody { $0.removeValue(forKey: "notificationUUID") }, "signedPayload.notificationUUID: missing")
        add("uuid-too-long", signedBody { $0["notificationUUID"] = String(repeating: "u", count: 500) }, "notificationUUID: empty or longer")
        add("type-missing", signedBody { $0.removeValue(forKey: "notificationType") }, "signedPayload.notificationType: missing")
        add("type-not-string", signedBody { $0["notificationType"] = 12 }, "signedPayload.notificationType: expected a string")
        add("data-not-object", signedBody { $0["data"] = "x" }, "signedPayload.data: expected an object")
        add("price-not-number", nested(TestKit.transaction(extra: ["price": "9.99"])), "signedTransactionInfo.price: expected an integer")
        add("product-missing", nested(TestKit.transaction().filter { $0.key != "productId" }), "signedTransactionInfo.productId: missing")
        add("transaction-id-missing", nested(TestKit.transaction().filter { $0.key != "transactionId" }), "signedTransactionInfo.transactionId: missing")
        add("upgraded-not-bool", nested(TestKit.transaction(extra: ["isUpgraded": "maybe"])), "signedTransactionInfo.isUpgraded: expected a boolean")
        // V1
        add("v1-not-allowed", IntakeTests.v1Body(type: "DID_RENEW"), "V1 bodies carry no signature")
        add("v1-no-receipt", text("{\"notification_type\":\"CANCEL\"}"), "V1 bodies carry no signature")
        // Repeated keys: two JSON readers may keep different values, so what was verified could
        // differ from what another reader acts on. Refused at every level, the key named.
        let otherJWS = (try! JSONSerialization.jsonObject(with: TestKit.body(type: "REFUND", uuid: "corpus-other")) as! [String: Any])["signedPayload"] as! String
        add("duplicate-signed-payload", text("{\"signedPayload\":\"\(goodJWS)\",\"signedPayload\":\"\(otherJWS)\"}"),
            "body: duplicate key \"signedPayload\"")
        add("duplicate-key-in-outer-body-nested", text("{\"signedPayload\":\"\(goodJWS)\",\"extra\":{\"a\":1,\"a\":2}}"),
            "body: duplicate key \"a\"")
        let duplicatedPayload = "{\"notificationType\":\"REFUND\"," + String(decoding: payload().dropFirst(), as: UTF8.self)
        add("duplicate-key-in-payload", wrap(try! TestKit.signer.sign(payload: text(duplicatedPayload))),
            "signedPayload: payload has a duplicate key \"notificationType\"")
        let transactionText = String(decoding: TestKit.json(TestKit.transaction()), as: UTF8.self)
        let duplicatedTransaction = "{\"expiresDate\":4102444800000," + transactionText.dropFirst()
        add("duplicate-key-in-nested-transaction", signedBody { p in
            var d = p["data"] as! [String: Any]
            d["signedTransactionInfo"] = try! TestKit.signer.sign(payload: text(duplicatedTransaction))
            p["data"] = d
        }, "signedTransactionInfo: payload has a duplicate key \"expiresDate\"")
        let x5cText = x5c.map { "\"\($0)\"" }.joined(separator: ",")
        let duplicatedHeader = text("{\"alg\":\"ES256\",\"x5c\":[\(x5cText)],\"alg\":\"none\"}")
        let headerInput = b64(duplicatedHeader) + "." + b64(payload())
        add("duplicate-key-in-header", wrap(headerInput + "." + b64(try! ES256.sign(message: Data(headerInput.utf8), key: leafKey))),
            "signedPayload: header has a duplicate key \"alg\"")
        add("v1-duplicate-key", text("{\"notification_type\":\"CANCEL\",\"notification_type\":\"RENEWAL\"}"),
            "body: duplicate key \"notification_type\"")
        // Control characters in an error path must not break the reason.
        add("control-characters-in-alg", wrap(jws(header: ["alg": "\u{1b}[31mES256\u{07}", "x5c": x5c], payload: payload())), "is not ES256")
        _ = goodText
        return c
    }

    func testEveryBadBodyIsQuarantinedWithItsReasonAndNothingElseChanges() throws {
        let cases = Self.cases
        XCTAssertGreaterThanOrEqual(cases.count, 60)
        XCTAssertEqual(Set(cases.map(\.name)).count, cases.count, "names are unique")
        let store = try Store.inMemory()
        let intake = TestKit.intake(store)
        for (i, c) in cases.enumerated() {
            let outcome = try intake.ingest(c.body, source: "corpus:\(c.name)")
            guard case .rejected(let reason, let id) = outcome else {
                XCTFail("\(c.name): accepted (\(outcome))")
                continue
            }
            XCTAssertTrue(reason.description.contains(c.reason), "\(c.name): reason '\(reason)' does not name '\(c.reason)'")
            XCTAssertFalse(reason.description.contains("\u{1b}"), "\(c.name): raw escape in reason")
            XCTAssertEqual(try store.quarantine.unresolvedCount(), i + 1, c.name)
            XCTAssertEqual(try store.quarantine.entries(limit: 1).first?.id, id)
            // Kept byte for byte, but for a body over the size limit: its first 64 KiB and its true length.
            let kept = c.body.count > TestKit.policy.maxBodyBytes ? c.body.prefix(Intake.keptPrefixBytes) : c.body
            XCTAssertEqual(try store.quarantine.entries(limit: 1).first?.body, kept, "\(c.name): kept byte for byte")
            XCTAssertEqual(try store.quarantine.entries(limit: 1).first?.bodyBytes, c.body.count, c.name)
        }
        XCTAssertEqual(try store.notifications.count(), 0)
        XCTAssertEqual(try store.subscriptions.count(), 0)
        XCTAssertNil(try store.transactions.find(id: "2000000900000001"), "no partial write")
        XCTAssertNil(try store.renewals.find(originalTransactionId: "2000000900000001"))
        if let dir = ProcessInfo.processInfo.environment["SUBDESK_WRITE_CORPUS"] {
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            for c in cases where c.body.count < 1 << 20 {
                try c.body.write(to: URL(fileURLWithPath: "\(dir)/\(c.name).json"))
            }
        }
    }

    func testTheSameUUIDWithOtherContentIsRefused() throws {
        let store = try Store.inMemory()
        let intake = TestKit.intake(store)
        _ = try intake.ingest(TestKit.body(type: "DID_RENEW", uuid: "u-1"))
        guard case .rejected(let reason, _) = try intake.ingest(TestKit.body(type: "REFUND", uuid: "u-1")) else { return XCTFail() }
        XCTAssertTrue(reason.description.contains("notificationUUID u-1 is already stored with different content"))
    }

    func testUnknownEnumValuesAreAccepted() throws {
        let store = try Store.inMemory()
        let intake = TestKit.intake(store)
        let t = TestKit.transaction(extra: ["offerType": 9, "offerDiscountType": "SOMETHING_NEW", "inAppOwnershipType": "NEW_KIND",
                                            "transactionReason": "REASON_X", "revocationReason": 7, "type": "Something New"])
        let r = TestKit.renewal(extra: ["expirationIntent": 42, "priceIncreaseStatus": 9, "offerType": 8])
        let outcome = try intake.ingest(TestKit.body(type: "NEW_TYPE", subtype: "NEW_SUBTYPE", transaction: t, renewal: r))
        guard case .stored = outcome else { return XCTFail("\(outcome)") }
        let stored = try XCTUnwrap(try store.transactions.find(id: "2000000900000001"))
        XCTAssertEqual(stored.offerType, .unknown(9))
        XCTAssertEqual(stored.ownershipType, OwnershipType(rawValue: "NEW_KIND"))
        XCTAssertFalse(stored.isFamilyShared)
        XCTAssertEqual(stored.transactionReason, TransactionReason(rawValue: "REASON_X"))
        XCTAssertFalse(stored.isRenewalByApple || stored.isPurchaseByCustomer)
        XCTAssertEqual(stored.revocationReason, RevocationReason(rawValue: 7))
        XCTAssertEqual(stored.revocationReason?.words, "other")
        XCTAssertEqual(try store.renewals.find(originalTransactionId: "2000000900000001")?.offerType, .unknown(8))
        // Printed as Apple sent them: show --json gives the raw values, not the types' names.
        let json = stored.jsonObject()
        XCTAssertEqual(json["offerType"] as? Int, 9)
        XCTAssertEqual(json["inAppOwnershipType"] as? String, "NEW_KIND")
        XCTAssertEqual(json["transactionReason"] as? String, "REASON_X")
        XCTAssertEqual(json["revocationReason"] as? Int, 7)
        XCTAssertTrue(JSONSerialization.isValidJSONObject(json))
        XCTAssertEqual(try store.renewals.find(originalTransactionId: "2000000900000001")?.expirationIntent, 42)
        XCTAssertEqual(ExpirationIntent.meaning(42), "unrecognised value 42")
    }
}
