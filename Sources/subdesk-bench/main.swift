import Foundation
import FakeApple
import SubdeskScenarios
import SubscriptionCore
import SubdeskTestSupport

// subdesk-bench: builds its own data, measures, and prints one table (median of several
// runs with min and max) beside the machine's own baseline, measured in the same run.
// Reproduce: swift run -c release subdesk-bench [--json] [--runs N] [--scales 10000,100000,1000000]

setvbuf(stdout, nil, _IOLBF, 0)

struct Options {
    var json = false
    var runs = 5
    var scales = [10_000, 100_000, 1_000_000]
    var dataDirectory: String?
    var intakeBodies = 4_000
    /// The relay section's backlog of owed deliveries (`--relay-backlog N`).
    var relayBacklog = 100_000
    /// The relay section's parts (`--relay-parts cost,lag,backlog`; all by default).
    var relayParts: Set<String> = ["cost", "lag", "backlog", "intake", "steady"]
    /// A target already running (nginx answering 200 on /in0 and /in1: bench/relay-target-nginx.conf)
    /// for the cost and backlog parts, instead of the bench's own; nil: the bench's.
    var relayTarget: String?
    /// The retention section's store size (`--retention-subscribers N`).
    var retentionSubscribers = 1_000_000
    /// Sections to run (baseline, intake, backfill, python, cgi, serve, retention, scales, engines, metrics, segments, dashboard, apps,
    /// relay); empty runs them all but apps and relay.
    var only: Set<String> = []
    /// Writes the intake bodies as NDJSON here and stops (for profiling `subdesk ingest`).
    var writeBodies: String?
    /// The `subdesk` whose CGI requests are timed (default: the deployment build from
    /// `deploy/build.sh` when there is one, else the one beside the bench).
    var cgiBinary: String?
    /// The PostgreSQL server the `engines` section compares SQLite with (a postgres:// URI).
    var postgres: String?

    init(_ args: [String]) {
        var i = 0
        while i < args.count {
            switch args[i] {
            case "--json": json = true
            case "--runs": i += 1; runs = max(1, Int(args[i]) ?? runs)
            case "--scales": i += 1; scales = args[i].split(separator: ",").compactMap { Int($0) }
            case "--data": i += 1; dataDirectory = args[i]
            case "--bodies": i += 1; intakeBodies = max(100, Int(args[i]) ?? intakeBodies)
            case "--relay-backlog": i += 1; relayBacklog = min(10_000_000, max(100, Int(args[i]) ?? relayBacklog))
            case "--relay-parts": i += 1; relayParts = Set(args[i].split(separator: ",").map(String.init))
            case "--relay-target": i += 1; relayTarget = args[i]
            case "--retention-subscribers":
                i += 1
                guard i < args.count, let n = Int(args[i]), n >= 1_000 else {
                    FileHandle.standardError.write(Data("subdesk-bench: --retention-subscribers needs a number of subscribers, at least 1000\n".utf8))
                    exit(2)
                }
                retentionSubscribers = n
            case "--only": i += 1; only = Set(args[i].split(separator: ",").map(String.init))
            case "--write-bodies": i += 1; writeBodies = args[i]
            case "--cgi-binary": i += 1; cgiBinary = args[i]
            case "--postgres": i += 1; postgres = args[i]
            case "--help", "-h":
                print("usage: subdesk-bench [--json] [--runs N] [--scales 10000,100000,1000000] [--data DIR] [--bodies N]\n                    [--only baseline,intake,backfill,python,cgi,serve,retention,scales,engines,metrics,segments,dashboard,apps,relay]\n                    [--write-bodies FILE] [--cgi-binary PATH] [--postgres URI] [--relay-backlog N]\n                    [--relay-parts cost,lag,backlog,intake,steady] [--relay-target http://127.0.0.1:PORT]\n                    [--retention-subscribers N]")
                exit(0)
            default:
                FileHandle.standardError.write(Data("subdesk-bench: unknown argument \(args[i])\n".utf8))
                exit(2)
            }
            i += 1
        }
    }
}

let options = Options(Array(CommandLine.arguments.dropFirst()))
func wanted(_ section: String) -> Bool { options.only.isEmpty || options.only.contains(section) }
let sample = try SampleData.locate()
let repoRoot = (sample.directory as NSString).deletingLastPathComponent
let dataDirectory = options.dataDirectory ?? repoRoot + "/.build/bench-data"
try FileManager.default.createDirectory(atPath: dataDirectory, withIntermediateDirectories: true)
let executableDirectory = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent().path
let subdeskBinary = executableDirectory + "/subdesk"
let deployedBinary = repoRoot + "/.build/deploy/subdesk"
let cgiBinary = options.cgiBinary ?? (FileManager.default.isExecutableFile(atPath: deployedBinary) ? deployedBinary : subdeskBinary)

func log(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}

// MARK: Measurement helpers

struct Spread {
    var median: Double, min: Double, max: Double
    init(_ values: [Double]) {
        let sorted = values.sorted()
        median = sorted.isEmpty ? .nan : (sorted.count % 2 == 1 ? sorted[sorted.count / 2]
                                                                : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2)
        min = sorted.first ?? .nan
        max = sorted.last ?? .nan
    }
}

func percentile(_ values: [Double], _ p: Double) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return .nan }
    return sorted[Swift.min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.up)) - 1)]
}

func seconds(_ body: () throws -> Void) rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

@discardableResult
func shell(_ launch: String, _ args: [String], stdin: Data? = nil, environment: [String: String]? = nil) throws -> (status: Int32, out: String) {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: launch)
    p.arguments = args
    if let environment { p.environment = environment }
    let out = Pipe(), input = Pipe()
    p.standardOutput = out
    p.standardError = FileHandle.nullDevice
    p.standardInput = input
    try p.run()
    if let stdin { try? input.fileHandleForWriting.write(contentsOf: stdin) }
    try? input.fileHandleForWriting.close()
    let data = ChildOutput.readAll(out.fileHandleForReading)
    p.waitUntilExit()
    return (p.terminationStatus, String(decoding: data, as: UTF8.self))
}

/// Runs a program with posix_spawn, stdin and stdout from and to files (or /dev/null), and
/// waits for it. Foundation's Process costs milliseconds per spawn and waits forever on a
/// child that leaves a daemon holding its descriptors (tmux's server does).
@discardableResult
func spawn(_ path: String, _ args: [String], environment: [String: String]? = nil,
           stdinPath: String = "/dev/null", stdoutPath: String = "/dev/null") -> Int32 {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, stdinPath, O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, stdoutPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    let argv: [UnsafeMutablePointer<CChar>?] = ([path] + args).map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    let env = (environment ?? ProcessInfo.processInfo.environment).map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer { env.forEach { free($0) } }
    var pid: pid_t = 0
    guard posix_spawn(&pid, path, &actions, nil, argv, env) == 0 else { return -1 }
    var status: Int32 = 0
    waitpid(pid, &status, 0)
    return status
}

/// One line of the result table.
struct Figure {
    var section: String
    var what: String
    var value: String
    var target: String
    var met: Bool?
    var numbers: [String: Double] = [:]
}
var figures: [Figure] = []

func record(_ f: Figure) {
    figures.append(f)
    let mark = f.met.map { $0 ? "ok" : "MISSED" } ?? ""
    log("  " + pad(f.what, 58) + " " + pad(f.value, 34) + " " + pad(f.target, 36) + " " + mark)
}

func pad(_ text: String, _ width: Int) -> String {
    text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
}

func fmt(_ v: Double, _ digits: Int = 0) -> String { String(format: "%.\(digits)f", v) }
func spreadText(_ s: Spread, _ digits: Int = 0, unit: String = "") -> String {
    "\(fmt(s.median, digits))\(unit) (\(fmt(s.min, digits))-\(fmt(s.max, digits)))"
}

// MARK: Signed bodies

let builder = ScenarioBuilder(signer: try sample.signer())
let scenarios = try sample.scenarios()
var nextInstance = 7_000_000 + Int(DateText.nowMillis() % 1_000_000) * 10

func signedBodies(_ count: Int) throws -> [Data] {
    try builder.bodies(count: count, cycling: scenarios, instance: &nextInstance, anchor: DateText.nowMillis())
}

func makeIntake(_ store: Store) throws -> Intake {
    Intake(store: store, verifier: SignedDataVerifier(roots: try sample.trustRoots()), policy: SampleData.demoPolicy)
}

/// Ingests `bodies` in batches as `subdesk ingest` does (`BatchIngest`); notifications per second.
func ingestRate(_ store: Store, _ bodies: [Data]) throws -> Double {
    var batches = try BatchIngest(intake: try makeIntake(store))
    var stored = 0
    let elapsed = try seconds { stored = try batches.ingest(bodies).stored }
    guard stored == bodies.count else {
        log("subdesk-bench: only \(stored) of \(bodies.count) bodies were stored")
        exit(1)
    }
    return Double(bodies.count) / elapsed
}

/// Bodies one per line, as `subdesk ingest` and the Python peer read them.
func writeNDJSON(_ bodies: [Data], to path: String) throws {
    try Data(bodies.map { String(decoding: $0, as: UTF8.self) }.joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: path))
}

if let path = options.writeBodies {
    let bodies = try signedBodies(options.intakeBodies)
    try writeNDJSON(bodies, to: path)
    log("wrote \(bodies.count) signed V2 bodies to \(path)")
    exit(0)
}

