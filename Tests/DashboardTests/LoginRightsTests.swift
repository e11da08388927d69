import XCTest
import SubdeskTestKit
import SubscriptionCore
import TerminalUI
@testable import Dashboard

/// The desk knows its login's rights: the header says who it acts as, the keys and `:`
/// commands it may not use are marked, and pressing one says which role may before any
/// dialog or question; at 80 columns the header gives way in its documented order.
final class LoginRightsTests: XCTestCase, RunsOnEveryEngine {
    let refusal = "mgr (subdesk_read) may not place or lift overrides: that needs subdesk_support or subdesk_operator"
    let extendRefusal = "mgr (subdesk_read) may not extend renewal dates: that needs subdesk_support or subdesk_operator"

    func readLogin() -> StoreLogin {
        StoreLogin(user: "mgr", roles: ["subdesk_read"], refusals: [.overrides: refusal, .extension_: extendRefusal])
    }

    func session(login: StoreLogin, storeName: String = "demo.db") throws -> DashboardSession {
        var state = DashboardFixture.state()
        state.login = login
        state.storeName = storeName
        let session = DashboardSession(store: try DashboardFixture.sharedDemoStore(), state: state, clock: { DashboardFixture.anchor })
        session.start()
        return session
    }

    func testAReadLoginIsNamedAndRefusedBeforeAnyDialog() throws {
        let session = try session(login: readLogin(), storeName: "pg:subdesk@db.example.internal")
        XCTAssertTrue(session.screenLines[0].contains("mgr (read)"), session.screenLines[0])
        XCTAssertTrue(session.screenLines[0].hasSuffix("● live"), session.screenLines[0])
        session.type(.char("/"))
        session.type("user-1010")
        session.type(.enter, .enter)
        XCTAssertEqual(session.state.screen, .detail)
        XCTAssertTrue(session.screenLines.last!.contains("⊘override"), session.screenLines.last!)
        session.type(.char("o"))
        XCTAssertNil(session.state.overrideDialog, "no dialog for what the login may not do")
        XCTAssertEqual(session.state.flash?.text, refusal)
        XCTAssertEqual(session.state.messages.last?.text, refusal)
        session.type(.escape)
        session.command("extend 7 1 goodwill")
        XCTAssertNil(session.state.confirmation, "no question either")
        XCTAssertEqual(session.state.flash?.text, extendRefusal)
        session.type(.escape, .char("?"))
        let help = session.screenText
        XCTAssertTrue(help.contains("⊘override"), help)
        XCTAssertTrue(help.contains("⊘:extend"), help)
        XCTAssertTrue(help.contains("⊘: not for this login (pg: mgr (read))"), help)
    }

    /// At 80 columns a refusal keeps its meaning on the bottom line: what may not be done
    /// and which roles may, whole (who the login is, the header already says).
    func testARefusalAt80ColumnsKeepsTheActionAndTheRolesThatMay() throws {
        func either(_ names: [String]) -> String { names.dropLast().joined(separator: ", ") + (names.count > 1 ? " or " : "") + names.last! }
        let overrides = PermissionDenial.rolesThatMay(.insert, on: "overrides")
        let extensions = PermissionDenial.rolesThatMay(.insert, on: "renewal_extensions")
        let login = StoreLogin(user: "mgr", roles: ["subdesk_read"], refusals: [
            .overrides: "mgr (subdesk_read) may not place or lift overrides: that needs " + either(overrides),
            .extension_: "mgr (subdesk_read) may not extend renewal dates: that needs " + either(extensions)])
        let session = try session(login: login, storeName: "pg:subdesk@db.example.internal")
        session.type(.char("/"))
        session.type("user-1010")
        session.type(.enter, .enter)
        session.type(.char("o"))
        var line = session.screenLines.last!
        XCTAssertTrue(line.contains("may not place or lift overrides"), line)
        for role in overrides { XCTAssertTrue(line.contains(role), "\(role) in: \(line)") }
        XCTAssertEqual(session.state.messages.last?.text, login.refusals[.overrides], ":messages keeps it whole")
        session.type(.escape)
        session.command("extend 7 1 goodwill")
        line = session.screenLines.last!
        XCTAssertTrue(line.contains("may not extend renewal dates"), line)
        for role in extensions { XCTAssertTrue(line.contains(role), "\(role) in: \(line)") }
    }

    func testAFileThisUserMayOnlyReadSaysReadOnly() throws {
        let login = StoreLogin(readOnlyReason: "the file is not writable by this user",
                               refusals: [.overrides: "the store demo.db is read-only for this user: may not place or lift overrides"])
        let session = try session(login: login)
        XCTAssertTrue(session.screenLines[0].contains("read-only"), session.screenLines[0])
    }

    /// At 80 columns the store's name gives way first (shortened, then left out), then the
    /// time zone; the login and the feed's live state stay.
    func testTheHeaderGivesWayInItsOrderAt80Columns() throws {
        let session = try session(login: readLogin(), storeName: "pg:subdesk_production@db-primary.example.internal")
        session.command("feed")
        let top = session.screenLines[0]
        XCTAssertTrue(top.hasPrefix(" subdesk ▸ subscribers ▸ feed") || top.contains("▸ feed"), top)
        XCTAssertTrue(top.contains("pg: mgr (read)"), top)
        XCTAssertTrue(top.hasSuffix("● live"), top)
        XCTAssertFalse(top.contains("store:"), "the store's name is shortened first: \(top)")
        XCTAssertLessThanOrEqual(TextWidth.width(of: top), 80)

        let line = StatusLine(path: ["subdesk", "subscribers", "feed"],
                              items: [StatusItem("store: pg:subdesk_production@db-primary.example.internal", keep: 0,
                                                 short: "pg:subdesk_production@db-primary.example.internal"),
                                      StatusItem("pg: mgr (read)", keep: 3, short: "mgr (read)"),
                                      StatusItem("UTC", keep: 1), StatusItem("held · 120 new ↑", keep: 5)])
        // The breadcrumb keeps 21 columns; then the store goes, the zone, the login's `pg:`.
        XCTAssertEqual(line.fitting(70).map(\.text), ["pg: mgr (read)", "UTC", "held · 120 new ↑"])
        XCTAssertEqual(line.fitting(57).map(\.text), ["pg: mgr (read)", "held · 120 new ↑"])
        XCTAssertEqual(line.fitting(52).map(\.text), ["mgr (read)", "held · 120 new ↑"])
        XCTAssertEqual(line.fitting(40).map(\.text), ["held · 120 new ↑"])
    }
}
