import Foundation
import SubscriptionCore
import TerminalUI

/// `doctor`, `backup` and `quarantine replay`: looking after a store.
enum MaintenanceCommands {
    static let doctorSpec: CommandSpec = CommandSpec(
        name: "doctor", abstract: "check the store, roots and config",
        usage: "subdesk doctor [--probe] [--json]",
        discussion: """
        Checks the store and the set-up: SQLite integrity, schema version, the audit log's
        guards, WAL size, quarantined bodies and the quarantine's budget, test-CA data in a
        store that is no demo store, the trusted roots and their expiry, files others can
        write, the config (bundle id, app Apple id, secret files), and what revalidation
        needs (API key, shared secret, the subdesk-http helper). On PostgreSQL also the audit
        triggers' functions, who holds what a write would wait for (user, pid, application,
        since when), whether every login may connect, and whether the read and support
        logins' connection limits leave enough of the server's slots for intake and the
        owner (each such login without a limit is named). For each [forward NAME] target:
        its URL (https, or plain http to this host) and its secret file (there, readable,
        and not by others); with --probe also whether its host takes a TCP connection on
        its port (closed at once: nothing is sent). Exits 0 when nothing failed, 1
        otherwise. Takes the settings intake and revalidation read, to check them.
        """,
        options: [.quiet, .flag(.probe, "also connect to each [forward] target's host and port (sending nothing)")],
        groups: [.intake, .apple],
        run: doctor)

    static let backupSpec: CommandSpec = CommandSpec(
        name: "backup", arguments: "PATH", abstract: "consistent online copy of the store",
        usage: "subdesk backup PATH",
        discussion: """
        Copies the store to PATH: a SQLite store with SQLite's online backup, a PostgreSQL
        store with `pg_dump --format=custom` of its schema (restore with pg_restore; needs
        postgresql-client). Either is a consistent copy, safe to take while intake keeps
        writing. The file is made readable and writable by you only (0600), as stores are: it
        holds the same user ids, tokens and purchases. Refuses to overwrite an existing file.
        """,
        run: backup)

    static let initSpec: CommandSpec = CommandSpec(
        name: "init", abstract: "create an empty store (a deployment does this once; CGI never creates one)",
        usage: "subdesk init [--db PATH]",
        discussion: """
        Creates an empty store at PATH (or the configured one), readable and writable by its
        owner only, with its folder. `ingest --cgi` never creates a store: a missing one is a
        broken set-up, answered 503 so Apple retries, so a deployment runs this once as the
        web server's user. An existing store is left as it is.
        """,
        action: StoreAction(words: "create a store", privilege: .insert, table: "schema_version"),
        run: initStore)

    static func initStore(_ context: Context) throws -> Int32 {
        guard context.arguments.positionals.isEmpty else { throw UsageError("init takes no arguments; name the store with --db PATH") }
        let path = context.databasePath
        let store = try Store(path: path, mode: .createIfMissing)
        Output.line(store.opening.created ? "created an empty store at \(path)"
                    : "a store already exists at \(path) (schema \(store.schemaVersion)); left as it is")
        return 0
    }

    struct Check { var name: String; var level: String; var detail: String }

