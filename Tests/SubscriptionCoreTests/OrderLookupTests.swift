import Foundation
import XCTest
import SubdeskTestKit
import FakeApple
@testable import SubscriptionCore

/// Look Up Order ID: a support agent's order id from the customer's receipt finds the
/// subscription at Apple, verified and stored; an order id Apple does not know says so.
final class OrderLookupTests: XCTestCase, RunsOnEveryEngine {
    var fixture: RevalidationFixture!

    override func setUpWithError() throws { fixture = try RevalidationFixture() }
    override func tearDown() { fixture?.tearDown() }

    let otid = "2000000770000001"

    func answerForTheOrder() {
        let t = TestKit.transaction(id: otid, original: otid, product: "app.monthly", purchase: TestKit.anchor - 5 * TestKit.day,
                                    expires: TestKit.anchor + 25 * TestKit.day, signed: TestKit.anchor - 5 * TestKit.day)
        fixture.server.route("GET", "/prod/inApps/v1/lookup/MTN9T4BRB9",
                             .json(["status": 0, "signedTransactions": [RevalidationFixture.sign(t)]]))
        fixture.answer(otid, statuses: RevalidationFixture.statuses([(1, t, TestKit.renewal(original: otid))]),
                       history: RevalidationFixture.history([t]))
        fixture.server.route("GET", "/prod/inApps/v1/lookup/NOTANORDER1", .json(["status": 1, "signedTransactions": []]))
    }

    func testAnOrderIdFindsItsSubscriptionAtAppleAndStoresIt() throws {
        answerForTheOrder()
        _ = try fixture.openStore()
        let found = try fixture.revalidator().lookUpOrder("MTN9T4BRB9")
        XCTAssertEqual(found.originalTransactionIds, [otid])
        XCTAssertEqual(found.results.first?.after?.status, .active)
        XCTAssertEqual(try fixture.state(otid)?.status, .active)
        XCTAssertEqual(fixture.server.requests("GET", "/prod/inApps/v1/lookup/MTN9T4BRB9").count, 1)
        let audit = try fixture.openStore().audit.entries()
        XCTAssertEqual(audit.last?.reason, "order MTN9T4BRB9")
    }

    func testAnOrderIdAppleDoesNotKnowSaysSo() throws {
        answerForTheOrder()
        _ = try fixture.openStore()
        XCTAssertThrowsError(try fixture.revalidator().lookUpOrder("NOTANORDER1")) { error in
            XCTAssertTrue("\(error)".contains("Apple does not know order id NOTANORDER1"), "\(error)")
        }
        XCTAssertThrowsError(try fixture.revalidator().lookUpOrder("../../x")) { error in
            XCTAssertTrue("\(error)".contains("is not an order id"), "\(error)")
        }
        XCTAssertEqual(fixture.server.requests.filter { $0.path.contains("..") }.count, 0)
    }

    func testATamperedTransactionInTheAnswerIsRefusedAndNothingStored() throws {
        let t = TestKit.transaction(id: otid, original: otid)
        var signed = RevalidationFixture.sign(t)
        signed.removeLast(2)
        signed += signed.hasSuffix("A") ? "BB" : "AA"
        fixture.server.route("GET", "/prod/inApps/v1/lookup/MTN9T4BRB9", .json(["status": 0, "signedTransactions": [signed]]))
        _ = try fixture.openStore()
        XCTAssertThrowsError(try fixture.revalidator().lookUpOrder("MTN9T4BRB9"))
        XCTAssertNil(try fixture.state(otid))
    }

    func testSubdeskShowAcceptsAnOrderId() throws {
        let binary = try RevalidationFixture.subdeskBinary()
        answerForTheOrder()
        _ = try fixture.openStore()
        func show(_ id: String) throws -> (status: Int32, output: String) {
            try ChildOutput.run(binary, ["show", id] + fixture.commandLineFlags)
        }
        let shown = try show("MTN9T4BRB9")
        XCTAssertEqual(shown.status, 0, shown.output)
        XCTAssertTrue(shown.output.contains("MTN9T4BRB9 is not in the store; asking Apple (Look Up Order ID)"), shown.output)
        XCTAssertTrue(shown.output.contains("Subscription \(otid)"), shown.output)
        let unknown = try show("NOTANORDER1")
        XCTAssertEqual(unknown.status, 2, unknown.output)
        XCTAssertTrue(unknown.output.contains("Apple does not know order id NOTANORDER1"), unknown.output)
    }

