import Foundation
import XCTest

/// The rule ARCHITECTURE.md states for the dashboard: neither the reducer (`Reducer/`) nor a
/// view (`Render/`) calls the other. What both work out from the state is in
/// `State/Selectors.swift`, how many rows and columns fit in `Render/Layout.swift`, the one
/// file of `Render/` the reducer may read. Checked on the source: the types each folder
/// declares against the names the other folder's code uses (comments and string text aside).
final class LayeringTests: XCTestCase {
    static let dashboard = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources/Dashboard")

    /// The file of `Render/` the reducer may use: the arithmetic of what fits, which both share.
    static let sharedWithTheReducer = "Layout.swift"

    func testTheReducerCallsNoView() throws {
        let views = Set(try Self.files(in: "Render").filter { $0.name != Self.sharedWithTheReducer }.flatMap { Self.declarations(in: $0.code) })
        XCTAssertTrue(views.contains("CohortsView"), "the scan finds the views: \(views.sorted())")
        for (file, used) in try Self.uses(in: "Reducer", of: views) {
            XCTFail("Reducer/\(file) uses \(used.sorted().joined(separator: ", ")) of Render/")
        }
    }

    func testNoViewCallsTheReducer() throws {
        let reducer = try Self.declaredTypes(in: "Reducer")
        XCTAssertTrue(reducer.contains("DashboardReducer"), "the scan finds the reducer: \(reducer.sorted())")
        for (file, used) in try Self.uses(in: "Render", of: reducer) {
            XCTFail("Render/\(file) uses \(used.sorted().joined(separator: ", ")) of Reducer/")
        }
    }

    /// The scan itself: declarations are found at any depth, and names in comments or in a
    /// string's text are not uses, while names in an interpolation are.
    func testTheScanReadsCodeOnly() {
        let source = """
            /// Uses CommentedView.
            enum Outer { struct Inner {} }
            let a = "StringView \\(InterpolatedView.width) /* not a comment */ tail"
            let b = #"RawView "quoted" \\(NotInterpolated)"#
            /* block /* nested */ BlockView */ let c = Used.value // LineView
            let d = \"\"\"
                MultilineView \\(MultilineInterpolated.x)
                \"\"\"
            """
        let code = Self.code(of: source)
        XCTAssertEqual(Self.declarations(in: code), ["Outer", "Inner"])
        XCTAssertEqual(Self.identifiers(in: code).intersection(
            ["CommentedView", "StringView", "InterpolatedView", "RawView", "NotInterpolated", "BlockView", "Used", "LineView",
             "MultilineView", "MultilineInterpolated", "comment", "tail"]),
            ["InterpolatedView", "Used", "MultilineInterpolated"])
    }

    // MARK: - Reading the source

    static func files(in folder: String) throws -> [(name: String, code: String)] {
        let directory = dashboard.appendingPathComponent(folder)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".swift") }.sorted()
        XCTAssertFalse(names.isEmpty, "no Swift files in \(directory.path)")
        return try names.map { ($0, code(of: try String(contentsOf: directory.appendingPathComponent($0), encoding: .utf8))) }
    }

    static func declaredTypes(in folder: String) throws -> Set<String> {
        Set(try files(in: folder).flatMap { declarations(in: $0.code) })
    }

    /// Each file of `folder` that uses any of `names`, with the ones it uses.
    static func uses(in folder: String, of names: Set<String>) throws -> [(String, Set<String>)] {
        try files(in: folder).compactMap { file in
            let used = identifiers(in: file.code).intersection(names)
            return used.isEmpty ? nil : (file.name, used)
        }
    }

    /// The names a struct, enum, class, actor, protocol or typealias declares, in order.
    static func declarations(in code: String) -> [String] {
        let words = words(in: code)
        let introducers: Set<String> = ["struct", "enum", "class", "actor", "protocol", "typealias"]
        return zip(words, words.dropFirst()).compactMap { introducers.contains($0) ? $1 : nil }
    }

    static func identifiers(in code: String) -> Set<String> { Set(words(in: code)) }

    static func words(in code: String) -> [String] {
        var words: [String] = []
        var current = ""
        for character in code {
            if character == "_" || character.isLetter || (character.isNumber && !current.isEmpty) {
                current.append(character)
            } else if !current.isEmpty {
                words.append(current)
                current = ""
            }
        }
        if !current.isEmpty { words.append(current) }
        return words
    }

    /// `source` with comments and the text of string literals blanked out; an
    /// interpolation's code stays, as it is code.
    static func code(of source: String) -> String {
        let characters = Array(source)
        var output = ""
        var index = 0
        // Open string literals, innermost last: their `#` count and whether multi-line, and
        // for each interpolation the parentheses open inside it.
        var strings: [(hashes: Int, multiline: Bool)] = []
        var interpolations: [Int] = []

        func at(_ offset: Int, _ text: String) -> Bool {
            let wanted = Array(text)
            guard offset + wanted.count <= characters.count else { return false }
            return Array(characters[offset..<offset + wanted.count]) == wanted
        }
        func hashes(from offset: Int) -> Int {
            var count = 0
            while offset + count < characters.count, characters[offset + count] == "#" { count += 1 }
            return count
        }

        while index < characters.count {
            let inCode = strings.count == interpolations.count
            if inCode {
                if at(index, "//") {
                    while index < characters.count, characters[index] != "\n" { index += 1 }
                    continue
                }
                if at(index, "/*") {
                    var depth = 0
                    repeat {
                        if at(index, "/*") { depth += 1; index += 2 } else if at(index, "*/") { depth -= 1; index += 2 } else { index += 1 }
                    } while depth > 0 && index < characters.count
                    output.append(" ")
                    continue
                }
                let count = hashes(from: index)
                if at(index + count, "\"") {
                    let multiline = at(index + count, "\"\"\"")
                    strings.append((count, multiline))
                    index += count + (multiline ? 3 : 1)
                    output.append(" ")
                    continue
                }
                if !interpolations.isEmpty {
                    if characters[index] == "(" { interpolations[interpolations.count - 1] += 1 }
                    if characters[index] == ")" {
                        interpolations[interpolations.count - 1] -= 1
                        if interpolations.last == 0 {
                            interpolations.removeLast()
                            index += 1
                            output.append(" ")
                            continue
                        }
                    }
                }
                output.append(characters[index])
                index += 1
                continue
            }
            // Inside a string's text.
            let string = strings[strings.count - 1]
            let escape = "\\" + String(repeating: "#", count: string.hashes)
            if at(index, escape + "(") {
                interpolations.append(1)
                index += escape.count + 1
                output.append(" ")
            } else if at(index, escape) {
                index += escape.count + 1
            } else if at(index, (string.multiline ? "\"\"\"" : "\"") + String(repeating: "#", count: string.hashes)) {
                strings.removeLast()
                index += (string.multiline ? 3 : 1) + string.hashes
                output.append(" ")
            } else {
                if characters[index] == "\n" { output.append("\n") }
                index += 1
            }
        }
        return output
    }
}
