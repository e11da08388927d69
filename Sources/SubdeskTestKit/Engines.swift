import Foundation
import XCTest
import SubscriptionCore
@_exported import SubdeskTestSupport

// The suite runs twice: every test on SQLite (`swift test`), then, with SUBDESK_TEST_POSTGRES
// naming a server, the tests that depend on the engine again with their stores in PostgreSQL
// (scripts/test-postgres). Which tests depend on the engine is declared by the test class, in
// one place: it conforms to `RunsOnEveryEngine`. A store opened through this kit (or a test
// that asks for PostgreSQL) in a test that is not so marked fails that test, so no test that
// depends on the engine can silently leave the PostgreSQL pass.

/// A test class whose tests depend on the store's engine: they open their stores through this kit
/// (`Store.inMemory()`, `Store.testLocation(file:)`, `TestEngine.requirePostgres()`), and the
/// PostgreSQL pass runs them again with every such store in PostgreSQL.
public protocol RunsOnEveryEngine: XCTestCase {
    /// The tests of the class (method names) that depend on the engine, when only some do (a
    /// transport class keeps one burst on PostgreSQL); nil, the default: every test of the class.
    static var engineTests: Set<String>? { get }
}

extension RunsOnEveryEngine {
    public static var engineTests: Set<String>? { nil }
}

/// The engine this pass opens the suite's stores on.
public enum TestEngine {
    /// The server of the PostgreSQL pass (SUBDESK_TEST_POSTGRES), nil in the SQLite pass.
    static var server: String? {
        guard let base = ProcessInfo.processInfo.environment["SUBDESK_TEST_POSTGRES"], !base.isEmpty else { return nil }
        return base
    }

    /// The server of the PostgreSQL pass, nil in the SQLite pass: for a test that runs on both and
    /// adds a PostgreSQL store on the second. Only a test marked `RunsOnEveryEngine` may ask.
    public static func postgres(file: StaticString = #filePath, line: UInt = #line) -> String? {
        EngineMarking.check("asks for PostgreSQL", file: file, line: line)
        return server
    }

    /// The PostgreSQL server of this pass, or a skip in the SQLite pass: for a test that means
    /// something on PostgreSQL alone. Only a test marked `RunsOnEveryEngine` may ask.
    public static func requirePostgres(file: StaticString = #filePath, line: UInt = #line) throws -> String {
        EngineMarking.check("asks for PostgreSQL", file: file, line: line)
        guard let base = server else { throw XCTSkip("SUBDESK_TEST_POSTGRES is not set (scripts/pg-cluster start)") }
        return base
    }

    /// Checks that the running test is marked `RunsOnEveryEngine` (and selected, when its class
    /// names its engine tests): for a fixture that hands out a store it opened earlier.
    public static func checkMarked(_ what: String, file: StaticString = #filePath, line: UInt = #line) {
        EngineMarking.check(what, file: file, line: line)
    }
}

extension Store {
    /// An in-memory store, or in the PostgreSQL pass a store in a new schema of that server. Only
    /// a test marked `RunsOnEveryEngine` may open one: a test that wants SQLite on every pass
    /// opens `Store(path: ":memory:")`.
    public static func inMemory(file: StaticString = #filePath, line: UInt = #line) throws -> Store {
        EngineMarking.check("opens a store through the test kit", file: file, line: line)
        guard let server = TestEngine.server else { return try Store(path: ":memory:") }
        return try Store(path: PostgresSchemas.shared.take(server))
    }

    /// Where a test keeps a store it opens by location: `file`, or in the PostgreSQL pass a new
    /// schema of that server. Only a test marked `RunsOnEveryEngine` may ask.
    public static func testLocation(file path: String, file: StaticString = #filePath, line: UInt = #line) -> String {
        EngineMarking.check("opens a store through the test kit", file: file, line: line)
        return TestEngine.server.map(freshPostgresLocation) ?? path
    }
}

/// New PostgreSQL stores made ahead. Creating one runs every migration (0.1-0.2 s of the
/// server's time, most of a PostgreSQL test's own), so a thread keeps a few ready while the
/// tests run, and `Store.inMemory()` opens one at once. Each is used once, by one test, exactly
/// as a store made on the spot: empty, at the latest version. (`Store.testLocation` names a store
/// not made yet, as a command that creates it expects.)
final class PostgresSchemas: @unchecked Sendable {
    static let shared = PostgresSchemas()
    private let condition = NSCondition()
    private var ready: [String] = []
    private var maker: Thread?
    private let ahead = 3

