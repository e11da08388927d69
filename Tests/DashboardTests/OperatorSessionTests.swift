import Foundation
import XCTest
import SubscriptionCore
import SubdeskScenarios
import FakeApple
import TerminalUI
@testable import Dashboard
import SubdeskTestKit

/// Operator actions through the keys with a runtime carrying them out against a real demo store.
final class OperatorSessionTests: XCTestCase, RunsOnEveryEngine {
    let id = "2000000400001201"

    /// A session on a store of its own, since these tests write to it.
    func session(_ store: Store, revalidator: Result<Revalidator, RevalidationUnavailable>? = nil) -> DashboardSession {
        let themes = ThemeCatalog(searchPaths: [DashboardFixture.repositoryRoot.appendingPathComponent("themes").path])
        let session: DashboardSession
        if let revalidator {
            session = DashboardSession(store: store, state: DashboardFixture.state(width: 120, height: 40), themes: themes,
                                       clock: { DashboardFixture.anchor }, operatorName: "ana", revalidator: revalidator)
        } else {
            session = DashboardSession(store: store, state: DashboardFixture.state(width: 120, height: 40), themes: themes,
                                       clock: { DashboardFixture.anchor }, operatorName: "ana")
        }
        session.start()
        return session
    }

    func openExpiredSubscription(_ session: DashboardSession) {
        session.type(.char("/"))
        session.type("user-1013")
        session.type(.enter, .enter)
        XCTAssertEqual(session.state.detail?.originalTransactionId, id)
    }

    func testOverridePlacedThroughTheDialogShowsInTheDetailAndTheAuditLog() throws {
        let store = try DashboardFixture.demoStore()
        // The audit log's operator: the database user on PostgreSQL, the session's name on SQLite.
        let auditor = try store.server.databaseUser() ?? "ana"
        let session = session(store)
        openExpiredSubscription(session)
        XCTAssertTrue(session.screenText.contains("Status   EXPIRED  (not entitled"), session.screenText)

        session.type(.char("o"), .tab)
        session.type("2026-12-31")
        session.type(.tab)
        session.type("goodwill, ticket 4411")
        session.type(.tab, .enter)
        XCTAssertTrue(session.screenText.contains("Grant entitlement to \(id) until 2026-12-31 00:00 UTC? y/n"), session.screenText)
        XCTAssertTrue(try store.overrides.list().isEmpty, "nothing is written before y")
        session.type(.char("y"))

        XCTAssertNil(session.state.overrideDialog)
        XCTAssertEqual(session.state.flash?.text, "override #1 placed on \(id); in force now: grant #1 (entitled until 2026-12-31 00:00 UTC)")
        let placed = try XCTUnwrap(try store.overrides.list().first)
        XCTAssertEqual(placed.operatorName, "ana")
        XCTAssertEqual(placed.reason, "goodwill, ticket 4411")
        var text = session.screenText
        XCTAssertTrue(text.contains("Status   EXPIRED  (Apple: not entitled"), text)
        XCTAssertTrue(text.contains("Override GRANT #1 · entitled until 2026-12-31 00:00 (in 44d 12h) · by ana: goodwill, ticket 4411"), text)
        XCTAssertTrue(text.contains("override grant by \(auditor): override #1 placed; in forc"), text)

        // The audit line is the last of the timeline, and expands to the whole entry.
        session.type(.char("G"), .enter)
        text = session.screenText
        XCTAssertTrue(text.contains("audit entry #1  2026-11-16 12:00:00 UTC"), text)
        XCTAssertTrue(text.contains("detail    until 2026-12-31 00:00 UTC"), text)

        session.type(.char(":"))
        session.type("audit")
        session.type(.enter)
        text = session.screenText
        XCTAssertTrue(text.contains("1 operator action, newest first"), text)
        XCTAssertTrue(text.contains("2026-11-16 12:00  \(auditor.padding(toLength: 14, withPad: " ", startingAt: 0))override grant   \(id)      goodwill, ticket …  override #1 placed; in"), text)
        XCTAssertTrue(text.contains("→ override #1 placed; in force now: grant #1"), text)

        // From the log back to the subscription, and the override lifted the same way.
        session.type(.enter)
        XCTAssertEqual(session.state.stack, [.subscribers, .audit, .detail])
        session.type(.char("o"))
        XCTAssertEqual(session.state.overrideDialog?.action, .lift)
        XCTAssertEqual(session.state.overrideDialog?.overrideNumber, "1")
        session.type(.tab, .tab)
        session.type("customer paid")
        session.type(.tab, .enter, .char("y"))
        XCTAssertEqual(session.state.flash?.text, "override #1 lifted from \(id); in force now: no override; Apple's state decides (not entitled)")
        text = session.screenText
        XCTAssertFalse(text.contains("Override GRANT"), text)
        XCTAssertTrue(text.contains("Status   EXPIRED  (not entitled"), text)
        XCTAssertTrue(text.contains("override lift by \(auditor): override #1 lifted"), text)

        session.type(.escape)
        XCTAssertEqual(session.state.screen, .audit)
        XCTAssertEqual(session.state.audit.entries.map(\.action), ["override_lift", "override_grant"], "newest first")
    }

