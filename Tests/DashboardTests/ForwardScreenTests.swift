import Foundation
import XCTest
import SubscriptionCore
import SubdeskScenarios
import FakeApple
import TerminalUI
@testable import Dashboard
import SubdeskTestKit

/// An outbox with two `[forward]` targets, built as intake and the deliverer build it:
/// signed notifications ingested with the targets set, then attempts recorded.
///
/// `backend` takes everything: subscription 7801's purchase was delivered 2h50m ago, its
/// renewal (owed 1h35m30s ago) failed 30 minutes ago with a long error carrying an escape
/// sequence and waits for a retry; 7802's purchase was delivered 10 minutes ago.
/// `renewals` takes DID_RENEW only: 7801's renewal was refused 410 and is dead.
enum ForwardFixture {
    static let minute: Millis = 60_000
    static let targets = ["backend", "renewals"]
    static let longError = "target answered 503: \u{1B}[31mupstream down\u{1B}[0m " + String(repeating: "retry later ", count: 15)

    static var forwarding: ForwardTargets {
        let backend = ForwardTarget(name: "backend", url: URL(string: "https://backend.example.com/in")!, secretFile: "/nonexistent")
        var renewals = ForwardTarget(name: "renewals", url: URL(string: "https://renewals.example.com/in")!, secretFile: "/nonexistent")
        renewals.types = [.didRenew]
        return ForwardTargets([backend, renewals])
    }

    /// The configuration that declares the same targets, for the command.
    static let config = """
        [forward backend]
        url = https://backend.example.com/in
        secret_file = /nonexistent
        [forward renewals]
        url = https://renewals.example.com/in
        secret_file = /nonexistent
        types = DID_RENEW

        """

    /// An intake over `store` that owes what it stores to the fixture's targets.
    static func intake(_ store: Store) throws -> (Intake, JWSSigner) {
        let sample = try SampleData.locate(explicit: DashboardFixture.repositoryRoot.appendingPathComponent("sample-data").path)
        let intake = Intake(store: store, verifier: SignedDataVerifier(roots: try sample.trustRoots()), policy: SampleData.demoPolicy)
        intake.forwarding = forwarding
        return (intake, try sample.signer())
    }

    /// Ingests a signed notification of `type` for subscription `otid`, signed and received at `at`.
    static func ingest(_ type: String, subtype: String? = nil, otid: String, transaction: String, at: Millis,
                       into intake: Intake, signer: JWSSigner) throws {
        func signed(_ object: [String: Any]) throws -> String {
            try signer.sign(payload: try JSONSerialization.data(withJSONObject: object))
        }
        let info: [String: Any] = [
            "transactionId": transaction, "originalTransactionId": otid, "productId": "app.monthly",
            "bundleId": ScenarioBuilder.demoBundleId, "purchaseDate": at, "originalPurchaseDate": at,
            "expiresDate": at + 30 * 1440 * minute, "signedDate": at, "environment": "Production",
            "type": "Auto-Renewable Subscription", "inAppOwnershipType": "PURCHASED", "price": 9990, "currency": "USD",
        ]
        var payload: [String: Any] = ["notificationType": type, "notificationUUID": "\(type.lowercased())-\(transaction)",
                                      "version": "2.0", "signedDate": at,
                                      "data": ["bundleId": ScenarioBuilder.demoBundleId, "appAppleId": ScenarioBuilder.demoAppAppleId,
                                               "environment": "Production", "signedTransactionInfo": try signed(info)] as [String: Any]]
        payload["subtype"] = subtype
        let body = try JSONSerialization.data(withJSONObject: ["signedPayload": try signed(payload)])
        guard case .stored = try intake.ingest(body, source: "test", receivedAt: at) else {
            throw ConsentFixture.FixtureError(description: "fixture \(type) for \(otid) not stored")
        }
    }

