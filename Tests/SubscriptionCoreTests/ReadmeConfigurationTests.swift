import XCTest
@testable import SubscriptionCore

/// The README's example config file is what a new user copies first: it must parse as
/// written, and each value must be the value alone (the parser takes whole-line comments
/// only, so a comment after a value would become part of it).
final class ReadmeConfigurationTests: XCTestCase {
    func testTheReadmesExampleConfigParsesWithPlainValues() throws {
        let readme = try String(contentsOf: RoleTableTests.readme, encoding: .utf8)
        let blocks = readme.components(separatedBy: "```").enumerated().filter { $0.offset % 2 == 1 }.map(\.element)
        guard let example = blocks.first(where: { $0.hasPrefix("\nbundle_id = com.example.app") }) else {
            return XCTFail("README.md has no example config block starting with bundle_id = com.example.app")
        }
        let config = try Configuration(text: example, source: "README.md")
        XCTAssertEqual(config.string(.environment), "Production")
        XCTAssertEqual(config.string(.quarantineBudgetMb), "256")
        XCTAssertEqual(config.string(.refundPolicy), "manual")
        for (key, values) in config.values {
            for value in values {
                XCTAssertFalse(value.contains("#"), "README.md's example gives \(key) the value '\(value)', comment and all")
            }
        }
    }

    /// The README's two-app example holds the issue's shape as written and parses into two
    /// apps that share the team's key.
    func testTheReadmesTwoAppExampleParsesIntoTwoAppsSharingOneKey() throws {
        let readme = try String(contentsOf: RoleTableTests.readme, encoding: .utf8)
        let blocks = readme.components(separatedBy: "```").enumerated().filter { $0.offset % 2 == 1 }.map(\.element)
        guard let example = blocks.first(where: { $0.contains("[app fitness]") }) else {
            return XCTFail("README.md has no example config block with [app fitness]")
        }
        XCTAssertTrue(example.contains(SeveralAppsTests.issueShape + "\n"), "the issue's shape, exactly")
        let apps = try ConfiguredApps(configuration: Configuration(text: example, source: "README.md"))
        XCTAssertEqual(apps.apps.map(\.name), ["fitness", "recipes"])
        XCTAssertEqual(apps.apps.map { $0.key?.name }, ["team", "team"])
        XCTAssertEqual(apps.apps.map(\.environments), [[.production, .sandbox], [.production]])
    }

    /// Apple Root CA G3 is built in and nothing installs it as a file: an example that sets
    /// `root_ca` to a path would point a copied config at a file that is not there (and
    /// replace the built-in root). The examples leave it unset, a commented line at most.
    func testTheReadmesExampleConfigsLeaveTheBuiltInRootAlone() throws {
        let readme = try String(contentsOf: RoleTableTests.readme, encoding: .utf8)
        let blocks = readme.components(separatedBy: "```").enumerated().filter { $0.offset % 2 == 1 }.map(\.element)
        let examples = [blocks.first { $0.hasPrefix("\nbundle_id = com.example.app") }, blocks.first { $0.contains("[app fitness]") }]
        for example in examples.compactMap({ $0 }) {
            let config = try Configuration(text: example, source: "README.md")
            XCTAssertEqual(config.list(.rootCa), [], "an example sets root_ca:\n\(example)")
        }
    }
}
