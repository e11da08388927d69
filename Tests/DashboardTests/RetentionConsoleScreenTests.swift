import Foundation
import XCTest
import SubdeskTestKit
import SubdeskScenarios
import FakeApple
import TerminalUI
@testable import SubscriptionCore
@testable import Dashboard

/// `:retention`'s console side (Tab): the app's messages and images as the store keeps them,
/// the default messages, the last performance test; `u`, `d`, `m` and `t` checked by the
/// reducer, confirmed with y/n, and carried out against a fake of Apple's Retention Messaging
/// API through the same `RetentionConsole` as `subdesk retention`, audited as it is.
final class RetentionConsoleScreenTests: XCTestCase, RunsOnEveryEngine {
    static var engineTests: Set<String>? { ["testEveryActionAgainstTheFakeRetentionMessagingAPI"] }

    let messageId = "7b2d9e14-1c3a-4f5b-8e6d-2a9c0b4f3e02"
    let pendingId = "0c4f8a31-6b2e-4d7c-9a15-3e8b2f6d1c03"
    let imageId = "3f1c0a52-8d4e-4b8a-9a43-0c5d2e7f1a01"
    let app = ScenarioBuilder.demoBundleId

    func record(_ kind: RetentionRecord.Kind, _ id: String, _ content: String, state: String?, environment: String = "Production") -> RetentionRecord {
        RetentionRecord(app: app, environment: environment, kind: kind, identifier: id, content: content,
                        checksum: kind == .defaultMessage ? nil : String(repeating: "ab", count: 32), state: state, uploadedMs: DashboardFixture.anchor)
    }

