import Foundation
import XCTest
import SubdeskTestKit
import FakeApple
@testable import SubscriptionCore

/// The refund-request queue: a CONSUMPTION_REQUEST opens an item, the facts come from the
/// store, an answer goes to the fake Apple's Send Consumption Information within the
/// 12-hour deadline (or is refused before Apple is asked), a missed deadline and every
/// answer are audited, and REFUND / REFUND_DECLINED close the item in either arrival order.
final class RefundRequestTests: XCTestCase, RunsOnEveryEngine {
    var fixture: RevalidationFixture!

    override func setUpWithError() throws { fixture = try RevalidationFixture() }
    override func tearDown() { fixture?.tearDown() }

    let otid = "2000000770000001"
    let renewalId = "2000000770000002"
    /// The moment the history is told around (the CLI test moves it to the real clock).
    var base: Millis = TestKit.anchor
    /// When Apple signed the CONSUMPTION_REQUEST.
    var asked: Millis { base - 2 * 3_600_000 }
    var path: String { "/prod/inApps/v2/transactions/consumption/\(renewalId)" }

    /// A subscription that began with a free trial and renewed once, then a refund request
    /// for the renewal.
    @discardableResult
    func seedRequest(uuid: String = "c0a50000-0000-4000-8000-000000000001", reason: String = "UNINTENDED_PURCHASE") throws -> String {
        try fixture.seed(transaction: TestKit.transaction(id: otid, original: otid, purchase: base - 40 * TestKit.day,
                                                          expires: base - 33 * TestKit.day, signed: base - 40 * TestKit.day,
                                                          extra: ["offerType": 1, "offerDiscountType": "FREE_TRIAL", "price": 0]),
                         renewal: TestKit.renewal(original: otid), receivedAt: base - 40 * TestKit.day)
        let renewed = TestKit.transaction(id: renewalId, original: otid, purchase: base - 5 * TestKit.day,
                                          expires: base + 25 * TestKit.day, signed: base - 5 * TestKit.day,
                                          extra: ["transactionReason": "RENEWAL", "originalPurchaseDate": base - 40 * TestKit.day])
        try ingest(TestKit.body(type: "DID_RENEW", signed: base - 5 * TestKit.day, transaction: renewed,
                                renewal: TestKit.renewal(original: otid, signed: base - 5 * TestKit.day)))
        try ingest(consumptionRequest(uuid: uuid, reason: reason))
        return uuid
    }

    func consumptionRequest(uuid: String, reason: String, signed: Millis? = nil) -> Data {
        TestKit.body(type: "CONSUMPTION_REQUEST", uuid: uuid, signed: signed ?? asked,
                     transaction: TestKit.transaction(id: renewalId, original: otid, purchase: base - 5 * TestKit.day,
                                                      expires: base + 25 * TestKit.day, signed: asked),
                     renewal: nil, extraData: ["consumptionRequestReason": reason])
    }

    func decision(_ type: String, signed: Millis) -> Data {
        TestKit.body(type: type, signed: signed,
                     transaction: TestKit.transaction(id: renewalId, original: otid, purchase: base - 5 * TestKit.day,
                                                      expires: base + 25 * TestKit.day, signed: signed,
                                                      extra: type == "REFUND" ? ["revocationDate": signed, "revocationReason": 0] : [:]),
                     renewal: nil)
    }

    func ingest(_ body: Data) throws {
        let outcome = try TestKit.intake(fixture.openStore()).ingest(body, receivedAt: base)
        guard case .stored = outcome else { throw RevalidationFixture.Failure("not stored: \(outcome)") }
    }

    func consented(_ preference: ConsumptionAnswer.Preference? = .decline) -> ConsumptionAnswer {
        ConsumptionAnswer(customerConsented: true, deliveryStatus: .delivered, sampleContentProvided: true, refundPreference: preference)
    }