    /// A store made ahead, or one made now when none is ready within a few seconds (the
    /// server restarted under the maker, say): then its error is the test's.
    func take(_ server: String) throws -> String {
        condition.lock()
        if maker == nil {
            let thread = Thread { [self] in make(server) }
            thread.name = "test kit: PostgreSQL stores made ahead"
            maker = thread
            thread.start()
        }
        let deadline = Date().addingTimeInterval(5)
        while ready.isEmpty && condition.wait(until: deadline) {}
        let taken = ready.isEmpty ? nil : ready.removeFirst()
        condition.broadcast()
        condition.unlock()
        if let taken { return taken }
        let location = Store.freshPostgresLocation(server)
        _ = try Store(path: location)
        return location
    }

    /// Keeps `ahead` stores ready; a store it could not make is tried again a moment later.
    private func make(_ server: String) {
        while true {
            condition.lock()
            while ready.count >= ahead { condition.wait() }
            condition.unlock()
            let location = Store.freshPostgresLocation(server)
            guard (try? Store(path: location)) != nil else {
                Thread.sleep(forTimeInterval: 0.5)
                continue
            }
            condition.lock()
            ready.append(location)
            condition.broadcast()
            condition.unlock()
        }
    }
}

/// Knows which test is running (XCTest tells its observers) and whether it is marked.
enum EngineMarking {
    static func check(_ what: String, file: StaticString, line: UInt) {
        EngineObserver.shared.check(what, file: "\(file)", line: Int(line))
    }

    /// Whether `test` depends on the engine by its class's declaration.
    static func isEngineTest(_ test: XCTestCase) -> Bool {
        guard let marked = type(of: test) as? any RunsOnEveryEngine.Type else { return false }
        guard let names = marked.engineTests else { return true }
        return names.contains(methodName(test))
    }

    /// "testX" of a test case named "Class.testX" (corelibs) or "-[Class testX]".
    static func methodName(_ test: XCTestCase) -> String {
        let name = test.name.trimmingCharacters(in: CharacterSet(charactersIn: "-[]"))
        return String(name.split(whereSeparator: { $0 == "." || $0 == " " }).last ?? Substring(name))
    }
}

final class EngineObserver: NSObject, XCTestObservation {
    static let shared = EngineObserver()

    /// The test running now; nil between tests (a class's own set-up).
    private var current: XCTestCase?
    /// What was opened between tests, charged to the next test that starts (its class's set-up).
    private var openedBetweenTests: (what: String, file: String, line: Int)?

    /// Whether the running test opened a store through the kit (for SUBDESK_TEST_ENGINE_REPORT).
    private var currentOpened = false

    func check(_ what: String, file: String, line: Int) {
        currentOpened = true
        guard let test = current else {
            openedBetweenTests = (what, file, line)
            return
        }
        refuseUnlessMarked(test, what, file: file, line: line)
    }

    private func refuseUnlessMarked(_ test: XCTestCase, _ what: String, file: String, line: Int) {
        guard !EngineMarking.isEngineTest(test) else { return }
        let owner = String(reflecting: type(of: test))
        let reason = type(of: test) is any RunsOnEveryEngine.Type
            ? "\(EngineMarking.methodName(test)) is not among \(owner).engineTests"
            : "\(owner) is not marked RunsOnEveryEngine"
        test.recordFailure(withDescription: "this test \(what), so it depends on the engine, but \(reason): "
                           + "the PostgreSQL pass would leave it out. Mark it, or open a SQLite store by path.",
                           inFile: file, atLine: line, expected: true)
    }

    func testCaseWillStart(_ testCase: XCTestCase) {
        current = testCase
        costAtStart = TestCost.now()
        currentOpened = openedBetweenTests != nil
        if let opened = openedBetweenTests {
            openedBetweenTests = nil
            refuseUnlessMarked(testCase, opened.what, file: opened.file, line: opened.line)
        }
    }

    func testCaseDidFinish(_ testCase: XCTestCase) {
        current = nil
        report(testCase)
        if let start = costAtStart {
            costAtStart = nil
            TestCost.report(testCase, since: start)
        }
    }

    private var costAtStart: TestCost?

    /// With SUBDESK_TEST_ENGINE_REPORT=FILE set, each test that runs on every engine adds a line
    /// to FILE: `Module.Class/method opened` or `... unused` when it opened no store through the
    /// kit, so a class that marks tests which do not need the second pass can name its own.
    private func report(_ testCase: XCTestCase) {
        guard let path = ProcessInfo.processInfo.environment["SUBDESK_TEST_ENGINE_REPORT"], !path.isEmpty,
              EngineMarking.isEngineTest(testCase) else { return }
        let line = "\(String(reflecting: type(of: testCase)))/\(EngineMarking.methodName(testCase)) \(currentOpened ? "opened" : "unused")\n"
        appendLine(line, to: path)
    }

