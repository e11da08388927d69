import Foundation

/// Which of Apple's services answered a revalidation.
public enum RevalidationSource: Equatable, Sendable, CustomStringConvertible {
    case serverAPI(environment: AppStoreEnvironment)
    /// The legacy fallback, used when no API key is configured but a receipt is stored.
    case verifyReceipt(environment: AppStoreEnvironment)

    public var description: String {
        switch self {
        case .serverAPI(let env): return "App Store Server API (\(env))"
        case .verifyReceipt(let env): return "verifyReceipt (\(env))"
        }
    }

    /// The name in `--json` output.
    public var name: String {
        switch self {
        case .serverAPI: return "server_api"
        case .verifyReceipt: return "verify_receipt"
        }
    }

    public var environment: AppStoreEnvironment {
        switch self {
        case .serverAPI(let env), .verifyReceipt(let env): return env
        }
    }
}

/// What Apple said about a subscription: verified, decoded, checked against policy,
/// and not yet stored.
public struct AppleAnswer: Sendable {
    public var source: RevalidationSource
    public var transactions: [TransactionRecord]
    public var renewals: [RenewalRecord]
    /// Apple's own status per originalTransactionId (Server API only), to compare with ours.
    public var appleStatuses: [String: Int]
    /// The latest receipt per originalTransactionId (verifyReceipt only).
    public var receipts: [String: String]
}

/// Asks Apple about one subscription and holds its answer to intake's standard: every
/// signed transaction and renewal info goes through the same verifier and the same
/// bundle id and environment checks as a notification. One failure refuses the whole
/// answer, so a tampered record can never be merged beside genuine ones.
///
/// Thread-safe: it holds no store, so sweep workers share one.
final class AppStoreLookup: @unchecked Sendable {
    let configuration: RevalidationConfiguration
    let checks: SignedRecordChecks
    let apiClient: AppStoreServerAPIClient?
    let receiptClient: VerifyReceiptClient

    init(configuration: RevalidationConfiguration, verifier: SignedPayloadVerifier, policy: IntakePolicy, maxConnections: Int = 8) {
        self.configuration = configuration
        checks = SignedRecordChecks(verifier: verifier, policy: policy)
        // A store pinned to one environment asks only that one.
        let environments: [AppStoreEnvironment] = policy.environment.map { [$0] } ?? [.production, .sandbox]
        apiClient = configuration.apiKey.map {
            AppStoreServerAPIClient(key: $0, endpoints: configuration.endpoints, policy: configuration.http,
                                    environments: environments, maxConnections: maxConnections, onRetry: configuration.onRetry)
        }
        receiptClient = VerifyReceiptClient(endpoints: configuration.endpoints, policy: configuration.http,
                                            sharedSecret: configuration.sharedSecret,
                                            startEnvironment: policy.environment == .sandbox ? .sandbox : .production,
                                            maxConnections: maxConnections, onRetry: configuration.onRetry)
    }

    var policy: IntakePolicy { checks.policy }

    /// The App Store Server API client, or an error naming the settings it needs. With
    /// `maxTimeout`, one whose requests give up sooner (for callers that poll).
    func serverAPI(for action: String, maxTimeout: TimeInterval? = nil) throws -> AppStoreServerAPIClient {
        guard let api = apiClient else { throw RevalidationError.needsServerAPI(action: action, place: configuration.keyPlace) }
        guard let maxTimeout, maxTimeout < configuration.http.timeout else { return api }
        var http = configuration.http
        http.timeout = maxTimeout
        return AppStoreServerAPIClient(key: api.key, endpoints: api.endpoints, policy: http, environments: api.environments,
                                       onRetry: configuration.onRetry)
    }

    /// Statuses and full history from the App Store Server API.
    func serverAPI(transactionId: String) throws -> AppleAnswer {
        let api = try serverAPI(for: ServerAPIAction.revalidate)
        let statuses = try api.subscriptionStatuses(transactionId: transactionId)
        let environment = try responseEnvironment(statuses.environment, bundleId: statuses.bundleId,
                                                  appAppleId: statuses.appAppleId, field: "subscriptions response")
        let history = try api.transactionHistory(transactionId: transactionId, environment: environment,
                                                 pageLimit: configuration.historyPageLimit)
        return try refusingOnFault {
            let context = SignedRecordChecks.Context(environment: environment, owner: "the Server API response's")
            var transactions: [TransactionRecord] = []
            var renewals: [RenewalRecord] = []
            var appleStatuses: [String: Int] = [:]
            for (g, group) in statuses.groups.enumerated() {
                for (l, last) in group.lastTransactions.enumerated() {
                    let path = "data[\(g)].lastTransactions[\(l)]"
                    if let signed = last.signedTransactionInfo {
                        let t = try checks.transaction(signed, field: "\(path).signedTransactionInfo", in: context)
                        guard t.originalTransactionId == last.originalTransactionId else {
                            throw Refusal(.malformed, field: "\(path).signedTransactionInfo",
                                          fault: "originalTransactionId \(t.originalTransactionId) differs from the entry's \(last.originalTransactionId)")
                        }
                        transactions.append(t)
                    }
                    if let signed = last.signedRenewalInfo {
                        renewals.append(try checks.renewal(signed, field: "\(path).signedRenewalInfo", in: context,
                                                           expectedOriginal: (last.originalTransactionId, path)))
                    }
                    if let status = last.status { appleStatuses[last.originalTransactionId] = status }
                }
            }
            for (p, page) in history.enumerated() {
                if page.environment != nil || page.bundleId != nil {
                    _ = try responseEnvironment(page.environment ?? environment, bundleId: page.bundleId,
                                                appAppleId: page.appAppleId ?? statuses.appAppleId, field: "history page \(p + 1)")
                }
                if let pageEnvironment = page.environment, pageEnvironment != environment {
                    throw Refusal(.policy, field: "history page \(p + 1)",
                                  fault: "environment \(pageEnvironment) differs from the subscriptions response's \(environment)")
                }
                for (i, signed) in page.signedTransactions.enumerated() {
                    transactions.append(try checks.transaction(signed, field: "history page \(p + 1) signedTransactions[\(i)]", in: context))
                }
            }
            return AppleAnswer(source: .serverAPI(environment: environment), transactions: transactions,
                               renewals: renewals, appleStatuses: appleStatuses, receipts: [:])
        }
    }

