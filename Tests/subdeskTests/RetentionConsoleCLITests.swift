import Foundation
import FakeApple
import SubscriptionCore
import XCTest
import SubdeskTestKit

/// `subdesk retention images|messages|default|realtime-url|performance-test|coverage` through
/// the binary, against a fake Retention Messaging API that keeps what it is sent.
final class RetentionConsoleCLITests: SubdeskTestCase, RunsOnEveryEngine {
    static var engineTests: Set<String>? {
        ["testUploadsReviewDefaultsCoverageAndDeletesAreAudited", "testRealtimeURLPerEnvironmentAndThePerformanceTest"]
    }

    let imageId = "3f1c0a52-8d4e-4b8a-9a43-0c5d2e7f1a01"
    let messageId = "7b2d9e14-1c3a-4f5b-8e6d-2a9c0b4f3e02"
    static let messaging = "/prod/inApps/v1/messaging/"

    var apple: FakeAppleServer!
    var fake: FakeRetentionMessaging!

    override func setUpWithError() throws {
        try super.setUpWithError()
        apple = try FakeAppleServer()
        fake = FakeRetentionMessaging()
        fake.install(on: apple)
    }

    override func tearDownWithError() throws {
        apple.stop()
        try super.tearDownWithError()
    }

    /// A PNG's signature, IHDR (`colourType`, 8 bits) and IEND: all the console reads of one.
    func png(width: Int, height: Int, colourType: UInt8) throws -> String {
        func u32(_ n: Int) -> [UInt8] { [UInt8(n >> 24 & 0xFF), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)] }
        let ihdr = u32(13) + Array("IHDR".utf8) + u32(width) + u32(height) + [8, colourType, 0, 0, 0] + u32(0)
        let bytes = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + ihdr + u32(0) + Array("IEND".utf8) + u32(0)
        let path = dir + "/image-\(width)x\(height)-\(colourType).png"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    func retention(_ db: String, _ args: [String], timeout: Double = 5) throws -> Result {
        try run(["retention"] + args + ["--db", db, "--operator", "ana"] + (try appleArguments(apple, timeout: timeout)))
    }

    /// Runs and expects exit 0 and a JSON object on stdout.
    func retentionJSON(_ db: String, _ args: [String]) throws -> [String: Any] {
        let r = try retention(db, args + ["--json"])
        XCTAssertEqual(r.status, 0, "\(args): \(r.stderr)")
        return try XCTUnwrap(try json(r.stdout) as? [String: Any], r.stdout)
    }

    func listed(_ db: String, _ kind: String) throws -> [[String: Any]] {
        try retentionJSON(db, [kind])[kind] as? [[String: Any]] ?? []
    }

    func uploadImage(_ db: String, timeout: Double = 5) throws -> Result {
        let file = try png(width: 3840, height: 400, colourType: 2)
        return try retention(db, ["images", "upload", file, "--id", imageId, "--kind", "FULL_SIZE", "--reason", "winback art"], timeout: timeout)
    }

