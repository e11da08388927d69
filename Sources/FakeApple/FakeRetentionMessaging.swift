import Foundation

/// Apple's Retention Messaging API (`/inApps/v1/messaging/...`) as a stateful fake behind a
/// `FakeAppleServer`, for the tests: images and messages kept in memory per environment (the
/// server's first path segment, `prod` or `sandbox`), each PENDING until the test approves or
/// rejects it, as Apple's review would; an identifier uploaded again answered 409; default
/// messages (403 unless the message is APPROVED, 404 when none); a real-time URL per
/// environment; the performance test PENDING for a set number of reads, then PASS or FAIL
/// with Apple's example figures. Scripted trouble: 429s with a Retry-After a moment away
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
    private var tests: [String: (pendingReads: Int, target: String?)] = [:]
    private var stalls: [(seconds: TimeInterval, stores: Bool)] = []
    private var limits: [(count: Int, retryAfterMs: Int64)] = []
    private var limited = 0

    /// How many result reads a performance test stays PENDING.
    public var pendingReads = 1
    /// What a performance test ends with: PASS or FAIL.
    public var verdict = "PASS"

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

    static func error(_ status: Int, _ code: Int, _ message: String, headers: [String: String] = [:]) -> FakeAppleServer.Response {
        .json(["errorCode": code, "errorMessage": message], status: status, headers: headers)
    }

    static let ok = FakeAppleServer.Response(status: 200)

    func handle(_ request: FakeAppleServer.Request) -> FakeAppleServer.Response {
        guard let range = request.path.range(of: Self.prefix) else { return Self.error(404, 4040000, "not a Retention Messaging path") }
        let environment = String(request.path[..<range.lowerBound].drop { $0 == "/" })
        let parts = request.path[range.upperBound...].split(separator: "/").map { String($0).lowercased() }
        guard FakeAppleServer.tokenBundleId(request) != nil else { return Self.error(401, 4010000, "Unauthenticated") }
        lock.lock()
        defer { lock.unlock() }
        if let index = limits.indices.first {
            limits[index].count -= 1
            let milliseconds = limits[index].retryAfterMs
            if limits[index].count <= 0 { limits.remove(at: index) }
            limited += 1
            let at = Int64((Date().timeIntervalSince1970 * 1000).rounded()) + milliseconds
            return Self.error(429, 4290000, "Rate limit exceeded.", headers: ["Retry-After": String(at)])
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
                return Self.error(400, 4000000, "imageSize is missing or not FULL_SIZE or BULLET_POINT")
            }
            return upload(into: &images, environment, parts[1], size: size, request.body)
        case ("PUT", "message", 2):
            guard let object = request.json, object["header"] is String, object["body"] is String else {
                return Self.error(400, 4000000, "the message needs a header and a body")
            }
            return upload(into: &messages, environment, parts[1], size: nil, request.body)
        case ("DELETE", "image", 2):
            return delete(from: &images, environment, parts[1])
        case ("DELETE", "message", 2):
            return delete(from: &messages, environment, parts[1])
        case (_, "default", 3):
            return defaultMessage(request.method, environment + " " + parts[1] + " " + parts[2], environment, request)
        case (_, "realtime", 2) where parts[1] == "url":
            return realtime(request.method, environment, request)
        case ("POST", "performancetest", 1):
            guard request.json?["originalTransactionId"] is String else { return Self.error(400, 4000000, "originalTransactionId is missing") }
            let id = UUID().uuidString.lowercased()
            tests[id] = (pendingReads, realtimeURLs[environment])
            return .json(["requestId": id, "config": Self.config])
        case ("GET", "performancetest", 3) where parts[1] == "result":
            guard let test = tests[parts[2]] else { return Self.error(404, 4040000, "no performance test \(parts[2])") }
            tests[parts[2]]?.pendingReads -= 1
            var answer: [String: Any] = ["config": Self.config, "target": test.target ?? ""]
            if test.pendingReads > 0 {
                answer.merge(["result": "PENDING", "numPending": 40]) { $1 }
            } else {
                answer.merge(["result": verdict, "successRate": verdict == "PASS" ? 98 : 60, "numPending": 0,
                              "responseTimes": ["average": 120, "p50": 100, "p90": 200, "p95": 250, "p99": 400],
                              "failures": ["TIMED_OUT": 1, "NO_RESPONSE": 1]]) { $1 }
            }
            return .json(answer)
        default:
            return Self.error(404, 4040000, "no such Retention Messaging call: \(request.method) \(request.path)")
        }
    }

    static let config: [String: Int] = ["maxConcurrentRequests": 10, "totalRequests": 100, "totalDuration": 60000,
                                        "responseTimeThreshold": 500, "successRateThreshold": 95]

    private func upload(into lists: inout [String: [Item]], _ environment: String, _ id: String, size: String?, _ body: Data) -> FakeAppleServer.Response {
        uploads[id, default: 0] += 1
        guard UUID(uuidString: id) != nil else { return Self.error(400, 4000000, "\(id) is not a UUID") }
        if (lists[environment] ?? []).contains(where: { $0.identifier == id }) {
            return Self.error(409, 4090000, "\(id) was already uploaded")
        }
        var response = Self.ok
        let stall = stalls.isEmpty ? nil : stalls.removeFirst()
        if stall?.stores != false {
            lists[environment, default: []].append(Item(identifier: id, state: "PENDING", imageSize: size, content: body))
        }
        response.delay = stall?.seconds ?? 0
        return response
    }

    private func delete(from lists: inout [String: [Item]], _ environment: String, _ id: String) -> FakeAppleServer.Response {
        guard let index = lists[environment]?.firstIndex(where: { $0.identifier == id }) else { return Self.error(404, 4040000, "no \(id)") }
        lists[environment]!.remove(at: index)
        return Self.ok
    }

    private func defaultMessage(_ method: String, _ key: String, _ environment: String, _ request: FakeAppleServer.Request) -> FakeAppleServer.Response {
        switch method {
        case "GET":
            guard let id = defaults[key] else { return Self.error(404, 4040000, "no default message") }
            return .json(["messageIdentifier": id])
        case "PUT":
            guard let id = (request.json?["messageIdentifier"] as? String)?.lowercased() else {
                return Self.error(400, 4000000, "messageIdentifier is missing")
            }
            guard let message = messages[environment]?.first(where: { $0.identifier == id }) else { return Self.error(404, 4040000, "no message \(id)") }
            guard message.state == "APPROVED" else { return Self.error(403, 4030000, "message \(id) is \(message.state), not APPROVED") }
            defaults[key] = id
            return Self.ok
        case "DELETE":
            guard defaults.removeValue(forKey: key) != nil else { return Self.error(404, 4040000, "no default message") }
            return Self.ok
        default:
            return Self.error(405, 4050000, "\(method) not allowed")
        }
    }

    private func realtime(_ method: String, _ environment: String, _ request: FakeAppleServer.Request) -> FakeAppleServer.Response {
        switch method {
        case "GET":
            guard let url = realtimeURLs[environment] else { return Self.error(404, 4040000, "no real-time URL") }
            return .json(["realtimeURL": url])
        case "PUT":
            guard let url = request.json?["realtimeURL"] as? String, url.hasPrefix("https://") else {
                return Self.error(400, 4000000, "realtimeURL is missing or not https")
            }
            realtimeURLs[environment] = url
            return Self.ok
        case "DELETE":
            guard realtimeURLs.removeValue(forKey: environment) != nil else { return Self.error(404, 4040000, "no real-time URL") }
            return Self.ok
        default:
            return Self.error(405, 4050000, "\(method) not allowed")
        }
    }
}
