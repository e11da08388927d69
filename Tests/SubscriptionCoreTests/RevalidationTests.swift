import Foundation
import XCTest
import SubdeskTestKit
import FakeApple
@testable import SubscriptionCore
import SubdeskScenarios

/// Revalidation against the App Store Server API and verifyReceipt, both played by a
/// local HTTP server. One class, its tests spread over `RevalidationTests+*.swift`, so
/// that `--filter RevalidationTests` runs every one of them.
final class RevalidationTests: XCTestCase, RunsOnEveryEngine {
    var fixture: RevalidationFixture!
    let day = TestKit.day
    let anchor = TestKit.anchor
    let otid = "2000000900000001"

    override func setUpWithError() throws {
        fixture = try RevalidationFixture()
    }

    override func tearDown() {
        fixture.tearDown()
        fixture = nil
    }

    /// A monthly subscription bought 40 days before the anchor, whose only known period
    /// ended 10 days ago: stored as expired.
    @discardableResult
    func seedLapsed(receivedAt: Millis? = nil) throws -> (first: [String: Any], renewal: [String: Any]) {
        let first = TestKit.transaction(id: otid, original: otid, purchase: anchor - 40 * day, expires: anchor - 10 * day,
                                        signed: anchor - 40 * day)
        let renewal = TestKit.renewal(original: otid, signed: anchor - 40 * day)
        try fixture.seed(transaction: first, renewal: renewal, receivedAt: receivedAt ?? anchor)
        return (first, renewal)
    }

    /// The renewal Apple made 10 days ago and never told us about.
    var unseenRenewal: [String: Any] {
        TestKit.transaction(id: "2000000900000002", original: otid, purchase: anchor - 10 * day, expires: anchor + 20 * day,
                            signed: anchor - 10 * day, extra: ["transactionReason": "RENEWAL"])
    }

    var freshRenewalInfo: [String: Any] { TestKit.renewal(original: otid, signed: anchor - 10 * day) }

    func testStatusesAndHistoryAreMergedAndExpiredBecomesActive() throws {
        let seeded = try seedLapsed()
        XCTAssertEqual(try fixture.state(otid)?.status, .expired)
        fixture.answer(otid, statuses: RevalidationFixture.statuses([(1, unseenRenewal, freshRenewalInfo)]),
                       history: RevalidationFixture.history([seeded.first, unseenRenewal]))

        let result = try fixture.revalidator().revalidate(otid, reason: "customer says they renewed")

        XCTAssertEqual(result.source, .serverAPI(environment: .production))
        XCTAssertEqual(result.before?.status, .expired)
        XCTAssertEqual(result.after?.status, .active)
        XCTAssertEqual(result.after?.expiresDate, anchor + 20 * day)
        XCTAssertEqual(result.outcome, .renewed)
        XCTAssertEqual(result.newTransactionIds, ["2000000900000002"])
        XCTAssertEqual(result.appleStatus, 1)
        XCTAssertFalse(result.disagreesWithApple)
        XCTAssertTrue(result.changes.contains("status EXPIRED -> ACTIVE"), "\(result.changes)")
        let store = try fixture.openStore()
        XCTAssertEqual(try store.subscriptions.find(originalTransactionId: otid)?.state.latestTransactionId, "2000000900000002")
        XCTAssertNotNil(try store.transactions.find(id: "2000000900000002"))

        let audit = try store.audit.entries(targets: [otid])
        XCTAssertEqual(audit.count, 1)
        let entry = try XCTUnwrap(audit.first)
        XCTAssertEqual(entry.id, result.auditId)
        XCTAssertEqual(entry.action, "revalidate")
        XCTAssertEqual(entry.operatorName, "ana")
        XCTAssertEqual(entry.reason, "customer says they renewed")
        XCTAssertTrue(entry.outcome.hasPrefix("renewed: status EXPIRED -> ACTIVE"), entry.outcome)
        XCTAssertTrue(entry.detail?.contains("App Store Server API (Production)") ?? false, entry.detail ?? "")
        // The operator's action shows on the subscription's timeline.
        let report = try XCTUnwrap(try SubscriberReport.load(store: store, id: otid, now: anchor))
        XCTAssertTrue(report.subscriptions[0].timeline.contains { $0.kind == .operatorAction("revalidate") })
    }