// MARK: 1. Machine baseline

log("subdesk-bench: \(options.runs) runs per figure, medians with (min-max); data in \(dataDirectory)")
log("== machine baseline")
/// ECDSA P-256 verifications per second by `openssl speed`, run for `seconds`.
func opensslVerifyRate(seconds: Int) throws -> Double? {
    let r = try shell("/usr/bin/env", ["openssl", "speed", "-seconds", "\(seconds)", "ecdsap256"])
    for line in r.out.split(separator: "\n") where line.contains("ecdsa (nistp256)") {
        if let v = line.split(separator: " ").compactMap({ Double($0) }).last { return v }
    }
    return nil
}

var opensslVerify: [Double] = []
for _ in 0..<(wanted("baseline") ? 3 : 0) {
    if let v = try opensslVerifyRate(seconds: 2) { opensslVerify.append(v) }
}
let openssl = Spread(opensslVerify)
let ceiling = openssl.median / 3
if !opensslVerify.isEmpty {
record(Figure(section: "baseline", what: "openssl speed ecdsap256 verify/s", value: spreadText(openssl), target: "(machine ceiling)",
              met: nil, numbers: ["verifyPerSecond": openssl.median]))
record(Figure(section: "baseline", what: "ceiling: verify/s / 3 signatures", value: fmt(ceiling), target: "", met: nil,
              numbers: ["notificationsPerSecond": ceiling]))
}

// MARK: 2. Batch intake

log("== batch intake (verify 3 x ES256 + decode + store + derive), \(options.intakeBodies) signed V2 bodies per run")
let intakeBodies = wanted("intake") || wanted("python") ? try signedBodies(options.intakeBodies) : []
var rates: [Double] = []
// The machine's speed drifts by a fifth over minutes, so each run is also set against an
// openssl run taken just before it; the share of the ceiling is the median of those pairs.
var pairedShares: [Double] = []
var bodyStats: (count: Int, storedBytes: Int64, jwsHeaders: Int, headerBytes: Int64) = (0, 0, 0, 0)
for run in 0..<(wanted("intake") ? options.runs : 0) {
    let path = dataDirectory + "/intake-\(run).db"
    for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    let store = try Store(path: path)
    let verifyNow = wanted("baseline") ? try opensslVerifyRate(seconds: 1) : nil
    let rate = try ingestRate(store, intakeBodies)
    rates.append(rate)
    if let verifyNow { pairedShares.append(rate / (verifyNow / 3)) }
    bodyStats = try store.notifications.bodyStatistics()
}
let intake = Spread(rates)
if !rates.isEmpty {
let share = pairedShares.isEmpty ? nil : Spread(pairedShares)
record(Figure(section: "intake", what: "batch intake, notifications/s (one core)", value: spreadText(intake),
              target: ">= 3500, and 0.75 x ceiling run by run",
              met: intake.median >= 3500 && (share.map { $0.median >= 0.75 } ?? false),
              numbers: ["median": intake.median, "min": intake.min, "max": intake.max]))
record(Figure(section: "intake", what: "  as a share of the ceiling, run by run",
              value: share.map { spreadText($0, 2) } ?? "(no baseline)", target: ">= 0.75",
              met: share.map { $0.median >= 0.75 },
              numbers: share.map { ["ratio": $0.median, "ratioMin": $0.min, "ratioMax": $0.max] } ?? [:]))
if !opensslVerify.isEmpty {
record(Figure(section: "intake", what: "  as a share of the baseline's ceiling", value: fmt(intake.median / ceiling, 2), target: "",
              met: nil, numbers: ["ratioAgainstBaseline": intake.median / ceiling]))
}

let rawAverage = Double(intakeBodies.map(\.count).reduce(0, +)) / Double(intakeBodies.count)
let storedAverage = Double(bodyStats.storedBytes + bodyStats.headerBytes) / Double(Swift.max(1, bodyStats.count))
record(Figure(section: "storage", what: "stored V2 body, bytes on average (headers included)",
              value: "\(fmt(storedAverage)) (received \(fmt(rawAverage)))", target: "<= 1536, byte-exact",
              met: storedAverage <= 1536, numbers: ["storedAverage": storedAverage, "receivedAverage": rawAverage]))
}

// MARK: 2b. Backfill

/// A backfill of `payloads` from the local fake Apple, paged `pageSize` at a time as Get
/// Notification History pages, into a fresh store; notifications per second, or nil with
/// the reason when it cannot run here.
func backfillRate(_ payloads: [String], pageSize: Int, keyFile: String) throws -> Double {
    let server = try FakeAppleServer()
    defer { server.stop() }
    // Apple's side costs nothing measured here: each page's JSON is written before the clock starts.
    let pageCount = (payloads.count + pageSize - 1) / pageSize
    let pages: [Data] = try (0..<pageCount).map { page in
        let items = payloads.dropFirst(page * pageSize).prefix(pageSize).map { payload -> [String: Any] in
            ["signedPayload": payload, "sendAttempts": [["attemptDate": 1_700_000_000_000, "sendAttemptResult": "NO_RESPONSE"]]]
        }
        var body: [String: Any] = ["hasMore": page + 1 < pageCount, "notificationHistory": items]
        if page + 1 < pageCount { body["paginationToken"] = String(page + 1) }
        return try JSONSerialization.data(withJSONObject: body)
    }
    server.route("POST", "/prod/inApps/v1/notifications/history") { request in
        let page = min(pages.count - 1, Int(request.query["paginationToken"] ?? "0") ?? 0)
        return FakeAppleServer.Response(status: 200, headers: ["Content-Type": "application/json"], body: pages[page])
    }
    let path = dataDirectory + "/backfill.db"
    for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    let store = try Store(path: path)
    let key = try AppStoreAPIKey.load(file: keyFile, keyId: "BENCHKEY01", issuerId: "57246542-96fe-1a63-e053-0824d011072a",
                                      bundleId: ScenarioBuilder.demoBundleId, warn: { _ in })
    let endpoints = AppStoreEndpoints(serverAPI: server.baseURL.appendingPathComponent("prod"),
                                      serverAPISandbox: server.baseURL.appendingPathComponent("sandbox"),
                                      verifyReceipt: server.baseURL, verifyReceiptSandbox: server.baseURL)
    let client = AppStoreServerAPIClient(key: key, endpoints: endpoints, policy: HTTPPolicy())
    // As `subdesk backfill` runs it: the bodies verified on a connection beside the writer's.
    let backfill = Backfill(store: store, intake: try makeIntake(store), checker: try makeIntake(try Store(path: path)),
                            client: client, operatorName: "bench")
    let now = DateText.nowMillis()
    var run: BackfillRun?
    let elapsed = try seconds {
        run = try backfill.run(Backfill.Request(since: now - 30 * 86_400_000, until: now, onlyFailures: true, environment: .production))
    }
    guard let run, run.new == payloads.count else {
        log("subdesk-bench: the backfill stored \(run?.new ?? 0) of \(payloads.count)")
        exit(1)
    }
    return Double(payloads.count) / elapsed
}

if wanted("backfill") {
    log("== backfill: Get Notification History from a local fake Apple, 20 a page, through intake")
    let keyFile = dataDirectory + "/bench-key.p8"
    if !FileManager.default.fileExists(atPath: keyFile) {
        _ = try shell("/usr/bin/env", ["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", keyFile])
    }
    let payloads = try signedBodies(10_000).map { body -> String in
        let object = try JSONSerialization.jsonObject(with: body) as? [String: Any]
        return object?["signedPayload"] as? String ?? ""
    }
    var backfillRates: [Double] = []
    do {
        for _ in 0..<max(1, options.runs / 2) { backfillRates.append(try backfillRate(payloads, pageSize: 20, keyFile: keyFile)) }
        let spread = Spread(backfillRates)
        let batch = rates.isEmpty ? nil : intake.median
        record(Figure(section: "backfill", what: "backfill of 10,000 notifications, notifications/s", value: spreadText(spread),
                      target: batch.map { ">= \(fmt($0 / 2)) (half of batch intake)" } ?? ">= half of batch intake (run with intake)",
                      met: batch.map { spread.median >= $0 / 2 }, numbers: ["median": spread.median, "min": spread.min, "max": spread.max]))
    } catch {
        record(Figure(section: "backfill", what: "backfill of 10,000 notifications", value: "could not run: \(error)",
                      target: ">= half of batch intake", met: nil))
    }
}

// MARK: 3. Apple's Python library

