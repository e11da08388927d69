import Foundation
import SubscriptionCore
import TerminalUI

/// Settings resolved from flags, then the config file, then defaults: flags win.
struct Context {
    let arguments: Arguments
    let config: Configuration
    let environment: [String: String]

    /// The config files looked at, and the default ones this user could not read.
    let configLookup: Configuration.Lookup
    /// The installed config this command falls back to (`/etc/subdesk/config` for an
    /// installed subdesk), nil when it never reads one (run from a build folder, or a command
    /// such as `demo` that works on its own store).
    let installedConfig: String?

    /// `installedConfig` is `/etc/subdesk/config` for a subdesk installed in a system folder;
    /// a config file the deployment names (`--config`, `SUBDESK_CONFIG`) must be there:
    /// falling back to defaults would verify against other roots and answer 4xx, which Apple
    /// never retries.
    init(arguments: Arguments, environment: [String: String] = ProcessInfo.processInfo.environment,
         installedConfig: String? = Context.installedConfigOfThisExecutable) throws {
        self.arguments = arguments
        self.environment = environment
        self.installedConfig = installedConfig
        configLookup = try Configuration.lookUp(named: arguments.value(.config), environment: environment, installed: installedConfig)
        config = configLookup.configuration
        if !arguments.has(.quiet) {
            for path in configLookup.skipped {
                Output.notice("skipped \(path): this user cannot read it, so its settings (and the store it names) are not used here")
            }
        }
    }

    static var installedConfigOfThisExecutable: String? {
        Configuration.installedPath(executablePath: Bundle.main.executablePath ?? CommandLine.arguments.first ?? "")
    }

    /// An option's value: the flag when given, else the config key its declaration stands in for.
    func setting(_ option: CommandOption) -> String? { arguments.value(option.key) ?? option.configKey.flatMap(config.string) }

    var databasePath: String {
        setting(.store) ?? Configuration.defaultDatabasePath(environment: environment)
    }

    /// The store a command that reads opens: the configured one, except that while no store
    /// exists at the default place and none is named, the demo store stands in for it (and
    /// the command says so), so `subdesk demo` then `subdesk show ID` look at the same store.
    var readingDatabasePath: String {
        guard let standIn = demoStandIn else { return databasePath }
        if !arguments.has(.quiet) { Output.warn(standIn.notice) }
        return standIn.demo
    }

    /// Whether a store was named (`--db`, `db` in the config, `SUBDESK_DB`) rather than the
    /// default place taken.
    var storeIsNamed: Bool { setting(.store) != nil || !(environment["SUBDESK_DB"] ?? "").isEmpty }

    /// The demo store a reading command shows instead of the configured one, and why; nil
    /// when a store is named or exists at the default place, or no demo store exists.
    var demoStandIn: (demo: String, notice: String)? {
        let path = databasePath
        guard !storeIsNamed, !FileManager.default.fileExists(atPath: path) else { return nil }
        let demo = DemoCommands.demoPath(self)
        guard FileManager.default.fileExists(atPath: demo) else { return nil }
        return (demo, "no store at \(path) yet; showing the demo store \(demo)")
    }

    /// Opens the store at `path`, else the configured one. `busyTimeoutMs` is how long a write
    /// waits for other writers unless `--busy-timeout-ms` or `busy_timeout_ms` says otherwise.
    /// A missing store is created only for `.createIfMissing` (and said so); otherwise the
    /// command is refused with what to do. Only `.reading` may show the demo store in place
    /// of a missing configured one: a write meant for the real store must never land in the demo.
    func openStore(path: String? = nil, busyTimeoutMs: Int32 = Store.defaultBusyTimeoutMs,
                   mode: Store.OpenMode) throws -> Store {
        var timeout = busyTimeoutMs
        if let text = setting(.busyTimeout) {
            guard let ms = Int32(text), ms >= 0 else { throw UsageError("busy timeout must be milliseconds, got \(text)") }
            timeout = ms
        }
        let target = path ?? (mode == .reading ? readingDatabasePath : databasePath)
        let store: Store
        do {
            store = try Store(path: target, busyTimeoutMs: timeout, mode: mode)
        } catch let missing as StoreNotFound {
            throw UsageError(Context.missingStoreMessage(missing.path))
        }
        if store.opening.created && !arguments.has(.quiet) { Output.warn("created a new store at \(target)") }
        if store.opening.readAsSnapshot {
            Output.warn("\(target) is read as a snapshot: this user cannot create its -shm lock file beside it, "
                        + "so writes made meanwhile by its owner are not seen")
        }
        if let newer = store.opening.newerSchemaVersion {
            Output.warn("\(target) was written by a newer subdesk (schema \(newer)); reading it without changing it")
        }
        return store
    }