    static func doctor(_ context: Context) throws -> Int32 {
        var checks: [Check] = []
        func add(_ name: String, _ level: String, _ detail: String) { checks.append(Check(name: name, level: level, detail: detail)) }
        // As other reading commands: the demo store stands in while no store exists (said so).
        let path = context.readingDatabasePath
        var isDemo = false
        var opened: Store?
        let location = StoreLocation(path)
        if let problem = location.problem {
            add("store", "fail", problem)
        } else if !location.isPostgres && !FileManager.default.fileExists(atPath: path) {
            add("store", "fail", Context.missingStoreMessage(path))
        } else {
            do {
                let store = try context.openStore(path: path, mode: .reading)
                opened = store
                let h = try store.upkeep.health()
                isDemo = store.upkeep.isDemo
                add("store", "ok", "\(store.path), \((h.fileBytes ?? 0) / 1024) KiB" + (isDemo ? " (a demo store)" : ""))
                if !isDemo, try store.upkeep.holdsTestCAData() {
                    add("test data", "fail", "this store is no demo store but holds notifications signed by the TEST ONLY demo CA "
                        + "(subdesk simulate or a test root was pointed at it); rebuild it from Apple's notifications")
                }
                if h.pagesChecked {
                    add("integrity", h.integrity == ["ok"] ? "ok" : "fail", h.integrity.prefix(5).joined(separator: "; "))
                }
                if h.schemaVersion > h.latestSchemaVersion {
                    add("schema", "fail", "version \(h.schemaVersion) was written by a newer subdesk (this one knows \(h.latestSchemaVersion)): "
                        + "writing commands refuse it; use the newer subdesk")
                } else {
                    add("schema", h.schemaVersion == h.latestSchemaVersion ? "ok" : "warn", "version \(h.schemaVersion) of \(h.latestSchemaVersion)")
                }
                let guardProblems = try store.upkeep.auditGuardProblems()
                add("audit log", guardProblems.isEmpty ? "ok" : "fail", guardProblems.isEmpty
                    ? store.upkeep.auditGuardsWhole
                    : guardProblems.joined(separator: "; ") + ": the audit log can be changed; "
                    + "it was tampered with outside subdesk: investigate, and restore the store from a backup")
                if let user = try store.server.databaseUser() {
                    let roles = try store.server.databaseRoles()
                    add("engine", "ok", "\(store.dialect.displayName), as database user \(user)"
                        + (roles.isEmpty ? "" : " (\(roles.joined(separator: ", ")))")
                        + (store.opening.readOnly ? "; may not derive state" : ""))
                    writeLockChecks(store, add: add)
                }
                if let wal = h.walBytes {
                    add("wal", wal > 256 << 20 ? "warn" : "ok", "\(wal / 1024) KiB" + (wal > 256 << 20 ? " (a long-running reader may be blocking checkpoints)" : ""))
                }
                add("contents", "ok", "\(h.subscriptions) subscriptions, \(h.notifications) notifications")
                // A demo store's refused bodies are the demo's own, refused on purpose to show the quarantine.
                add("quarantine", h.quarantined > 0 && !isDemo ? "warn" : "ok",
                    h.quarantined == 0 ? "empty"
                        : isDemo ? "\(h.quarantined) rejected bodies (a demo store: its bad bodies are refused on purpose; subdesk quarantine)"
                        : "\(h.quarantined) rejected bodies waiting (subdesk quarantine; replay after a fix)")
                let kept = try store.quarantine.keptBytes()
                let budget: Int64? = (try? context.intakePolicy()).map { $0.quarantineBudgetBytes } ?? IntakePolicy.defaultQuarantineBudgetBytes
                if let budget {
                    let over = kept >= budget
                    add("kept bodies", over ? "warn" : "ok", "\(mebibytes(kept)) of rejected bodies kept, quarantine budget \(mebibytes(budget))"
                        + (over ? ": over budget, new rejected bodies keep only digest, length and count "
                            + "(subdesk quarantine purge --before DATE, or raise quarantine_budget_mb)" : ""))
                }
                let partial = try store.quarantine.entriesWithoutWholeBody()
                if partial > 0 { add("partial bodies", "warn", "\(partial) entries keep only a prefix or a digest of their body") }
                // `counts --json` is an array of periods with no envelope to carry this, so it is here.
                let openConsent = try ConsentWithdrawal.openCount(store: store)
                add("consent", openConsent > 0 ? "warn" : "ok",
                    "\(openConsent) open withdrawal\(openConsent == 1 ? "" : "s") (subdesk consent)")
                retentionCoverageChecks(context, store: store, add: add)
            } catch {
                add("store", "fail", "\(error)")
            }
        }
        if let socket = ServeProbe.socketPath(context) {
            let problem = ServeProbe.problem(at: socket)
            add("serve", problem == nil ? "ok" : "fail", problem ?? "subdesk serve answers on unix:\(socket)")
        }
        do {
            let roots = try context.trustRoots()
            let now = Date()
            // The demo's test CA by its fingerprint (any regenerated one by its TEST ONLY name):
            // only a store `subdesk demo` built (marked as one in the store) may trust it.
            for cert in roots.certificates where !isDemo && (ContentDigest.sha256Hex(cert.der) == SignedDataVerifier.demoTestCAFingerprint
                                                             || cert.subjectSummary.contains("TEST ONLY")) {
                add("test root", "fail", "\(cert.subjectSummary) is trusted: anyone with the demo CA's keys (they ship with subdesk) "
                    + "can sign notifications this store accepts; trust Apple Root CA G3 only (remove root_ca / --root-ca)")
            }
            for cert in roots.certificates {
                let days = Int(cert.notAfter.timeIntervalSince(now) / 86_400)
                add("root", days < 0 ? "fail" : (days < 180 ? "warn" : "ok"),
                    "\(cert.subjectSummary), expires \(DateText.minute(DateText.millis(cert.notAfter))) UTC (\(days) days)")
            }
        } catch {
            add("root", "fail", "\(error)")
        }
        do {
            let policy = try context.intakePolicy()
            let apps = try context.configuredApps()
            // Each app with its last notification (by the bundle id it was signed for).
            for app in apps.apps where apps.fromSections {
                let scope = try app.bundleId.flatMap { try apps.scope(named: $0) }
                let last = try scope.flatMap { try opened?.notifications.lastReceived(app: $0) }
                add("app", "ok", app.summary + "; last notification " + (last.map { DateText.minute($0) + " UTC" } ?? "none"))
            }
            if !apps.fromSections { add("bundle id", policy.bundleId == nil ? "warn" : "ok", policy.bundleId ?? "not set: bundle ids are not checked") }
            if !apps.fromSections && policy.environment != .sandbox {
                add("app apple id", policy.appAppleId == nil ? "warn" : "ok",
                    policy.appAppleId.map(String.init) ?? "not set: Production notifications are checked for presence only")
            }
            if !apps.fromSections { add("environment", "ok", policy.environment?.rawValue ?? "Production and Sandbox accepted") }
            if !apps.fromSections { add("v1", policy.allowV1 && policy.sharedSecret == nil ? "warn" : "ok",
                policy.allowV1 ? (policy.sharedSecret == nil ? "V1 allowed without a shared secret" : "V1 allowed, password checked") : "V1 refused") }
            // With the check on, intake depends on a host outside: a firewall must let it
            // through, or every notification is answered 503 until it does.
            add("revocation", "ok", policy.revocationCheck == .ocsp
                ? "OCSP: intake asks the responders the signing certificates name (Apple's: http://ocsp.apple.com, port 80); "
                    + "while they cannot answer, notifications are answered 503 and Apple retries"
                : "not checked online (revocation_check = ocsp asks Apple's OCSP responders)")
        } catch {
            add("config", "fail", "\(error)")
        }
        configFileChecks(context, add: add)
        if let warning = context.configReadableByOthers { add("config file", "warn", warning) }
        chainKeyCheck(context, add: add)
        metricsPasswordFileCheck(context, add: add)
        revalidationChecks(context, add: add)
        forwardChecks(context, probe: context.arguments.has(.probe), add: add)
        for problem in context.trustFileProblems { add("trust files", "fail", problem) }
        if context.wantsJSON {
            Output.json(checks.map { ["check": $0.name, "level": $0.level, "detail": $0.detail] })
        } else {
            for c in checks {
                Output.line("\(c.level.uppercased().padding(toLength: 5, withPad: " ", startingAt: 0)) \(c.name.padding(toLength: 13, withPad: " ", startingAt: 0)) \(SafeText.sanitize(c.detail))")
            }
        }
        return checks.contains { $0.level == "fail" } ? 1 : 0
    }

