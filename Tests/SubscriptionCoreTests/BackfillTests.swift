import Foundation
import XCTest
import FakeApple
@testable import SubscriptionCore
import SubdeskTestKit

/// Backfill from Get Notification History against a local server playing Apple: the
/// store ends as if it had received everything live, a stopped run resumes where it
/// stopped (kill -9 included), and what was missing is kept as delivery gaps.
final class BackfillTests: XCTestCase, RunsOnEveryEngine {
    var fixture: RevalidationFixture!

    override func setUpWithError() throws { fixture = try RevalidationFixture() }
    override func tearDown() { fixture?.tearDown() }

    /// A notification Apple sent: its body and whether delivering it failed.
    struct Sent {
        var body: Data
        var signedPayload: String
        var failed: Bool
    }

    /// Three notifications for each of eight subscriptions over a month, in the order Apple
    /// sent them; those in the middle stretch failed to arrive (intake was down).
    func history() throws -> [Sent] {
        var sent: [(signed: Millis, body: Data)] = []
        for i in 0..<8 {
            let otid = "20000008000000\(10 + i)"
            let start = TestKit.anchor - 30 * TestKit.day + Millis(i) * 3_600_000
            let product = i % 3 == 0 ? "app.premium.monthly" : "app.monthly"
            let first = TestKit.transaction(id: otid, original: otid, product: product, purchase: start,
                                            expires: start + 10 * TestKit.day, signed: start)
            sent.append((start, TestKit.body(type: "SUBSCRIBED", subtype: "INITIAL_BUY", signed: start, transaction: first,
                                             renewal: TestKit.renewal(original: otid, product: product, signed: start))))
            let renewedAt = start + 10 * TestKit.day
            let renewal = TestKit.transaction(id: "\(otid)1", original: otid, product: product, purchase: renewedAt,
                                              expires: renewedAt + 10 * TestKit.day, signed: renewedAt)
            sent.append((renewedAt, TestKit.body(type: "DID_RENEW", signed: renewedAt, transaction: renewal,
                                                 renewal: TestKit.renewal(original: otid, product: product, signed: renewedAt))))
            let offAt = renewedAt + 2 * TestKit.day
            sent.append((offAt, TestKit.body(type: "DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_DISABLED", signed: offAt,
                                             transaction: renewal,
                                             renewal: TestKit.renewal(original: otid, product: product, signed: offAt,
                                                                      extra: ["autoRenewStatus": 0]))))
        }
        sent.sort { $0.signed < $1.signed }
        return try sent.enumerated().map { index, item in
            let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: item.body) as? [String: Any])
            return Sent(body: item.body, signedPayload: try XCTUnwrap(object["signedPayload"] as? String),
                        failed: (8..<17).contains(index))
        }
    }

    /// Plays Get Notification History over `sent`: `pageSize` a page, tokens `page-N`,
    /// only failed deliveries when asked; `fault(page)` may answer a page otherwise.
    func serveHistory(_ sent: [Sent], pageSize: Int, environment: String = "prod",
                      fault: @escaping @Sendable (Int) -> FakeAppleServer.Response? = { _ in nil }) {
        fixture.server.route("POST", "/\(environment)/inApps/v1/notifications/history") { request in
            let onlyFailures = request.json?["onlyFailures"] as? Bool ?? false
            let chosen = sent.filter { !onlyFailures || $0.failed }
            let page = Int(request.query["paginationToken"]?.dropFirst("page-".count) ?? "0") ?? 0
            if let answer = fault(page) { return answer }
            let items = chosen.dropFirst(page * pageSize).prefix(pageSize)
            let more = (page + 1) * pageSize < chosen.count
            var body: [String: Any] = [
                "hasMore": more,
                "notificationHistory": items.map { sent in
                    ["signedPayload": sent.signedPayload,
                     "sendAttempts": sent.failed
                        ? [["attemptDate": TestKit.anchor - 3_600_000, "sendAttemptResult": "NO_RESPONSE"],
                           ["attemptDate": TestKit.anchor - 1_800_000, "sendAttemptResult": "TIMED_OUT"]]
                        : [["attemptDate": TestKit.anchor - 3_600_000, "sendAttemptResult": "SUCCESS"]]] as [String: Any]
                },
            ]
            if more { body["paginationToken"] = "page-\(page + 1)" }
            return .json(body)
        }
    }

    /// A backfill into `store`; with `checker` (another connection to it), the bodies are
    /// checked on that one, beside the writer, as `subdesk backfill` does.
    func backfill(_ store: Store, checker: Store? = nil, clock: Millis = TestKit.anchor,
                  limits: Backfill.Limits = .standard) throws -> Backfill {
        Backfill(store: store, intake: TestKit.intake(store), checker: checker.map { TestKit.intake($0) }, client: try client(),
                        operatorName: "ana", limits: limits, clock: { clock })
    }

    /// A client of this fake Apple, with the test key.
    func client() throws -> AppStoreServerAPIClient {
        AppStoreServerAPIClient(key: try fixture.apiKey(), endpoints: fixture.endpoints, policy: RevalidationFixture.fastHTTP)
    }

    /// A history that never ends: page N holds `item(N)` and always says there is more.
    func serveEndlessHistory(_ item: @escaping @Sendable (Int) -> Sent) {
        fixture.server.route("POST", "/prod/inApps/v1/notifications/history") { request in
            let page = Int(request.query["paginationToken"]?.dropFirst("page-".count) ?? "0") ?? 0
            return .json(["hasMore": true, "paginationToken": "page-\(page + 1)",
                          "notificationHistory": [["signedPayload": item(page).signedPayload, "sendAttempts": []]]])
        }
    }

    static let window = Backfill.Request(since: TestKit.anchor - 40 * TestKit.day, until: TestKit.anchor, onlyFailures: true,
                                         environment: .production)

    /// What a person compares between two stores: every subscription's state and every
    /// notification and transaction stored.
    func contents(_ store: Store) throws -> [String] {
        var lines: [String] = []
        for row in try store.subscriptions.page(SubscriptionQuery(), limit: 1_000) {
            let s = row.state
            lines.append("\(s.originalTransactionId) \(s.productId) \(s.status) \(s.entitled) \(s.expiresDate ?? 0) "
                         + "\(s.autoRenewStatus) \(s.latestTransactionId ?? "-") \(s.expirationIntent ?? -1)")
            let history = try store.subscriptions.history(originalTransactionId: s.originalTransactionId)
            lines += history.transactions.map { "  tx \($0.transactionId) \($0.expiresDate ?? 0)" }
            lines += history.events.map { "  \($0.type)/\($0.subtype?.rawValue ?? "-") \($0.notificationUUID)" }.sorted()
        }
        return lines.sorted()
    }

    func testABackfillLeavesTheStoreAsIfEverythingHadArrivedLive() throws {
        let sent = try history()
        let live = try Store.inMemory()
        let repaired = try Store.inMemory()
        for item in sent {
            _ = try TestKit.intake(live).ingest(item.body, receivedAt: TestKit.anchor - TestKit.day)
            if !item.failed { _ = try TestKit.intake(repaired).ingest(item.body, receivedAt: TestKit.anchor - TestKit.day) }
        }
        XCTAssertNotEqual(try contents(repaired), try contents(live), "the stretch that failed left the store behind")
        serveHistory(sent, pageSize: 4)

        var seen: [Int] = []
        let run = try backfill(repaired).run(Self.window) { seen.append($0.pages) }
        XCTAssertEqual(try contents(repaired), try contents(live))
        XCTAssertEqual(run.new, 9)
        XCTAssertEqual(run.duplicates, 0)
        XCTAssertEqual(run.pages, 3)
        XCTAssertEqual(seen.last, 3, "progress after each write")
        XCTAssertEqual(seen, seen.sorted())
        XCTAssertTrue(run.isFinished)
        let asked = fixture.server.requests("POST", "/prod/inApps/v1/notifications/history")
        XCTAssertEqual(asked.map { $0.query["paginationToken"] ?? "-" }, ["-", "page-1", "page-2"])
        XCTAssertEqual(asked.first?.json?["startDate"] as? Int64, Self.window.since)
        XCTAssertEqual(asked.first?.json?["onlyFailures"] as? Bool, true)
        XCTAssertTrue(asked.allSatisfy { $0.headers["authorization"]?.hasPrefix("Bearer ") == true })

        // What had not arrived is kept with Apple's attempts; the feed says where each came from.
        let gaps = try repaired.backfills.gaps()
        XCTAssertEqual(gaps.count, 9)
        XCTAssertEqual(gaps.first?.sendAttempts.map(\.result), ["NO_RESPONSE", "TIMED_OUT"])
        XCTAssertTrue(try repaired.intakeLog.entries(limit: 9).allSatisfy { $0.source == "backfill" })
        let audit = try XCTUnwrap(try repaired.audit.entries().last)
        XCTAssertEqual(audit.action, "backfill")
        XCTAssertEqual(audit.outcome, "3 pages: 9 new, 0 duplicates, 0 rejected")

        // Everything again (not only failures): all duplicates now, nothing new, no new gaps.
        var everything = Self.window
        everything.onlyFailures = false
        let again = try backfill(repaired).run(everything)
        XCTAssertEqual(again.new, 0)
        XCTAssertEqual(again.duplicates, sent.count)
        XCTAssertEqual(try repaired.backfills.gaps().count, 9)
    }

    /// A verifier that counts what it verifies: which intake checked the bodies.
    final class CountingVerifier: SignedPayloadVerifier, @unchecked Sendable {
        private let real = SignedDataVerifier(roots: TestKit.roots)
        private let lock = NSLock()
        private var verified = 0
        var count: Int { lock.lock(); defer { lock.unlock() }; return verified }

        func verify<Decoded>(_ compactJWS: String, field: String, as decode: (JSONFields) throws -> Decoded) throws -> Verified<Decoded> {
            lock.lock()
            verified += 1
            lock.unlock()
            return try real.verify(compactJWS, field: field, as: decode)
        }
    }

    func testACheckerBesideTheWriterVerifiesTheBodiesAndTheStoreIsTheOneTheWriterAloneLeaves() throws {
        var sent = try history()
        // A payload no intake accepts, among those that failed to arrive: refused both ways.
        sent.insert(Sent(body: Data(), signedPayload: "e30.e30.AAAA", failed: true), at: 10)
        serveHistory(sent, pageSize: 4)
        let client = try client()

        let alone = try Store.inMemory()
        let reference = try Backfill(store: alone, intake: TestKit.intake(alone), client: client, operatorName: "ana",
                                     clock: { TestKit.anchor }).run(Self.window)

        let store = try fixture.openStore()
        let writing = CountingVerifier(), checking = CountingVerifier()
        let checkerStore = try fixture.openStore()
        let run = try Backfill(store: store, intake: Intake(store: store, verifier: writing, policy: TestKit.policy),
                               checker: Intake(store: checkerStore, verifier: checking, policy: TestKit.policy),
                               client: client, operatorName: "ana", clock: { TestKit.anchor }).run(Self.window)

        XCTAssertEqual(writing.count, 0, "the writer verified nothing")
        XCTAssertGreaterThanOrEqual(checking.count, 3 * 9, "the checker verified each body's three signatures")
        XCTAssertEqual([run.pages, run.new, run.duplicates, run.rejected], [3, 9, 0, 1])
        XCTAssertEqual([run.pages, run.new, run.duplicates, run.rejected],
                       [reference.pages, reference.new, reference.duplicates, reference.rejected])
        XCTAssertEqual(try contents(store), try contents(alone))
        let expected = try alone.upkeep.contentDigest(), digest = try store.upkeep.contentDigest()
        XCTAssertEqual(expected.keys.sorted().filter { expected[$0] != digest[$0] }, [], "tables that differ")
        XCTAssertEqual(try store.quarantine.unresolvedCount(), 1)
    }

    func testAStoppedRunResumesFromThePageItStoppedAtAndLosesNothing() throws {
        let sent = try history()
        let store = try fixture.openStore()
        nonisolated(unsafe) var broken = true
        serveHistory(sent, pageSize: 2) { page in
            page == 2 && broken ? .json(["errorCode": 5000000, "errorMessage": "An unknown error occurred."], status: 500) : nil
        }
        // The fault comes to the writer through the checker's thread, after the pages before it.
        XCTAssertThrowsError(try backfill(store, checker: try fixture.openStore()).run(Self.window))
        let stopped = try XCTUnwrap(try store.backfills.unfinished())
        XCTAssertEqual(stopped.pages, 2)
        XCTAssertEqual(stopped.nextPage, "page-2")
        XCTAssertEqual(try store.notifications.count(), 4, "the two pages before the fault are kept")
        XCTAssertTrue(try store.audit.entries().last?.outcome.hasPrefix("stopped after 2 pages: 4 new") == true)

        broken = false
        let resumed = try backfill(store, checker: try fixture.openStore()).run(Self.window, resume: stopped)
        XCTAssertEqual(resumed.id, stopped.id)
        XCTAssertEqual(resumed.new, 9)
        XCTAssertEqual(resumed.duplicates, 0, "no page was asked twice")
        XCTAssertEqual(try store.notifications.count(), 9)
        XCTAssertNil(try store.backfills.unfinished())
    }

    /// Apple's rate limit on a page: a moment a second ahead is waited out; one hours
    /// ahead stops the run, naming when, with every page before it kept, and the resume
    /// asks for that page next.
    func testARateLimitedPageIsWaitedOutOrStopsTheRunForAResume() throws {
        let sent = try history()
        let store = try fixture.openStore()
        let near = DateText.nowMillis() + 1_000
        let far = DateText.nowMillis() + 4 * 3_600_000
        nonisolated(unsafe) var limited: [Int: Millis] = [1: near, 3: far]
        serveHistory(sent, pageSize: 2) { page in
            guard let until = limited[page] else { return nil }
            if page == 1 { limited[1] = nil }
            return .json(["errorCode": 4290000, "errorMessage": "Rate limit exceeded."], status: 429, headers: ["Retry-After": String(until)])
        }
        XCTAssertThrowsError(try backfill(store).run(Self.window)) { error in
            XCTAssertTrue("\(error)".contains("Apple asks to wait until \(RevalidationError.resumeText(far))"), "\(error)")
        }
        XCTAssertGreaterThanOrEqual(DateText.nowMillis(), near, "page 1 was asked again before the moment Apple named")
        let stopped = try XCTUnwrap(try store.backfills.unfinished())
        XCTAssertEqual(stopped.pages, 3, "pages 0 to 2 were stored, page 1 after its wait")
        XCTAssertEqual(stopped.nextPage, "page-3")
        let audit = try XCTUnwrap(try store.audit.entries().last)
        XCTAssertTrue(audit.outcome.contains(RevalidationError.resumeText(far)), audit.outcome)
        XCTAssertEqual(audit.reason, "resume with: subdesk backfill --resume")

        limited = [:]
        let resumed = try backfill(store).run(Self.window, resume: stopped)
        XCTAssertEqual(resumed.new, 9)
        XCTAssertEqual(resumed.duplicates, 0, "no page was asked twice")
        XCTAssertNil(try store.backfills.unfinished())
    }

    func testAWindowAppleWouldRefuseIsRefusedFirst() {
        let now = TestKit.anchor
        XCTAssertThrowsError(try Backfill.check(Backfill.Request(since: now - 181 * TestKit.day, until: now, onlyFailures: false,
                                                                 environment: .production), now: now)) { error in
            XCTAssertTrue("\(error)".contains("more than 180 days ago"), "\(error)")
        }
        XCTAssertThrowsError(try Backfill.check(Backfill.Request(since: now, until: now - 1, onlyFailures: false,
                                                                 environment: .production), now: now))
    }

    func testApplesExampleHistoryResponseDecodes() throws {
        let data = try Data(contentsOf: VerificationTests.fixtureDirectory.deletingLastPathComponent()
            .appendingPathComponent("apple-models/getNotificationHistoryResponse.json"))
        let page = try NotificationHistoryResponse(json: JSONFields(data: data, path: "response"))
        XCTAssertEqual(page.paginationToken, "57715481-805a-4283-8499-1c19b5d6b20a")
        XCTAssertTrue(page.hasMore)
        XCTAssertEqual(page.items.map(\.signedPayload), ["signed_payload_one", "signed_payload_two"])
        XCTAssertEqual(page.items[0].sendAttempts, [SendAttempt(date: 1698148900000, result: "NO_RESPONSE"),
                                                    SendAttempt(date: 1698148950000, result: "SUCCESS")])
        XCTAssertEqual(page.items[1].sendAttempts.map(\.result), ["CIRCULAR_REDIRECT"])
    }

    /// The real `subdesk backfill` killed with SIGKILL while it waits for a page, then
    /// `--resume`: every notification stored exactly once.
    func testKillNineInTheMiddleOfABackfillThenResume() throws {
        let binary = try RevalidationFixture.subdeskBinary()
        let sent = try history()
        nonisolated(unsafe) var slow = true
        serveHistory(sent, pageSize: 2) { page in
            // Page 2 hangs long enough for the kill.
            page == 2 && slow ? .json(["hasMore": false, "notificationHistory": []], delay: 30) : nil
        }
        _ = try fixture.openStore()
        let arguments = ["backfill"] + fixture.commandLineFlags + ["--timeout", "60"]
        let since = DateText.iso(DateText.nowMillis() - 40 * TestKit.day)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = arguments + ["--since", since, "--only-failures"]
        let log = fixture.directory.appendingPathComponent("backfill.log").path
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle(forWritingAtPath: log)
        try process.run()
        // Wait until pages 0 and 1 are stored and page 2 has been asked for (it hangs).
        let deadline = Date().addingTimeInterval(20)
        let watcher = try fixture.openStore()
        while Date() < deadline {
            let asked = fixture.server.requests("POST", "/prod/inApps/v1/notifications/history").count
            if asked >= 3, (try? watcher.backfills.unfinished())??.pages == 2 { break }
            Thread.sleep(forTimeInterval: 0.02)
        }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationReason, .uncaughtSignal, (try? String(contentsOfFile: log, encoding: .utf8)) ?? "")
        var store = try fixture.openStore()
        let stopped = try XCTUnwrap(try store.backfills.unfinished())
        XCTAssertEqual(stopped.nextPage, "page-2")
        XCTAssertEqual(try store.notifications.count(), 4)

        slow = false
        let resumed = Process()
        resumed.executableURL = URL(fileURLWithPath: binary)
        resumed.arguments = arguments + ["--resume", "--json"]
        let output = Pipe()
        resumed.standardOutput = output
        resumed.standardError = FileHandle.nullDevice
        try resumed.run()
        let answer = ChildOutput.readAll(output.fileHandleForReading)
        resumed.waitUntilExit()
        XCTAssertEqual(resumed.terminationStatus, 0, String(decoding: answer, as: UTF8.self))
        print("$ subdesk backfill --resume --json\n" + String(decoding: answer, as: UTF8.self))
        // One document, one run in it: the one app's, in the environment the run recorded.
        let runs = try XCTUnwrap((try JSONSerialization.jsonObject(with: answer) as? [String: Any])?["runs"] as? [[String: Any]])
        XCTAssertEqual(runs.count, 1)
        let report = try XCTUnwrap(runs.first)
        XCTAssertEqual(report["environment"] as? String, "Production")
        XCTAssertEqual(report["new"] as? Int, 9)
        XCTAssertEqual(report["duplicates"] as? Int, 0)
        XCTAssertEqual(report["finished"] as? Bool, true)
        store = try fixture.openStore()
        XCTAssertEqual(try store.notifications.count(), 9, "nothing lost, nothing doubled")
    }

    /// A pagination token that advances for ever stops a run at its page limit, with every
    /// page kept, and a resume goes on from the next page to the next limit.
    func testAHistoryThatNeverEndsStopsAtThePageLimitAndResumeGoesOnFromThere() throws {
        let sent = try history()
        serveEndlessHistory { sent[$0 % sent.count] }
        let store = try fixture.openStore()
        let limits = Backfill.Limits(maxPages: 5, maxPagesWithNothingNew: 100)
        XCTAssertThrowsError(try backfill(store, checker: try fixture.openStore(), limits: limits).run(Self.window)) { error in
            guard let stopped = error as? Backfill.Stopped else { return XCTFail("not stopped at a limit: \(error)") }
            XCTAssertEqual(stopped.reason, "it fetched 5 pages, the most one run fetches")
            XCTAssertEqual(stopped.run.pages, 5)
            XCTAssertTrue("\(stopped)".contains("5 pages: 5 new"), "\(stopped)")
        }
        let asked = { self.fixture.server.requests("POST", "/prod/inApps/v1/notifications/history").map { $0.query["paginationToken"] ?? "-" } }
        XCTAssertEqual(asked(), ["-", "page-1", "page-2", "page-3", "page-4"], "no page past the limit was asked for")
        let stopped = try XCTUnwrap(try store.backfills.unfinished())
        XCTAssertEqual(stopped.nextPage, "page-5")
        XCTAssertEqual(try store.notifications.count(), 5)
        let audit = try XCTUnwrap(try store.audit.entries().last)
        XCTAssertEqual(audit.outcome, "stopped after 5 pages: 5 new, 0 duplicates, 0 rejected: it fetched 5 pages, the most one run fetches")
        XCTAssertEqual(audit.reason, "resume with: subdesk backfill --resume")

        XCTAssertThrowsError(try backfill(store, limits: limits).run(Self.window, resume: stopped)) { error in
            XCTAssertEqual((error as? Backfill.Stopped)?.run.pages, 10, "\(error)")
        }
        XCTAssertEqual(asked().suffix(5), ["page-5", "page-6", "page-7", "page-8", "page-9"], "the resume went on from the next page")
        XCTAssertEqual(try store.backfills.unfinished()?.new, 10)
        XCTAssertEqual(try store.notifications.count(), 10, "nothing asked twice, nothing lost")
    }

    /// Pages that bring nothing new, one after another (a history repeating itself), stop
    /// a run well before its page limit.
    func testPagesWithNothingNewInARowStopTheRun() throws {
        let sent = try history()
        serveEndlessHistory { _ in sent[0] }
        let store = try fixture.openStore()
        XCTAssertThrowsError(try backfill(store, checker: try fixture.openStore(),
                                          limits: Backfill.Limits(maxPages: 1_000, maxPagesWithNothingNew: 3)).run(Self.window)) { error in
            guard let stopped = error as? Backfill.Stopped else { return XCTFail("not stopped at a limit: \(error)") }
            XCTAssertEqual(stopped.reason, "3 pages in a row brought nothing new (every notification already stored or refused)")
            XCTAssertEqual(stopped.run.pages, 4)
            XCTAssertEqual(stopped.run.new, 1)
            XCTAssertEqual(stopped.run.duplicates, 3)
        }
        XCTAssertEqual(try store.backfills.unfinished()?.nextPage, "page-4")
    }

    /// A run that stops (here at a limit, with more pages being fetched) lets its checker go:
    /// the thread that checks pages ends, whatever the fetcher was doing, and drops the
    /// checker's intake and connection.
    func testARunThatStopsLetsItsCheckerGo() throws {
        let sent = try history()
        serveEndlessHistory { _ in sent[0] }
        let store = try fixture.openStore()
        weak var released: Intake?
        do {
            let checker = TestKit.intake(try fixture.openStore())
            released = checker
            let client = try client()
            let backfill = Backfill(store: store, intake: TestKit.intake(store), checker: checker, client: client, operatorName: "ana",
                                    limits: Backfill.Limits(maxPages: 1_000, maxPagesWithNothingNew: 3), clock: { TestKit.anchor })
            XCTAssertThrowsError(try backfill.run(Self.window)) { XCTAssertTrue($0 is Backfill.Stopped, "\($0)") }
        }
        let deadline = Date().addingTimeInterval(10)
        while released != nil && Date() < deadline { usleep(10_000) }
        XCTAssertNil(released, "the checking thread still holds the checker")
    }

    /// `subdesk backfill --max-pages` against a history that never ends: exit 1, the reason
    /// and the resume hint on stderr; `--resume` goes on from the page after.
    func testTheCommandStopsAtItsPageLimitAndSaysHowToResume() throws {
        let binary = try RevalidationFixture.subdeskBinary()
        let sent = try history()
        serveEndlessHistory { sent[$0 % sent.count] }
        _ = try fixture.openStore()
        let arguments = ["backfill"] + fixture.commandLineFlags + ["--max-pages", "3"]
        let since = DateText.iso(DateText.nowMillis() - 40 * TestKit.day)
        func run(_ extra: [String]) throws -> (status: Int32, stderr: String) {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: binary)
            process.arguments = arguments + extra
            let errors = Pipe()
            process.standardOutput = FileHandle.nullDevice
            process.standardError = errors
            try process.run()
            let text = String(decoding: ChildOutput.readAll(errors.fileHandleForReading), as: UTF8.self)
            process.waitUntilExit()
            return (process.terminationStatus, text)
        }
        let first = try run(["--since", since])
        print("$ subdesk backfill --since \(since) --max-pages 3\n" + first.stderr)
        XCTAssertEqual(first.status, 1, first.stderr)
        XCTAssertTrue(first.stderr.contains("stopped: it fetched 3 pages, the most one run fetches; 3 pages: 3 new"), first.stderr)
        XCTAssertTrue(first.stderr.contains("resume with: subdesk backfill --resume"), first.stderr)
        let second = try run(["--resume"])
        XCTAssertEqual(second.status, 1, second.stderr)
        XCTAssertTrue(second.stderr.contains("6 pages: 6 new"), second.stderr)
        let store = try fixture.openStore()
        XCTAssertEqual(try store.notifications.count(), 6)
        XCTAssertEqual(try store.backfills.unfinished()?.nextPage, "page-6")
    }
}
