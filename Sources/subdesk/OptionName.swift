/// An option's name as the command line spells it (`--max-pages` is `.maxPages`): the key
/// a `CommandOption` is declared with and `run` reads it by (`arguments.value(.maxPages)`),
/// so a misspelt option does not compile instead of reading nil. The cases are the options of
/// `CommandTable.standard`, no more and no fewer (`CommandTableTests`).
enum OptionName: String, CaseIterable, CustomStringConvertible {
    var description: String { rawValue }

    case `operator`
    case `print`
    case `where`
    case all
    case alt
    case body
    case bullet
    case bulletAlt = "bullet-alt"
    case bulletImage = "bullet-image"
    case header
    case headerPosition = "header-position"
    case id
    case image
    case kind
    case locale
    case request
    case transaction
    case allowEnvironment = "allow-environment"
    case allowFrom = "allow-from"
    case allowV1 = "allow-v1"
    case apiIssuerId = "api-issuer-id"
    case apiKeyFile = "api-key-file"
    case apiKeyId = "api-key-id"
    case appAppleId = "app-apple-id"
    case app
    case apple
    case auto
    case batchSize = "batch-size"
    case before
    case bundleId = "bundle-id"
    case busyTimeoutMs = "busy-timeout-ms"
    case by
    case cgi
    case concurrency
    case config
    case connectionLimit = "connection-limit"
    case consented
    case consumed
    case copies
    case count
    case csv
    case days
    case dead
    case db
    case definitionsMarkdown = "definitions-markdown"
    case delivery
    case directory
    case dryRun = "dry-run"
    case duration
    case environment
    case force
    case from
    case help
    case idleTimeout = "idle-timeout"
    case json
    case limit
    case list
    case listen
    case lockTimeout = "lock-timeout"
    case installed
    case maxConnections = "max-connections"
    case maxForwardLag = "max-forward-lag"
    case maxPages = "max-pages"
    case maxRejectedPerHour = "max-rejected-per-hour"
    case maxSilence = "max-silence"
    case metricsListen = "metrics-listen"
    case metric
    case ndjson
    case once
    case noDashboard = "no-dashboard"
    case onlyFailures = "only-failures"
    case passwordFile = "password-file"
    case period
    case preference
    case product
    case probe
    case quiet
    case rate
    case rates
    case reason
    case reasonCode = "reason-code"
    case receiptFile = "receipt-file"
    case refundDeadline = "refund-deadline"
    case requestTimeout = "request-timeout"
    case resume
    case revocationCheck = "revocation-check"
    case role
    case roles
    case rootCa = "root-ca"
    case sample
    case sampleData = "sample-data"
    case seed
    case segment
    case serverApiSandboxUrl = "server-api-sandbox-url"
    case serverApiUrl = "server-api-url"
    case sharedSecretFile = "shared-secret-file"
    case since
    case socketMode = "socket-mode"
    case statementTimeout = "statement-timeout"
    case status
    case storefront
    case subscribers
    case target
    case theme
    case timeout
    case to
    case tz
    case until
    case uuid
    case verifyReceiptSandboxUrl = "verify-receipt-sandbox-url"
    case verifyReceiptUrl = "verify-receipt-url"
    case version
    case wait
    case workers
    case writeTimeout = "write-timeout"
    case yes
}