    func testAConsumptionRequestOpensAnItemWithTheFactsTheStoreKnows() throws {
        let uuid = try seedRequest()
        let store = try fixture.openStore()
        let queue = RefundQueue(store: store, operatorName: "ana")
        let items = try queue.requests(includeClosed: false, now: TestKit.anchor)
        XCTAssertEqual(items.map(\.notificationUUID), [uuid])
        let item = items[0]
        XCTAssertEqual(item.transactionId, renewalId)
        XCTAssertEqual(item.deadline, asked + 12 * 3_600_000)
        XCTAssertEqual(item.stage(now: TestKit.anchor), .open)
        let facts = try queue.facts(item, now: TestKit.anchor)
        XCTAssertEqual(facts.reason, "UNINTENDED_PURCHASE")
        XCTAssertEqual(facts.delivery, .delivered)
        XCTAssertTrue(facts.sampleContentProvided, "the subscription began with a free trial")
        XCTAssertEqual(facts.tenureDays, 5, "the first paid purchase was five days ago; the trial does not count")
        XCTAssertEqual(facts.lifetimePurchased, ["USD": 9990])
        XCTAssertEqual(facts.lifetimeRefunded, [:])
        XCTAssertEqual(facts.productType, "Auto-Renewable Subscription")
    }

    func testARefundInPartAddsItsShareToTheCustomersRefunds() throws {
        try seedRequest()
        let refunded = TestKit.transaction(id: renewalId, original: otid, purchase: base - 5 * TestKit.day,
                                           expires: base + 25 * TestKit.day, signed: base - 3_600_000,
                                           extra: ["revocationDate": base - 3_600_000, "revocationReason": 0,
                                                   "revocationType": "REFUND_PRORATED", "revocationPercentage": 50000])
        try ingest(TestKit.body(type: "REFUND", signed: base - 3_600_000, transaction: refunded, renewal: nil))
        let queue = RefundQueue(store: try fixture.openStore(), operatorName: "ana")
        let item = try XCTUnwrap(try queue.requests(includeClosed: true, now: base).first)
        let facts = try queue.facts(item, now: base)
        XCTAssertEqual(facts.lifetimePurchased, ["USD": 9990])
        XCTAssertEqual(facts.lifetimeRefunded, ["USD": 4995], "half of the price came back, not all of it")
    }

    func testAnAnswerIsSentKeptAndAudited() throws {
        let uuid = try seedRequest()
        fixture.server.route("PUT", path, FakeAppleServer.Response(status: 202))
        let answered = try fixture.revalidator().answerRefundRequest(otid, answer: consented(), reason: "used all month")
        XCTAssertEqual(answered.stage(now: TestKit.anchor), .answered)
        let sent = try XCTUnwrap(fixture.server.requests("PUT", path).first?.json)
        XCTAssertEqual(sent["customerConsented"] as? Bool, true)
        XCTAssertEqual(sent["deliveryStatus"] as? String, "DELIVERED")
        XCTAssertEqual(sent["sampleContentProvided"] as? Bool, true)
        XCTAssertEqual(sent["refundPreference"] as? String, "DECLINE")
        XCTAssertNil(sent["consumptionPercentage"], "Apple takes no consumed share for an auto-renewable subscription")
        XCTAssertEqual(Set(sent.keys), ["customerConsented", "deliveryStatus", "sampleContentProvided", "refundPreference"])
        let store = try fixture.openStore()
        let audit = try XCTUnwrap(try store.audit.entries().first { $0.action == "refund_answer" })
        XCTAssertEqual(audit.target, otid)
        XCTAssertEqual(audit.reason, "used all month")
        XCTAssertEqual(audit.outcome, "sent to Apple: DELIVERED, sample provided, DECLINE")
        XCTAssertTrue(audit.detail?.contains(uuid) == true)
        // Apple takes one answer.
        XCTAssertThrowsError(try fixture.revalidator().answerRefundRequest(uuid, answer: consented(), reason: nil)) { error in
            XCTAssertTrue("\(error)".contains("accepted an answer"), "\(error)")
        }
        XCTAssertEqual(fixture.server.requests("PUT", path).count, 1)
    }

