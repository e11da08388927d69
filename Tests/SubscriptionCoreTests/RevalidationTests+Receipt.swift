import Foundation
import XCTest
import FakeApple
@testable import SubscriptionCore
import SubdeskScenarios

/// The legacy path: verifyReceipt with a stored receipt when no API key is configured.
extension RevalidationTests {
    func seedLapsedWithReceipt(environment: String = "Production", receipt: String? = "STORED-RECEIPT") throws {
        let first = TestKit.transaction(id: otid, original: otid, purchase: anchor - 40 * day, expires: anchor - 10 * day,
                                        signed: anchor - 40 * day, environment: environment)
        try fixture.seed(transaction: first, renewal: TestKit.renewal(original: otid, signed: anchor - 40 * day, environment: environment),
                         receivedAt: anchor)
        if let receipt { try fixture.openStore().receipts.put(receipt, originalTransactionId: otid, at: anchor - 40 * day) }
    }

    func entry(_ id: String, purchase: Millis, expires: Millis?) -> [String: Any] {
        var e: [String: Any] = ["transaction_id": id, "original_transaction_id": otid, "product_id": "app.monthly",
                                "purchase_date_ms": String(purchase), "original_purchase_date_ms": String(anchor - 40 * day),
                                "is_trial_period": "false", "in_app_ownership_type": "PURCHASED",
                                "web_order_line_item_id": "2000000\(id.suffix(4))"]
        if let expires { e["expires_date_ms"] = String(expires) }
        return e
    }

    func receiptResponse(status: Int = 0, environment: String = "Production", bundleId: String = ScenarioBuilder.demoBundleId,
                         latestReceipt: String? = "FRESH-RECEIPT", inApp: [[String: Any]]? = nil) -> FakeAppleServer.Response {
        let first = entry(otid, purchase: anchor - 40 * day, expires: anchor - 10 * day)
        let renewal = entry("2000000900000002", purchase: anchor - 10 * day, expires: anchor + 20 * day)
        var body: [String: Any] = [
            "status": status, "environment": environment,
            "receipt": ["bundle_id": bundleId, "request_date_ms": String(anchor - 60_000), "in_app": inApp ?? [first]],
            "latest_receipt_info": [renewal, first],
            "pending_renewal_info": [["original_transaction_id": otid, "product_id": "app.monthly",
                                      "auto_renew_product_id": "app.monthly", "auto_renew_status": "1"]],
        ]
        if let latestReceipt { body["latest_receipt"] = latestReceipt }
        return .json(body)
    }

    func testWithoutAnAPIKeyTheStoredReceiptGoesToVerifyReceiptAndIsMerged() throws {
        try seedLapsedWithReceipt()
        fixture.server.route("POST", "/verifyReceipt", receiptResponse())

        let result = try fixture.revalidator(apiKey: false).revalidate(otid)

        XCTAssertEqual(result.source, .verifyReceipt(environment: .production))
        XCTAssertEqual(result.before?.status, .expired)
        XCTAssertEqual(result.after?.status, .active)
        XCTAssertEqual(result.after?.expiresDate, anchor + 20 * day)
        XCTAssertEqual(result.outcome, .renewed)
        XCTAssertEqual(result.newTransactionIds, ["2000000900000002"])
        let request = try XCTUnwrap(fixture.server.requests.first)
        XCTAssertEqual(request.method, "POST")
        XCTAssertEqual(request.headers["content-type"], "application/json")
        let sent = try XCTUnwrap(request.json)
        XCTAssertEqual(sent["receipt-data"] as? String, "STORED-RECEIPT")
        XCTAssertEqual(sent["password"] as? String, fixture.sharedSecret)
        XCTAssertEqual(sent["exclude-old-transactions"] as? Bool, false)
        let store = try fixture.openStore()
        XCTAssertEqual(try store.receipts.find(originalTransactionId: otid), "FRESH-RECEIPT", "the latest receipt replaces the stored one")
        let audit = try XCTUnwrap(try store.audit.entries(targets: [otid]).last)
        XCTAssertEqual(audit.action, "revalidate")
        XCTAssertTrue(audit.detail?.contains("source verifyReceipt (Production)") ?? false, audit.detail ?? "")
        XCTAssertFalse(audit.detail?.contains(fixture.sharedSecret) ?? true, "the shared secret never reaches the audit log")
    }

    func testAnExplicitReceiptIsUsedEvenWithAnAPIKey() throws {
        try seedLapsedWithReceipt(receipt: nil)
        fixture.server.route("POST", "/verifyReceipt", receiptResponse())
        let result = try fixture.revalidator(apiKey: true).revalidate(otid, receipt: "FROM-THE-APP")
        XCTAssertEqual(result.source, .verifyReceipt(environment: .production))
        XCTAssertEqual(fixture.server.requests.first?.json?["receipt-data"] as? String, "FROM-THE-APP")
    }

