import Foundation
import XCTest
import FakeApple
@testable import SubscriptionCore

/// The Retention Messaging client against the fake Apple: each error the API answers with
/// arrives as its typed value (`RetentionAPIError`), with the HTTP status its code implies,
/// and the fake's table and the client's agree code for code.
final class RetentionAPIErrorTests: XCTestCase {
    var server: FakeAppleServer!
    var fake: FakeRetentionMessaging!

    override func setUpWithError() throws {
        server = try FakeAppleServer()
        fake = FakeRetentionMessaging()
        fake.install(on: server)
    }

    override func tearDown() {
        server.stop()
    }

    func client(_ environment: AppStoreEnvironment = .production) throws -> RetentionMessagingClient {
        let pacer = RetentionPacer()
        pacer.sleep = { _ in }
        let key = try AppStoreAPIKey.load(file: RevalidationKeys.privateKeyFile, keyId: RevalidationFixture.keyId,
                                          issuerId: RevalidationFixture.issuerId, bundleId: "com.example.subdesk.demo", warn: { _ in })
        let base = server.baseURL
        let endpoints = AppStoreEndpoints(serverAPI: base.appendingPathComponent("prod"), serverAPISandbox: base.appendingPathComponent("sandbox"),
                                          verifyReceipt: base, verifyReceiptSandbox: base)
        return try RetentionMessagingClient(key: key, endpoints: endpoints, environment: environment,
                                            policy: RevalidationFixture.fastHTTP, pacer: pacer)
    }

    /// What `call` threw, as the typed error and the HTTP status.
    func refusal(_ call: () throws -> Void, file: StaticString = #filePath, line: UInt = #line) -> (RetentionAPIError?, Int?) {
        do {
            try call()
            XCTFail("Apple accepted it", file: file, line: line)
            return (nil, nil)
        } catch let error as RevalidationError {
            guard case .http(_, let status, _, _, _) = error else { XCTFail("\(error)", file: file, line: line); return (nil, nil) }
            return (error.retentionError, status)
        } catch {
            XCTFail("\(error)", file: file, line: line)
            return (nil, nil)
        }
    }

