import Foundation
import XCTest
@testable import SubscriptionCore
@testable import SubdeskScenarios
import COpenSSL
import SubdeskTestKit

/// Signed-data verification against the TEST ONLY CA and the fixtures made by
/// `Fixtures/verification/make-fixtures.sh`, plus Apple's real chain.
final class VerificationTests: XCTestCase, RunsOnEveryEngine {
    // MARK: Fixtures

    static let fixtureDirectory: URL = {
        guard let url = Bundle.module.url(forResource: "Fixtures", withExtension: nil) else {
            fatalError("Fixtures are missing from the test bundle; check resources in Package.swift")
        }
        return url.appendingPathComponent("verification")
    }()

    static func fixture(_ name: String) -> Data {
        let url = fixtureDirectory.appendingPathComponent(name)
        guard let data = try? Data(contentsOf: url) else { fatalError("fixture \(name) is missing") }
        return data
    }

    static let testRoot = fixture("test-ca/root.der")
    static let testIntermediate = fixture("test-ca/intermediate.der")
    static let testLeaf = fixture("test-ca/leaf.der")
    static let testLeafKey = fixture("test-ca/leaf-key.pem")

    /// 2026-01-01T00:00:00Z in App Store milliseconds.
    static let signedDate2026: Double = 1_767_225_600_000

    let roots = try! TrustRoots(certificates: [X509Certificate(der: VerificationTests.testRoot)])
    lazy var verifier = SignedDataVerifier(roots: roots)
    let signer = try! JWSSigner.testCA(directory: VerificationTests.fixtureDirectory.appendingPathComponent("test-ca").path)

    static func payload(signedDate: Double? = signedDate2026, extra: String = "") -> Data {
        var members = ["\"notificationType\":\"DID_RENEW\"", "\"notificationUUID\":\"7e3fb20b-4cdb-47cc-936d-99d65f608138\""]
        if let signedDate { members.append("\"signedDate\":\(signedDate)") }
        if !extra.isEmpty { members.append(extra) }
        return Data("{\(members.joined(separator: ","))}".utf8)
    }

    /// A JWS with a hand-written header, correctly signed by the test leaf
    /// key, so the header is the only thing wrong with it.
    func jws(header: String, payload: Data = payload()) throws -> String {
        let input = Base64URL.encode(Data(header.utf8)) + "." + Base64URL.encode(payload)
        let key = try ES256.PrivateKey(pem: Self.testLeafKey)
        let signature = try ES256.sign(message: Data(input.utf8), key: key)
        return input + "." + Base64URL.encode(signature)
    }

    func makeSigner(leaf: String, intermediate: String, root: String = "test-ca/root.der",
                key: String = "test-ca/leaf-key.pem") throws -> JWSSigner {
        try JWSSigner(privateKeyPEM: Self.fixture(key),
                      chain: [Self.fixture(leaf), Self.fixture(intermediate), Self.fixture(root)])
    }

