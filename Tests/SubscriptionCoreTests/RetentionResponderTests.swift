import Foundation
import XCTest
@testable import SubscriptionCore

/// The real-time Retention Messaging responder: its rules files, the promotional offers'
/// V2 signature, and each answer and refusal of a request signed by the test CA.
final class RetentionResponderTests: XCTestCase {
    static let groups = ["app.monthly": "g1", "app.yearly": "g1", "other.monthly": "g2"]

    func parse(_ text: String, offers: Bool = true) throws -> RetentionRules {
        try RetentionRules.parse(text, file: "rules", groupOf: { Self.groups[$0] }, canSignOffers: offers)
    }

    func refusal(_ text: String, offers: Bool = true) -> String {
        do { _ = try parse(text, offers: offers); return "accepted" } catch { return "\(error)" }
    }

    func testRulesParseAndRefuseWithTheRuleNamed() throws {
        let rules = try parse("""
        # comment
        rule grace: product=app.monthly state=grace,billing_retry min_tenure_days=30 -> offer=SAVE50 message=m1
        rule switch: product=app.monthly locale=en -> switch_to=app.yearly billing_plan=BILLED_UPFRONT message=m2
        rule plain: -> message=m3
        """)
        XCTAssertEqual(rules.rules.map(\.name), ["grace", "switch", "plain"])
        XCTAssertEqual(rules.rules[0].answer, .promotionalOffer(offerId: "SAVE50", messageId: "m1"))
        XCTAssertEqual(rules.rules[1].answer, .alternateProduct(productId: "app.yearly", billingPlanType: "BILLED_UPFRONT", messageId: "m2"))
        XCTAssertEqual(rules.rules[2].answer, .message(id: "m3"))
        XCTAssertTrue(refusal("rule two: -> switch_to=app.yearly offer=X").contains("rules:1: rule two: two answer kinds"))
        XCTAssertTrue(refusal("rule out: product=app.monthly -> switch_to=other.monthly").contains("rule out: switch_to other.monthly is in subscription group g2, outside product app.monthly's (g1)"))
        XCTAssertTrue(refusal("rule odd: colour=red -> message=m").contains("rule odd: unknown condition field `colour`"))
        XCTAssertTrue(refusal("rule odd: -> message=m image=i").contains("rule odd: unknown answer field `image`"))
        XCTAssertTrue(refusal("rule o: -> offer=X", offers: false).contains("needs the app's offer_key"))
        XCTAssertTrue(refusal("rule n: state=happy -> message=m").contains("state happy is not one of"))
        XCTAssertTrue(refusal("rule n: -> ").contains("rule n: no answer"))
        XCTAssertTrue(refusal("rule a: -> message=m\nrule a: -> message=n").contains("rules:2: rule a: another rule already has this name"))
        XCTAssertTrue(refusal("rule t: min_tenure_days=99999999999999999999 -> message=m").contains("min_tenure_days is a number of days"))
        // Groups the store has not seen are declared; one that contradicts the store is refused.
        let declared = try parse("group g3: new.monthly, new.yearly\nrule s: product=new.monthly -> switch_to=new.yearly")
        XCTAssertEqual(declared.rules.first?.answer, .alternateProduct(productId: "new.yearly", billingPlanType: nil, messageId: nil))
        XCTAssertTrue(refusal("rule s: product=new.monthly -> switch_to=new.yearly").contains("no subscription group is known"))
        XCTAssertTrue(refusal("group g9: app.monthly").contains("rules:1: group g9: product app.monthly is in subscription group g1 as the store knows it"))
        XCTAssertTrue(refusal("group g3: new.a\ngroup g4: new.a").contains("rules:2: group g4: product new.a is already in group g3"))
    }