    func testAnOverrideIsInForceOnTheScreenAsSoonAsItIsPlacedWhileTheClockRuns() throws {
        // A real clock moves between ticks; the override must not look as if it began after "now".
        final class Clock: @unchecked Sendable { var now = DashboardFixture.anchor }
        let clock = Clock()
        let session = DashboardSession(store: try DashboardFixture.demoStore(), state: DashboardFixture.state(width: 120, height: 40),
                                       clock: { clock.now += 250; return clock.now }, operatorName: "ana")
        session.start()
        openExpiredSubscription(session)
        session.type(.char("o"), .tab)
        session.type("+7d")
        session.type(.tab)
        session.type("goodwill")
        session.type(.tab, .enter, .char("y"))
        XCTAssertTrue(session.screenText.contains("Override GRANT #1 · entitled until"), session.screenText)
    }

    func testErrorsFromOperationsAreFlashed() throws {
        let store = try DashboardFixture.demoStore()
        let colleague = Operations(store: store, operatorName: "ben")
        _ = try colleague.grant(id, until: DashboardFixture.anchor + 7 * 86_400_000, reason: "trial extension",
                                now: DashboardFixture.anchor - 60_000)
        let session = session(store)
        openExpiredSubscription(session)
        session.type(.char("o"))
        XCTAssertEqual(session.state.overrideDialog?.overrideNumber, "1")

        // Lifted elsewhere while the dialog was open: the form still looks right, the store knows better.
        _ = try colleague.lift(overrideId: 1, reason: "sorted by phone", now: DashboardFixture.anchor)
        session.type(.tab, .tab)
        session.type("resolved")
        session.type(.tab, .enter, .char("y"))
        XCTAssertNil(session.state.overrideDialog)
        let flash = try XCTUnwrap(session.state.flash)
        XCTAssertEqual(flash.kind, .error)
        // On PostgreSQL the database user is recorded, whatever name the colleague gave.
        XCTAssertTrue(flash.text.hasPrefix("override #1 was already lifted by \(store.audit.operatorOfRecord("ben"))"), flash.text)
        XCTAssertEqual(try store.audit.entries().map(\.action), ["override_grant", "override_lift"], "the refused lift wrote nothing")
    }

