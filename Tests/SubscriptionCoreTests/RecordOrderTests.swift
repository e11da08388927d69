import Foundation
import XCTest
@testable import SubscriptionCore
@testable import SubdeskScenarios
import SubdeskTestKit

/// One total order on record versions (RecordVersionOrder): whichever order versions
/// arrive in, the same version wins, and owner, token, ownership and offers follow it.
final class RecordOrderTests: XCTestCase, RunsOnEveryEngine {
    let a = TestKit.anchor, d = TestKit.day
    let otid = "2000000900000001"

    func ingestAll(_ bodies: [Data], into store: Store, policy: IntakePolicy = TestKit.policy) throws {
        let intake = TestKit.intake(store, policy: policy)
        for b in bodies {
            let outcome = try intake.ingest(b)
            if case .rejected(let reason, _) = outcome { XCTFail("\(reason)") }
        }
    }

    /// Ingests `bodies` in both orders and returns the stored transaction, renewal info and state of each run.
    func bothOrders(_ bodies: [Data], policy: IntakePolicy = TestKit.policy)
        throws -> [(t: TransactionRecord?, r: RenewalRecord?, s: SubscriptionRow?)] {
        try [bodies, bodies.reversed()].map { order in
            let store = try Store.inMemory()
            try ingestAll(order, into: store, policy: policy)
            return (try store.transactions.find(id: otid), try store.renewals.find(originalTransactionId: otid),
                    try store.subscriptions.find(originalTransactionId: otid))
        }
    }

    // Fault 2: the owner follows the winning version, never a discarded one.
    func testAnOlderVersionArrivingLastNeitherMovesTheSubscriptionNorUnlinksItsUser() throws {
        let older = TestKit.body(type: "SUBSCRIBED", subtype: "INITIAL_BUY", signed: a - 10 * d,
                                 transaction: TestKit.transaction(signed: a - 10 * d, extra: ["appAccountToken": "token-old"]))
        let newer = TestKit.body(type: "DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_DISABLED", signed: a - 2 * d,
                                 transaction: TestKit.transaction(signed: a - 2 * d, extra: ["appAccountToken": "token-new"]))
        // The newer version first, a user linked, then the older version late.
        let late = try Store.inMemory()
        try ingestAll([newer], into: late)
        try late.subscribers.link("user-42", originalTransactionId: otid)
        try ingestAll([older], into: late)
        // The same notifications in order, then the same link.
        let inOrder = try Store.inMemory()
        try ingestAll([older, newer], into: inOrder)
        try inOrder.subscribers.link("user-42", originalTransactionId: otid)
        for store in [late, inOrder] {
            let row = try XCTUnwrap(try store.subscriptions.find(originalTransactionId: otid))
            XCTAssertEqual(row.subscriber.appAccountToken, "token-new")
            XCTAssertEqual(row.subscriber.userId, "user-42")
            XCTAssertEqual(row.state.appAccountToken, "token-new")
            let owner = try XCTUnwrap(try store.subscribers.lookup("user-42"))
            XCTAssertEqual(try store.subscriptions.of(subscriberId: owner.id).map(\.state.originalTransactionId), [otid])
            XCTAssertEqual(try store.transactions.find(id: otid)?.appAccountToken, "token-new")
        }
    }

    /// A subscription that moves to the owner a newer version names leaves no empty owner
    /// behind: the old token owned nothing afterwards and is no subscriber any more; a
    /// subscriber with a linked user id stays, owning nothing or not.
    func testAnOwnerLeftWithNothingIsNotKept() throws {
        let older = TestKit.body(type: "SUBSCRIBED", subtype: "INITIAL_BUY", signed: a - 10 * d,
                                 transaction: TestKit.transaction(signed: a - 10 * d, extra: ["appAccountToken": "token-old"]))
        let newer = TestKit.body(type: "DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_DISABLED", signed: a - 2 * d,
                                 transaction: TestKit.transaction(signed: a - 2 * d, extra: ["appAccountToken": "token-new"]))
        let store = try Store.inMemory()
        try ingestAll([older], into: store)
        XCTAssertNotNil(try store.subscribers.lookup("token-old"))
        try ingestAll([newer], into: store)
        XCTAssertNil(try store.subscribers.lookup("token-old"), "the token that owns nothing is gone")
        XCTAssertEqual(try store.subscribers.lookup("token-new")?.appAccountToken, "token-new")

        // A linked user id is kept even once its subscription moves on.
        let linked = try Store.inMemory()
        try ingestAll([older], into: linked)
        try linked.subscribers.link("user-7", originalTransactionId: otid)
        try ingestAll([newer], into: linked)
        XCTAssertEqual(try linked.subscribers.lookup("user-7")?.userId, "user-7")
    }

