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
        // `:f` stays the live feed, as it was before `:forward` shared its first letter.
        _ = run("fo", &state)
        XCTAssertEqual(state.screen, .forward)
        _ = run("f", &state)
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
        _ = run("feed extra", &state)
        XCTAssertNotEqual(state.screen, .feed)
        XCTAssertEqual(state.flash?.text, ":feed takes no argument (got extra)")
        _ = run("q now", &state)
        XCTAssertFalse(state.quitRequested)
    }

    /// `:daily DIMENSION=VALUE` counts one part; what it cannot read it says, and stays put.
    func testDailyTakesASegmentAndSaysWhatIsWrongWithOne() {
        var state = DashboardFixture.state()
        _ = run("daily extra", &state)
        XCTAssertNotEqual(state.screen, .daily)
        XCTAssertTrue(state.flash?.text.hasPrefix("a segment is DIMENSION=VALUE") == true, state.flash?.text ?? "")
        _ = run("daily colour=red", &state)
        XCTAssertTrue(state.flash?.text.hasPrefix("no segment dimension colour") == true, state.flash?.text ?? "")
        _ = run("daily environment=Sandbox", &state)
        XCTAssertEqual(state.flash?.text, "f switches between paid, family shared, sandbox and all")
        XCTAssertNil(state.daily.filter)
        let effects = run("d storefront=FRA", &state)
        XCTAssertEqual(state.screen, .daily)
        XCTAssertEqual(state.daily.filter, SegmentFilter(dimension: .storefront, value: "FRA"))
        XCTAssertTrue(effects.contains { if case .loadDaily(let r) = $0 { return r.filter == state.daily.filter } else { return false } })
        _ = run("daily all", &state)
        XCTAssertNil(state.daily.filter)
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

    /// Names, aliases, Tab and the unknown-command message all read one table.
    func testTheTableNamesCompletesAndSuggests() {
        for command in DashboardCommandLine.table {
            for word in [command.name] + command.aliases {
                XCTAssertEqual(DashboardCommandLine.resolve(word).command?.name, command.name, word)
            }
        }
        var state = DashboardFixture.state()
        _ = run("nosuch", &state)
        XCTAssertEqual(state.flash?.text, "unknown command :nosuch (try :subs :feed :daily :quarantine :audit :theme NAME :tz ZONE :q)")
        XCTAssertEqual(DashboardCommandLine.completions(for: "th", state: state), ["theme"])
        var prompt = PromptState(kind: .command)
        prompt.setText("th")
        prompt.completions = DashboardCommandLine.completions(for: "th", state: state)
        DashboardCommandLine.complete(&prompt, backward: false)
        XCTAssertEqual(prompt.text, "theme ", "a command that takes a value is completed with a space")
        prompt.setText("mes")
        prompt.completions = DashboardCommandLine.completions(for: "mes", state: state)
        DashboardCommandLine.complete(&prompt, backward: false)
        XCTAssertEqual(prompt.text, "messages")
        XCTAssertEqual(DashboardCommandLine.completions(for: "theme m", state: state), ["theme midnight", "theme mono"])
    }
}