    func testStatus21007RetriesTheSandbox() throws {
        try seedLapsedWithReceipt(environment: "Sandbox")
        fixture.server.route("POST", "/verifyReceipt", .json(["status": 21007]))
        fixture.server.route("POST", "/sandbox/verifyReceipt", receiptResponse(environment: "Sandbox"))

        let result = try fixture.revalidator(apiKey: false).revalidate(otid)

        XCTAssertEqual(result.source, .verifyReceipt(environment: .sandbox))
        XCTAssertEqual(result.after?.status, .active)
        XCTAssertEqual(fixture.server.requests.map(\.path), ["/verifyReceipt", "/sandbox/verifyReceipt"])
        XCTAssertEqual(fixture.server.requests.last?.json?["receipt-data"] as? String, "STORED-RECEIPT")
    }

    /// A phrase of each status's documented meaning (reference 004).
    static let receiptMeanings: [Int: String] = [
        21000: "not made using the HTTP POST request method",
        21001: "no longer sent by the App Store",
        21002: "receipt-data property was malformed",
        21003: "the receipt could not be authenticated",
        21004: "shared secret you provided does not match",
        21005: "temporarily unable to provide the receipt",
        21007: "from the test environment, but it was sent to the production environment",
        21008: "from the production environment, but it was sent to the test environment",
        21009: "internal data access error",
        21010: "user account cannot be found or has been deleted",
    ]

    func testEveryStatusFrom21000To21010GivesItsMeaning() throws {
        try seedLapsedWithReceipt()
        let revalidator = try fixture.revalidator(apiKey: false)
        for status in 21000...21010 {
            XCTAssertFalse(VerifyReceiptStatus.meaning(status).hasPrefix("undocumented"), "\(status) has no meaning")
            let sent = fixture.server.requests.count
            fixture.server.route("POST", "/verifyReceipt", .json(["status": status, "environment": "Production"]))
            // 21007 moves on to the sandbox, which here says the same.
            fixture.server.route("POST", "/sandbox/verifyReceipt", .json(["status": status, "environment": "Sandbox"]))
            if status == 21006 {
                // Valid but expired: the receipt is decoded and returned, so it is an answer, not an error.
                fixture.server.route("POST", "/verifyReceipt", receiptResponse(status: 21006))
                XCTAssertNoThrow(try revalidator.revalidate(otid))
                continue
            }
            XCTAssertThrowsError(try revalidator.revalidate(otid), "status \(status)") { error in
                guard case .receiptStatus(let code, let meaning, _, let retryable, let attempts)? = error as? RevalidationError else {
                    return XCTFail("status \(status) gave \(error)")
                }
                XCTAssertEqual(code, status)
                XCTAssertTrue(meaning.contains(Self.receiptMeanings[status]!), "status \(status): \(meaning)")
                XCTAssertTrue("\(error)".contains("status \(status): \(meaning)"), "\(error)")
                let temporary = [21002, 21005, 21009].contains(status)
                XCTAssertEqual(retryable, temporary, "status \(status)")
                // "Try again" statuses are retried until attempts run out; the rest are final at once.
                XCTAssertEqual(attempts, temporary ? 3 : 1, "status \(status)")
            }
            let made = fixture.server.requests.count - sent
            XCTAssertEqual(made, status == 21007 ? 2 : ([21002, 21005, 21009].contains(status) ? 3 : 1), "requests for \(status)")
        }
        let audit = try fixture.openStore().audit.entries(targets: [otid])
        XCTAssertEqual(audit.filter { $0.outcome == "failed" }.count, 10, "every failure is audited")
    }

    func testIsRetryableTrueIsRetriedAndFalseIsNot() throws {
        try seedLapsedWithReceipt()
        let revalidator = try fixture.revalidator(apiKey: false)

        fixture.server.route("POST", "/verifyReceipt", .json(["status": 21150, "is-retryable": true]), receiptResponse())
        XCTAssertEqual(try revalidator.revalidate(otid).outcome, .renewed)
        XCTAssertEqual(fixture.server.requests.count, 2)

        fixture.server.route("POST", "/verifyReceipt", .json(["status": 21199, "is-retryable": false]), receiptResponse())
        XCTAssertThrowsError(try revalidator.revalidate(otid)) { error in
            XCTAssertTrue("\(error)".contains("status 21199: internal data access error (App Store internal error 21199)"), "\(error)")
            XCTAssertFalse((error as? RevalidationError)?.isTransient ?? true)
        }
        XCTAssertEqual(fixture.server.requests.count, 3, "is-retryable false is final")

        fixture.server.route("POST", "/verifyReceipt", .json(["status": 21100]), receiptResponse())
        XCTAssertThrowsError(try revalidator.revalidate(otid))
        XCTAssertEqual(fixture.server.requests.count, 4, "without is-retryable an internal error is not retried")

        fixture.server.route("POST", "/verifyReceipt", .json(["status": 21120, "is-retryable": 1]))
        XCTAssertThrowsError(try revalidator.revalidate(otid)) { error in
            XCTAssertTrue((error as? RevalidationError)?.isTransient ?? false, "left for a later run")
            XCTAssertTrue("\(error)".contains("retryable later; failed after 3 attempts"), "\(error)")
        }
    }