    /// The original transaction id of the subscription an order bought, from Look Up Order
    /// ID, every signed transaction of the answer verified and checked as intake checks one.
    func order(_ orderId: String) throws -> (originalTransactionIds: [String], transactions: [TransactionRecord]) {
        let api = try serverAPI(for: ServerAPIAction.orderLookup)
        let answer = try api.lookUpOrder(orderId)
        guard answer.status == 0 else {
            throw RevalidationError.unknownSubscription("Apple does not know order id \(orderId) (Look Up Order ID answered status \(answer.status): invalid)")
        }
        return try refusingOnFault {
            let context = SignedRecordChecks.Context(environment: .production, owner: "the order lookup response's")
            let transactions = try answer.signedTransactions.enumerated().map { i, signed in
                try checks.transaction(signed, field: "signedTransactions[\(i)]", in: context)
            }
            var ids: [String] = []
            for t in transactions where !ids.contains(t.originalTransactionId) { ids.append(t.originalTransactionId) }
            return (ids, transactions)
        }
    }

    /// Refund history and the latest transaction's info for a subscription, verified.
    func refundsAndTransaction(_ transactionId: String, environment: AppStoreEnvironment) throws
        -> (refunds: [TransactionRecord], transaction: TransactionRecord) {
        let api = try serverAPI(for: ServerAPIAction.appleLookup)
        let refunds = try api.refundHistory(transactionId: transactionId, environment: environment)
        let info = try api.transactionInfo(transactionId: transactionId, environment: environment)
        return try refusingOnFault {
            let context = SignedRecordChecks.Context(environment: environment, owner: "the refund history response's")
            let refunded = try refunds.enumerated().map { i, signed in
                try checks.transaction(signed, field: "refund history signedTransactions[\(i)]", in: context)
            }
            let transaction = try checks.transaction(info, field: "transaction info signedTransactionInfo", in: context)
            return (refunded, transaction)
        }
    }

    /// The customer's app download from Get App Transaction Info, verified and held to the
    /// policy as intake holds a RESCIND_CONSENT's (bundle id, app Apple id, environment);
    /// nil when no environment has one.
    func appTransaction(_ id: String) throws -> AppTransaction? {
        let api = try serverAPI(for: ServerAPIAction.appTransaction)
        guard let answer = try api.appTransactionInfo(id: id) else { return nil }
        return try refusingOnFault {
            let context = SignedRecordChecks.Context(environment: answer.environment, owner: "the app transaction endpoint's")
            return try checks.verifiedAppTransaction(answer.signed, field: "app transaction info signedAppTransactionInfo",
                                                     in: context).decoded
        }
    }

    /// The legacy path: verifyReceipt with a stored receipt.
    func verifyReceipt(_ receipt: String) throws -> AppleAnswer {
        guard configuration.sharedSecret != nil else {
            throw RevalidationError.notConfigured("verifyReceipt needs the app's shared secret (set shared_secret_file)")
        }
        let response = try receiptClient.verify(receipt: receipt)
        let environment = try refusingOnFault { () throws -> AppStoreEnvironment in
            guard let env = response.environment else { throw Refusal(.policy, field: "verifyReceipt response", fault: "environment missing") }
            if let p = policy.environmentProblem(env, field: "verifyReceipt response") { throw p }
            if let p = policy.bundleProblem(response.bundleId, field: "verifyReceipt response receipt") { throw p }
            return env
        }
        var receipts: [String: String] = [:]
        let latest = response.latestReceipt.flatMap { $0.isEmpty ? nil : $0 } ?? receipt
        for t in response.transactions { receipts[t.originalTransactionId] = latest }
        for r in response.renewals { receipts[r.originalTransactionId] = latest }
        return AppleAnswer(source: .verifyReceipt(environment: environment), transactions: response.transactions,
                           renewals: response.renewals, appleStatuses: [:], receipts: receipts)
    }

    /// The environment a response declares, after the policy's checks of it, its bundle id and app id.
    private func responseEnvironment(_ environment: AppStoreEnvironment?, bundleId: String?, appAppleId: Int64?,
                                     field: String) throws -> AppStoreEnvironment {
        try refusingOnFault {
            guard let environment else { throw Refusal(.policy, field: field, fault: "environment missing") }
            if let p = policy.environmentProblem(environment, field: field) { throw p }
            if let p = policy.bundleProblem(bundleId, field: field) { throw p }
            if let p = policy.appAppleIdProblem(appAppleId, environment: environment, field: field) { throw p }
            return environment
        }
    }

    /// Turns a verification, policy or decoding fault into a refusal that names it.
    private func refusingOnFault<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as RevalidationError {
            throw error
        } catch let r as Refusal {
            throw RevalidationError.refused(reason: r.description)
        } catch let v as VerificationError {
            throw RevalidationError.refused(reason: v.description)
        } catch let f as DecodingFault {
            throw RevalidationError.refused(reason: f.description)
        } catch {
            throw RevalidationError.refused(reason: "\(error)")
        }
    }
}