    func testApplesRulesAndTheDeadlineAreCheckedBeforeAppleIsAsked() throws {
        try seedRequest()
        fixture.server.route("PUT", path, FakeAppleServer.Response(status: 202))
        let revalidator = try fixture.revalidator()
        var noConsent = consented()
        noConsent.customerConsented = false
        var share = consented(.grantProrated)
        share.consumptionPercentage = 50_000
        var prorated = consented(.grantProrated)
        prorated.consumptionPercentage = nil
        for (answer, expected) in [(noConsent, "not consented"), (share, "not for an auto-renewable"), (prorated, "GRANT_PRORATED needs")] {
            XCTAssertThrowsError(try revalidator.answerRefundRequest(otid, answer: answer, reason: nil)) { error in
                XCTAssertTrue("\(error)".contains(expected), "\(error)")
            }
        }
        // Twelve hours after Apple asked, the deadline has passed: nothing is sent, and the
        // miss is audited once however often it is noticed.
        fixture.now = asked + 12 * 3_600_000
        XCTAssertThrowsError(try fixture.revalidator().answerRefundRequest(otid, answer: consented(), reason: nil)) { error in
            XCTAssertTrue("\(error)".contains("deadline"), "\(error)")
        }
        let store = try fixture.openStore()
        _ = try RefundQueue(store: store, operatorName: "ana").requests(includeClosed: false, now: fixture.now + 1000)
        XCTAssertTrue(fixture.server.requests.isEmpty, "Apple was never asked")
        let missed = try store.audit.entries().filter { $0.action == "refund_missed" }
        XCTAssertEqual(missed.count, 1)
        XCTAssertTrue(missed[0].outcome.contains("no answer reached Apple by the deadline"), missed[0].outcome)
        XCTAssertEqual(try store.refundRequests.queue().first?.stage(now: fixture.now), .missed)
    }

    /// The answer goes through the same client as every call to Apple: a 429 waits for its
    /// Retry-After, a 5xx is tried again, a 401 says what to check.
    func testThrottledAndFailingAnswersAreRetriedAndAnUnauthorizedOneSaysWhy() throws {
        let uuid = try seedRequest()
        fixture.server.route("PUT", path, RevalidationFixture.apiError(429, code: 4290000, message: "Rate limit exceeded.", headers: ["Retry-After": "0"]),
                             RevalidationFixture.apiError(503, code: 5000001, message: "An unknown error occurred."),
                             FakeAppleServer.Response(status: 202))
        _ = try fixture.revalidator().answerRefundRequest(uuid, answer: consented(), reason: nil)
        XCTAssertEqual(fixture.server.requests("PUT", path).count, 3)
        XCTAssertEqual(try fixture.openStore().refundRequests.request(uuid: uuid)?.answerOutcome, "accepted")

        let other = "c0a50000-0000-4000-8000-000000000003"
        try ingest(consumptionRequest(uuid: other, reason: "OTHER", signed: asked + 60_000))
        fixture.server.route("PUT", path, FakeAppleServer.Response(status: 401))
        XCTAssertThrowsError(try fixture.revalidator().answerRefundRequest(other, answer: consented(), reason: nil)) { error in
            XCTAssertTrue("\(error)".contains("unauthorized: Apple refused the token"), "\(error)")
        }
    }

    /// Without the API key nothing reaches Apple: the operator and the audit log read
    /// "not sent" and what to set, never that Apple refused.
    func testAnAnswerWithoutTheAPIKeyIsNotSentAndSaysWhatIsMissing() throws {
        let uuid = try seedRequest()
        let needs = "answering a refund request needs the App Store Server API key: set api_key_file, api_key_id and api_issuer_id in the config file "
            + "(or pass --api-key-file, --api-key-id, --api-issuer-id)"
        XCTAssertThrowsError(try fixture.revalidator(apiKey: false).answerRefundRequest(uuid, answer: consented(), reason: nil)) { error in
            XCTAssertEqual("\(error)", "the answer to refund request \(uuid) was not sent: \(needs)")
            XCTAssertFalse("\(error)".contains("refused"), "\(error)")
        }
        let store = try fixture.openStore()
        XCTAssertEqual(try store.refundRequests.request(uuid: uuid)?.answerOutcome, "not sent: \(needs)")
        XCTAssertEqual(try store.refundRequests.request(uuid: uuid)?.stage(now: TestKit.anchor), .open)
        let audit = try XCTUnwrap(try store.audit.entries().last { $0.action == "refund_answer" })
        XCTAssertEqual(audit.outcome, "not sent: \(needs)")
        XCTAssertTrue(fixture.server.requests.isEmpty, "something reached Apple")

        // The command line says the same, and exits non-zero.
        base = DateText.nowMillis() - 3_600_000
        let other = "c0a50000-0000-4000-8000-000000000009"
        try ingest(consumptionRequest(uuid: other, reason: "OTHER", signed: base))
        let cli = try fixture.subdesk(["refunds", "answer", other, "--consented", "--preference", "GRANT_FULL", "--yes"]
                                      + fixture.commandLineFlagsWithoutKey)
        XCTAssertEqual(cli.status, 1, cli.output)
        // The command line names the config file it reads.
        let cliNeeds = "answering a refund request needs the App Store Server API key: set api_key_file, api_key_id and api_issuer_id "
            + "in the config file /"
        XCTAssertTrue(cli.output.contains("was not sent: \(cliNeeds)"), cli.output)
        XCTAssertTrue(cli.output.contains("(or pass --api-key-file, --api-key-id, --api-issuer-id)"), cli.output)
        XCTAssertFalse(cli.output.contains("Apple did not take the answer"), cli.output)
        XCTAssertTrue(try fixture.openStore().audit.entries().last { $0.action == "refund_answer" }?.outcome.hasPrefix("not sent: \(cliNeeds)") == true)
        XCTAssertTrue(fixture.server.requests.isEmpty, "something reached Apple")

        // The metrics count them as never sent, not as refused by Apple.
        let metrics = OnCallMetrics.exposition(OnCallInputs(reading: try OnCallReading.read(from: fixture.openStore(), now: DateText.nowMillis()),
                                                            roots: [], quarantineBudgetBytes: nil))
        XCTAssertTrue(metrics.contains("subdesk_refund_answers_total{outcome=\"not_sent\"} 2"), metrics)
        XCTAssertTrue(metrics.contains("subdesk_refund_answers_total{outcome=\"refused\"} 0"), metrics)
    }