    func assertRejects(_ jws: String, field: String = "signedPayload", with expected: VerificationError.Fault,
                       _ expectedDescription: String? = nil, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try verifier.verify(jws, field: field), file: file, line: line) { error in
            guard let error = error as? VerificationError else {
                return XCTFail("threw \(type(of: error)): \(error)", file: file, line: line)
            }
            XCTAssertEqual(error.field, field, file: file, line: line)
            XCTAssertEqual(error.fault, expected, file: file, line: line)
            if let expectedDescription {
                XCTAssertEqual(error.description, expectedDescription, file: file, line: line)
            }
        }
    }

    static func date(_ iso: String) -> Date {
        ISO8601DateFormatter().date(from: iso)!
    }

    // MARK: The good path

    func testValidJWSVerifiesAndReturnsPayload() throws {
        let payload = Self.payload()
        let jws = try signer.sign(payload: payload)
        let verified = try verifier.verify(jws, field: "signedPayload")

        XCTAssertEqual(verified.payload, payload)
        XCTAssertEqual(verified.header, JWSHeader(algorithm: "ES256", certificateCount: 3, keyID: nil, type: nil))
        XCTAssertEqual(verified.signedDate, Self.date("2026-01-01T00:00:00Z"))
        let concatenated = Self.testLeaf + Self.testIntermediate + Self.testRoot
        XCTAssertEqual(verified.chainHash, ContentDigest.sha256(concatenated).lowercaseHex)
        XCTAssertEqual(verified.signerSubject,
                       "CN=subdesk TEST ONLY App Store Signing, O=subdesk test CA - not Apple")
    }

    func testSignerWritesAppleShapedHeader() throws {
        let jws = try signer.sign(payload: Self.payload())
        let segments = jws.split(separator: ".", omittingEmptySubsequences: false)
        XCTAssertEqual(segments.count, 3)
        let header = try XCTUnwrap(Base64URL.decode(segments[0]).map { String(decoding: $0, as: UTF8.self) })
        let x5c = [Self.testLeaf, Self.testIntermediate, Self.testRoot].map { "\"\($0.base64EncodedString())\"" }
        XCTAssertEqual(header, "{\"alg\":\"ES256\",\"x5c\":[\(x5c.joined(separator: ","))]}")
        XCTAssertEqual(Base64URL.decode(segments[2])?.count, 64)
        XCTAssertFalse(jws.contains("="), "compact JWS carries no base64 padding")
    }

    func testSignedDateWithFractionIsAccepted() throws {
        let jws = try signer.sign(payload: Self.payload(signedDate: 1_767_225_600_123.456))
        let verified = try verifier.verify(jws, field: "signedPayload")
        XCTAssertEqual(try XCTUnwrap(verified.signedDate).timeIntervalSince1970, 1_767_225_600.123456, accuracy: 1e-6)
    }

    func testPayloadWithoutSignedDateIsCheckedNow() throws {
        let verified = try verifier.verify(try signer.sign(payload: Self.payload(signedDate: nil)), field: "signedPayload")
        XCTAssertNil(verified.signedDate)
    }

    func testSignedTransactionInfoAndRenewalInfoVerifyOnTheirOwn() throws {
        let transaction = Data(#"{"transactionId":"2000000412345678","signedDate":1767225600000}"#.utf8)
        let verified = try verifier.verify(try signer.sign(payload: transaction), field: "signedTransactionInfo")
        XCTAssertEqual(verified.payload, transaction)
    }

    /// The typed results decode the payload into its model and keep the JWS as signed; a
    /// payload that verifies but does not decode names the field it came from.
    func testTypedResultsCarryTheModelAndTheSignedBytes() throws {
        let payload = Self.payload()
        let notification = try verifier.verifyNotification(try signer.sign(payload: payload))
        XCTAssertEqual(notification.decoded.notificationType, .didRenew)
        XCTAssertEqual(notification.decoded.notificationUUID, "7e3fb20b-4cdb-47cc-936d-99d65f608138")
        XCTAssertEqual(notification.decoded.signedDate, 1_767_225_600_000)
        XCTAssertEqual(notification.jws.payload, payload)

        let transaction = Data((#"{"transactionId":"2000000412345678","originalTransactionId":"2000000412345670","#
                                + #""productId":"pro.monthly","purchaseDate":1767225000000,"signedDate":1767225600000}"#).utf8)
        let verified = try verifier.verifyTransaction(try signer.sign(payload: transaction), field: "signedTransactionInfo")
        XCTAssertEqual(verified.decoded.transactionId, "2000000412345678")
        XCTAssertEqual(verified.decoded.productId, "pro.monthly")
        XCTAssertEqual(verified.jws.payload, transaction)

        let app = try verifier.verifyAppTransaction(try signer.sign(payload: Data(#"{"appTransactionId":"704","receiptType":"Sandbox"}"#.utf8)),
                                                    field: "signedAppTransactionInfo")
        XCTAssertEqual(app.decoded.appTransactionId, "704")
        XCTAssertEqual(app.decoded.environment, .sandbox)

        let renewal = try verifier.verifyRenewalInfo(try signer.sign(payload: Data(#"{"originalTransactionId":"2000000412345670","signedDate":1767225600000}"#.utf8)),
                                                     field: "signedRenewalInfo")
        XCTAssertEqual(renewal.decoded.originalTransactionId, "2000000412345670")

        XCTAssertThrowsError(try verifier.verifyTransaction(try signer.sign(payload: Self.payload()), field: "signedTransactionInfo")) { error in
            XCTAssertEqual((error as? DecodingFault)?.path, "signedTransactionInfo.purchaseDate")
        }
    }

    // MARK: Structure

    func testWrongSegmentCountIsRejected() throws {
        let good = try signer.sign(payload: Self.payload())
        let parts = good.split(separator: ".").map(String.init)
        assertRejects(parts[0] + "." + parts[1], with: .notCompactJWS(segmentCount: 2),
                      "signedPayload: not a JWS (expected 3 segments, found 2)")
        assertRejects(good + "." + parts[2], with: .notCompactJWS(segmentCount: 4),
                      "signedPayload: not a JWS (expected 3 segments, found 4)")
        assertRejects("", with: .notCompactJWS(segmentCount: 1))
    }

    func testBadBase64URLIsRejectedNamingTheSegment() throws {
        let parts = try signer.sign(payload: Self.payload()).split(separator: ".").map(String.init)
        assertRejects("e+J." + parts[1] + "." + parts[2], with: .badBase64URL(segment: 1))
        assertRejects(parts[0] + "." + parts[1] + "*." + parts[2], with: .badBase64URL(segment: 2),
                      "signedPayload: bad base64url in segment 2")
        assertRejects(parts[0] + "." + parts[1] + "." + parts[2] + "*", with: .badBase64URL(segment: 3))
    }

    func testPayloadThatIsNotJSONIsRejected() throws {
        let jws = try signer.sign(payload: Data("not json at all".utf8))
        assertRejects(jws, with: .payloadNotJSON, "signedPayload: payload is not JSON")
        assertRejects(try signer.sign(payload: Data("[1,2]".utf8)), with: .payloadNotJSONObject)
        assertRejects(try signer.sign(payload: Data(#"{"signedDate":"yesterday"}"#.utf8)), with: .signedDateNotANumber)
        assertRejects(try signer.sign(payload: Data(#"{"signedDate":1e300}"#.utf8)),
                      with: .timeOutOfRange("signedDate 1e+300"))
    }

    // MARK: Header

    var x5cOfTestCA: String {
        [Self.testLeaf, Self.testIntermediate, Self.testRoot]
            .map { "\"\($0.base64EncodedString())\"" }.joined(separator: ",")
    }

    func testAlgorithmsOtherThanES256AreRejected() throws {
        for alg in ["none", "HS256", "RS256", "ES384", "es256"] {
            assertRejects(try jws(header: "{\"alg\":\"\(alg)\",\"x5c\":[\(x5cOfTestCA)]}"),
                          with: .algorithmNotES256(alg), "signedPayload: alg \(alg) is not ES256")
        }
        assertRejects(try jws(header: "{\"x5c\":[\(x5cOfTestCA)]}"), with: .algorithmMissing)
        assertRejects(try jws(header: "[]"), with: .headerNotJSONObject)
    }

    func testCriticalHeaderParametersAreRejected() throws {
        assertRejects(try jws(header: "{\"alg\":\"ES256\",\"crit\":[\"exp\"],\"exp\":1,\"x5c\":[\(x5cOfTestCA)]}"),
                      with: .criticalHeaderParameters)
    }

    func testX5cMissingEmptyOrGarbageIsRejected() throws {
        assertRejects(try jws(header: #"{"alg":"ES256"}"#), with: .x5cMissing, "signedPayload: x5c missing")
        assertRejects(try jws(header: #"{"alg":"ES256","x5c":[]}"#), with: .x5cEmpty, "signedPayload: x5c is empty")
        assertRejects(try jws(header: #"{"alg":"ES256","x5c":"MIIB"}"#), with: .x5cNotArrayOfStrings)
        assertRejects(try jws(header: #"{"alg":"ES256","x5c":[1,2]}"#), with: .x5cNotArrayOfStrings)
        assertRejects(try jws(header: #"{"alg":"ES256","x5c":["!!!","!!!"]}"#), with: .x5cEntryNotBase64(index: 0))

        let garbage = Data("definitely not a certificate".utf8).base64EncodedString()
        XCTAssertThrowsError(try verifier.verify(try jws(header: "{\"alg\":\"ES256\",\"x5c\":[\"\(garbage)\",\"\(garbage)\"]}"),
                                                 field: "signedPayload")) { error in
            guard case .x5cEntryNotCertificate(index: 0, _)? = (error as? VerificationError)?.fault else {
                return XCTFail("unexpected \(error)")
            }
            XCTAssertTrue("\(error)".hasPrefix("signedPayload: x5c[0] is not a certificate: not a DER certificate ("), "\(error)")
        }
        let leafOnly = "\"\(Self.testLeaf.base64EncodedString())\""
        assertRejects(try jws(header: "{\"alg\":\"ES256\",\"x5c\":[\(leafOnly)]}"), with: .x5cTooShort(count: 1))
        let leafThenGarbage = "\"\(Self.testLeaf.base64EncodedString())\",\"\(garbage)\""
        XCTAssertThrowsError(try verifier.verify(try jws(header: "{\"alg\":\"ES256\",\"x5c\":[\(leafThenGarbage)]}"),
                                                 field: "signedPayload")) { error in
            guard case .x5cEntryNotCertificate(index: 1, _)? = (error as? VerificationError)?.fault else {
                return XCTFail("unexpected \(error)")
            }
        }
    }

    // MARK: Chain

    func testChainToAnotherRootIsRejected() throws {
        let untrusted = try makeSigner(leaf: "other-ca/leaf.der", intermediate: "other-ca/intermediate.der",
                                   root: "other-ca/root.der", key: "other-ca/leaf-key.pem")
        XCTAssertThrowsError(try verifier.verify(try untrusted.sign(payload: Self.payload()), field: "signedPayload")) { error in
            guard case .chainUntrusted? = (error as? VerificationError)?.fault else { return XCTFail("unexpected \(error)") }
            XCTAssertEqual("\(error)",
                           "signedPayload: certificate chain does not lead to a configured root (unable to get local issuer certificate at x5c[1])")
        }
    }

    func testTrustNeverComesFromTheThirdX5cEntry() throws {
        // The test chain names its own root in x5c[2]; a verifier trusting
        // only Apple must still refuse it.
        let appleOnly = SignedDataVerifier(roots: .appleDefault)
        XCTAssertThrowsError(try appleOnly.verify(try signer.sign(payload: Self.payload()), field: "signedPayload")) { error in
            guard case .chainUntrusted? = (error as? VerificationError)?.fault else { return XCTFail("unexpected \(error)") }
        }
        // And with an untrusted root in x5c[2], a good chain still verifies.
        let lying = try makeSigner(leaf: "test-ca/leaf.der", intermediate: "test-ca/intermediate.der", root: "other-ca/root.der")
        XCTAssertNoThrow(try verifier.verify(try lying.sign(payload: Self.payload()), field: "signedPayload"))
    }

    func testIntermediateLackingMarkerOIDIsRejected() throws {
        let unmarked = try makeSigner(leaf: "leaf-under-intermediate-without-oid.der", intermediate: "intermediate-without-oid.der")
        assertRejects(try unmarked.sign(payload: Self.payload()), field: "signedTransactionInfo",
                      with: .missingMarkerOID(index: 1, oid: "1.2.840.113635.100.6.2.1"),
                      "signedTransactionInfo: x5c[1] lacks OID 1.2.840.113635.100.6.2.1")
    }

    func testLeafLackingMarkerOIDIsRejected() throws {
        let unmarked = try makeSigner(leaf: "leaf-without-oid.der", intermediate: "test-ca/intermediate.der")
        assertRejects(try unmarked.sign(payload: Self.payload()), field: "signedRenewalInfo",
                      with: .missingMarkerOID(index: 0, oid: "1.2.840.113635.100.6.11.1"),
                      "signedRenewalInfo: x5c[0] lacks OID 1.2.840.113635.100.6.11.1")
    }

    func testPathMustGoThroughTheX5cIntermediate() throws {
        let skipping = try makeSigner(leaf: "leaf-issued-by-root.der", intermediate: "test-ca/intermediate.der")
        assertRejects(try skipping.sign(payload: Self.payload()), with: .pathBypassesIntermediate,
                      "signedPayload: x5c[0] leads to a configured root without x5c[1] as its issuer")
    }

    func testCertificateExpiredAtSignedDateIsRejected() throws {
        let expired = try makeSigner(leaf: "leaf-expired-2021.der", intermediate: "test-ca/intermediate.der")
        let signedIn2024: Double = 1_717_200_000_000 // 2024-06-01T00:00:00Z
        assertRejects(try expired.sign(payload: Self.payload(signedDate: signedIn2024)),
                      with: .certificateExpired(.x5c(0), at: .signedDate(Self.date("2024-06-01T00:00:00Z")),
                                                notAfter: Self.date("2021-12-31T23:59:59Z")),
                      "signedPayload: certificate x5c[0] expired at signedDate 2024-06-01T00:00:00Z (notAfter 2021-12-31T23:59:59Z)")

        // The same certificate was fine when the payload was signed in 2021:
        // the chain is judged at signedDate, not today.
        let signedIn2021: Double = 1_622_505_600_000 // 2021-06-01T00:00:00Z
        XCTAssertNoThrow(try verifier.verify(try expired.sign(payload: Self.payload(signedDate: signedIn2021)),
                                             field: "signedPayload"))
    }

    func testCertificateNotYetValidAtSignedDateIsRejected() throws {
        // Every test CA certificate starts on 2020-01-01; libcrypto checks from
        // the root down, so the configured root is the one named.
        let signedIn2019: Double = 1_546_300_800_000 // 2019-01-01T00:00:00Z
        assertRejects(try signer.sign(payload: Self.payload(signedDate: signedIn2019)),
                      with: .certificateNotYetValid(
                        .configuredRoot(subject: "CN=subdesk TEST ONLY Root CA, O=subdesk test CA - not Apple"),
                        at: .signedDate(Self.date("2019-01-01T00:00:00Z")), notBefore: Self.date("2020-01-01T00:00:00Z")),
                      "signedPayload: certificate configured root (CN=subdesk TEST ONLY Root CA, O=subdesk test CA - not Apple) "
                      + "not yet valid at signedDate 2019-01-01T00:00:00Z (notBefore 2020-01-01T00:00:00Z)")
    }

    // MARK: Signature

    func testSignatureByAnotherKeyIsRejected() throws {
        let impostor = try makeSigner(leaf: "test-ca/leaf.der", intermediate: "test-ca/intermediate.der", key: "other-key.pem")
        assertRejects(try impostor.sign(payload: Self.payload()), with: .signatureMismatch,
                      "signedPayload: ES256 signature does not match")
    }

    /// Verify contexts are reused per key: one that just refused a signature must still
    /// accept a good one, and the other way round.
    func testARefusedSignatureLeavesTheKeyUsable() throws {
        let good = try signer.sign(payload: Self.payload())
        let parts = good.split(separator: ".").map(String.init)
        var raw = [UInt8](try XCTUnwrap(Base64URL.decode(parts[2])))
        raw[40] ^= 0x01
        let bad = parts[0] + "." + parts[1] + "." + Base64URL.encode(Data(raw))
        for _ in 0..<3 {
            XCTAssertNoThrow(try verifier.verify(good, field: "signedPayload"))
            assertRejects(bad, with: .signatureMismatch)
        }
        XCTAssertNoThrow(try verifier.verify(good, field: "signedPayload"))
    }

    func testPayloadAlteredAfterSigningIsRejected() throws {
        let parts = try signer.sign(payload: Self.payload()).split(separator: ".").map(String.init)
        let altered = Base64URL.encode(Self.payload(extra: "\"environment\":\"Production\""))
        assertRejects(parts[0] + "." + altered + "." + parts[2], with: .signatureMismatch)
    }

    func testDEREncodedSignatureIsRejectedForItsLength() throws {
        let parts = try signer.sign(payload: Self.payload()).split(separator: ".").map(String.init)
        let raw = try XCTUnwrap(Base64URL.decode(parts[2]))
        let der = try XCTUnwrap(ES256.derSignature(fromRaw: raw))
        assertRejects(parts[0] + "." + parts[1] + "." + Base64URL.encode(der), with: .signatureWrongLength(der.count))
    }

    /// The DER form built by hand for libcrypto matches libcrypto's own encoding, for the
    /// awkward integers too: leading zero bytes, the top bit set, zero itself.
    func testHandBuiltDERSignaturesMatchLibcrypto() throws {
        var rng = StoreGenerator.Random(state: 11)
        var cases: [[UInt8]] = [[UInt8](repeating: 0, count: 64), [UInt8](repeating: 0xFF, count: 64)]
        for _ in 0..<300 {
            var raw = (0..<64).map { _ in UInt8(rng.int(0..<256)) }
            for half in [0, 32] {
                switch rng.int(0..<4) {
                case 0: for k in 0..<rng.int(1..<32) { raw[half + k] = 0 }
                case 1: raw[half] |= 0x80
                case 2: raw[half] = 0; raw[half + 1] |= 0x80
                default: break
                }
            }
            cases.append(raw)
        }
        for raw in cases {
            let expected = try XCTUnwrap(ES256.derSignature(fromRaw: Data(raw)))
            var out = [UInt8](repeating: 0, count: 72)
            let length = raw.withUnsafeBufferPointer { ES256.encodeDER(raw: $0, into: &out) }
            XCTAssertEqual(Data(out[0..<length]), expected, "\(raw)")
        }
    }

    // MARK: Cache

    func testVerifiedChainIsCachedAndReused() throws {
        let jws = try signer.sign(payload: Self.payload())
        _ = try verifier.verify(jws, field: "signedPayload")
        XCTAssertEqual(verifier.cacheStatistics, .init(hits: 0, chainChecks: 1, entries: 1))
        _ = try verifier.verify(jws, field: "signedPayload")
        _ = try verifier.verify(try signer.sign(payload: Self.payload(extra: "\"n\":2")), field: "signedTransactionInfo")
        XCTAssertEqual(verifier.cacheStatistics, .init(hits: 2, chainChecks: 1, entries: 1))

        // A bad signature under a cached chain is still caught.
        let impostor = try makeSigner(leaf: "test-ca/leaf.der", intermediate: "test-ca/intermediate.der", key: "other-key.pem")
        assertRejects(try impostor.sign(payload: Self.payload()), with: .signatureMismatch)
        XCTAssertEqual(verifier.cacheStatistics.hits, 3)
    }

    /// A one-shot process (CGI) checks a chain once per store: a later verifier on the
    /// same store recalls it, unless the roots differ or the instant is outside its window.
    func testChainChecksAreRememberedInTheStore() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("chains-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try Store(path: Store.testLocation(file: directory.appendingPathComponent("s.db").path))
        let key = ChainMemoryKey.random()
        let jws = try signer.sign(payload: Self.payload())

        let first = SignedDataVerifier(roots: roots, memory: store, memoryKey: key)
        let checked = try first.verify(jws, field: "signedPayload")
        XCTAssertEqual(first.cacheStatistics, .init(hits: 0, chainChecks: 1, recalled: 0, unsealed: 0, entries: 1))

        let second = SignedDataVerifier(roots: roots, memory: store, memoryKey: key)
        let recalled = try second.verify(jws, field: "signedPayload")
        XCTAssertEqual(second.cacheStatistics, .init(hits: 0, chainChecks: 0, recalled: 1, unsealed: 0, entries: 1))
        XCTAssertEqual(recalled.chainHash, checked.chainHash)
        XCTAssertEqual(recalled.signerSubject, checked.signerSubject)
        XCTAssertEqual(recalled.payload, checked.payload)

        // A recalled chain still needs a good signature.
        let impostor = try makeSigner(leaf: "test-ca/leaf.der", intermediate: "test-ca/intermediate.der", key: "other-key.pem")
        XCTAssertThrowsError(try SignedDataVerifier(roots: roots, memory: store, memoryKey: key).verify(try impostor.sign(payload: Self.payload()),
                                                                                      field: "signedPayload"))

        // Other roots: nothing recalled, and this chain does not lead to them.
        let apple = SignedDataVerifier(roots: .appleDefault, memory: store, memoryKey: key)
        XCTAssertThrowsError(try apple.verify(jws, field: "signedPayload"))
        XCTAssertEqual(apple.cacheStatistics.recalled, 0)

        // Outside the remembered window the chain is checked again, and fails as it should.
        let expired = try makeSigner(leaf: "leaf-expired-2021.der", intermediate: "test-ca/intermediate.der")
        _ = try SignedDataVerifier(roots: roots, memory: store, memoryKey: key).verify(try expired.sign(payload: Self.payload(signedDate: 1_622_505_600_000)),
                                                                        field: "signedPayload")
        let later = SignedDataVerifier(roots: roots, memory: store, memoryKey: key)
        XCTAssertThrowsError(try later.verify(try expired.sign(payload: Self.payload(signedDate: 1_717_200_000_000)), field: "signedPayload")) { error in
            guard case .certificateExpired(.x5c(0), _, _)? = (error as? VerificationError)?.fault else {
                return XCTFail("unexpected \(error)")
            }
        }
        XCTAssertEqual(later.cacheStatistics.recalled, 0)
        XCTAssertEqual(later.cacheStatistics.chainChecks, 1)
    }

    /// Anyone who can write the store can plant a row; only this host's key makes one
    /// believed. A row planted for a chain that leads to no configured root (the attack:
    /// copy another row's roots column and seal, put a self-made chain's hash beside them)
    /// is ignored and the chain refused after a full check; a row with a broken seal for a
    /// good chain costs only a full check; another host's key finds nothing.
    func testAPlantedChainRowCreatesNoTrust() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("chains-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try Store(path: Store.testLocation(file: directory.appendingPathComponent("s.db").path))
        let key = ChainMemoryKey.random()
        _ = try SignedDataVerifier(roots: roots, memory: store, memoryKey: key).verify(try signer.sign(payload: Self.payload()),
                                                                                     field: "signedPayload")
        let honest = try XCTUnwrap(try store.chainRowsForTesting().first)

        let forger = try makeSigner(leaf: "other-ca/leaf.der", intermediate: "other-ca/intermediate.der", root: "other-ca/root.der",
                                    key: "other-ca/leaf-key.pem")
        let forged = try forger.sign(payload: Self.payload())
        let forgedChain = ["other-ca/leaf.der", "other-ca/intermediate.der", "other-ca/root.der"].map(Self.fixture)
        let forgedHash = SignedDataVerifier.chainHash(forgedChain)
        try store.plantChainForTesting(hash: forgedHash, roots: honest.roots, lengths: forgedChain.map { String($0.count) }.joined(separator: ","),
                                       subjects: honest.subjects, seal: honest.seal)
        let victim = SignedDataVerifier(roots: roots, memory: store, memoryKey: key)
        XCTAssertThrowsError(try victim.verify(forged, field: "signedPayload")) { error in
            guard case .chainUntrusted? = (error as? VerificationError)?.fault else { return XCTFail("unexpected \(error)") }
        }
        XCTAssertEqual(victim.cacheStatistics.recalled, 0)
        XCTAssertEqual(victim.cacheStatistics.unsealed, 1)
        XCTAssertEqual(victim.cacheStatistics.chainChecks, 1)

        // The honest row with its seal broken: not believed, the chain checked again and found good.
        try store.plantChainForTesting(hash: honest.hash, roots: honest.roots, lengths: honest.lengths, subjects: honest.subjects,
                                       seal: Data(repeating: 7, count: 32))
        let checked = SignedDataVerifier(roots: roots, memory: store, memoryKey: key)
        XCTAssertNoThrow(try checked.verify(try signer.sign(payload: Self.payload()), field: "signedPayload"))
        XCTAssertEqual(checked.cacheStatistics.unsealed, 1)
        XCTAssertEqual(checked.cacheStatistics.chainChecks, 1)

        // Another host's key files its rows apart: it neither recalls nor overwrites this host's.
        let other = SignedDataVerifier(roots: roots, memory: store, memoryKey: .random())
        XCTAssertNoThrow(try other.verify(try signer.sign(payload: Self.payload()), field: "signedPayload"))
        XCTAssertEqual(other.cacheStatistics.recalled + other.cacheStatistics.unsealed, 0)
        let again = SignedDataVerifier(roots: roots, memory: store, memoryKey: key)
        XCTAssertNoThrow(try again.verify(try signer.sign(payload: Self.payload()), field: "signedPayload"))
        XCTAssertEqual(again.cacheStatistics.recalled, 1)

        // No key, no memory: nothing recalled, nothing written.
        let before = try store.chainRowsForTesting().count
        let keyless = SignedDataVerifier(roots: roots, memory: store)
        XCTAssertNoThrow(try keyless.verify(try signer.sign(payload: Self.payload()), field: "signedPayload"))
        XCTAssertEqual(keyless.cacheStatistics.recalled, 0)
        XCTAssertEqual(try store.chainRowsForTesting().count, before)
    }

    /// The key file is made once, 0600, and refused when others may read it or it is cut short.
    func testChainKeyFileIsPrivateAndChecked() throws {
        let directory = NSTemporaryDirectory() + "chain-key-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/state/chain-memory.key"
        let made = try ChainMemoryKey.load(path: path)
        let mode = try XCTUnwrap(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
        XCTAssertEqual(mode & 0o777, 0o600)
        XCTAssertEqual(try ChainMemoryKey.load(path: path).rowKey(roots: Data([1])), made.rowKey(roots: Data([1])),
                       "a second process reads the key the first made")
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path)
        XCTAssertThrowsError(try ChainMemoryKey.load(path: path)) { error in
            XCTAssertTrue(String(describing: error).contains("mode 644"), "\(error)")
        }
        try Data(count: 5).write(to: URL(fileURLWithPath: path))
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        XCTAssertThrowsError(try ChainMemoryKey.load(path: path)) { error in
            XCTAssertTrue(String(describing: error).contains("holds 5 bytes, not 32"), "\(error)")
        }
        XCTAssertThrowsError(try ChainMemoryKey.load(path: directory + "/absent.key", create: false))
    }

    func testCachedChainIsRecheckedOutsideItsValidityWindow() throws {
        let expired = try makeSigner(leaf: "leaf-expired-2021.der", intermediate: "test-ca/intermediate.der")
        _ = try verifier.verify(try expired.sign(payload: Self.payload(signedDate: 1_622_505_600_000)), field: "signedPayload")
        XCTAssertEqual(verifier.cacheStatistics, .init(hits: 0, chainChecks: 1, entries: 1))

        XCTAssertThrowsError(try verifier.verify(try expired.sign(payload: Self.payload(signedDate: 1_717_200_000_000)),
                                                 field: "signedPayload")) { error in
            guard case .certificateExpired(.x5c(0), _, _)? = (error as? VerificationError)?.fault else {
                return XCTFail("unexpected \(error)")
            }
        }
        XCTAssertEqual(verifier.cacheStatistics.hits, 0)
        XCTAssertEqual(verifier.cacheStatistics.chainChecks, 2)
    }

    func testCachedChainIsNotReusedForDifferentlyCutX5c() throws {
        _ = try verifier.verify(try signer.sign(payload: Self.payload()), field: "signedPayload")
        let merged = "\"\((Self.testLeaf + Self.testIntermediate).base64EncodedString())\",\"\(Self.testRoot.base64EncodedString())\""
        XCTAssertThrowsError(try verifier.verify(try jws(header: "{\"alg\":\"ES256\",\"x5c\":[\(merged)]}"),
                                                 field: "signedPayload")) { error in
            XCTAssertEqual((error as? VerificationError)?.fault,
                           .x5cEntryNotCertificate(index: 0, reason: "DER certificate followed by \(Self.testIntermediate.count) unexpected bytes"))
        }
    }

    func testFailedChainsAreNotCached() throws {
        let unmarked = try makeSigner(leaf: "leaf-without-oid.der", intermediate: "test-ca/intermediate.der")
        let jws = try unmarked.sign(payload: Self.payload())
        for _ in 0..<2 { XCTAssertThrowsError(try verifier.verify(jws, field: "signedPayload")) }
        XCTAssertEqual(verifier.cacheStatistics, .init(hits: 0, chainChecks: 2, entries: 0))
    }

    func testCacheIsBounded() throws {
        let small = SignedDataVerifier(roots: roots, cacheCapacity: 1)
        let other = try makeSigner(leaf: "leaf-expired-2021.der", intermediate: "test-ca/intermediate.der")
        _ = try small.verify(try signer.sign(payload: Self.payload(signedDate: 1_622_505_600_000)), field: "a")
        _ = try small.verify(try other.sign(payload: Self.payload(signedDate: 1_622_505_600_000)), field: "b")
        XCTAssertEqual(small.cacheStatistics, .init(hits: 0, chainChecks: 2, entries: 1))
    }

    func testConcurrentVerificationIsSafe() throws {
        let verifier = self.verifier
        let jwsList = try (0..<8).map { try signer.sign(payload: Self.payload(extra: "\"n\":\($0)")) }
        let failures = NSLock()
        var failed: [String] = []
        DispatchQueue.concurrentPerform(iterations: 64) { index in
            do {
                _ = try verifier.verify(jwsList[index % jwsList.count], field: "signedPayload")
            } catch {
                failures.lock()
                failed.append("\(error)")
                failures.unlock()
            }
        }
        XCTAssertEqual(failed, [])
        let statistics = verifier.cacheStatistics
        XCTAssertEqual(statistics.hits + statistics.chainChecks, 64)
        XCTAssertEqual(statistics.entries, 1)
    }

    // MARK: Apple's real chain

    static let appleLeaf = fixture("apple/AppleReceiptSigning-2025.cer")
    static let appleIntermediate = fixture("apple/AppleWWDRCA-G6.cer")

    func testEmbeddedAppleRootIsAppleRootCAG3() throws {
        let roots = TrustRoots.appleDefault.certificates
        XCTAssertEqual(roots.count, 1)
        XCTAssertEqual(roots[0].sha256.lowercaseHex, "63343abfb89a6a03ebb57e9b3f5fa7be7c4f5c756f3017b3a8c488c3653e9179")
        XCTAssertEqual(roots[0].subjectSummary,
                       "CN=Apple Root CA - G3, OU=Apple Certification Authority, O=Apple Inc., C=US")
        XCTAssertEqual(roots[0].notAfter, Self.date("2039-04-30T18:19:06Z"))
    }

    func testApplesRealChainValidatesToEmbeddedRoot() throws {
        let leaf = try X509Certificate(der: Self.appleLeaf)
        let intermediate = try X509Certificate(der: Self.appleIntermediate)
        XCTAssertTrue(leaf.hasExtension(oid: SignedDataVerifier.leafMarkerOID))
        XCTAssertTrue(intermediate.hasExtension(oid: SignedDataVerifier.intermediateMarkerOID))
        XCTAssertFalse(leaf.hasExtension(oid: SignedDataVerifier.intermediateMarkerOID))
        XCTAssertEqual(leaf.notBefore, Self.date("2025-09-19T19:44:51Z"))
        XCTAssertEqual(leaf.notAfter, Self.date("2027-10-13T17:47:23Z"))

        let apple = SignedDataVerifier(roots: .appleDefault)
        let chain = try apple.verifyChain([Self.appleLeaf, Self.appleIntermediate],
                                          at: Self.date("2026-03-01T12:00:00Z"), field: "signedPayload")
        XCTAssertEqual(chain.subjects.count, 3)
        XCTAssertEqual(chain.subjects.last,
                       "CN=Apple Root CA - G3, OU=Apple Certification Authority, O=Apple Inc., C=US")
        XCTAssertEqual(chain.validFrom, leaf.notBefore)
        XCTAssertEqual(chain.validUntil, leaf.notAfter)

        // Apple's third x5c entry is its root again; it changes nothing.
        let withRoot = [Self.appleLeaf, Self.appleIntermediate, TrustRoots.appleDefault.certificates[0].der]
        XCTAssertNoThrow(try apple.verifyChain(withRoot, at: Self.date("2026-03-01T12:00:00Z"), field: "signedPayload"))

        XCTAssertThrowsError(try apple.verifyChain([Self.appleLeaf, Self.appleIntermediate],
                                                   at: Self.date("2028-01-01T00:00:00Z"), field: "signedPayload")) { error in
            XCTAssertEqual("\(error)",
                           "signedPayload: certificate x5c[0] expired at 2028-01-01T00:00:00Z (notAfter 2027-10-13T17:47:23Z)")
        }
        // Apple's chain is not trusted by a verifier configured with other roots.
        XCTAssertThrowsError(try verifier.verifyChain([Self.appleLeaf, Self.appleIntermediate],
                                                      at: Self.date("2026-03-01T12:00:00Z"), field: "signedPayload"))
    }

    // MARK: Trust roots from files

    func testTrustRootsLoadDERAndMultiCertificatePEM() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("subdesk-roots-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }

        func pem(_ der: Data) -> String {
            let body = der.base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
            return "-----BEGIN CERTIFICATE-----\n\(body)\n-----END CERTIFICATE-----\n"
        }
        let bundle = directory.appendingPathComponent("roots.pem")
        try ("two roots\n" + pem(Self.testRoot) + pem(Self.fixture("other-ca/root.der"))).write(to: bundle, atomically: true, encoding: .utf8)
        let der = Self.fixtureDirectory.appendingPathComponent("test-ca/root.der")

        let roots = try TrustRoots(files: [bundle.path, der.path])
        XCTAssertEqual(roots.certificates.map(\.der), [Self.testRoot, Self.fixture("other-ca/root.der"), Self.testRoot])
        let verifier = SignedDataVerifier(roots: roots)
        XCTAssertNoThrow(try verifier.verify(try signer.sign(payload: Self.payload()), field: "signedPayload"))
    }

    func testTrustRootsNameTheBadFile() throws {
        let missing = "/nonexistent/subdesk/root.der"
        XCTAssertThrowsError(try TrustRoots(files: [missing])) { error in
            XCTAssertEqual(error as? TrustRootsError, .missing(path: missing))
            XCTAssertEqual("\(error)", "trust root /nonexistent/subdesk/root.der: no such file")
        }
        let key = Self.fixtureDirectory.appendingPathComponent("test-ca/leaf-key.pem").path
        XCTAssertThrowsError(try TrustRoots(files: [key])) { error in
            XCTAssertEqual(error as? TrustRootsError,
                           .notACertificate(path: key, reason: "PEM text holds no CERTIFICATE block"))
        }
        XCTAssertThrowsError(try TrustRoots(files: [Self.fixtureDirectory.appendingPathComponent("make-fixtures.sh").path])) { error in
            guard case .notACertificate(_, let reason)? = error as? TrustRootsError else { return XCTFail("unexpected \(error)") }
            XCTAssertTrue(reason.hasPrefix("not a DER certificate"), reason)
        }
        XCTAssertThrowsError(try TrustRoots(files: [Self.fixtureDirectory.path])) { error in
            XCTAssertEqual(error as? TrustRootsError, .unreadable(path: Self.fixtureDirectory.path, reason: "is a directory"))
        }
        XCTAssertThrowsError(try TrustRoots(files: [])) { error in
            XCTAssertEqual(error as? TrustRootsError, .noFiles)
        }
    }

    // MARK: Primitives

    func testBase64URLRoundTripsAndIsStrict() {
        for length in 0..<40 {
            let bytes = Data((0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 250) })
            let encoded = Base64URL.encode(bytes)
            XCTAssertFalse(encoded.contains("=") || encoded.contains("+") || encoded.contains("/"))
            XCTAssertEqual(Base64URL.decode(encoded), bytes)
            XCTAssertEqual(Base64URL.decodeUnpadded(encoded), bytes)
            let padded = encoded + String(repeating: "=", count: (4 - encoded.count % 4) % 4)
            XCTAssertEqual(Base64URL.decode(padded), bytes)
        }
        XCTAssertEqual(Base64URL.encode(Data([0xFB, 0xFF])), "-_8")
        XCTAssertNil(Base64URL.decode("+/8"), "standard-alphabet characters are refused")
        XCTAssertNil(Base64URL.decode("A"), "one character cannot encode anything")
        XCTAssertNil(Base64URL.decode("-_9"), "non-zero leftover bits are refused")
        XCTAssertNil(Base64URL.decode("AA=A"))
        XCTAssertNil(Base64URL.decode("AAAA===="))
        XCTAssertNil(Base64URL.decodeUnpadded("AA=="))
        XCTAssertNil(Base64URL.decode("AA AA"))
    }

    func testES256SignsAndVerifiesRawSignatures() throws {
        let key = try ES256.PrivateKey(pem: Self.testLeafKey)
        let publicKey = try ES256.PublicKey(certificate: X509Certificate(der: Self.testLeaf))
        let message = Data("header.payload".utf8)
        for _ in 0..<20 {
            let signature = try ES256.sign(message: message, key: key)
            XCTAssertEqual(signature.count, 64)
            XCTAssertTrue(ES256.isValidSignature(signature, of: message, by: publicKey))
            XCTAssertFalse(ES256.isValidSignature(signature, of: Data("header.payloaD".utf8), by: publicKey))
            let der = try XCTUnwrap(ES256.derSignature(fromRaw: signature))
            XCTAssertEqual(ES256.rawSignature(fromDER: der), signature)
        }
        XCTAssertFalse(ES256.isValidSignature(Data(count: 64), of: message, by: publicKey))
        XCTAssertFalse(ES256.isValidSignature(Data(count: 63), of: message, by: publicKey))
    }

    /// The verifiers of one process (one per checker of `ingest --workers`) share the key
    /// object of a leaf certificate, so its checks are counted and its table of multiples
    /// built once; another certificate has a key of its own, and a key is made only from
    /// the certificate it is looked up by.
    func testVerifiersShareOneKeyPerLeafCertificate() throws {
        var made = 0
        func key(_ der: Data) throws -> ES256.PublicKey {
            try ES256.PublicKey.shared(leaf: der) {
                made += 1
                return try X509Certificate(der: der)
            }
        }
        let first = try key(Self.testLeaf)
        let again = try key(Self.testLeaf)
        XCTAssertTrue(first === again, "one object for one certificate")
        // Another certificate for the same key pair is another entry, of the same key.
        let other = try key(Self.fixture("leaf-expired-2021.der"))
        XCTAssertFalse(first === other)
        XCTAssertLessThanOrEqual(made, 2, "a key found is not made again")
        let message = Data("shared".utf8)
        let signature = try ES256.sign(message: message, key: ES256.PrivateKey(pem: Self.testLeafKey))
        XCTAssertTrue(ES256.isValidSignature(signature, of: message, by: again))
        XCTAssertTrue(ES256.isValidSignature(signature, of: message, by: other))
        XCTAssertFalse(ES256.isValidSignature(signature, of: Data("other".utf8), by: again))
    }

    /// A key's table of multiples (built after `tableThreshold` checks) must accept and
    /// refuse exactly what libcrypto's own ECDSA does.
    func testKeyTableAgreesWithLibcryptoOnGoodAndBadSignatures() throws {
        let key = try ES256.PrivateKey(pem: Self.testLeafKey)
        let leaf = try X509Certificate(der: Self.testLeaf)
        let tabled = try ES256.PublicKey(certificate: leaf, tableThreshold: 1)
        let plain = try ES256.PublicKey(certificate: leaf, tableThreshold: .max)
        XCTAssertFalse(tabled.hasTable)
        // P-256's group order n, big-endian.
        let orderHex = Array("FFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551")
        let order = stride(from: 0, to: 64, by: 2).map { UInt8(String(orderHex[$0..<$0 + 2]), radix: 16)! }
        func minus(_ a: [UInt8], _ b: ArraySlice<UInt8>) -> [UInt8] {
            var out = a, borrow = 0
            for i in stride(from: 31, through: 0, by: -1) {
                let d = Int(a[i]) - Int(b[b.startIndex + i]) - borrow
                out[i] = UInt8((d + 256) % 256)
                borrow = d < 0 ? 1 : 0
            }
            return out
        }
        func agree(_ signature: [UInt8], _ message: Data, _ expected: Bool, _ label: String) {
            let viaTable = ES256.isValidSignature(Data(signature), of: message, by: tabled)
            let viaLibcrypto = ES256.isValidSignature(Data(signature), of: message, by: plain)
            XCTAssertEqual(viaTable, viaLibcrypto, label)
            XCTAssertEqual(viaTable, expected, label)
        }
        var random = StoreGenerator.Random(state: 7)
        for round in 0..<150 {
            let message = Data((0..<(1 + round % 40)).map { _ in UInt8.random(in: 0...255, using: &random) })
            let signature = [UInt8](try ES256.sign(message: message, key: key))
            agree(signature, message, true, "round \(round): good")
            // (r, n - s) is the same signature to ECDSA.
            agree(Array(signature[0..<32]) + minus(order, signature[32..<64]), message, true, "round \(round): (r, n-s)")
            var flipped = signature
            flipped[Int.random(in: 0..<64, using: &random)] ^= UInt8(1 << Int.random(in: 0..<8, using: &random))
            agree(flipped, message, false, "round \(round): one bit flipped")
            agree(signature, message + Data([0]), false, "round \(round): other message")
            // r or s at n, or past it (the same value mod n must not pass).
            agree(order + Array(signature[32..<64]), message, false, "round \(round): r = n")
            agree(Array(signature[0..<32]) + order, message, false, "round \(round): s = n")
        }
        XCTAssertTrue(tabled.hasTable, "the first check built the table")
        XCTAssertFalse(plain.hasTable)
        let message = Data("m".utf8)
        let zero = [UInt8](repeating: 0, count: 32), ff = [UInt8](repeating: 0xFF, count: 32)
        let one: [UInt8] = Array(zero.dropLast()) + [1]
        let pairs: [([UInt8], [UInt8])] = [(zero, one), (one, zero), (zero, zero), (one, one), (ff, one), (one, ff), (ff, ff)]
        for (r, s) in pairs { agree(r + s, message, false, "r ends \(r[31]), s ends \(s[31])") }
    }

    /// The scalar inverse behind the key table, against libcrypto's BN_mod_inverse.
    func testScalarInverseMatchesLibcrypto() throws {
        typealias Limbs = P256ScalarInverse.Limbs
        let n = Limbs.order
        var random = StoreGenerator.Random(state: 11)
        var values: [Limbs] = [.one, Limbs(a0: 2, a1: 0, a2: 0, a3: 0), n.subtracting(.one).0,
                               n.subtracting(Limbs(a0: 2, a1: 0, a2: 0, a3: 0)).0,
                               Limbs(a0: 0, a1: 0, a2: 0, a3: 1 << 63), Limbs(a0: 0, a1: 0, a2: 1, a3: 0)]
        // Powers of two give the longest runs of even steps.
        for bit in 0..<256 {
            var limbs = [UInt64](repeating: 0, count: 4)
            limbs[bit / 64] = 1 << UInt64(bit % 64)
            values.append(Limbs(a0: limbs[0], a1: limbs[1], a2: limbs[2], a3: limbs[3]))
        }
        // Random values of every length, up to just below n.
        for i in 0..<3000 {
            let top = random.next() >> UInt64(i % 64)
            var value = Limbs(a0: random.next(), a1: random.next(), a2: random.next(), a3: top)
            if i % 4 == 1 { value = Limbs(a0: value.a0, a1: value.a1 >> UInt64(i % 64), a2: 0, a3: 0) }
            if value >= n { value = value.subtracting(n).0 }
            if !value.isZero { values.append(value) }
        }
        let order = BN_new(), input = BN_new(), expected = BN_new(), context = BN_CTX_new()
        defer { BN_free(order); BN_free(input); BN_free(expected); BN_CTX_free(context) }
        var bytes = [UInt8](repeating: 0, count: 32)
        n.write(bigEndian: &bytes)
        BN_bin2bn(bytes, 32, order)
        for value in values {
            let inverse = try XCTUnwrap(P256ScalarInverse.inverse(value))
            XCTAssertEqual(P256ScalarInverse.inverse(inverse), value)
            value.write(bigEndian: &bytes)
            BN_bin2bn(bytes, 32, input)
            XCTAssertNotNil(BN_mod_inverse(expected, input, order, context))
            var want = [UInt8](repeating: 0, count: 32)
            BN_bn2binpad(expected, &want, 32)
            XCTAssertEqual(want, bytes.withUnsafeMutableBufferPointer { buffer in
                inverse.write(bigEndian: buffer.baseAddress!)
                return Array(buffer)
            })
        }
        XCTAssertNil(P256ScalarInverse.inverse(.zero))
        XCTAssertNil(P256ScalarInverse.inverse(n))
        XCTAssertNil(P256ScalarInverse.inverse(Limbs(a0: .max, a1: .max, a2: .max, a3: .max)))
    }

    func testES256LoadsPKCS8DERAndRefusesOtherKeys() throws {
        // The PEM body of a PKCS#8 key is its DER, the form of Apple's .p8 files' payload.
        let pemText = String(decoding: Self.testLeafKey, as: UTF8.self)
        XCTAssertTrue(pemText.hasPrefix("-----BEGIN PRIVATE KEY-----"))
        let body = pemText.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        let der = try XCTUnwrap(Data(base64Encoded: body))
        let fromDER = try ES256.PrivateKey(pkcs8DER: der)
        let publicKey = try ES256.PublicKey(certificate: X509Certificate(der: Self.testLeaf))
        XCTAssertTrue(ES256.isValidSignature(try ES256.sign(message: Data("m".utf8), key: fromDER), of: Data("m".utf8), by: publicKey))
        XCTAssertNoThrow(try ES256.PrivateKey.load(der))
        XCTAssertNoThrow(try ES256.PrivateKey.load(Self.testLeafKey))

        XCTAssertThrowsError(try ES256.PrivateKey(pem: Data("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n".utf8)))
        XCTAssertThrowsError(try ES256.PrivateKey(pem: Data("-----BEGIN ENCRYPTED PRIVATE KEY-----\nAAAA\n-----END ENCRYPTED PRIVATE KEY-----\n".utf8))) { error in
            XCTAssertEqual(error as? ES256Error, .encryptedPrivateKey)
        }
        XCTAssertThrowsError(try ES256.PrivateKey(pem: Self.testLeaf)) { error in
            XCTAssertEqual(error as? ES256Error, .notAPrivateKey(reason: "no PEM block"))
        }
        XCTAssertThrowsError(try ES256.PublicKey(certificate: X509Certificate(der: Self.testRoot))) { error in
            XCTAssertEqual(error as? ES256Error, .notP256(found: "an EC key on secp384r1"))
        }
    }

    func testCertificateParsingIsStrict() throws {
        XCTAssertThrowsError(try X509Certificate(der: Self.testLeaf + Data([0]))) { error in
            XCTAssertEqual(error as? CertificateParseError, .trailingBytes(count: 1))
        }
        XCTAssertThrowsError(try X509Certificate(der: Data()))
        let certificate = try X509Certificate(der: Self.testIntermediate)
        XCTAssertEqual(certificate.notBefore, Self.date("2020-01-01T00:00:00Z"))
        XCTAssertEqual(certificate.notAfter, Self.date("2049-12-31T23:59:59Z"))
        XCTAssertTrue(certificate.isValid(at: Self.date("2049-12-31T23:59:59Z")))
        XCTAssertFalse(certificate.isValid(at: Self.date("2050-01-01T00:00:00Z")))
        XCTAssertFalse(certificate.hasExtension(oid: "not an oid"))
    }

    // MARK: Cost

    /// Prints the median cost of a full chain check against a cached verify;
    /// the figures are for the record, the assertion only guards the cache's
    /// reason to exist.
    func testChainCheckCostsFarMoreThanCachedVerify() throws {
        let runs = 101
        func median(_ body: () throws -> Void) rethrows -> Double {
            var samples: [UInt64] = []
            for _ in 0..<runs {
                let start = DispatchTime.now().uptimeNanoseconds
                try body()
                samples.append(DispatchTime.now().uptimeNanoseconds - start)
            }
            return Double(samples.sorted()[runs / 2]) / 1000
        }
        let date = Self.date("2026-03-01T12:00:00Z")
        let jws = try signer.sign(payload: Self.payload())
        let testChain = [Self.testLeaf, Self.testIntermediate, Self.testRoot]
        let apple = SignedDataVerifier(roots: .appleDefault)
        let appleChain = [Self.appleLeaf, Self.appleIntermediate]
        let publicKey = try ES256.PublicKey(certificate: X509Certificate(der: Self.testLeaf))
        let parts = jws.split(separator: ".")
        let signingInput = Data("\(parts[0]).\(parts[1])".utf8)
        let signature = try XCTUnwrap(Base64URL.decode(parts[2]))

        _ = try verifier.verify(jws, field: "warm-up")
        let chainCheck = try median {
            verifier.clearCache()
            _ = try verifier.verifyChain(testChain, at: date, field: "measure")
        }
        let appleChainCheck = try median {
            apple.clearCache()
            _ = try apple.verifyChain(appleChain, at: date, field: "measure")
        }
        let uncachedVerify = try median {
            verifier.clearCache()
            _ = try verifier.verify(jws, field: "measure")
        }
        _ = try verifier.verify(jws, field: "warm-up")
        let cachedVerify = try median { _ = try verifier.verify(jws, field: "measure") }
        let rawVerify = median { XCTAssertTrue(ES256.isValidSignature(signature, of: signingInput, by: publicKey)) }

        print(String(format: "verification cost, median of %d runs (µs): chain check test CA %.0f, chain check Apple %.0f, "
                     + "verify uncached %.0f, verify cached %.0f, bare P-256 verify %.0f",
                     runs, chainCheck, appleChainCheck, uncachedVerify, cachedVerify, rawVerify))
        XCTAssertLessThan(cachedVerify, uncachedVerify)
    }
}

extension Store {
    typealias ChainRow = (hash: Data, roots: Data, lengths: String, subjects: String, seal: Data)

    func chainRowsForTesting() throws -> [ChainRow] {
        try db.rows("SELECT chain_hash, roots_hash, entry_lengths, subjects, seal FROM verified_chains ORDER BY checked_ms") {
            ($0.data(0), $0.data(1), $0.string(2), $0.string(3), $0.isNull(4) ? Data() : $0.data(4))
        }
    }

    /// What an attacker with write access to the store does: a row valid forever.
    func plantChainForTesting(hash: Data, roots: Data, lengths: String, subjects: String, seal: Data) throws {
        try write {
            try db.run("""
                INSERT INTO verified_chains (chain_hash, roots_hash, entry_lengths, subjects, valid_from_s, valid_until_s, checked_ms, seal)
                VALUES (?, ?, ?, ?, 0, 253402300799, 0, ?)
                ON CONFLICT (chain_hash, roots_hash) DO UPDATE SET entry_lengths = excluded.entry_lengths, subjects = excluded.subjects,
                    valid_from_s = 0, valid_until_s = 253402300799, seal = excluded.seal
                """, [hash, roots, lengths, subjects, seal])
        }
    }
}