    /// Each app, product and locale the retention console knows that no layer answers (no
    /// real-time rule, no App Store Connect configuration declared, no default message) is a
    /// warning naming them; a store whose products no locale is known for uses none of it.
    static func retentionCoverageChecks(_ context: Context, store: Store, add: (String, String, String) -> Void) {
        let rows: [RetentionCoverage]
        do {
            // No rule, declaration or default message: no locale can be known, so no row would
            // have one; the store's products (a read of every transaction) are not read for it.
            let layered = try context.configuredApps().apps.contains { $0.retentionRules != nil || !$0.retentionAppStoreConnect.isEmpty }
            guard try layered || !store.retention.content.records(kind: .defaultMessage).isEmpty else { return }
            rows = try context.retentionCoverage(store: store, locales: [], scope: nil)
        } catch {
            add("retention", "warn", "the cancellation sheet's coverage could not be read: \(error)")
            return
        }
        let known = rows.filter { $0.locale != nil }
        guard !known.isEmpty else { return }
        let gaps = known.filter { $0.layer == .nothing }
        for gap in gaps {
            add("retention", "warn", "app \(gap.app.isEmpty ? "(no bundle id)" : gap.app), product \(gap.product), locale \(gap.locale!): "
                + "no layer answers the cancellation sheet (no real-time rule, no App Store Connect configuration declared, "
                + "no default message; subdesk retention coverage)")
        }
        if gaps.isEmpty { add("retention", "ok", "\(known.count) product and locale pair\(known.count == 1 ? "" : "s") answered on the cancellation sheet") }
    }