log("== the same bodies through Apple's app-store-server-library (Python), when installed")
let pythonCandidates = [ProcessInfo.processInfo.environment["SUBDESK_BENCH_PYTHON"], repoRoot + "/.build/bench-venv/bin/python", "/usr/bin/python3"].compactMap { $0 }
var pythonRate: Double?
for python in pythonCandidates where wanted("python") && FileManager.default.isExecutableFile(atPath: python) {
    guard (try? shell(python, ["-c", "import appstoreserverlibrary"]))?.status == 0 else { continue }
    let subset = Array(intakeBodies.prefix(300))
    let file = dataDirectory + "/python-bodies.ndjson"
    try writeNDJSON(subset, to: file)
    var pyRates: [Double] = []
    for _ in 0..<Swift.min(3, options.runs) {
        let r = try shell(python, [repoRoot + "/bench/apple_library_verify.py", file, sample.testRootPath,
                                   ScenarioBuilder.demoBundleId, String(ScenarioBuilder.demoAppAppleId)])
        let parts = r.out.split(separator: " ").compactMap { Double($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        if r.status == 0, parts.count == 2, parts[1] > 0 { pyRates.append(parts[0] / parts[1]) }
    }
    if !pyRates.isEmpty { pythonRate = Spread(pyRates).median }
    break
}
if !wanted("python") {
} else if let pythonRate {
    record(Figure(section: "python", what: "Apple's Python library, notifications/s", value: fmt(pythonRate, 1), target: "(peer)", met: nil,
                  numbers: ["notificationsPerSecond": pythonRate]))
    record(Figure(section: "python", what: "  subdesk / Python", value: fmt(intake.median / pythonRate, 1) + "x", target: ">= 15x",
                  met: intake.median / pythonRate >= 15, numbers: ["ratio": intake.median / pythonRate]))
} else {
    record(Figure(section: "python", what: "Apple's Python library", value: "not installed", target: ">= 15x", met: nil))
    log("  (python3 -m venv .build/bench-venv && .build/bench-venv/bin/pip install app-store-server-library)")
}

// MARK: 4. One notification through CGI

log("== one notification through `subdesk ingest --cgi`, process start to answer")
if !wanted("cgi") {
} else if FileManager.default.isExecutableFile(atPath: cgiBinary) {
    log("  binary: \(cgiBinary)\(cgiBinary == deployedBinary ? " (deploy/build.sh: linked statically)" : "")")
    let cgiStore = dataDirectory + "/cgi.db"
    for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: cgiStore + suffix) }
    _ = try Store(path: cgiStore)
    var times: [Double] = []
    let bodyFile = dataDirectory + "/cgi-body.json", answerFile = dataDirectory + "/cgi-answer.txt"
    for body in try signedBodies(Swift.max(15, options.runs * 6)) {
        try body.write(to: URL(fileURLWithPath: bodyFile))
        var env = ProcessInfo.processInfo.environment
        env["REQUEST_METHOD"] = "POST"
        env["CONTENT_LENGTH"] = String(body.count)
        let t = seconds {
            spawn(cgiBinary, ["ingest", "--cgi", "--db", cgiStore, "--root-ca", sample.testRootPath,
                                  "--bundle-id", ScenarioBuilder.demoBundleId, "--app-apple-id",
                                  String(ScenarioBuilder.demoAppAppleId)], environment: env, stdinPath: bodyFile, stdoutPath: answerFile)
        }
        let status = (try? String(contentsOfFile: answerFile, encoding: .utf8)) ?? ""
        if status.hasPrefix("Status: 200") { times.append(t * 1000) }
    }
    let cgi = Spread(times)
    record(Figure(section: "cgi", what: cgiBinary == deployedBinary ? "CGI request, ms (deployment build)" : "CGI request, ms",
                  value: spreadText(cgi, 1), target: "median <= 15 ms",
                  met: cgi.median <= 15, numbers: ["median": cgi.median, "min": cgi.min, "max": cgi.max]))
} else {
    record(Figure(section: "cgi", what: "CGI request", value: "no subdesk binary at \(cgiBinary)", target: "median <= 15 ms", met: nil))
}

if wanted("serve") {
    // The dynamic build beside this one: serve has no static build of its own to compare.
    try ServeBench.run(binary: subdeskBinary, postgres: options.postgres)
}

if wanted("retention") {
    // The responder on the generated store (1M subscribers by default; PostgreSQL's copy too with --postgres).
    try RetentionBench.run(binary: subdeskBinary, postgres: options.postgres)
}

// The relay only when asked (`--only relay`): its backlogs take minutes to write and drain.
if options.only.contains("relay") {
    try RelayBench.run(binary: subdeskBinary, postgres: options.postgres)
}

// MARK: 5. Stores of growing size

/// Reads a file to its end and discards it, which leaves it in the page cache.
func readThrough(_ path: String) throws {
    let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
    defer { try? handle.close() }
    while let chunk = try handle.read(upToCount: 8 << 20), !chunk.isEmpty {}
}

