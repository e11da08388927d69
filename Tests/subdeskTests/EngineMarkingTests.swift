import Foundation
import XCTest
import SubscriptionCore
import SubdeskTestKit

/// The test kit's promise, held to a run of the test binary itself: a test that opens a store
/// through the kit without being marked RunsOnEveryEngine fails, and the list the PostgreSQL pass
/// runs holds exactly the marked tests.
final class EngineMarkingTests: XCTestCase {
    /// The test binary this test runs in (XCTest on Linux runs one binary for every test target).
    var testBinary: String { CommandLine.arguments[0] }

    func child(_ arguments: [String], _ extra: [String: String]) throws -> (status: Int32, output: String) {
        var environment = ProcessInfo.processInfo.environment
        environment["SUBDESK_TEST_POSTGRES"] = nil
        extra.forEach { environment[$0.key] = $0.value }
        return try runToEnd(testBinary, arguments, environment: environment)
    }

    func testAnUnmarkedClassThatOpensAStoreFailsAndAMarkedOneDoesNot() throws {
        let unmarked = try child(["subdeskTests.UnmarkedStoreProbe"], ["SUBDESK_TEST_KIT_PROBE": "1"])
        XCTAssertNotEqual(unmarked.status, 0, unmarked.output)
        XCTAssertTrue(unmarked.output.contains("this test opens a store through the test kit, so it depends on the engine, "
                                               + "but subdeskTests.UnmarkedStoreProbe is not marked RunsOnEveryEngine"), unmarked.output)
        XCTAssertTrue(unmarked.output.contains("Executed 2 tests, with 2 failures"), "both ways of opening fail:\n\(unmarked.output)")

        let partly = try child(["subdeskTests.PartlyMarkedStoreProbe"], ["SUBDESK_TEST_KIT_PROBE": "1"])
        XCTAssertTrue(partly.output.contains("testNotAnEngineTest is not among subdeskTests.PartlyMarkedStoreProbe.engineTests"),
                      partly.output)
        XCTAssertTrue(partly.output.contains("Executed 2 tests, with 1 failure"), "the selected test passes:\n\(partly.output)")
    }

    func testTheListHoldsTheMarkedTestsAndNothingElse() throws {
        let file = NSTemporaryDirectory() + "engine-list-\(UUID().uuidString)"
        defer { for made in [file, file + ".names"] { try? FileManager.default.removeItem(atPath: made) } }
        let listed = try child([], ["SUBDESK_TEST_ENGINE_LIST": file])
        XCTAssertEqual(listed.status, 0, listed.output)
        XCTAssertFalse(listed.output.contains("Test Case"), "the listing runs no test:\n\(listed.output.prefix(2000))")
        let filter = try String(contentsOfFile: file, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let entries = Set(filter.split(separator: "|").map(String.init))
        for whole in ["SubscriptionCoreTests\\.StoreTests/", "DashboardTests\\.SessionTests/", "subdeskTests\\.CLITests/"] {
            XCTAssertTrue(entries.contains("^" + whole), "\(whole) is marked as a whole")
        }
        XCTAssertTrue(entries.contains("^subdeskTests\\.PartlyMarkedStoreProbe/testAnEngineTest$"))
        XCTAssertTrue(entries.contains("^subdeskTests\\.WebServerTests/testBurstThroughLighttpdStoresEachGoodNotificationOnceAndQuarantinesBadOnes$"))
        for absent in ["UnmarkedStoreProbe", "testNotAnEngineTest", "EngineMarkingTests", "TerminalUITests", "FastCGITests",
                       "ManAndCompletionTests", "WebServerTests/testPing"] {
            XCTAssertFalse(filter.contains(absent), "\(absent) does not depend on the engine")
        }
        // The filter selects what `swift test --filter` would: each entry is a valid expression.
        let expression = try NSRegularExpression(pattern: filter)
        let name = "subdeskTests.CLITests/testSomething"
        XCTAssertNotNil(expression.firstMatch(in: name, range: NSRange(name.startIndex..., in: name)))
        let other = "subdeskTests.CLITestsAgain/testSomething"
        XCTAssertNil(expression.firstMatch(in: other, range: NSRange(other.startIndex..., in: other)), "a class's name is matched whole")
    }
}

/// Opens stores through the kit without being marked: only when EngineMarkingTests runs it in a
/// child process (SUBDESK_TEST_KIT_PROBE=1); in the suite it returns at once.
final class UnmarkedStoreProbe: XCTestCase {
    var probing: Bool { ProcessInfo.processInfo.environment["SUBDESK_TEST_KIT_PROBE"] == "1" }

    func testOpensAStoreInMemory() throws {
        guard probing else { return }
        _ = try Store.inMemory()
    }

    func testAsksForAStoreLocation() throws {
        guard probing else { return }
        _ = Store.testLocation(file: NSTemporaryDirectory() + "probe-\(UUID().uuidString).db")
    }
}

/// A class that names its one engine test; the other opens a store too, and fails for it.
final class PartlyMarkedStoreProbe: XCTestCase, RunsOnEveryEngine {
    static let engineTests: Set<String>? = ["testAnEngineTest"]
    var probing: Bool { ProcessInfo.processInfo.environment["SUBDESK_TEST_KIT_PROBE"] == "1" }

    func testAnEngineTest() throws {
        guard probing else { return }
        _ = try Store.inMemory()
    }

    func testNotAnEngineTest() throws {
        guard probing else { return }
        _ = try Store.inMemory()
    }
}
