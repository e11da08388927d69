import Foundation
import FakeApple
import SubscriptionCore
import XCTest

/// `revocation_check = ocsp` / `--revocation-check ocsp` as a deployment meets it: what
/// the CGI answers and what a batch does when the chain's OCSP responders say good,
/// revoked, or nothing at all.
final class RevocationCheckCLITests: SubdeskTestCase {
    static let bundleId = "com.example.subdesk.demo"

    var server: FakeAppleServer!
    var chainDirectory: String!
    var signer: JWSSigner!

    override func setUpWithError() throws {
        try super.setUpWithError()
        server = try FakeAppleServer()
        chainDirectory = dir + "/ocsp-chain"
        let made = try runToEnd("/bin/sh", [Self.repoRoot + "/sample-data/test-ca/make-ocsp-test-chain.sh", chainDirectory,
                                            server.baseURL.absoluteString + "/ocsp"])
        guard made.status == 0 else { throw XCTSkip("cannot make the OCSP test chain with the openssl CLI: \(made.output)") }
        func read(_ name: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: chainDirectory + "/" + name)) }
        signer = try JWSSigner(privateKeyPEM: read("leaf-key.pem"), chain: ["leaf.der", "intermediate.der", "root.der"].map(read))
    }

    override func tearDownWithError() throws {
        server?.stop()
        try super.tearDownWithError()
    }

    /// A Sandbox TEST notification signed by the chain that names the local responders.
    func body(_ uuid: String) throws -> Data {
        let payload: [String: Any] = ["notificationType": "TEST", "notificationUUID": uuid, "version": "2.0",
                                      "signedDate": 1_780_272_000_000,
                                      "data": ["bundleId": Self.bundleId, "environment": "Sandbox"]]
        let jws = try signer.sign(payload: try JSONSerialization.data(withJSONObject: payload, options: [.sortedKeys]))
        return Data("{\"signedPayload\":\"\(jws)\"}".utf8)
    }

    func answer(leaf: String, intermediate: String) throws {
        for (path, name) in [("intermediate", leaf), ("root", intermediate)] {
            let der = try Data(contentsOf: URL(fileURLWithPath: chainDirectory + "/" + name + ".der"))
            server.route("POST", "/ocsp/" + path, .init(status: 200, headers: ["Content-Type": "application/ocsp-response"], body: der))
        }
    }

    func cgi(_ db: String, _ data: Data, _ extra: [String] = ["--revocation-check", "ocsp"]) throws -> Result {
        try run(["ingest", "--cgi", "--db", db, "--root-ca", chainDirectory + "/root.der", "--bundle-id", Self.bundleId] + extra,
                stdin: data, env: ["REQUEST_METHOD": "POST", "CONTENT_LENGTH": String(data.count), "GATEWAY_INTERFACE": "CGI/1.1"])
    }

    func quarantined(_ db: String) throws -> [[String: Any]] {
        let q = try run(["quarantine", "--db", db, "--json"])
        XCTAssertEqual(q.status, 0, q.stderr)
        return try XCTUnwrap(try json(q.stdout) as? [[String: Any]], q.stdout)
    }

    func testCGIAnswersGoodRevokedAndUnreachableAsAppleNeeds() throws {
        let db = dir + "/cgi.db"
        XCTAssertEqual(try run(["init", "--db", db]).status, 0)

        // Off (the default): the responders are never asked, revoked or not.
        try answer(leaf: "leaf-revoked", intermediate: "intermediate-good")
        let off = try cgi(db, try body("00000000-0000-4000-8000-000000000001"), [])
        XCTAssertTrue(off.stdout.hasPrefix("Status: 200 OK\r\n"), off.stdout + off.stderr)
        XCTAssertTrue(server.requests.isEmpty)

        // Good: stored.
        try answer(leaf: "leaf-good", intermediate: "intermediate-good")
        let good = try cgi(db, try body("00000000-0000-4000-8000-000000000002"))
        XCTAssertTrue(good.stdout.hasPrefix("Status: 200 OK\r\n") && good.stdout.contains("stored "), good.stdout + good.stderr)
        XCTAssertEqual(server.requests.map(\.path).sorted(), ["/ocsp/intermediate", "/ocsp/root"])

        // Revoked: refused for good and quarantined, with what was revoked and when.
        try answer(leaf: "leaf-revoked", intermediate: "intermediate-good")
        let revoked = try cgi(db, try body("00000000-0000-4000-8000-000000000003"))
        XCTAssertTrue(revoked.stdout.hasPrefix("Status: 400 Bad Request\r\n"), revoked.stdout)
        XCTAssertTrue(revoked.stdout.contains("certificate x5c[0] (CN=subdesk TEST ONLY OCSP App Store Signing"), revoked.stdout)
        XCTAssertTrue(revoked.stdout.contains("was revoked at ") && revoked.stdout.contains("(keyCompromise)"), revoked.stdout)
        XCTAssertEqual(try quarantined(db).count, 1)

        // The responder down: 503 so Apple sends it again; the operator's log says why; nothing kept.
        server.stop()
        let down = try cgi(db, try body("00000000-0000-4000-8000-000000000004"))
        XCTAssertTrue(down.stdout.hasPrefix("Status: 503"), down.stdout)
        XCTAssertTrue(down.stderr.contains("signedPayload: revocation status of x5c[1]"), down.stderr)
        XCTAssertTrue(down.stderr.contains("/ocsp/root"), down.stderr)
        XCTAssertFalse(down.stdout.contains("127.0.0.1"), "the responder stays in the operator's log: \(down.stdout)")
        XCTAssertEqual(try quarantined(db).count, 1, "nothing quarantined for a responder that is down")
        let listed = try run(["notifications", "--db", db, "--json"])
        XCTAssertFalse(listed.stdout.contains("00000000-0000-4000-8000-000000000004"), listed.stdout)
    }

    func testABatchStopsResumablyWhenTheRespondersCannotBeReachedAndTheConfigKeyIsChecked() throws {
        let db = dir + "/batch.db"
        let input = dir + "/bodies.ndjson"
        var lines = Data()
        for n in 1...3 { lines += try body("00000000-0000-4000-8000-00000000010\(n)") + Data("\n".utf8) }
        try lines.write(to: URL(fileURLWithPath: input))
        try FileManager.default.createDirectory(atPath: dir + "/config/subdesk", withIntermediateDirectories: true)
        let config = dir + "/config/subdesk/config"
        try "revocation_check = ocsp\nroot_ca = \(chainDirectory!)/root.der\nbundle_id = \(Self.bundleId)\n"
            .write(toFile: config, atomically: true, encoding: .utf8)

        server.stop()
        let stopped = try run(["ingest", "--db", db, input])
        XCTAssertEqual(stopped.status, 3, stopped.stdout + stopped.stderr)
        XCTAssertTrue(stopped.stderr.contains("stopped: signedPayload: revocation status of x5c[1]"), stopped.stderr)
        XCTAssertTrue(stopped.stderr.contains("resume with: tail -n +1 \(input) | subdesk ingest -"), stopped.stderr)
        XCTAssertEqual(try quarantined(db).count, 0)

        // The flag wins over the config key.
        let flagOff = try run(["ingest", "--db", db, "--revocation-check", "off", input])
        XCTAssertEqual(flagOff.status, 0, flagOff.stderr)
        XCTAssertTrue(flagOff.stdout.hasPrefix("ingested 3, duplicates 0, rejected 0"), flagOff.stdout)

        // doctor says intake now needs a way out to the responders.
        let doctor = try run(["doctor", "--db", db])
        let line = try XCTUnwrap(doctor.stdout.split(separator: "\n").first { $0.contains("revocation") }, doctor.stdout)
        XCTAssertTrue(line.contains("OCSP") && line.contains("http://ocsp.apple.com") && line.contains("503"), String(line))

        try "revocation_check = crl\n".write(toFile: config, atomically: true, encoding: .utf8)
        let wrong = try run(["ingest", "--db", db, input])
        XCTAssertEqual(wrong.status, 2, wrong.stderr)
        XCTAssertTrue(wrong.stderr.contains("revocation check must be off or ocsp, got crl"), wrong.stderr)
    }
}