log("== growing stores (generated by `subdesk generate`'s generator)")
var scaleRows: [[String: Double]] = []
for scale in options.scales where wanted("scales") {
    let path = dataDirectory + "/generated-\(scale).db"
    if !FileManager.default.fileExists(atPath: path) {
        log("  generating \(scale) subscribers into \(path) ...")
        let summary = try StoreGenerator(subscribers: scale).generate(into: try Store(path: path))
        record(Figure(section: "generate", what: "generate \(scale) subscribers, s", value: fmt(summary.seconds, 1),
                      target: scale >= 1_000_000 ? "< 180 s for 1M" : "", met: scale >= 1_000_000 ? summary.seconds < 180 : nil,
                      numbers: ["seconds": summary.seconds]))
    }
    // The figures are for a store the server has been serving, so in the page cache. A
    // store left on disk can be cold (a busy host reclaims the cache), and then every
    // lookup is a disk read: read the file once first, and say so.
    let warmed = try seconds { try readThrough(path) }
    log("  read \(path) into the page cache in \(fmt(warmed, 1)) s")
    let store = try Store(path: path)
    // A store generated by an earlier subdesk first brings its counts to this version's metrics.
    let pending = try store.metrics.pendingShareCount()
    if pending > 0 {
        let took = try seconds { try store.metrics.catchUpShares() }
        record(Figure(section: "counts", what: "metrics catch-up of a store from an earlier version, \(pending) subscriptions, s",
                      value: fmt(took, 1), target: "", met: nil, numbers: ["seconds": took, "scale": Double(scale)]))
    }
    // The by-segment aggregates of every subscription, as the first report by segment on
    // such a store builds them.
    let segmentsPending = try store.metrics.pendingSegmentCount()
    if segmentsPending > 0 {
        let took = try seconds { _ = try store.metrics.catchUpSegments() }
        record(Figure(section: "counts", what: "by-segment aggregates built for \(segmentsPending) subscriptions (first report by segment), s",
                      value: fmt(took, 1), target: "", met: nil, numbers: ["seconds": took, "scale": Double(scale)]))
    }
    let now = DateText.nowMillis()
    var rng = SystemRandomNumberGenerator()

    // Lookup by any kind of id, as `subdesk show` does (state re-derived, timeline built).
    var lookups: [Double] = []
    for k in 0..<3_000 {
        let i = Int.random(in: 0..<scale, using: &rng)
        let ids = StoreGenerator.ids(i)
        let id: String
        switch k % 4 {
        case 0: id = ids.userId
        case 1: id = ids.token
        case 2: id = ids.originalTransactionId
        default: id = String(Int64(ids.originalTransactionId)! + 1)
        }
        var found = false
        lookups.append(try seconds { found = try SubscriberReport.load(store: store, id: id, now: now) != nil } * 1000)
        if !found && k % 4 != 3 { log("  lookup \(id) found nothing") }
    }
    let p99 = percentile(lookups, 0.99), p50 = percentile(lookups, 0.5)
    record(Figure(section: "lookup", what: "lookup by any id at \(scale), ms p50 / p99", value: "\(fmt(p50, 3)) / \(fmt(p99, 3))",
                  target: "p99 <= 2 ms", met: p99 <= 2, numbers: ["p50": p50, "p99": p99, "scale": Double(scale)]))

    // Subscribers list: first page, and pages deep in via the keyset cursor.
    let query = SubscriptionQuery(sort: .expires)
    var first: [Double] = [], deep: [Double] = []
    var cursors = try pageCursors(store, query, pages: 40)
    // A cursor far down the list: the row at the middle of expiry order.
    if let middle = try store.subscriptions.page(SubscriptionQuery(sort: .expires, descending: true), limit: 1).first {
        cursors.append(SubscriptionTable.cursor(for: middle, in: query))
    }
    for _ in 0..<(options.runs * 10) {
        first.append(try seconds { _ = try store.subscriptions.page(query, limit: 50) } * 1000)
        let c = cursors.randomElement(using: &rng)
        deep.append(try seconds { _ = try store.subscriptions.page(query, after: c, limit: 50) } * 1000)
    }
    let firstSpread = Spread(first), deepSpread = Spread(deep)
    record(Figure(section: "list", what: "subscribers list first page at \(scale), ms", value: spreadText(firstSpread, 3),
                  target: "<= 20 ms", met: firstSpread.median <= 20, numbers: ["median": firstSpread.median, "scale": Double(scale)]))
    record(Figure(section: "list", what: "subscribers list keyset page at \(scale), ms", value: spreadText(deepSpread, 3),
                  target: "<= 20 ms", met: deepSpread.median <= 20, numbers: ["median": deepSpread.median, "scale": Double(scale)]))

    // The filter as a person types it: each keystroke asks for the first page of what
    // the text typed so far matches (a product word, an id's tail, a user id's middle, a
    // text found nowhere), each new text as new to the store as it would be.
    // Each keystroke reads as the dashboard does (at most its scan limit of rows); the
    // words alternate between the dashboard's default order and expiry order, where the
    // generator puts the premium product far down the list. Enter then reads the whole
    // list for the last text, as the dashboard does.
    var keystrokes: [Double] = [], whole: [Double] = []
    var slowest = (ms: 0.0, text: "")
    for k in 0..<options.runs * 4 {
        let ids = StoreGenerator.ids(Int.random(in: 0..<scale, using: &rng))
        let word = ["premium", String(ids.originalTransactionId.suffix(7)), String(ids.userId.dropFirst(3).prefix(6)),
                    "qqq-\(k)"][k % 4]
        var q = k % 8 < 4 ? SubscriptionQuery(sort: .lastEvent, descending: true) : SubscriptionQuery(sort: .expires)
        q.scanLimit = SubscriptionQuery.keystrokeScanLimit
        for character in word {
            q.text.append(character)
            let ms = try seconds { _ = try store.subscriptions.pageWithin(q, limit: 50) } * 1000
            keystrokes.append(ms)
            if ms > slowest.ms { slowest = (ms, q.text) }
            if ms > 50 { log("  filter keystroke over 50 ms: \"\(q.text)\" took \(fmt(ms, 1)) ms") }
        }
        q.scanLimit = nil
        whole.append(try seconds { _ = try store.subscriptions.pageWithin(q, limit: 50) } * 1000)
    }
    let keySpread = Spread(keystrokes), keyP99 = percentile(keystrokes, 0.99)
    record(Figure(section: "filter", what: "filter per keystroke at \(scale), ms median / p99 (slowest: \(slowest.text))",
                  value: "\(fmt(keySpread.median, 2)) / \(fmt(keyP99, 2))", target: "<= 50 ms", met: keyP99 <= 50,
                  numbers: ["median": keySpread.median, "p99": keyP99, "max": slowest.ms, "scale": Double(scale)]))
    let wholeSpread = Spread(whole)
    record(Figure(section: "filter", what: "filter after Enter (whole list) at \(scale), ms median / max",
                  value: "\(fmt(wholeSpread.median, 2)) / \(fmt(wholeSpread.max, 2))", target: "", met: nil,
                  numbers: ["median": wholeSpread.median, "max": wholeSpread.max, "scale": Double(scale)]))

    // Daily counts for a year.
    let utc = TimeZone(identifier: "UTC")!
    let to = DailyCountsReport.today(in: utc)
    let from = DailyCountsReport.day(to, plus: -364, in: utc)
    let countsSpread = Spread(try yearOfCounts(store))
    record(Figure(section: "counts", what: "metrics (daily counts), 365 days by day at \(scale), ms", value: spreadText(countsSpread, 1),
                  target: "<= 200 ms", met: countsSpread.median <= 200, numbers: ["median": countsSpread.median, "scale": Double(scale)]))

    // Cohorts: 24 months of retention and of realized LTV, as `subdesk cohorts` reads them.
    let cohortSpread = Spread(try cohortReports(store, .retention)), ltvSpread = Spread(try cohortReports(store, .ltv))
    record(Figure(section: "counts", what: "cohort retention, 24 months at \(scale), ms", value: spreadText(cohortSpread, 1),
                  target: "<= 1000 ms", met: cohortSpread.median <= 1000, numbers: ["median": cohortSpread.median, "scale": Double(scale)]))
    record(Figure(section: "counts", what: "cohort LTV, 24 months at \(scale), ms", value: spreadText(ltvSpread, 1),
                  target: "<= 1000 ms", met: ltvSpread.median <= 1000, numbers: ["median": ltvSpread.median, "scale": Double(scale)]))

    // The same year for one product, and every offer type's year side by side (`counts --by offer`).
    let product = SegmentFilter(dimension: .product, value: "app.monthly")
    var oneProduct: [Double] = [], byOffer: [Double] = []
    for _ in 0..<options.runs {
        oneProduct.append(try seconds { _ = try DailyCountsReport.compute(store: store, from: from, to: to, timeZone: utc, filter: product) } * 1000)
        byOffer.append(try seconds {
            for value in try store.metrics.segmentValues(.offer) {
                _ = try DailyCountsReport.compute(store: store, from: from, to: to, timeZone: utc,
                                                  filter: SegmentFilter(dimension: .offer, value: value))
            }
        } * 1000)
    }
    let productSpread = Spread(oneProduct), offerSpread = Spread(byOffer)
    record(Figure(section: "counts", what: "metrics of one product, 365 days by day at \(scale), ms", value: spreadText(productSpread, 1),
                  target: "<= 200 ms", met: productSpread.median <= 200, numbers: ["median": productSpread.median, "scale": Double(scale)]))
    record(Figure(section: "counts", what: "metrics of every offer type (\(try store.metrics.segmentValues(.offer).count)), 365 days by day at \(scale), ms",
                  value: spreadText(offerSpread, 1), target: "", met: nil, numbers: ["median": offerSpread.median, "scale": Double(scale)]))

    // Late news: a notification whose history reaches back into the last month arrives
    // (a subscription's whole history, signed weeks ago), then the month is counted again.
    let monthFrom = DailyCountsReport.day(to, plus: -29, in: utc)
    let late = try builder.bodies(count: options.runs * 6, cycling: scenarios, instance: &nextInstance,
                                  anchor: DateText.nowMillis() - 20 * 86_400_000)
    var repairs: [Double] = []
    let lateIntake = try makeIntake(store)
    for chunk in stride(from: 0, to: late.count, by: 6) {
        repairs.append(try seconds {
            try store.write { for body in late[chunk..<Swift.min(late.count, chunk + 6)] { _ = try lateIntake.ingest(body) } }
            _ = try DailyCountsReport.compute(store: store, from: monthFrom, to: to, timeZone: utc)
        } * 1000)
    }
    let repairSpread = Spread(repairs)
    record(Figure(section: "counts", what: "a month counted again after late notifications (6 per run) at \(scale), ms", value: spreadText(repairSpread, 1),
                  target: "<= 1000 ms", met: repairSpread.median <= 1000, numbers: ["median": repairSpread.median, "scale": Double(scale)]))
    // The same for one product: the late subscriptions' by-segment aggregates catch up first.
    var productRepairs: [Double] = []
    for _ in 0..<options.runs {
        let more = try builder.bodies(count: 6, cycling: scenarios, instance: &nextInstance, anchor: DateText.nowMillis() - 20 * 86_400_000)
        productRepairs.append(try seconds {
            try store.write { for body in more { _ = try lateIntake.ingest(body) } }
            _ = try DailyCountsReport.compute(store: store, from: monthFrom, to: to, timeZone: utc, filter: product)
        } * 1000)
    }
    let productRepairSpread = Spread(productRepairs)
    record(Figure(section: "counts", what: "one product's month counted again after late notifications (6 per run) at \(scale), ms",
                  value: spreadText(productRepairSpread, 1), target: "<= 1000 ms", met: productRepairSpread.median <= 1000,
                  numbers: ["median": productRepairSpread.median, "scale": Double(scale)]))

    // Intake into a store of this size.
    let rate = try ingestRate(store, try signedBodies(1_000))
    record(Figure(section: "intake", what: "intake into the \(scale) store, notifications/s", value: fmt(rate), target: "", met: nil,
                  numbers: ["rate": rate, "scale": Double(scale)]))
    scaleRows.append(["subscribers": Double(scale), "intakePerSecond": rate, "lookupP50Ms": p50, "lookupP99Ms": p99,
                      "firstPageMs": firstSpread.median, "keysetPageMs": deepSpread.median,
                      "filterKeystrokeMedianMs": keySpread.median, "filterKeystrokeP99Ms": keyP99, "dailyCountsMs": countsSpread.median])
}

// MARK: 5b. Both engines side by side

/// Every metric for the last 365 days by day in UTC, `options.runs` times; milliseconds each.
func yearOfCounts(_ store: Store) throws -> [Double] {
    let utc = TimeZone(identifier: "UTC")!
    let to = DailyCountsReport.today(in: utc)
    let from = DailyCountsReport.day(to, plus: -364, in: utc)
    return try (0..<options.runs).map { _ in
        try seconds { _ = try DailyCountsReport.compute(store: store, from: from, to: to, timeZone: utc) } * 1000
    }
}

/// A 24-month cohort report (`subdesk cohorts --from` two years back), `options.runs` times; milliseconds each.
func cohortReports(_ store: Store, _ metric: CohortMetric) throws -> [Double] {
    let now = DateText.nowMillis()
    return try (0..<options.runs).map { _ in
        try seconds { _ = try CohortReport.compute(store: store, metric: metric, from: now - 700 * 86_400_000, to: now, now: now) } * 1000
    }
}

/// Cursors at the ends of the first `pages` pages of 200 rows of `query`.
func pageCursors(_ store: Store, _ query: SubscriptionQuery, pages: Int) throws -> [PageCursor] {
    var cursors: [PageCursor] = []
    var cursor: PageCursor?
    for _ in 0..<pages {
        let page = try store.subscriptions.page(query, after: cursor, limit: 200)
        guard let last = page.last else { break }
        cursor = SubscriptionTable.cursor(for: last, in: query)
        cursors.append(cursor!)
    }
    return cursors
}

