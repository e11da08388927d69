import Foundation
import XCTest
@testable import SubscriptionCore

/// The daily expiry sweep over the store's candidates.
extension RevalidationTests {
    var renews: String { "2000000900000101" }
    var lapses: String { "2000000900000102" }
    var failing: String { "2000000900000103" }
    var inGrace: String { "2000000900000104" }
    var current: String { "2000000900000105" }

    func seedSweepCandidates() throws {
        // Four candidates and one subscription that is not: each stored as of its last notification.
        for id in [renews, lapses, failing] {
            try fixture.seed(transaction: TestKit.transaction(id: id, original: id, purchase: anchor - 31 * day,
                                                              expires: anchor - day, signed: anchor - 31 * day),
                             renewal: TestKit.renewal(original: id, signed: anchor - 31 * day), receivedAt: anchor - 20 * day)
        }
        try fixture.seed(type: "DID_FAIL_TO_RENEW", subtype: "GRACE_PERIOD", transaction: graceTransaction, renewal: graceRenewal,
                         receivedAt: anchor - day)
        try fixture.seed(transaction: TestKit.transaction(id: current, original: current, purchase: anchor - 5 * day,
                                                          expires: anchor + 25 * day, signed: anchor - 5 * day),
                         renewal: TestKit.renewal(original: current, signed: anchor - 5 * day), receivedAt: anchor - 5 * day)

        let renewal = TestKit.transaction(id: "2000000900000201", original: renews, purchase: anchor - day,
                                          expires: anchor + 29 * day, signed: anchor - day)
        fixture.answer(renews, statuses: RevalidationFixture.statuses([(1, renewal, TestKit.renewal(original: renews, signed: anchor - day))]),
                       history: RevalidationFixture.history([renewal]))
        let lapsed = TestKit.transaction(id: lapses, original: lapses, purchase: anchor - 31 * day, expires: anchor - day,
                                         signed: anchor - day)
        let voluntary = TestKit.renewal(original: lapses, signed: anchor - day, extra: ["autoRenewStatus": 0, "expirationIntent": 1])
        fixture.answer(lapses, statuses: RevalidationFixture.statuses([(2, lapsed, voluntary)]),
                       history: RevalidationFixture.history([lapsed]))
        fixture.server.route("GET", "/prod/inApps/v1/subscriptions/\(failing)",
                             RevalidationFixture.apiError(500, code: 5000000, message: "An unknown error occurred."))
        fixture.answer(inGrace, statuses: RevalidationFixture.statuses([(4, graceTransaction, graceRenewal)]),
                       history: RevalidationFixture.history([graceTransaction]))
    }

    var graceTransaction: [String: Any] {
        TestKit.transaction(id: inGrace, original: inGrace, purchase: anchor - 32 * day, expires: anchor - 2 * day,
                            signed: anchor - 2 * day)
    }

    var graceRenewal: [String: Any] {
        TestKit.renewal(original: inGrace, signed: anchor - 2 * day,
                        extra: ["isInBillingRetryPeriod": true, "gracePeriodExpiresDate": anchor + 5 * day, "expirationIntent": 2])
    }