    func testTheServerReceivesAValidES256TokenWithTheRightClaims() throws {
        let seeded = try seedLapsed()
        fixture.answer(otid, statuses: RevalidationFixture.statuses([(1, unseenRenewal, freshRenewalInfo)]),
                       history: RevalidationFixture.history([seeded.first, unseenRenewal]))
        let before = Int64(Date().timeIntervalSince1970)
        _ = try fixture.revalidator().revalidate(otid)
        let after = Int64(Date().timeIntervalSince1970)

        let requests = fixture.server.requests
        XCTAssertEqual(requests.map(\.path), ["/prod/inApps/v1/subscriptions/\(otid)", "/prod/inApps/v2/history/\(otid)"])
        for request in requests {
            let authorization = try XCTUnwrap(request.headers["authorization"])
            XCTAssertTrue(authorization.hasPrefix("Bearer "))
            let parts = authorization.dropFirst("Bearer ".count).split(separator: ".").map(String.init)
            XCTAssertEqual(parts.count, 3)
            let header = try JSONSerialization.jsonObject(with: XCTUnwrap(Base64URL.decode(parts[0]))) as? [String: Any]
            XCTAssertEqual(header?["alg"] as? String, "ES256")
            XCTAssertEqual(header?["kid"] as? String, RevalidationFixture.keyId)
            XCTAssertEqual(header?["typ"] as? String, "JWT")
            let claims = try XCTUnwrap(try JSONSerialization.jsonObject(with: XCTUnwrap(Base64URL.decode(parts[1]))) as? [String: Any])
            XCTAssertEqual(claims["iss"] as? String, RevalidationFixture.issuerId)
            XCTAssertEqual(claims["aud"] as? String, "appstoreconnect-v1")
            XCTAssertEqual(claims["bid"] as? String, ScenarioBuilder.demoBundleId)
            let iat = try XCTUnwrap((claims["iat"] as? NSNumber)?.int64Value)
            let exp = try XCTUnwrap((claims["exp"] as? NSNumber)?.int64Value)
            XCTAssertTrue((before - 1)...(after + 1) ~= iat, "iat \(iat) is not the time of the request")
            XCTAssertGreaterThan(exp, iat)
            XCTAssertLessThanOrEqual(exp - iat, 3600, "Apple refuses tokens living over an hour")
            let signature = try XCTUnwrap(Base64URL.decode(parts[2]))
            let signingInput = Data((parts[0] + "." + parts[1]).utf8)
            XCTAssertTrue(RevalidationKeys.opensslVerifies(message: signingInput, rawSignature: signature),
                          "the token's signature does not verify with the key's public half")
            var forged = signingInput
            forged[forged.count - 1] ^= 1
            XCTAssertFalse(RevalidationKeys.opensslVerifies(message: forged, rawSignature: signature))
        }
        XCTAssertEqual(requests.last?.query["sort"], "ASCENDING")
    }

    func testHistoryIsFollowedPageByPageWithRevision() throws {
        let seeded = try seedLapsed()
        let middle = TestKit.transaction(id: "2000000900000003", original: otid, purchase: anchor - 10 * day,
                                         expires: anchor + 20 * day, signed: anchor - 10 * day)
        let latest = TestKit.transaction(id: "2000000900000004", original: otid, purchase: anchor - 2 * day,
                                         expires: anchor + 28 * day, signed: anchor - 2 * day)
        fixture.server.route("GET", "/prod/inApps/v1/subscriptions/\(otid)",
                             RevalidationFixture.statuses([(1, latest, TestKit.renewal(original: otid, signed: anchor - 2 * day))]))
        fixture.server.route("GET", "/prod/inApps/v2/history/\(otid)") { request in
            switch request.query["revision"] {
            case nil: return RevalidationFixture.history([seeded.first], revision: "rev-1", hasMore: true)
            case "rev-1": return RevalidationFixture.history([middle], revision: "rev-2", hasMore: true)
            case "rev-2": return RevalidationFixture.history([latest], revision: "rev-3", hasMore: false)
            default: return .json(["errorCode": 4000000, "errorMessage": "unexpected revision"], status: 400)
            }
        }

        let result = try fixture.revalidator().revalidate(otid)

        let pages = fixture.server.requests("GET", "/prod/inApps/v2/history/\(otid)")
        XCTAssertEqual(pages.map { $0.query["revision"] ?? "-" }, ["-", "rev-1", "rev-2"])
        XCTAssertEqual(result.newTransactionIds, ["2000000900000003", "2000000900000004"])
        XCTAssertEqual(result.after?.expiresDate, anchor + 28 * day)
        let store = try fixture.openStore()
        XCTAssertEqual(try store.subscriptions.history(originalTransactionId: otid).transactions.count, 3)
    }