    /// A one-copy demo store in a folder of its own (delete `directory` afterwards), and a
    /// revalidator whose worker waits on `gate` before it opens the store, so a test can
    /// look at the screen while Apple is being asked.
    func gatedRevalidation(_ name: String) throws -> (store: Store, gate: DispatchSemaphore, revalidator: Revalidator, directory: URL) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = Store.testLocation(file: directory.appendingPathComponent("demo.db").path)
        let sample = try SampleData.locate(explicit: DashboardFixture.repositoryRoot.appendingPathComponent("sample-data").path)
        do {
            let writer = try Store(path: path)
            _ = try DemoStoreBuilder(sample: sample, copies: 1).build(into: writer, anchor: DashboardFixture.anchor)
        }
        let gate = DispatchSemaphore(value: 0)
        let revalidator = Revalidator(openStore: { gate.wait(); return try Store(path: path) },
                                      configuration: RevalidationConfiguration(), verifier: SignedDataVerifier(roots: try sample.trustRoots()),
                                      policy: SampleData.demoPolicy, operatorName: "ana", clock: { DashboardFixture.anchor })
        return (try Store(path: path), gate, revalidator, directory)
    }

    func testRevalidationRunsOffTheScreenThreadAndNamesTheFault() throws {
        // The worker waits here until the test has shown the screen still answers keys.
        let (store, gate, revalidator, directory) = try gatedRevalidation("subdesk-revalidate")
        defer { try? FileManager.default.removeItem(at: directory) }
        let session = session(store, revalidator: .success(revalidator))
        openExpiredSubscription(session)

        session.type(.char("r"))
        XCTAssertEqual(session.state.revalidating, id)
        XCTAssertTrue(session.hasBackgroundWork)
        XCTAssertTrue(session.screenLines[0].contains("revalidating …\(id.suffix(4))"), session.screenLines[0])
        let selection = session.state.detail?.selection
        session.type(.char("k"))
        XCTAssertNotEqual(session.state.detail?.selection, selection, "keys are handled while Apple is asked")
        session.type(.char("?"))
        XCTAssertTrue(session.state.showsHelp)
        session.type(.escape)

        gate.signal()
        XCTAssertTrue(session.waitForBackgroundWork(timeout: 30))
        XCTAssertNil(session.state.revalidating)
        let flash = try XCTUnwrap(session.state.flash)
        XCTAssertEqual(flash.kind, .error)
        XCTAssertEqual(flash.text, "revalidation failed: revalidation is not configured: no App Store Server API key "
                       + "(api_key_file, api_key_id, api_issuer_id) and no stored receipt for \(id) to send to verifyReceipt")
        XCTAssertFalse(session.screenLines[0].contains("revalidating"))
        XCTAssertTrue(session.screenText.contains("revalidate by ana: failed"), "the failure is audited and on the timeline")
    }

    /// `q` while a revalidation waits on Apple asks first and says what is running; `w`
    /// quits once the answer is back and audited, so the audit log holds what reached Apple.
    func testQuittingDuringARevalidationAsksAndWaitsForItsAuditEntry() throws {
        let (store, gate, revalidator, directory) = try gatedRevalidation("subdesk-quit")
        defer { try? FileManager.default.removeItem(at: directory) }
        let auditedBefore = try store.audit.entries(targets: [id]).count
        let session = session(store, revalidator: .success(revalidator))
        openExpiredSubscription(session)
        session.type(.char("r"))
        XCTAssertEqual(session.state.runningWork, ["revalidating \(id) at Apple"])

        session.type(.char("q"))
        XCTAssertFalse(session.shouldQuit, "q asks first while Apple is being asked")
        let screen = session.screenText
        XCTAssertTrue(screen.contains("Quit while work is running?"), screen)
        XCTAssertTrue(screen.contains("revalidating \(id) at Apple"), screen)
        XCTAssertTrue(session.screenLines.last?.contains("w: when done") == true, session.screenLines.last ?? "")
        session.type(.char("n"))
        XCTAssertFalse(session.shouldQuit)
        XCTAssertFalse(session.screenText.contains("Quit while work is running?"))
        XCTAssertTrue(session.state.flash?.text.hasPrefix("not quitting: revalidating \(id) at Apple goes on") == true)

        session.type(.char("q"), .char("w"))
        XCTAssertFalse(session.shouldQuit, "w waits for the answer")
        XCTAssertTrue(session.screenLines[0].contains("quitting when done"), session.screenLines[0])
        gate.signal()
        XCTAssertTrue(session.waitForBackgroundWork(timeout: 30))
        XCTAssertTrue(session.shouldQuit, "quits once the revalidation is back")
        XCTAssertEqual(try store.audit.entries(targets: [id]).count, auditedBefore + 1, "the revalidation is in the audit log")
    }

    /// The quit question itself names the work in progress, as the README says (`q` "asks
    /// first and names what is running"), with its keys whole, at 80 and 120 columns.
    func testTheQuitQuestionNamesTheWorkInProgress() throws {
        let (store, gate, revalidator, directory) = try gatedRevalidation("subdesk-quit-names")
        defer { try? FileManager.default.removeItem(at: directory) }
        for (width, height) in [(80, 24), (120, 40)] {
            let session = session(store, revalidator: .success(revalidator))
            session.send(.resize(width: width, height: height))
            openExpiredSubscription(session)
            session.type(.char("r"))
            for quit in [{ session.type(.char("q")) }, { session.command("q") }] {
                quit()
                let question = try XCTUnwrap(session.screenLines.last)
                XCTAssertTrue(question.hasPrefix(" Quit while revalidating \(id)"), "\(width): \(question)")
                for key in ["w: when", "y: now", "stay"] { XCTAssertTrue(question.contains(key), "\(width): \(question)") }
                XCTAssertLessThanOrEqual(TextWidth.width(of: question), width)
                session.type(.char("n"))
            }
            gate.signal()
            XCTAssertTrue(session.waitForBackgroundWork(timeout: 30))
        }
    }

    /// Several jobs: the first named, and how many more; where room is short the name is cut, not the keys.
    func testTheQuitQuestionNamesTheFirstOfSeveralJobs() {
        let running = ["a ping waiting for Apple's TEST notification", "a backfill from Apple's notification history"]
        XCTAssertEqual(Selectors.quitQuestion(running, width: 120),
                       " Quit while a ping waiting for Apple's TEST notification and 1 more? w: when done  y: now  other: stay")
        XCTAssertEqual(Selectors.quitQuestion(running, width: 80),
                       " Quit while a ping waiting for Ap… and 1 more? w: when done  y: now  other: stay")
    }

    func testRevalidationThatCannotBeSetUpSaysWhy() throws {
        let session = session(try DashboardFixture.demoStore(), revalidator: .failure(RevalidationUnavailable(
            "revalidation is not set up: the App Store Server API key needs api_key_file, api_key_id and api_issuer_id; missing api_issuer_id")))
        openExpiredSubscription(session)
        session.type(.char("r"))
        XCTAssertNil(session.state.revalidating)
        XCTAssertFalse(session.hasBackgroundWork)
        XCTAssertEqual(session.state.flash?.kind, .error)
        XCTAssertTrue(session.state.flash?.text.hasSuffix("missing api_issuer_id") ?? false, session.state.flash?.text ?? "")
    }
}