    func testAnOfferKeyThatIsAlsoAnAppsKeyIsRefused() throws {
        let keys = "[key team]\nissuer_id = i\nkey_id = K1\nkey_file = /k1.p8\n[key offers]\nissuer_id = i\nkey_id = K2\nkey_file = /k2.p8\n"
        let shared = keys + "[app fitness]\nbundle_id = com.example.fitness\nkey = team\noffer_key = team\n"
        XCTAssertThrowsError(try ConfiguredApps(configuration: Configuration(text: shared, source: "c"))) { error in
            XCTAssertEqual("\(error)", "c:12: offer_key team is also [app fitness]'s key (App Store Server API): an offer key is used for nothing else")
        }
        let own = keys + "[app fitness]\nbundle_id = com.example.fitness\nkey = team\noffer_key = offers\nretention_rules = /r\n"
        let app = try XCTUnwrap(ConfiguredApps(configuration: Configuration(text: own, source: "c")).apps.first)
        XCTAssertEqual(app.offerKey?.keyId, "K2")
        XCTAssertEqual(app.retentionRules, "/r")
        XCTAssertTrue(app.summary.contains("offer key offers (key id K2; serve reads it, never the API key), retention rules /r"), app.summary)
        XCTAssertThrowsError(try ConfiguredApps(configuration: Configuration(text: keys + "[app a]\nbundle_id = b\noffer_key = none\n", source: "c")))
    }

    static func offerSigner() throws -> (PromotionalOfferSigner, ES256.PublicKey) {
        let root = TestKit.repoRoot + "/sample-data/test-ca/"
        let key = try ES256.PrivateKey.load(try Data(contentsOf: URL(fileURLWithPath: root + "leaf-key.pem")))
        let cert = try X509Certificate(der: try Data(contentsOf: URL(fileURLWithPath: root + "leaf.der")))
        return (PromotionalOfferSigner(keyId: "OFFERKEY01", issuerId: "issuer-1", bundleId: "com.example.app", privateKey: key),
                try ES256.PublicKey(certificate: cert))
    }

    /// Checks an offer signature with `key`; its header and claims.
    static func checkOffer(_ jws: String, key: ES256.PublicKey, transactionId: String, product: String, offer: String) throws {
        let parts = jws.split(separator: ".").map(String.init)
        XCTAssertEqual(parts.count, 3)
        XCTAssertTrue(ES256.isValidSignature(try XCTUnwrap(Base64URL.decode(parts[2])), of: Data((parts[0] + "." + parts[1]).utf8), by: key))
        let header = try XCTUnwrap(try JSONSerialization.jsonObject(with: try XCTUnwrap(Base64URL.decode(parts[0]))) as? [String: Any])
        XCTAssertEqual(header["alg"] as? String, "ES256")
        XCTAssertEqual(header["kid"] as? String, "OFFERKEY01")
        let claims = try XCTUnwrap(try JSONSerialization.jsonObject(with: try XCTUnwrap(Base64URL.decode(parts[1]))) as? [String: Any])
        XCTAssertEqual(claims["aud"] as? String, "promotional-offer")
        XCTAssertEqual(claims["bid"] as? String, "com.example.app")
        XCTAssertEqual(claims["iss"] as? String, "issuer-1")
        XCTAssertEqual(claims["transactionId"] as? String, transactionId)
        XCTAssertEqual(claims["productId"] as? String, product)
        XCTAssertEqual(claims["offerIdentifier"] as? String, offer)
        XCTAssertNotNil(UUID(uuidString: try XCTUnwrap(claims["nonce"] as? String)))
        let iat = try XCTUnwrap(claims["iat"] as? Int)
        XCTAssertLessThan(abs(Double(iat) - Date().timeIntervalSince1970), 60)
    }

    func testOfferSignatureVerifiesWithTheKeysPublicKeyAndCarriesTheClaims() throws {
        let (signer, key) = try Self.offerSigner()
        let jws = try signer.sign(productId: "app.monthly", offerIdentifier: "SAVE50", transactionId: "2000000900000001")
        try Self.checkOffer(jws, key: key, transactionId: "2000000900000001", product: "app.monthly", offer: "SAVE50")
    }

    static func requestBody(app: Int64 = 531412, environment: String = "Sandbox", signedDate: Millis = DateText.nowMillis(),
                            otid: String = "2000000900000001", product: String = "app.monthly") throws -> Data {
        let payload: [String: Any] = ["originalTransactionId": otid, "appAppleId": app, "productId": product, "userLocale": "en-US",
                                      "requestIdentifier": UUID().uuidString.lowercased(), "environment": environment, "signedDate": signedDate]
        return TestKit.json(["signedPayload": try TestKit.signer.sign(payload: TestKit.json(payload))])
    }

    func responder(_ rules: String, offers: Bool = true) throws -> RetentionResponder {
        let app = ConfiguredApp(name: "app", bundleId: "com.example.app", appAppleId: 531412, environments: [.sandbox])
        let signer = try Self.offerSigner().0
        return RetentionResponder(apps: ConfiguredApps(apps: [app], fromSections: true),
                                  setups: ["app": RetentionAppSetup(rules: try parse(rules), offers: offers ? .success(signer) : nil)],
                                  verifier: SignedDataVerifier(roots: TestKit.roots))
    }