    func testHistoryThatNeverStopsIsRefusedAfterThePageLimit() throws {
        try seedLapsed()
        fixture.server.route("GET", "/prod/inApps/v1/subscriptions/\(otid)",
                             RevalidationFixture.statuses([(1, unseenRenewal, freshRenewalInfo)]))
        fixture.server.route("GET", "/prod/inApps/v2/history/\(otid)",
                             RevalidationFixture.history([unseenRenewal], revision: "same", hasMore: true))
        XCTAssertThrowsError(try fixture.revalidator().revalidate(otid)) { error in
            XCTAssertTrue("\(error)".contains("revision did not advance"), "\(error)")
        }
        XCTAssertNil(try fixture.openStore().transactions.find(id: "2000000900000002"), "nothing merged")
    }

    func testTransactionIdNotFoundInProductionFallsBackToSandbox() throws {
        let sandboxFirst = TestKit.transaction(id: otid, original: otid, purchase: anchor - 40 * day, expires: anchor - 10 * day,
                                               signed: anchor - 40 * day, environment: "Sandbox")
        try fixture.seed(transaction: sandboxFirst, renewal: TestKit.renewal(original: otid, signed: anchor - 40 * day, environment: "Sandbox"),
                         receivedAt: anchor)
        let renewed = TestKit.transaction(id: "2000000900000002", original: otid, purchase: anchor - 10 * day,
                                          expires: anchor + 20 * day, signed: anchor - 10 * day, environment: "Sandbox")
        let renewal = TestKit.renewal(original: otid, signed: anchor - 10 * day, environment: "Sandbox")
        fixture.server.route("GET", "/prod/inApps/v1/subscriptions/\(otid)",
                             RevalidationFixture.apiError(404, code: 4040010, message: "Transaction id not found."))
        fixture.answer(otid, prefix: "/sandbox", statuses: RevalidationFixture.statuses(environment: "Sandbox", [(1, renewed, renewal)]),
                       history: RevalidationFixture.history(environment: "Sandbox", [sandboxFirst, renewed]))

        let result = try fixture.revalidator().revalidate(otid)

        XCTAssertEqual(result.source, .serverAPI(environment: .sandbox))
        XCTAssertEqual(result.after?.status, .active)
        XCTAssertEqual(fixture.server.requests.map(\.path), [
            "/prod/inApps/v1/subscriptions/\(otid)", "/sandbox/inApps/v1/subscriptions/\(otid)", "/sandbox/inApps/v2/history/\(otid)",
        ], "production first, then only the sandbox")
    }

    func testATransactionNeitherEnvironmentKnowsIsAnAuditedFailure() throws {
        try seedLapsed()
        let notFound = RevalidationFixture.apiError(404, code: 4040010, message: "Transaction id not found.")
        fixture.server.route("GET", "/prod/inApps/v1/subscriptions/\(otid)", notFound)
        fixture.server.route("GET", "/sandbox/inApps/v1/subscriptions/\(otid)", notFound)
        XCTAssertThrowsError(try fixture.revalidator().revalidate(otid)) { error in
            XCTAssertEqual(error as? RevalidationError, .transactionNotFound(transactionId: otid, environments: ["Production", "Sandbox"]))
            XCTAssertEqual("\(error)", "transaction id \(otid) not found in Production or Sandbox (App Store Server API error 4040010)")
        }
        let audit = try fixture.openStore().audit.entries(targets: [otid])
        XCTAssertEqual(audit.map(\.outcome), ["failed"])
        XCTAssertTrue(audit[0].detail?.contains("not found in Production or Sandbox") ?? false)
    }

