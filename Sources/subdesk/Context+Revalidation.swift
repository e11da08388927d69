import Foundation
import SubscriptionCore
import TerminalUI

/// Revalidation settings: flags, then the config file, then Apple's defaults.
extension Context {
    /// Who the audit log says acted: `--operator`, `operator` in the config, else the login name.
    var operatorName: String {
        setting(.operator, "operator") ?? Operations.defaultOperator(environment: environment)
    }

    func revalidationConfiguration(policy: IntakePolicy) throws -> RevalidationConfiguration {
        var endpoints = AppStoreEndpoints.apple
        let urls: [(flag: OptionName, key: String, path: WritableKeyPath<AppStoreEndpoints, URL>)] = [
            (.serverApiUrl, "server_api_url", \.serverAPI),
            (.serverApiSandboxUrl, "server_api_sandbox_url", \.serverAPISandbox),
            (.verifyReceiptUrl, "verify_receipt_url", \.verifyReceipt),
            (.verifyReceiptSandboxUrl, "verify_receipt_sandbox_url", \.verifyReceiptSandbox),
        ]
        for u in urls {
            guard let text = setting(u.flag, u.key) else { continue }
            let source = arguments.value(u.flag) != nil ? "--\(u.flag)" : u.key
            endpoints[keyPath: u.path] = try wrap { try AppStoreEndpoints.url(text, setting: source) }
        }
        var http = HTTPPolicy()
        if let text = setting(.timeout, "revalidation_timeout") {
            guard let seconds = Double(text), seconds.isFinite, seconds > 0, seconds <= 600 else {
                throw UsageError("timeout must be a number of seconds between 0 and 600, got \(text)")
            }
            http.timeout = seconds
        }
        return RevalidationConfiguration(endpoints: endpoints, http: http, apiKey: try apiKey(bundleId: policy.bundleId),
                                         sharedSecret: policy.sharedSecret)
    }

    /// The in-app purchase key, when all of file, key id and issuer id are set; an error
    /// naming what is missing when only some are.
    func apiKey(bundleId: String?) throws -> AppStoreAPIKey? {
        let parts: [(OptionName, String)] = [(.apiKeyFile, "api_key_file"), (.apiKeyId, "api_key_id"), (.apiIssuerId, "api_issuer_id")]
        let values = parts.map { setting($0.0, $0.1) }
        if values.allSatisfy({ $0 == nil }) { return nil }
        let missing = zip(parts, values).filter { $0.1 == nil }.map { $0.0.1 }
        guard missing.isEmpty, let file = values[0], let keyId = values[1], let issuer = values[2] else {
            throw UsageError("the App Store Server API key needs api_key_file, api_key_id and api_issuer_id; missing \(missing.joined(separator: ", "))")
        }
        guard let bundleId else {
            throw UsageError("the App Store Server API token names the app: set bundle_id (or pass --bundle-id)")
        }
        return try wrap {
            try AppStoreAPIKey.load(file: file, keyId: keyId, issuerId: issuer, bundleId: bundleId, warn: Output.warn)
        }
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

    /// Setting mistakes are usage errors (exit 2), whichever layer found them.
    private func wrap<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let e as RevalidationError {
            throw UsageError(e.description)
        } catch let e as SecretFileError {
            throw UsageError(e.description)
        }
    }
}
