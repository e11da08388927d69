import Foundation
import XCTest
import SubdeskTestKit
import SubscriptionCore
import SubdeskScenarios
import FakeApple
import TerminalUI
@testable import Dashboard

/// `:refunds` on the demo store (one request open, asked three hours ago; one refunded):
/// the queue, the facts of the selected request, `a` and `:answer` confirmed before the
/// fake Apple is asked, and the answer audited; `:extend all` followed to completion.
final class RefundScreenTests: XCTestCase, RunsOnEveryEngine {
    /// The demo's renewals scenario: its customer asked for a refund three hours before the anchor.
    let open = "2000000400000301"
    var renewal: String { "2000000400000304" }

    func testTheQueueShowsDeadlinesFactsAndTheSuggestedAnswer() throws {
        let session = DashboardFixture.session(try DashboardFixture.demoStore(), width: 120, height: 40)
        session.type(.char(":"))
        session.type("refunds")
        session.type(.enter)
        let screen = session.screenText
        XCTAssertTrue(screen.contains("1 refund request awaiting Apple (answer due 12 h after asking) · 1 closed"), screen)
        let rows = screen.components(separatedBy: "\n")
        let first = try XCTUnwrap(rows.first { $0.contains(open) }, screen)
        XCTAssertTrue(first.contains("9h00m left"), first)
        XCTAssertTrue(first.contains("UNINTENDED_PURCHASE"), first)
        XCTAssertTrue(first.contains("delivered"), first)
        let decided = try XCTUnwrap(rows.first { $0.contains("refunded") }, screen)
        XCTAssertTrue(decided.contains("UNSATISFIED_WITH_PURCHASE"), decided)
        XCTAssertTrue(screen.contains("delivered: DELIVERED, entitled from"), screen)
        XCTAssertTrue(screen.contains("a sends: DELIVERED, no sample, DECLINE (no consent on record: :answer PREF consented)"), screen)
        // Without consent on record, `a` refuses before anything is asked.
        session.type(.char("a"))
        XCTAssertNil(session.state.confirmation)
        XCTAssertTrue(session.state.flash?.text.contains("has not consented") == true, "\(String(describing: session.state.flash))")
        session.type(.enter)
        XCTAssertEqual(session.state.screen, .detail)
        XCTAssertTrue(session.screenText.contains("refund request (UNINTENDED_PURCHASE): 9h00m left"), session.screenText)
    }

    /// Without the App Store Server API key settings, every action that needs Apple refuses
    /// at once, before y/n: `:answer` and `a`, `:apple`, `:ping`, `:backfill`, `:link … apple`.
    func testEveryActionThatNeedsAppleRefusesBeforeAskingWithoutTheKey() throws {
        var state = DashboardFixture.state(width: 120, height: 40)
        state.withoutServerAPIKey = true
        let session = DashboardSession(store: try DashboardFixture.demoStore(), state: state, clock: { DashboardFixture.anchor })
        session.start()
        session.command("refunds")
        session.command("answer DECLINE consented")
        XCTAssertNil(session.state.confirmation, "asked y/n for an answer that cannot be sent")
        XCTAssertEqual(session.state.flash?.text,
                       "answering a refund request needs the App Store Server API key: set api_key_file, api_key_id and api_issuer_id in the config file "
                       + "(or pass --api-key-file, --api-key-id, --api-issuer-id)")
        session.type(.escape)
        session.command("ping")
        XCTAssertNil(session.state.pingStarted)
        XCTAssertTrue(session.state.flash?.text.hasPrefix("ping (Request a Test Notification) needs the App Store Server API") == true,
                      "\(String(describing: session.state.flash))")
        session.type(.escape)
        session.command("backfill 3")
        XCTAssertTrue(session.state.flash?.text.hasPrefix("a backfill (Get Notification History) needs") == true,
                      "\(String(describing: session.state.flash))")
        session.type(.escape)
        session.command("subs")
        session.type(.enter)
        XCTAssertEqual(session.state.screen, .detail)
        session.command("link user-77 apple")
        XCTAssertNil(session.state.confirmation)
        XCTAssertTrue(session.state.flash?.text.hasPrefix("setting the app account token at Apple needs") == true,
                      "\(String(describing: session.state.flash))")
        session.type(.escape)
        session.command("apple")
        XCTAssertTrue(session.state.flash?.text.hasPrefix("asking Apple for refund history and the latest transaction needs") == true,
                      "\(String(describing: session.state.flash))")
        XCTAssertFalse(session.state.messages.contains { $0.text.contains("was not sent") })
    }

