import Foundation
import XCTest
import SubscriptionCore
@testable import SubdeskScenarios
import SubdeskTestKit

/// `doctor` warns of every app, product and locale the retention console knows that no layer
/// answers on the cancellation sheet: no real-time rule that answers every subscriber, no
/// App Store Connect configuration declared, no default message. The expected gaps are worked
/// out here with plain loops from what the test set up, not with the coverage code.
final class RetentionCoverageDoctorTests: SubdeskTestCase, RunsOnEveryEngine {
    func configure(_ db: String, rules: String, connect: String) throws -> String {
        let rulesFile = dir + "/retention.rules", config = dir + "/subdesk.conf"
        try rules.write(toFile: rulesFile, atomically: true, encoding: .utf8)
        try """
        db = \(db)
        [app demo]
        bundle_id = \(ScenarioBuilder.demoBundleId)
        app_apple_id = \(ScenarioBuilder.demoAppAppleId)
        retention_rules = \(rulesFile)
        retention_app_store_connect = \(connect)

        """.write(toFile: config, atomically: true, encoding: .utf8)
        chmod(config, 0o600)
        return config
    }

    func testEachProductAndLocaleNoLayerAnswersIsAWarningNamingThem() throws {
        let db = try demoStore()
        let store = try Store(path: db)
        let products = try store.retention.content.products().filter { $0.app == ScenarioBuilder.demoBundleId }.map(\.product)
        XCTAssertGreaterThanOrEqual(products.count, 2, "\(products)")
        let (first, second) = (products[0], products[1])
        // A default message for the first product in en-US, as the console keeps one.
        try store.write {
            try store.retention.content.keep(RetentionRecord(app: ScenarioBuilder.demoBundleId, environment: "Production", kind: .defaultMessage,
                                                          identifier: "\(first) en-US", content: "7b2d9e14-1c3a-4f5b-8e6d-2a9c0b4f3e02",
                                                          state: "APPROVED", uploadedMs: DateText.nowMillis()))
        }
        // French for everyone by a rule; German for the first product only for expired subscribers
        // (which leaves the others unanswered); App Store Connect declared for the second in de-DE.
        let config = try configure(db, rules: """
            rule french: locale=fr -> message=m-fr
            rule lapsed: product=\(first) locale=de-DE state=expired -> message=m-de

            """, connect: "\(second) de-DE")

        var expected: [String] = []
        for product in products {
            for locale in ["de-DE", "en-US", "fr"] {
                let rule = locale == "fr"
                let connect = product == second && locale == "de-DE"
                let byDefault = product == first && locale == "en-US"
                if !rule && !connect && !byDefault {
                    expected.append("app \(ScenarioBuilder.demoBundleId), product \(product), locale \(locale): no layer answers the cancellation "
                                    + "sheet (no real-time rule, no App Store Connect configuration declared, no default message; subdesk retention coverage)")
                }
            }
        }
        let checks = try XCTUnwrap(try json(try run(["doctor", "--config", config, "--json"]).stdout) as? [[String: String]])
        let retention = checks.filter { $0["check"] == "retention" }
        XCTAssertEqual(retention.map { $0["level"] }, Array(repeating: "warn", count: expected.count), "\(retention)")
        XCTAssertEqual(retention.compactMap { $0["detail"] }.sorted(), expected.sorted())
        XCTAssertTrue(expected.contains { $0.contains("product \(first), locale de-DE") }, "a rule that asks the state answers only some")

        // `retention coverage` names the layer of each: the rule, the declaration, the default.
        let rows = try XCTUnwrap(try json(try run(["retention", "coverage", "--config", config, "--json"]).stdout) as? [String: Any])["rows"] as? [[String: Any]]
        func layer(_ product: String, _ locale: String) -> String? {
            rows?.first { $0["product"] as? String == product && $0["locale"] as? String == locale }?["layer"] as? String
        }
        XCTAssertEqual(layer(second, "fr"), "real-time rule")
        XCTAssertEqual(layer(second, "de-DE"), "App Store Connect (declared)")
        XCTAssertEqual(layer(first, "en-US"), "API default message")
        XCTAssertEqual(layer(first, "de-DE"), "nothing (gap)")

        // Declared for every locale of every product, nothing is left: one ok line.
        let covered = try configure(db, rules: "rule french: locale=fr -> message=m-fr\n", connect: products.joined(separator: ", "))
        let after = try XCTUnwrap(try json(try run(["doctor", "--config", covered, "--json"]).stdout) as? [[String: String]])
            .filter { $0["check"] == "retention" }
        XCTAssertEqual(after.map { $0["level"] }, ["ok"], "\(after)")
    }

    func testADeclarationThatIsNoProductIsRefusedNamingIt() throws {
        let db = try demoStoreFile()
        let config = try configure(db, rules: "", connect: "app.monthly en US")
        let r = try run(["retention", "coverage", "--config", config])
        XCTAssertNotEqual(r.status, 0)
        XCTAssertTrue(r.stderr.contains("retention_app_store_connect: \"app.monthly en US\" is not PRODUCT or PRODUCT LOCALE"), r.stderr)
    }
}