    /// One order, two purchases: a non-consumable bought with a subscription. `show` gives both.
    func testAnOrderWithAPurchaseAndASubscriptionShowsBoth() throws {
        let binary = try RevalidationFixture.subdeskBinary()
        answerForTheOrder()
        let unlock = TestKit.transaction(id: "2000000770000099", original: "2000000770000099", product: "app.lifetime.unlock",
                                         purchase: TestKit.anchor - 5 * TestKit.day, expires: nil, signed: TestKit.anchor - 5 * TestKit.day,
                                         extra: ["type": "Non-Consumable", "price": 24990])
        let subscription = TestKit.transaction(id: otid, original: otid, product: "app.monthly", purchase: TestKit.anchor - 5 * TestKit.day,
                                               expires: TestKit.anchor + 25 * TestKit.day, signed: TestKit.anchor - 5 * TestKit.day)
        fixture.server.route("GET", "/prod/inApps/v1/lookup/MTN9T4BRB8",
                             .json(["status": 0, "signedTransactions": [RevalidationFixture.sign(unlock), RevalidationFixture.sign(subscription)]]))
        _ = try fixture.openStore()
        let shown = try ChildOutput.run(binary, ["show", "MTN9T4BRB8"] + fixture.commandLineFlags)
        XCTAssertEqual(shown.status, 0, shown.output)
        XCTAssertTrue(shown.output.contains("Order MTN9T4BRB8: 1 subscription, 1 one-time purchase"), shown.output)
        XCTAssertTrue(shown.output.contains("Purchase 2000000770000099  app.lifetime.unlock  Non-Consumable"), shown.output)
        XCTAssertTrue(shown.output.contains("Subscription \(otid)"), shown.output)

        let json = try ChildOutput.run(binary, ["show", "MTN9T4BRB8", "--json"] + fixture.commandLineFlags)
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any], json.output)
        XCTAssertEqual((object["purchases"] as? [[String: Any]])?.compactMap { $0["transactionId"] as? String }, ["2000000770000099"])
        XCTAssertEqual((object["subscribers"] as? [Any])?.count, 1)
    }
}

/// Get Refund History and Get Transaction Info for a subscription, verified and stored.
final class RefundHistoryTests: XCTestCase, RunsOnEveryEngine {
    var fixture: RevalidationFixture!

    override func setUpWithError() throws { fixture = try RevalidationFixture() }
    override func tearDown() { fixture?.tearDown() }

    func testRefundsAndTheLatestTransactionAreVerifiedStoredAndAudited() throws {
        let otid = "2000000880000001"
        let t = TestKit.transaction(id: otid, original: otid)
        try fixture.seed(transaction: t, renewal: TestKit.renewal(original: otid), receivedAt: TestKit.anchor - TestKit.day)
        var refunded = TestKit.transaction(id: "2000000880000009", original: "2000000880000009", product: "app.yearly",
                                           signed: TestKit.anchor - TestKit.day)
        refunded["revocationDate"] = TestKit.anchor - TestKit.day
        refunded["revocationReason"] = 0
        // Two pages of refunds, as Apple pages them by revision.
        fixture.server.route("GET", "/prod/inApps/v2/refund/lookup/\(otid)",
                             .json(["signedTransactions": [], "revision": "r1", "hasMore": true]),
                             .json(["signedTransactions": [RevalidationFixture.sign(refunded)], "revision": "r2", "hasMore": false]))
        var latest = t
        latest["signedDate"] = TestKit.anchor
        latest["expiresDate"] = TestKit.anchor + 40 * TestKit.day
        fixture.server.route("GET", "/prod/inApps/v1/transactions/\(otid)", .json(["signedTransactionInfo": RevalidationFixture.sign(latest)]))

        let answer = try fixture.revalidator().refundsAndTransactionInfo(otid)
        XCTAssertEqual(answer.refunds.map(\.transactionId), ["2000000880000009"])
        XCTAssertEqual(answer.refunds.first?.revocationDate, TestKit.anchor - TestKit.day)
        XCTAssertEqual(answer.transaction.expiresDate, TestKit.anchor + 40 * TestKit.day)
        XCTAssertEqual(fixture.server.requests("GET", "/prod/inApps/v2/refund/lookup/\(otid)").map { $0.query["revision"] ?? "-" }, ["-", "r1"])
        let store = try fixture.openStore()
        XCTAssertEqual(try store.transactions.find(id: "2000000880000009")?.revocationDate, TestKit.anchor - TestKit.day, "stored")
        XCTAssertEqual(try store.transactions.find(id: otid)?.expiresDate, TestKit.anchor + 40 * TestKit.day, "the newer version won")
        XCTAssertEqual(try store.audit.entries().last?.action, "refund_history")
    }

