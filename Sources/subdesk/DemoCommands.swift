import Foundation
import SubdeskScenarios
import SubscriptionCore

/// `demo` and `simulate`: a store to explore, and fresh traffic for live views.
enum DemoCommands {
    static let demoSpec: CommandSpec = CommandSpec(
        name: "demo", abstract: "build a demo store from sample-data and open the dashboard on it",
        usage: "subdesk demo [--db PATH] [--copies N] [--no-dashboard] [--force]",
        discussion: """
        Builds a demo store from sample-data/scenarios (every lifecycle: trials, intro
        offers, renewals, upgrades, downgrades, grace periods, billing retry, expiries,
        refunds, family sharing...), signing each notification with the TEST ONLY demo CA
        and storing it through the real intake path, then opens the dashboard on it.
        The default store is $XDG_DATA_HOME/subdesk/demo.db; it is rebuilt each time. A demo
        store is marked as one in the store itself, and only a demo store is ever replaced:
        any other file at PATH (a real store, a text file) is refused unless --force.
        While no real store exists at the default place, commands that read (and the
        dashboard) show the demo store, and say so; `subdesk --db PATH` reopens a demo store
        without rebuilding it.
        """,
        options: [
            .value(.copies, "N", "copies of every scenario (default 6, at most 10000)"),
            .flag(.noDashboard, "build the store and stop"),
            sampleData,
            .flag(.force, "replace a file at PATH that is not a demo store"),
        ],
        groups: [DashboardCommand.settings, .apple],
        action: StoreAction(words: "build a demo store", privilege: .insert, table: "notifications"),
        installedConfig: false,
        run: { context in
            let path = try buildDemo(context)
            if context.arguments.has(.noDashboard) { return 0 }
            return try DashboardCommand.open(context, databasePath: path)
        })

    static let sampleData = CommandOption.value(.sampleData, "DIR", "the sample-data folder (default: found beside the executable or the sources)")

    static let simulateSpec: CommandSpec = CommandSpec(
        name: "simulate", abstract: "feed fresh signed demo notifications, for live demos",
        usage: """
        subdesk simulate [--db PATH] [--rate N] [--duration SECONDS]
        subdesk simulate --ndjson [--count N]
        subdesk --config FILE --app NAME simulate [--ndjson]
        """,
        discussion: """
        Feeds freshly signed demo notifications (N per second, default 5) through intake
        for SECONDS (default 60), for live demos of the feed. The store is the demo store
        unless --db names another demo store; anything but a demo store is refused, since
        the bodies are signed by the TEST ONLY demo CA for the demo app. With --ndjson it
        prints N fresh bodies (default 20), one per line, and touches no store: to rehearse
        intake, pipe them to `subdesk ingest` or post them to the webhook with settings that
        trust the demo's test CA (README: Rehearsing intake on the demo).
        With --app NAME the bodies are signed for that configured app instead of the demo
        app (its bundle id, Apple ID and first environment), and stored under the
        configuration's intake settings: a second app beside the demo's, for a rehearsal of
        several apps (README: A two-app desk, step by step).
        """,
        options: [
            .value(.rate, "N", "notifications per second (default 5)"),
            .value(.duration, "SECONDS", "how long (default 60)"),
            .flag(.ndjson, "print fresh signed bodies, one per line, instead of storing them"),
            .value(.count, "N", "with --ndjson: how many bodies (default 20, at most 100000)"),
            sampleData,
        ],
        action: StoreAction(words: "feed the demo store", privilege: .insert, table: "notifications"),
        installedConfig: false,
        run: simulate)

    static func demoPath(_ context: Context) -> String {
        context.arguments.value(.db) ?? (Configuration.dataDirectory(environment: context.environment) + "/demo.db")
    }

    static func buildDemo(_ context: Context) throws -> String {
        let path = demoPath(context)
        switch StoreLocation.kind(ofFileAt: path) {
        case .missing, .demo: break
        case .store(let notifications) where !context.arguments.has(.force):
            throw UsageError("\(path) is a subdesk store that is not a demo store (\(notifications) notifications); "
                             + "refusing to replace it: name another --db, or pass --force to replace it")
        case .other(let what) where !context.arguments.has(.force):
            throw UsageError("\(path) is \(what), not a demo store; refusing to replace it: name another --db, or pass --force")
        default: break
        }
        if StoreLocation(path).isPostgres, try Store(path: path, mode: .createIfMissing).upkeep.holdsData() {
            // No file to replace: building into a store that holds data would mix the two.
            throw UsageError("\(StoreLocation(path).redacted) holds data; a demo is built into an empty PostgreSQL store: "
                             + "name a new schema (?schema=NAME)")
        }
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: path + suffix) {
            try FileManager.default.removeItem(atPath: path + suffix)
        }
        let sample = try SampleData.locate(explicit: context.arguments.value(.sampleData))
        let store = try Store(path: path)
        try store.upkeep.markAsDemo()
        let copies = try context.arguments.int(.copies) ?? 6
        guard copies >= 1 && copies <= 10_000 else { throw UsageError("--copies must be between 1 and 10000") }
        let started = Date()
        // A progress line on a terminal, for builds long enough to wonder about.
        let showProgress = isatty(STDERR_FILENO) == 1 && copies >= 20
        let summary = try DemoStoreBuilder(sample: sample, copies: copies).build(into: store, anchor: DateText.nowMillis()) { built, total in
            guard showProgress else { return }
            FileHandle.standardError.write(Data("\r\u{1B}[Kdemo: \(built)/\(total) copies built".utf8))
            if built == total { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
        }
        // The pages still in the write-ahead log go into the file first, so the size said is
        // the size of the file (what `ls` shows, what a copy takes).
        store.upkeep.finishOneShotWrites(walLimitBytes: 0)
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        FileHandle.standardError.write(Data("""
            demo store \(path): \(summary.scenarios) scenarios x \(copies), \(summary.notifications) notifications, \
            \(summary.subscriptions) subscriptions in \(String(format: "%.1f", Date().timeIntervalSince(started)))s\
            , \(size / 1024) KiB
            open it again with: subdesk --db \(path)   (live traffic into it: subdesk simulate)\n
            """.utf8))
        return path
    }

