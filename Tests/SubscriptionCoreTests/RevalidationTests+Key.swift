import Foundation
import XCTest
@testable import SubscriptionCore

/// The in-app purchase key, its token, secret files, and the HTTP policy's arithmetic.
extension RevalidationTests {
    var directory: URL { fixture.directory }

    func copyOfKey(mode: Int) throws -> String {
        let path = directory.appendingPathComponent("AuthKey.p8").path
        try? FileManager.default.removeItem(atPath: path)
        try FileManager.default.copyItem(atPath: RevalidationKeys.privateKeyFile, toPath: path)
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
        return path
    }

    func testAKeyFileOthersCanReadDrawsAWarning() throws {
        var warnings: [String] = []
        let open = try copyOfKey(mode: 0o644)
        _ = try AppStoreAPIKey.load(file: open, keyId: "K", issuerId: "I", bundleId: "b", warn: { warnings.append($0) })
        XCTAssertEqual(warnings, ["API key file \(open) is readable by others (mode 644); chmod 600 it"])

        warnings.removeAll()
        let closed = try copyOfKey(mode: 0o600)
        _ = try AppStoreAPIKey.load(file: closed, keyId: "K", issuerId: "I", bundleId: "b", warn: { warnings.append($0) })
        XCTAssertEqual(warnings, [], "a private key file is not warned about")
    }

    /// A key named through a link is judged by the file the link leads to: a private key
    /// behind a link (mode 777 of its own) draws no warning, a readable one does; a link
    /// owned by another user (who could point it elsewhere) is named. Run as root, the
    /// link is handed to another user with lchown.
    func testAKeyFileBehindALinkIsJudgedByWhatItLeadsTo() throws {
        let key = try copyOfKey(mode: 0o600)
        let link = directory.appendingPathComponent("key-link.p8").path
        try? FileManager.default.removeItem(atPath: link)
        XCTAssertEqual(symlink(key, link), 0)
        var warnings: [String] = []
        _ = try AppStoreAPIKey.load(file: link, keyId: "K", issuerId: "I", bundleId: "b", warn: { warnings.append($0) })
        XCTAssertEqual(warnings, [], "the link's own mode is not the key's")

        XCTAssertEqual(chmod(key, 0o644), 0)
        _ = try AppStoreAPIKey.load(file: link, keyId: "K", issuerId: "I", bundleId: "b", warn: { warnings.append($0) })
        XCTAssertEqual(warnings, ["API key file \(link) is readable by others (mode 644); chmod 600 it"])

        XCTAssertEqual(chmod(key, 0o600), 0)
        warnings.removeAll()
        guard geteuid() == 0 else { return }
        XCTAssertEqual(lchown(link, 4242, 4242), 0)
        _ = try AppStoreAPIKey.load(file: link, keyId: "K", issuerId: "I", bundleId: "b", warn: { warnings.append($0) })
        XCTAssertEqual(warnings, ["API key file \(link) is a link owned by uid 4242, who can point it at another file; "
                                  + "name the file itself, or a link you own"])
    }

    /// A password file loses only its final newline: spaces and a second line are the
    /// password's, for the caller to take or refuse.
    func testALineFileLosesOnlyItsFinalNewline() throws {
        let path = directory.appendingPathComponent("password").path
        for (written, read) in [(" pass word \n", " pass word "), ("pw\r\n", "pw"), ("pw", "pw"), ("pw\n\n", "pw\n")] {
            try? FileManager.default.removeItem(atPath: path)
            _ = FileManager.default.createFile(atPath: path, contents: Data(written.utf8), attributes: [.posixPermissions: 0o600])
            XCTAssertEqual(try SecretFile.readLine(path, what: "password", warn: { _ in }), read, written.debugDescription)
        }
    }

    func testTheSharedSecretFileIsReadTrimmedAndWarnedAbout() throws {
        let path = directory.appendingPathComponent("shared-secret").path
        _ = FileManager.default.createFile(atPath: path, contents: Data("abc123\n".utf8), attributes: [.posixPermissions: 0o640])
        var warnings: [String] = []
        XCTAssertEqual(try SecretFile.readText(path, what: "shared secret", warn: { warnings.append($0) }), "abc123")
        XCTAssertEqual(warnings.count, 1)
        XCTAssertTrue(warnings[0].contains("mode 640"))
        XCTAssertFalse(warnings[0].contains("abc123"), "the secret itself is never echoed")
    }

    func testAKeyFileThatIsNotAKeyIsNamedWithoutEchoingIt() throws {
        let path = directory.appendingPathComponent("AuthKey.p8").path
        _ = FileManager.default.createFile(atPath: path, contents: Data("-----BEGIN PRIVATE KEY-----\nTOPSECRETBYTES\n-----END PRIVATE KEY-----\n".utf8),
                                       attributes: [.posixPermissions: 0o600])
        XCTAssertThrowsError(try AppStoreAPIKey.load(file: path, keyId: "K", issuerId: "I", bundleId: "b", warn: { _ in })) { error in
            XCTAssertTrue("\(error)".hasPrefix("revalidation is not configured: API key file \(path): "), "\(error)")
            XCTAssertFalse("\(error)".contains("TOPSECRETBYTES"))
        }
        XCTAssertThrowsError(try AppStoreAPIKey.load(file: path + ".missing", keyId: "K", issuerId: "I", bundleId: "b", warn: { _ in })) { error in
            XCTAssertEqual("\(error)", "API key file \(path).missing does not exist")
        }
    }

