import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Where HTTP happens: `subdesk-http`, a helper program (HTTP/1.1 with OpenSSL's TLS),
/// started on the first request and kept for the rest of the process's life (a new one is
/// started when it has ended). Nothing a server sends is parsed in the process that holds
/// the store, and a CGI process answering one notification never loads the TLS library.
/// The helper answers requests from every thread concurrently.
public final class HTTPHelper: @unchecked Sendable {
    static let executableName = "subdesk-http"
    static let environmentVariable = "SUBDESK_HTTP_HELPER"

    /// The process's helper.
    public static let shared = HTTPHelper()

    /// Requests one helper makes before a fresh one takes the next. The helper's memory is
    /// flat (measured: 22.6 MB from 10,000 to 70,000 requests; URLSession's, before it,
    /// grew from 59 to 76 MB and was replaced every 2,000); a fresh one now and then only
    /// bounds a leak not yet found, at the cost of a start and new connections.
    static let requestsPerHelper = 1_000_000

    private let environment: () -> [String: String]
    private let requestsPerProcess: Int
    private let lock = NSLock()
    private var running: HTTPHelperProcess?

    /// A helper of its own, beside the process's `shared` one: its process is started by
    /// the first thread that sends through it, and takes that thread's CPU priority.
    public convenience init() { self.init(environment: { ProcessInfo.processInfo.environment }) }

    /// `environment` is where the helper is looked for (tests give their own);
    /// `requestsPerProcess`, how many requests a helper makes before it is replaced.
    init(environment: @escaping () -> [String: String],
         requestsPerProcess: Int = HTTPHelper.requestsPerHelper) {
        self.environment = environment
        self.requestsPerProcess = max(1, requestsPerProcess)
    }

    /// The shared helper lives as long as the process; another (a test's) ends with its owner.
    deinit { running?.finishInput() }

    /// The running helper's process id, nil before the first request.
    var pid: pid_t? {
        lock.lock()
        defer { lock.unlock() }
        return running?.pid
    }

    /// The running helper, started now if there is none or the last one has ended; the
    /// reason when none can be started.
    func process() -> Result<HTTPHelperProcess, Unavailable> {
        lock.lock()
        defer { lock.unlock() }
        return current()
    }

    /// Makes one exchange on the running helper, counted as one of its requests: the helper
    /// that has made `requestsPerProcess` is retired (it ends once its last exchange has its
    /// answer) and a fresh one takes this one.
    func exchange(_ request: HTTPRequest, timeout: TimeInterval, connectionsPerHost: Int,
                  maxResponseBytes: Int) -> Result<HTTPResponse, HTTPClient.TransportProblem> {
        lock.lock()
        if let old = running, old.isRunning, old.requestsBegun >= requestsPerProcess {
            old.retire()
            running = nil
        }
        let chosen = current()
        if case .success(let process) = chosen { process.begin() }
        lock.unlock()
        switch chosen {
        case .success(let process):
            defer { process.end() }
            return process.exchange(request, timeout: timeout, connectionsPerHost: connectionsPerHost,
                                    maxResponseBytes: maxResponseBytes)
        case .failure(let unavailable):
            return .failure(.network(unavailable.reason))
        }
    }

    /// `process()` with the lock held.
    private func current() -> Result<HTTPHelperProcess, Unavailable> {
        if let running, running.isRunning { return .success(running) }
        return Result { () throws(Unavailable) -> HTTPHelperProcess in
            let started = try HTTPHelperProcess(executable: try Self.locate(in: environment()))
            running = started
            return started
        }
    }

    /// `$SUBDESK_HTTP_HELPER` when set (and then only there: a path given on purpose that
    /// is wrong must say so, not be passed over), else beside the running executable, else
    /// on `PATH`.
    static func locate(in environment: [String: String]) throws(Unavailable) -> String {
        let hint = "build it with `swift build` and install \(executableName) beside subdesk"
        if let explicit = environment[environmentVariable], !explicit.isEmpty {
            guard isExecutable(explicit) else {
                throw Unavailable("HTTP helper not found: $\(environmentVariable) is \(explicit), "
                                  + "which is not an executable file; \(hint)")
            }
            return explicit
        }
        var looked: [String] = []
        if let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            let beside = (executable as NSString).deletingLastPathComponent + "/" + executableName
            if isExecutable(beside) { return beside }
            looked.append(beside)
        }
        let path = environment["PATH"] ?? ""
        for directory in path.split(separator: ":") where isExecutable("\(directory)/\(executableName)") {
            return "\(directory)/\(executableName)"
        }
        looked.append("\(executableName) on PATH (\(path))")
        throw Unavailable("HTTP helper not found (looked for \(looked.joined(separator: ", "))): \(hint)")
    }

    private static func isExecutable(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG && access(path, X_OK) == 0
    }

    /// Where the helper would be started from, or why none can be (for `doctor`).
    public static func whereIsIt(environment: [String: String] = ProcessInfo.processInfo.environment) -> Result<String, HelperMissing> {
        do {
            return .success(try locate(in: environment))
        } catch {
            return .failure(HelperMissing(reason: error.reason))
        }
    }

    public struct HelperMissing: Error, CustomStringConvertible {
        public let reason: String
        public var description: String { reason }
    }

    /// No helper can be started; `reason` names where it was looked for, or why it failed.
    struct Unavailable: Error {
        let reason: String
        init(_ reason: String) { self.reason = reason }
    }
}
