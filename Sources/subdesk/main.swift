import Foundation
import SubscriptionCore
import Dashboard
import TerminalUI

let usage = """
usage: subdesk [--db PATH] [--config FILE] [COMMAND] [OPTIONS]

App Store subscription operations: verified notification intake into a local store,
each subscriber's true state, and a terminal dashboard.

commands:
  dashboard        open the dashboard on the store (the default with no command)
  init             create an empty store (a deployment does this once; CGI never creates one)
  demo             build a demo store from sample-data and open the dashboard on it
  ingest           verify and store notifications from files, stdin, or CGI (--cgi)
  show ID          a subscriber's subscriptions, state and timeline
  search TEXT      subscriptions whose id, user, token or product contain TEXT
  notifications    stored notifications, newest first
  quarantine       rejected bodies and why they were refused
  link USER ID     link your user id to the subscriber owning a transaction
  counts           daily counts per day in a time zone (--json, --csv)
  cohorts          retention, realized lifetime value and trial conversion by cohort
  override         grant, revoke, lift or list manual entitlement overrides
  audit            the append-only log of operator actions
  consent          consent withdrawals (RESCIND_CONSENT) to act on, and marking one handled
  revalidate ID    ask Apple for a subscription's state, store it, print what changed
  sweep            revalidate every subscription whose stored expiry passed (daily, cron)
  backfill         fetch notifications Apple sent in a window and take in the missing ones
  gaps             notifications that first arrived through a backfill, with Apple's attempts
  ping             ask Apple for a TEST notification and time its way through the webhook
  extend           extend renewal dates at Apple: one subscription, or all active of a product
  refunds          customers' refund requests: the facts, the deadline, the answer sent to Apple
  doctor           check the store, roots and config
  metrics          on-call metrics in Prometheus's text format (--cgi for a /metrics location)
  check            intake health as one Nagios status line and exit code (0 OK .. 3 UNKNOWN)
  backup PATH      consistent online copy of the store
  migrate          copy a store between SQLite and PostgreSQL (--from STORE --to STORE)
  db init          create a PostgreSQL store, and with --roles its database roles
  keys             the dashboard's key table
  simulate         feed fresh signed demo notifications, for live demos
  generate         build a large generated store for benchmarks

global options:
  --db STORE       the store: a SQLite file, or postgres://... (default $SUBDESK_DB, else
                   $XDG_DATA_HOME/subdesk/subdesk.db)
  --config FILE    config file (default $SUBDESK_CONFIG, else $XDG_CONFIG_HOME/subdesk/config)
  --json           machine-readable output where a command prints results
  --help           this text, or a command's own with `subdesk COMMAND --help`
  --version        print the version

config file keys (key = value, # comments; flags win): db, bundle_id, app_apple_id,
environment, root_ca (repeatable), shared_secret_file, allow_v1, allow_environments,
operator, api_key_file, api_key_id, api_issuer_id, server_api_url, server_api_sandbox_url,
verify_receipt_url, verify_receipt_sandbox_url, revalidation_timeout, quarantine_budget_mb,
refund_consent, refund_policy, rates_file, chain_key_file, revocation_check.
"""

struct Command {
    let help: String
    let options: Set<String>
    /// What the command does to a store, in words a refused role is told it may not do, and
    /// the privilege it is about (the roles holding it are the ones named as able to).
    var action: (words: String, needs: (PostgresRoles.Privilege, String))? = nil
    let run: (Context) throws -> Int32
}