/// Look-ups, list pages and a year's counts on one store, as the scales section measures them.
func engineFigures(_ store: Store, scale: Int) throws -> [String: Double] {
    let now = DateText.nowMillis()
    var rng = SystemRandomNumberGenerator()
    var lookups: [Double] = []
    for k in 0..<1_000 {
        let ids = StoreGenerator.ids(Int.random(in: 0..<scale, using: &rng))
        let id = [ids.userId, ids.token, ids.originalTransactionId, String(Int64(ids.originalTransactionId)! + 1)][k % 4]
        lookups.append(try seconds { _ = try SubscriberReport.load(store: store, id: id, now: now) } * 1000)
    }
    let query = SubscriptionQuery(sort: .expires)
    let cursors = try pageCursors(store, query, pages: 20)
    var pages: [Double] = []
    for _ in 0..<(options.runs * 10) {
        pages.append(try seconds { _ = try store.subscriptions.page(query, after: cursors.randomElement(using: &rng), limit: 50) } * 1000)
    }
    let counts = try yearOfCounts(store)
    return ["lookupP50": percentile(lookups, 0.5), "lookupP99": percentile(lookups, 0.99),
            "page": Spread(pages).median, "pageMax": Spread(pages).max, "counts": Spread(counts).median,
            "retention": Spread(try cohortReports(store, .retention)).median, "ltv": Spread(try cohortReports(store, .ltv)).median]
}

/// The machine's busy CPU time so far, in seconds: every core's user, system, interrupt and
/// stolen time from /proc/stat (the writers, their server processes and everything else).
func machineBusySeconds() -> Double {
    guard let text = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
          let line = text.split(separator: "\n").first(where: { $0.hasPrefix("cpu ") }) else { return .nan }
    let ticks = line.split(separator: " ").dropFirst().compactMap { Double($0) }
    guard ticks.count >= 8 else { return .nan }
    // user nice system idle iowait irq softirq steal
    let busy = ticks[0] + ticks[1] + ticks[2] + ticks[5] + ticks[6] + ticks[7]
    return busy / Double(sysconf(Int32(_SC_CLK_TCK)))
}

/// One concurrent-intake run: notifications per second, and the machine's CPU time per
/// notification in milliseconds (whether more writers cost more CPU each, or only wait).
struct WriterRun { var rate: Double; var cpuMs: Double; var busyCores: Double }

/// `writers` `subdesk ingest` processes at once into a new PostgreSQL store, each with its
/// share of `bodies`; notifications per second over the whole run. `interleaved` deals the
/// bodies out one by one, so one subscription's notifications reach every writer (each
/// batch then waits for the others' batches holding the same subscriptions); otherwise
/// each writer takes a run of whole subscription histories.
func concurrentIntake(_ base: String, writers: Int, bodies: [Data], interleaved: Bool) throws -> WriterRun {
    let location = Store.freshPostgresLocation(base)
    _ = try Store(path: location)
    var files: [String] = []
    for w in 0..<writers {
        let file = dataDirectory + "/engines-writer-\(w).ndjson"
        let share = interleaved ? stride(from: w, to: bodies.count, by: writers).map { bodies[$0] }
            : Array(bodies[(w * bodies.count / writers)..<((w + 1) * bodies.count / writers)])
        try writeNDJSON(share, to: file)
        files.append(file)
    }
    let subdesk = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("subdesk").path
    let policy = ["--root-ca", sample.directory + "/test-ca/root.der", "--bundle-id", ScenarioBuilder.demoBundleId,
                  "--app-apple-id", String(ScenarioBuilder.demoAppAppleId)]
    let busyBefore = machineBusySeconds()
    let elapsed = seconds {
        let group = DispatchGroup()
        for file in files {
            group.enter()
            DispatchQueue.global().async {
                _ = spawn(subdesk, ["ingest", "--db", location, "--quiet"] + policy + [file])
                group.leave()
            }
        }
        group.wait()
    }
    let busy = machineBusySeconds() - busyBefore
    let stored = try Store(path: location, mode: .reading).notifications.count()
    guard stored == bodies.count else {
        log("subdesk-bench: \(writers) writers stored \(stored) of \(bodies.count)")
        exit(1)
    }
    return WriterRun(rate: Double(bodies.count) / elapsed, cpuMs: busy * 1000 / Double(bodies.count), busyCores: busy / elapsed)
}

/// The generated store of `scale` subscribers in PostgreSQL: copied once (metrics caught up
/// first), kept in a schema named after its size (`bench_SCALE`, or `schema`), so later runs
/// and sections reuse it. `grown`: a copy that a section writes into (holding more
/// subscriptions than the generated store) is reused too.
func postgresCopy(of sqlite: Store, scale: Int, postgres: String, schema: String? = nil, grown: Bool = false) throws -> Store {
    try sqlite.metrics.catchUpShares()
    let name = schema ?? "bench_\(scale)"
    let location = postgres + (postgres.contains("?") ? "&" : "?") + "schema=\(name)"
    let pg = try Store(path: location)
    let held = try pg.subscriptions.count(), generated = try sqlite.subscriptions.count()
    if grown ? held < generated : held != generated {
        guard try !pg.upkeep.holdsData() else {
            log("subdesk-bench: schema \(name) holds another store; drop it (DROP SCHEMA \(name) CASCADE)")
            exit(1)
        }
        log("  copying the \(scale) store into PostgreSQL (schema \(name)) ...")
        let took = try seconds { try pg.upkeep.copyAll(from: sqlite) }
        record(Figure(section: "engines", what: "migrate the \(scale) store SQLite -> PostgreSQL, s", value: fmt(took, 1),
                      target: "", met: nil, numbers: ["seconds": took, "scale": Double(scale)]))
    }
    return pg
}

if wanted("engines") {
    guard let postgres = options.postgres else {
        log("subdesk-bench: the engines section needs --postgres URI (scripts/pg-cluster start)")
        exit(2)
    }
    for scale in options.scales {
        let path = dataDirectory + "/generated-\(scale).db"
        if !FileManager.default.fileExists(atPath: path) {
            log("  generating \(scale) subscribers into \(path) ...")
            _ = try StoreGenerator(subscribers: scale).generate(into: try Store(path: path))
        }
        let sqlite = try Store(path: path)
        let pg = try postgresCopy(of: sqlite, scale: scale, postgres: postgres)
        let a = try engineFigures(sqlite, scale: scale), b = try engineFigures(pg, scale: scale)
        func both(_ key: String, _ digits: Int) -> String { "\(fmt(a[key]!, digits)) / \(fmt(b[key]!, digits))" }
        record(Figure(section: "engines", what: "lookup p50 at \(scale), ms, SQLite / PostgreSQL", value: both("lookupP50", 3),
                      target: "", met: nil, numbers: ["sqlite": a["lookupP50"]!, "postgres": b["lookupP50"]!, "scale": Double(scale)]))
        record(Figure(section: "engines", what: "lookup p99 at \(scale), ms, SQLite / PostgreSQL", value: both("lookupP99", 3),
                      target: "PostgreSQL <= 5 ms", met: b["lookupP99"]! <= 5,
                      numbers: ["sqlite": a["lookupP99"]!, "postgres": b["lookupP99"]!, "scale": Double(scale)]))
        record(Figure(section: "engines", what: "list page (median) at \(scale), ms, SQLite / PostgreSQL", value: both("page", 3),
                      target: "PostgreSQL <= 50 ms", met: b["page"]! <= 50,
                      numbers: ["sqlite": a["page"]!, "postgres": b["page"]!, "scale": Double(scale)]))
        record(Figure(section: "engines", what: "metrics, 365 days at \(scale), ms, SQLite / PostgreSQL", value: both("counts", 1),
                      target: "", met: nil, numbers: ["sqlite": a["counts"]!, "postgres": b["counts"]!, "scale": Double(scale)]))
        for (key, what) in [("retention", "cohort retention"), ("ltv", "cohort LTV")] {
            record(Figure(section: "engines", what: "\(what), 24 months at \(scale), ms, SQLite / PostgreSQL", value: both(key, 1),
                          target: "SQLite <= 1000, PostgreSQL <= 2000", met: a[key]! <= 1000 && b[key]! <= 2000,
                          numbers: ["sqlite": a[key]!, "postgres": b[key]!, "scale": Double(scale)]))
        }
    }
    // Intake into a new store on each engine, in one process.
    let bodies = try signedBodies(options.intakeBodies)
    let sqlitePath = dataDirectory + "/engines-intake-\(UUID().uuidString).db"
    defer { try? FileManager.default.removeItem(atPath: sqlitePath) }
    let sqliteRate = try ingestRate(try Store(path: sqlitePath), bodies)
    let pgRate = try ingestRate(try Store(path: Store.freshPostgresLocation(postgres)), try signedBodies(options.intakeBodies))
    record(Figure(section: "engines", what: "batch intake, one process, notifications/s, SQLite / PostgreSQL",
                  value: "\(fmt(sqliteRate)) / \(fmt(pgRate))", target: "", met: nil, numbers: ["sqlite": sqliteRate, "postgres": pgRate]))
    // Concurrent writers on PostgreSQL, as several CGI hosts would be.
    for interleaved in [false, true] {
        var runs: [Int: [WriterRun]] = [:]
        for round in 0..<3 {
            // Each round in another order, so a machine slowing down or speeding up over the
            // section does not favour one writer count.
            for writers in [[1, 2, 4], [4, 1, 2], [2, 4, 1]][round] {
                runs[writers, default: []].append(try concurrentIntake(postgres, writers: writers, bodies: try signedBodies(options.intakeBodies),
                                                                       interleaved: interleaved))
            }
        }
        func median(_ writers: Int, _ value: (WriterRun) -> Double) -> Double { Spread(runs[writers]!.map(value)).median }
        let one = median(1, \.rate), two = median(2, \.rate), four = median(4, \.rate)
        let split = interleaved ? "histories dealt out" : "whole histories each"
        record(Figure(section: "engines", what: "PostgreSQL intake, 1 / 2 / 4 writer processes, \(split), notifications/s (median of 3)",
                      value: "\(fmt(one)) / \(fmt(two)) / \(fmt(four)) (x\(fmt(two / one, 2)) / x\(fmt(four / one, 2)))",
                      target: interleaved ? "" : "4 writers >= 2x one", met: interleaved ? nil : four >= 2 * one,
                      numbers: ["one": one, "two": two, "four": four]))
        // What bounds the figure above: the machine's busy cores during the run, and its CPU
        // time per notification (writers and server together). Cores all busy and CPU per
        // notification flat means more writers wait for cores, not for each other.
        let cpu = [1, 2, 4].map { median($0, \.cpuMs) }, cores = [1, 2, 4].map { median($0, \.busyCores) }
        record(Figure(section: "engines", what: "  the same runs: machine CPU ms per notification / busy cores of \(ProcessInfo.processInfo.activeProcessorCount)",
                      value: zip(cpu, cores).map { "\(fmt($0, 2)) / \(fmt($1, 2))" }.joined(separator: ", "),
                      target: "", met: nil,
                      numbers: ["cpuOne": cpu[0], "cpuTwo": cpu[1], "cpuFour": cpu[2], "coresOne": cores[0], "coresTwo": cores[1], "coresFour": cores[2]]))
    }
}

