import Foundation
import XCTest
import SubscriptionCore
import TerminalUI
@testable import Dashboard

/// A store file deleted or replaced under an open dashboard (another `subdesk demo`) is
/// noticed: the status line stops saying live, and a new store at the path is opened.
final class StoreFileWatchTests: XCTestCase {
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
}