    func testUploadsReviewDefaultsCoverageAndDeletesAreAudited() throws {
        let db = try demoStore()
        let image = try uploadImage(db)
        XCTAssertEqual(image.status, 0, image.stderr)
        XCTAssertEqual(fake.images().map(\.state), ["PENDING"])
        XCTAssertEqual(fake.images().first?.imageSize, "FULL_SIZE")
        let uploaded = try retentionJSON(db, ["messages", "upload", "--id", messageId, "--header", "Stay a little longer",
                                              "--body", "Your plan keeps every feature.", "--image", imageId, "--alt", "A calm harbour"])
        XCTAssertNotNil(uploaded["auditId"], "\(uploaded)")
        XCTAssertEqual(fake.messages().first?.state, "PENDING")
        XCTAssertEqual((try JSONSerialization.jsonObject(with: fake.messages()[0].content) as? [String: Any])?["header"] as? String,
                       "Stay a little longer")

        let images = try listed(db, "images")
        XCTAssertEqual(images.map { $0["identifier"] as? String }, [imageId])
        XCTAssertEqual(images.first?["appleState"] as? String, "PENDING")
        XCTAssertEqual(images.first?["difference"] as? String, "same")

        let coverage = try retentionJSON(db, ["coverage"])
        let product = try XCTUnwrap((coverage["rows"] as? [[String: Any]])?.first?["product"] as? String, "\(coverage)")

        // While Apple reviews the message it cannot be a default: refused here, nothing sent.
        let early = try retention(db, ["default", "set", product, "en-US", messageId])
        XCTAssertEqual(early.status, 2, early.stderr)
        XCTAssertTrue(early.stderr.contains("PENDING"), early.stderr)
        XCTAssertTrue(apple.requests.filter { $0.path.contains("/default/") }.isEmpty)

        // An approved message that shows an image still in review cannot be one either.
        fake.review(messageId, to: "APPROVED")
        let imageInReview = try retention(db, ["default", "set", product, "en-US", messageId])
        XCTAssertEqual(imageInReview.status, 2, imageInReview.stderr)
        XCTAssertTrue(imageInReview.stderr.contains("image \(imageId), which is not APPROVED"), imageInReview.stderr)
        XCTAssertTrue(apple.requests.filter { $0.path.contains("/default/") }.isEmpty)

        fake.approveEverything()
        let messages = try listed(db, "messages")
        XCTAssertEqual(messages.first?["appleState"] as? String, "APPROVED")
        XCTAssertEqual(messages.first?["storedState"] as? String, "PENDING", "the state kept until this read")
        XCTAssertEqual(try listed(db, "messages").first?["storedState"] as? String, "APPROVED", "the read noted Apple's state in the store")
        let set = try retention(db, ["default", "set", product, "en-US", messageId, "--reason", "cancel sheet"])
        XCTAssertEqual(set.status, 0, set.stderr)
        XCTAssertEqual(try retentionJSON(db, ["default", product, "en-US"])["messageIdentifier"] as? String, messageId)
        let covered = try retentionJSON(db, ["coverage"])["rows"] as? [[String: Any]] ?? []
        let row = try XCTUnwrap(covered.first { $0["product"] as? String == product && $0["locale"] as? String == "en-US" }, "\(covered)")
        XCTAssertEqual(row["layer"] as? String, "API default message")
        XCTAssertEqual(row["messageIdentifier"] as? String, messageId)

        XCTAssertEqual(try retention(db, ["default", "delete", product, "en-US"]).status, 0)
        XCTAssertTrue(try retentionJSON(db, ["default", product, "en-US"])["messageIdentifier"] is NSNull)
        XCTAssertEqual(try retentionJSON(db, ["messages", "delete", messageId])["done"] as? String, "message \(messageId) deleted")
        XCTAssertEqual(try retention(db, ["images", "delete", imageId]).status, 0)
        XCTAssertTrue(fake.images().isEmpty && fake.messages().isEmpty)
        XCTAssertTrue(try listed(db, "images").isEmpty, "nothing at Apple, nothing kept")

        let written = try audit(db).filter { ($0["action"] as? String)?.hasPrefix("retention_") == true }
        XCTAssertEqual(written.compactMap { $0["action"] as? String }.sorted(),
                       ["retention_default", "retention_default", "retention_delete", "retention_delete", "retention_upload", "retention_upload"])
        XCTAssertTrue(written.allSatisfy { $0["operator"] as? String == "ana" }, "\(written)")
        XCTAssertEqual(fake.uploadCount(imageId), 1)
        XCTAssertEqual(fake.uploadCount(messageId), 1)
    }

    func testRealtimeURLPerEnvironmentAndThePerformanceTest() throws {
        let db = try demoStore()
        let url = "https://retention.example.com/realtime"
        XCTAssertEqual(try retention(db, ["realtime-url", "set", url, "--environment", "Sandbox"]).status, 0)
        XCTAssertEqual(fake.realtimeURL("sandbox"), url)
        XCTAssertNil(fake.realtimeURL("prod"))
        XCTAssertEqual(try retentionJSON(db, ["realtime-url", "--environment", "Sandbox"])["realtimeURL"] as? String, url)
        XCTAssertTrue(try retentionJSON(db, ["realtime-url"])["realtimeURL"] is NSNull, "Production has none")

        // PENDING on the first read, then PASS; the sandbox's pace puts the second read 10 s on.
        let passed = try retentionJSON(db, ["performance-test", "--transaction", "2000000000000001", "--wait", "30"])
        XCTAssertEqual(passed["result"] as? String, "PASS", "\(passed)")
        XCTAssertEqual(passed["target"] as? String, url)
        XCTAssertEqual((passed["responseTimes"] as? [String: Int])?["p99"], 400)
        XCTAssertEqual((passed["config"] as? [String: Int])?["successRateThreshold"], 95)
        XCTAssertEqual(apple.requests.filter { $0.path.hasSuffix("/performanceTest") }.count, 1)
        fake.pendingReads = 0
        fake.verdict = "FAIL"
        let failed = try retention(db, ["performance-test", "--transaction", "2000000000000001"])
        XCTAssertEqual(failed.status, 1, failed.stderr)
        XCTAssertTrue(failed.stdout.contains("result FAIL"), failed.stdout)

        XCTAssertEqual(try retention(db, ["realtime-url", "delete", "--environment", "Sandbox"]).status, 0)
        XCTAssertNil(fake.realtimeURL("sandbox"))
        let written = try audit(db).compactMap { $0["action"] as? String }.filter { $0.hasPrefix("retention_") }.sorted()
        XCTAssertEqual(written, ["retention_performance_test", "retention_performance_test", "retention_realtime_url", "retention_realtime_url"])
    }

