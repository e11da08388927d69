import Foundation
import SubscriptionCore
import TerminalUI

/// Revalidation settings: flags, then the config file, then Apple's defaults.
extension Context {
    /// Who the audit log says acted: `--operator`, `operator` in the config, else the login name.
    var operatorName: String {
        setting(.operatorName) ?? Operations.defaultOperator(environment: environment)
    }

    func revalidationConfiguration(policy: IntakePolicy) throws -> RevalidationConfiguration {
        var endpoints = AppStoreEndpoints.apple
        let urls: [(option: CommandOption, path: WritableKeyPath<AppStoreEndpoints, URL>)] = [
            (.serverApiUrl, \.serverAPI), (.serverApiSandboxUrl, \.serverAPISandbox),
            (.verifyReceiptUrl, \.verifyReceipt), (.verifyReceiptSandboxUrl, \.verifyReceiptSandbox),
        ]
        for u in urls {
            guard let text = setting(u.option) else { continue }
            let source = arguments.value(u.option.key) != nil ? "--\(u.option.name)" : u.option.configKey?.name ?? u.option.name
            endpoints[keyPath: u.path] = try wrap { try AppStoreEndpoints.url(text, setting: source) }
        }
        var http = HTTPPolicy()
        if let text = setting(.revalidationTimeout) {
            guard let seconds = Double(text), seconds.isFinite, seconds > 0, seconds <= 600 else {
                throw UsageError("timeout must be a number of seconds between 0 and 600, got \(text)")
            }
            http.timeout = seconds
        }
        var configuration = RevalidationConfiguration(endpoints: endpoints, http: http, sharedSecret: policy.sharedSecret)
        let apps = try configuredApps()
        configuration.keyPlace = ServerAPIKeyPlace(configFile: configFilePath, sections: apps.fromSections)
        try wrap { try configuration.sign(for: apps, warn: Output.warn) }
        return configuration
    }

    /// The config file this command reads, or would read were it there: where settings go.
    var configFilePath: String {
        arguments.value(.config) ?? config.path ?? Configuration.defaultPath(environment: environment)
    }

    /// A revalidator that opens its own connections to this context's store (or the one at
    /// `storePath`, such as the demo store). On a terminal (and without --quiet) each wait
    /// before a retry is said on stderr, so a rate limit or a slow Apple is never silence;
    /// the dashboard, which owns the screen, passes `retryNotices: false`.
    func makeRevalidator(maxConnections: Int = 4, storePath: String? = nil, retryNotices: Bool = true) throws -> Revalidator {
        let policy = try intakePolicy()
        var configuration = try revalidationConfiguration(policy: policy)
        if retryNotices && isatty(STDERR_FILENO) == 1 && !arguments.has(.quiet) {
            configuration.onRetry = { notice in
                // Clears a progress line (sweep, backfill) before the notice takes its own line.
                FileHandle.standardError.write(Data("\r\u{1B}[Ksubdesk: \(SafeText.sanitize(notice.description))\n".utf8))
            }
        }
        // Each revalidation opens its own connection, with the same busy timeout as every command's.
        let context = self
        return Revalidator(openStore: { try context.openStore(path: storePath, mode: .existing) }, configuration: configuration,
                           verifier: SignedDataVerifier(roots: try trustRoots()), policy: policy,
                           operatorName: operatorName, maxConnections: maxConnections)
    }

    /// The apps and environments of `targets` that `--app` names (all of them without it):
    /// what ping and backfill ask.
    func scoped(_ targets: [Revalidator.AppleTarget]) throws -> [Revalidator.AppleTarget] {
        Revalidator.AppleTarget.within(try appScope(), targets)
    }

    /// Setting mistakes are usage errors (exit 2), whichever layer found them.
    func wrap<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let e as RevalidationError {
            throw UsageError(e.description)
        } catch let e as SecretFileError {
            throw UsageError(e.description)
        } catch let e as ConfigurationError {
            throw UsageError(e.description)
        }
    }
}