    func respond(_ r: RetentionResponder, _ body: Data, state: SubscriptionState? = nil, failing: Bool = false) -> RetentionResponse {
        r.respond(body: body, length: body.count, postedApp: nil, now: DateText.nowMillis()) { _ in
            if failing { throw StoreError(operation: "read", message: "down", code: 0) }
            return state
        }
    }

    func testEachAnswerAndEachRefusal() throws {
        let r = try responder("""
        rule offer: product=app.monthly state=grace min_tenure_days=30 -> offer=SAVE50 message=m1
        rule switch: product=app.monthly -> switch_to=app.yearly billing_plan=BILLED_UPFRONT
        """)
        var state = SubscriptionState(
            originalTransactionId: "2000000900000001", productId: "app.monthly", status: .gracePeriod, entitled: true, expiresDate: nil,
            purchaseDate: nil, originalPurchaseDate: DateText.nowMillis() - 40 * 86_400_000, latestTransactionId: nil, autoRenewStatus: true,
            autoRenewProductId: nil, pendingChange: nil, gracePeriodExpiresDate: nil, isInBillingRetryPeriod: true, expirationIntent: nil,
            priceIncreaseStatus: nil, offerType: nil, offerIdentifier: nil, offerDiscountType: nil, isTrial: false, ownershipType: .purchased,
            environment: "Sandbox", appAccountToken: nil, upgradedFrom: [], revokedTransactionIds: [], lastEventDate: nil,
            lastNotificationType: nil)
        let offered = respond(r, try Self.requestBody(), state: state)
        XCTAssertEqual(offered.status, 200)
        XCTAssertEqual(offered.outcome, .answered(rule: "offer", answer: .promotionalOffer(offerId: "SAVE50", messageId: "m1")))
        let body = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(offered.body.utf8)) as? [String: [String: String]])
        XCTAssertEqual(Array(body.keys), ["promotionalOffer"])
        try Self.checkOffer(try XCTUnwrap(body["promotionalOffer"]?["promotionalOfferSignatureV2"]), key: try Self.offerSigner().1,
                            transactionId: "2000000900000001", product: "app.monthly", offer: "SAVE50")
        state.status = .active
        let switched = respond(r, try Self.requestBody(), state: state)
        XCTAssertEqual(switched.body, #"{"alternateProduct":{"billingPlanType":"BILLED_UPFRONT","productId":"app.yearly"}}"#)
        XCTAssertEqual(respond(r, try Self.requestBody(product: "other.monthly")).outcome, .fellBack(.noRule, rule: nil))
        let down = respond(r, try Self.requestBody(), failing: true)
        XCTAssertEqual(down.status, 200)
        XCTAssertEqual(down.body, "{}")
        XCTAssertEqual(down.outcome, .fellBack(.storeUnavailable, rule: nil))
        XCTAssertEqual(respond(try responder("rule m: -> message=m9"), try Self.requestBody()).body, #"{"message":{"messageIdentifier":"m9"}}"#)

        func refused(_ body: Data) -> String { respond(r, body).outcome.key }
        XCTAssertEqual(refused(try Self.requestBody(app: 999)), "refused:unknown_app")
        XCTAssertEqual(refused(try Self.requestBody(environment: "Production")), "refused:environment")
        XCTAssertEqual(refused(try Self.requestBody(signedDate: DateText.nowMillis() - 10 * 60 * 1000)), "refused:stale")
        XCTAssertEqual(refused(Data("{}".utf8)), "refused:unsigned")
        XCTAssertEqual(refused(Data("nope".utf8)), "refused:malformed")
        var tampered = String(decoding: try Self.requestBody(), as: UTF8.self)
        let parts = tampered.split(separator: ".", omittingEmptySubsequences: false)
        let payload = String(decoding: Base64URL.decode(parts[1])!, as: UTF8.self).replacingOccurrences(of: "app.monthly", with: "app.yearly")
        tampered = parts[0] + "." + Base64URL.encode(Data(payload.utf8)) + "." + parts[2]
        XCTAssertEqual(refused(Data(tampered.utf8)), "refused:signature")
        XCTAssertEqual(respond(r, try Self.requestBody(app: 999)).status, 403)
    }
}
