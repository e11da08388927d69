import Foundation
import XCTest
import FakeApple
import SubdeskTestKit
@testable import SubscriptionCore
@testable import SubdeskScenarios

/// `[forward NAME]` sections: what a target takes, and each mistake refused where it is.
final class ForwardTargetConfigTests: XCTestCase {
    static let apps = """
        [app fitness]
        bundle_id = com.example.fitness
        [app recipes]
        bundle_id = com.example.recipes

        """

    func targets(_ text: String) throws -> ForwardTargets {
        let config = try Configuration(text: Self.apps + text, source: "config")
        return try ForwardTargets(configuration: config, apps: try ConfiguredApps(configuration: config))
    }

    func refusal(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> String {
        do {
            _ = try targets(text)
            XCTFail("accepted:\n\(text)", file: file, line: line)
            return ""
        } catch {
            return "\(error)"
        }
    }

    func testATargetTakesWhatItsAppsEnvironmentsAndTypesSayAndDefaultsToEverything() throws {
        let all = try targets("""
            [forward backend]
            url = https://backend.example.com/apple
            secret_file = /etc/subdesk/backend-secret
            [forward audit]
            url = http://127.0.0.1:8080/in
            secret_file = /etc/subdesk/audit-secret
            apps = recipes
            environments = Sandbox
            types = DID_RENEW, EXPIRED
            body = envelope
            timeout = 3
            max_age = 90m
            """)
        let backend = try XCTUnwrap(all.target(named: "backend"))
        XCTAssertEqual(backend.body, .apple)
        XCTAssertEqual(backend.timeout, 10)
        XCTAssertEqual(backend.maxAge, 72 * 3_600_000)
        // A type Apple adds later goes to a target that lists none.
        XCTAssertTrue(backend.takes(appName: nil, environment: nil, type: NotificationType(rawValue: "SOMETHING_NEW")))
        let audit = try XCTUnwrap(all.target(named: "audit"))
        XCTAssertEqual(audit.body, .envelope)
        XCTAssertEqual(audit.timeout, 3)
        XCTAssertEqual(audit.maxAge, 90 * 60_000)
        XCTAssertEqual(all.owed(bundleId: "com.example.recipes", environment: "Sandbox", type: .didRenew).map(\.name), ["backend", "audit"])
        XCTAssertEqual(all.owed(bundleId: "com.example.fitness", environment: "Sandbox", type: .didRenew).map(\.name), ["backend"])
        XCTAssertEqual(all.owed(bundleId: "com.example.recipes", environment: "Production", type: .didRenew).map(\.name), ["backend"])
        XCTAssertEqual(all.owed(bundleId: "com.example.recipes", environment: "Sandbox", type: .subscribed).map(\.name), ["backend"])
        XCTAssertEqual(all.owed(bundleId: "com.other", environment: "Sandbox", type: .expired).map(\.name), ["backend"])
    }

    func testEachMistakeIsRefusedNamingItsLine() {
        let head = "[forward t]\n"
        XCTAssertTrue(refusal(head + "url = https://x.example\n").contains("config:5: [forward t] lacks secret_file"))
        XCTAssertTrue(refusal(head + "secret_file = /s\n").contains("lacks url"))
        XCTAssertTrue(refusal(head + "secret_file = /s\nurl = http://backend.example.com/in\n").contains("config:7: url http://backend.example.com/in is plain http"))
        XCTAssertNoThrow(try targets(head + "secret_file = /s\nurl = http://backend.example.com/in\nallow_http = yes\n"))
        XCTAssertNoThrow(try targets(head + "secret_file = /s\nurl = http://[::1]:9/in\n"))
        XCTAssertTrue(refusal(head + "secret_file = /s\nurl = ftp://x.example/\n").contains("url must be an https URL"))
        XCTAssertTrue(refusal(head + "secret_file = /s\nurl = https://u:p@x.example/\n").contains("no user or password"))
        XCTAssertTrue(refusal(head + "secret_file = /s\nurl = https://x.example\napps = fitnes\n").contains("names app fitnes, which no [app] section declares (apps: fitness, recipes)"))
        XCTAssertTrue(refusal(head + "secret_file = /s\nurl = https://x.example\nenvironments = Xcode\n").contains("environments are Production, Sandbox or both"))
        XCTAssertTrue(refusal(head + "secret_file = /s\nurl = https://x.example\ntypes = DID_RENEWW\n").contains("DID_RENEWW is no notification type"))
        XCTAssertTrue(refusal(head + "secret_file = /s\nurl = https://x.example\nbody = raw\n").contains("body is apple or envelope, got raw"))
        for bad in ["0", "301", "ten", "99999999999999999999"] {
            XCTAssertTrue(refusal(head + "secret_file = /s\nurl = https://x.example\ntimeout = \(bad)\n").contains("timeout is a whole number"), bad)
        }
        for bad in ["30s", "367d", "72x", "h", "99999999999999999999d", "-5h"] {
            XCTAssertTrue(refusal(head + "secret_file = /s\nurl = https://x.example\nmax_age = \(bad)\n").contains("max_age is a duration"), bad)
        }
        XCTAssertTrue(refusal(head + "secret_file = /s\nurl = https://x.example\nbundle_id = x\n").contains("key bundle_id is not allowed in [forward t]"))
        // The whole file is checked when it is read, as every command reads it.
        XCTAssertThrowsError(try Configuration(text: Self.apps + head + "secret_file = /s\nurl = http://example.com\n", source: "config"))
    }

    func testTheSignatureIsHMACSHA256OfTimeDotBodyAndAChangedByteFailsIt() {
        let signature = DeliverySignature(secret: Data("s3cret".utf8))
        let body = Data(#"{"signedPayload":"a.b.c"}"#.utf8)
        let value = signature.value(body: body, time: 1_790_000_000)
        // openssl dgst -sha256 -hmac s3cret over "1790000000." and the body.
        XCTAssertEqual(value, "t=1790000000,v1=" + ContentDigest.hex(ContentDigest.hmacSHA256(key: Data("s3cret".utf8),
                                                                                            message: Data("1790000000.".utf8) + body)!))
        XCTAssertTrue(signature.verifies(value, body: body))
        var changed = body
        changed[5] ^= 1
        XCTAssertFalse(signature.verifies(value, body: changed))
        XCTAssertFalse(signature.verifies(value.replacingOccurrences(of: "t=1790000000", with: "t=1790000001"), body: body))
        XCTAssertFalse(DeliverySignature(secret: Data("other".utf8)).verifies(value, body: body))
    }
}

/// The outbox: owed in the write that stores the notification, claimed in order per
/// subscription, answered and kept.
final class ForwardOutboxTests: XCTestCase, RunsOnEveryEngine {
    var store: Store!
    var intake: Intake!

    override func setUpWithError() throws {
        store = try Store.inMemory()
        intake = TestKit.intake(store)
        var everything = ForwardTarget(name: "backend", url: URL(string: "https://backend.example.com/in")!, secretFile: "/s")
        everything.maxAge = 3_600_000
        var renewals = ForwardTarget(name: "renewals", url: URL(string: "https://other.example.com/in")!, secretFile: "/s")
        renewals.types = [.didRenew]
        intake.forwarding = ForwardTargets([everything, renewals])
    }

    func body(_ type: String, _ otid: String, uuid: String = UUID().uuidString.lowercased(), at day: Millis = 0) -> Data {
        TestKit.body(type: type, uuid: uuid, signed: TestKit.anchor + day * TestKit.day,
                     transaction: TestKit.transaction(id: otid + "-\(day)", original: otid, signed: TestKit.anchor + day * TestKit.day),
                     renewal: TestKit.renewal(original: otid, signed: TestKit.anchor + day * TestKit.day))
    }

    func testEachStoredNotificationIsOwedToEachMatchingTargetOnceAndARefusedOneToNone() throws {
        let uuid = UUID().uuidString.lowercased()
        let renewal = body("DID_RENEW", "100", uuid: uuid)
        guard case .stored = try intake.ingest(renewal, receivedAt: TestKit.anchor) else { return XCTFail("not stored") }
        XCTAssertEqual(try store.outbox.deliveries(notificationUUID: uuid).map(\.target), ["backend", "renewals"])
        let owed = try XCTUnwrap(store.outbox.deliveries(notificationUUID: uuid).first)
        XCTAssertEqual(owed.state, .pending)
        XCTAssertEqual(owed.originalTransactionId, "100")
        XCTAssertEqual(owed.giveUp, TestKit.anchor + 3_600_000)
        XCTAssertEqual(owed.deliveryId, uuid + "/backend")
        // Apple sends it again: still owed once.
        guard case .duplicate = try intake.ingest(renewal, receivedAt: TestKit.anchor + 1) else { return XCTFail("not a duplicate") }
        XCTAssertEqual(try store.outbox.deliveries(notificationUUID: uuid).count, 2)
        // A refused body is owed to nobody.
        var forged = renewal
        forged[forged.count - 5] ^= 1
        guard case .rejected = try intake.ingest(forged, receivedAt: TestKit.anchor + 2) else { return XCTFail("not refused") }
        XCTAssertEqual(try store.outbox.status(targets: ["backend", "renewals"], now: TestKit.anchor).map(\.pending), [1, 1])
        // Another type goes only where its type is taken.
        let expired = UUID().uuidString.lowercased()
        try intake.ingest(body("EXPIRED", "100", uuid: expired, at: 1), receivedAt: TestKit.anchor + 3)
        XCTAssertEqual(try store.outbox.deliveries(notificationUUID: expired).map(\.target), ["backend"])
    }

    /// Intake's write owes a notification in one row naming its targets; a spread turns the
    /// rows into one delivery per target, in the order they were owed, and until then they
    /// count as pending wherever the outbox is read.
    func testIntakeOwesOneRowThatASpreadTurnsIntoADeliveryPerTargetInOrder() throws {
        func count(_ table: String) throws -> Int { try store.db.first("SELECT COUNT(*) FROM \(table)", []) { $0.int(0) } ?? -1 }
        let uuids = (0..<3).map { _ in UUID().uuidString.lowercased() }
        try intake.ingest(body("DID_RENEW", "A", uuid: uuids[0]), receivedAt: TestKit.anchor)
        try intake.ingest(body("EXPIRED", "B", uuid: uuids[1]), receivedAt: TestKit.anchor + 1)
        try intake.ingest(body("DID_RENEW", "A", uuid: uuids[2], at: 1), receivedAt: TestKit.anchor + 2)
        XCTAssertEqual([try count("forward_owed"), try count("forward_outbox")], [3, 0])

        func pending() throws -> [Int] {
            try store.outbox.status(targets: ["backend", "renewals"], now: TestKit.anchor + 10).map(\.pending)
                + store.outbox.readings(targets: ["backend", "renewals"], now: TestKit.anchor + 10).map(\.pending)
        }
        XCTAssertEqual(try pending(), [3, 2, 3, 2])
        XCTAssertEqual(try store.outbox.status(targets: ["backend"], now: TestKit.anchor).first?.oldestPending, TestKit.anchor)
        // A name's _ is no wildcard: b_ckend is owed nothing.
        XCTAssertEqual(try store.outbox.status(targets: ["b_ckend"], now: TestKit.anchor).first?.pending, 0)
        let shown = try store.outbox.deliveries(originalTransactionId: "A")
        XCTAssertEqual(shown.map(\.target), ["backend", "renewals", "backend", "renewals"])
        XCTAssertEqual(shown.map(\.giveUp), [TestKit.anchor + 3_600_000, TestKit.anchor + ForwardTarget.defaultMaxAge,
                                             TestKit.anchor + 2 + 3_600_000, TestKit.anchor + 2 + ForwardTarget.defaultMaxAge])
        XCTAssertEqual(try store.outbox.nextDue(target: "backend"), TestKit.anchor)

        XCTAssertEqual(try store.outbox.spread(limit: 2), 2)
        XCTAssertEqual([try count("forward_owed"), try count("forward_outbox")], [1, 3])
        XCTAssertEqual(try pending(), [3, 2, 3, 2])
        XCTAssertEqual(try store.outbox.spread(), 1)
        XCTAssertEqual(try store.outbox.spread(), 0)
        XCTAssertEqual([try count("forward_owed"), try count("forward_outbox")], [0, 5])
        XCTAssertEqual(try pending(), [3, 2, 3, 2])
        // The outbox's ids keep the order they were owed in, and each max_age is intake's.
        let spread = try store.outbox.deliveries(originalTransactionId: "A")
        XCTAssertEqual(spread.map(\.notificationUUID), [uuids[0], uuids[0], uuids[2], uuids[2]])
        XCTAssertEqual(spread.map(\.giveUp), shown.map(\.giveUp))
        XCTAssertTrue(spread.allSatisfy { $0.id > 0 })
        let backend = try claim(TestKit.anchor + 10).map(\.notificationUUID)
        XCTAssertEqual(backend, [uuids[0], uuids[1]], "A's second waits for its first")
    }

    func testAWriteThatFailsOwesNothing() throws {
        let uuid = UUID().uuidString.lowercased()
        XCTAssertThrowsError(try store.write {
            try intake.ingest(body("DID_RENEW", "100", uuid: uuid), receivedAt: TestKit.anchor)
            throw CancellationError()
        })
        XCTAssertEqual(try store.outbox.deliveries(notificationUUID: uuid), [])
        XCTAssertNil(try store.notifications.find(uuid: uuid))
    }

    func claim(_ now: Millis = TestKit.anchor, limit: Int = 100, by claimant: String = "a") throws -> [ForwardDelivery] {
        try store.outbox.spread()
        return try store.outbox.claim(target: "backend", now: now, limit: limit, lease: 60_000, claimant: claimant)
    }

    func answer(_ d: ForwardDelivery, _ next: ForwardAttempt.Next, status: Int? = nil, at: Millis = TestKit.anchor) throws {
        try store.outbox.record([(d, ForwardAttempt(at: at, tookMs: 3, status: status, error: status == nil ? "timed out" : nil,
                                                     answer: Data("ok".utf8), next: next))])
    }

    func testOneSubscriptionGoesOneAtATimeInOrderAndAFailureHoldsBackOnlyItsLaterOnes() throws {
        // Subscription A: three notifications; B: one, stored between them.
        let a1 = UUID().uuidString.lowercased(), a2 = UUID().uuidString.lowercased(), a3 = UUID().uuidString.lowercased()
        let b1 = UUID().uuidString.lowercased()
        try intake.ingest(body("SUBSCRIBED", "A", uuid: a1, at: 0), receivedAt: TestKit.anchor - 10)
        try intake.ingest(body("DID_RENEW", "B", uuid: b1, at: 0), receivedAt: TestKit.anchor - 9)
        try intake.ingest(body("DID_RENEW", "A", uuid: a2, at: 30), receivedAt: TestKit.anchor - 8)
        try intake.ingest(body("DID_RENEW", "A", uuid: a3, at: 60), receivedAt: TestKit.anchor - 7)
        // Only the first of A is due, beside B's.
        let first = try claim()
        XCTAssertEqual(first.map(\.notificationUUID), [a1, b1])
        // Claimed: nobody else takes them while the claim lasts.
        XCTAssertEqual(try claim(by: "b"), [])
        // A's first fails: its later ones wait; B's is delivered.
        try answer(first[0], .retry(at: TestKit.anchor + 5_000))
        try answer(first[1], .delivered, status: 204)
        XCTAssertEqual(try claim(TestKit.anchor + 1_000), [])
        // Due again, it goes first; delivered, the next of A follows.
        let again = try claim(TestKit.anchor + 5_000)
        XCTAssertEqual(again.map(\.notificationUUID), [a1])
        XCTAssertEqual(again[0].attempts, 1)
        try answer(again[0], .delivered, status: 200, at: TestKit.anchor + 5_000)
        let second = try claim(TestKit.anchor + 5_001)
        XCTAssertEqual(second.map(\.notificationUUID), [a2])
        // A dead delivery holds nothing back, and stays in sight.
        try answer(second[0], .dead, status: 410)
        XCTAssertEqual(try claim(TestKit.anchor + 5_002).map(\.notificationUUID), [a3])
        let status = try XCTUnwrap(store.outbox.status(targets: ["backend"], now: TestKit.anchor + 6_000).first)
        XCTAssertEqual(status.dead, 1)
        XCTAssertEqual(status.pending, 1)
        XCTAssertEqual(status.deliveredLastHour, 2)
        XCTAssertEqual(status.failedLastHour, 2)
        XCTAssertEqual(try store.outbox.deliveries(originalTransactionId: "A").filter { $0.target == "backend" }.map(\.state),
                       [.delivered, .dead, .pending])
        let attempts = try store.outbox.attempts(deliveryId: again[0].id)
        XCTAssertEqual(attempts.map(\.attempt), [1, 2])
        XCTAssertEqual(attempts.map(\.status), [nil, 200])
        XCTAssertEqual(attempts.last?.answer, Data("ok".utf8))
    }

    func testAClaimOutlivesNoDeliverer() throws {
        try intake.ingest(body("DID_RENEW", "A"), receivedAt: TestKit.anchor)
        XCTAssertEqual(try claim(by: "killed").count, 1)
        XCTAssertEqual(try claim(TestKit.anchor + 59_999, by: "next"), [])
        // The claim ends: the next deliverer sends it again, with the same id.
        let retaken = try claim(TestKit.anchor + 60_000, by: "next")
        XCTAssertEqual(retaken.count, 1)
        XCTAssertEqual(retaken[0].attempts, 0)
    }

    func testADeliveryNeverAnsweredBeforeMaxAgeIsDead() throws {
        let uuid = UUID().uuidString.lowercased()
        try intake.ingest(body("DID_RENEW", "A", uuid: uuid), receivedAt: TestKit.anchor)
        XCTAssertEqual(try claim(TestKit.anchor + 3_600_000), [])
        let dead = try XCTUnwrap(store.outbox.deliveries(notificationUUID: uuid).first { $0.target == "backend" })
        XCTAssertEqual(dead.state, .dead)
        XCTAssertEqual(dead.lastError, "past max_age before an attempt")
    }
}

struct NotStored: Error { let outcome: IntakeOutcome }

/// The deliverer against a real HTTP server: what it sends, how it reads each answer.
final class ForwardDelivererTests: XCTestCase {
    var server: FakeAppleServer!
    var store: Store!
    var intake: Intake!
    var clock: Millis = TestKit.anchor
    let secret = DeliverySignature(secret: Data("s3cret".utf8))

    override func setUpWithError() throws {
        server = try FakeAppleServer()
        store = try Store(path: ":memory:")
        intake = TestKit.intake(store)
    }

    override func tearDown() {
        server.stop()
    }

    func deliverer(body: ForwardTarget.Body = .apple, timeout: TimeInterval = 5, maxAge: Millis = 3_600_000,
                   pacing: ForwardDeliverer.Pacing = ForwardDeliverer.Pacing()) -> ForwardDeliverer {
        var target = ForwardTarget(name: "backend", url: server.baseURL.appendingPathComponent("in"), secretFile: "/s")
        target.body = body
        target.timeout = timeout
        target.maxAge = maxAge
        intake.forwarding = ForwardTargets([target])
        var pacing = pacing
        pacing.initialBackoff = 1
        let deliverer = ForwardDeliverer(target: target, store: store, signature: secret, pacing: pacing)
        deliverer.now = { [unowned self] in clock }
        return deliverer
    }

    func ingest(_ otid: String, uuid: String = UUID().uuidString.lowercased(), day: Millis = 0) throws -> Data {
        let body = TestKit.body(type: "DID_RENEW", uuid: uuid, signed: TestKit.anchor + day * TestKit.day,
                                transaction: TestKit.transaction(id: otid + "-\(day)", original: otid,
                                                                 signed: TestKit.anchor + day * TestKit.day),
                                renewal: TestKit.renewal(original: otid, signed: TestKit.anchor + day * TestKit.day))
        let outcome = try intake.ingest(body, receivedAt: clock)
        guard case .stored = outcome else { throw NotStored(outcome: outcome) }
        return body
    }

    /// serve's deliverers, behind, rest in proportion to how busy intake was: nothing with
    /// intake quiet, six times their batch with intake busy half the time, 54 times at 0.9,
    /// and never below the floor's pace (64 rows at 50/s is a batch every 1.28 s at least).
    func testADelivererThatIsBehindRestsInProportionToIntakeButKeepsItsFloor() {
        let d = deliverer()
        XCTAssertEqual(d.pacing.batch, 64)
        XCTAssertEqual(d.pacing.floorPerSecond, 50)
        XCTAssertEqual(d.rest(after: 0.01, busy: 0), 0)
        XCTAssertEqual(d.rest(after: 0.01, busy: 0.5), 0.06, accuracy: 1e-9)
        XCTAssertEqual(d.rest(after: 0.01, busy: 0.9), 0.54, accuracy: 1e-9)
        XCTAssertEqual(d.rest(after: 0.03, busy: 0.9), 1.25, accuracy: 1e-9, "bounded by the floor")
        XCTAssertEqual(d.rest(after: 0.001, busy: 1), 0.294, accuracy: 1e-9, "a busy fraction of at most 0.98")
        XCTAssertEqual(d.rest(after: 2, busy: 0.9), 0, "a batch slower than the floor rests not at all")
        XCTAssertEqual(d.rest(after: 0.01, busy: -1), 0)
    }

    /// The busy time counts while at least one request is answered, once however many overlap.
    func testIntakeLoadCountsTheTimeAnyRequestIsAnswered() {
        let load = IntakeLoad()
        let start = load.reading(now: 1_000)
        load.begin(now: 1_000)
        load.begin(now: 1_500)
        load.end(now: 2_000)
        XCTAssertEqual(load.busyNanoseconds(now: 2_500), 1_500, "one still answered counts up to now")
        load.end(now: 3_000)
        load.end(now: 3_500)
        XCTAssertEqual(load.busyNanoseconds(now: 5_000), 2_000, "an end without a begin counts nothing")
        load.begin(now: 4_000)
        load.end(now: 4_500)
        XCTAssertEqual(IntakeLoad.fraction(from: start, to: load.reading(now: 6_000)), 0.5, accuracy: 1e-9)
        XCTAssertEqual(IntakeLoad.fraction(from: start, to: start), 0)
    }

    /// A deliverer behind its target with intake busy all the time sends no faster than the
    /// floor; with intake quiet, at once.
    func testABusyIntakeHoldsABehindDelivererToItsFloor() throws {
        server.route("POST", "/in", .init(status: 200))
        let load = IntakeLoad()
        load.begin()
        defer { load.end() }
        var pacing = ForwardDeliverer.Pacing()
        pacing.batch = 2
        pacing.floorPerSecond = 10
        pacing.intake = load
        let d = deliverer(pacing: pacing)
        for i in 0..<6 { _ = try ingest("7\(i)") }
        let started = Date()
        var sent = 0
        d.onAttempt = { _, _ in sent += 1 }
        try d.run(stop: { sent >= 6 })
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(started), 0.6, "three full batches of two at 10/s: 0.2 s each at least")
        XCTAssertGreaterThan(d.rested, 0)
        pacing.intake = IntakeLoad()
        let quiet = deliverer(pacing: pacing)
        for i in 0..<6 { _ = try ingest("8\(i)") }
        sent = 0
        quiet.onAttempt = { _, _ in sent += 1 }
        try quiet.run(stop: { sent >= 6 })
        XCTAssertEqual(sent, 6)
        XCTAssertEqual(quiet.rested, 0, "no rest with intake quiet")
    }

    func testTheBodyGoesByteForByteSignedAndEveryRetryCarriesTheSameId() throws {
        let d = deliverer()
        server.route("POST", "/in", .init(status: 503), .init(status: 200))
        let uuid = UUID().uuidString.lowercased()
        let body = try ingest("100", uuid: uuid)
        var counts = try d.run(once: true)
        XCTAssertEqual(counts.retried, 1)
        // Not due yet: nothing sent.
        XCTAssertEqual(try d.run(once: true), ForwardDeliverer.Counts())
        clock += 10_000
        counts = try d.run(once: true)
        XCTAssertEqual(counts.delivered, 1)
        let sent = server.requests("POST", "/in")
        XCTAssertEqual(sent.count, 2)
        for (index, request) in sent.enumerated() {
            XCTAssertEqual(request.body, body)
            XCTAssertEqual(request.headers["subdesk-delivery"], uuid + "/backend")
            XCTAssertEqual(request.headers["subdesk-attempt"], String(index + 1))
            XCTAssertEqual(request.headers["subdesk-notification-type"], "DID_RENEW")
            XCTAssertEqual(request.headers["subdesk-environment"], "Production")
            XCTAssertEqual(request.headers["subdesk-app"], ScenarioBuilder.demoBundleId)
            XCTAssertTrue(secret.verifies(request.headers["subdesk-signature"] ?? "", body: request.body))
        }
        XCTAssertEqual(try store.outbox.deliveries(notificationUUID: uuid).first?.state, .delivered)
        XCTAssertEqual(try store.outbox.attempts(deliveryId: try XCTUnwrap(store.outbox.deliveries(notificationUUID: uuid).first).id).map(\.status),
                       [503, 200])
    }

    func testRetryAfterIsHonouredARefusalDiesAfterThreeAttemptsAndMaxAgeEndsRetries() throws {
        let d = deliverer(maxAge: 120_000)
        server.route("POST", "/in", handler: { request in
            request.headers["subdesk-delivery"]?.hasPrefix("a") == true
                ? .init(status: 429, headers: ["Retry-After": "30"]) : .init(status: 400, body: Data("bad".utf8))
        })
        let limited = "a" + UUID().uuidString.lowercased().dropFirst()
        let refused = "b" + UUID().uuidString.lowercased().dropFirst()
        _ = try ingest("1", uuid: limited)
        _ = try ingest("2", uuid: refused)
        try d.run(once: true)
        func delivery(_ uuid: String) throws -> ForwardDelivery { try XCTUnwrap(store.outbox.deliveries(notificationUUID: uuid).first) }
        XCTAssertEqual(try delivery(limited).next, clock + 30_000)
        for _ in 0..<3 {
            clock += 31_000
            try d.run(once: true)
        }
        XCTAssertEqual(try delivery(refused).state, .dead)
        XCTAssertEqual(try delivery(refused).attempts, 3)
        XCTAssertEqual(try store.outbox.attempts(deliveryId: try delivery(refused).id).last?.answer, Data("bad".utf8))
        XCTAssertEqual(try delivery(limited).state, .pending)
        // Past max_age (two minutes after it was owed), the 429s end it.
        clock += 31_000
        try d.run(once: true)
        XCTAssertEqual(try delivery(limited).state, .dead)
        XCTAssertEqual(try delivery(limited).lastStatus, 429)
    }

    /// A delivery the target refused to death, owed again (by `forward retry --dead`, then
    /// by `forward replay`), is given its three attempts anew, numbered on from the last.
    func testARefusedDeliveryOwedAgainIsGivenItsAttemptsAnew() throws {
        let d = deliverer()
        server.route("POST", "/in", handler: { _ in .init(status: 400) })
        let uuid = UUID().uuidString.lowercased()
        _ = try ingest("3", uuid: uuid)
        func delivery() throws -> ForwardDelivery { try XCTUnwrap(store.outbox.deliveries(notificationUUID: uuid).first) }
        func refuseUntilDead() throws -> Int {
            var tries = 0
            while try delivery().state == .pending && tries < 10 {
                try d.run(once: true)
                clock += 60_000
                tries += 1
            }
            return tries
        }
        XCTAssertEqual(try refuseUntilDead(), 3)
        XCTAssertEqual(try store.outbox.retryDead(target: "backend", maxAge: 3_600_000, now: clock), 1)
        XCTAssertEqual(try refuseUntilDead(), 3, "a retried delivery died before its three attempts")
        XCTAssertEqual(try delivery().state, .dead)
        let target = try XCTUnwrap(intake.forwarding.targets.first)
        XCTAssertEqual(try store.outbox.requeue(.init(notificationUUID: uuid), to: target, targetBundleIds: nil, now: clock), 1)
        XCTAssertEqual(try refuseUntilDead(), 3, "a replayed delivery died before its three attempts")
        XCTAssertEqual(server.requests("POST", "/in").compactMap { $0.headers["subdesk-attempt"] }, (1...9).map(String.init))
        XCTAssertEqual(try store.outbox.attempts(deliveryId: try delivery().id).count, 9)
    }

    func testATargetThatHangsTimesOutAndAHugeAnswerIsNotHeld() throws {
        let d = deliverer(timeout: 1)
        server.route("POST", "/in", .init(status: 200, delay: 3), .huge(bytes: 100 << 20, announcingLength: false), .init(status: 200))
        let uuid = UUID().uuidString.lowercased()
        _ = try ingest("100", uuid: uuid)
        try d.run(once: true)
        clock += 10_000
        try d.run(once: true)
        var attempts = try store.outbox.attempts(deliveryId: try XCTUnwrap(store.outbox.deliveries(notificationUUID: uuid).first).id)
        XCTAssertEqual(attempts.count, 2)
        XCTAssertNil(attempts[0].status)
        XCTAssertTrue(attempts[0].error?.contains("timed out") ?? false, attempts[0].error ?? "")
        XCTAssertNil(attempts[1].status)
        XCTAssertLessThan(server.fillerBytesSent, 100 << 20)
        // The helper ends the refused transfer (or exits and is started again); the delivery
        // is then taken.
        for _ in 0..<20 where try store.outbox.deliveries(notificationUUID: uuid).first?.state != .delivered {
            clock += 60_000
            try d.run(once: true)
            Thread.sleep(forTimeInterval: 0.5)
        }
        attempts = try store.outbox.attempts(deliveryId: try XCTUnwrap(store.outbox.deliveries(notificationUUID: uuid).first).id)
        XCTAssertEqual(attempts.last?.status, 200, "\(attempts.map { ($0.status, $0.error) })")
        XCTAssertTrue(attempts[1].error?.hasSuffix("answered more than 65536 bytes: not read") ?? false, attempts[1].error ?? "")
    }

    func testAnEnvelopeCarriesApplesSignedPayloadAndTheSubscriptionsStateWhenSent() throws {
        let d = deliverer(body: .envelope)
        server.route("POST", "/in", .init(status: 200))
        let uuid = UUID().uuidString.lowercased()
        let body = try ingest("100", uuid: uuid)
        try d.run(once: true)
        let sent = try XCTUnwrap(server.requests("POST", "/in").first)
        XCTAssertTrue(secret.verifies(sent.headers["subdesk-signature"] ?? "", body: sent.body))
        let envelope = try XCTUnwrap(sent.json)
        XCTAssertEqual(envelope["signedPayload"] as? String, (try JSONSerialization.jsonObject(with: body) as? [String: Any])?["signedPayload"] as? String)
        XCTAssertEqual(envelope["deliveryId"] as? String, uuid + "/backend")
        XCTAssertEqual(envelope["notificationType"] as? String, "DID_RENEW")
        XCTAssertEqual(envelope["asOf"] as? String, DateText.iso(clock))
        let subscription = try XCTUnwrap(envelope["subscription"] as? [String: Any])
        XCTAssertEqual(subscription["originalTransactionId"] as? String, "100")
        XCTAssertNotNil(subscription["entitled"] as? Bool)
        XCTAssertNotNil(subscription["status"] as? String)
        XCTAssertNil(subscription["timeline"])
        XCTAssertNil(subscription["transactions"])
    }
}

/// The README's shell check of `Subdesk-Signature`, run as written (the secret file's path
/// aside) on a delivery subdesk sent, and on the same delivery with one byte changed.
final class ForwardSignatureReadmeTests: XCTestCase {
    func readmeCheck() throws -> String {
        let readme = try String(contentsOfFile: TestKit.repoRoot + "/README.md", encoding: .utf8)
        let after = try XCTUnwrap(readme.range(of: "<!-- signature-check -->\n```sh\n"))
        let end = try XCTUnwrap(readme.range(of: "\n```", range: after.upperBound..<readme.endIndex))
        return String(readme[after.upperBound..<end.lowerBound])
    }

