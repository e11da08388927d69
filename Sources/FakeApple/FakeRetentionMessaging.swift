import Foundation

/// Apple's Retention Messaging API (`/inApps/v1/messaging/...`) as a stateful fake behind a
/// `FakeAppleServer`, for the tests: images and messages kept in memory per environment (the
/// server's first path segment, `prod` or `sandbox`), each PENDING until the test approves or
/// rejects it, as Apple's review would; an identifier uploaded again answered 409; default
/// messages (403 unless the message is APPROVED, 404 when none); a real-time URL per
/// environment; the performance test PENDING for a set number of reads, then PASS or FAIL
/// with Apple's example figures, or run for real against the real-time URL
/// (`FakeRetentionPerformanceTest`). Scripted trouble: 429s with a Retry-After a moment away
/// (UNIX time in milliseconds, as Apple sends it), and an upload that is stored and then not
/// answered within the client's timeout, or lost before it is stored.
public final class FakeRetentionMessaging: @unchecked Sendable {
    public struct Item: Equatable, Sendable {
        public var identifier: String
        public var state: String
        /// An image's `imageSize`; nil for a message.
        public var imageSize: String?
        /// What was uploaded: the PNG, or the message's JSON body.
        public var content: Data
    }

    static let prefix = "/inApps/v1/messaging/"

    private let lock = NSLock()
    private var images: [String: [Item]] = [:]
    private var messages: [String: [Item]] = [:]
    private var defaults: [String: String] = [:]
    private var realtimeURLs: [String: String] = [:]
    private var uploads: [String: Int] = [:]
    private var tests: [String: Test] = [:]
    /// A performance test: scripted (PENDING for some reads, then `verdict`), or run for real
    /// (PENDING until its requests are answered, then `result`, what they show).
    private struct Test {
        var pendingReads: Int
        var target: String?
        var real = false
        var result: [String: Any]?
    }
    private var stalls: [(seconds: TimeInterval, stores: Bool)] = []
    private var limits: [(count: Int, retryAfterMs: Int64)] = []
    private var limited = 0
    /// The environments a performance test has passed in.
    private var passed: Set<String> = []

    /// How many result reads a performance test stays PENDING.
    public var pendingReads = 1
    /// What a performance test ends with: PASS or FAIL.
    public var verdict = "PASS"
    /// Set, a performance test sends its requests to the environment's real-time URL and
    /// its result is what they show (`pendingReads` and `verdict` are then not used).
    public var performanceTest: FakeRetentionPerformanceTest?

    public init() {}

    /// Answers every request `server` has no route for.
    public func install(on server: FakeAppleServer) {
        server.routeEverythingElse { [self] request in handle(request) }
    }

    // MARK: scripting

    /// Moves every PENDING image and message to APPROVED, as Apple's review would.
    public func approveEverything() { review(to: "APPROVED") { _ in true } }

    /// Moves one identifier's review state (images and messages alike).
    public func review(_ identifier: String, to state: String) { review(to: state) { $0 == identifier.lowercased() } }

    private func review(to state: String, _ matching: (String) -> Bool) {
        lock.lock()
        defer { lock.unlock() }
        for environment in images.keys { images[environment] = images[environment]!.map { var i = $0; if matching(i.identifier) { i.state = state }; return i } }
        for environment in messages.keys { messages[environment] = messages[environment]!.map { var i = $0; if matching(i.identifier) { i.state = state }; return i } }
    }

    /// The next upload (image or message) is answered only after `seconds`: stored first, or
    /// (`stores` false) lost, as a request that never reached Apple's store.
    public func stallNextUpload(for seconds: TimeInterval, stores: Bool = true) {
        lock.lock()
        stalls.append((seconds, stores))
        lock.unlock()
    }

    /// The next `count` requests are answered 429 with a Retry-After `milliseconds` from when each is answered.
    public func rateLimit(next count: Int, retryAfterMs milliseconds: Int64) {
        lock.lock()
        limits.append((count, milliseconds))
        lock.unlock()
    }

    // MARK: what happened

    /// How many uploads (PUTs) of `identifier` arrived, answered or not.
    public func uploadCount(_ identifier: String) -> Int {
        lock.lock()
        defer { lock.unlock() }
        return uploads[identifier.lowercased(), default: 0]
    }

    /// How many requests were answered 429.
    public var rateLimited: Int {
        lock.lock()
        defer { lock.unlock() }
        return limited
    }

    public func images(_ environment: String = "prod") -> [Item] {
        lock.lock()
        defer { lock.unlock() }
        return images[environment] ?? []
    }

