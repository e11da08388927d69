import Foundation

/// Apple's sandbox performance test of a real-time retention URL, run for real: the fake's
/// `POST performanceTest` starts it, its result read ends PENDING when the run is done.
///
/// `totalRequests` signed real-time requests are POSTed to the target, at most
/// `maxConcurrentRequests` at a time, by one curl process (`--parallel`), each given
/// `responseTimeThreshold` milliseconds. Each request ends as one of Apple's send-attempt
/// results (`SendAttemptResult`): a 200 whose body is a JSON object with at most one of the
/// answer fields is a success; a non-200 is `UNSUCCESSFUL_HTTP_RESPONSE_CODE`, another body
/// `INVALID_RESPONSE`, no answer within the threshold `TIMED_OUT`, a refused or empty
/// connection `NO_RESPONSE`, a certificate the client does not trust `TLS_ISSUE`. The test
/// passes when the share of successes (whole percent, rounded down) reaches
/// `successRateThreshold`; the response times (average and nearest-rank percentiles, in
/// milliseconds) are those of the successes.
public struct FakeRetentionPerformanceTest: Sendable {
    public struct Config: Sendable {
        public var maxConcurrentRequests = 10
        public var totalRequests = 100
        public var totalDuration = 60_000
        public var responseTimeThreshold = 500
        public var successRateThreshold = 95

        public init() {}

        public var json: [String: Int] {
            ["maxConcurrentRequests": maxConcurrentRequests, "totalRequests": totalRequests, "totalDuration": totalDuration,
             "responseTimeThreshold": responseTimeThreshold, "successRateThreshold": successRateThreshold]
        }
    }

    /// One request's end: nil `failure` is a success, after `milliseconds`.
    public struct Attempt: Equatable, Sendable {
        public var failure: String?
        public var milliseconds: Double
    }

    public var config = Config()
    /// The certificate (PEM) the test trusts for the target, standing in for the public CAs Apple's trusts.
    public var trustedCertificate: String?
    /// A signed real-time request body for an original transaction id, as Apple would send it from the sandbox.
    public var request: @Sendable (String) throws -> Data

    public init(trustedCertificate: String?, request: @escaping @Sendable (String) throws -> Data) {
        self.trustedCertificate = trustedCertificate
        self.request = request
    }

    /// Sends the requests to `target` and returns each one's end, in the order sent.
    public func run(target: String, originalTransactionId: String) -> [Attempt] {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("fake-performance-test-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            var transfers: [String] = []
            for index in 0..<config.totalRequests {
                let body = folder + "/request-\(index).json"
                try request(originalTransactionId).write(to: URL(fileURLWithPath: body))
                var lines = ["url = \(Self.quoted(target))", "data-binary = \(Self.quoted("@" + body))",
                             "header = \(Self.quoted("Content-Type: application/json"))",
                             "output = \(Self.quoted(folder + "/answer-\(index)"))",
                             "max-time = \(Double(config.responseTimeThreshold) / 1000)", "noproxy = \"*\"",
                             "write-out = \(Self.quoted("%{filename_effective} %{http_code} %{exitcode} %{time_total}\\n"))"]
                if let trustedCertificate { lines.append("cacert = \(Self.quoted(trustedCertificate))") }
                transfers.append(lines.joined(separator: "\n"))
            }
            let file = folder + "/transfers.conf"
            try transfers.joined(separator: "\nnext\n").write(toFile: file, atomically: true, encoding: .utf8)
            // Only each transfer's line on the output: curl's own words (in parallel it shows its
            // progress meter despite --silent) go to /dev/null, not between the lines.
            let written = try ChildOutput.run("/usr/bin/env", ["curl", "--silent", "--stderr", "/dev/null", "--parallel", "--parallel-immediate",
                                                               "--parallel-max", String(config.maxConcurrentRequests), "--config", file]).output
            var ends = [Attempt?](repeating: nil, count: config.totalRequests)
            for line in written.split(separator: "\n") {
                let fields = line.split(separator: " ").map(String.init)
                guard fields.count == 4, let index = fields[0].split(separator: "-").last.flatMap({ Int($0) }), ends.indices.contains(index),
                      let status = Int(fields[1]), let exit = Int32(fields[2]), let seconds = Double(fields[3]) else { continue }
                let answer = (try? Data(contentsOf: URL(fileURLWithPath: fields[0]))) ?? Data()
                ends[index] = Attempt(failure: Self.failure(exit: exit, status: status, body: answer), milliseconds: seconds * 1000)
            }
            return ends.map { $0 ?? Attempt(failure: "OTHER", milliseconds: 0) }
        } catch {
            return Array(repeating: Attempt(failure: "OTHER", milliseconds: 0), count: config.totalRequests)
        }
    }

    /// The result Apple's `Get Performance Test Results` answers for `attempts` sent to `target`.
    public func result(_ attempts: [Attempt], target: String) -> [String: Any] {
        let successes = attempts.filter { $0.failure == nil }.map(\.milliseconds).sorted()
        let rate = attempts.isEmpty ? 0 : successes.count * 100 / attempts.count
        var failures: [String: Int] = [:]
        for attempt in attempts { if let failure = attempt.failure { failures[failure, default: 0] += 1 } }
        var answer: [String: Any] = ["config": config.json, "target": target, "numPending": 0, "successRate": rate,
                                     "result": rate >= config.successRateThreshold ? "PASS" : "FAIL", "failures": failures]
        if !successes.isEmpty {
            func rank(_ p: Int) -> Int { Int(successes[max(0, (p * successes.count + 99) / 100 - 1)].rounded()) }
            answer["responseTimes"] = ["average": Int((successes.reduce(0, +) / Double(successes.count)).rounded()),
                                       "p50": rank(50), "p90": rank(90), "p95": rank(95), "p99": rank(99)]
        }
        return answer
    }

    /// Apple's send-attempt result for one transfer: curl's exit code (its documented
    /// numbers), the HTTP status, the body. Nil is a success.
    static func failure(exit: Int32, status: Int, body: Data) -> String? {
        switch exit {
        case 0: break
        case 28: return "TIMED_OUT"
        case 35, 53, 54, 58, 59, 60, 64, 66, 77, 80, 83, 90, 91: return "TLS_ISSUE"
        case 47: return "CIRCULAR_REDIRECT"
        case 6, 7, 52: return "NO_RESPONSE"
        case 55, 56: return "SOCKET_ISSUE"
        case 18: return "PREMATURE_CLOSE"
        default: return "OTHER"
        }
        guard status == 200 else { return "UNSUCCESSFUL_HTTP_RESPONSE_CODE" }
        guard let object = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any],
              object.keys.filter(["message", "alternateProduct", "promotionalOffer"].contains).count <= 1 else {
            return "INVALID_RESPONSE"
        }
        return nil
    }

    /// A curl config value: double-quoted, with backslashes and quotes escaped.
    static func quoted(_ value: String) -> String {
        "\"" + value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }
}