    func testALateAnswerAppleRefusesIsKeptAuditedAndLeftOpen() throws {
        let uuid = try seedRequest()
        // This fake Apple counts its deadline from an earlier moment than the store knows
        // (the notification was delayed): it refuses the answer as Apple would a late one.
        fixture.server.route("PUT", path, RevalidationFixture.apiError(400, code: 4000000, message: "Bad Request."))
        XCTAssertThrowsError(try fixture.revalidator().answerRefundRequest(uuid, answer: consented(), reason: nil)) { error in
            XCTAssertTrue("\(error)".contains("did not take the answer"), "\(error)")
        }
        let store = try fixture.openStore()
        let item = try XCTUnwrap(try store.refundRequests.request(uuid: uuid))
        XCTAssertTrue(item.answerOutcome?.hasPrefix("refused: ") == true, item.answerOutcome ?? "nil")
        XCTAssertEqual(item.stage(now: TestKit.anchor), .open, "a refused answer may be corrected and sent again")
        let audit = try XCTUnwrap(try store.audit.entries().first { $0.action == "refund_answer" })
        XCTAssertTrue(audit.outcome.hasPrefix("refused: "), audit.outcome)
        XCTAssertTrue(audit.outcome.contains("4000000"), audit.outcome)
        let metrics = OnCallMetrics.exposition(OnCallInputs(reading: try OnCallReading.read(from: store, now: TestKit.anchor),
                                                            roots: [], quarantineBudgetBytes: nil))
        XCTAssertTrue(metrics.contains("subdesk_refund_answers_total{outcome=\"refused\"} 1"), metrics)
        XCTAssertTrue(metrics.contains("subdesk_refund_answers_total{outcome=\"not_sent\"} 0"), metrics)
    }

    func testTheAutomaticPolicyAnswersOpenRequestsOnly() throws {
        try seedRequest()
        fixture.server.route("PUT", path, FakeAppleServer.Response(status: 202))
        XCTAssertThrowsError(try fixture.revalidator().answerRefundRequests(policy: RefundPolicy(consent: true, rule: .manual)))
        // A withheld month is not delivered: decline-if-delivered grants it.
        let store = try fixture.openStore()
        _ = try Operations(store: store, operatorName: "ana").revoke(otid, reason: "fraud check", now: TestKit.anchor - 4 * TestKit.day)
        let results = try fixture.revalidator().answerRefundRequests(policy: RefundPolicy(consent: true, rule: .declineIfDelivered))
        XCTAssertEqual(results.count, 1)
        XCTAssertNil(results[0].error)
        let sent = try XCTUnwrap(fixture.server.requests("PUT", path).first?.json)
        XCTAssertEqual(sent["deliveryStatus"] as? String, "UNDELIVERED_OTHER")
        XCTAssertEqual(sent["refundPreference"] as? String, "GRANT_FULL")
        XCTAssertEqual(try store.audit.entries().first { $0.action == "refund_answer" }?.reason, "refund_policy decline-if-delivered")
        // Answered requests are not answered again.
        XCTAssertTrue(try fixture.revalidator().answerRefundRequests(policy: RefundPolicy(consent: true, rule: .grant)).isEmpty)
        XCTAssertEqual(fixture.server.requests("PUT", path).count, 1)
    }

