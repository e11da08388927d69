import Foundation
import XCTest
import SubdeskTestKit

/// An action that needs the App Store Server API key, asked without one, says which keys
/// to set in which config file (or which flags to pass).
final class ServerAPIKeyMessageTests: SubdeskTestCase, RunsOnEveryEngine {
    func testTheMissingKeyMessageNamesTheKeysAndTheConfigFile() throws {
        let db = try demoStore()
        let config = dir + "/subdesk.conf"
        try "bundle_id = com.example.subdesk.demo\n".write(toFile: config, atomically: true, encoding: .utf8)
        let r = try run(["ping", "--db", db, "--config", config])
        XCTAssertNotEqual(r.status, 0)
        XCTAssertTrue(r.stderr.contains("needs the App Store Server API key: set api_key_file, api_key_id and api_issuer_id "
                                        + "in the config file \(config) (or pass --api-key-file, --api-key-id, --api-issuer-id)"), r.stderr)

        // With [app] sections the key is a [key] section each app names.
        try """
        [app demo]
        bundle_id = com.example.subdesk.demo

        [app other]
        bundle_id = com.example.other

        """.write(toFile: config, atomically: true, encoding: .utf8)
        let sections = try run(["ping", "--db", db, "--config", config])
        XCTAssertNotEqual(sections.status, 0)
        XCTAssertTrue(sections.stderr.contains("declare the key in a [key NAME] section of the config file \(config) "
                                               + "(issuer_id, key_id and key_file) and set key = NAME in each [app] section"), sections.stderr)
    }

    /// `consent` with a withdrawal no stored purchase matches says the key would look it up, and where it goes.
    func testConsentSaysWhereTheKeyGoesForAnUnmatchedWithdrawal() throws {
        let db = try demoStore()
        let config = dir + "/subdesk.conf"
        try "root_ca = \(Self.repoRoot)/sample-data/test-ca/root.der\nbundle_id = com.example.subdesk.demo\n"
            .write(toFile: config, atomically: true, encoding: .utf8)
        let body = dir + "/rescind.json"
        try SeveralAppsCountsCLITests.rescindBody("com.example.subdesk.demo", appleId: 1234567890, uuid: "unmatched-rescind",
                                                  appTransactionId: "990042").write(to: URL(fileURLWithPath: body))
        let ingested = try run(["ingest", "--db", db, "--config", config, body])
        XCTAssertEqual(ingested.status, 0, ingested.stderr)
        let r = try run(["consent", "--db", db, "--config", config])
        XCTAssertTrue(r.stderr.contains("with the App Store Server API key they are looked up at Apple: set api_key_file, api_key_id and "
                                        + "api_issuer_id in the config file \(config)"), r.stderr)
    }
}