    public func messages(_ environment: String = "prod") -> [Item] {
        lock.lock()
        defer { lock.unlock() }
        return messages[environment] ?? []
    }

    public func realtimeURL(_ environment: String) -> String? {
        lock.lock()
        defer { lock.unlock() }
        return realtimeURLs[environment]
    }

    // MARK: the API

    /// Apple's error codes for the Retention Messaging API. The names are those of the API's
    /// "Error codes" page; the numbers are those Apple's App Store Server Library gives each
    /// of them (the page's own entries name the objects without listing the values), and
    /// the HTTP status is the code's first three digits, as with every App Store Server API
    /// error. Apple's `errorMessage` texts for these are not in what could be read: the
    /// messages here are this fake's own words, except the two Apple's example payloads
    /// show (rate limit, general internal error).
    public enum AppleError: Int, CaseIterable, Sendable {
        case generalBadRequest = 4000000
        case invalidProductId = 4000023
        case invalidImage = 4000161
        case headerTooLong = 4000162
        case bodyTooLong = 4000163
        case invalidLocale = 4000164
        case altTextTooLong = 4000175
        case invalidPerformanceTestRequest = 4000211
        case invalidRequestId = 4000212
        case existingPerformanceTestRun = 4000213
        case badRequestRealtimeURL = 4000215
        case badRequestImageSize = 4000216
        case tooManyBulletPoints = 4000218
        case bulletPointTextTooLong = 4000219
        case messageNotApproved = 4030017
        case imageNotApproved = 4030018
        case imageInUse = 4030019
        case forbiddenNoPassingTest = 4030026
        case imageNotFound = 4040014
        case messageNotFound = 4040015
        case performanceTestRunNotFound = 4040018
        case defaultMessageNotFound = 4040020
        case realtimeURLNotFound = 4040021
        case imageAlreadyExists = 4090000
        case messageAlreadyExists = 4090001
        case rateLimitExceeded = 4290000
        case generalInternal = 5000000

        public var status: Int { rawValue / 10_000 }

        var message: String {
            switch self {
            case .rateLimitExceeded: return "Rate limit exceeded."
            case .generalInternal: return "An unknown error occurred."
            default: return "\(self)"
            }
        }
    }

    static func error(_ error: AppleError, _ detail: String? = nil, headers: [String: String] = [:]) -> FakeAppleServer.Response {
        .json(["errorCode": error.rawValue, "errorMessage": error.message + (detail.map { ": \($0)" } ?? "")], status: error.status, headers: headers)
    }

    /// An answer Apple documents without a body (an invalid token: 401), or a path or
    /// method the API does not have (no error code of Apple's is documented for those).
    static func bare(_ status: Int) -> FakeAppleServer.Response { FakeAppleServer.Response(status: status) }

    static let ok = FakeAppleServer.Response(status: 200)