    static func simulate(_ context: Context) throws -> Int32 {
        if context.arguments.has(.ndjson) { return try printFreshBodies(context) }
        let rate = try context.arguments.double(.rate) ?? 5
        let duration = try context.arguments.double(.duration) ?? 60
        guard rate > 0 && rate <= 10_000 else { throw UsageError("--rate must be between 0 and 10000 per second") }
        guard duration > 0 && duration <= 86_400 else { throw UsageError("--duration must be between 0 and 86400 seconds") }
        let sample = try SampleData.locate(explicit: context.arguments.value(.sampleData))
        let path = demoPath(context)
        switch StoreLocation.kind(ofFileAt: path) {
        case .demo: break
        case .missing:
            throw UsageError("no demo store at \(path): build one with `subdesk demo\(context.arguments.value(.db).map { " --db \($0)" } ?? "")`")
        case .store:
            throw UsageError("\(path) is not a demo store; simulate writes TEST-CA notifications and only feeds a demo store")
        case .other(let what):
            throw UsageError("\(path) is \(what), not a demo store")
        }
        let store = try context.openStore(path: path, mode: .existing)
        let builder = try simulatedApp(context, signer: try sample.signer())
        // Bodies for a configured app are held to the configuration's rules, as its
        // notification URL would hold them; the demo's own are the demo's.
        let policy = context.arguments.value(.app) == nil ? SampleData.demoPolicy : try context.intakePolicy()
        Output.warn("simulating into the demo store \(path)")
        let intake = Intake(store: store, verifier: SignedDataVerifier(roots: try sample.trustRoots()), policy: policy)
        let scenarios = try sample.scenarios()
        var generator = SystemRandomNumberGenerator()
        let start = Date()
        var sent = 0
        var pending: [Data] = []
        var instance = 5_000_000 + Int.random(in: 0..<1_000_000, using: &generator) * 10
        while Date().timeIntervalSince(start) < duration {
            if pending.isEmpty {
                let scenario = scenarios[Int.random(in: 0..<scenarios.count, using: &generator)]
                instance += 1
                pending = try builder.bodies(for: scenario, instance: instance, anchor: DateText.nowMillis())
            }
            _ = try intake.ingest(pending.removeFirst(), source: "simulate")
            sent += 1
            let due = start.addingTimeInterval(Double(sent) / rate)
            let wait = due.timeIntervalSinceNow
            if wait > 0 { Thread.sleep(forTimeInterval: min(wait, duration)) }
        }
        Output.line("simulated \(sent) notifications in \(String(format: "%.1f", Date().timeIntervalSince(start)))s")
        return 0
    }

    /// The app simulated bodies are signed for: the demo app, or the configured app `--app`
    /// names (its bundle id and Apple ID; its first environment, Production when it accepts both).
    static func simulatedApp(_ context: Context, signer: JWSSigner) throws -> ScenarioBuilder {
        guard let text = context.arguments.value(.app) else { return ScenarioBuilder(signer: signer) }
        let app: ConfiguredApp
        do { app = try context.configuredApps().configured(named: text) } catch let e as ConfigurationError { throw UsageError(e.description) }
        return ScenarioBuilder(signer: signer, bundleId: app.bundleId ?? ScenarioBuilder.demoBundleId,
                               appAppleId: app.appAppleId ?? ScenarioBuilder.demoAppAppleId,
                               environment: app.environmentsAsked[0])
    }

    /// `simulate --ndjson`: fresh bodies, signed now by the demo's test CA for the demo app,
    /// each with its own notificationUUID, one per line for `subdesk ingest` or a webhook.
    static func printFreshBodies(_ context: Context) throws -> Int32 {
        let count = try context.arguments.int(.count) ?? 20
        guard (1...100_000).contains(count) else { throw UsageError("--count must be between 1 and 100000, got \(count)") }
        let sample = try SampleData.locate(explicit: context.arguments.value(.sampleData))
        let builder = try simulatedApp(context, signer: try sample.signer())
        let scenarios = try sample.scenarios()
        var generator = SystemRandomNumberGenerator()
        var instance = 5_000_000 + Int.random(in: 0..<1_000_000, using: &generator) * 10
        var printed = 0
        while printed < count {
            let scenario = scenarios[Int.random(in: 0..<scenarios.count, using: &generator)]
            instance += 1
            for body in try builder.bodies(for: scenario, instance: instance, anchor: DateText.nowMillis()) where printed < count {
                FileHandle.standardOutput.write(ExportedBody.line(body) + Data("\n".utf8))
                printed += 1
            }
        }
        return 0
    }
}
