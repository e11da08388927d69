import Foundation
import XCTest
import SubdeskTestKit
import SubscriptionCore
import TerminalUI
@testable import Dashboard

/// `:health` and the feed's health line, as an engineer paged at night reads them.
final class HealthScreenTests: XCTestCase, RunsOnEveryEngine {
    let anchor = DashboardFixture.anchor
    let hour: Millis = 3_600_000

    /// A store in trouble: Production silent for 3 hours, Sandbox fine, refusals and the
    /// quarantine over their limits, a refund due in 30 minutes, a ping that never came back,
    /// gaps, a root expiring in 10 days (its name carrying an escape sequence) and a schema
    /// newer than the binary.
    func troubled() -> [HealthSignal] {
        var r = OnCallReading(now: anchor, engine: .sqlite)
        r.intakeCounts = [
            .init(environment: "Production", type: "DID_RENEW", outcome: "stored", reason: "", count: 40, last: anchor - 3 * hour),
            .init(environment: "Sandbox", type: "TEST", outcome: "stored", reason: "", count: 2, last: anchor - 600_000),
        ]
        r.rejectedLastHour = 12
        r.quarantineEntries = 7
        r.quarantineBytes = 950
        r.openRefunds = 1
        r.nextRefundDeadline = anchor + 1_800_000
        r.ping = PingRecord(environment: "Production", requested: anchor - 30 * hour, arrived: nil)
        r.gapsFoundLastDay = 2
        r.schemaVersion = 19
        r.binarySchemaVersion = 18
        let settings = OnCallSettings(roots: [(subject: "CN=Ops Root\u{1b}[31m, O=Example", notAfter: Date(timeIntervalSince1970: Double(anchor + 10 * 24 * hour) / 1000), fingerprint: "0123456789abcdef")],
                                      quarantineBudgetBytes: 1000)
        return settings.signals(r)
    }

    func state(width: Int, height: Int, screen: ScreenID, signals: [HealthSignal]) -> DashboardState {
        var state = DashboardFixture.state(width: width, height: height)
        state.stack = [.subscribers, screen]
        state.health.signals = signals
        state.health.loaded = true
        state.health.readAt = anchor
        state.feed.loaded = true
        return state
    }

    /// The row whose text starts with `name` (after the left margin), and its line.
    func row(_ name: String, in buffer: ScreenBuffer) -> (y: Int, line: String)? {
        buffer.lines().enumerated().first { $0.element.hasPrefix(" " + name) }.map { ($0.offset, $0.element) }
    }

    func testEachSignalShowsItsValueLimitAndStateAt120x40() throws {
        let buffer = DashboardRenderer.render(state(width: 120, height: 40, screen: .health, signals: troubled()))
        let lines = buffer.lines()
        let text = lines.joined(separator: "\n")
        XCTAssertTrue(lines[0].contains("subdesk ▸ subscribers ▸ health"), lines[0])
        XCTAssertTrue(lines[1].hasPrefix(" 9 of 11 signals firing, worst CRITICAL · as of 12:00:00 UTC · limits of subdesk check"), lines[1])
        XCTAssertEqual(buffer[1, 1].role, .error, "the title is coloured by the worst signal")

        let production = try XCTUnwrap(row("Production intake", in: buffer), text)
        XCTAssertTrue(production.line.contains("last 3h ago"), production.line)
        XCTAssertTrue(production.line.contains("critical past 2h"), production.line)
        XCTAssertTrue(production.line.contains("CRITICAL"), production.line)
        XCTAssertTrue(production.line.contains("subdesk ping, subdesk backfill"), production.line)
        let stateColumn = try XCTUnwrap(production.line.range(of: "CRITICAL")).lowerBound.utf16Offset(in: production.line)
        XCTAssertEqual(buffer[stateColumn, production.y].role, .error)
        XCTAssertEqual(buffer[1, production.y].role, .error, "a firing signal's name is coloured too")

        let sandbox = try XCTUnwrap(row("Sandbox intake", in: buffer), text)
        XCTAssertTrue(sandbox.line.contains("last 10m ago") && sandbox.line.contains("OK"), sandbox.line)
        XCTAssertEqual(buffer[stateColumn, sandbox.y].role, .success)
        XCTAssertEqual(buffer[1, sandbox.y].role, .normal, "a quiet signal is not coloured")

        let refused = try XCTUnwrap(row("refused, last hour", in: buffer), text)
        XCTAssertTrue(refused.line.contains(" 12 ") && refused.line.contains("warning above 10"), refused.line)
        XCTAssertEqual(buffer[stateColumn, refused.y].role, .warning)
        for (name, value) in [("quarantine budget", "95% (7 entries)"), ("refund answer due", "in 30m (1 open)"),
                              ("last ping arrived", "no"), ("last ping age", "30h ago"), ("backfill gaps, 1 day", "2"),
                              ("store schema", "19 (binary knows 18)")] {
            let found = try XCTUnwrap(row(name, in: buffer), "no \(name) row:\n\(text)")
            XCTAssertTrue(found.line.contains(value), "\(name): \(found.line)")
            XCTAssertNotEqual(buffer[stateColumn, found.y].role, .success, "\(name) fires: \(found.line)")
        }
        let missed = try XCTUnwrap(row("refunds missed, 1 day", in: buffer), text)
        XCTAssertEqual(buffer[stateColumn, missed.y].role, .success)

        // A certificate's subject comes from a file: its control characters are shown escaped.
        let root = try XCTUnwrap(row("root Ops Root", in: buffer), text)
        XCTAssertFalse(root.line.unicodeScalars.contains { $0.value == 0x1B }, root.line)
        XCTAssertTrue(root.line.contains("\\u{1B}[31m") || root.line.contains("\\x1B") || root.line.contains("\\e"), root.line)
        XCTAssertTrue(root.line.contains("expires in 10d") && root.line.contains("WARNING"), root.line)

        // Under the table, what is wrong and what to run, worst first in the table's order.
        XCTAssertTrue(text.contains("▸ no Production notification for 3h (limit 2h)"), text)
        XCTAssertTrue(text.contains("▸ the last ping's TEST notification (Production) did not arrive; run subdesk ping"), text)
        XCTAssertTrue(text.contains("▸ store schema 19 is newer than this subdesk's 18"), text)
    }