    /// A desk on `:retention`'s console side with an APPROVED message, a PENDING one, an image
    /// and a default message, as the store would hand them over.
    func consoleState(width: Int = 80, height: Int = 24) -> DashboardState {
        var state = DashboardFixture.state(width: width, height: height)
        state.stack = [.subscribers, .retention]
        state.retention.pane = .content
        _ = DashboardReducer.reduce(into: &state, .retentionLoaded(RetentionReport(rows: [], grouping: .product)))
        _ = DashboardReducer.reduce(into: &state, .retentionContentLoaded(.production, [
            record(.message, messageId, #"{"header":"Stay a little longer","body":"Your plan keeps every feature."}"#, state: "APPROVED"),
            record(.message, pendingId, #"{"header":"Half price for 3 months","body":"Before you go."}"#, state: "PENDING"),
            record(.image, imageId, "FULL_SIZE", state: "REJECTED"),
            record(.defaultMessage, "app.monthly en-US", messageId, state: "APPROVED"),
        ]))
        return state
    }

    static let passed = RetentionPerformanceResult(
        result: "PASS", target: "https://retention.example.com/realtime", successRate: 98, numPending: 0,
        responseTimes: ["average": 120, "p50": 100, "p90": 200, "p95": 250, "p99": 400], failures: ["TIMED_OUT": 1],
        config: ["responseTimeThreshold": 500, "successRateThreshold": 95])

    func lines(_ state: DashboardState) -> [String] {
        var buffer = ScreenBuffer(width: state.width, height: state.height)
        DashboardRenderer.render(state, into: &buffer)
        return buffer.lines()
    }

    // MARK: rendering

    func testTheConsoleSideRendersRecordsDefaultsAndThePerformanceTest() {
        for (width, height) in [(80, 24), (120, 40)] {
            var state = consoleState(width: width, height: height)
            _ = DashboardReducer.reduce(into: &state, .retentionRefreshed(.production, messages: [
                RetentionComparison(identifier: messageId, appleState: "APPROVED", keptState: "APPROVED", summary: "Stay a little longer", difference: .same),
                RetentionComparison(identifier: pendingId, appleState: "PENDING", keptState: "PENDING", summary: "Half price", difference: .same),
                RetentionComparison(identifier: "9a9a9a9a-1111-4222-8333-444455556666", appleState: "APPROVED", keptState: nil, summary: nil,
                                    difference: .onlyAtApple),
            ], images: []))
            _ = DashboardReducer.reduce(into: &state, .retentionPerformanceTested(requestId: "5e6f7a8b-0000-4000-8000-000000000001", Self.passed,
                                                                                 message: "done", failed: false))
            state.flash = nil
            let shown = lines(state)
            Snapshot.assertLines(shown, named: "retention-console-\(width)x\(height)")
            let text = shown.joined(separator: "\n")
            // Each record with its review state; what only Apple's list has, marked so at the wide size.
            for (id, review) in [(messageId, "APPROVED"), (pendingId, "PENDING"), (imageId, "REJECTED")] {
                let row = shown.first { $0.contains(id) && !$0.contains("sha256") }
                XCTAssertTrue(row?.contains(review) == true, "\(id) at \(width)x\(height)\n\(text)")
            }
            XCTAssertTrue(text.contains("app.monthly  en-US  → \(messageId)  Stay a little l"), text)
            XCTAssertTrue(text.contains("success rate 98% (Apple's threshold 95%)"), text)
            XCTAssertTrue(text.contains("(Apple's threshold 500 ms)"), text)
            if width >= 110 {
                XCTAssertTrue(shown.contains { $0.contains("9a9a9a9a-1111-4222-8333-444455556666") && $0.contains("only at Apple") }, text)
                XCTAssertTrue(shown.contains { $0.contains(imageId) && $0.contains("only in the store") }, text)
            }
        }
    }

    func testTabSwitchesSidesAndTheReportSideIsUnchanged() {
        var state = consoleState()
        let back = DashboardReducer.reduce(into: &state, .key(.tab))
        XCTAssertEqual(state.retention.pane, .report)
        XCTAssertTrue(back.isEmpty)
        XCTAssertTrue(lines(state).joined(separator: "\n").contains("no retention messaging rows: import Apple's report"))
        XCTAssertEqual(DashboardReducer.reduce(into: &state, .key(.tab)), [.loadRetentionContent(.production)])
        XCTAssertEqual(state.retention.pane, .content)
        // `e` shows the sandbox's records: the production ones go, and an answer for production arriving late is not shown.
        XCTAssertEqual(DashboardReducer.reduce(into: &state, .key(.char("e"))), [.loadRetentionContent(.sandbox)])
        XCTAssertTrue(state.retention.contentRows.isEmpty)
        _ = DashboardReducer.reduce(into: &state, .retentionContentLoaded(.production, [record(.message, messageId, "{}", state: "APPROVED")]))
        XCTAssertTrue(state.retention.contentRows.isEmpty)
        XCTAssertTrue(lines(state)[1].contains("Retention console · Sandbox"), lines(state)[1])
    }

    // MARK: the reducer

    func testDeleteAsksFirstAndNamesWhatGoes() {
        var state = consoleState()
        _ = DashboardReducer.reduce(into: &state, .key(.char("j")))
        XCTAssertEqual(state.retention.selected?.identifier, pendingId)
        XCTAssertTrue(DashboardReducer.reduce(into: &state, .key(.char("d"))).isEmpty)
        XCTAssertEqual(state.confirmation?.question,
                       "Delete message \(pendingId) (Half price for 3 months) at Apple (Production)? y: yes, any other key: no")
        XCTAssertTrue(DashboardReducer.reduce(into: &state, .key(.char("n"))).isEmpty, "any other key cancels")
        _ = DashboardReducer.reduce(into: &state, .key(.char("d")))
        XCTAssertEqual(DashboardReducer.reduce(into: &state, .key(.char("y"))), [.deleteRetentionContent(.message, identifier: pendingId, .production)])
    }

    func testOnlyAnApprovedMessageCanBeMadeADefault() {
        var state = consoleState()
        _ = DashboardReducer.reduce(into: &state, .key(.char("j")))
        XCTAssertTrue(DashboardReducer.reduce(into: &state, .key(.char("m"))).isEmpty)
        XCTAssertNil(state.prompt)
        XCTAssertEqual(state.flash?.text, "message \(pendingId) is PENDING (as Apple's list last said; u refreshes): only an APPROVED message can be a default")
        _ = DashboardReducer.reduce(into: &state, .key(.escape))
        _ = DashboardReducer.reduce(into: &state, .key(.char("j")))
        _ = DashboardReducer.reduce(into: &state, .key(.char("m")))
        XCTAssertEqual(state.flash?.text, "\(imageId) is an image: only a message can be a default")
        _ = DashboardReducer.reduce(into: &state, .key(.escape))

        _ = DashboardReducer.reduce(into: &state, .key(.char("g")))
        _ = DashboardReducer.reduce(into: &state, .key(.char("m")))
        XCTAssertEqual(state.prompt?.kind, .retentionDefault(messageId: messageId))
        // A locale Apple's path would not take is refused before any question.
        "app.monthly en US!".forEach { _ = DashboardReducer.reduce(into: &state, .key(.char($0))) }
        _ = DashboardReducer.reduce(into: &state, .key(.enter))
        XCTAssertNil(state.confirmation)
        XCTAssertTrue(state.flash?.text.contains("a default message is for a PRODUCT and a LOCALE") == true, "\(String(describing: state.flash))")
        _ = DashboardReducer.reduce(into: &state, .key(.escape))
        _ = DashboardReducer.reduce(into: &state, .key(.char("m")))
        "app.monthly e!".forEach { _ = DashboardReducer.reduce(into: &state, .key(.char($0))) }
        _ = DashboardReducer.reduce(into: &state, .key(.enter))
        XCTAssertEqual(state.flash?.text, "locale: e! is not a locale (such as en-US)")
        _ = DashboardReducer.reduce(into: &state, .key(.escape))
        _ = DashboardReducer.reduce(into: &state, .key(.char("m")))
        "app.monthly de-DE".forEach { _ = DashboardReducer.reduce(into: &state, .key(.char($0))) }
        _ = DashboardReducer.reduce(into: &state, .key(.enter))
        XCTAssertEqual(state.confirmation?.question,
                       "Make message \(messageId) the default of app.monthly in de-DE at Apple (Production)? y: yes, any other key: no")
        XCTAssertEqual(DashboardReducer.reduce(into: &state, .key(.char("y"))),
                       [.setRetentionDefault(product: "app.monthly", locale: "de-DE", messageId: messageId, .production)])
    }

    func testThePerformanceTestTakesATransactionIdAndRefreshNeedsNoQuestion() {
        var state = consoleState()
        _ = DashboardReducer.reduce(into: &state, .key(.char("t")))
        XCTAssertEqual(state.prompt?.kind, .retentionPerformanceTest)
        "20000x".forEach { _ = DashboardReducer.reduce(into: &state, .key(.char($0))) }
        _ = DashboardReducer.reduce(into: &state, .key(.enter))
        XCTAssertNil(state.confirmation)
        XCTAssertEqual(state.flash?.kind, .error)
        _ = DashboardReducer.reduce(into: &state, .key(.escape))
        _ = DashboardReducer.reduce(into: &state, .key(.char("t")))
        "2000000000000001".forEach { _ = DashboardReducer.reduce(into: &state, .key(.char($0))) }
        _ = DashboardReducer.reduce(into: &state, .key(.enter))
        XCTAssertEqual(DashboardReducer.reduce(into: &state, .key(.char("y"))), [.retentionPerformanceTest(originalTransactionId: "2000000000000001")])
        XCTAssertEqual(DashboardReducer.reduce(into: &state, .key(.char("u"))), [.refreshRetention(.production)])
    }

    func testWithoutTheKeyOrWithSeveralAppsAndNoScopeNothingIsAsked() throws {
        var state = consoleState()
        state.withoutServerAPIKey = true
        for key in ["u", "d", "t"] {
            XCTAssertTrue(DashboardReducer.reduce(into: &state, .key(.char(Character(key)))).isEmpty, key)
            XCTAssertNil(state.confirmation, key)
            XCTAssertNil(state.prompt, key)
            XCTAssertTrue(state.flash?.text.hasPrefix("the Retention Messaging API needs the App Store Server API key") == true,
                          "\(key): \(String(describing: state.flash))")
            _ = DashboardReducer.reduce(into: &state, .key(.escape))
        }
        state.withoutServerAPIKey = false
        state.apps = try ConfiguredApps(configuration: Configuration(
            text: "[app one]\nbundle_id = com.example.one\n\n[app two]\nbundle_id = com.example.two\n", source: "config"))
        XCTAssertTrue(DashboardReducer.reduce(into: &state, .key(.char("u"))).isEmpty)
        XCTAssertEqual(state.flash?.text, "the Retention Messaging API is one app's: scope the desk first with :app NAME (one, two)")
    }

    // MARK: against the fake Apple

    /// A message and an image uploaded through the console (PENDING at the fake), then the
    /// desk: `u` shows Apple's review, `m` makes the approved message a default, `d` deletes
    /// the image, `t` runs the performance test (PASS, then FAIL), each audited.
    func testEveryActionAgainstTheFakeRetentionMessagingAPI() throws {
        let fixture = try AppleSessionFixture()
        defer { fixture.tearDown() }
        let fake = FakeRetentionMessaging()
        fake.install(on: fixture.apple)
        fake.pendingReads = 0
        let pace = RetentionPacer.shared.sleep
        RetentionPacer.shared.sleep = { _ in }
        defer { RetentionPacer.shared.sleep = pace }
        let session = fixture.session
        guard case .success(let revalidator) = session.revalidator else { return XCTFail("no revalidator") }
        let console = try revalidator.retentionConsole(bundleId: nil, environment: .production)
        _ = try console.uploadMessage(id: messageId, message: try RetentionMessage(header: "Stay a little longer", body: "Your plan keeps every feature."),
                                      reason: nil)
        var png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        func u32(_ n: Int) -> [UInt8] { [UInt8(n >> 24 & 0xFF), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)] }
        png += u32(13) + Array("IHDR".utf8) + u32(3840) + u32(400) + [8, 2, 0, 0, 0] + u32(0) + u32(0) + Array("IEND".utf8) + u32(0)
        _ = try console.uploadImage(id: imageId, kind: .fullSize, png: png, reason: nil)

        fixture.command("retention")
        session.type(.tab)
        XCTAssertEqual(session.state.retention.contentRows.map(\.state), ["PENDING", "PENDING"], session.screenText)
        XCTAssertTrue(session.screenText.contains("u reads Apple's lists"), session.screenText)

        // Apple's review moves on: `u` reads the lists and the states change on screen and in the store.
        fake.approveEverything()
        session.type(.char("u"))
        XCTAssertTrue(session.waitForBackgroundWork(timeout: 20))
        XCTAssertEqual(session.state.retention.contentRows.map(\.state), ["APPROVED", "APPROVED"], session.screenText)
        XCTAssertTrue(session.screenLines.contains { $0.contains(messageId) && $0.contains("APPROVED") }, session.screenText)
        XCTAssertEqual(try session.store.retention.content.records(kind: .message).map(\.state), ["APPROVED"])

        // `m` on the approved message, for a product and locale: set at Apple, kept, audited.
        session.type(.char("g"), .char("m"))
        session.type("app.monthly en-US")
        session.type(.enter, .char("y"))
        XCTAssertTrue(session.waitForBackgroundWork(timeout: 20))
        XCTAssertEqual(session.state.flash?.kind, .info, "\(String(describing: session.state.flash))")
        XCTAssertEqual(fixture.apple.requests("PUT", "/prod/inApps/v1/messaging/default/app.monthly/en-US").count, 1)
        XCTAssertTrue(session.screenText.contains("app.monthly  en-US  → \(messageId)  Stay a little longer"), session.screenText)

        // `d` on the image: deleted at Apple and from the store's records.
        session.type(.char("G"), .char("d"), .char("y"))
        XCTAssertTrue(session.waitForBackgroundWork(timeout: 20))
        XCTAssertTrue(fake.images().isEmpty)
        XCTAssertEqual(session.state.retention.contentRows.map(\.identifier), [messageId], session.screenText)

        // `t`: Apple's performance test of the sandbox URL, PASS beside Apple's thresholds, then FAIL.
        session.type(.char("t"))
        session.type("2000000000000001")
        session.type(.enter, .char("y"))
        XCTAssertTrue(session.waitForBackgroundWork(timeout: 30))
        XCTAssertEqual(session.state.retention.performance?.verdict, .pass)
        XCTAssertTrue(session.screenText.contains("(sandbox): result PASS"), session.screenText)
        XCTAssertTrue(session.screenText.contains("success rate 98% (Apple's threshold 95%)"), session.screenText)
        fake.verdict = "FAIL"
        session.type(.char("t"))
        session.type("2000000000000001")
        session.type(.enter, .char("y"))
        XCTAssertTrue(session.waitForBackgroundWork(timeout: 30))
        XCTAssertEqual(session.state.retention.performance?.verdict, .fail)
        XCTAssertEqual(session.state.flash?.kind, .error)
        XCTAssertTrue(session.screenText.contains("(sandbox): result FAIL"), session.screenText)
        XCTAssertTrue(session.screenText.contains("success rate 60% (Apple's threshold 95%)"), session.screenText)
        XCTAssertEqual(fixture.apple.requests.filter { $0.path == "/sandbox/inApps/v1/messaging/performanceTest" }.count, 2)

        let actions = try session.store.audit.entries(limit: 50).map(\.action).filter { $0.hasPrefix("retention_") }.sorted()
        XCTAssertEqual(actions, ["retention_default", "retention_delete", "retention_performance_test", "retention_performance_test",
                                 "retention_upload", "retention_upload"])
        XCTAssertTrue(try session.store.audit.entries(limit: 50).filter { $0.action.hasPrefix("retention_") }.allSatisfy { $0.operatorName == "ana" })
    }
}
