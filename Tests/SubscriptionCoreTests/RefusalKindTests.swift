import Foundation
import XCTest
@testable import SubscriptionCore
import SubdeskTestKit

/// Each refusal's kind, stated where intake refuses, is the kind its reason's words gave
/// before (on every body of the bad-input corpus and the fuzz seeds, under several
/// policies), save where those words were the sender's.
final class RefusalKindTests: XCTestCase, RunsOnEveryEngine {
    /// How the kind was read from a reason before intake stated it, kept here only, to
    /// compare with: the kind and the word that decided it.
    static func formerClassification(_ reason: String) -> (kind: RejectionClass, word: String?) {
        let markers: [(RejectionClass, [String])] = [
            (.oversized, ["-byte limit"]),
            (.conflict, ["already stored with different content"]),
            (.revoked, ["revoked"]),
            (.signature, ["signature", "x5c", "certificate", "configured root", "chain", "ES256", "alg "]),
            (.policy, ["bundleId", "environment", "appAppleId", "shared secret", "V1 bodies", "not accepted"]),
            (.malformed, ["body:", "JSON", "base64", "signedPayload", "decode"]),
        ]
        for (kind, words) in markers {
            if let word = words.first(where: { reason.contains($0) }) { return (kind, word) }
        }
        return (.other, nil)
    }