    /// Which config file was read, or every place looked at; a default one this user cannot
    /// read; and, on an installed subdesk, the store the package's services use beside the
    /// one this command checked: a hand-run command must not set up a second store no
    /// service reads.
    static func configFileChecks(_ context: Context, add: (String, String, String) -> Void) {
        let lookup = context.configLookup
        add("config file", "ok", context.config.path
            ?? "none: looked at \(lookup.lookedAt.joined(separator: ", ")) (the defaults apply)")
        for path in lookup.skipped {
            add("config file", "warn", "\(path) exists but this user cannot read it, so its settings and store are not used here: "
                + "run as a member of its group (subdesk: `sudo -u subdesk subdesk doctor`), or name a config with --config")
        }
        guard let installed = context.installedConfig, FileManager.default.fileExists(atPath: installed) else { return }
        let services: String
        do {
            guard access(installed, R_OK) == 0 else {
                add("services", "ok", "the package's units and CGI programs use the store \(installed) names (this user cannot read it)")
                return
            }
            // Read again only when this command read another config (the user's, a named one).
            let read = context.config.path == installed ? context.config : try Configuration.load(path: installed, required: true)
            services = read.string(.db) ?? Configuration.installedStore
        } catch {
            add("services", "fail", "\(error)")
            return
        }
        let mine = context.databasePath
        if mine == services {
            add("services", "ok", "the package's units and CGI programs use this store too (\(services), named by \(installed))")
        } else {
            let named = context.storeIsNamed
            add("services", named ? "ok" : "warn", "the package's units and CGI programs use \(services) (named by \(installed)); "
                + "this command's store is \(mine)" + (named ? "" : ", which no service reads: name the services' one with --db or in the config"))
        }
    }