    func testAt80x24EverythingFitsOrIsCutWithAnEllipsis() throws {
        let buffer = DashboardRenderer.render(state(width: 80, height: 24, screen: .health, signals: troubled()))
        let lines = buffer.lines()
        let text = lines.joined(separator: "\n")
        XCTAssertEqual(lines.count, 24)
        XCTAssertTrue(lines[1].hasSuffix("…"), "the title is cut with an ellipsis: \(lines[1])")
        XCTAssertFalse(text.contains("ON-CALL RUNS"), "the runs column waits for a wide screen")
        for name in ["Production intake", "Sandbox intake", "refused, last hour", "quarantine budget", "refund answer due",
                     "refunds missed, 1 day", "last ping arrived", "last ping age", "backfill gaps, 1 day", "root Ops Root",
                     "store schema"] {
            XCTAssertNotNil(row(name, in: buffer), "\(name) missing at 80x24:\n\(text)")
        }
        let schema = try XCTUnwrap(row("store schema", in: buffer))
        XCTAssertTrue(schema.line.contains("CRITICAL"), schema.line)
        // Nine problems do not all fit under the table: the last line says how many did not.
        XCTAssertTrue(lines[22].hasPrefix(" … and "), lines[22])
        XCTAssertTrue(lines[22].contains("more problems: subdesk check lists them all"), lines[22])
        XCTAssertTrue(lines.contains { $0.hasPrefix(" ▸ ") && $0.hasSuffix("…") }, "a long problem is cut with an ellipsis:\n\(text)")
    }

    func testTheFeedHeaderSumsHealthUpInOneLine() throws {
        var buffer = DashboardRenderer.render(state(width: 80, height: 24, screen: .feed, signals: troubled()))
        var line = buffer.lines()[2]
        XCTAssertTrue(line.hasPrefix(" health: CRITICAL, 9 firing (:health): Production intake last 3h ago; "), line)
        XCTAssertTrue(line.hasSuffix("…"), "cut with an ellipsis at 80 columns: \(line)")
        XCTAssertEqual(buffer[1, 2].role, .error)
        XCTAssertTrue(buffer.lines()[3].contains("TYPE/SUBTYPE"), "the table follows")

        let quiet = troubled().map { signal -> HealthSignal in
            var s = signal
            s.level = .ok
            s.problem = nil
            return s
        }
        buffer = DashboardRenderer.render(state(width: 120, height: 40, screen: .feed, signals: quiet))
        line = buffer.lines()[2]
        XCTAssertEqual(line.trimmingCharacters(in: .whitespaces), "health: all 11 signals OK (:health)")
        XCTAssertEqual(buffer[1, 2].role, .success)
    }

    /// `:health` over the demo store, through the session: the effect reads the store, and as
    /// the clock runs on with nothing arriving, the silence signal starts firing by itself.
    func testTheSessionJudgesTheStoreAndReJudgesAsTheClockRuns() throws {
        final class Clock { var now: Millis = DashboardFixture.anchor }
        let clock = Clock()
        let rootExpiry = Date(timeIntervalSince1970: Double(anchor + 20 * 24 * hour) / 1000)
        let session = DashboardSession(store: try DashboardFixture.demoStore(), state: DashboardFixture.state(),
                                       clock: { clock.now },
                                       healthSettings: OnCallSettings(roots: [(subject: "CN=Demo Root", notAfter: rootExpiry, fingerprint: "0123456789abcdef")],
                                                                      quarantineBudgetBytes: 1 << 28))
        session.start()
        session.type(.char(":"))
        session.type("health")
        session.type(.enter)
        XCTAssertEqual(session.state.screen, .health)
        var text = session.screenText
        XCTAssertTrue(text.contains("1 of 9 signals firing, worst WARNING"), text)
        XCTAssertTrue(text.contains("Production intake") && text.contains("last 0s ago"), text)
        XCTAssertTrue(text.contains("root Demo Root") && text.contains("expires in 20d"), text)
        XCTAssertTrue(text.contains("▸ trusted root Demo Root expires in 20d; install its successor and run subdes…"), text)

        // Three hours without a notification: the next tick past the refresh interval re-reads.
        clock.now += 3 * hour
        session.tick()
        text = session.screenText
        XCTAssertTrue(text.contains("2 of 9 signals firing, worst CRITICAL"), text)
        XCTAssertTrue(text.contains("▸ no Production notification for 3h (limit 2h)"), text)
        var buffer = ScreenBuffer(width: 80, height: 24)
        session.render(into: &buffer)
        let production = try XCTUnwrap(row("Production intake", in: buffer), text)
        XCTAssertTrue(production.line.contains("last 3h ago"), production.line)
        XCTAssertEqual(buffer[1, production.y].role, .error)

        // The feed carries the same judgement in its header.
        session.type(.char(":"))
        session.type("feed")
        session.type(.enter)
        XCTAssertTrue(session.screenLines[2].hasPrefix(" health: CRITICAL, 2 firing (:health): Production intake last 3h ago"),
                      session.screenLines[2])
    }
}