// MARK: 5c. On-call metrics scrape

/// One scrape as `subdesk metrics` does it: the store's reading and the exposition text.
func scrapeTimes(_ store: Store) throws -> Spread {
    let roots = TrustRoots.appleDefault.expiries
    var times: [Double] = []
    for _ in 0..<max(5, options.runs * 3) {
        times.append(try seconds {
            let inputs = OnCallInputs(reading: try OnCallReading.read(from: store, now: DateText.nowMillis()), roots: roots,
                                      quarantineBudgetBytes: IntakePolicy.defaultQuarantineBudgetBytes)
            _ = OnCallMetrics.exposition(inputs)
        } * 1000)
    }
    return Spread(times)
}

if wanted("metrics") {
    for scale in options.scales {
        let path = dataDirectory + "/generated-\(scale).db"
        if !FileManager.default.fileExists(atPath: path) {
            log("  generating \(scale) subscribers into \(path) ...")
            _ = try StoreGenerator(subscribers: scale).generate(into: try Store(path: path))
        }
        let sqlite = try scrapeTimes(try Store(path: path, mode: .reading))
        record(Figure(section: "metrics", what: "metrics scrape at \(scale), SQLite, ms median (min-max)", value: spreadText(sqlite, 2),
                      target: "<= 50 ms", met: sqlite.median <= 50, numbers: ["median": sqlite.median, "scale": Double(scale)]))
        // PostgreSQL: the same store, copied into schema bench_SCALE unless the engines section did.
        if let postgres = options.postgres {
            let pg = try postgresCopy(of: try Store(path: path), scale: scale, postgres: postgres)
            let spread = try scrapeTimes(pg)
            record(Figure(section: "metrics", what: "metrics scrape at \(scale), PostgreSQL, ms median (min-max)",
                          value: spreadText(spread, 2), target: "<= 50 ms", met: spread.median <= 50,
                          numbers: ["median": spread.median, "scale": Double(scale)]))
        }
    }
}

// MARK: 5d. A first report by segment beside a writer

/// A writer's longest wait while `subdesk counts --by product` runs on `location`, whose
/// by-segment shares are all pending (`Store.forgetSegmentAggregates`), as on a store no
/// report by segment has read: a thread ingests one notification at a time (a webhook's
/// write), 10 ms apart, timing each; another posts one notification at a time to `subdesk
/// ingest --cgi` (a process each, as a web server runs it), 100 ms apart; the report runs
/// as its own process. The report's seconds, the writer's longest and median write in ms
/// and how many writes it made, and the CGI requests: how many, how many answered 200, the
/// longest in ms.
func reportBesideWriter(_ location: String, bodies: [Data], cgiBodies: [Data])
    throws -> (report: Double, longest: Double, median: Double, writes: Int, cgi: Int, cgiOK: Int, cgiLongest: Double) {
    try Store(path: location).metrics.forgetSegments()
    let traced = ProcessInfo.processInfo.environment["SUBDESK_CATCHUP_TRACE"].map { !$0.isEmpty } ?? false
    let writer = try makeIntake(try Store(path: location))
    final class Shared: @unchecked Sendable {
        let lock = NSLock()
        var stop = false, waits: [Double] = [], failure: String?, cgi: [(ok: Bool, ms: Double)] = []
        var stopped: Bool { lock.withLock { stop } }
    }
    let shared = Shared(), done = DispatchSemaphore(value: 0)
    Thread.detachNewThread {
        var next = 0
        while !shared.stopped && next < bodies.count {
            do {
                let at = DateText.nowMillis()
                let took = try seconds { _ = try writer.ingest(bodies[next]) } * 1000
                shared.lock.withLock { shared.waits.append(took) }
                // With the catch-up's trace on, the long waits with their times, to match its writes.
                if traced && took > 200 { log("  an ingest from \(at) waited \(fmt(took, 1)) ms") }
            } catch {
                shared.lock.withLock { shared.failure = "\(error)" }
                break
            }
            next += 1
            usleep(10_000)
        }
        done.signal()
    }
    Thread.detachNewThread {
        let bodyFile = dataDirectory + "/segments-cgi-body.json", answerFile = dataDirectory + "/segments-cgi-answer.txt"
        for body in cgiBodies where !shared.stopped {
            try? body.write(to: URL(fileURLWithPath: bodyFile))
            var env = ProcessInfo.processInfo.environment
            env["REQUEST_METHOD"] = "POST"
            env["CONTENT_LENGTH"] = String(body.count)
            let took = seconds {
                spawn(subdeskBinary, ["ingest", "--cgi", "--db", location, "--root-ca", sample.testRootPath,
                                      "--bundle-id", ScenarioBuilder.demoBundleId, "--app-apple-id", String(ScenarioBuilder.demoAppAppleId)],
                      environment: env, stdinPath: bodyFile, stdoutPath: answerFile)
            } * 1000
            let ok = ((try? String(contentsOfFile: answerFile, encoding: .utf8)) ?? "").hasPrefix("Status: 200")
            shared.lock.withLock { shared.cgi.append((ok, took)) }
            usleep(100_000)
        }
        done.signal()
    }
    usleep(200_000)
    let report = seconds { _ = spawn(subdeskBinary, ["counts", "--by", "product", "--db", location]) }
    shared.lock.withLock { shared.stop = true }
    done.wait()
    done.wait()
    let (waits, failure, cgi) = shared.lock.withLock { (shared.waits, shared.failure, shared.cgi) }
    if let failure { log("  the writer stopped: \(failure)") }
    if waits.count == bodies.count { log("  the writer ran out of notifications before the report ended") }
    if cgi.count == cgiBodies.count { log("  the CGI requests ran out before the report ended") }
    return (report, waits.max() ?? 0, Spread(waits).median, waits.count,
            cgi.count, cgi.filter(\.ok).count, cgi.map(\.ms).max() ?? 0)
}

if wanted("segments") {
    for scale in options.scales {
        let path = dataDirectory + "/generated-\(scale).db"
        if !FileManager.default.fileExists(atPath: path) {
            log("  generating \(scale) subscribers into \(path) ...")
            _ = try StoreGenerator(subscribers: scale).generate(into: try Store(path: path))
        }
        // A copy, so the generated store keeps its aggregates for the other sections.
        let copy = dataDirectory + "/segments-\(scale).db"
        try? FileManager.default.removeItem(atPath: copy)
        try Store(path: path).upkeep.backup(to: copy)
        var engines: [(name: String, location: String)] = [("SQLite", copy)]
        if let postgres = options.postgres {
            // A schema of its own, since the writer adds to it.
            _ = try postgresCopy(of: try Store(path: path), scale: scale, postgres: postgres, schema: "segments_\(scale)", grown: true)
            engines.append(("PostgreSQL", postgres + (postgres.contains("?") ? "&" : "?") + "schema=segments_\(scale)"))
        }
        for (name, location) in engines {
            let run = try reportBesideWriter(location, bodies: try signedBodies(6_000), cgiBodies: try signedBodies(1_200))
            record(Figure(section: "segments", what: "first counts --by product at \(scale), every share pending, \(name): report s",
                          value: fmt(run.report, 1), target: "", met: nil, numbers: ["seconds": run.report, "scale": Double(scale)]))
            record(Figure(section: "segments", what: "  a writer beside it, \(run.writes) writes: longest / median ms",
                          value: "\(fmt(run.longest, 1)) / \(fmt(run.median, 1))", target: "longest < 500 ms", met: run.longest < 500,
                          numbers: ["longest": run.longest, "median": run.median, "writes": Double(run.writes), "scale": Double(scale)]))
            record(Figure(section: "segments", what: "  CGI intake beside it, \(run.cgi) requests: answered 200 / longest ms",
                          value: "\(run.cgiOK) / \(fmt(run.cgiLongest, 1))", target: "all 200", met: run.cgiOK == run.cgi,
                          numbers: ["requests": Double(run.cgi), "ok": Double(run.cgiOK), "longest": run.cgiLongest, "scale": Double(scale)]))
        }
        try? FileManager.default.removeItem(atPath: copy)
    }
}

