import Foundation
import XCTest
import SubscriptionCore
import SubdeskScenarios
import TerminalUI
@testable import Dashboard
import SubdeskTestKit

/// A demo store built from the repository's sample data at a fixed instant, and sessions over it.
enum DashboardFixture {
    /// The repository root, found from this file so tests run from any working directory.
    static let repositoryRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The instant the demo store is built at and the screens are rendered at, so snapshots never drift.
    static let anchor: Millis = DateText.parse("2026-11-16T12:00:00Z")!

    static func demoStore(engine: SQLDialect? = nil) throws -> Store {
        let store = engine == .sqlite ? try Store(path: ":memory:") : try Store.inMemory()
        let sample = try SampleData.locate(explicit: repositoryRoot.appendingPathComponent("sample-data").path)
        _ = try DemoStoreBuilder(sample: sample, copies: 1).build(into: store, anchor: anchor)
        return store
    }

    nonisolated(unsafe) private static var shared: Store?

    /// One demo store for tests that only read it, built the first time one asks.
    static func sharedDemoStore() throws -> Store {
        TestEngine.checkMarked("uses the shared demo store (on the pass's engine)")
        if let store = shared { return store }
        let store = try demoStore()
        shared = store
        return store
    }

    /// Runs `body` with the path of a demo store of `copies` copies that the `subdesk` beside
    /// the tests opens too, removed afterwards.
    static func withDemoStoreFile(copies: Int = 3, _ body: (String) throws -> Void) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("subdesk-demo-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = Store.testLocation(file: directory.appendingPathComponent("demo.db").path)
        let sample = try SampleData.locate(explicit: repositoryRoot.appendingPathComponent("sample-data").path)
        do { _ = try DemoStoreBuilder(sample: sample, copies: copies).build(into: try Store(path: path), anchor: anchor) }
        try body(path)
    }

    static func state(width: Int = 80, height: Int = 24) -> DashboardState {
        DashboardState(width: width, height: height, now: anchor, storeName: "demo.db",
                       availableThemes: ["default", "midnight", "mono"], localZone: TimeZone(identifier: "UTC")!)
    }

    /// A started session over `store` whose clock stands still at `anchor`, with the
    /// `[forward]` targets `forwardTargets` configured.
    static func session(_ store: Store, width: Int = 80, height: Int = 24, forwardTargets: [String] = []) -> DashboardSession {
        let themes = ThemeCatalog(searchPaths: [repositoryRoot.appendingPathComponent("themes").path])
        var state = state(width: width, height: height)
        state.forwardTargets = forwardTargets
        let session = DashboardSession(store: store, state: state, themes: themes,
                                       clock: { anchor })
        session.start()
        return session
    }
}

extension DashboardSession {
    /// Sends each key in turn; strings are typed character by character.
    func type(_ keys: Key...) {
        for key in keys { send(.key(key)) }
    }

    func type(_ text: String) {
        for character in text { send(.key(.char(character))) }
    }

    /// Types a `:` command line and Enter.
    func command(_ text: String) {
        type(.char(":"))
        type(text)
        type(.enter)
    }

    var screenLines: [String] {
        var buffer = ScreenBuffer(width: state.width, height: state.height)
        render(into: &buffer)
        return buffer.lines()
    }

    var screenText: String { screenLines.joined(separator: "\n") }
}