    static let repoRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    /// The bodies: the bad-input corpus, every fuzz seed of intake, payload and JWS (each
    /// JWS also wrapped as a signedPayload), and bodies other suites refuse.
    static func bodies() throws -> [(name: String, body: Data)] {
        var bodies = BadInputCorpusTests.cases.map { ("corpus/" + $0.name, $0.body) }
        for dir in ["intake", "payload", "jws"] {
            let path = repoRoot + "/Fuzz/corpus/" + dir
            for name in try FileManager.default.contentsOfDirectory(atPath: path).sorted() {
                let data = try Data(contentsOf: URL(fileURLWithPath: path + "/" + name))
                bodies.append(("fuzz/\(dir)/\(name)", data))
                if dir == "jws" { bodies.append(("fuzz/jws-wrapped/\(name)", BadInputCorpusTests.wrap(String(decoding: data, as: UTF8.self)))) }
            }
        }
        bodies.append(("oversized", Data(repeating: UInt8(ascii: "{"), count: (1 << 20) + 1)))
        bodies.append(("quoting the size limit", Data(#"{"notification_type":"over the 1-byte limit"}"#.utf8)))
        bodies.append(("v1 production", Data(#"{"notification_type":"INITIAL_BUY","environment":"PROD","password":"x","bid":"com.other"}"#.utf8)))
        bodies.append(("sandbox", TestKit.body(type: "DID_RENEW", uuid: "kind-sandbox")))
        return bodies
    }

    static let policies: [(name: String, policy: IntakePolicy)] = {
        var v1 = TestKit.policy
        v1.allowV1 = true
        var secret = v1
        secret.sharedSecret = "s3cret"
        var otherApp = TestKit.policy
        otherApp.bundleId = "com.example.other"
        var production = TestKit.policy
        production.environment = .production
        return [("demo", TestKit.policy), ("v1", v1), ("v1 with secret", secret), ("other app", otherApp), ("production only", production)]
    }()

    func testEveryRefusalHasTheKindItsWordsGaveSaveWhereTheSenderWroteThem() throws {
        let bodies = try Self.bodies()
        XCTAssertGreaterThan(bodies.count, 250)
        var compared = 0
        var senderWorded: Set<String> = [], namedNoKind: Set<String> = [], v1NotAllowed: Set<String> = []
        var kinds: [RejectionClass: Int] = [:]
        for (policyName, policy) in Self.policies {
            let store = try Store.inMemory()
            let intake = TestKit.intake(store, policy: policy)
            for (name, body) in bodies {
                guard case .rejected(let refusal, let id) = try intake.ingest(body, source: "kinds") else { continue }
                compared += 1
                kinds[refusal.kind, default: 0] += 1
                let former = Self.formerClassification(refusal.description)
                guard former.kind != refusal.kind else { continue }
                let difference = "\(former.kind) -> \(refusal.kind): \(name) (\(policyName))"
                if let word = former.word, String(decoding: body, as: UTF8.self).contains(word) {
                    senderWorded.insert(difference)
                } else if former.kind == .other && refusal.kind == .malformed {
                    // The former words named no kind: a field fault inside a nested signed
                    // record, or in a V1 body's fields (`body.unified_receipt: missing`).
                    namedNoKind.insert(difference)
                } else if former.kind == .signature && refusal.kind == .policy && refusal.fault.contains("V1 bodies carry no signature") {
                    // A V1 body refused because V1 is not allowed: the words "no signature"
                    // counted it with forged and broken signatures.
                    v1NotAllowed.insert(difference)
                } else {
                    XCTFail("the kind differs from what the reason's words gave, and not by the sender's words: \(difference)")
                }
                XCTAssertEqual(try store.quarantine.entries(ids: [id]).first?.kind, refusal.kind, name)
            }
            // The conflict other suites meet: a UUID stored again with other content.
            guard case .stored = try intake.ingest(TestKit.body(type: "DID_RENEW", uuid: "kind-conflict")) else { continue }
            if case .rejected(let refusal, _) = try intake.ingest(TestKit.body(type: "REFUND", uuid: "kind-conflict")) {
                compared += 1
                kinds[refusal.kind, default: 0] += 1
                XCTAssertEqual(refusal.kind, .conflict)
                XCTAssertEqual(Self.formerClassification(refusal.description).kind, .conflict)
            } else {
                XCTFail("\(policyName): the conflict is refused")
            }
        }
        print("refusal kinds compared: \(compared); by kind: \(kinds.sorted { $0.key.rawValue < $1.key.rawValue })")
        for (title, set) in [("sender-worded", senderWorded), ("named no kind", namedNoKind), ("V1 not allowed", v1NotAllowed)] {
            print("\(title) (\(set.count)):\n  " + set.sorted().joined(separator: "\n  "))
        }
        // The body quoting the size limit is the sender choosing its kind; a duplicated key
        // named "environment" was counted as a refusal of policy.
        XCTAssertTrue(senderWorded.contains("oversized -> policy: quoting the size limit (demo)"), "\(senderWorded.sorted())")
        XCTAssertTrue(namedNoKind.contains("other -> malformed: quoting the size limit (v1)"), "\(namedNoKind.sorted())")
        for kind in RejectionClass.allCases where kind != .revoked && kind != .other {
            XCTAssertNotNil(kinds[kind], "no refusal of kind \(kind) was compared")
        }
    }

}

extension RefusalKindTests {
    /// Migration 22 gives the rows stored before it the kind their reason's words gave, on
    /// either engine; refusals after it carry the kind intake stated.
    func testMigrationTwentyTwoFillsOldRowsWithTheKindTheirWordsGave() throws {
        let dir = NSTemporaryDirectory() + "refusal-kinds-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let location = Store.testLocation(file: dir + "/old.db")
        var store: Store! = try Store(path: location)
        let reasons = [
            "body: 3145728 bytes is over the 1048576-byte limit",
            "signedPayload: ES256 signature does not match",
            "signedPayload: bundleId com.other is not the configured com.example",
            "body: not valid JSON",
            "notificationUUID u-1 is already stored with different content",
            "signedTransactionInfo: expiresDate: not a number",
        ]
        try TestKit.rollBack(store, to: 21)
        for (i, reason) in reasons.enumerated() {
            try store.db.run("""
                INSERT INTO quarantine (received_ms, reason, body, body_sha256, body_bytes, times_seen, last_seen_ms)
                VALUES (?, ?, ?, ?, 1, 1, ?)
                """, [Millis(i), reason, Data("x".utf8), "digest-\(i)", Millis(i)])
            try store.db.run("INSERT INTO intake_log (received_ms, result, detail) VALUES (?, 'rejected', ?)", [Millis(i), reason])
        }
        try store.db.run("INSERT INTO intake_log (received_ms, result, notification_uuid) VALUES (9, 'stored', 'u-9')")
        store = nil
        store = try Store(path: location)
        XCTAssertEqual(store.schemaVersion, Migrations.latestVersion)
        let expected: [RejectionClass] = [.oversized, .signature, .policy, .malformed, .conflict, .other]
        XCTAssertEqual(expected, reasons.map { Self.formerClassification($0).kind })
        let kept = try store.quarantine.entries(limit: 10).sorted { $0.id < $1.id }
        XCTAssertEqual(kept.map(\.kind), expected)
        let logged = try store.intakeLog.entries().sorted { $0.id < $1.id }
        XCTAssertEqual(logged.map(\.rejection), expected.map { $0 } + [nil])

        // A new refusal carries its stated kind, whatever its words.
        var policy = TestKit.policy
        policy.allowV1 = true
        guard case .rejected(let refusal, let id) = try TestKit.intake(store, policy: policy)
            .ingest(Data(#"{"notification_type":"over the 1-byte limit"}"#.utf8)) else { return XCTFail("refused") }
        XCTAssertEqual(refusal.kind, .malformed)
        XCTAssertEqual(try store.quarantine.entries(ids: [id]).first?.kind, .malformed)
        XCTAssertEqual(try store.intakeLog.entries(limit: 1).first?.rejection, .malformed)
    }
}
