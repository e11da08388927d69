import Foundation
import XCTest
import SubscriptionCore
import SubdeskScenarios
import TerminalUI
@testable import Dashboard
import SubdeskTestKit

/// `:app NAME|all` scopes the subscriber list and the daily counts to one app, and the
/// header says so.
final class AppScopeTests: XCTestCase, RunsOnEveryEngine {
    func testAppScopesTheSubscriberListAndTheHeaderSaysSo() throws {
        let store = try DashboardFixture.sharedDemoStore()
        var state = DashboardFixture.state(width: 120, height: 40)
        state.apps = ConfiguredApps(apps: [ConfiguredApp(name: "demo", bundleId: ScenarioBuilder.demoBundleId),
                                           ConfiguredApp(name: "other", bundleId: "com.example.other")], fromSections: true)
        let themes = ThemeCatalog(searchPaths: [DashboardFixture.repositoryRoot.appendingPathComponent("themes").path])
        let session = DashboardSession(store: store, state: state, themes: themes, clock: { DashboardFixture.anchor })
        session.start()
        let all = session.state.subscribers.rows.count
        XCTAssertGreaterThan(all, 0)
        XCTAssertFalse(session.screenLines[0].contains("app:"), "every app: the header names none")
        XCTAssertTrue(DashboardCommandLine.helpLines(width: 200, severalApps: true).joined().contains(":app NAME|all"))
        XCTAssertFalse(DashboardCommandLine.helpLines(width: 200).joined().contains(":app NAME|all"), "one app: not listed")

        // Two apps configured: the list shows each subscription's app.
        let header = try XCTUnwrap(session.screenLines.first { $0.contains("ORIGINAL TX") })
        XCTAssertTrue(header.trimmingCharacters(in: CharacterSet(charactersIn: " │")).hasPrefix("APP"), header)
        XCTAssertTrue(session.screenLines.contains { $0.contains(" demo ") && $0.contains(session.state.subscribers.rows[0].state.originalTransactionId) },
                      session.screenLines.joined(separator: "\n"))

        session.command("app other")
        XCTAssertEqual(session.state.appName, "other")
        XCTAssertEqual(session.state.subscribers.rows.count, 0, "no subscription of the other app")
        XCTAssertTrue(session.screenLines[0].contains("app: other"), session.screenLines[0])
        XCTAssertEqual(session.state.scope?.records, AppScope(bundleId: "com.example.other", includesUnknown: false))

        session.command("app " + ScenarioBuilder.demoBundleId)
        XCTAssertEqual(session.state.appName, "demo")
        XCTAssertEqual(session.state.subscribers.rows.count, all, "every demo subscription is the demo app's")

        session.command("app beta")
        XCTAssertEqual(session.state.flash?.kind, .error)
        // In the desk's words: `:app`, not the command line's flag.
        XCTAssertEqual(session.state.flash?.text, ":app: beta names no configured app (apps: demo (\(ScenarioBuilder.demoBundleId)), "
                       + "other (com.example.other))")
        XCTAssertEqual(session.state.appName, "demo", "an unknown app changes nothing")

        session.command("app all")
        XCTAssertNil(session.state.appName)
        XCTAssertNil(session.state.scope)
        XCTAssertEqual(session.state.subscribers.rows.count, all)
    }
}
