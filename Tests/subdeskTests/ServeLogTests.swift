import Foundation
import XCTest
@testable import subdesk

/// serve's error log under a flood of junk: a budget of lines a minute, then one line that
/// says how many were left out.
final class ServeLogTests: XCTestCase {
    func testAFloodIsCutToTheBudgetAndTheRestCounted() {
        let written = Shared([String]())
        var clock = Date(timeIntervalSince1970: 1_800_000_000)
        let log = ServeLog(perMinute: 3, write: { line in written.update { $0.append(line) } }, now: { clock })
        for i in 0..<10 { log.error("junk \(i)") }
        XCTAssertEqual(written.current, ["serve: junk 0", "serve: junk 1", "serve: junk 2"])
        clock += 61
        log.error("after a minute")
        XCTAssertEqual(Array(written.current.suffix(2)),
                       ["serve: 7 more error lines were left out in the last minute", "serve: after a minute"])
    }
}
