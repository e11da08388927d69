import Foundation
import XCTest
@testable import subdesk

/// Every value a command echoes in a diagnostic reaches the terminal through the one
/// sanitiser: each command is given an escape sequence as each of its options' values (and
/// as its argument), and nothing it writes to standard error carries a control byte but
/// the line breaks.
final class EchoedValueTests: SubdeskTestCase {
    /// Commands that take over a terminal, a socket or the network when their values pass.
    static let leftOut: Set<String> = ["dashboard", "demo", "serve", "sweep"]
    static let hostile = "\u{1b}]0;pwned\u{07}\u{1b}[31mred\u{9b}2J\u{202e}x"

    /// How `subdesk ARGS` ended (killed after 20 s) and what it wrote to standard error.
    func bounded(_ args: [String]) throws -> (status: Int32?, stderr: Data) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Self.binary)
        p.arguments = args
        // A command may make a file named by its argument (a backup): in the test's folder.
        p.currentDirectoryURL = URL(fileURLWithPath: dir)
        var env = ProcessInfo.processInfo.environment
        env["XDG_DATA_HOME"] = dir + "/data"
        env["XDG_CONFIG_HOME"] = dir + "/config"
        env.removeValue(forKey: "SUBDESK_DB")
        env.removeValue(forKey: "SUBDESK_CONFIG")
        p.environment = env
        let errPath = dir + "/stderr"
        FileManager.default.createFile(atPath: errPath, contents: nil)
        p.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errPath))
        p.standardOutput = FileHandle.nullDevice
        p.standardInput = FileHandle.nullDevice
        try p.run()
        let deadline = Date().addingTimeInterval(20)
        while p.isRunning && Date() < deadline { usleep(5_000) }
        if p.isRunning { p.terminate(); p.waitUntilExit(); return (nil, Data()) }
        return (p.terminationStatus, try Data(contentsOf: URL(fileURLWithPath: errPath)))
    }

    func testNoDiagnosticCarriesAnEscapeSequenceFromAValue() throws {
        let db = dir + "/store.db"
        XCTAssertEqual(try run(["init", "--db", db]).status, 0)
        var cases: [[String]] = [["--app", Self.hostile, "counts", "--db", db], [Self.hostile], ["--" + Self.hostile]]
        for command in CommandTable.standard.commands where !Self.leftOut.contains(command.name) {
            let words = command.name.split(separator: " ").map(String.init)
            for option in command.allOptions {
                if case .flag = option.kind { continue }
                cases.append(words + ["--db", db, "--" + option.name, Self.hostile])
            }
            if !command.arguments.isEmpty { cases.append(words + ["--db", db, Self.hostile]) }
        }
        var carried: [String] = []
        for args in cases {
            let (status, stderr) = try bounded(args)
            if stderr.contains(where: { $0 < 0x20 && $0 != 0x0A }) || stderr.contains(0x7F)
                || String(decoding: stderr, as: UTF8.self).unicodeScalars.contains(where: { (0x80...0x9F).contains($0.value) || $0.value == 0x202E }) {
                carried.append("\(args.map { $0 == Self.hostile ? "HOSTILE" : $0 }.joined(separator: " ")) (exit \(status.map(String.init) ?? "killed")): "
                               + String(decoding: stderr, as: UTF8.self).debugDescription)
            }
        }
        XCTAssertGreaterThan(cases.count, 100)
        XCTAssertEqual(carried, [], carried.joined(separator: "\n"))
    }
}