    func handle(_ request: FakeAppleServer.Request) -> FakeAppleServer.Response {
        guard let range = request.path.range(of: Self.prefix) else { return Self.bare(404) }
        let environment = String(request.path[..<range.lowerBound].drop { $0 == "/" })
        let parts = request.path[range.upperBound...].split(separator: "/").map { String($0).lowercased() }
        guard FakeAppleServer.tokenBundleId(request) != nil else { return Self.bare(401) }
        lock.lock()
        defer { lock.unlock() }
        if let index = limits.indices.first {
            limits[index].count -= 1
            let milliseconds = limits[index].retryAfterMs
            if limits[index].count <= 0 { limits.remove(at: index) }
            limited += 1
            let at = Int64((Date().timeIntervalSince1970 * 1000).rounded()) + milliseconds
            return Self.error(.rateLimitExceeded, headers: ["Retry-After": String(at)])
        }
        switch (request.method, parts.first, parts.count) {
        case ("GET", "image", 2) where parts[1] == "list":
            return .json(["imageIdentifiers": (images[environment] ?? []).map {
                ["imageIdentifier": $0.identifier, "imageState": $0.state, "imageSize": $0.imageSize ?? ""]
            }])
        case ("GET", "message", 2) where parts[1] == "list":
            return .json(["messageIdentifiers": (messages[environment] ?? []).map { ["messageIdentifier": $0.identifier, "messageState": $0.state] }])
        case ("PUT", "image", 2):
            guard let size = request.query["imageSize"], ["FULL_SIZE", "BULLET_POINT"].contains(size) else {
                return Self.error(.badRequestImageSize, "imageSize is missing or not FULL_SIZE or BULLET_POINT")
            }
            guard request.body.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) else { return Self.error(.invalidImage, "not a PNG") }
            return upload(into: &images, environment, parts[1], size: size, request.body, exists: .imageAlreadyExists)
        case ("PUT", "message", 2):
            if let refusal = Self.check(message: request.json) { return refusal }
            return upload(into: &messages, environment, parts[1], size: nil, request.body, exists: .messageAlreadyExists)
        case ("DELETE", "image", 2):
            // An image a message shows stays: Apple refuses to delete it while it is in use.
            if (messages[environment] ?? []).contains(where: { Self.imageIds(in: $0.content).contains(parts[1]) }) {
                return Self.error(.imageInUse, parts[1])
            }
            return delete(from: &images, environment, parts[1], missing: .imageNotFound)
        case ("DELETE", "message", 2):
            return delete(from: &messages, environment, parts[1], missing: .messageNotFound)
        case (_, "default", 3):
            let locale = parts[2].split(separator: "-", omittingEmptySubsequences: false)
            guard (2...3).contains(locale.first?.count ?? 0), locale.allSatisfy({ !$0.isEmpty && $0.allSatisfy { $0.isLetter || $0.isNumber } }) else {
                return Self.error(.invalidLocale, parts[2])
            }
            return defaultMessage(request.method, environment + " " + parts[1] + " " + parts[2], environment, request)
        case (_, "realtime", 2) where parts[1] == "url":
            return realtime(request.method, environment, request)
        case ("POST", "performancetest", 1):
            guard let otid = request.json?["originalTransactionId"] as? String, !otid.isEmpty, otid.allSatisfy(\.isNumber) else {
                return Self.error(.invalidPerformanceTestRequest, "originalTransactionId is missing or not a transaction id")
            }
            // One test at a time: one whose result has not been read to its end is still running.
            if tests.values.contains(where: { $0.pendingReads > 0 }) { return Self.error(.existingPerformanceTestRun) }
            let id = UUID().uuidString.lowercased()
            let target = realtimeURLs[environment]
            if let runner = performanceTest, let target {
                tests[id] = Test(pendingReads: 1, target: target, real: true)
                Thread.detachNewThread { [self] in
                    let result = runner.result(runner.run(target: target, originalTransactionId: otid), target: target)
                    lock.lock()
                    tests[id]?.result = result
                    if result["result"] as? String == "PASS" { passed.insert(environment) }
                    lock.unlock()
                }
                return .json(["requestId": id, "config": runner.config.json])
            }
            tests[id] = Test(pendingReads: max(1, pendingReads + 1), target: target)
            return .json(["requestId": id, "config": Self.config])
        case ("GET", "performancetest", 3) where parts[1] == "result":
            guard UUID(uuidString: parts[2]) != nil else { return Self.error(.invalidRequestId, parts[2]) }
            guard let test = tests[parts[2]] else { return Self.error(.performanceTestRunNotFound, parts[2]) }
            if test.real {
                if let result = test.result {
                    tests[parts[2]]?.pendingReads = 0
                    return .json(result)
                }
                let config = performanceTest?.config ?? FakeRetentionPerformanceTest.Config()
                return .json(["config": config.json, "target": test.target ?? "", "result": "PENDING", "numPending": config.totalRequests])
            }
            tests[parts[2]]?.pendingReads = max(0, test.pendingReads - 1)
            var answer: [String: Any] = ["config": Self.config, "target": test.target ?? ""]
            if test.pendingReads > 1 {
                answer.merge(["result": "PENDING", "numPending": 40]) { $1 }
            } else {
                if verdict == "PASS" { passed.insert(environment) }
                answer.merge(["result": verdict, "successRate": verdict == "PASS" ? 98 : 60, "numPending": 0,
                              "responseTimes": ["average": 120, "p50": 100, "p90": 200, "p95": 250, "p99": 400],
                              "failures": ["TIMED_OUT": 1, "NO_RESPONSE": 1]]) { $1 }
            }
            return .json(answer)
        default:
            return Self.bare(404)
        }
    }

    static let config: [String: Int] = ["maxConcurrentRequests": 10, "totalRequests": 100, "totalDuration": 60000,
                                        "responseTimeThreshold": 500, "successRateThreshold": 95]

    /// A message body as Apple's Upload Message checks it: a header and a body, their lengths
    /// (in UTF-16 code units, the strictest reading of Apple's characters), up to 5 bullets.
    static func check(message object: [String: Any]?) -> FakeAppleServer.Response? {
        guard let object, let header = object["header"] as? String, let body = object["body"] as? String else {
            return error(.generalBadRequest, "the message needs a header and a body")
        }
        if header.utf16.count > 66 { return error(.headerTooLong) }
        if body.utf16.count > 144 { return error(.bodyTooLong) }
        let bullets = object["bulletPoints"] as? [[String: Any]] ?? []
        if bullets.count > 5 { return error(.tooManyBulletPoints) }
        if bullets.contains(where: { ($0["text"] as? String ?? "").utf16.count > 66 }) { return error(.bulletPointTextTooLong) }
        let alts = bullets.compactMap { $0["altText"] as? String } + [((object["image"] as? [String: Any])?["altText"] as? String)].compactMap { $0 }
        if alts.contains(where: { $0.utf16.count > 150 }) { return error(.altTextTooLong) }
        return nil
    }

    /// The images a stored message body shows.
    static func imageIds(in content: Data) -> [String] {
        guard let object = (try? JSONSerialization.jsonObject(with: content)) as? [String: Any] else { return [] }
        let bullets = (object["bulletPoints"] as? [[String: Any]] ?? []).compactMap { $0["imageIdentifier"] as? String }
        return (bullets + [((object["image"] as? [String: Any])?["imageIdentifier"] as? String)].compactMap { $0 }).map { $0.lowercased() }
    }

    private func upload(into lists: inout [String: [Item]], _ environment: String, _ id: String, size: String?, _ body: Data,
                        exists: AppleError) -> FakeAppleServer.Response {
        uploads[id, default: 0] += 1
        // No code of Apple's for an identifier that is no UUID is in what could be read: the general one.
        guard UUID(uuidString: id) != nil else { return Self.error(.generalBadRequest, "\(id) is not a UUID") }
        if (lists[environment] ?? []).contains(where: { $0.identifier == id }) {
            return Self.error(exists, id)
        }
        var response = Self.ok
        let stall = stalls.isEmpty ? nil : stalls.removeFirst()
        if stall?.stores != false {
            lists[environment, default: []].append(Item(identifier: id, state: "PENDING", imageSize: size, content: body))
        }
        response.delay = stall?.seconds ?? 0
        return response
    }

    private func delete(from lists: inout [String: [Item]], _ environment: String, _ id: String, missing: AppleError) -> FakeAppleServer.Response {
        guard let index = lists[environment]?.firstIndex(where: { $0.identifier == id }) else { return Self.error(missing, id) }
        lists[environment]!.remove(at: index)
        return Self.ok
    }

    private func defaultMessage(_ method: String, _ key: String, _ environment: String, _ request: FakeAppleServer.Request) -> FakeAppleServer.Response {
        switch method {
        case "GET":
            guard let id = defaults[key] else { return Self.error(.defaultMessageNotFound) }
            return .json(["messageIdentifier": id])
        case "PUT":
            guard let id = (request.json?["messageIdentifier"] as? String)?.lowercased() else {
                return Self.error(.generalBadRequest, "messageIdentifier is missing")
            }
            guard let message = messages[environment]?.first(where: { $0.identifier == id }) else { return Self.error(.messageNotFound, id) }
            guard message.state == "APPROVED" else { return Self.error(.messageNotApproved, "\(id) is \(message.state)") }
            let shown = Self.imageIds(in: message.content)
            if let image = (images[environment] ?? []).first(where: { shown.contains($0.identifier) && $0.state != "APPROVED" }) {
                return Self.error(.imageNotApproved, image.identifier)
            }
            defaults[key] = id
            return Self.ok
        case "DELETE":
            guard defaults.removeValue(forKey: key) != nil else { return Self.error(.defaultMessageNotFound) }
            return Self.ok
        default:
            return Self.bare(405)
        }
    }

    private func realtime(_ method: String, _ environment: String, _ request: FakeAppleServer.Request) -> FakeAppleServer.Response {
        switch method {
        case "GET":
            guard let url = realtimeURLs[environment] else { return Self.error(.realtimeURLNotFound) }
            return .json(["realtimeURL": url])
        case "PUT":
            guard let url = request.json?["realtimeURL"] as? String, url.hasPrefix("https://") else {
                return Self.error(.badRequestRealtimeURL, "realtimeURL is missing or not https")
            }
            // Production's URL only after a performance test passed (Apple's ForbiddenNoPassingTestError).
            if environment == "prod" && !passed.contains("sandbox") { return Self.error(.forbiddenNoPassingTest) }
            realtimeURLs[environment] = url
            return Self.ok
        case "DELETE":
            guard realtimeURLs.removeValue(forKey: environment) != nil else { return Self.error(.realtimeURLNotFound) }
            return Self.ok
        default:
            return Self.bare(405)
        }
    }
}
