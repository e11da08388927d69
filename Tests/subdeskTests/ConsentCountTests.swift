import Foundation
import SubscriptionCore
import SubdeskScenarios
import XCTest
import SubdeskTestKit

/// The number of open consent withdrawals where managers and on-call look: under the
/// `counts` table and as a `doctor` check, falling to 0 once `consent handle` ran.
final class ConsentCountTests: SubdeskTestCase, RunsOnEveryEngine {
    func rescindBody(uuid: String, appTransactionId: String, signedAt: Millis) throws -> Data {
        let signer = try SampleData.locate(explicit: Self.repoRoot + "/sample-data").signer()
        func signed(_ object: [String: Any]) throws -> String { try signer.sign(payload: try JSONSerialization.data(withJSONObject: object)) }
        let app: [String: Any] = ["receiptType": "Production", "appAppleId": ScenarioBuilder.demoAppAppleId,
                                  "bundleId": ScenarioBuilder.demoBundleId, "appTransactionId": appTransactionId,
                                  "originalPurchaseDate": signedAt - 86_400_000, "signedDate": signedAt]
        let appData: [String: Any] = ["appAppleId": ScenarioBuilder.demoAppAppleId, "bundleId": ScenarioBuilder.demoBundleId,
                                      "environment": "Production", "signedAppTransactionInfo": try signed(app)]
        let payload: [String: Any] = ["notificationType": "RESCIND_CONSENT", "notificationUUID": uuid, "version": "2.0",
                                      "signedDate": signedAt, "appData": appData]
        return try JSONSerialization.data(withJSONObject: ["signedPayload": try signed(payload)])
    }

    func testCountsAndDoctorSayHowManyConsentWithdrawalsAreOpen() throws {
        let db = try demoStore()
        let range = ["--from", "2026-01-01", "--to", "2026-01-03"]
        func countsLine() throws -> String? {
            let r = try run(["counts", "--db", db] + range)
            XCTAssertEqual(r.status, 0, r.stderr)
            // A notice, on stderr: standard output holds only the table, its last line a day.
            XCTAssertTrue(r.stdout.split(separator: "\n").last?.hasPrefix("2026-01-03") == true, r.stdout)
            return r.stderr.split(separator: "\n").map(String.init).last.map { $0.replacingOccurrences(of: "subdesk: ", with: "") }
        }
        func doctorLine() throws -> String? {
            let r = try run(["doctor", "--db", db])
            return r.stdout.split(separator: "\n").map(String.init).first { $0.contains(" consent ") }
        }
        // The demo's family-sharing scenario ends with a RESCIND_CONSENT: one open withdrawal.
        XCTAssertEqual(try countsLine(), "consent  1 open withdrawal (subdesk consent)")
        XCTAssertEqual(try doctorLine(), "WARN  consent       1 open withdrawal (subdesk consent)")

        let now = DateText.nowMillis()
        let bodies = try [rescindBody(uuid: "cli-rescind-1", appTransactionId: "990001", signedAt: now - 60_000),
                          rescindBody(uuid: "cli-rescind-2", appTransactionId: "990002", signedAt: now - 30_000)]
        let ndjson = bodies.map { String(decoding: $0, as: UTF8.self) }.joined(separator: "\n") + "\n"
        let ingested = try run(["ingest", "--db", db, "--root-ca", Self.repoRoot + "/sample-data/test-ca/root.der",
                                "--bundle-id", ScenarioBuilder.demoBundleId, "--app-apple-id", String(ScenarioBuilder.demoAppAppleId), "-"],
                               stdin: Data(ndjson.utf8))
        XCTAssertEqual(ingested.status, 0, ingested.stderr)
        XCTAssertTrue(ingested.stdout.hasPrefix("ingested 2,"), ingested.stdout)
        XCTAssertEqual(try countsLine(), "consent  3 open withdrawals (subdesk consent)")
        XCTAssertEqual(try doctorLine(), "WARN  consent       3 open withdrawals (subdesk consent)")

        // The JSON shapes stay as their consumers read them: counts an array of periods,
        // doctor an array of checks, this one among them.
        let json = try run(["counts", "--db", db, "--json"] + range)
        XCTAssertEqual((try self.json(json.stdout) as? [[String: Any]])?.count, 3, json.stdout)
        let checks = try XCTUnwrap(try self.json(try run(["doctor", "--db", db, "--json"]).stdout) as? [[String: String]])
        XCTAssertEqual(checks.first { $0["check"] == "consent" }, ["check": "consent", "level": "warn",
                                                                   "detail": "3 open withdrawals (subdesk consent)"])

        let handled = try run(["consent", "handle", "cli-rescind-1", "--reason", "account closed", "--operator", "ana", "--db", db])
        XCTAssertEqual(handled.status, 0, handled.stderr)
        XCTAssertEqual(try countsLine(), "consent  2 open withdrawals (subdesk consent)")
        XCTAssertEqual(try doctorLine(), "WARN  consent       2 open withdrawals (subdesk consent)")
    }
}