    /// On PostgreSQL: who keeps writes waiting (intake answers 503 once the busy timeout
    /// passes), named so an operator can ask them or end the session; and whether every
    /// login in the cluster may still connect to the database.
    static func writeLockChecks(_ store: Store, add: (String, String, String) -> Void) {
        do {
            let holders = try store.server.writeLockHolders()
            if holders.isEmpty {
                add("write lock", "ok", "free: no session holds what a write would wait for")
            }
            for h in holders {
                let since = h.since.map { "in a transaction since \($0) UTC" + (h.seconds.map { ", \($0) s ago" } ?? "") }
                    ?? "since an unknown time (seeing other users' sessions needs pg_read_all_stats)"
                add("write lock", "warn", "held by database user \(h.user) (pid \(h.pid), application \(h.application.isEmpty ? "unnamed" : "\"\(h.application)\""), "
                    + "\(since)): \(h.what); intake waits for it and answers 503 after the busy timeout "
                    + "(SELECT pg_terminate_backend(\(h.pid)) ends that session)")
            }
            if try store.server.publicMayConnect() == true {
                add("connect", "warn", "every login in the cluster may connect to this database (CONNECT is PUBLIC's): "
                    + "run `subdesk db init --roles` as the database's owner to keep it to subdesk's roles")
            }
        } catch {
            add("write lock", "fail", "\(error)")
        }
        do {
            for verdict in try store.server.connectionSlots()?.verdicts ?? [] { add("connections", verdict.level, verdict.detail) }
        } catch {
            add("connections", "fail", "\(error)")
        }
    }

    /// What revalidation (`r` in the dashboard, `revalidate`, `sweep`) needs, and what is missing.
    /// The key that seals remembered chain checks. Doctor never makes it (it may run as
    /// another user than intake): a missing key is made by the first intake.
    static func chainKeyCheck(_ context: Context, add: (String, String, String) -> Void) {
        let path = context.chainKeyPath
        guard FileManager.default.fileExists(atPath: path) else {
            add("chain key", "ok", "\(path) not made yet: intake makes it (0600) on first use")
            return
        }
        do {
            _ = try ChainMemoryKey.load(path: path, create: false)
            add("chain key", "ok", "\(path): chain checks are remembered sealed with it")
        } catch {
            add("chain key", "warn", "\(error); chain checks are not remembered, so each CGI request checks its chain in full")
        }
    }

    /// The password file the web server checks /metrics scrapes against
    /// (`metrics_password_file`): its hashes are for the web server's user alone, so one that
    /// other users may read (or write) is a problem, and one that is missing fails every scrape.
    static func metricsPasswordFileCheck(_ context: Context, add: (String, String, String) -> Void) {
        guard let path = context.config.string(.metricsPasswordFile) else { return }
        guard let mode = SecretFile.permissions(path) else {
            add("metrics auth", "fail", "\(path) (metrics_password_file) does not exist: the web server refuses every scrape")
            return
        }
        guard mode & 0o007 == 0 else {
            add("metrics auth", "warn", "\(path) (metrics_password_file) can be read by every user (mode \(String(mode, radix: 8))): "
                + "anyone on this host may try its hashes; chmod o-rwx it (root:www-data 0640)")
            return
        }
        add("metrics auth", "ok", "\(path): /metrics scrapes need a password (mode \(String(mode, radix: 8)))")
    }

    static func revalidationChecks(_ context: Context, add: (String, String, String) -> Void) {
        do {
            let policy = try context.intakePolicy()
            let apps = try context.configuredApps()
            for app in apps.apps {
                let whose = apps.fromSections ? "\(app.name): " : ""
                if let key = try context.wrap({ try app.apiKey(warn: Output.warn) }) {
                    add("api key", "ok", whose + "key \(key.keyId), issuer \(key.issuerId): the App Store Server API is used")
                } else {
                    add("api key", "warn", whose + "not set (\(apps.fromSections ? "key" : "api_key_file, api_key_id, api_issuer_id")): "
                        + "revalidation can only use verifyReceipt, for subscriptions with a stored V1 receipt")
                }
            }
            if !apps.fromSections && policy.sharedSecret == nil {
                add("shared secret", "warn", "not set (shared_secret_file): verifyReceipt revalidation is refused by Apple for subscriptions")
            }
            let configuration = try context.revalidationConfiguration(policy: policy)
            // What a firewall in front of this host must let out, for revalidation, sweeps,
            // backfills, pings and refund answers.
            add("egress", "ok", "HTTPS to " + configuration.endpoints.hosts.joined(separator: ", "))
        } catch {
            add("revalidation", "fail", "\(error)")
        }
        switch HTTPHelper.whereIsIt(environment: context.environment) {
        case .success(let path): add("http helper", "ok", path)
        case .failure(let missing): add("http helper", "fail", missing.reason + " (revalidation cannot reach Apple without it)")
        }
    }

    /// Each `[forward NAME]` target: its URL, its secret file (as a delivery reads it: there,
    /// readable, not empty, and not readable by others), and with `probe` whether its host
    /// takes a TCP connection within `probeTimeout` (warn when not: deliveries wait in the
    /// outbox until its max_age).
    static func forwardChecks(_ context: Context, probe: Bool, probeTimeout: TimeInterval = 3,
                              add: (String, String, String) -> Void) {
        let targets: ForwardTargets
        do {
            targets = try context.forwardTargets()
        } catch {
            add("forward", "fail", "\(error)")
            return
        }
        for target in targets.targets {
            let name = target.name
            let host = target.url.host ?? ""
            let https = target.url.scheme?.lowercased() == "https"
            if https || ForwardTarget.isLoopback(host) {
                add("relay url", "ok", "\(name): \(target.url.absoluteString)" + (https ? "" : " (plain http, to this host)"))
            } else {
                add("relay url", "warn", "\(name): \(target.url.absoluteString) is plain http to \(host) (allow_http = yes): "
                    + "others on the way can read the deliveries and their signatures; use https")
            }
            var warnings: [String] = []
            do {
                _ = try DeliverySignature.load(file: target.secretFile, target: name, warn: { warnings.append($0) })
                add("relay secret", warnings.isEmpty ? "ok" : "warn", warnings.isEmpty
                    ? "\(name): \(target.secretFile) (mode \(String(SecretFile.permissions(target.secretFile) ?? 0, radix: 8)))"
                    : "\(name): " + warnings.joined(separator: "; ") + ": whoever reads it can sign deliveries the target accepts")
            } catch {
                add("relay secret", "fail", "\(name): \(error): no delivery can be signed, so none is sent")
            }
            guard probe else { continue }
            let port = target.url.port ?? (https ? 443 : 80)
            if let problem = ForwardProbe.problem(host: host, port: port, timeout: probeTimeout) {
                add("relay probe", "warn", "\(name): \(problem); deliveries wait in the outbox until max_age "
                    + "(subdesk forward status)")
            } else {
                add("relay probe", "ok", "\(name): \(host):\(port) takes connections (nothing was sent)")
            }
        }
    }

    /// `0.3 MiB`, `256 MiB`.
    static func mebibytes(_ bytes: Int64) -> String {
        bytes >= 10 << 20 ? "\(bytes >> 20) MiB" : String(format: "%.1f MiB", Double(bytes) / Double(1 << 20))
    }

    static func backup(_ context: Context) throws -> Int32 {
        guard context.arguments.positionals.count == 1, let destination = context.arguments.positionals.first else {
            throw UsageError("backup takes one PATH (see subdesk backup --help)")
        }
        let store = try context.openStore(mode: .reading)
        let started = Date()
        try store.upkeep.backup(to: destination)
        Output.line("backed up \(context.databasePath) to \(destination) in \(String(format: "%.2f", Date().timeIntervalSince(started)))s")
        return 0
    }

    /// Re-ingests quarantined bodies under the current configuration; those now accepted are
    /// marked resolved (never deleted), the others stay with their original reason.
    static func replay(_ context: Context) throws -> Int32 {
        let store = try context.openStore(mode: .existing)
        let intake = try context.makeIntake(store: store)
        let ids = try context.arguments.positionals.dropFirst().map { text -> Int64 in
            guard let id = Int64(text.trimmingCharacters(in: CharacterSet(charactersIn: "#"))) else {
                throw UsageError("quarantine replay takes quarantine numbers, got \(text)")
            }
            return id
        }
        let entries = try store.quarantine.entries(limit: 1_000_000, ids: ids.isEmpty ? nil : ids).reversed()
        var stored = 0, duplicates = 0, still = 0
        // A number asked for that names nothing waiting cannot be replayed: say so, and fail.
        let waiting = Set(entries.map(\.id))
        let missing = ids.filter { !waiting.contains($0) }
        let resolved = Dictionary(try (missing.isEmpty ? [] : store.quarantine.entries(limit: missing.count, includeResolved: true, ids: missing))
            .map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        var unknown = 0
        for id in ids where !waiting.contains(id) {
            unknown += 1
            if let entry = resolved[id] {
                Output.error("#\(id) cannot be replayed: it was resolved already (\(SafeText.sanitize(entry.resolution ?? "resolved")))")
            } else {
                Output.error("#\(id) cannot be replayed: there is no quarantine entry #\(id) (subdesk quarantine --all lists them)")
            }
        }
        for q in entries {
            guard q.isBodyWhole else {
                still += 1
                Output.error("#\(q.id) cannot be replayed: only \(q.body.count) of its \(q.bodyBytes) bytes were kept")
                continue
            }
            let outcome = try intake.ingest(q.body, source: "replay:#\(q.id)", quarantine: false)
            switch outcome {
            case .stored(let e):
                try store.quarantine.resolve(id: q.id, resolution: "stored as \(e.notificationUUID) by replay", at: DateText.nowMillis())
                stored += 1
            case .duplicate(let uuid):
                try store.quarantine.resolve(id: q.id, resolution: "duplicate of \(uuid) at replay", at: DateText.nowMillis())
                duplicates += 1
            case .rejected(let reason, _):
                still += 1
                Output.error("#\(q.id) still refused: \(SafeText.sanitize(reason.description))")
            }
        }
        Output.line("replayed \(entries.count): stored \(stored), duplicates \(duplicates), still refused \(still)"
                    + (unknown > 0 ? ", \(unknown) could not be replayed" : ""))
        return still == 0 && unknown == 0 ? 0 : 1
    }
}