    func testWithoutConsentTheAutomaticPolicySendsNothing() throws {
        try seedRequest()
        let results = try fixture.revalidator().answerRefundRequests(policy: RefundPolicy(consent: false, rule: .grant))
        XCTAssertEqual(results.count, 1)
        XCTAssertTrue(results[0].error?.contains("not consented") == true, results[0].error ?? "nil")
        XCTAssertTrue(fixture.server.requests.isEmpty)
    }

    func testRefundOrDeclineClosesTheItemInEitherOrder() throws {
        let uuid = try seedRequest()
        try ingest(decision("REFUND_DECLINED", signed: asked + 3_600_000))
        let store = try fixture.openStore()
        var item = try XCTUnwrap(try store.refundRequests.request(uuid: uuid))
        XCTAssertEqual(item.stage(now: TestKit.anchor), .declined)
        XCTAssertEqual(item.closed, asked + 3_600_000)
        XCTAssertTrue(try store.refundRequests.queue(includeClosed: false).isEmpty, "a decided request leaves the queue")
        XCTAssertEqual(try store.refundRequests.queue(includeClosed: true).map(\.notificationUUID), [uuid])
        XCTAssertThrowsError(try fixture.revalidator().answerRefundRequest(uuid, answer: consented(), reason: nil)) { error in
            XCTAssertTrue("\(error)".contains("already decided"), "\(error)")
        }

        // A second request, asked after the first was declined: its REFUND arrives first,
        // the CONSUMPTION_REQUEST late, and the item is born closed.
        let other = "c0a50000-0000-4000-8000-000000000002"
        try ingest(decision("REFUND", signed: asked + 7_200_000))
        try ingest(consumptionRequest(uuid: other, reason: "OTHER", signed: asked + 5_400_000))
        item = try XCTUnwrap(try store.refundRequests.request(uuid: other))
        XCTAssertEqual(item.stage(now: TestKit.anchor), .refunded)
        XCTAssertEqual(item.closedBy, "REFUND")
    }

    func testTheMigrationOpensItemsForRequestsAlreadyStored() throws {
        try XCTSkipIf(PostgresLocation.isPostgres(fixture.storePath),
                      "SQLite's migration 12; a PostgreSQL store starts with its refund tables")
        let uuid = try seedRequest()
        try ingest(decision("REFUND", signed: asked + 3_600_000))
        try SQLiteConnection(path: fixture.storePath).execute("""
            DROP TRIGGER refund_request_open; DROP TRIGGER refund_request_close; DROP TABLE refund_requests;
            DROP TABLE metrics_pending; DROP TABLE metric_segments; DROP TABLE metric_segments_pending; DROP TABLE metric_segments_catchup;
            ALTER TABLE verified_chains DROP COLUMN seal; DROP INDEX notifications_rescind; ALTER TABLE notifications DROP COLUMN grace_expires_ms;
            DROP TABLE intake_counts; DROP INDEX audit_log_action;
            ALTER TABLE quarantine DROP COLUMN reason_kind; ALTER TABLE intake_log DROP COLUMN reason_kind;
            \(TestKit.undoAppColumns(tables: ["subscriptions", "notifications", "quarantine", "backfill_runs"]))
            \(TestKit.undoLaterTables)
            PRAGMA user_version = 11;
            """)
        let reopened = try fixture.openStore()
        let item = try XCTUnwrap(try reopened.refundRequests.request(uuid: uuid))
        XCTAssertEqual(item.stage(now: TestKit.anchor), .refunded)
        XCTAssertEqual(item.transactionId, renewalId)
    }