    func testTheSweepChecksEveryCandidateAndCountsWhatBecameOfThem() throws {
        try seedSweepCandidates()
        XCTAssertEqual(try fixture.openStore().subscriptions.sweepCandidates(now: anchor, limit: 100), [renews, lapses, failing, inGrace])
        var progress: [SweepProgress] = []
        let sweep = ExpirySweep(revalidator: try fixture.revalidator(maxConnections: 3))

        let report = try sweep.run(options: SweepOptions(concurrency: 3)) { progress.append($0) }

        XCTAssertEqual(report.counts.checked, 4)
        XCTAssertEqual(report.counts.renewed, 1)
        XCTAssertEqual(report.counts.expired, 1)
        XCTAssertEqual(report.counts.failed, 1)
        XCTAssertEqual(report.counts.unchanged, 1)
        XCTAssertEqual(report.counts.changed, 0)
        XCTAssertEqual(report.counts.summary, "checked 4: renewed 1, expired 1, changed 0, unchanged 1, failed 1")
        XCTAssertEqual(report.failures.map(\.originalTransactionId), [failing])
        XCTAssertTrue(report.failures[0].isTransient)
        XCTAssertTrue(report.failures[0].reason.contains("HTTP 500 error 5000000"), report.failures[0].reason)
        XCTAssertEqual(progress.first?.counts.checked, 0)
        XCTAssertEqual(progress.last?.counts.checked, 4)
        XCTAssertEqual(progress.map(\.total), Array(repeating: 4, count: 5))

        XCTAssertEqual(try fixture.state(renews)?.status, .active)
        XCTAssertEqual(try fixture.state(lapses)?.status, .expired)
        XCTAssertEqual(try fixture.state(lapses)?.expirationIntent, 1)
        XCTAssertEqual(try fixture.state(failing)?.status, .active, "a failed candidate is left as it was, for the next run")
        XCTAssertEqual(try fixture.state(inGrace)?.status, .gracePeriod)
        XCTAssertTrue(fixture.server.requests.allSatisfy { !$0.path.contains(current) }, "not a candidate, not asked about")

        let audit = try fixture.openStore().audit.entries()
        let sweeps = audit.filter { $0.action == "sweep" }
        XCTAssertEqual(sweeps.count, 1, "one audit entry for the run")
        XCTAssertEqual(sweeps[0].id, report.auditId)
        XCTAssertEqual(sweeps[0].outcome, report.counts.summary)
        XCTAssertEqual(sweeps[0].reason, "expiry sweep")
        XCTAssertTrue(sweeps[0].detail?.contains("failed: \(failing): ") ?? false, sweeps[0].detail ?? "")
        let revalidations = audit.filter { $0.action == "revalidate" }
        XCTAssertEqual(Set(revalidations.compactMap(\.target)), [renews, lapses, failing, inGrace])
        XCTAssertEqual(revalidations.first { $0.target == failing }?.outcome, "failed")
        XCTAssertEqual(revalidations.first { $0.target == inGrace }?.outcome, "no change")
        XCTAssertTrue(revalidations.allSatisfy { $0.reason == "expiry sweep" })

        // Run again: the renewed and expired ones are no longer candidates.
        fixture.server.route("GET", "/prod/inApps/v1/subscriptions/\(failing)",
                             RevalidationFixture.statuses([(1, TestKit.transaction(id: "2000000900000203", original: failing,
                                                                                    purchase: anchor - day, expires: anchor + 29 * day,
                                                                                    signed: anchor - day), nil)]))
        fixture.server.route("GET", "/prod/inApps/v2/history/\(failing)", RevalidationFixture.history([]))
        let second = try sweep.run(options: SweepOptions(concurrency: 3))
        XCTAssertEqual(second.counts.checked, 2)
        XCTAssertEqual(second.counts.renewed, 1)
        XCTAssertEqual(second.counts.unchanged, 1)
    }