    /// Fills `store` as of `now`. The times sit half a minute off whole minutes, so a reading
    /// a second apart shows the same ages.
    static func fill(_ store: Store, now: Millis) throws {
        let (intake, signer) = try intake(store)
        func ingest(_ type: String, subtype: String?, otid: String, transaction: String, at: Millis) throws {
            try ForwardFixture.ingest(type, subtype: subtype, otid: otid, transaction: transaction, at: at, into: intake, signer: signer)
        }
        let half: Millis = 30_000
        try ingest("SUBSCRIBED", subtype: "INITIAL_BUY", otid: "7801", transaction: "7801", at: now - 180 * minute - half)
        try ingest("DID_RENEW", subtype: nil, otid: "7801", transaction: "7801-2", at: now - 95 * minute - half)
        try ingest("SUBSCRIBED", subtype: "INITIAL_BUY", otid: "7802", transaction: "7802", at: now - 20 * minute - half)

        func attempt(_ target: String, at: Millis, status: Int?, error: String?, next: ForwardAttempt.Next) throws {
            try store.outbox.spread()
            let claimed = try store.outbox.claim(target: target, now: at, limit: 1, lease: minute, claimant: "test")
            guard let delivery = claimed.first else { throw ConsentFixture.FixtureError(description: "nothing due for \(target)") }
            try store.outbox.record([(delivery, ForwardAttempt(at: at, tookMs: 12, status: status, error: error,
                                                                answer: nil, next: next))])
        }
        try attempt("backend", at: now - 170 * minute - half, status: 204, error: nil, next: .delivered)
        try attempt("renewals", at: now - 80 * minute - half, status: 410, error: "target answered 410: gone", next: .dead)
        try attempt("backend", at: now - 30 * minute - half, status: 503, error: longError, next: .retry(at: now + 10 * minute))
        try attempt("backend", at: now - 10 * minute - half, status: 204, error: nil, next: .delivered)
    }
}

/// `:forward` shows what `subdesk forward status` computes, the detail lists a subscription's
/// deliveries, and `:health` judges the relay's lag.
final class ForwardScreenTests: XCTestCase, RunsOnEveryEngine {
    let minute = ForwardFixture.minute

    func session(_ store: Store, now: Millis, width: Int = 120, height: Int = 40, targets: [String] = ForwardFixture.targets) -> DashboardSession {
        var state = DashboardFixture.state(width: width, height: height)
        state.now = now
        state.forwardTargets = targets
        let session = DashboardSession(store: store, state: state, clock: { now })
        session.start()
        return session
    }

    /// Every cell of the screen's table against the command's JSON over the same store file,
    /// the screen read at the instant the command reports.
    func testTheScreenShowsWhatForwardStatusComputesCellForCell() throws {
        guard let binary = ChildOutput.programBesideThisOne("subdesk") else { throw XCTSkip("no subdesk beside the tests") }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("subdesk-forward-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = Store.testLocation(file: directory.appendingPathComponent("forward.db").path)
        try ForwardFixture.fill(try Store(path: path), now: DateText.nowMillis())
        let config = directory.appendingPathComponent("subdesk.conf")
        try ForwardFixture.config.write(to: config, atomically: true, encoding: .utf8)

        let run = try ChildOutput.run(binary, ["forward", "status", "--json", "--db", path, "--config", config.path])
        XCTAssertEqual(run.status, 0, run.output)
        let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any], run.output)
        let asOf = try XCTUnwrap(DateText.parse(try XCTUnwrap(json["asOf"] as? String)))
        let targets = try XCTUnwrap(json["targets"] as? [[String: Any]])
        XCTAssertEqual(targets.map { $0["target"] as? String }, ForwardFixture.targets)

        let session = session(try Store(path: path), now: asOf, width: 240, height: 30)
        session.command("forward")
        let lines = session.screenLines
        let text = lines.joined(separator: "\n")
        XCTAssertTrue(lines[0].contains("subdesk ▸ subscribers ▸ forward"), lines[0])
        XCTAssertTrue(lines[1].hasPrefix(" 2 targets · 1 pending, oldest 1h 35m · 1 dead · as of "), lines[1])
        let header = try XCTUnwrap(lines.first { $0.contains("TARGET") }, text)
        XCTAssertEqual(cells(header), ForwardStatusText.header)