    static func missingStoreMessage(_ path: String) -> String {
        if StoreLocation(path).isPostgres {
            return "no store at \(path): create it with `subdesk db init --db URI` (as the database owner), "
                + "or copy one there with `subdesk migrate --from STORE --to URI`"
        }
        return "no store at \(path): create it with `subdesk init --db \(path)` (a deployment does this once), "
            + "build the demo store with `subdesk demo`, or name an existing store with --db PATH (or db = PATH in the config)"
    }

    var rootFiles: [String] { arguments.values(.rootCa).isEmpty ? config.list(.rootCa) : arguments.values(.rootCa) }

    func trustRoots() throws -> TrustRoots {
        let files = rootFiles
        return files.isEmpty ? TrustRoots.appleDefault : try TrustRoots(files: files)
    }

    /// The trust files (config, root certificates) that users other than the owner can write.
    var trustFileProblems: [String] {
        (config.path.flatMap { SecretFile.trustProblem($0, what: "config file") }.map { [$0] } ?? [])
            + rootFiles.compactMap { SecretFile.trustProblem($0, what: "root certificate") }
    }

    /// A config file every local user may read that leads to secrets or to the store: said
    /// by `doctor` (the package installs it 0640 root:subdesk).
    var configReadableByOthers: String? {
        guard let path = config.path, let mode = SecretFile.permissions(path), mode & 0o004 != 0 else { return nil }
        let named = config.keysNamingSecrets
        guard !named.isEmpty else { return nil }
        return "\(path) is readable by every local user (mode \(String(mode & 0o777, radix: 8))) and names "
            + named.joined(separator: ", ") + ": chmod o-r it (the package installs it 0640, group subdesk)"
    }

    /// The apps the configuration declares, with the flags that describe the top-level app applied.
    func configuredApps() throws -> ConfiguredApps {
        var flags = ConfiguredApps.Overrides()
        (flags.bundleId, flags.appAppleId, flags.environment) = (arguments.value(.bundleId), arguments.value(.appAppleId), arguments.value(.environment))
        (flags.sharedSecretFile, flags.allowV1) = (arguments.value(.sharedSecretFile), arguments.has(.allowV1))
        (flags.apiKeyFile, flags.apiKeyId, flags.apiIssuerId) = (arguments.value(.apiKeyFile), arguments.value(.apiKeyId), arguments.value(.apiIssuerId))
        do { return try ConfiguredApps(configuration: config, overrides: flags) } catch let e as ConfigurationError { throw UsageError(e.description) }
    }

    /// The app `--app` names (its name, bundle id or Apple ID), whose records alone a command
    /// reads; nil without `--app`, or for the one app of a configuration that names no bundle id.
    func appScope() throws -> AppScope? {
        guard let text = arguments.value(.app) else { return nil }
        do { return try configuredApps().scope(named: text) } catch let e as ConfigurationError { throw UsageError(e.description) }
    }

    /// The configured apps when there are several (a list then names each row's app), else nil.
    func appsToName() throws -> ConfiguredApps? {
        let apps = try configuredApps()
        return apps.apps.count > 1 ? apps : nil
    }