// MARK: 5e. Several apps in one store

/// The apps of the `apps` section's store: subscriber n is the app n mod 3's.
let benchApps = ["com.example.fitness", "com.example.recipes", "com.example.travel"]

/// The 1-minute load average now (the host is shared: each run says what ran beside it).
func loadAverage() -> Double {
    let text = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? ""
    return text.split(separator: " ").first.flatMap { Double($0) } ?? .nan
}

/// What one figure of the `apps` section took, unscoped (every app, as a store of one app
/// reads) and scoped to one app, each the same number of times a round, in ms, round by round.
struct ScopedPair {
    var unscopedRounds: [[Double]] = []
    var scopedRounds: [[Double]] = []
    var unscoped: [Double] { unscopedRounds.flatMap { $0 } }
    var scoped: [Double] { scopedRounds.flatMap { $0 } }
    /// Each round's scoped median over its unscoped median: the two ran back to back, so
    /// what else ran on the host weighs on both alike.
    var roundRatios: [Double] { zip(scopedRounds, unscopedRounds).map { Spread($0).median / Spread($1).median } }
    /// How many rounds the scoped read was the faster of the two.
    var scopedFaster: Int { roundRatios.filter { $0 < 1 }.count }
}

/// One line of the `apps` table.
struct AppsRow {
    var engine: String, what: String, pair: ScopedPair, load: [Double]
}
var appsRows: [AppsRow] = []

/// The figures of the `apps` section on one store: each of `options.runs` rounds times
/// every read unscoped and scoped, in turn (which goes first alternates by round), and
/// notes the load average at the start of the round.
func scopedFigures(_ store: Store, scale: Int) throws -> (figures: [(String, ScopedPair)], load: [Double]) {
    let app = AppScope(bundleId: benchApps[0], includesUnknown: false)
    let now = DateText.nowMillis()
    var rng = SystemRandomNumberGenerator()
    let utc = TimeZone(identifier: "UTC")!
    let to = DailyCountsReport.today(in: utc)
    let from = DailyCountsReport.day(to, plus: -364, in: utc)
    let appFilter = SegmentFilter(dimension: .app, value: app.bundleId)

    // The list as the desk and `subdesk list` read it: by expiry, 50 rows a page; deep
    // pages start at cursors spread over the whole list, the end of every 5,000 rows.
    let everyApp = SubscriptionQuery(sort: .expires), oneApp = SubscriptionQuery(sort: .expires, app: app)
    func cursors(_ q: SubscriptionQuery) throws -> [PageCursor] {
        var found: [PageCursor] = []
        var cursor: PageCursor?
        while true {
            let page = try store.subscriptions.page(q, after: cursor, limit: 5_000)
            guard let last = page.last else { break }
            cursor = SubscriptionTable.cursor(for: last, in: q)
            found.append(cursor!)
        }
        return found
    }
    let deep = (everyApp: try cursors(everyApp), oneApp: try cursors(oneApp))

    var lookup = ScopedPair(), first = ScopedPair(), deepPage = ScopedPair(), counts = ScopedPair()
    var byProduct = ScopedPair(), cohorts = ScopedPair()
    var load: [Double] = []
    // `subdesk show ID` and `subdesk --app NAME show ID`: ids of every kind, at random
    // across the store, or across the scoped app's subscribers (every third).
    func lookups(scoped: Bool, _ count: Int) throws -> [Double] {
        try (0..<count).map { k in
            let n = Int.random(in: 0..<(scoped ? scale / benchApps.count : scale), using: &rng)
            let ids = StoreGenerator.ids(scoped ? n * benchApps.count : n)
            let id = [ids.userId, ids.token, ids.originalTransactionId, String(Int64(ids.originalTransactionId)! + 1)][k % 4]
            var found = false
            let ms = try seconds { found = try SubscriberReport.load(store: store, id: id, now: now, app: scoped ? app : nil) != nil } * 1000
            // A transactionId one past the original is there only when the subscription renewed.
            if !found && k % 4 != 3 { log("  lookup \(id)\(scoped ? " in \(app.bundleId)" : "") found nothing") }
            return ms
        }
    }
    // `subdesk counts --by product`: each product's year, as `runBy` reads them.
    func productYears() throws {
        for value in try store.metrics.segmentValues(.product) {
            _ = try DailyCountsReport.compute(store: store, from: from, to: to, timeZone: utc,
                                              filter: SegmentFilter(dimension: .product, value: value))
        }
    }
    // `subdesk counts --by app`: each app's year side by side.
    func appYears() throws {
        for value in try store.metrics.segmentValues(.app) {
            _ = try DailyCountsReport.compute(store: store, from: from, to: to, timeZone: utc,
                                              filter: SegmentFilter(dimension: .app, value: value))
        }
    }
    for round in 0..<options.runs {
        load.append(loadAverage())
        for scoped in round % 2 == 0 ? [false, true] : [true, false] {
            func note(_ pair: inout ScopedPair, _ values: [Double]) {
                if scoped { pair.scopedRounds.append(values) } else { pair.unscopedRounds.append(values) }
            }
            note(&lookup, try lookups(scoped: scoped, 200))
            let q = scoped ? oneApp : everyApp, c = scoped ? deep.oneApp : deep.everyApp
            note(&first, try (0..<10).map { _ in try seconds { _ = try store.subscriptions.page(q, limit: 50) } * 1000 })
            note(&deepPage, try (0..<10).map { _ in try seconds { _ = try store.subscriptions.page(q, after: c.randomElement(using: &rng), limit: 50) } * 1000 })
            note(&counts, [try seconds {
                _ = try DailyCountsReport.compute(store: store, from: from, to: to, timeZone: utc, filter: scoped ? appFilter : nil)
            } * 1000])
            note(&byProduct, [try seconds { try scoped ? appYears() : productYears() } * 1000])
            note(&cohorts, [try seconds {
                _ = try CohortReport.compute(store: store, metric: .retention, period: .month, from: now - 700 * 86_400_000, to: now,
                                             filters: scoped ? [CohortFilter(dimension: .app, value: app.bundleId)] : [], now: now)
            } * 1000])
        }
    }
    return ([("look-up by any id (show)", lookup), ("list, first page of 50", first), ("list, keyset page of 50 anywhere in it", deepPage),
             ("counts, 365 days by day", counts), ("counts --by product / --by app", byProduct),
             ("cohorts retention, monthly, 24 months", cohorts)], load)
}

if options.only.contains("apps") {
    // Not in the default run: a store of its own per scale (about 3 minutes at 1M, and 5
    // more to copy it into PostgreSQL).
    log("== several apps: \(benchApps.count) apps in one store, each read unscoped and scoped to \(benchApps[0])")
    for scale in options.scales {
        let path = dataDirectory + "/apps-\(scale).db"
        if !FileManager.default.fileExists(atPath: path) {
            log("  generating \(scale) subscribers over \(benchApps.count) apps into \(path) ...")
            let summary = try StoreGenerator(subscribers: scale, bundleIds: benchApps).generate(into: try Store(path: path))
            record(Figure(section: "apps", what: "generate \(scale) subscribers over \(benchApps.count) apps, s", value: fmt(summary.seconds, 1),
                          target: "", met: nil, numbers: ["seconds": summary.seconds, "scale": Double(scale)]))
        }
        try readThrough(path)
        // What the first report by segment builds (one app's counts read them), timed apart.
        func catchUp(_ store: Store, _ name: String) throws {
            try store.metrics.catchUpShares()
            let pending = try store.metrics.pendingSegmentCount()
            guard pending > 0 else { return }
            let took = try seconds { _ = try store.metrics.catchUpSegments() }
            record(Figure(section: "apps", what: "by-segment aggregates built for \(pending) subscriptions, \(name), s", value: fmt(took, 1),
                          target: "", met: nil, numbers: ["seconds": took, "scale": Double(scale)]))
        }
        let sqlite = try Store(path: path)
        try catchUp(sqlite, "SQLite")
        var engines: [(name: String, store: Store)] = [("SQLite", sqlite)]
        if let postgres = options.postgres {
            let pg = try postgresCopy(of: sqlite, scale: scale, postgres: postgres, schema: "apps_\(scale)")
            try catchUp(pg, "PostgreSQL")
            engines.append(("PostgreSQL", pg))
        }
        for (name, store) in engines {
            let (measured, load) = try scopedFigures(store, scale: scale)
            let loadText = "load \(fmt(load.min() ?? .nan, 1))-\(fmt(load.max() ?? .nan, 1))"
            for (what, pair) in measured {
                let u = Spread(pair.unscoped), s = Spread(pair.scoped), ratio = Spread(pair.roundRatios)
                let (up90, sp90) = (percentile(pair.unscoped, 0.9), percentile(pair.scoped, 0.9))
                // `--by app` against `--by product` is no scoped read (`--app` and `--by product` do not
                // go together): shown, not held to the target. The others may be a tenth over, the
                // spread between runs of the same read on this shared host.
                let held = !what.contains("--by")
                record(Figure(section: "apps", what: "\(what) at \(scale), \(name), ms: every app / one app",
                              value: "\(fmt(u.median, 3)) / \(fmt(s.median, 3)) (p90 \(fmt(up90, 3)) / \(fmt(sp90, 3));"
                                  + " by round \(fmt(ratio.median, 2)), faster \(pair.scopedFaster)/\(pair.roundRatios.count))",
                              target: held ? "one app <= 1.1 x every app (\(loadText))" : "(\(loadText))",
                              met: held ? s.median <= 1.1 * u.median : nil,
                              numbers: ["unscoped": u.median, "scoped": s.median, "unscopedP90": up90, "scopedP90": sp90,
                                        "roundRatio": ratio.median, "roundRatioMin": ratio.min, "roundRatioMax": ratio.max,
                                        "scopedFasterRounds": Double(pair.scopedFaster), "rounds": Double(pair.roundRatios.count),
                                        "loadMin": load.min() ?? .nan, "loadMax": load.max() ?? .nan, "scale": Double(scale)]))
                appsRows.append(AppsRow(engine: "\(name) \(scale)", what: what, pair: pair, load: load))
            }
        }
    }
}