    func testAnAnswerIsConfirmedSentAndAudited() throws {
        let fixture = try AppleSessionFixture(refundPolicy: RefundPolicy(consent: true, rule: .manual))
        defer { fixture.tearDown() }
        let path = "/prod/inApps/v2/transactions/consumption/\(renewal)"
        fixture.apple.route("PUT", path, FakeAppleServer.Response(status: 202))
        let session = fixture.session
        fixture.command("refunds")
        fixture.command("answer GRANT_PRORATED")
        XCTAssertTrue(session.state.flash?.text.contains("GRANT_PRORATED needs") == true, "\(String(describing: session.state.flash))")
        fixture.command("answer GRANT_FULL")
        XCTAssertTrue(session.screenText.contains("Send Apple DELIVERED, no sample, GRANT_FULL for \(open)? y: yes"), session.screenText)
        session.type(.char("n"))
        XCTAssertTrue(fixture.apple.requests.isEmpty, "n asks nothing of Apple")
        session.type(.char("a"))
        XCTAssertTrue(session.screenText.contains("Send Apple DELIVERED, no sample, DECLINE for \(open)? y: yes"), session.screenText)
        session.type(.char("y"))
        XCTAssertTrue(session.waitForBackgroundWork(timeout: 20))
        XCTAssertEqual(session.state.messages.last?.text, "Apple accepted the answer for \(open): DELIVERED, no sample, DECLINE")
        let sent = try XCTUnwrap(fixture.apple.requests("PUT", path).first?.json)
        XCTAssertEqual(sent["refundPreference"] as? String, "DECLINE")
        XCTAssertEqual(sent["customerConsented"] as? Bool, true)
        XCTAssertTrue(session.screenText.contains("answered"), session.screenText)
        let audit = try XCTUnwrap(try Store(path: fixture.path).audit.entries().first { $0.action == "refund_answer" })
        XCTAssertEqual(audit.operatorName, "ana")
        XCTAssertEqual(audit.target, open)
    }

    func testExtendAllIsConfirmedAndFollowedUntilAppleIsDone() throws {
        let fixture = try AppleSessionFixture()
        defer { fixture.tearDown() }
        nonisolated(unsafe) var polls = 0
        let session = fixture.session
        fixture.command("extend all app.monthly@USA,CAN 95 3 outage")
        XCTAssertTrue(session.state.flash?.text.contains("1 to 90 days") == true, "\(String(describing: session.state.flash))")
        fixture.command("extend all app.monthly@usa,can 3 3 outage on 11-20")
        XCTAssertTrue(session.screenText.contains("Extend EVERY active subscriber of app.monthly in USA,CAN by 3 days at Apple (code 3)? y: yes"),
                      session.screenText)
        // Apple reports it complete on the second look.
        let requested = fixture.apple
        requested.route("POST", "/prod/inApps/v1/subscriptions/extend/mass") { request in
            let id = request.json?["requestIdentifier"] as? String ?? "?"
            requested.route("GET", "/prod/inApps/v1/subscriptions/extend/mass/app.monthly/\(id)") { _ in
                polls += 1
                return .json(["requestIdentifier": id, "complete": polls >= 2, "completeDate": DashboardFixture.anchor,
                              "succeededCount": 30, "failedCount": 2])
            }
            return FakeAppleServer.Response(status: 200)
        }
        session.type(.char("y"))
        XCTAssertTrue(session.waitForBackgroundWork(timeout: 30))
        XCTAssertEqual(session.state.messages.last?.text, "Apple extended 30 subscribers of app.monthly by 3 days (2 failed)")
        let sent = try XCTUnwrap(fixture.apple.requests("POST", "/prod/inApps/v1/subscriptions/extend/mass").first?.json)
        XCTAssertEqual(sent["storefrontCountryCodes"] as? [String], ["USA", "CAN"])
        XCTAssertEqual(sent["extendByDays"] as? Int, 3)
        XCTAssertTrue(try Store(path: fixture.path).audit.entries().contains { $0.action == "extend_all" && $0.outcome.hasPrefix("complete: 30 extended") })
    }

    /// `:apple` on a detail asks Apple for the refund history and the latest transaction on a
    /// worker, stores what it verifies, and reloads the detail.
    func testAppleOnADetailFetchesTheRefundHistory() throws {
        let fixture = try AppleSessionFixture()
        defer { fixture.tearDown() }
        let signer = try fixture.sample.signer()
        let anchor = DashboardFixture.anchor
        let refunded: [String: Any] = ["transactionId": renewal, "originalTransactionId": open, "productId": "app.monthly",
                                       "bundleId": ScenarioBuilder.demoBundleId, "purchaseDate": anchor - 10 * 86_400_000,
                                       "originalPurchaseDate": anchor - 100 * 86_400_000, "expiresDate": anchor + 20 * 86_400_000,
                                       "signedDate": anchor - 60_000, "environment": "Production", "type": "Auto-Renewable Subscription",
                                       "inAppOwnershipType": "PURCHASED", "revocationDate": anchor - 60_000, "revocationReason": 0,
                                       "price": 9990, "currency": "USD"]
        let jws = try signer.sign(payload: try JSONSerialization.data(withJSONObject: refunded))
        fixture.apple.route("GET", "/prod/inApps/v2/refund/lookup/\(renewal)", .json(["signedTransactions": [jws], "hasMore": false]))
        fixture.apple.route("GET", "/prod/inApps/v1/transactions/\(renewal)", .json(["signedTransactionInfo": jws]))
        let session = fixture.session
        fixture.command("apple")
        XCTAssertTrue(session.state.flash?.text.contains("works on a subscription's detail") == true)
        session.type(.char("/"))
        session.type(open)
        session.type(.enter, .enter)
        fixture.command("apple")
        XCTAssertTrue(session.waitForBackgroundWork(timeout: 20))
        XCTAssertEqual(session.state.messages.last?.text, "Apple: refunded \(renewal); latest transaction \(renewal) stored")
        XCTAssertTrue(session.screenText.contains("REVOKED"), session.screenText)
        XCTAssertTrue(try Store(path: fixture.path).audit.entries().contains { $0.action == "refund_history" && $0.target == open })
    }