    func testEmptyIdsAreRefused() throws {
        let key = try ES256.PrivateKey.load(Data(contentsOf: URL(fileURLWithPath: RevalidationKeys.privateKeyFile)))
        XCTAssertThrowsError(try AppStoreAPIKey(keyId: " ", issuerId: "I", bundleId: "b", privateKey: key)) { error in
            XCTAssertEqual("\(error)", "revalidation is not configured: api_key_id is empty")
        }
    }

    func testTokensNeverLiveLongerThanAnHour() throws {
        let key = try AppStoreAPIKey.load(file: RevalidationKeys.privateKeyFile, keyId: "K", issuerId: "I", bundleId: "b", warn: { _ in })
        let now = Date(timeIntervalSince1970: 1_780_272_000)
        let token = try key.token(now: now, lifetime: 86_400)
        let claims = try JSONSerialization.jsonObject(with: XCTUnwrap(Base64URL.decode(token.split(separator: ".")[1]))) as? [String: Any]
        XCTAssertEqual((claims?["iat"] as? NSNumber)?.int64Value, 1_780_272_000)
        XCTAssertEqual((claims?["exp"] as? NSNumber)?.int64Value, 1_780_272_000 + 3600)
    }

    func testRetryAfterIsReadAsApplesMillisecondMomentSecondsOrAnHTTPDate() {
        let now = Date(timeIntervalSince1970: 1_780_272_000)
        XCTAssertEqual(HTTPClient.retryAfter("7", now: now), 7)
        XCTAssertEqual(HTTPClient.retryAfter("Mon, 01 Jun 2026 00:00:30 GMT", now: now), 30)
        // Apple's App Store Server API form: the moment the limit lifts, in milliseconds.
        XCTAssertEqual(HTTPClient.retryAfter("1780272012500", now: now), 12.5)
        XCTAssertEqual(HTTPClient.retryAfter("1780271000000", now: now), 0, "a moment already past is no wait")
        XCTAssertNil(HTTPClient.retryAfter("soon", now: now))
        XCTAssertNil(HTTPClient.retryAfter(nil, now: now))
    }

    /// However large the number a server sends, the wait is bounded and the verdict says
    /// "far in the future" rather than trap converting it to milliseconds.
    func testARetryAfterPastAnyDateIsFarInTheFutureNotATrap() throws {
        let now = Date(timeIntervalSince1970: 1_780_272_000)
        let request = HTTPRequest(method: "GET", url: try XCTUnwrap(URL(string: "https://example.invalid/x")))
        for value in ["1e300", "99999999999999999999999", "9300000000000000000", "99999999999", "Fri, 31 Dec 9999 23:59:59 GMT"] {
            XCTAssertEqual(HTTPClient.retryAfter(value, now: now), HTTPClient.farFutureWait, value)
            let response = HTTPResponse(status: 429, headers: ["retry-after": value], body: Data())
            guard case .retry(_, let failure) = HTTPClient.standardVerdict(request, response, attempt: 1, now: now) else {
                return XCTFail("a 429 is a retry")
            }
            XCTAssertEqual(failure.rateLimitResume, .farFuture, value)
            XCTAssertNil(failure.rateLimitResumeAt, value)
            XCTAssertTrue(failure.description.hasSuffix("Apple asks to wait until far in the future: not waited out"), failure.description)
        }
        XCTAssertNil(HTTPClient.retryAfter("nan", now: now))
        XCTAssertEqual(HTTPClient.retryAfter("3600", now: now), 3600, "an hour is still a date")
    }

    func testBackoffDoublesAndIsBounded() {
        let policy = HTTPPolicy(initialBackoff: 0.5, maxBackoff: 3, jitter: 0)
        XCTAssertEqual((1...5).map { policy.backoff(afterAttempt: $0) }, [0.5, 1, 2, 3, 3])
    }

    func testConfiguredURLsMustBeHTTP() {
        XCTAssertThrowsError(try AppStoreEndpoints.url("ftp://example.com", setting: "server_api_url")) { error in
            XCTAssertEqual("\(error)", "revalidation is not configured: server_api_url: ftp://example.com is not an http(s) URL with a host")
        }
        XCTAssertEqual(try AppStoreEndpoints.url("https://api.storekit.apple.com", setting: "x"), AppStoreEndpoints.apple.serverAPI)
        // The hosts before 2026-05-05 stay configurable.
        XCTAssertEqual(try AppStoreEndpoints.url("https://api.storekit.itunes.apple.com", setting: "x"),
                       AppStoreEndpoints.appleBefore2026.serverAPI)
    }

    /// Apple's recommended hosts by default; Xcode and LocalTesting purchases are never
    /// sent anywhere, least of all to the production host.
    func testTheServerAPIHostsAndTheEnvironmentsThatHaveNone() throws {
        XCTAssertEqual(AppStoreEndpoints.apple.serverAPI.host, "api.storekit.apple.com")
        XCTAssertEqual(AppStoreEndpoints.apple.serverAPISandbox.host, "api.storekit-sandbox.apple.com")
        XCTAssertEqual(try AppStoreEndpoints.apple.serverAPI(for: .sandbox).host, "api.storekit-sandbox.apple.com")
        XCTAssertEqual(AppStoreEndpoints.apple.hosts, ["api.storekit.apple.com", "api.storekit-sandbox.apple.com",
                                                       "buy.itunes.apple.com", "sandbox.itunes.apple.com"])
        for environment in [AppStoreEnvironment.xcode, .localTesting, AppStoreEnvironment(rawValue: "Staging")] {
            XCTAssertThrowsError(try AppStoreEndpoints.apple.serverAPI(for: environment)) { error in
                XCTAssertTrue("\(error)".contains("knows nothing of the \(environment.rawValue) environment"), "\(error)")
            }
        }
    }
}
