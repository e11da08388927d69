import Foundation
import XCTest
import SubscriptionCore
import TerminalUI
@testable import Dashboard

/// `:` commands: unique abbreviations, no stray arguments, time zones by offset.
final class CommandLineTests: XCTestCase {
    func run(_ text: String, _ state: inout DashboardState) -> [DashboardEffect] {
        DashboardCommandLine.execute(text, &state)
    }

    func testUniqueAbbreviationsRunAndAmbiguousOnesSaySo() {
        var state = DashboardFixture.state()
        _ = run("d", &state)
        XCTAssertEqual(state.screen, .daily)
        _ = run("fe", &state)
        XCTAssertEqual(state.screen, .feed)
        _ = run("quar", &state)
        XCTAssertEqual(state.screen, .quarantine)
        _ = run("t", &state)
        XCTAssertEqual(state.flash?.text, ":t could be :theme or :tz; type more of it")
        _ = run("nosuch", &state)
        XCTAssertTrue(state.flash?.text.hasPrefix("unknown command :nosuch") == true)
    }

    func testCommandsWithoutArgumentsRefuseThem() {
        var state = DashboardFixture.state()
        _ = run("daily extra", &state)
        XCTAssertNotEqual(state.screen, .daily)
        XCTAssertEqual(state.flash?.text, ":daily takes no argument (got extra)")
        _ = run("q now", &state)
        XCTAssertFalse(state.quitRequested)
    }

    func testTimeZonesByOffset() {
        var state = DashboardFixture.state()
        _ = run("tz +05:30", &state)
        XCTAssertEqual(state.time.zone.secondsFromGMT(), 19_800)
        _ = run("tz -0800", &state)
        XCTAssertEqual(state.time.zone.secondsFromGMT(), -28_800)
        _ = run("tz +5", &state)
        XCTAssertEqual(state.time.zone.secondsFromGMT(), 18_000)
        _ = run("tz +25:00", &state)
        XCTAssertTrue(state.flash?.text.hasPrefix("unknown time zone +25:00") == true)
        XCTAssertEqual(state.time.zone.secondsFromGMT(), 18_000, "a bad offset changes nothing")
        _ = run("tz Asia/Kolkata", &state)
        XCTAssertEqual(state.time.zone.identifier, "Asia/Kolkata")
    }
}