    func testNoAPIKeyAndNoStoredReceiptSaysWhatIsMissing() throws {
        try seedLapsedWithReceipt(receipt: nil)
        XCTAssertThrowsError(try fixture.revalidator(apiKey: false).revalidate(otid)) { error in
            XCTAssertEqual("\(error)", "revalidation is not configured: no App Store Server API key (api_key_file, api_key_id, "
                           + "api_issuer_id) and no stored receipt for \(otid) to send to verifyReceipt")
        }
        XCTAssertTrue(fixture.server.requests.isEmpty)
        XCTAssertEqual(try fixture.openStore().audit.entries(targets: [otid]).map(\.outcome), ["failed"])
    }

    func testVerifyReceiptNeedsTheSharedSecret() throws {
        try seedLapsedWithReceipt()
        let configuration = RevalidationConfiguration(endpoints: fixture.endpoints, http: RevalidationFixture.fastHTTP)
        let path = fixture.storePath
        let revalidator = Revalidator(openStore: { try Store(path: path) }, configuration: configuration,
                                      verifier: SignedDataVerifier(roots: TestKit.roots), policy: TestKit.policy, operatorName: "ana")
        XCTAssertThrowsError(try revalidator.revalidate(otid)) { error in
            XCTAssertTrue("\(error)".contains("shared_secret_file"), "\(error)")
        }
    }

    func testAReceiptOfAnotherAppIsRefused() throws {
        try seedLapsedWithReceipt()
        fixture.server.route("POST", "/verifyReceipt", receiptResponse(bundleId: "com.example.other"))
        XCTAssertThrowsError(try fixture.revalidator(apiKey: false).revalidate(otid)) { error in
            XCTAssertEqual("\(error)", "refused Apple's answer, nothing stored: verifyReceipt response receipt: bundleId "
                           + "com.example.other is not the configured com.example.subdesk.demo")
        }
        XCTAssertNil(try fixture.openStore().transactions.find(id: "2000000900000002"))
    }

    func testInAppEntriesAreMergedButOnlyThoseThatExpire() throws {
        try seedLapsedWithReceipt()
        let consumable: [String: Any] = ["transaction_id": "3000000900000009", "original_transaction_id": "3000000900000009",
                                         "product_id": "app.coins", "purchase_date_ms": String(anchor - day), "quantity": "1"]
        let onlyInApp = entry("2000000900000007", purchase: anchor - 5 * day, expires: anchor + 25 * day)
        fixture.server.route("POST", "/verifyReceipt", receiptResponse(inApp: [consumable, onlyInApp]))
        let result = try fixture.revalidator(apiKey: false).revalidate(otid)
        XCTAssertEqual(result.newTransactionIds, ["2000000900000002", "2000000900000007"])
        XCTAssertEqual(result.after?.expiresDate, anchor + 25 * day)
        let store = try fixture.openStore()
        XCTAssertNil(try store.transactions.find(id: "3000000900000009"), "a consumable in in_app is not a subscription")
        XCTAssertNil(try store.subscriptions.find(originalTransactionId: "3000000900000009"))
    }

    func testAV1NotificationLeavesItsReceiptForVerifyReceipt() throws {
        let store = try fixture.openStore()
        var policy = TestKit.policy
        policy.allowV1 = true
        let body = TestKit.json([
            "notification_type": "INITIAL_BUY", "environment": "PROD", "bid": ScenarioBuilder.demoBundleId,
            "auto_renew_status": "true", "original_transaction_id": otid,
            "unified_receipt": ["environment": "Production", "latest_receipt": "RECEIPT-FROM-V1", "status": 0,
                                "latest_receipt_info": [entry(otid, purchase: anchor - 40 * day, expires: anchor - 10 * day)]],
        ])
        guard case .stored = try TestKit.intake(store, policy: policy).ingest(body, receivedAt: anchor) else {
            return XCTFail("V1 body not stored")
        }
        XCTAssertEqual(try store.receipts.find(originalTransactionId: otid), "RECEIPT-FROM-V1")
    }
}
