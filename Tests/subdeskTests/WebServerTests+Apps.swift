import Foundation
import XCTest
@testable import SubscriptionCore
@testable import SubdeskScenarios
import SubdeskTestKit

/// One notification URL for two apps behind the shipped lighttpd site: the query that names
/// an app (`?app=NAME`, as Apple suggests) reaches intake through the web server.
extension WebServerTests {
    func testTwoAppsShareTheURLAndABodyPostedToTheOtherAppsURLIsRefusedThroughLighttpd() async throws {
        let lighttpd = try Self.lighttpdExecutable()
        let config = """
            db = \(database)
            root_ca = \(Self.repoRoot)/sample-data/test-ca/root.der

            [app fitness]
            bundle_id = \(Self.bundleId)
            app_apple_id = \(Self.appAppleId)
            environment = Production, Sandbox

            [app recipes]
            bundle_id = com.example.recipes
            app_apple_id = 2234567890
            environment = Production

            """
        let signer = try JWSSigner.testCA(directory: Self.repoRoot + "/sample-data/test-ca")
        let scenario = try XCTUnwrap(try Scenario.loadAll(directory: Self.repoRoot + "/sample-data/scenarios").first)
        func bodies(_ bundleId: String, _ appleId: Int64, instance: Int) throws -> Data {
            let builder = ScenarioBuilder(signer: signer, bundleId: bundleId, appAppleId: appleId)
            return try XCTUnwrap(try builder.bodies(for: scenario, instance: instance, anchor: DateText.nowMillis()).first)
        }
        let fitness = try bodies(Self.bundleId, Self.appAppleId, instance: 810_001)
        let recipes = try bodies("com.example.recipes", 2_234_567_890, instance: 810_002)
        let crossed = try bodies("com.example.recipes", 2_234_567_890, instance: 810_003)
        let stranger = try bodies("com.example.stranger", 3_234_567_890, instance: 810_004)

        let port = try startServer(lighttpd, config: config)
        func post(_ body: Data, query: String) async throws -> Answer? {
            let url = try XCTUnwrap(URL(string: "http://127.0.0.1:\(port)/appstore/notifications\(query)"))
            return await Self.post([Request(body: body, kind: .good, uuid: nil)], to: url, concurrency: 1,
                                   deadline: Date().addingTimeInterval(60)).first ?? nil
        }
        let own = try await post(fitness, query: "?app=fitness")
        XCTAssertEqual(own?.status, 200, own?.text ?? "no answer")
        let plain = try await post(recipes, query: "")
        XCTAssertEqual(plain?.status, 200, plain?.text ?? "no answer")
        let other = try await post(crossed, query: "?app=fitness")
        XCTAssertEqual(other?.status, 400, other?.text ?? "no answer")
        XCTAssertTrue(other?.text.contains("signed for app recipes (com.example.recipes), posted to ?app=fitness") == true, other?.text ?? "")
        let unknown = try await post(stranger, query: "")
        XCTAssertEqual(unknown?.status, 400, unknown?.text ?? "no answer")
        XCTAssertTrue(unknown?.text.contains("com.example.stranger") == true, unknown?.text ?? "")

        // What the web server let through is what the store holds: two apps, one each.
        let byApp = try Self.subdesk(["--config", dir + "/config", "search", "0", "--json"])
        let rows = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(byApp.utf8)) as? [[String: Any]], byApp)
        XCTAssertEqual(rows.compactMap { $0["bundleId"] as? String }.sorted(), ["com.example.recipes", Self.bundleId], byApp)
        let quarantined = try Self.subdesk(["--config", dir + "/config", "quarantine", "--json"])
        XCTAssertTrue(quarantined.contains("posted to ?app=fitness") && quarantined.contains("com.example.stranger"), quarantined)
    }
}