    static let png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 0])
    let image = "3f1c0a52-8d4e-4b8a-9a43-0c5d2e7f1a01"
    let message = "7b2d9e14-1c3a-4f5b-8e6d-2a9c0b4f3e02"

    func testEachRefusalArrivesAsItsTypedError() throws {
        let apple = try client()
        let body = try JSONSerialization.data(withJSONObject: ["header": "Stay", "body": "Please",
                                                               "image": ["imageIdentifier": image, "altText": "a lake"]])
        try apple.uploadImage(id: image, kind: .fullSize, png: Self.png)
        try apple.uploadMessage(id: message, body: body)

        let cases: [(RetentionAPIError, Int, () throws -> Void)] = [
            (.imageAlreadyExists, 409, { try apple.uploadImage(id: self.image, kind: .fullSize, png: Self.png) }),
            (.messageAlreadyExists, 409, { try apple.uploadMessage(id: self.message, body: body) }),
            (.imageNotFound, 404, { try apple.deleteImage(id: "00000000-0000-4000-8000-000000000001") }),
            (.messageNotFound, 404, { try apple.deleteMessage(id: "00000000-0000-4000-8000-000000000002") }),
            (.imageInUse, 403, { try apple.deleteImage(id: self.image) }),
            (.messageNotApproved, 403, { try apple.setDefaultMessage(product: "app.monthly", locale: "en-US", messageId: self.message) }),
            (.messageNotFound, 404, { try apple.setDefaultMessage(product: "app.monthly", locale: "en-US",
                                                                   messageId: "00000000-0000-4000-8000-000000000003") }),
            (.defaultMessageNotFound, 404, { try apple.deleteDefaultMessage(product: "app.monthly", locale: "en-US") }),
            (.realtimeURLNotFound, 404, { try apple.deleteRealtimeURL() }),
            (.forbiddenNoPassingTest, 403, { try apple.setRealtimeURL("https://retention.example.com/realtime") }),
            (.headerTooLong, 400, { try apple.uploadMessage(id: "00000000-0000-4000-8000-000000000004",
                                                            body: try JSONSerialization.data(withJSONObject: ["header": String(repeating: "h", count: 67), "body": "b"])) }),
            (.invalidImage, 400, { try apple.uploadImage(id: "00000000-0000-4000-8000-000000000005", kind: .bulletPoint, png: Data("GIF89a".utf8)) }),
            (.performanceTestRunNotFound, 404, { _ = try apple.performanceTestResult(requestId: "00000000-0000-4000-8000-000000000006") }),
        ]
        for (expected, status, call) in cases {
            let (got, answered) = refusal(call)
            XCTAssertEqual(got, expected, "\(expected)")
            XCTAssertEqual(answered, status, "\(expected)")
            XCTAssertEqual(expected.status, status, "\(expected): the status is the code's first three digits")
        }

        // The message approved, its image still in review: Apple refuses the image, not the message.
        fake.review(message, to: "APPROVED")
        XCTAssertEqual(refusal { try apple.setDefaultMessage(product: "app.monthly", locale: "en-US", messageId: self.message) }.0, .imageNotApproved)
        fake.approveEverything()
        try apple.setDefaultMessage(product: "app.monthly", locale: "en-US", messageId: message)
        XCTAssertNil(try apple.defaultMessage(product: "app.yearly", locale: "en-US"), "DefaultMessageNotFoundError reads as none")

        // One performance test at a time; Production's URL once one passed.
        let sandbox = try client(.sandbox)
        fake.pendingReads = 1
        let started = try sandbox.startPerformanceTest(originalTransactionId: "2000000000000001")
        XCTAssertEqual(refusal { _ = try sandbox.startPerformanceTest(originalTransactionId: "2000000000000001") }.0, .existingPerformanceTestRun)
        XCTAssertEqual(try sandbox.performanceTestResult(requestId: started.requestId).verdict, .pending)
        XCTAssertEqual(try sandbox.performanceTestResult(requestId: started.requestId).verdict, .pass)
        try apple.setRealtimeURL("https://retention.example.com/realtime")
        XCTAssertEqual(fake.realtimeURL("prod"), "https://retention.example.com/realtime")

        // What the operator reads: Apple's name for it and its meaning, from the same table.
        let error = RevalidationError.http(request: "DELETE image", status: 403, apiErrorCode: 4030019, message: "x", attempts: 1)
        XCTAssertTrue(error.description.contains("error 4030019 (a message shows the image, so it cannot be deleted)"), error.description)
    }

    /// The fake's codes are Apple's as the client knows them, code for code, name for name.
    func testTheFakeAndTheClientAgreeOnEveryCode() {
        for fakeError in FakeRetentionMessaging.AppleError.allCases {
            let known = AppStoreAPIErrorCode.lookup(fakeError.rawValue)
            XCTAssertNotNil(known, "\(fakeError) \(fakeError.rawValue) is unknown to the client")
            if let typed = RetentionAPIError(rawValue: fakeError.rawValue) {
                XCTAssertEqual(typed.status, fakeError.status)
                XCTAssertEqual(String(describing: typed), String(describing: fakeError))
            }
        }
        for typed in RetentionAPIError.allCases {
            XCTAssertTrue(typed.entry.name.hasSuffix("Error"), typed.entry.name)
            XCTAssertTrue([400, 403, 404, 409].contains(typed.status), "\(typed)")
        }
    }

    /// Apple's numbers as Foundation decodes them: 0 and 1 are counts (a success rate of 0, one
    /// failure), true and false are not, nor are fractions.
    func testCountsOfZeroAndOneAreNumbersAndBooleansAreNot() throws {
        let decoded = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(#"{"zero":0,"one":1,"two":2,"yes":true,"no":false,"half":0.5}"#.utf8)) as? [String: Any])
        XCTAssertEqual(RetentionMessagingClient.integer(decoded["zero"]), 0)
        XCTAssertEqual(RetentionMessagingClient.integer(decoded["one"]), 1)
        XCTAssertEqual(RetentionMessagingClient.integer(decoded["two"]), 2)
        XCTAssertNil(RetentionMessagingClient.integer(decoded["yes"]))
        XCTAssertNil(RetentionMessagingClient.integer(decoded["no"]))
        XCTAssertNil(RetentionMessagingClient.integer(decoded["half"]))
        XCTAssertEqual(RetentionMessagingClient.integers(["TIMED_OUT": decoded["one"]!, "NO_RESPONSE": decoded["zero"]!]), ["TIMED_OUT": 1, "NO_RESPONSE": 0])
    }
}
