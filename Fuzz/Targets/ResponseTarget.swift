import Foundation

/// What the App Store Server API client makes of an answer: the helper's response frame
/// (status, header lines, body) as `HTTPHelperWire.response` reads it, then each call of
/// `AppStoreServerAPIClient` and `VerifyReceiptClient` answered with that response on
/// every attempt: the verdict (429 and Retry-After, Apple's error codes, 5xx), the JSON of
/// each endpoint's answer, and the messages errors make of it.
///
/// The input is either a response frame as the helper sends it, or, readable for seeds:
/// `STATUS\nName: value\n...\n\nBODY`. The first byte of a frame picks the call.
enum ResponseTarget {
    nonisolated(unsafe) static var response: Result<HTTPResponse, HTTPClient.TransportProblem> = .failure(.timedOut)

    static let endpoints = AppStoreEndpoints(serverAPI: URL(string: "https://api.invalid")!,
                                             serverAPISandbox: URL(string: "https://sandbox.invalid")!,
                                             verifyReceipt: URL(string: "https://buy.invalid/verifyReceipt")!,
                                             verifyReceiptSandbox: URL(string: "https://sandbox.invalid/verifyReceipt")!)
    static let policy = HTTPPolicy(timeout: 1, maxAttempts: 2, initialBackoff: 0, maxBackoff: 0, maxRetryAfter: 60, jitter: 0)

    /// Signed with the TEST ONLY CA's leaf key (run.sh embeds it): tokens are made, never checked.
    static let api: AppStoreServerAPIClient = {
        do {
            let key = try AppStoreAPIKey(keyId: "FUZZKEY001", issuerId: "fuzz", bundleId: "com.example.subdesk.demo",
                                         privateKey: ES256.PrivateKey(pem: FuzzFixtures.der(EmbeddedTestCA.leafKeyPEM)))
            let client = AppStoreServerAPIClient(key: key, endpoints: endpoints, policy: policy)
            answer(client.http)
            return client
        } catch { fatalError("fuzz key: \(error)") }
    }()

    static let receipts: VerifyReceiptClient = {
        let client = VerifyReceiptClient(endpoints: endpoints, policy: policy, sharedSecret: "0123456789abcdef")
        answer(client.http)
        return client
    }()

    /// Every attempt of `http` gets the input's response, and no wait is made.
    static func answer(_ http: HTTPClient) {
        http.sleep = { _ in }
        http.exchange = { _ in response }
    }

    /// The readable form: a status line of digits, header lines, a blank line, the body.
    static func readable(_ input: Data) -> HTTPResponse? {
        let bytes = [UInt8](input)
        let head: ArraySlice<UInt8>, body: ArraySlice<UInt8>
        if let end = (0..<max(0, bytes.count - 1)).first(where: { bytes[$0] == 10 && bytes[$0 + 1] == 10 }) {
            head = bytes[..<end]
            body = bytes[(end + 2)...]
        } else {
            head = bytes[...]
            body = []
        }
        let lines = String(decoding: head, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        guard let first = lines.first, let status = Int(first.trimmingCharacters(in: .whitespaces)) else { return nil }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return HTTPResponse(status: status, headers: headers, body: Data(body))
    }

    static func run(_ input: Data) {
        let selector: UInt8
        if let parsed = HTTPHelperWire.response([UInt8](input)) {
            response = parsed.outcome
            selector = UInt8(truncatingIfNeeded: parsed.id)
        } else if let readable = readable(input) {
            response = .success(readable)
            selector = UInt8(truncatingIfNeeded: input.count)
        } else {
            return
        }
        // Each call's handling, and the words its error makes.
        func call(_ body: () throws -> Void) {
            do { try body() } catch { _ = "\(error)" }
        }
        let id = "2000000400000901"
        switch selector % 12 {
        case 0: call { _ = try api.subscriptionStatuses(transactionId: id) }
        case 1: call { _ = try api.transactionHistory(transactionId: id, environment: .production, pageLimit: 3) }
        case 2: call {
            _ = try api.notificationHistory(.init(start: 0, end: 1_780_272_000_000, onlyFailures: false),
                                            environment: .production, paginationToken: nil)
        }
        case 3: call { _ = try api.refundHistory(transactionId: id, environment: .sandbox, pageLimit: 3) }
        case 4: call { _ = try api.transactionInfo(transactionId: id, environment: .production) }
        case 5: call { _ = try api.appTransactionInfo(id: id) }
        case 6: call { _ = try api.lookUpOrder("MTN9T4BRB9") }
        case 7: call { _ = try api.requestTestNotification(environment: .production) }
        case 8: call { _ = try api.testNotificationStatus(token: "fuzz-token", environment: .production) }
        case 9: call { _ = try api.massExtensionStatus(productId: "p", requestIdentifier: "r", environment: .production) }
        case 10: call {
            _ = try api.extendRenewalDate(originalTransactionId: id, days: 7, reasonCode: 1, requestIdentifier: "r",
                                          environment: .production)
        }
        default: call { _ = try receipts.verify(receipt: "dGVzdA==") }
        }
        // The verdict alone, at a fixed moment, as every caller's first step.
        if case .success(let r) = response {
            let request = HTTPRequest(method: "GET", url: endpoints.serverAPI)
            _ = HTTPClient.standardVerdict(request, r, attempt: 1, now: Date(timeIntervalSince1970: 1_780_272_000))
            _ = HTTPClient.retryAfter(r.header("Retry-After"))
        }
    }
}