    func run(_ script: String, in folder: URL, signature: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", script]
        process.currentDirectoryURL = folder
        process.environment = ["PATH": "/usr/bin:/bin", "signature": signature]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func testTheReadmesCheckTakesADeliveryAndRefusesAChangedByte() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("forward-sig-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let secretFile = folder.appendingPathComponent("secret").path
        // Written with a trailing newline, as an editor leaves it: both sides trim it.
        FileManager.default.createFile(atPath: secretFile, contents: Data("9f2c-shared-secret\n".utf8), attributes: [.posixPermissions: 0o600])
        let script = try readmeCheck().replacingOccurrences(of: "/etc/subdesk/backend-forward-secret", with: secretFile)

        let server = try FakeAppleServer()
        defer { server.stop() }
        server.route("POST", "/in", .init(status: 200))
        let store = try Store(path: ":memory:")
        let intake = TestKit.intake(store)
        let target = ForwardTarget(name: "backend", url: server.baseURL.appendingPathComponent("in"), secretFile: secretFile)
        intake.forwarding = ForwardTargets([target])
        try intake.ingest(TestKit.body(type: "DID_RENEW"))
        let signature = try DeliverySignature.load(file: secretFile, target: "backend", warn: { _ in })
        try ForwardDeliverer(target: target, store: store, signature: signature).run(once: true)
        let sent = try XCTUnwrap(server.requests("POST", "/in").first)
        let header = try XCTUnwrap(sent.headers["subdesk-signature"])

        try sent.body.write(to: folder.appendingPathComponent("body.json"))
        XCTAssertEqual(try run(script, in: folder, signature: header), "valid")
        var changed = sent.body
        changed[changed.count / 2] ^= 1
        try changed.write(to: folder.appendingPathComponent("body.json"))
        XCTAssertEqual(try run(script, in: folder, signature: header), "forged")
        // The body as sent, but an old time: refused too.
        try sent.body.write(to: folder.appendingPathComponent("body.json"))
        let old = DeliverySignature(secret: Data("9f2c-shared-secret".utf8)).value(body: sent.body, time: Int64(Date().timeIntervalSince1970) - 3_600)
        XCTAssertEqual(try run(script, in: folder, signature: old), "forged")
    }
}