// MARK: 6. Dashboard

func which(_ name: String) -> String? {
    for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
        let candidate = "\(dir)/\(name)"
        if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
    }
    return nil
}

log("== dashboard (the real binary in a 120x40 tmux window)")
if !wanted("dashboard") {
} else if let tmux = which("tmux"), FileManager.default.isExecutableFile(atPath: subdeskBinary) {
    let socket = "subdesk-bench-\(getpid())"
    func tmuxRun(_ args: [String]) throws { spawn(tmux, ["-L", socket] + args) }
    func waitFor(_ path: String, seconds: Double) -> String? {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if let text = try? String(contentsOfFile: path, encoding: .utf8), text.hasSuffix("\n") { return text }
            Thread.sleep(forTimeInterval: 0.002)
        }
        return nil
    }
    if let largest = options.scales.max() {
        let store = dataDirectory + "/generated-\(largest).db"
        var launches: [Double] = [], rss: [Double] = []
        for _ in 0..<options.runs {
            let frameFile = dataDirectory + "/first-frame.txt"
            try? FileManager.default.removeItem(atPath: frameFile)
            let started = DateText.nowMillis()
            try tmuxRun(["new-session", "-d", "-x", "120", "-y", "40",
                         "env SUBDESK_FIRST_FRAME_FILE='\(frameFile)' TERM=xterm-256color '\(subdeskBinary)' dashboard --db '\(store)'"])
            if let text = waitFor(frameFile, seconds: 20) {
                let parts = text.split(separator: " ").compactMap { Double($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
                if parts.count == 2 { launches.append(parts[0] - Double(started)); rss.append(parts[1] / 1024) }
            }
            try? tmuxRun(["kill-server"])
        }
        let launch = Spread(launches), memory = Spread(rss)
        record(Figure(section: "dashboard", what: "dashboard launch to first full frame at \(largest), ms", value: spreadText(launch),
                      target: "<= 200 ms", met: launch.median <= 200, numbers: ["median": launch.median]))
        record(Figure(section: "dashboard", what: "dashboard resident memory at first frame, MB", value: spreadText(memory, 1),
                      target: "<= 64 MB", met: memory.max <= 64, numbers: ["max": memory.max]))
    }

    // Bytes written for one changed row: a demo store, one subscription's auto-renew turned off.
    let demoPath = dataDirectory + "/dashboard-demo.db"
    for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: demoPath + suffix) }
    let demo = try Store(path: demoPath)
    let anchor = DateText.nowMillis()
    _ = try DemoStoreBuilder(sample: sample, copies: 1).build(into: demo, anchor: anchor)
    let log = dataDirectory + "/pane-bytes.log"
    try? FileManager.default.removeItem(atPath: log)
    try tmuxRun(["new-session", "-d", "-x", "120", "-y", "40", "TERM=xterm-256color '\(subdeskBinary)' dashboard --db '\(demoPath)'"])
    Thread.sleep(forTimeInterval: 1.5)
    try tmuxRun(["send-keys", "s"])          // sort by expiry: the changed row keeps its place
    Thread.sleep(forTimeInterval: 1.5)
    try tmuxRun(["pipe-pane", "-o", "cat >> '\(log)'"])
    Thread.sleep(forTimeInterval: 0.3)
    func logSize() -> Int { ((try? FileManager.default.attributesOfItem(atPath: log)[.size]) as? NSNumber)?.intValue ?? 0 }
    let idleStart = logSize()
    Thread.sleep(forTimeInterval: 2)
    let idle = logSize() - idleStart
    // "renewals" gets one more notification: auto-renew off. Earlier steps come again as duplicates.
    var scenario = scenarios[3]
    scenario.steps.append(.autoRenew(false, at: -3_600_000))
    let intakeForChange = try makeIntake(demo)
    let before = logSize()
    for body in try builder.bodies(for: scenario, instance: 3, anchor: anchor) { _ = try intakeForChange.ingest(body) }
    Thread.sleep(forTimeInterval: 2)
    let changed = logSize() - before
    try tmuxRun(["resize-window", "-x", "119", "-y", "40"])
    Thread.sleep(forTimeInterval: 1)
    let beforeFull = logSize()
    try tmuxRun(["resize-window", "-x", "120", "-y", "40"])
    Thread.sleep(forTimeInterval: 1.5)
    let full = logSize() - beforeFull
    try? tmuxRun(["kill-server"])
    record(Figure(section: "dashboard", what: "bytes to the terminal: one changed row (2 s window)", value: "\(changed) (idle 2 s: \(idle))",
                  target: "only changed cells", met: changed > 0 && changed < full / 4,
                  numbers: ["changedRow": Double(changed), "idle": Double(idle), "fullRepaint": Double(full)]))
    record(Figure(section: "dashboard", what: "bytes to the terminal: full repaint after a resize", value: "\(full)", target: "(for scale)", met: nil))
} else {
    record(Figure(section: "dashboard", what: "dashboard figures", value: "tmux or the subdesk binary missing", target: "", met: nil))
}

// MARK: Report

if !scaleRows.isEmpty {
    print("How cost grows with the store (medians; lookup p99):")
    print(["subscribers", "intake/s", "lookup p50", "lookup p99", "first page", "keyset page", "counts 365d"]
        .map { String(repeating: " ", count: max(0, 13 - $0.count)) + $0 }.joined(separator: " "))
    for row in scaleRows {
        let cells = [fmt(row["subscribers"]!), fmt(row["intakePerSecond"]!), fmt(row["lookupP50Ms"]!, 3) + "ms",
                     fmt(row["lookupP99Ms"]!, 3) + "ms", fmt(row["firstPageMs"]!, 3) + "ms", fmt(row["keysetPageMs"]!, 3) + "ms",
                     fmt(row["dailyCountsMs"]!, 1) + "ms"]
        print(cells.map { String(repeating: " ", count: max(0, 13 - $0.count)) + $0 }.joined(separator: " "))
    }
    print("")
}
if !appsRows.isEmpty {
    print("Several apps in one store: every app / one app, ms (median, p90; the load average over the runs);")
    print("by round: the median of each round's one app / every app (min-max), and the rounds one app was faster:")
    print(pad("store", 18) + " " + pad("read", 40) + " " + pad("every app", 20) + " " + pad("one app", 20) + " " + pad("one / every", 12)
          + " " + pad("by round", 18) + " " + pad("faster", 7) + " load")
    for row in appsRows {
        let u = Spread(row.pair.unscoped), s = Spread(row.pair.scoped), ratio = Spread(row.pair.roundRatios)
        print(pad(row.engine, 18) + " " + pad(row.what, 40) + " " + pad("\(fmt(u.median, 3)) (\(fmt(percentile(row.pair.unscoped, 0.9), 3)))", 20)
              + " " + pad("\(fmt(s.median, 3)) (\(fmt(percentile(row.pair.scoped, 0.9), 3)))", 20) + " " + pad(fmt(s.median / u.median, 2), 12)
              + " " + pad("\(fmt(ratio.median, 2)) (\(fmt(ratio.min, 2))-\(fmt(ratio.max, 2)))", 18)
              + " " + pad("\(row.pair.scopedFaster)/\(row.pair.roundRatios.count)", 7)
              + " \(fmt(row.load.min() ?? .nan, 1))-\(fmt(row.load.max() ?? .nan, 1))")
    }
    // Round by round (which read went first alternates: unscoped first in rounds 1, 3, ...).
    for engine in Set(appsRows.map(\.engine)).sorted() {
        let rows = appsRows.filter { $0.engine == engine }
        print("\(engine), one app / every app by round (load at the round's start):")
        for (k, load) in rows[0].load.enumerated() {
            print("  round \(k + 1) (\(k % 2 == 0 ? "every app first" : "one app first"), load \(fmt(load, 2))): "
                  + rows.map { fmt($0.pair.roundRatios[k], 2) }.joined(separator: " "))
        }
    }
    print("")
}
if options.json {
    let object = figures.map { f -> [String: Any] in
        ["section": f.section, "what": f.what, "value": f.value, "target": f.target, "met": f.met as Any? ?? NSNull(), "numbers": f.numbers]
    }
    print(JSONText.render(object))
} else {
    print(pad("figure", 58) + " " + pad("median (min-max)", 34) + " " + pad("target", 36) + " met")
    for f in figures {
        print(pad(f.what, 58) + " " + pad(f.value, 34) + " " + pad(f.target, 36) + " " + (f.met.map { $0 ? "yes" : "NO" } ?? ""))
    }
}