    /// Apple's rate limit far ahead stops the sweep (no more candidates asked, none counted
    /// as failed), the audit entry keeps the place and when to resume, and a resumed sweep
    /// goes on from the first subscription not checked, not from the start.
    func testASweepStoppedByARateLimitResumesWhereItStopped() throws {
        try seedSweepCandidates()
        let lifts = DateText.nowMillis() + 3 * 3_600_000
        fixture.server.route("GET", "/prod/inApps/v1/subscriptions/\(failing)",
                             RevalidationFixture.apiError(429, code: 4290000, message: "Rate limit exceeded.", headers: ["Retry-After": String(lifts)]))
        let sweep = ExpirySweep(revalidator: try fixture.revalidator(maxConnections: 1))
        let report = try sweep.run(options: SweepOptions(concurrency: 1))

        XCTAssertEqual(report.stoppedBy?.rateLimitResumeAt.map { abs($0 - lifts) < 1000 }, true)
        XCTAssertEqual(report.counts.failed, 0, "a rate limit is not the candidate's failure")
        XCTAssertTrue(report.failures.isEmpty)
        XCTAssertEqual(fixture.server.requests("GET", "/prod/inApps/v1/subscriptions/\(failing)").count, 1, "asked again under the limit")
        XCTAssertGreaterThanOrEqual(report.unchecked, 1)
        XCTAssertEqual(try fixture.state(renews)?.status, .active, "what was checked before the stop is stored")
        let entry = try XCTUnwrap(try fixture.openStore().audit.entries().last { $0.action == "sweep" })
        XCTAssertTrue(entry.outcome.hasPrefix("stopped by Apple's rate limit after checked "), entry.outcome)
        XCTAssertTrue(entry.outcome.hasSuffix("failed 0; \(report.unchecked) not checked"), entry.outcome)
        XCTAssertTrue(entry.detail?.contains(RevalidationError.resumeText(lifts)) ?? false, entry.detail ?? "nil")
        XCTAssertEqual(try ExpirySweep.resumePoint(store: try fixture.openStore()).after, lapses)

        // The limit lifted: the resumed sweep starts at the one that was stopped.
        fixture.server.route("GET", "/prod/inApps/v1/subscriptions/\(failing)",
                             RevalidationFixture.statuses([(1, TestKit.transaction(id: "2000000900000203", original: failing,
                                                                                    purchase: anchor - day, expires: anchor + 29 * day,
                                                                                    signed: anchor - day), nil)]))
        fixture.server.route("GET", "/prod/inApps/v2/history/\(failing)", RevalidationFixture.history([]))
        let asked = fixture.server.requests.count
        let resumed = try sweep.run(options: SweepOptions(concurrency: 1, after: lapses))
        XCTAssertNil(resumed.stoppedBy)
        XCTAssertEqual(resumed.counts.renewed, 1)
        XCTAssertEqual(resumed.counts.failed, 0)
        let since = fixture.server.requests.dropFirst(asked)
        XCTAssertTrue(since.allSatisfy { !$0.path.contains(renews) && !$0.path.contains(lapses) }, "started again from the start")
        XCTAssertTrue(since.contains { $0.path.contains(failing) })
        XCTAssertEqual(try fixture.state(failing)?.status, .active)
        XCTAssertNil(try ExpirySweep.resumePoint(store: try fixture.openStore()).after, "a finished sweep leaves nothing to resume")
    }

    /// The command says when to resume, exits 1, and `--resume` goes on from the stop.
    func testTheSweepCommandStopsForARateLimitAndResumes() throws {
        try seedSweepCandidates()
        // The command runs on today's clock, past every seeded expiry: `current` is a candidate too.
        let later = TestKit.transaction(id: "2000000900000205", original: current, purchase: anchor - 5 * day,
                                        expires: DateText.nowMillis() + 20 * day, signed: anchor)
        fixture.answer(current, statuses: RevalidationFixture.statuses([(1, later, nil)]), history: RevalidationFixture.history([later]))
        let lifts = DateText.nowMillis() + 3 * 3_600_000
        fixture.server.route("GET", "/prod/inApps/v1/subscriptions/\(failing)",
                             RevalidationFixture.apiError(429, code: 4290000, message: "Rate limit exceeded.", headers: ["Retry-After": String(lifts)]))
        let nothing = try fixture.subdesk(["sweep", "--resume"] + fixture.commandLineFlags)
        XCTAssertEqual(nothing.status, 2, nothing.output)
        XCTAssertTrue(nothing.output.contains("no stopped sweep to resume: no sweep has run on this store"), nothing.output)

        let stopped = try fixture.subdesk(["sweep", "--concurrency", "1"] + fixture.commandLineFlags)
        XCTAssertEqual(stopped.status, 1, stopped.output)
        XCTAssertTrue(stopped.output.contains("sweep stopped: "), stopped.output)
        XCTAssertTrue(stopped.output.contains("Apple asks to wait until \(RevalidationError.resumeText(lifts))"), stopped.output)
        XCTAssertTrue(stopped.output.contains("resume with: subdesk sweep --resume (after \(RevalidationError.resumeText(lifts)))"), stopped.output)

        fixture.server.route("GET", "/prod/inApps/v1/subscriptions/\(failing)",
                             RevalidationFixture.statuses([(1, TestKit.transaction(id: "2000000900000203", original: failing,
                                                                                    purchase: anchor - day, expires: anchor + 29 * day,
                                                                                    signed: anchor - day), nil)]))
        fixture.server.route("GET", "/prod/inApps/v2/history/\(failing)", RevalidationFixture.history([]))
        let resumed = try fixture.subdesk(["sweep", "--resume", "--json"] + fixture.commandLineFlags)
        XCTAssertEqual(resumed.status, 0, resumed.output)
        XCTAssertEqual(fixture.server.requests("GET", "/prod/inApps/v1/subscriptions/\(renews)").count, 1, "renews was asked again")
        XCTAssertEqual(fixture.server.requests("GET", "/prod/inApps/v1/subscriptions/\(failing)").count, 2)
        XCTAssertGreaterThanOrEqual(fixture.server.requests("GET", "/prod/inApps/v1/subscriptions/\(current)").count, 1, "the rest was checked")
    }