/// At 80x24 the detail's header keeps what support needs when lines are long.
final class NarrowDetailHeaderTests: XCTestCase, RunsOnEveryEngine {
    func open(_ id: String, store: Store) -> [String] {
        let session = DashboardFixture.session(store)
        session.type(.char("/"))
        session.type(id)
        session.type(.enter, .enter)
        return session.screenText.components(separatedBy: "\n")
    }

    func testAppleEntitlementAndGraceEndStayBesideAnOverride() throws {
        let store = try DashboardFixture.demoStore()
        _ = try Operations(store: store, operatorName: "ana").revoke("2000000400000901", until: nil, reason: "chargeback",
                                                                     now: DashboardFixture.anchor - 60_000)
        let lines = open("2000000400000901", store: store)
        let status = try XCTUnwrap(lines.first { $0.contains("Status") }, lines.joined(separator: "\n"))
        XCTAssertTrue(status.contains("GRACE PERIOD  (Apple: entitled"), status)
        XCTAssertTrue(status.contains("2026-11-27 12:00)"), "the grace period's end: \(status)")
        XCTAssertTrue(lines.contains { $0.contains("Override REVOKE #1") }, lines.joined(separator: "\n"))
    }

    func testARevokedSubscriptionSaysWhenAndWhy() throws {
        let store = try DashboardFixture.demoStore()
        let lines = open("2000000400001601", store: store)
        let status = try XCTUnwrap(lines.first { $0.contains("Status") }, lines.joined(separator: "\n"))
        XCTAssertTrue(status.contains("REVOKED"), status)
        XCTAssertTrue(status.range(of: #"revoked (2026-)?\d\d-\d\d \d\d:\d\d"#, options: .regularExpression) != nil, status)
        XCTAssertTrue(status.contains("app issue") || status.contains("other reason") || status.contains("reason:"), status)
    }
}

/// What a backfill found, on the dashboard: `:gaps` and the feed's marks.
final class GapsScreenTests: XCTestCase, RunsOnEveryEngine {
    func testGapsListWhatAppleSentThatArrivedLateAndOpenTheSubscription() throws {
        let store = try DashboardFixture.demoStore()
        let uuid = try XCTUnwrap(try store.intakeLog.entries(limit: 200).first { $0.result == .stored && $0.originalTransactionId == "2000000400000901" }?
            .notificationUUID)
        let run = try store.backfills.start(environment: "Production", since: DashboardFixture.anchor - 86_400_000,
                                          until: DashboardFixture.anchor, onlyFailures: true, operatorName: "ana",
                                          now: DashboardFixture.anchor)
        try store.write {
            try store.backfills.recordGap(notificationUUID: uuid, run: run.id,
                                attempts: [SendAttempt(date: DashboardFixture.anchor - 600_000, result: "NO_RESPONSE")],
                                now: DashboardFixture.anchor)
        }
        let session = DashboardFixture.session(store, width: 120, height: 40)
        session.type(.char(":"))
        session.type("gaps")
        session.type(.enter)
        let screen = session.screenText
        XCTAssertTrue(screen.contains("1 notification Apple sent that first arrived through a backfill"), screen)
        let row = try XCTUnwrap(screen.components(separatedBy: "\n").first { $0.contains("2000000400000901") }, screen)
        XCTAssertTrue(row.contains("1: 11:50:00 NO_RESPONSE"), row)
        session.type(.enter)
        XCTAssertEqual(session.state.screen, .detail)
        XCTAssertEqual(session.state.detail?.originalTransactionId, "2000000400000901")
    }

    func testTheFeedMarksRowsABackfillBroughtIn() throws {
        let store = try DashboardFixture.demoStore()
        try store.write {
            try store.logIntake(IntakeLogEntry(receivedDate: DashboardFixture.anchor, result: .stored, notificationUUID: "b-1",
                                               type: "DID_RENEW", originalTransactionId: "2000000400000101",
                                               productId: "app.monthly", environment: "Production", source: "backfill"))
        }
        let session = DashboardFixture.session(store, width: 120, height: 40)
        session.type(.char(":"))
        session.type("feed")
        session.type(.enter)
        let row = try XCTUnwrap(session.screenText.components(separatedBy: "\n").first { $0.contains("DID_RENEW") && $0.contains("2000000400000101") })
        XCTAssertTrue(row.contains("backfill: stored"), row)
    }
}

/// `:ping` asks Apple for a TEST notification on a worker and says on the message line
/// whether it came through intake.
final class PingCommandTests: XCTestCase, RunsOnEveryEngine {
    func testPingWaitsOnAWorkerAndReportsTheRoundTrip() throws {
        let fixture = try AppleSessionFixture()
        defer { fixture.tearDown() }
        let (apple, path, session) = (fixture.apple, fixture.path, fixture.session)
        // Apple answers with a token and "delivers" the TEST notification: intake stores it.
        let uuid = UUID().uuidString.lowercased()
        let signer = try fixture.sample.signer()
        let payload: [String: Any] = ["notificationType": "TEST", "notificationUUID": uuid, "version": "2.0",
                                      "signedDate": DateText.nowMillis(),
                                      "data": ["bundleId": ScenarioBuilder.demoBundleId, "appAppleId": ScenarioBuilder.demoAppAppleId,
                                               "environment": "Production"]]
        let jws = try signer.sign(payload: try JSONSerialization.data(withJSONObject: payload))
        let body = try JSONSerialization.data(withJSONObject: ["signedPayload": jws])
        let roots = try fixture.sample.trustRoots()
        apple.route("POST", "/prod/inApps/v1/notifications/test") { _ in
            DispatchQueue.global().asyncAfter(deadline: .now() + 0.2) {
                if let store = try? Store(path: path) {
                    _ = try? Intake(store: store, verifier: SignedDataVerifier(roots: roots), policy: SampleData.demoPolicy).ingest(body)
                }
            }
            return .json(["testNotificationToken": "dash-ping"])
        }
        apple.route("GET", "/prod/inApps/v1/notifications/test/dash-ping") { _ in
            .json(["signedPayload": jws, "sendAttempts": [["attemptDate": DateText.nowMillis(), "sendAttemptResult": "SUCCESS"]]])
        }
        session.type(.char(":"))
        session.type("ping")
        session.type(.enter)
        XCTAssertNotNil(session.state.pingStarted)
        XCTAssertTrue(session.screenLines[0].contains("ping 0s"), session.screenLines[0])
        XCTAssertTrue(session.waitForBackgroundWork(timeout: 30))
        XCTAssertNil(session.state.pingStarted)
        XCTAssertTrue(session.state.messages.last?.text.contains("TEST notification \(uuid) arrived through intake") == true,
                      "\(session.state.messages.map(\.text))")
    }

    /// With several apps, `:ping` and `:backfill` ask each app (and environment), each signed
    /// for its app and named on the message line.
    func testPingAndBackfillAskEveryAppEachSignedForIt() throws {
        let fixture = try AppleSessionFixture(apps: """
            [app other]
            bundle_id = com.example.other
            environment = Production
            key = team

            [app demo]
            bundle_id = \(ScenarioBuilder.demoBundleId)
            app_apple_id = \(ScenarioBuilder.demoAppAppleId)
            environment = Production
            key = team
            """)
        defer { fixture.tearDown() }
        let (apple, session, path) = (fixture.apple, fixture.session, fixture.path)
        apple.route("POST", "/prod/inApps/v1/notifications/history", .json(["hasMore": false, "notificationHistory": []]))
        // Each app's TEST notification, signed for it, "delivered" into the store when asked for.
        var tests: [String: (uuid: String, jws: String)] = [:]
        for (bundleId, appleId) in [("com.example.other", Int64(42)), (ScenarioBuilder.demoBundleId, ScenarioBuilder.demoAppAppleId)] {
            let uuid = UUID().uuidString.lowercased()
            let payload: [String: Any] = ["notificationType": "TEST", "notificationUUID": uuid, "version": "2.0", "signedDate": DateText.nowMillis(),
                                          "data": ["bundleId": bundleId, "appAppleId": appleId, "environment": "Production"]]
            tests[bundleId] = (uuid, try fixture.sample.signer().sign(payload: try JSONSerialization.data(withJSONObject: payload)))
        }
        let intake = try fixture.intakeMaker()
        apple.route("POST", "/prod/inApps/v1/notifications/test") { request in
            let bundleId = FakeAppleServer.tokenBundleId(request) ?? "-"
            if let test = tests[bundleId], let store = try? Store(path: path),
               let body = try? JSONSerialization.data(withJSONObject: ["signedPayload": test.jws]) {
                _ = try? intake(store).ingest(body)
            }
            return .json(["testNotificationToken": "token-\(bundleId)"])
        }
        apple.routeEverythingElse { request in
            let bundleId = String(request.path.split(separator: "/").last ?? "").replacingOccurrences(of: "token-", with: "")
            return .json(["signedPayload": tests[bundleId]?.jws ?? "", "sendAttempts": [["attemptDate": DateText.nowMillis(), "sendAttemptResult": "SUCCESS"]]])
        }
        let tokens = { (path: String) in apple.requests("POST", path).map { FakeAppleServer.tokenBundleId($0) ?? "-" } }
        fixture.command("ping")
        XCTAssertTrue(session.waitForBackgroundWork(timeout: 30))
        XCTAssertEqual(tokens("/prod/inApps/v1/notifications/test"), ["com.example.other", ScenarioBuilder.demoBundleId])
        // One message per app and environment, in turn.
        let pinged = session.state.messages.suffix(2).map(\.text)
        XCTAssertTrue(pinged.first?.hasPrefix("other (com.example.other) Production: TEST notification \(tests["com.example.other"]!.uuid) arrived") == true
                      && pinged.last?.hasPrefix("demo (\(ScenarioBuilder.demoBundleId)) Production: TEST notification") == true, "\(pinged)")
        fixture.command("backfill 1")
        XCTAssertTrue(session.waitForBackgroundWork(timeout: 30))
        XCTAssertEqual(tokens("/prod/inApps/v1/notifications/history"), ["com.example.other", ScenarioBuilder.demoBundleId])
        let said = session.state.messages.suffix(2).map(\.text)
        XCTAssertTrue(said.first?.hasPrefix("other (com.example.other) Production: backfill #") == true
                      && said.last?.hasPrefix("demo (\(ScenarioBuilder.demoBundleId)) Production: backfill #") == true, "\(said)")
        XCTAssertEqual(try Store(path: fixture.path).backfills.runs().compactMap(\.bundleId).sorted(),
                       ["com.example.other", ScenarioBuilder.demoBundleId].sorted())
    }

    func testPingWithoutAnAPIKeySaysWhatIsMissing() throws {
        let session = DashboardFixture.session(try DashboardFixture.demoStore())
        session.type(.char(":"))
        session.type("ping")
        session.type(.enter)
        XCTAssertTrue(session.state.messages.last?.isError == true)
        XCTAssertTrue(session.state.messages.last?.text.hasPrefix("ping: revalidation is not set up") == true,
                      "\(session.state.messages.map(\.text))")
    }
}