    // Fault 3: equal signedDates are not broken by arrival order.
    func testTransactionVersionsSignedAtTheSameTimeGiveTheSameStateInBothOrders() throws {
        let shared = TestKit.transaction(signed: a - 5 * d, extra: ["inAppOwnershipType": "FAMILY_SHARED", "appAccountToken": "token-b",
                                                                    "offerType": 2, "offerIdentifier": "promo"])
        let purchased = TestKit.transaction(signed: a - 5 * d, extra: ["inAppOwnershipType": "PURCHASED", "appAccountToken": "token-a"])
        // The same notification signedDate too: the content decides.
        let sameTime = [TestKit.body(type: "DID_RENEW", signed: a - 5 * d, transaction: shared),
                        TestKit.body(type: "DID_RENEW", signed: a - 5 * d, transaction: purchased)]
        let runs = try bothOrders(sameTime)
        XCTAssertEqual(runs[0].t, runs[1].t)
        XCTAssertEqual(runs[0].s?.state, runs[1].s?.state)
        XCTAssertEqual(runs[0].s?.subscriber.appAccountToken, runs[1].s?.subscriber.appAccountToken)
        XCTAssertEqual(runs[0].s?.state.ownershipType, runs[0].t?.ownershipType, "ownership comes from the winning version")
        XCTAssertEqual(runs[0].s?.state.appAccountToken, runs[0].t?.appAccountToken, "so does the token")
        // A later notification carrying a version signed at the same time wins, in both orders.
        let later = [TestKit.body(type: "DID_RENEW", signed: a - 5 * d, transaction: shared),
                     TestKit.body(type: "DID_RENEW", signed: a - 4 * d, transaction: purchased)]
        for run in try bothOrders(later) {
            XCTAssertEqual(run.t?.ownershipType, .purchased)
            XCTAssertEqual(run.t?.appAccountToken, "token-a")
            XCTAssertNil(run.t?.offerType, "offers come from the winner only")
            XCTAssertEqual(run.s?.state.ownershipType, .purchased)
            XCTAssertEqual(run.s?.subscriber.appAccountToken, "token-a")
        }
    }

    func testARenewalInfoChangeSignedAtTheSameTimeWinsWhenItsNotificationIsNewer() throws {
        let on = TestKit.renewal(signed: a - 5 * d)
        let off = TestKit.renewal(signed: a - 5 * d, extra: ["autoRenewStatus": 0, "expirationIntent": 1])
        let bodies = [TestKit.body(type: "DID_RENEW", signed: a - 5 * d, renewal: on),
                      TestKit.body(type: "DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_DISABLED", signed: a - 3 * d, renewal: off)]
        for run in try bothOrders(bodies) {
            XCTAssertEqual(run.r?.autoRenewStatus, false)
            XCTAssertEqual(run.s?.state.autoRenewStatus, false)
            XCTAssertEqual(run.s?.state.expirationIntent, 1)
        }
        // The other way round: the enabling notification is the newer one.
        let again = [TestKit.body(type: "DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_DISABLED", signed: a - 5 * d, renewal: off),
                     TestKit.body(type: "DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_ENABLED", signed: a - 3 * d, renewal: on)]
        for run in try bothOrders(again) { XCTAssertEqual(run.s?.state.autoRenewStatus, true) }
        // Equal in every date: the content decides, the same way in both orders.
        let tie = [TestKit.body(type: "DID_RENEW", signed: a - 5 * d, renewal: on),
                   TestKit.body(type: "DID_RENEW", signed: a - 5 * d, renewal: off)]
        let runs = try bothOrders(tie)
        XCTAssertEqual(runs[0].r, runs[1].r)
        XCTAssertEqual(runs[0].s?.state, runs[1].s?.state)
    }

    // Fault 4: V1 bodies carry no signing time; their own facts order them.
    static func v1(type: String, expires: Millis, billingRetry: Bool = false, grace: Millis? = nil,
                   extraEntries: [[String: Any]] = []) -> Data {
        var pending: [String: Any] = ["original_transaction_id": "1000000111", "product_id": "app.monthly",
                                      "auto_renew_product_id": "app.monthly", "auto_renew_status": "1"]
        if billingRetry { pending["is_in_billing_retry_period"] = "1"; pending["expiration_intent"] = "2" }
        if let grace { pending["grace_period_expires_date_ms"] = String(grace) }
        let entry: [String: Any] = [
            "transaction_id": "1000000222", "original_transaction_id": "1000000111", "product_id": "app.monthly",
            "purchase_date_ms": String(expires - 30 * TestKit.day), "expires_date_ms": String(expires),
            "original_purchase_date_ms": String(expires - 60 * TestKit.day), "in_app_ownership_type": "PURCHASED",
        ]
        let body: [String: Any] = [
            "notification_type": type, "environment": "PROD", "bid": ScenarioBuilder.demoBundleId, "password": "s3cret",
            "auto_renew_status": "true", "auto_renew_product_id": "app.monthly",
            "unified_receipt": ["status": 0, "environment": "Production", "latest_receipt": "MIIT...",
                                "latest_receipt_info": extraEntries + [entry], "pending_renewal_info": [pending]] as [String: Any],
        ]
        return TestKit.json(body)
    }

    var v1Policy: IntakePolicy {
        var p = TestKit.policy
        p.allowV1 = true
        return p
    }

