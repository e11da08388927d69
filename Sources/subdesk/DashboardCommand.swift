import Foundation
import Dashboard
import SubscriptionCore
import TerminalUI

enum DashboardCommand {
    static let spec: CommandSpec = CommandSpec(
        name: "dashboard", abstract: "open the dashboard on the store (the default with no command)",
        usage: "subdesk [dashboard] [--db PATH] [--theme NAME] [--tz ZONE] [--operator NAME]",
        discussion: """
        Opens the terminal dashboard on the store: subscribers (/ to search, Enter for a
        subscription's state and timeline; there r revalidates with Apple and o grants,
        revokes or lifts an override), :feed (notifications as they arrive), :daily
        (counts per day), :quarantine (rejected bodies), :audit (operator actions),
        :health (intake's on-call signals, judged as subdesk check judges them, and the
        relay's lag), :forward (each [forward] target as subdesk forward status lists it).
        ? lists every key, q quits.

        r uses the same settings as subdesk revalidate, listed here under Apple settings;
        --operator names who the audit log names for actions taken here.
        """,
        groups: [settings, .apple],
        run: { context in
            let standIn = context.demoStandIn
            return try open(context, databasePath: standIn?.demo ?? context.databasePath, standInNotice: standIn?.notice)
        })

    /// What the dashboard shows its screens in, for `dashboard` and `demo`.
    static let settings: OptionGroup = OptionGroup(title: "dashboard settings", options: [theme, timeZone])
    static let theme: CommandOption = .value(.theme, "NAME", "a theme from themes/ (default, mono, midnight...) or your "
                                             + "$XDG_CONFIG_HOME/subdesk/themes; NO_COLOR=1 selects mono", config: .theme)
    static let timeZone: CommandOption = .value(.tz, "ZONE", "the time zone dates and days are shown in (default UTC); z cycles",
                                                config: .tz)

    /// How long to wait for a key before refreshing live views.
    static let inputTimeoutMilliseconds: Int32 = 250

    /// `standInNotice` says why the store shown is not the configured one (the demo store
    /// standing in for a missing one); it is shown on the screen, where it is read.
    static func open(_ context: Context, databasePath: String, standInNotice: String? = nil) throws -> Int32 {
        guard isatty(STDIN_FILENO) == 1 && isatty(STDOUT_FILENO) == 1 else {
            Output.error("the dashboard needs a terminal; for scripts use show, search, notifications, quarantine or counts")
            return 2
        }
        let zoneName = context.setting(timeZone) ?? "UTC"
        guard let zone = TimeZoneName.zone(zoneName) else { throw UsageError(TimeZoneName.unknown(zoneName)) }
        let catalog = ThemeCatalog(searchPaths: ThemeCatalog.standardSearchPaths(
            executablePath: Bundle.main.executablePath ?? CommandLine.arguments.first ?? ""))
        let loaded = try loadTheme(context, catalog: catalog)
        // A store file this user may only read opens read-only: the desk reads it and says so.
        let store: Store
        do {
            store = try context.openStore(path: databasePath, mode: .existing)
        } catch let error as StoreError where error.code == 8 && !StoreLocation(databasePath).isPostgres {
            store = try context.openStore(path: databasePath, mode: .reading)
        }
        // Built before the screen is taken: reading key and secret files may print warnings,
        // which would land in the middle of the dashboard. A setting that cannot be read
        // leaves the dashboard usable and is reported when r is pressed.
        let revalidator: Result<Revalidator, RevalidationUnavailable>
        do {
            revalidator = .success(try context.makeRevalidator(maxConnections: 2, storePath: databasePath, retryNotices: false))
        } catch {
            revalidator = .failure(RevalidationUnavailable("revalidation is not set up: \(error)"))
        }

        // Unreadable trust roots must not keep the dashboard closed; :health then lacks them
        // and the message line says why.
        var healthSettings: OnCallSettings?
        var healthProblem: String?
        do { healthSettings = try MetricsCommand.settings(context) } catch { healthProblem = ":health cannot judge the configuration: \(error)" }

        // An unknown --app is refused before the screen is taken.
        _ = try context.appScope()
        let terminal = CursesTerminal(inputTimeoutMilliseconds: inputTimeoutMilliseconds)
        defer { terminal.stop() }
        let size = terminal.size
        var state = DashboardState(width: size.width, height: size.height, now: DateText.nowMillis(), timeZone: zone,
                                   storeName: StoreLocation(databasePath).shortName,
                                   themeName: loaded.theme.name)
        state.standInNotice = standInNotice
        state.apps = (try? context.configuredApps()) ?? state.apps
        state.forwardTargets = try context.forwardTargets().targets.map(\.name)
        // --app NAME: the desk opens scoped to that app, as :app NAME scopes it.
        if let app = context.arguments.value(.app) {
            do { try DashboardCommandLine.scope(toApp: app, &state) } catch { throw UsageError("\(error)") }
        }
        state.login = store.login()
        state.withoutServerAPIKey = (try? revalidator.get())?.hasServerAPIKey != true
        let session = DashboardSession(store: store, state: state, theme: loaded.theme, themes: catalog,
                                       operatorName: context.operatorName, revalidator: revalidator,
                                       refundPolicy: try RefundPolicy(configuration: context.config),
                                       exchangeRates: try CountsCommand.exchangeRates(context),
                                       healthSettings: healthSettings ?? OnCallSettings())
        session.start()
        if let healthProblem { session.send(.failed(healthProblem)) }
        if !loaded.warnings.isEmpty {
            session.send(.themeApplied(name: loaded.theme.name, warnings: loaded.warnings.map(\.description)))
        }
        return run(session, on: terminal)
    }