    func testSweepNetworkCallsRunConcurrentlyUpToTheLimit() throws {
        try seedSweepCandidates()
        let gauge = RevalidationInFlightGauge()
        for id in [renews, lapses, failing, inGrace] {
            let answer = RevalidationFixture.statuses([(2, TestKit.transaction(id: id, original: id, purchase: anchor - 31 * day,
                                                                               expires: anchor - day, signed: anchor - day), nil)])
            fixture.server.route("GET", "/prod/inApps/v1/subscriptions/\(id)") { _ in
                gauge.enter()
                Thread.sleep(forTimeInterval: 0.3)
                gauge.leave()
                return answer
            }
            fixture.server.route("GET", "/prod/inApps/v2/history/\(id)", RevalidationFixture.history([]))
        }
        let report = try ExpirySweep(revalidator: try fixture.revalidator(maxConnections: 2))
            .run(options: SweepOptions(concurrency: 2))
        XCTAssertEqual(report.counts.checked, 4)
        XCTAssertEqual(report.counts.failed, 0)
        XCTAssertEqual(gauge.maximum, 2, "two requests at once, never more")
    }

    func testADryRunSweepChangesAndAuditsNothing() throws {
        try seedSweepCandidates()
        let report = try ExpirySweep(revalidator: try fixture.revalidator()).run(options: SweepOptions(concurrency: 2, dryRun: true))
        XCTAssertTrue(report.dryRun)
        XCTAssertEqual(report.counts.checked, 4)
        XCTAssertEqual(report.counts.renewed, 1)
        XCTAssertEqual(report.counts.expired, 1)
        XCTAssertNil(report.auditId)
        XCTAssertEqual(try fixture.state(renews)?.status, .active)
        XCTAssertEqual(try fixture.state(renews)?.expiresDate, anchor - day, "the renewal was not stored")
        XCTAssertNil(try fixture.openStore().transactions.find(id: "2000000900000201"))
        XCTAssertTrue(try fixture.openStore().audit.entries().isEmpty)
    }

    func testASweepWithNoWayToAskAppleRefusesToStart() throws {
        try seedSweepCandidates()
        let configuration = RevalidationConfiguration(endpoints: fixture.endpoints, http: RevalidationFixture.fastHTTP)
        let path = fixture.storePath
        let revalidator = Revalidator(openStore: { try Store(path: path) }, configuration: configuration,
                                      verifier: SignedDataVerifier(roots: TestKit.roots), policy: TestKit.policy, operatorName: "cron")
        XCTAssertThrowsError(try ExpirySweep(revalidator: revalidator).run()) { error in
            XCTAssertTrue("\(error)".hasPrefix("revalidation is not configured: the sweep needs an App Store Server API key"), "\(error)")
        }
        XCTAssertTrue(try fixture.openStore().audit.entries().isEmpty)
        XCTAssertTrue(fixture.server.requests.isEmpty)
    }

    func testTheSweepLimitBoundsHowManyCandidatesAreChecked() throws {
        try seedSweepCandidates()
        let report = try ExpirySweep(revalidator: try fixture.revalidator()).run(options: SweepOptions(concurrency: 1, limit: 2))
        XCTAssertEqual(report.counts.checked, 2)
        XCTAssertEqual(Set(fixture.server.requests.map(\.path).filter { $0.contains("/v1/") }),
                       ["/prod/inApps/v1/subscriptions/\(renews)", "/prod/inApps/v1/subscriptions/\(lapses)"])
    }
}

/// Counts requests being handled at once.
final class RevalidationInFlightGauge: @unchecked Sendable {
    private let lock = NSLock()
    private var current = 0
    private(set) var maximum = 0

    func enter() {
        lock.lock()
        current += 1
        maximum = max(maximum, current)
        lock.unlock()
    }

    func leave() {
        lock.lock()
        current -= 1
        lock.unlock()
    }
}