let commands: [String: Command] = [
    "ingest": Command(help: IngestCommand.help, options: IngestCommand.options, action: ("store notifications", (.insert, "notifications")), run: IngestCommand.run),
    "init": Command(help: MaintenanceCommands.initHelp, options: [], action: ("create a store", (.insert, "schema_version")), run: MaintenanceCommands.initStore),
    "show": Command(help: ShowCommand.help, options: Context.appleOptions.union(["apple"]), run: ShowCommand.run),
    "search": Command(help: ListCommands.searchHelp, options: ["limit"], run: ListCommands.search),
    "notifications": Command(help: ListCommands.notificationsHelp, options: ["since", "limit", "ndjson"], run: ListCommands.notifications),
    "quarantine": Command(help: ListCommands.quarantineHelp, options: IngestCommand.options.union(["limit", "all", "before", "reason", "operator"]), action: ("replay or purge quarantined bodies", (.delete, "quarantine")), run: ListCommands.quarantine),
    "doctor": Command(help: MaintenanceCommands.doctorHelp, options: IngestCommand.options.union(RevalidateCommand.options), run: MaintenanceCommands.doctor),
    "backup": Command(help: MaintenanceCommands.backupHelp, options: [], run: MaintenanceCommands.backup),
    "migrate": Command(help: DatabaseCommands.migrateHelp, options: ["from", "to", "quiet"], action: ("write the target store", (.insert, "notifications")), run: DatabaseCommands.migrate),
    "db": Command(help: DatabaseCommands.dbHelp, options: ["roles", "print"], action: ("set up the store and its roles", (.insert, "schema_version")), run: DatabaseCommands.db),
    "link": Command(help: ListCommands.linkHelp, options: Context.appleOptions.union(["force", "apple"]), action: ("link user ids", (.update, "subscribers")), run: ListCommands.link),
    "demo": Command(help: DemoCommands.demoHelp, options: DashboardCommand.options.union(["copies", "no-dashboard", "sample-data", "force"]), action: ("build a demo store", (.insert, "notifications")), run: { context in
        let path = try DemoCommands.buildDemo(context)
        if context.arguments.has("no-dashboard") { return 0 }
        return try DashboardCommand.open(context, databasePath: path)
    }),
    "keys": Command(help: "usage: subdesk keys\n\nPrints the dashboard's key table (Markdown).", options: [], run: { _ in
        Output.line(KeyTable.standard.markdown())
        return 0
    }),
    "counts": Command(help: CountsCommand.help, options: ["from", "to", "tz", "segment", "csv", "period", "rates", "where", "by", "metric"],
                      run: CountsCommand.run),
    "cohorts": Command(help: CohortsCommand.help, options: CohortsCommand.options, run: CohortsCommand.run),
    "override": Command(help: OperatorCommands.overrideHelp, options: ["until", "reason", "operator"], action: ("place or lift overrides", (.insert, "overrides")), run: OperatorCommands.override),
    "consent": Command(help: ConsentCommand.help, options: ConsentCommand.options, action: ("mark consent withdrawals handled", (.insert, "audit_log")), run: ConsentCommand.run),
    "audit": Command(help: OperatorCommands.auditHelp, options: ["since", "limit"], run: OperatorCommands.audit),
    "generate": Command(help: GenerateCommand.help, options: ["subscribers", "seed"], action: ("generate a store", (.insert, "notifications")), run: GenerateCommand.run),
    "simulate": Command(help: DemoCommands.simulateHelp, options: ["rate", "duration", "sample-data"], action: ("feed the demo store", (.insert, "notifications")), run: DemoCommands.simulate),
    "revalidate": Command(help: RevalidateCommand.help, options: RevalidateCommand.options, action: ("revalidate subscriptions", (.update, "transactions")), run: RevalidateCommand.run),
    "sweep": Command(help: SweepCommand.help, options: SweepCommand.options, action: ("sweep expired subscriptions", (.update, "transactions")), run: SweepCommand.run),
    "backfill": Command(help: BackfillCommand.help, options: BackfillCommand.options, action: ("backfill notifications", (.insert, "backfill_runs")), run: BackfillCommand.run),
    "gaps": Command(help: BackfillCommand.gapsHelp, options: ["limit"], run: BackfillCommand.gaps),
    "ping": Command(help: PingCommand.help, options: PingCommand.options, action: ("record a ping", (.insert, "store_facts")), run: PingCommand.run),
    "extend": Command(help: ExtendCommand.help, options: ExtendCommand.options, action: ("extend renewal dates", (.insert, "renewal_extensions")), run: ExtendCommand.run),
    "refunds": Command(help: RefundsCommand.help, options: RefundsCommand.options, action: ("answer refund requests", (.update, "refund_requests")), run: RefundsCommand.run),
    "metrics": Command(help: MetricsCommand.metricsHelp, options: ["cgi"], run: MetricsCommand.metrics),
    "check": Command(help: MetricsCommand.checkHelp, options: MetricsCommand.checkOptions, run: MetricsCommand.check),
    "dashboard": Command(help: DashboardCommand.help, options: DashboardCommand.options, run: { context in
        let standIn = context.demoStandIn
        return try DashboardCommand.open(context, databasePath: standIn?.demo ?? context.databasePath, standInNotice: standIn?.notice)
    }),
]

func runMain() -> Int32 {
    let arguments: Arguments
    do {
        arguments = try Arguments.parse(Array(CommandLine.arguments.dropFirst()))
    } catch {
        // `check` answers in Nagios's terms even when its options do not parse.
        if CommandLine.arguments.dropFirst().first(where: { !$0.hasPrefix("-") }) == "check" {
            Output.line("SUBDESK UNKNOWN - \(error)")
            return 3
        }
        Output.error("\(error)")
        return 2
    }
    if arguments.has("version") && arguments.command == nil {
        Output.line("subdesk \(SubdeskVersion.string)")
        return 0
    }
    let name = arguments.command ?? "dashboard"
    if (arguments.command == nil && arguments.has("help")) || (name == "help" && arguments.positionals.isEmpty) {
        Output.line(usage)
        return 0
    }
    if name == "help", let topic = arguments.positionals.first {
        guard let command = commands[topic] else {
            Output.error("unknown command '\(SafeText.sanitize(topic))' (see subdesk --help)")
            return 2
        }
        Output.line(command.help)
        return 0
    }
    guard let command = commands[name] else {
        Output.error("unknown command '\(SafeText.sanitize(name))' (see subdesk --help)")
        return 2
    }
    if arguments.has("help") {
        Output.line(command.help)
        return 0
    }
    // A web server in front needs an HTTP answer even when set-up fails, so Apple retries.
    let cgi = name == "ingest" && arguments.has("cgi")
    func failed(_ message: String, _ code: Int32) -> Int32 {
        // Nagios reads 1 and 2 as WARNING and CRITICAL: a check that could not run is UNKNOWN.
        if name == "check" {
            Output.line("SUBDESK UNKNOWN - \(message)")
            return 3
        }
        Output.error(message)
        // A script that asked for JSON gets its error as JSON too.
        if arguments.has("json") && !cgi { Output.json(["error": message, "exitCode": Int(code)]) }
        return cgi ? CGIIngest.respondUnavailable() : code
    }
    do {
        try arguments.allowOnly(command.options, command: name)
        let formats = ["json", "csv", "ndjson"].filter { arguments.has($0) }
        if formats.count > 1 {
            throw UsageError(formats.map { "--" + $0 }.joined(separator: " and ") + " ask for different outputs; give one")
        }
        let context = try Context(arguments: arguments)
        return try command.run(context)
    } catch let e as UsageError {
        return failed(e.description, 2)
    } catch let e as ConfigurationError {
        return failed(e.description, 2)
    } catch let e as ExitStatus {
        return e.code
    } catch let e as StoreError where e.denial != nil {
        return failed(e.denial!.explain(doing: command.action?.words, needs: command.action?.needs), 1)
    } catch {
        return failed("\(error)", 1)
    }
}

exit(runMain())
