import Foundation
import XCTest
@testable import SubscriptionCore

/// A refusal's kind is stated where intake refuses a body, never read from its reason:
/// a sender who quotes the words of another refusal does not choose its status or label.
extension HardeningTests {
    static let quotingTheSizeLimit = Data(#"{"notification_type":"over the 1-byte limit"}"#.utf8)

    func testAnUnsignedBodyQuotingTheSizeLimitIsAnswered400AndCountedAsWhatItIs() throws {
        let body = Self.quotingTheSizeLimit
        XCTAssertEqual(body.count, 45)
        let db = try makeStore()
        // V1 allowed: the body lacks what a V1 notification needs, so it is malformed.
        let allowed = try run(["ingest", "--cgi", "--allow-v1", "--db", db] + Self.policyFlags, stdin: body,
                              env: cgiEnvironment(length: body.count))
        XCTAssertTrue(allowed.stdout.hasPrefix("Status: 400 Bad Request"), allowed.stdout)
        XCTAssertTrue(allowed.stdout.contains("body.unified_receipt: missing"), allowed.stdout)
        // V1 refused (the default): a refusal of policy, still not a body too large.
        let refused = try run(["ingest", "--cgi", "--db", db] + Self.policyFlags, stdin: body, env: cgiEnvironment(length: body.count))
        XCTAssertTrue(refused.stdout.hasPrefix("Status: 400 Bad Request"), refused.stdout)
        XCTAssertTrue(refused.stdout.contains("V1 notification over the 1-byte limit refused"), refused.stdout)
        XCTAssertEqual(try sqlite(db, "SELECT reason_kind FROM quarantine ORDER BY id"), "malformed\npolicy")
        XCTAssertEqual(try sqlite(db, "SELECT reason_kind FROM intake_log ORDER BY id"), "malformed\npolicy")
        let metrics = try run(["metrics", "--db", db])
        XCTAssertEqual(metrics.status, 0, metrics.stderr)
        let refusals = metrics.stdout.split(separator: "\n")
            .filter { $0.hasPrefix("subdesk_notifications_received_total{") && $0.contains("outcome=\"rejected\"") }
        XCTAssertEqual(refusals.count, 2, metrics.stdout)
        XCTAssertTrue(refusals.contains { $0.contains("reason=\"malformed\"") && $0.hasSuffix(" 1") }, "\(refusals)")
        XCTAssertTrue(refusals.contains { $0.contains("reason=\"policy\"") && $0.hasSuffix(" 1") }, "\(refusals)")
        XCTAssertFalse(metrics.stdout.contains("reason=\"oversized\""), metrics.stdout)
    }
}