        var compared = 0
        for target in targets {
            let name = try XCTUnwrap(target["target"] as? String)
            let row = try XCTUnwrap(lines.first { $0.hasPrefix(" " + name + " ") }, "no row for \(name):\n\(text)")
            let expected = [
                name, "\(try XCTUnwrap(target["pending"] as? Int))",
                (target["oldestPendingAgeSeconds"] as? Int).map { DateText.duration(Millis($0) * 1000) } ?? "-",
                "\(try XCTUnwrap(target["deliveredLastHour"] as? Int))", "\(try XCTUnwrap(target["failedLastHour"] as? Int))",
                "\(try XCTUnwrap(target["dead"] as? Int))",
                (target["lastError"] as? String).map { SafeText.sanitize(String($0.prefix(120))) } ?? "-",
            ]
            XCTAssertEqual(cells(row), expected, name)
            compared += expected.count
        }
        XCTAssertEqual(compared, 14)
        // The numbers the fixture was built for, so the agreement is not of two empty tables.
        XCTAssertEqual(targets.map { $0["pending"] as? Int }, [1, 0])
        XCTAssertEqual(targets.map { $0["deliveredLastHour"] as? Int }, [1, 0])
        XCTAssertEqual(targets.map { $0["failedLastHour"] as? Int }, [1, 0])
        XCTAssertEqual(targets.map { $0["dead"] as? Int }, [0, 1])
        XCTAssertFalse(text.unicodeScalars.contains { $0.value == 0x1B }, "a target's error reaches the screen escaped")
        // Under the table, each last error with its time.
        XCTAssertTrue(lines.contains { $0.hasPrefix(" ▸ renewals at ") && $0.hasSuffix(": target answered 410: gone") }, text)
    }

    /// The cells of a table line: runs of text between two or more spaces.
    func cells(_ line: String) -> [String] {
        line.trimmingCharacters(in: .whitespaces).components(separatedBy: "  ").map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
    }

    func testAsTheOutboxChangesTheScreenFollowsAndItsAgesMoveWithTheClock() throws {
        let now = DashboardFixture.anchor
        let store = try Store.inMemory()
        try ForwardFixture.fill(store, now: now)
        var clock = now
        var state = DashboardFixture.state(width: 120, height: 40)
        state.now = now
        state.forwardTargets = ForwardFixture.targets
        let session = DashboardSession(store: store, state: state, clock: { clock })
        session.start()
        session.command("forward")
        XCTAssertEqual(session.state.forward.rows.map(\.pending), [1, 0])
        let row = { session.screenLines.first { $0.hasPrefix(" backend ") } ?? "" }
        XCTAssertTrue(row().contains("1h 35m"), row())

        // Another process delivers the renewal: the next tick after the store changed reloads.
        let due = try store.outbox.claim(target: "backend", now: now + 10 * minute, limit: 10, lease: minute, claimant: "other")
        XCTAssertEqual(due.count, 1)
        try store.outbox.record([(due[0], ForwardAttempt(at: now + 10 * minute, tookMs: 5, status: 200, error: nil, answer: nil, next: .delivered))])
        clock = now + 10 * minute
        session.tick()
        XCTAssertEqual(session.state.forward.rows.map(\.pending), [0, 0])
        XCTAssertTrue(session.screenLines[1].hasPrefix(" 2 targets · nothing pending · 1 dead"), session.screenLines[1])
        XCTAssertTrue(row().contains(" 2 "), "delivered in the last hour: \(row())")
    }

    func testWithNoTargetConfiguredTheScreenSaysSo() throws {
        let session = session(try Store.inMemory(), now: DashboardFixture.anchor, targets: [])
        session.command("forward")
        let lines = session.screenLines
        XCTAssertTrue(lines[1].hasPrefix(" no [forward NAME] target is configured (see subdesk sample-config, [forward NAME])"),
                      lines.joined(separator: "\n"))
        XCTAssertFalse(lines.contains { $0.contains("TARGET") }, "no empty table")
    }

    func testTheDetailListsTheSubscriptionsDeliveries() throws {
        let now = DashboardFixture.anchor
        let store = try Store.inMemory()
        try ForwardFixture.fill(store, now: now)
        let session = session(store, now: now, width: 120, height: 40)
        session.type(.char("/"))
        session.type("7801")
        session.type(.enter, .enter)
        let buffer = render(session)
        let lines = buffer.lines()
        let text = lines.joined(separator: "\n")
        XCTAssertTrue(lines[0].contains("▸ 7801"), text)
        let divider = try XCTUnwrap(lines.firstIndex { $0.contains("Deliveries (3 to 2 targets, UTC)") }, text)
        let shown = Array(lines[(divider + 1)...].prefix(3))
        let shownCells = shown.map { cells(String($0.dropFirst(2).dropLast(1))) }
        XCTAssertEqual(shownCells[0], ["backend", "SUBSCRIBED", "delivered", "1 attempt", "2026-11-16 09:09", "HTTP 204"], text)
        XCTAssertEqual(Array(shownCells[1].prefix(5)), ["backend", "DID_RENEW", "pending", "1 attempt", "-"], text)
        XCTAssertEqual(shownCells[2], ["renewals", "DID_RENEW", "dead", "1 attempt", "-", "HTTP 410: target answered 410: gone"], text)
        XCTAssertTrue(shown[1].contains("HTTP 503: target answered 503: \\e[31mupstream down"), shown[1])
        XCTAssertTrue(shown[1].hasSuffix("… │"), "a long error is cut with an ellipsis: \(shown[1])")
        let stateColumn = try XCTUnwrap(shown[2].range(of: "dead")).lowerBound.utf16Offset(in: shown[2])
        XCTAssertEqual(buffer[stateColumn, divider + 3].role, .error)
        XCTAssertEqual(buffer[stateColumn, divider + 1].role, .success)
        XCTAssertTrue(text.contains("Timeline (UTC)"), "the timeline stays above:\n\(text)")

        // A subscription nothing was owed for has no Deliveries part.
        let plain = self.session(try Store.inMemory(), now: now)
        try ConsentFixture.add(to: plain.store)
        plain.type(.char("/"))
        plain.type("7701")
        plain.type(.enter, .enter)
        XCTAssertTrue(plain.screenText.contains("Subscription 7701"), plain.screenText)
        XCTAssertFalse(plain.screenText.contains("Deliveries"), plain.screenText)
    }

    func testAtEightyColumnsManyDeliveriesLeaveTheTimelineItsLinesAndSayWhatIsLeftOut() throws {
        let now = DashboardFixture.anchor
        let store = try Store.inMemory()
        try ForwardFixture.fill(store, now: now)
        // Four more renewals of 7801, each owed to both targets: eleven deliveries.
        let (intake, signer) = try ForwardFixture.intake(store)
        for n in 3...6 {
            try ForwardFixture.ingest("DID_RENEW", otid: "7801", transaction: "7801-\(n)", at: now - Millis(10 - n) * minute,
                                      into: intake, signer: signer)
        }
        XCTAssertEqual(try store.outbox.deliveries(originalTransactionId: "7801").count, 11)
        let session = session(store, now: now, width: 80, height: 24)
        session.type(.char("/"))
        session.type("7801")
        session.type(.enter, .enter)
        let lines = session.screenLines
        let text = lines.joined(separator: "\n")
        let timeline = try XCTUnwrap(lines.firstIndex { $0.contains("Timeline") }, text)
        let deliveries = try XCTUnwrap(lines.firstIndex { $0.contains("Deliveries") }, text)
        XCTAssertGreaterThanOrEqual(deliveries - timeline - 1, 3, "the timeline keeps at least three lines:\n\(text)")
        XCTAssertEqual(Layout.timelineRows(session.state), deliveries - timeline - 1)
        // Four lines: what is left out, then the three newest.
        XCTAssertTrue(lines[deliveries + 1].hasPrefix("│ … 8 earlier deliveries not shown"), text)
        XCTAssertTrue(lines[deliveries + 4].contains("renewals") && lines[deliveries + 4].contains("pending"), text)
        XCTAssertEqual(deliveries + 5, lines.count - 2, "the part ends at the frame's bottom:\n\(text)")
        for line in lines { XCTAssertLessThanOrEqual(TextWidth.width(of: line), 80) }
    }

    /// `:health` judges each target as `subdesk check` does (`OnCallHealth`): its oldest
    /// pending delivery against the lag limit, and deliveries that died in the last day.
    func testHealthJudgesEachTargetsLagAsCheckDoes() throws {
        let now = DashboardFixture.anchor
        let store = try Store.inMemory()
        try ForwardFixture.fill(store, now: now)
        let session = session(store, now: now, width: 120, height: 40)
        session.command("health")
        let lines = session.screenLines
        let text = lines.joined(separator: "\n")
        let backend = try XCTUnwrap(lines.first { $0.hasPrefix(" forward backend lag") }, text)
        XCTAssertTrue(backend.contains("WARNING") && backend.contains("subdesk forward status"), backend)
        let renewals = try XCTUnwrap(lines.first { $0.hasPrefix(" forward renewals dead") }, text)
        XCTAssertTrue(renewals.contains("WARNING"), renewals)
        let signals = session.healthSettings.signals(try OnCallReading.read(from: store, now: now, forwardTargets: ["backend", "renewals"]))
            .filter { $0.name.hasPrefix("forward ") }
        XCTAssertEqual(lines.filter { $0.hasPrefix(" forward ") }.count, signals.count, text)
        for signal in signals { XCTAssertTrue(signal.problem.map { text.contains("▸ " + $0) } ?? true, "\(signal.problem ?? ""):\n\(text)") }
        XCTAssertEqual(signals.filter { $0.level != .ok }.count, 2)
        // `:forward` shades the same wait the same way.
        var waiting = ForwardTargetStatus(target: "t")
        waiting.pending = 2
        waiting.oldestPending = now - 11 * minute
        XCTAssertEqual(ForwardLag.level(of: waiting, now: now), .warning)
        waiting.oldestPending = now - 9 * minute
        XCTAssertEqual(ForwardLag.level(of: waiting, now: now), .ok)
    }

    func render(_ session: DashboardSession) -> ScreenBuffer {
        var buffer = ScreenBuffer(width: session.state.width, height: session.state.height)
        session.render(into: &buffer)
        return buffer
    }
}