    /// `--theme` or the config file's theme; else mono under NO_COLOR; else the default.
    ///
    /// An explicit choice wins over NO_COLOR, as no-color.org asks. A theme
    /// that fails to load stops the program here, before the screen is taken,
    /// so the error (file and line) stays readable.
    static func loadTheme(_ context: Context, catalog: ThemeCatalog) throws -> (theme: Theme, warnings: [ThemeWarning]) {
        if let name = context.setting(theme) {
            do {
                let loaded = try catalog.load(name)
                return (loaded.theme, loaded.warnings)
            } catch let error as ThemeError {
                throw UsageError("theme: \(error) (themes here: \(catalog.availableNames().joined(separator: ", ")))")
            }
        }
        if Theme.prefersMonochrome(environment: context.environment) {
            return (.monochrome, [])
        }
        // The shipped default.theme may be edited; if it is broken the built-in one still works.
        if let loaded = try? catalog.load("default") { return (loaded.theme, loaded.warnings) }
        return (.standard, [])
    }

    /// The main loop: paint what changed, wait for a key or the timeout, repeat until quit.
    static func run(_ session: DashboardSession, on terminal: CursesTerminal) -> Int32 {
        var previous: ScreenBuffer?
        var theme: Theme?
        var lastTick = DateText.nowMillis()
        // For subdesk-bench: when the first full frame is on screen, note the time and memory.
        var firstFrameFile = ProcessInfo.processInfo.environment["SUBDESK_FIRST_FRAME_FILE"]
        while true {
            let size = terminal.size
            session.resize(width: size.width, height: size.height)
            if session.theme != theme {
                theme = session.theme
                terminal.apply(session.theme)
                previous = nil
                if terminal.theme.name != session.theme.name {
                    session.send(.notice("theme \(session.theme.name) needs \(session.theme.colorsRequired) colours, "
                                         + "this terminal has \(terminal.colorCount): showing \(terminal.theme.name)"))
                }
            }
            var frame = ScreenBuffer(width: size.width, height: size.height)
            session.render(into: &frame)
            terminal.paint(frame.changes(since: previous))
            previous = frame
            if let file = firstFrameFile {
                firstFrameFile = nil
                let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
                let rss = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") }?
                    .split(separator: " ").dropFirst().first.map(String.init) ?? "0"
                try? "\(DateText.nowMillis()) \(rss)\n".write(toFile: file, atomically: true, encoding: .utf8)
            }
            if session.shouldQuit { return 0 }

            switch terminal.read() {
            case .key(let key):
                session.send(.key(key))
                for text in session.takeClipboard() { terminal.copyToClipboard(text) }
            case .resize:
                terminal.invalidate()
                previous = nil
            case .timeout:
                break
            case .signal(let number):
                // 128 + the signal, as shells report a process a signal ended.
                return 128 + number
            }
            // Typing must not starve the live views of their refresh.
            let now = DateText.nowMillis()
            if now - lastTick >= Millis(inputTimeoutMilliseconds) {
                lastTick = now
                session.tick()
            }
        }
    }
}