    /// With SUBDESK_TEST_ENGINE_LIST=FILE set, the run writes the filter of the tests that depend
    /// on the engine (a regular expression for `swift test --filter`) to FILE, and their names
    /// as the test binary takes them to FILE.names, and ends before the first test:
    /// scripts/test-postgres runs those on PostgreSQL.
    func testSuiteWillStart(_ testSuite: XCTestSuite) {
        guard let output = ProcessInfo.processInfo.environment["SUBDESK_TEST_ENGINE_LIST"], !output.isEmpty,
              !listed else { return }
        listed = true
        var whole: [String] = [], single: [String] = [], problems: [String] = []
        let cases = allCases(testSuite)
        var seen: [String: Set<String>] = [:]
        for test in cases { seen[String(reflecting: type(of: test)), default: []].insert(EngineMarking.methodName(test)) }
        for test in cases {
            let owner = String(reflecting: type(of: test))
            guard let marked = type(of: test) as? any RunsOnEveryEngine.Type else { continue }
            guard let names = marked.engineTests else {
                if !whole.contains(owner) { whole.append(owner) }
                continue
            }
            let method = EngineMarking.methodName(test)
            if names.contains(method) { single.append(owner + "/" + method) }
            for name in names where !(seen[owner]?.contains(name) ?? false) {
                let problem = "\(owner).engineTests names \(name), which is not a test of the class"
                if !problems.contains(problem) { problems.append(problem) }
            }
        }
        guard problems.isEmpty else {
            FileHandle.standardError.write(Data((problems.joined(separator: "\n") + "\n").utf8))
            exit(1)
        }
        // Module, class and method names are identifiers: a dot is all there is to escape.
        let escaped = (whole.map { $0 + "/" } + single.map { $0 + "$" })
            .map { "^" + $0.replacingOccurrences(of: ".", with: "\\.") }
        // The same selection as the test binary takes it when run directly (no `swift test`):
        // one argument, the tests' names separated by commas.
        let names = (whole + single).joined(separator: ",")
        do {
            try (escaped.joined(separator: "|") + "\n").write(toFile: output, atomically: true, encoding: .utf8)
            try (names + "\n").write(toFile: output + ".names", atomically: true, encoding: .utf8)
        } catch {
            FileHandle.standardError.write(Data("cannot write \(output): \(error)\n".utf8))
            exit(1)
        }
        exit(0)
    }

    private var listed = false

    private func allCases(_ test: XCTest) -> [XCTestCase] {
        if let suite = test as? XCTestSuite { return suite.tests.flatMap(allCases) }
        return (test as? XCTestCase).map { [$0] } ?? []
    }
}

/// What a test cost: with SUBDESK_TEST_COST_REPORT=FILE set, each test adds a line to FILE,
/// `Module.Class/method WALL CPU` in seconds, its CPU the test process's own and its finished
/// children's (the programs it ran; not a server it only talks to). Sorted, it says where a
/// pass's time goes and which tests keep a core busy.
struct TestCost {
    var wall: Double
    var cpu: Double

    static let reportPath: String? = {
        guard let path = ProcessInfo.processInfo.environment["SUBDESK_TEST_COST_REPORT"], !path.isEmpty else { return nil }
        return path
    }()

    static func now() -> TestCost? {
        guard reportPath != nil else { return nil }
        var own = rusage(), children = rusage()
        getrusage(RUSAGE_SELF.rawValue, &own)
        getrusage(RUSAGE_CHILDREN.rawValue, &children)
        func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1_000_000 }
        let cpu = seconds(own.ru_utime) + seconds(own.ru_stime) + seconds(children.ru_utime) + seconds(children.ru_stime)
        return TestCost(wall: Date().timeIntervalSinceReferenceDate, cpu: cpu)
    }

    static func report(_ testCase: XCTestCase, since start: TestCost) {
        guard let path = reportPath, let end = now() else { return }
        let line = String(format: "%@/%@ %.3f %.3f\n", String(reflecting: type(of: testCase)),
                          EngineMarking.methodName(testCase), end.wall - start.wall, end.cpu - start.cpu)
        appendLine(line, to: path)
    }
}

/// Adds `line` to the report file at `path`, creating it.
func appendLine(_ line: String, to path: String) {
    guard let handle = FileHandle(forWritingAtPath: path) ?? {
        FileManager.default.createFile(atPath: path, contents: nil)
        return FileHandle(forWritingAtPath: path)
    }() else { return }
    handle.seekToEndOfFile()
    handle.write(Data(line.utf8))
    handle.closeFile()
}

/// Called once by the loader (Sources/CTestKitStart) before XCTest runs anything.
@_cdecl("subdesk_test_kit_start")
public func subdeskTestKitStart() {
    XCTestObservationCenter.shared.addTestObserver(EngineObserver.shared)
}
