import Foundation
import XCTest
import SubdeskTestKit
import SubscriptionCore
import SubdeskScenarios
import TerminalUI
@testable import Dashboard

/// A store file deleted or replaced under an open dashboard (another `subdesk demo`) is
/// noticed: the status line stops saying live, and a new store at the path is opened.
final class StoreFileWatchTests: XCTestCase, RunsOnEveryEngine {
    func buildStore(at path: String, copies: Int) throws {
        let store = try Store(path: path)
        let sample = try SampleData.locate(explicit: DashboardFixture.repositoryRoot.appendingPathComponent("sample-data").path)
        _ = try DemoStoreBuilder(sample: sample, copies: copies).build(into: store, anchor: DashboardFixture.anchor)
    }

    func testADeletedStoreIsSaidSoAndAReplacedOneIsReopened() throws {
        let dir = NSTemporaryDirectory() + "subdesk-watch-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/demo.db"
        try buildStore(at: path, copies: 1)
        let session = DashboardFixture.session(try Store(path: path, mode: .existing), width: 120, height: 40)
        session.tick()
        XCTAssertTrue(session.screenLines[0].hasSuffix("● live"), session.screenLines[0])
        let before = session.state.subscribers.totalCount
        XCTAssertNotNil(before)

        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        session.tick()
        XCTAssertTrue(session.state.storeGone)
        XCTAssertTrue(session.screenLines[0].hasSuffix("✕ store gone"), session.screenLines[0])
        XCTAssertTrue(session.screenText.contains("store deleted or moved: showing what was loaded"), session.screenText)

        try buildStore(at: path, copies: 2)
        session.tick()
        session.tick()
        XCTAssertFalse(session.state.storeGone)
        XCTAssertTrue(session.screenLines[0].hasSuffix("● live"), session.screenLines[0])
        XCTAssertTrue(session.screenText.contains("store replaced: reopened"), session.screenText)
        XCTAssertEqual(session.state.subscribers.totalCount, before.map { 2 * $0 }, "the new store's rows are shown")
    }

    /// The feed and the audit log follow the store that took the path, not only the list:
    /// the feed's cursor (the old store's last row id) must not hide the new store's rows.
    func testTheFeedAndTheAuditLogShowTheReplacingStoresRows() throws {
        let dir = NSTemporaryDirectory() + "subdesk-watch-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/demo.db"
        try buildStore(at: path, copies: 2)
        let old = try Store(path: path, mode: .existing)
        // The old store has an action the new one will not have.
        _ = try Operations(store: old, operatorName: "ana").grant("2000000400000901", until: DashboardFixture.anchor + 86_400_000,
                                                                   reason: "goodwill", now: DashboardFixture.anchor)
        let oldFeedRows = try old.intakeLog.entries(limit: FeedState.capacity).count
        let session = DashboardSession(store: old, state: DashboardFixture.state(width: 120, height: 40), clock: { DashboardFixture.anchor })
        session.start()
        session.send(.key(.char(":")))
        session.type("feed")
        session.send(.key(.enter))
        XCTAssertTrue(session.screenText.contains("\(oldFeedRows) rows"), session.screenText)

        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        try buildStore(at: path, copies: 1)
        let replacing = try Store(path: path, mode: .existing)
        let newRows = try replacing.intakeLog.entries(limit: FeedState.capacity)
        let newAudit = try replacing.audit.entries()
        XCTAssertNotEqual(newRows.count, oldFeedRows)
        session.tick()
        XCTAssertTrue(session.screenText.contains("store replaced: reopened"), session.screenText)
        XCTAssertTrue(session.screenText.contains("\(newRows.count) rows"), "the feed holds the new store's rows:\n\(session.screenText)")
        XCTAssertEqual(session.state.feed.entries.map(\.id), newRows.map(\.id).sorted(by: >))
        // A body stored after the replacement arrives on the feed.
        try replacing.logIntake(IntakeLogEntry(receivedDate: DashboardFixture.anchor, result: .stored, notificationUUID: "after-replace",
                                               type: "DID_RENEW", originalTransactionId: "2000000400099901"))
        session.tick()
        XCTAssertTrue(session.screenText.contains("2000000400099901"), session.screenText)

        session.send(.key(.char(":")))
        session.type("audit")
        session.send(.key(.enter))
        XCTAssertTrue(session.screenText.contains("\(newAudit.count) operator actions"), session.screenText)
        XCTAssertFalse(session.screenText.contains("goodwill"), "the old store's grant is gone with it:\n\(session.screenText)")
    }

    /// The demo store standing in for a missing configured one is said on the screen, on
    /// every screen's header and in `:messages`, not only on stderr after quitting.
    func testTheDemoStoreStandingInIsSaidOnTheScreen() throws {
        var state = DashboardFixture.state()
        let notice = "no store at /data/subdesk/subdesk.db yet; showing the demo store /data/subdesk/demo.db"
        state.standInNotice = notice
        let session = DashboardSession(store: try DashboardFixture.demoStore(), state: state, clock: { DashboardFixture.anchor })
        session.start()
        let lines = session.screenLines
        // At 80 columns the store name gives way first (shortened), the breadcrumb and the notice stay.
        XCTAssertTrue(lines[0].contains("subdesk ▸ subscribers") && lines[0].contains("demo.db  (demo: no store configured)"), lines[0])
        XCTAssertTrue(lines[lines.count - 1].hasPrefix(" showing the demo store, not the configured one"), lines[lines.count - 1])
        var buffer = ScreenBuffer(width: 80, height: 24)
        session.render(into: &buffer)
        let column = try XCTUnwrap(lines[0].range(of: "(demo:")).lowerBound.utf16Offset(in: lines[0])
        XCTAssertEqual(buffer[column + 1, 0].role, .warning, "marked as a warning")
        session.send(.key(.char(":")))
        session.type("messages")
        session.send(.key(.enter))
        let messages = session.screenLines.joined(separator: " ").replacingOccurrences(of: "│", with: " ")
            .split(separator: " ").joined(separator: " ")
        XCTAssertTrue(messages.contains("no store at /data/subdesk/subdesk.db yet; showing the demo store /data/subdesk/demo.db"), messages)
        session.send(.key(.char(":")))
        session.type("feed")
        session.send(.key(.enter))
        XCTAssertTrue(session.screenLines[0].contains("(demo: no store configured)"), "every screen: \(session.screenLines[0])")
    }
}