    func intakePolicy() throws -> IntakePolicy {
        var policy = IntakePolicy()
        do {
            try policy.serve(try configuredApps()) { path, _ in try SecretFile.readText(path, what: "shared secret", warn: Output.warn) }
        } catch let e as SecretFileError {
            throw UsageError(e.description)
        }
        let allowed = arguments.values(.allowEnvironment) + config.list(.allowEnvironments)
        policy.allowedTestEnvironments = Set(try allowed.map { text in
            guard let env = AppStoreEnvironment.parse(text) else { throw UsageError("unknown environment \(text)") }
            return env.rawValue
        })
        if let text = setting(.revocationCheck) {
            guard let mode = RevocationCheckMode(rawValue: text.lowercased()) else {
                throw UsageError("revocation check must be off or ocsp, got \(text) (--revocation-check or revocation_check)")
            }
            policy.revocationCheck = mode
        }
        if let text = config.string(.quarantineBudgetMb) {
            // At most 1 TiB: a larger number would shift past 64 bits into a small or negative budget.
            guard let mb = Int64(text), (0...(1 << 20)).contains(mb) else {
                throw UsageError("quarantine_budget_mb must be a whole number of MiB from 0 to 1048576 (1 TiB), got \(text)")
            }
            policy.quarantineBudgetBytes = mb << 20
        }
        return policy
    }

    func makeIntake(store: Store) throws -> Intake {
        for problem in trustFileProblems { Output.warn(problem) }
        // The store remembers checked chains, so one-shot processes (CGI) check each chain
        // once; without this host's key nothing is remembered or recalled (every chain is
        // checked in full, and doctor says why).
        let key = try? ChainMemoryKey.load(path: chainKeyPath)
        let policy = try intakePolicy()
        let roots = try trustRoots()
        let revocation = policy.revocationCheck == .ocsp
            ? OCSPRevocationChecker(roots: roots, transport: HTTPOCSPTransport()) : nil
        let intake = Intake(store: store, verifier: SignedDataVerifier(roots: roots, memory: store, memoryKey: key, revocation: revocation),
                            policy: policy)
        intake.forwarding = try forwardTargets()
        return intake
    }

    /// The `[forward]` targets the config declares, checked against its apps.
    func forwardTargets() throws -> ForwardTargets {
        do { return try ForwardTargets(configuration: config, apps: try configuredApps()) } catch let e as ConfigurationError {
            throw UsageError(e.description)
        }
    }

    /// Where this host keeps the key that seals remembered chain checks: `chain_key_file`,
    /// else beside a SQLite store (its folder is the receiver's own), else in subdesk's
    /// data folder. Never in the store: that is what the key guards against.
    var chainKeyPath: String {
        if let path = config.string(.chainKeyFile) { return path }
        let store = databasePath
        if StoreLocation(store).isFile {
            return ((store as NSString).deletingLastPathComponent as NSString).appendingPathComponent("chain-memory.key")
        }
        return Configuration.dataDirectory(environment: environment) + "/chain-memory.key"
    }

    var wantsJSON: Bool { arguments.has(.json) }
}

/// Where subdesk writes: stdout for results, stderr for diagnostics.
enum Output {
    static func line(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }
    /// `text` as it is, for text that ends in its own newline (a file's content).
    static func text(_ text: String) {
        FileHandle.standardOutput.write(Data(text.utf8))
    }
    static func error(_ text: String) {
        FileHandle.standardError.write(Data(("subdesk: " + safe(text) + "\n").utf8))
    }
    static func warn(_ text: String) {
        FileHandle.standardError.write(Data(("subdesk: warning: " + safe(text) + "\n").utf8))
    }
    /// A diagnostic as a terminal may show it: every line through the one sanitiser
    /// (`SafeText`), so a value a message echoes (an argument, a file's name, a payload's
    /// field) cannot carry an escape sequence to the terminal. Its own line breaks stay.
    static func safe(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { SafeText.sanitize(String($0)) }.joined(separator: "\n")
    }
    static func json(_ object: Any) { line(JSONText.render(object)) }
    /// A notice beside a result (work waiting elsewhere), on stderr so a pipe reads only the result.
    static func notice(_ text: String) {
        FileHandle.standardError.write(Data(("subdesk: " + safe(text) + "\n").utf8))
    }
    /// How far a long command has come, on stderr (results stay alone on stdout).
    static func progress(_ text: String) {
        FileHandle.standardError.write(Data(("subdesk: " + text + "\n").utf8))
    }
}