    func v1State(_ bodies: [Data]) throws -> [SubscriptionState] {
        try [bodies, bodies.reversed()].map { order in
            let store = try Store.inMemory()
            try ingestAll(order, into: store, policy: v1Policy)
            return try XCTUnwrap(try TestKit.state(store, "1000000111", now: a))
        }
    }

    func testV1RenewalThenFailureToRenewEndsInBillingRetryInBothOrders() throws {
        let expired = a - 2 * d
        let states = try v1State([Self.v1(type: "RENEWAL", expires: expired),
                                  Self.v1(type: "DID_FAIL_TO_RENEW", expires: expired, billingRetry: true)])
        for s in states {
            XCTAssertEqual(s.status, .billingRetry)
            XCTAssertEqual(s.expirationIntent, 2)
            XCTAssertFalse(s.entitled)
        }
        let graced = try v1State([Self.v1(type: "RENEWAL", expires: expired),
                                  Self.v1(type: "DID_FAIL_TO_RENEW", expires: expired, billingRetry: true, grace: a + 3 * d)])
        for s in graced {
            XCTAssertEqual(s.status, .gracePeriod)
            XCTAssertTrue(s.entitled)
            XCTAssertEqual(s.gracePeriodExpiresDate, a + 3 * d)
        }
    }

    // Fault 5: receipt entries without an expiry are purchases, not subscriptions.
    func testANonConsumableInAV1ReceiptIsNotASubscriptionAndTheBodyIsAboutTheAutoRenewable() throws {
        let lifetime: [String: Any] = ["transaction_id": "1000000999", "original_transaction_id": "1000000999",
                                       "product_id": "app.lifetime.unlock", "purchase_date_ms": String(a - d), "quantity": "1"]
        let store = try Store.inMemory()
        let intake = TestKit.intake(store, policy: v1Policy)
        guard case .stored(let event) = try intake.ingest(Self.v1(type: "DID_RENEW", expires: a + 20 * d, extraEntries: [lifetime])) else {
            return XCTFail("not stored")
        }
        XCTAssertEqual(event.originalTransactionId, "1000000111", "attributed to the auto-renewable, not the newer purchase")
        XCTAssertEqual(event.productId, "app.monthly")
        XCTAssertNil(try store.subscriptions.find(originalTransactionId: "1000000999"), "a non-consumable is no subscription")
        XCTAssertEqual(try store.subscriptions.count(), 1)
        XCTAssertEqual(try store.transactions.find(id: "1000000999")?.productId, "app.lifetime.unlock", "kept as a purchase")
        XCTAssertEqual(try TestKit.state(store, "1000000111")?.status, .active)
    }

    /// The arrival-order property over histories built to collide: versions signed at the
    /// same time, notifications signed at the same time, tokens and ownership that change.
    /// Every permutation of each history gives the same stored versions, state and owner.
    func testEveryArrivalOrderOfCollidingVersionsGivesTheSameResult() throws {
        var random = StoreGenerator.Random(state: 20261124)
        var checked = 0
        for history in 0..<12 {
            let bodies: [Data] = (0..<4).map { i in
                let signed = a - Millis(random.next() % 2) * d
                // Tokens change between versions; none disappears (a version without a token
                // leaves the subscription with the owner it has, see the README).
                let extra: [String: Any] = ["inAppOwnershipType": random.next() % 2 == 0 ? "PURCHASED" : "FAMILY_SHARED",
                                            "price": 9990 + Int(random.next() % 3) * 1000,
                                            "appAccountToken": ["token-a", "token-b", "token-c"][Int(random.next() % 3)]]
                let renewal = TestKit.renewal(signed: a - Millis(random.next() % 2) * d,
                                              extra: ["autoRenewStatus": Int(random.next() % 2)])
                return TestKit.body(type: "DID_RENEW", uuid: "h\(history)-\(i)", signed: a - Millis(random.next() % 2) * d,
                                    transaction: TestKit.transaction(signed: signed, extra: extra), renewal: renewal)
            }
            var reference: String?
            for order in permutations(Array(bodies.indices)) {
                let store = try Store.inMemory()
                try ingestAll(order.map { bodies[$0] }, into: store)
                let row = try XCTUnwrap(try store.subscriptions.find(originalTransactionId: otid))
                let outcome = "\(String(describing: try store.transactions.find(id: otid))) \(String(describing: try store.renewals.find(originalTransactionId: otid))) "
                    + "\(row.state) \(row.subscriber.appAccountToken ?? "-")"
                if let reference { XCTAssertEqual(outcome, reference, "history \(history), order \(order)") } else { reference = outcome }
                checked += 1
            }
        }
        XCTAssertEqual(checked, 12 * 24)
    }

    func permutations(_ items: [Int]) -> [[Int]] {
        guard items.count > 1 else { return [items] }
        return items.indices.flatMap { i -> [[Int]] in
            var rest = items
            let first = rest.remove(at: i)
            return permutations(rest).map { [first] + $0 }
        }
    }
}
