import Foundation
import FakeApple
import XCTest
@testable import SubscriptionCore
import SubdeskTestKit

/// The optional OCSP check of the signing chain, against a local server that answers as
/// the leaf's and the intermediate's responders do, for a chain made for the test whose
/// certificates name that server in their Authority Information Access.
final class RevocationCheckTests: XCTestCase, RunsOnEveryEngine {
    /// A chain and the responders' answers, made by `sample-data/test-ca/make-ocsp-test-chain.sh`.
    struct OCSPChain {
        let directory: String
        let signer: JWSSigner
        let roots: TrustRoots

        func answer(_ name: String) throws -> Data {
            try Data(contentsOf: URL(fileURLWithPath: directory + "/" + name + ".der"))
        }

        static func make(baseURL: String) throws -> OCSPChain {
            let directory = NSTemporaryDirectory() + "subdesk-ocsp-\(UUID().uuidString)"
            let script = TestKit.repoRoot + "/sample-data/test-ca/make-ocsp-test-chain.sh"
            let made = try ChildOutput.run("/bin/sh", [script, directory, baseURL])
            guard made.status == 0 else {
                throw XCTSkip("cannot make the OCSP test chain with the openssl CLI: \(made.output)")
            }
            func read(_ name: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: directory + "/" + name)) }
            let chain = try ["leaf.der", "intermediate.der", "root.der"].map(read)
            let signer = try JWSSigner(privateKeyPEM: read("leaf-key.pem"), chain: chain)
            return OCSPChain(directory: directory, signer: signer, roots: try TrustRoots(files: [directory + "/root.der"]))
        }
    }

    var server: FakeAppleServer!
    var chain: OCSPChain!
    var store: Store!

    override func setUpWithError() throws {
        server = try FakeAppleServer()
        chain = try OCSPChain.make(baseURL: server.baseURL.absoluteString + "/ocsp")
        store = try Store.inMemory()
    }

    override func tearDownWithError() throws {
        server?.stop()
        if let chain { try? FileManager.default.removeItem(atPath: chain.directory) }
    }

    final class Clock: @unchecked Sendable {
        private let lock = NSLock()
        private var now = Date()
        func read() -> Date { lock.lock(); defer { lock.unlock() }; return now }
        func advance(_ seconds: TimeInterval) { lock.lock(); now += seconds; lock.unlock() }
    }

    func intake(checking: Bool = true, timeout: TimeInterval = 2, clock: Clock = Clock()) -> (Intake, OCSPRevocationChecker?) {
        let checker = checking
            ? OCSPRevocationChecker(roots: chain.roots, transport: HTTPOCSPTransport(timeout: timeout), clock: { clock.read() })
            : nil
        let verifier = SignedDataVerifier(roots: chain.roots, revocation: checker)
        return (Intake(store: store, verifier: verifier, policy: TestKit.policy), checker)
    }

    func body(_ uuid: String = UUID().uuidString.lowercased(), transaction: String = "2000000900000001") -> Data {
        TestKit.body(type: "DID_RENEW", uuid: uuid,
                     transaction: TestKit.transaction(id: transaction), signer: chain.signer)
    }

    func answer(_ path: String, with name: String) throws {
        server.route("POST", "/ocsp/" + path, .init(status: 200, headers: ["Content-Type": "application/ocsp-response"],
                                                    body: try chain.answer(name)))
    }

    /// The body was neither stored nor quarantined: it is Apple's to send again.
    func assertLeftForRetry(_ intake: Intake, _ body: Data, mentioning expected: [String], stored: Int = 0,
                            file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertThrowsError(try intake.ingest(body), file: file, line: line) { error in
            XCTAssertTrue(error is RevocationStatusUnavailable, "\(type(of: error)): \(error)", file: file, line: line)
            let text = "\(error)"
            for part in expected + ["retry later"] {
                XCTAssertTrue(text.contains(part), "\(part) missing from: \(text)", file: file, line: line)
            }
        }
        XCTAssertEqual(try store.quarantine.unresolvedCount(), 0, "a body is never quarantined for a responder's fault", file: file, line: line)
        XCTAssertEqual(try store.notifications.count(), stored, file: file, line: line)
    }

    // MARK: -

    func testGoodAnswersStoreTheBodyAndAreRememberedUntilNextUpdate() throws {
        try answer("intermediate", with: "leaf-good")
        try answer("root", with: "intermediate-good")
        let clock = Clock()
        let (intake, checker) = intake(clock: clock)

        guard case .stored = try intake.ingest(body()) else { return XCTFail("a chain its responders call good is stored") }
        // The payload and its nested JWS share one chain: each certificate is asked about once.
        XCTAssertEqual(server.requests("POST", "/ocsp/intermediate").count, 1)
        XCTAssertEqual(server.requests("POST", "/ocsp/root").count, 1)
        let asked = try XCTUnwrap(server.requests("POST", "/ocsp/intermediate").first)
        XCTAssertEqual(asked.headers["content-type"], "application/ocsp-request")
        // What was sent is an OCSP request about the leaf, by its serial.
        let requestFile = chain.directory + "/sent-request.der"
        try asked.body.write(to: URL(fileURLWithPath: requestFile))
        let leaf = try X509Certificate(der: chain.signer.chain[0])
        XCTAssertTrue(try openssl(["ocsp", "-reqin", requestFile, "-req_text"]).contains(OCSPRevocationChecker.serial(of: leaf)))

        // Until nextUpdate (seven days on) the good answers stand in for new requests...
        guard case .stored = try intake.ingest(body(transaction: "2000000900000002")) else { return XCTFail("second body") }
        XCTAssertEqual(server.requests.count, 2)
        // Two certificates for each of the first body's nested JWS and the second body's three.
        XCTAssertEqual(checker?.statistics, .init(queries: 2, remembered: 10))
        // ...and after it, the responders are asked again (their answers, now stale, are not taken).
        clock.advance(8 * 86_400)
        try assertLeftForRetry(intake, body(transaction: "2000000900000003"), mentioning: ["x5c[1]", "is not current"],
                               stored: 2)
        XCTAssertEqual(server.requests.count, 3)
    }

    func testARevokedLeafIsQuarantinedWithTheCertificateAndTheTime() throws {
        try answer("intermediate", with: "leaf-revoked")
        try answer("root", with: "intermediate-good")
        let (intake, _) = intake()
        guard case .rejected(let reason, let id) = try intake.ingest(body()) else { return XCTFail("a revoked leaf is refused") }
        XCTAssertGreaterThan(id, 0)
        XCTAssertTrue(reason.description.hasPrefix("signedPayload: certificate x5c[0] (CN=subdesk TEST ONLY OCSP App Store Signing"), "\(reason)")
        XCTAssertTrue(reason.description.contains("was revoked at \(Calendar(identifier: .gregorian).component(.year, from: Date()))-"), "\(reason)")
        XCTAssertTrue(reason.description.contains("(keyCompromise)"), "\(reason)")
        XCTAssertTrue(reason.description.contains("says OCSP responder \(server.baseURL.absoluteString)/ocsp/intermediate"), "\(reason)")
        XCTAssertEqual(try store.quarantine.entries().map(\.reason), [reason.description])
        XCTAssertEqual(reason.kind, .revoked)
        XCTAssertEqual(try store.notifications.count(), 0)
    }

    func testARevokedIntermediateIsRefusedWithoutAskingAboutTheLeaf() throws {
        try answer("intermediate", with: "leaf-good")
        try answer("root", with: "intermediate-revoked")
        let (intake, _) = intake()
        guard case .rejected(let reason, _) = try intake.ingest(body()) else { return XCTFail("a revoked intermediate is refused") }
        XCTAssertTrue(reason.description.contains("certificate x5c[1] (CN=subdesk TEST ONLY OCSP Intermediate CA"), "\(reason)")
        XCTAssertTrue(reason.description.contains("(cACompromise)"), "\(reason)")
        XCTAssertEqual(server.requests("POST", "/ocsp/intermediate").count, 0)
        XCTAssertEqual(try store.quarantine.unresolvedCount(), 1)
    }

    func testAResponderThatIsDownLeavesTheBodyForAppleToSendAgain() throws {
        let port = server.port
        server.stop()
        let (intake, checker) = intake()
        try assertLeftForRetry(intake, body(), mentioning: ["signedPayload: revocation status of x5c[1]",
                                                            "http://127.0.0.1:\(port)/ocsp/root"])
        // Nothing unchecked was remembered: the next attempt asks again.
        try assertLeftForRetry(intake, body(), mentioning: ["x5c[1]"])
        XCTAssertEqual(checker?.statistics.queries, 2)
    }

    func testAnswersThatSettleNothingLeaveTheBodyForAppleToSendAgain() throws {
        try answer("root", with: "intermediate-good")
        let (intake, _) = intake(timeout: 0.5)
        try answer("intermediate", with: "leaf-unknown")
        try assertLeftForRetry(intake, body(), mentioning: ["x5c[0]", "does not know this certificate (status unknown"])
        try answer("intermediate", with: "leaf-forged")
        try assertLeftForRetry(intake, body(), mentioning: ["x5c[0]", "signature does not verify to CN=subdesk TEST ONLY OCSP Intermediate CA"])
        server.route("POST", "/ocsp/intermediate", .init(status: 200, body: Data("<html>captive portal</html>".utf8)))
        try assertLeftForRetry(intake, body(), mentioning: ["x5c[0]", "is not a DER OCSP response"])
        server.route("POST", "/ocsp/intermediate", .init(status: 503, body: Data("busy".utf8)))
        try assertLeftForRetry(intake, body(), mentioning: ["x5c[0]", "503"])
        server.route("POST", "/ocsp/intermediate", .init(status: 200, body: try chain.answer("leaf-good"), delay: 1.5))
        try assertLeftForRetry(intake, body(), mentioning: ["x5c[0]", "timed out"])
    }

    func testAnAnswerPastItsNextUpdateIsNotTaken() throws {
        try answer("intermediate", with: "leaf-good")
        try answer("root", with: "intermediate-good")
        let clock = Clock()
        clock.advance(30 * 86_400)
        let (intake, _) = intake(clock: clock)
        try assertLeftForRetry(intake, body(), mentioning: ["x5c[1]", "is not current"])
    }

    func testWithTheSettingOffNoResponderIsAsked() throws {
        try answer("intermediate", with: "leaf-revoked")
        try answer("root", with: "intermediate-revoked")
        XCTAssertEqual(IntakePolicy().revocationCheck, .off, "off unless asked for")
        let (intake, _) = intake(checking: false)
        guard case .stored = try intake.ingest(body()) else { return XCTFail("stored without asking") }
        XCTAssertTrue(server.requests.isEmpty, "\(server.requests.map(\.path))")
    }

    func testACertificateNamingNoResponderIsRefusedWhenChecking() throws {
        // The project's demo CA names no OCSP responder: with the check on, its chain cannot be checked ever.
        let checker = OCSPRevocationChecker(roots: TestKit.roots, transport: HTTPOCSPTransport(timeout: 1))
        let intake = Intake(store: store, verifier: SignedDataVerifier(roots: TestKit.roots, revocation: checker), policy: TestKit.policy)
        guard case .rejected(let reason, _) = try intake.ingest(TestKit.body(type: "DID_RENEW")) else { return XCTFail("refused") }
        XCTAssertTrue(reason.description.contains("x5c[1] (CN=subdesk TEST ONLY Intermediate CA"), "\(reason)")
        XCTAssertTrue(reason.description.contains("names no OCSP responder in its Authority Information Access"), "\(reason)")
        XCTAssertEqual(checker.statistics.queries, 0)
    }

    /// Holds what would have gone out, and answers that no network is there.
    struct Unplugged: OCSPTransport {
        final class Log: @unchecked Sendable {
            var posts: [(URL, Data)] = []
        }
        let log = Log()
        struct NoNetwork: Error, CustomStringConvertible { var description: String { "no network in this test" } }
        func post(_ request: Data, to url: URL) throws -> Data {
            log.posts.append((url, request))
            throw NoNetwork()
        }
    }

    func testApplesChainIsAskedAboutAtApplesResponders() throws {
        let leaf = try X509Certificate(der: VerificationTests.appleLeaf)
        let intermediate = try X509Certificate(der: VerificationTests.appleIntermediate)
        XCTAssertEqual(OCSPRevocationChecker.responderURL(of: leaf)?.absoluteString, "http://ocsp.apple.com/ocsp03-wwdrg602")
        XCTAssertEqual(OCSPRevocationChecker.responderURL(of: intermediate)?.absoluteString,
                       "http://ocsp.apple.com/ocsp03-applerootcag3")

        let transport = Unplugged()
        let checker = OCSPRevocationChecker(roots: .appleDefault, transport: transport)
        XCTAssertThrowsError(try checker.check([leaf.der, intermediate.der], field: "signedPayload")) { error in
            XCTAssertEqual("\(error)", "signedPayload: revocation status of x5c[1] (\(intermediate.subjectSummary)) could not be "
                           + "learned from OCSP responder http://ocsp.apple.com/ocsp03-applerootcag3: no network in this test; "
                           + "not stored, retry later")
        }
        // One request, about the WWDR intermediate by its serial, under Apple Root CA G3, without a nonce.
        let (url, request) = try XCTUnwrap(transport.log.posts.first)
        XCTAssertEqual(transport.log.posts.count, 1)
        XCTAssertEqual(url.absoluteString, "http://ocsp.apple.com/ocsp03-applerootcag3")
        let file = chain.directory + "/apple-request.der"
        try request.write(to: URL(fileURLWithPath: file))
        let text = try openssl(["ocsp", "-reqin", file, "-req_text"])
        XCTAssertTrue(text.contains("Serial Number: \(OCSPRevocationChecker.serial(of: intermediate))"), text)
        XCTAssertFalse(text.contains("Nonce"), text)
    }

    private func openssl(_ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["openssl"] + arguments
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return text
    }
}
