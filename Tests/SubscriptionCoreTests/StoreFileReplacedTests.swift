import Foundation
import XCTest
@testable import SubscriptionCore
import SubdeskTestKit

/// A SQLite store whose path comes to name another file while it is open (a backup moved
/// over it, the file deleted and made again): a write says so instead of going to the file
/// no path names, and closing the old connection leaves the new file readable as itself.
final class StoreFileReplacedTests: XCTestCase {
    var dir: String!

    override func setUpWithError() throws {
        dir = NSTemporaryDirectory() + "store-replaced-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(atPath: dir) }

    func ingest(_ store: Store, _ id: String) throws -> IntakeOutcome {
        try TestKit.intake(store).ingest(TestKit.body(type: "SUBSCRIBED", subtype: "INITIAL_BUY",
                                                      transaction: TestKit.transaction(id: id, original: id),
                                                      renewal: TestKit.renewal(original: id)))
    }

    func count(_ path: String) throws -> Int { try Store(path: path, mode: .reading).notifications.count() }

    func testAWriteAfterTheFileWasMovedOverSaysSoAndWritesNothing() throws {
        let path = dir + "/s.db"
        let store = try Store(path: path)
        XCTAssertNotNil(store.opening.file)
        _ = try ingest(store, "2000000955600001")
        let backup = dir + "/backup.db"
        _ = try Store(path: backup)
        XCTAssertNil(store.fileReplacedAtPath())
        XCTAssertEqual(rename(backup, path), 0)

        XCTAssertEqual(store.fileReplacedAtPath()?.missing, false)
        XCTAssertThrowsError(try ingest(store, "2000000955600002")) { error in
            let replaced = error as? FileReplacedError
            XCTAssertEqual(replaced?.committed, false, "\(error)")
            XCTAssertEqual(replaced?.path, path)
        }
        store.closeAfterReplacement()
        XCTAssertEqual(try count(path), 0, "the file at the path reads as itself, not through the old file's log")
    }

    func testAWriteDuringWhichTheFileWasReplacedSaysItWentToTheReplacedFile() throws {
        let path = dir + "/s.db"
        let store = try Store(path: path)
        let other = dir + "/other.db"
        _ = try Store(path: other)
        XCTAssertThrowsError(try store.write {
            _ = try ingest(store, "2000000955600003")
            XCTAssertEqual(rename(other, path), 0)
        }) { error in
            XCTAssertEqual((error as? FileReplacedError)?.committed, true, "\(error)")
            XCTAssertTrue("\(error)".contains("went to the replaced file"), "\(error)")
        }
        store.closeAfterReplacement()
        XCTAssertEqual(try count(path), 0)
    }

    func testADeletedFileIsSaidMissing() throws {
        let path = dir + "/s.db"
        let store = try Store(path: path)
        for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) }
        XCTAssertEqual(store.fileReplacedAtPath()?.missing, true)
        XCTAssertThrowsError(try ingest(store, "2000000955600004")) { error in
            XCTAssertTrue("\(error)".contains("was deleted"), "\(error)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: path))
    }

    func testAStoreWithoutAFileNeverSaysItWasReplaced() throws {
        let store = try Store(path: ":memory:")
        XCTAssertNil(store.opening.file)
        XCTAssertNil(store.fileReplacedAtPath())
        XCTAssertNoThrow(try ingest(store, "2000000955600005"))
    }
}
