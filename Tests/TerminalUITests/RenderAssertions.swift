import XCTest
@testable import TerminalUI

/// Renders into a fresh buffer of the given size.
func render(width: Int, height: Int, _ draw: (inout ScreenBuffer) -> Void) -> ScreenBuffer {
    var buffer = ScreenBuffer(width: width, height: height)
    draw(&buffer)
    return buffer
}

/// Compares a buffer's trimmed lines with the expected ones, reporting the first differing row.
///
/// Expected rows beyond those given are taken to be blank, so tests list
/// only the rows that carry content.
func assertLines(_ buffer: ScreenBuffer, _ expected: [String], file: StaticString = #filePath, line: UInt = #line) {
    let actual = buffer.lines()
    var padded = expected
    while padded.count < actual.count { padded.append("") }
    guard actual != padded else { return }
    let firstDifference = zip(actual, padded).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(actual.count, padded.count)
    func numbered(_ rows: [String]) -> String {
        rows.enumerated().map { "\($0.offset < 10 ? " " : "")\($0.offset)|\($0.element)|" }.joined(separator: "\n")
    }
    let shown = numbered(actual)
    let wanted = numbered(padded)
    XCTFail("row \(firstDifference) differs\nactual:\n\(shown)\nexpected:\n\(wanted)", file: file, line: line)
}

/// The roles of a row's columns, compressed to runs for readable failures: "normal×3 selection×5".
func roleRuns(_ buffer: ScreenBuffer, row: Int) -> String {
    var runs: [(StyleRole, Int)] = []
    for role in buffer.roles(row) {
        if let last = runs.last, last.0 == role {
            runs[runs.count - 1].1 += 1
        } else {
            runs.append((role, 1))
        }
    }
    return runs.map { "\($0.0.rawValue)×\($0.1)" }.joined(separator: " ")
}