    func testA429IsWaitedOutForRetryAfterThenSucceeds() throws {
        let seeded = try seedLapsed()
        fixture.server.route("GET", "/prod/inApps/v1/subscriptions/\(otid)",
                             RevalidationFixture.apiError(429, code: 4290000, message: "Rate limit exceeded.", headers: ["Retry-After": "1"]),
                             RevalidationFixture.statuses([(1, unseenRenewal, freshRenewalInfo)]))
        fixture.server.route("GET", "/prod/inApps/v2/history/\(otid)", RevalidationFixture.history([seeded.first, unseenRenewal]))
        let started = Date()
        let result = try fixture.revalidator().revalidate(otid)
        let elapsed = Date().timeIntervalSince(started)
        XCTAssertEqual(result.after?.status, .active)
        XCTAssertEqual(fixture.server.requests("GET", "/prod/inApps/v1/subscriptions/\(otid)").count, 2)
        XCTAssertGreaterThanOrEqual(elapsed, 0.95, "Retry-After: 1 was not honoured")
    }

    func testARetryAfterDelayLongerThanWeWaitStopsAndSaysWhenToResume() throws {
        try seedLapsed()
        fixture.server.route("GET", "/prod/inApps/v1/subscriptions/\(otid)",
                             RevalidationFixture.apiError(429, code: 4290000, message: "Rate limit exceeded.", headers: ["Retry-After": "3600"]))
        let before = DateText.nowMillis()
        XCTAssertThrowsError(try fixture.revalidator().revalidate(otid)) { error in
            let resumeAt = (error as? RevalidationError)?.rateLimitResumeAt ?? 0
            XCTAssertTrue((before + 3_600_000...before + 3_610_000).contains(resumeAt), "\(error)")
            XCTAssertTrue("\(error)".contains("rate limited by Apple (HTTP 429); Apple asks to wait until \(RevalidationError.resumeText(resumeAt))"),
                          "\(error)")
            XCTAssertTrue((error as? RevalidationError)?.isTransient ?? false)
        }
        XCTAssertEqual(fixture.server.requests.count, 1)
    }

    /// Apple's own form: Retry-After is the UNIX time in milliseconds when the limit lifts.
    /// A few seconds ahead is waited out (and said so), then the request succeeds.
    func testApplesRetryAfterAMomentInMillisecondsIsWaitedOutAndSaid() throws {
        let seeded = try seedLapsed()
        let lifts = DateText.nowMillis() + 1_500
        fixture.server.route("GET", "/prod/inApps/v1/subscriptions/\(otid)",
                             RevalidationFixture.apiError(429, code: 4290000, message: "Rate limit exceeded.", headers: ["Retry-After": String(lifts)]),
                             RevalidationFixture.statuses([(1, unseenRenewal, freshRenewalInfo)]))
        fixture.server.route("GET", "/prod/inApps/v2/history/\(otid)", RevalidationFixture.history([seeded.first, unseenRenewal]))
        let notices = NoticeLog()
        let result = try fixture.revalidator(onRetry: { notices.append($0) }).revalidate(otid)
        XCTAssertEqual(result.after?.status, .active)
        let asked = fixture.server.requests("GET", "/prod/inApps/v1/subscriptions/\(otid)")
        XCTAssertEqual(asked.count, 2)
        XCTAssertGreaterThanOrEqual(DateText.nowMillis(), lifts, "asked again before the moment Apple named")
        XCTAssertEqual(notices.all.count, 1)
        let notice = try XCTUnwrap(notices.all.first)
        XCTAssertTrue(notice.askedByApple)
        XCTAssertLessThan(notice.wait, 2, "the moment was read as seconds, not milliseconds")
        XCTAssertTrue(notice.description.contains("rate limited by Apple (HTTP 429); waiting 1."), notice.description)
        XCTAssertTrue(notice.description.hasSuffix("as Apple asks, then attempt 2 of 3"), notice.description)
    }