    /// The real `subdesk refunds`: the queue as JSON, an answer sent to the fake Apple and
    /// audited, and the decision that closes the item.
    func testTheCommandLineListsAnswersAndFollowsARequest() throws {
        let binary = try RevalidationFixture.subdeskBinary()
        base = DateText.nowMillis() - 3_600_000
        let uuid = try seedRequest()
        fixture.server.route("PUT", path, FakeAppleServer.Response(status: 202))
        let home = fixture.directory.path
        func subdesk(_ words: [String], apple: Bool = true) throws -> (status: Int32, output: String) {
            try ChildOutput.run(binary, words + (apple ? fixture.commandLineFlags + ["--operator", "ana"] : ["--db", fixture.storePath]),
                                environment: ["XDG_CONFIG_HOME": home, "HOME": home, "PATH": "/usr/bin:/bin"])
        }
        let listed = try subdesk(["refunds", "--json"])
        XCTAssertEqual(listed.status, 0, listed.output)
        let items = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(listed.output.utf8)) as? [[String: Any]], listed.output)
        XCTAssertEqual(items.count, 1)
        XCTAssertEqual(items[0]["notificationUUID"] as? String, uuid)
        XCTAssertEqual(items[0]["stage"] as? String, "open")
        XCTAssertEqual(items[0]["consumptionRequestReason"] as? String, "UNINTENDED_PURCHASE")
        let left = try XCTUnwrap(items[0]["secondsLeft"] as? Int)
        XCTAssertTrue((9 * 3600 - 120...9 * 3600).contains(left), "\(left) s left of 12 h asked 3 h ago")

        let shown = try subdesk(["refunds", otid])
        XCTAssertEqual(shown.status, 0, shown.output)
        print("$ subdesk refunds \(otid)\n" + shown.output)
        XCTAssertTrue(shown.output.contains("delivered       DELIVERED"), shown.output)
        XCTAssertTrue(shown.output.contains("sample content  yes: a free trial from"), shown.output)
        XCTAssertTrue(shown.output.contains("no consent on record"), shown.output)

        let unconsented = try subdesk(["refunds", "answer", otid, "--yes"])
        XCTAssertEqual(unconsented.status, 2, unconsented.output)
        XCTAssertTrue(unconsented.output.contains("has not consented"), unconsented.output)
        let auto = try subdesk(["refunds", "--auto"])
        XCTAssertEqual(auto.status, 2, auto.output)
        XCTAssertTrue(auto.output.contains("refund_policy is manual"), auto.output)
        XCTAssertTrue(fixture.server.requests.isEmpty)

        let sent = try subdesk(["refunds", "answer", otid, "--consented", "--preference", "GRANT_FULL", "--yes", "--reason", "charged twice"])
        XCTAssertEqual(sent.status, 0, sent.output)
        print("$ subdesk refunds answer \(otid) --consented --preference GRANT_FULL --yes --reason 'charged twice'\n" + sent.output)
        XCTAssertTrue(sent.output.contains("Apple accepted the answer for \(uuid): DELIVERED, sample provided, GRANT_FULL"), sent.output)
        let body = try XCTUnwrap(fixture.server.requests("PUT", path).first?.json)
        XCTAssertEqual(body["refundPreference"] as? String, "GRANT_FULL")
        let audit = try subdesk(["audit"], apple: false)
        XCTAssertTrue(audit.output.contains("refund_answer"), audit.output)
        XCTAssertTrue(audit.output.contains("charged twice"), audit.output)

        try ingest(decision("REFUND", signed: DateText.nowMillis()))
        let all = try subdesk(["refunds", "--all"])
        XCTAssertTrue(all.output.split(separator: "\n").dropFirst().first?.hasPrefix("refunded") == true, "under the header: \(all.output)")
        XCTAssertEqual(try subdesk(["refunds"]).output, "no open refund requests (--all lists decided ones)\n")
    }

    /// The config keys the help names are keys the config file takes, and the refund
    /// settings are read, or refused with what they may be.
    func testTheRefundSettingsAndEveryDocumentedKeyAreAccepted() throws {
        let configuration = try Configuration(text: """
            quarantine_budget_mb = 64
            refund_consent = yes
            refund_policy = decline-if-delivered
            """, source: "config")
        XCTAssertEqual(try RefundPolicy(configuration: configuration), RefundPolicy(consent: true, rule: .declineIfDelivered))
        XCTAssertEqual(try RefundPolicy(configuration: Configuration()), RefundPolicy(consent: false, rule: .manual))
        XCTAssertThrowsError(try RefundPolicy(configuration: Configuration(text: "refund_policy = sometimes", source: "config"))) { error in
            XCTAssertTrue("\(error)".contains("manual, facts, decline-if-delivered, grant, decline"), "\(error)")
        }
    }
}