    func testApplesExampleRefundHistoryPageDecodesItsFields() throws {
        let data = try Data(contentsOf: VerificationTests.fixtureDirectory.deletingLastPathComponent()
            .appendingPathComponent("apple-models/getRefundHistoryResponse.json"))
        let json = try JSONFields(data: data, path: "response")
        XCTAssertEqual(try json.strings("signedTransactions"), ["signed_transaction_one", "signed_transaction_two"])
        XCTAssertEqual(try json.string("revision"), "revision_output")
        XCTAssertEqual(try json.bool("hasMore"), true)
    }
}

/// Set App Account Token: Apple's records follow the subscriber subdesk links.
final class SetAppAccountTokenTests: XCTestCase, RunsOnEveryEngine {
    var fixture: RevalidationFixture!

    override func setUpWithError() throws { fixture = try RevalidationFixture() }
    override func tearDown() { fixture?.tearDown() }

    func testASubscriberWithoutATokenGetsOneAndAppleIsToldIt() throws {
        let otid = "2000000990000001"
        try fixture.seed(transaction: TestKit.transaction(id: otid, original: otid), renewal: TestKit.renewal(original: otid),
                         receivedAt: TestKit.anchor - TestKit.day)
        fixture.server.route("PUT", "/prod/inApps/v1/transactions/\(otid)/appAccountToken", FakeAppleServer.Response(status: 200))
        let token = try fixture.revalidator().setAppAccountTokenAtApple(otid)
        XCTAssertNotNil(UUID(uuidString: token))
        let sent = try XCTUnwrap(fixture.server.requests("PUT", "/prod/inApps/v1/transactions/\(otid)/appAccountToken").first)
        XCTAssertEqual(sent.json?["appAccountToken"] as? String, token)
        XCTAssertTrue(sent.headers["authorization"]?.hasPrefix("Bearer ") == true)
        let store = try fixture.openStore()
        XCTAssertEqual(try store.subscriptions.find(originalTransactionId: otid)?.subscriber.appAccountToken, token, "kept on the subscriber")
        XCTAssertEqual(try store.audit.entries().last?.outcome, "Apple has app account token \(token)")
        // Again: the same token, nothing new made.
        XCTAssertEqual(try fixture.revalidator().setAppAccountTokenAtApple(otid), token)
    }

    func testAppleRefusingAFamilySharedPurchaseIsSaidAndAudited() throws {
        let otid = "2000000990000002"
        try fixture.seed(transaction: TestKit.transaction(id: otid, original: otid), renewal: TestKit.renewal(original: otid),
                         receivedAt: TestKit.anchor - TestKit.day)
        fixture.server.route("PUT", "/prod/inApps/v1/transactions/\(otid)/appAccountToken",
                             RevalidationFixture.apiError(400, code: 4000185,
                                                          message: "Invalid request. Family Sharing transactions aren't supported by this endpoint."))
        XCTAssertThrowsError(try fixture.revalidator().setAppAccountTokenAtApple(otid)) { error in
            XCTAssertTrue("\(error)".contains("Family Sharing transactions aren't supported"), "\(error)")
        }
        let store = try fixture.openStore()
        XCTAssertNil(try store.subscriptions.find(originalTransactionId: otid)?.subscriber.appAccountToken, "nothing kept")
        XCTAssertEqual(try store.audit.entries().last?.outcome, "failed")
    }
}