    /// A moment far ahead is not waited for, nor asked again: the error names when to resume.
    func testApplesRetryAfterFarAheadStopsWithTheResumeTime() throws {
        try seedLapsed()
        let lifts: Millis = DateText.nowMillis() + 2 * 3_600_000 + 17 * 60_000
        fixture.server.route("GET", "/prod/inApps/v1/subscriptions/\(otid)",
                             RevalidationFixture.apiError(429, code: 4290000, message: "Rate limit exceeded.", headers: ["Retry-After": String(lifts)]))
        XCTAssertThrowsError(try fixture.revalidator().revalidate(otid)) { error in
            XCTAssertEqual((error as? RevalidationError)?.rateLimitResumeAt.map { abs($0 - lifts) < 1000 }, true, "\(error)")
            XCTAssertTrue("\(error)".hasSuffix("Apple asks to wait until \(RevalidationError.resumeText(lifts)): try again after then"), "\(error)")
            XCTAssertFalse("\(error)".contains(" s)"), "no wait in seconds: \(error)")
        }
        XCTAssertEqual(fixture.server.requests.count, 1, "asked again before the limit lifted")
        let audit = try fixture.openStore().audit.entries(targets: [otid])
        XCTAssertTrue(audit.last?.detail?.contains(RevalidationError.resumeText(lifts)) ?? false, audit.last?.detail ?? "nil")
    }