    /// `:link USER apple` on a detail links the user id, then sets the subscriber's app
    /// account token at Apple on a worker; both audited.
    func testLinkOnADetailLinksTheUserAndSetsTheTokenAtApple() throws {
        let fixture = try AppleSessionFixture()
        defer { fixture.tearDown() }
        fixture.apple.route("PUT", "/prod/inApps/v1/transactions/\(open)/appAccountToken", FakeAppleServer.Response(status: 200))
        let session = fixture.session
        session.type(.char("/"))
        session.type(open)
        session.type(.enter, .enter)
        fixture.command("link user-7 apple force")
        XCTAssertTrue(session.screenText.contains("Link \(open) to user user-7 (moves it from user user-1004) and set its app account token"),
                      session.screenText)
        session.type(.char("y"))
        XCTAssertTrue(session.waitForBackgroundWork(timeout: 20))
        let message = try XCTUnwrap(session.state.messages.last?.text)
        XCTAssertTrue(message.hasPrefix("linked \(open) to user user-7 (was user-1004); Apple has app account token "), message)
        let sent = try XCTUnwrap(fixture.apple.requests("PUT", "/prod/inApps/v1/transactions/\(open)/appAccountToken").first?.json)
        XCTAssertNotNil(UUID(uuidString: sent["appAccountToken"] as? String ?? ""))
        let audit = try Store(path: fixture.path).audit.entries(targets: [open]).map(\.action)
        XCTAssertTrue(audit.contains("link") && audit.contains("set_app_account_token"), "\(audit)")
        XCTAssertTrue(session.screenText.contains("user user-7"), session.screenText)
    }

    /// `:backfill 3` fetches Apple's notification history on a worker and takes in what had
    /// not arrived; `:gaps` then lists it with Apple's attempts.
    func testBackfillFromTheDashboardFillsTheGaps() throws {
        let fixture = try AppleSessionFixture()
        defer { fixture.tearDown() }
        let scenario = try XCTUnwrap(try fixture.sample.scenarios().first)
        let bodies = try ScenarioBuilder(signer: try fixture.sample.signer())
            .bodies(for: scenario, instance: 90, anchor: DashboardFixture.anchor - 86_400_000)
        let payloads = try bodies.map { body in
            try XCTUnwrap((try JSONSerialization.jsonObject(with: body) as? [String: Any])?["signedPayload"] as? String)
        }
        fixture.apple.route("POST", "/prod/inApps/v1/notifications/history") { _ in
            .json(["hasMore": false, "notificationHistory": payloads.map { p in
                ["signedPayload": p, "sendAttempts": [["attemptDate": DashboardFixture.anchor - 600_000, "sendAttemptResult": "TIMED_OUT"]]] as [String: Any]
            }])
        }
        let session = fixture.session
        fixture.command("backfill 200")
        XCTAssertTrue(session.state.flash?.text.contains("1 to 180 days back") == true, "\(String(describing: session.state.flash))")
        fixture.command("backfill 3 failures")
        XCTAssertTrue(session.waitForBackgroundWork(timeout: 20))
        XCTAssertEqual(session.state.messages.last?.text,
                       "backfill #1: 1 page: \(payloads.count) new, 0 duplicates, 0 rejected; :gaps lists what had not arrived")
        let asked = try XCTUnwrap(fixture.apple.requests("POST", "/prod/inApps/v1/notifications/history").first?.json)
        XCTAssertEqual(asked["onlyFailures"] as? Bool, true)
        XCTAssertEqual(asked["startDate"] as? Int64, DashboardFixture.anchor - 3 * 86_400_000)
        fixture.command("gaps")
        XCTAssertTrue(session.screenText.contains("\(payloads.count) notification"), session.screenText)
        XCTAssertTrue(session.screenText.contains("TIMED_OUT"), session.screenText)
    }
}