    /// An upload Apple stored but did not answer in time is found in Apple's list and not sent again.
    func testATimedOutUploadIsFoundInTheListAndNotSentAgain() throws {
        let db = try demoStoreFile()
        fake.stallNextUpload(for: 4)
        let r = try uploadImage(db, timeout: 1)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("not uploaded again"), r.stdout)
        XCTAssertEqual(fake.uploadCount(imageId), 1, "one PUT of the image")
        XCTAssertEqual(apple.requests("GET", Self.messaging + "image/list").count, 1)
        XCTAssertEqual(fake.images().count, 1)
        XCTAssertEqual(try audit(db).filter { $0["action"] as? String == "retention_upload" }.count, 1)
        // Sent again by hand, the same content is answered 409 by Apple and not uploaded twice there.
        let again = try uploadImage(db)
        XCTAssertEqual(again.status, 1, again.stderr)
        XCTAssertEqual(fake.images().count, 1)
    }

    /// An upload lost before Apple stored it is not in Apple's list, so it is sent once more, and kept once.
    func testALostUploadIsSentAgainOnlyBecauseTheListLacksIt() throws {
        let db = try demoStoreFile()
        fake.stallNextUpload(for: 4, stores: false)
        let r = try retention(db, ["messages", "upload", "--id", messageId, "--header", "Before you go", "--body", "Half price for 3 months."],
                              timeout: 1)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("uploaded, PENDING Apple's review"), r.stdout)
        XCTAssertEqual(fake.uploadCount(messageId), 2, "sent again after the list was read")
        XCTAssertEqual(apple.requests("GET", Self.messaging + "message/list").count, 1)
        XCTAssertEqual(fake.messages().map(\.identifier), [messageId])
        XCTAssertEqual(try audit(db).filter { $0["action"] as? String == "retention_upload" }.count, 1)
    }

    /// A 429 is waited out until the moment Apple's Retry-After (UNIX milliseconds) names, then retried.
    func testA429IsWaitedOutAsAppleAsks() throws {
        let db = try demoStoreFile()
        fake.rateLimit(next: 1, retryAfterMs: 1500)
        let started = Date()
        let r = try retention(db, ["images", "--json"])
        let took = Date().timeIntervalSince(started)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains("as Apple asks"), r.stderr)
        XCTAssertEqual(fake.rateLimited, 1)
        XCTAssertEqual(apple.requests("GET", Self.messaging + "image/list").count, 2)
        XCTAssertGreaterThan(took, 1.0)
        XCTAssertLessThan(took, 15)
        XCTAssertNotNil(try json(r.stdout) as? [String: Any], r.stdout)
    }

    /// What Apple would refuse is refused before any call: exit 2, and Apple hears nothing.
    func testContentAppleWouldRefuseIsNeverSent() throws {
        let db = try demoStoreFile()
        // 34 emoji are 34 characters but 68 UTF-16 code units, more than the header's 66.
        let long = try retention(db, ["messages", "upload", "--id", messageId, "--header", String(repeating: "😀", count: 34), "--body", "b", "--json"])
        XCTAssertEqual(long.status, 2, long.stderr)
        XCTAssertTrue(long.stderr.contains("header: 68 characters (UTF-16 code units)"), long.stderr)
        XCTAssertNotNil((try json(long.stdout) as? [String: Any])?["error"], long.stdout)
        let rgba = try png(width: 3840, height: 400, colourType: 6)
        let alpha = try retention(db, ["images", "upload", rgba, "--id", imageId, "--kind", "FULL_SIZE"])
        XCTAssertEqual(alpha.status, 2, alpha.stderr)
        XCTAssertTrue(alpha.stderr.contains("alpha channel"), alpha.stderr)
        XCTAssertTrue(apple.requests.isEmpty, "\(apple.requests.map { "\($0.method) \($0.path)" })")
        XCTAssertEqual(fake.uploadCount(imageId) + fake.uploadCount(messageId), 0)
        XCTAssertTrue(try audit(db).filter { ($0["action"] as? String)?.hasPrefix("retention_") == true }.isEmpty)
    }
}
