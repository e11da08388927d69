import Foundation
import XCTest

/// Compares rendered screens line by line with text files under `Snapshots/`.
///
/// Run with `SUBDESK_RECORD_SNAPSHOTS=1` to write the files from the
/// current rendering; review the diff before committing it.
enum Snapshot {
    static let directory = DashboardFixture.repositoryRoot
        .appendingPathComponent("Tests/DashboardTests/Snapshots")

    static var recording: Bool { ProcessInfo.processInfo.environment["SUBDESK_RECORD_SNAPSHOTS"] == "1" }

    static func assertLines(_ lines: [String], named name: String, file: StaticString = #filePath, line: UInt = #line) {
        let url = directory.appendingPathComponent(name + ".txt")
        let actual = lines.joined(separator: "\n") + "\n"
        guard !recording, let expectedText = try? String(contentsOf: url, encoding: .utf8) else {
            try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try? actual.write(to: url, atomically: true, encoding: .utf8)
            if !recording { XCTFail("no snapshot \(name).txt yet; recorded it, check it and run again", file: file, line: line) }
            return
        }
        var expected = expectedText.components(separatedBy: "\n")
        if expected.last == "" { expected.removeLast() }
        XCTAssertEqual(lines.count, expected.count, "\(name): line count", file: file, line: line)
        for (index, pair) in zip(lines, expected).enumerated() where pair.0 != pair.1 {
            XCTFail("\(name) line \(index + 1):\n  got      \(pair.0)\n  expected \(pair.1)", file: file, line: line)
        }
    }
}