    /// `revalidate --json` fails as JSON too: an error object on stdout, exit 1.
    func testRevalidateJSONPrintsAnErrorObjectOnFailure() throws {
        try seedLapsed()
        let lifts = DateText.nowMillis() + 3_600_000
        fixture.server.route("GET", "/prod/inApps/v1/subscriptions/\(otid)",
                             RevalidationFixture.apiError(429, code: 4290000, message: "Rate limit exceeded.", headers: ["Retry-After": String(lifts)]))
        let run = try fixture.subdesk(["revalidate", otid, "--json"] + fixture.commandLineFlags)
        XCTAssertEqual(run.status, 1, run.output)
        // stdout and stderr arrive together here: the JSON is the part from the line that opens it.
        let start = try XCTUnwrap(run.output.range(of: "\n{")?.lowerBound ?? (run.output.hasPrefix("{") ? run.output.startIndex : nil), run.output)
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(run.output[start...].utf8)) as? [String: Any], run.output)
        let error = try XCTUnwrap(object["error"] as? String)
        XCTAssertTrue(error.hasPrefix("revalidate \(otid): GET "), error)
        XCTAssertTrue(error.contains("Apple asks to wait until \(RevalidationError.resumeText(lifts))"), error)
        XCTAssertEqual(object["exitCode"] as? Int, 1)
        XCTAssertNotNil(object["retryAfter"] as? String)
    }

    /// The codes Apple marks "try again" are tried again with backoff, and succeed.
    func testApplesRetryableErrorCodesAreRetriedThenSucceed() throws {
        let seeded = try seedLapsed()
        fixture.server.route("GET", "/prod/inApps/v1/subscriptions/\(otid)",
                             RevalidationFixture.apiError(404, code: 4040006, message: "Original transaction id not found."),
                             RevalidationFixture.apiError(404, code: 4040002, message: "Account not found."),
                             RevalidationFixture.statuses([(1, unseenRenewal, freshRenewalInfo)]))
        fixture.server.route("GET", "/prod/inApps/v2/history/\(otid)",
                             RevalidationFixture.apiError(404, code: 4040004, message: "App not found."),
                             RevalidationFixture.history([seeded.first, unseenRenewal]))
        let notices = NoticeLog()
        let result = try fixture.revalidator(onRetry: { notices.append($0) }).revalidate(otid)
        XCTAssertEqual(result.outcome, .renewed)
        XCTAssertEqual(fixture.server.requests("GET", "/prod/inApps/v1/subscriptions/\(otid)").count, 3)
        XCTAssertEqual(fixture.server.requests("GET", "/prod/inApps/v2/history/\(otid)").count, 2)
        XCTAssertEqual(fixture.server.requests("GET", "/sandbox/inApps/v1/subscriptions/\(otid)").count, 0,
                       "a retryable not-found is not a reason to ask the sandbox")
        XCTAssertEqual(notices.all.map { $0.description.contains("error 4040006 (original transaction id not found; try again)") }.first, true,
                       notices.all.map(\.description).joined(separator: "\n"))
    }

    func testARetryableErrorCodeThatPersistsNamesTheAttempts() throws {
        try seedLapsed()
        fixture.server.route("GET", "/prod/inApps/v1/subscriptions/\(otid)",
                             RevalidationFixture.apiError(500, code: 5000001, message: "An unknown retryable error occurred."))
        XCTAssertThrowsError(try fixture.revalidator().revalidate(otid)) { error in
            XCTAssertEqual("\(error)", "GET \(fixture.endpoints.serverAPI.absoluteString)/inApps/v1/subscriptions/\(otid): "
                           + "HTTP 500 error 5000001 (general internal error; try again): An unknown retryable error occurred.; failed after 3 attempts")
            XCTAssertTrue((error as? RevalidationError)?.isTransient ?? false)
        }
        XCTAssertEqual(fixture.server.requests.count, 3)
    }

    /// 5000000 is final by Apple's word: asking again brings the same answer.
    func testAGeneralInternalErrorIsNotRetried() throws {
        try seedLapsed()
        fixture.server.route("GET", "/prod/inApps/v1/subscriptions/\(otid)",
                             RevalidationFixture.apiError(500, code: 5000000, message: "An unknown error occurred."))
        XCTAssertThrowsError(try fixture.revalidator().revalidate(otid)) { error in
            XCTAssertEqual("\(error)", "GET \(fixture.endpoints.serverAPI.absoluteString)/inApps/v1/subscriptions/\(otid): "
                           + "HTTP 500 error 5000000 (general internal error): An unknown error occurred.")
        }
        XCTAssertEqual(fixture.server.requests.count, 1)
        XCTAssertEqual(try fixture.state(otid)?.status, .expired, "state untouched")
    }

    func testServerErrorsAreRetriedWithBackoff() throws {
        let seeded = try seedLapsed()
        fixture.server.route("GET", "/prod/inApps/v1/subscriptions/\(otid)",
                             RevalidationFixture.apiError(503, code: 5000001, message: "An unknown retryable error occurred."),
                             FakeAppleServer.Response(status: 502),
                             RevalidationFixture.statuses([(1, unseenRenewal, freshRenewalInfo)]))
        fixture.server.route("GET", "/prod/inApps/v2/history/\(otid)", RevalidationFixture.history([seeded.first, unseenRenewal]))
        let result = try fixture.revalidator().revalidate(otid)
        XCTAssertEqual(result.outcome, .renewed)
        XCTAssertEqual(fixture.server.requests("GET", "/prod/inApps/v1/subscriptions/\(otid)").count, 3)
    }

    func testServerErrorsThatPersistFailAfterTheLastAttempt() throws {
        try seedLapsed()
        fixture.server.route("GET", "/prod/inApps/v1/subscriptions/\(otid)", FakeAppleServer.Response(status: 503))
        XCTAssertThrowsError(try fixture.revalidator().revalidate(otid)) { error in
            XCTAssertEqual("\(error)", "GET \(fixture.endpoints.serverAPI.absoluteString)/inApps/v1/subscriptions/\(otid): "
                           + "HTTP 503: server error; failed after 3 attempts")
        }
        XCTAssertEqual(fixture.server.requests.count, 3)
        XCTAssertEqual(try fixture.state(otid)?.status, .expired, "state untouched")
    }

    func testARefusedTokenIsNamedAndNotRetried() throws {
        try seedLapsed()
        fixture.server.route("GET", "/prod/inApps/v1/subscriptions/\(otid)", .init(status: 401))
        XCTAssertThrowsError(try fixture.revalidator().revalidate(otid)) { error in
            XCTAssertTrue("\(error)".contains("HTTP 401: unauthorized: Apple refused the token"), "\(error)")
        }
        XCTAssertEqual(fixture.server.requests.count, 1)
    }

    func testATimeoutIsReportedClearly() throws {
        try seedLapsed()
        fixture.server.route("GET", "/prod/inApps/v1/subscriptions/\(otid)",
                             RevalidationFixture.statuses([(1, unseenRenewal, freshRenewalInfo)]).delayed(4))
        let http = HTTPPolicy(timeout: 0.5, maxAttempts: 2, initialBackoff: 0.01, maxBackoff: 0.01, jitter: 0)
        let started = Date()
        XCTAssertThrowsError(try fixture.revalidator(http: http).revalidate(otid)) { error in
            XCTAssertEqual("\(error)", "GET \(fixture.endpoints.serverAPI.absoluteString)/inApps/v1/subscriptions/\(otid): "
                           + "timed out after 0.5 s; failed after 2 attempts")
            XCTAssertTrue((error as? RevalidationError)?.isTransient ?? false)
        }
        let elapsed = Date().timeIntervalSince(started)
        XCTAssertGreaterThanOrEqual(elapsed, 1.0, "two attempts of 0.5 s each ended early")
        XCTAssertLessThan(elapsed, 3.5, "the timeout did not cut the wait short")
        let audit = try fixture.openStore().audit.entries(targets: [otid])
        XCTAssertEqual(audit.last?.outcome, "failed")
        XCTAssertTrue(audit.last?.detail?.contains("timed out after 0.5 s") ?? false)
    }

    func testAConnectionRefusedIsANamedNetworkError() throws {
        try seedLapsed()
        let port = fixture.server.port
        fixture.server.stop()
        XCTAssertThrowsError(try fixture.revalidator().revalidate(otid)) { error in
            XCTAssertTrue("\(error)".contains("127.0.0.1:\(port)/prod/inApps/v1/subscriptions/\(otid): network error"), "\(error)")
            XCTAssertTrue("\(error)".hasSuffix("; failed after 3 attempts"), "\(error)")
        }
    }

    func testATamperedSignedTransactionIsRefusedAndNothingIsMerged() throws {
        let seeded = try seedLapsed()
        // Apple's signature over a payload someone edited to run for a year.
        let genuine = RevalidationFixture.sign(unseenRenewal)
        var edited = unseenRenewal
        edited["expiresDate"] = anchor + 365 * day
        let parts = genuine.split(separator: ".").map(String.init)
        let tampered = parts[0] + "." + Base64URL.encode(TestKit.json(edited)) + "." + parts[2]
        fixture.server.route("GET", "/prod/inApps/v1/subscriptions/\(otid)", .json([
            "environment": "Production", "bundleId": ScenarioBuilder.demoBundleId, "appAppleId": ScenarioBuilder.demoAppAppleId,
            "data": [["subscriptionGroupIdentifier": "21000001", "lastTransactions": [[
                "originalTransactionId": otid, "status": 1, "signedTransactionInfo": tampered,
                "signedRenewalInfo": RevalidationFixture.sign(freshRenewalInfo)]]]],
        ]))
        fixture.server.route("GET", "/prod/inApps/v2/history/\(otid)", RevalidationFixture.history([seeded.first, unseenRenewal]))
        let storeBefore = try fixture.openStore()
        let renewalBefore = try storeBefore.renewals.find(originalTransactionId: otid)

        XCTAssertThrowsError(try fixture.revalidator().revalidate(otid)) { error in
            guard case .refused(let reason)? = error as? RevalidationError else { return XCTFail("not refused: \(error)") }
            XCTAssertTrue(reason.hasPrefix("data[0].lastTransactions[0].signedTransactionInfo: "), reason)
            XCTAssertTrue(reason.contains("signature"), reason)
        }
        let store = try fixture.openStore()
        XCTAssertNil(try store.transactions.find(id: "2000000900000002"), "the genuine history must not be merged either")
        XCTAssertEqual(try store.renewals.find(originalTransactionId: otid), renewalBefore)
        XCTAssertEqual(try store.subscriptions.find(originalTransactionId: otid)?.state.status, .expired)
        let audit = try store.audit.entries(targets: [otid])
        XCTAssertEqual(audit.map(\.outcome), ["failed"])
        XCTAssertTrue(audit[0].detail?.hasPrefix("refused Apple's answer, nothing stored: data[0].lastTransactions[0].signedTransactionInfo") ?? false)
    }

    func testATransactionSignedByAnotherCAInTheHistoryIsRefused() throws {
        let seeded = try seedLapsed()
        let otherCA = TestKit.fixtureSigner(leaf: "other-ca/leaf.der", intermediate: "other-ca/intermediate.der",
                                            root: "other-ca/root.der", key: "other-ca/leaf-key.pem")
        fixture.server.route("GET", "/prod/inApps/v1/subscriptions/\(otid)",
                             RevalidationFixture.statuses([(1, unseenRenewal, freshRenewalInfo)]))
        fixture.server.route("GET", "/prod/inApps/v2/history/\(otid)", .json([
            "environment": "Production", "bundleId": ScenarioBuilder.demoBundleId, "appAppleId": ScenarioBuilder.demoAppAppleId,
            "revision": "r", "hasMore": false,
            "signedTransactions": [RevalidationFixture.sign(seeded.first), try otherCA.sign(payload: TestKit.json(unseenRenewal))],
        ]))
        XCTAssertThrowsError(try fixture.revalidator().revalidate(otid)) { error in
            XCTAssertTrue("\(error)".contains("history page 1 signedTransactions[1]"), "\(error)")
        }
        XCTAssertNil(try fixture.openStore().transactions.find(id: "2000000900000002"))
    }

    func testDataForAnotherAppIsRefused() throws {
        try seedLapsed()
        let foreign = TestKit.transaction(id: "2000000900000002", original: otid, purchase: anchor - 10 * day,
                                          expires: anchor + 20 * day, signed: anchor - 10 * day, bundleId: "com.example.other")
        fixture.answer(otid, statuses: RevalidationFixture.statuses([(1, foreign, freshRenewalInfo)]),
                       history: RevalidationFixture.history([foreign]))
        XCTAssertThrowsError(try fixture.revalidator().revalidate(otid)) { error in
            XCTAssertTrue("\(error)".contains("signedTransactionInfo: bundleId com.example.other is not the configured com.example.subdesk.demo"),
                          "\(error)")
        }
    }

    func testASubscriptionTheStoreNeverSawIsFetchedByTransactionId() throws {
        fixture.answer("2000000900000002", statuses: RevalidationFixture.statuses([(1, unseenRenewal, freshRenewalInfo)]),
                       history: RevalidationFixture.history([unseenRenewal]))
        let result = try fixture.revalidator().revalidate("2000000900000002")
        XCTAssertEqual(result.originalTransactionId, otid)
        XCTAssertNil(result.before)
        XCTAssertEqual(result.after?.status, .active)
        XCTAssertEqual(result.changes.first, "new to the store: ACTIVE, expires \(DateText.second(anchor + 20 * day)) UTC")
    }

    func testAnIdThatIsNeitherStoredNorATransactionIdIsRefusedBeforeAnyRequest() throws {
        XCTAssertThrowsError(try fixture.revalidator().revalidate("../../etc")) { error in
            XCTAssertTrue("\(error)".contains("is not an App Store transaction id"), "\(error)")
        }
        XCTAssertTrue(fixture.server.requests.isEmpty)
    }

    func testADryRunReportsTheChangeButStoresAndAuditsNothing() throws {
        let seeded = try seedLapsed()
        fixture.answer(otid, statuses: RevalidationFixture.statuses([(1, unseenRenewal, freshRenewalInfo)]),
                       history: RevalidationFixture.history([seeded.first, unseenRenewal]))
        let result = try fixture.revalidator().revalidate(otid, dryRun: true)
        XCTAssertEqual(result.outcome, .renewed)
        XCTAssertNil(result.auditId)
        let store = try fixture.openStore()
        XCTAssertNil(try store.transactions.find(id: "2000000900000002"))
        XCTAssertEqual(try store.subscriptions.find(originalTransactionId: otid)?.state.status, .expired)
        XCTAssertTrue(try store.audit.entries().isEmpty)
    }

    func testRevalidatingFromABackgroundThreadUsesItsOwnConnection() throws {
        let seeded = try seedLapsed()
        fixture.answer(otid, statuses: RevalidationFixture.statuses([(1, unseenRenewal, freshRenewalInfo)]),
                       history: RevalidationFixture.history([seeded.first, unseenRenewal]))
        let revalidator = try fixture.revalidator()
        let done = expectation(description: "revalidated on a worker")
        nonisolated(unsafe) var outcome: Result<RevalidationResult, Error>?
        let worker = Thread {
            outcome = Result { try revalidator.revalidate(self.otid) }
            done.fulfill()
        }
        worker.start()
        wait(for: [done], timeout: 20)
        XCTAssertEqual(try outcome?.get().outcome, .renewed)
        XCTAssertEqual(try fixture.state(otid)?.status, .active, "this thread's connection sees the worker's commit")
    }
}

extension FakeAppleServer.Response {
    func delayed(_ seconds: TimeInterval) -> Self {
        var copy = self
        copy.delay = seconds
        return copy
    }
}

/// The retry notices a client told, in order, from whichever thread it ran on.
final class NoticeLog: @unchecked Sendable {
    private let lock = NSLock()
    private var notices: [HTTPRetryNotice] = []

    func append(_ notice: HTTPRetryNotice) {
        lock.lock(); notices.append(notice); lock.unlock()
    }

    var all: [HTTPRetryNotice] {
        lock.lock(); defer { lock.unlock() }
        return notices
    }
}
