import Foundation

/// The App Store Server API calls subdesk makes (revalidation's two, notification history
/// for backfills), authenticated with the in-app purchase key. Answers come back still signed: verifying them is the caller's job.
public final class AppStoreServerAPIClient: @unchecked Sendable {
    public let key: AppStoreAPIKey
    public let endpoints: AppStoreEndpoints
    /// Asked in this order; the next only when the previous does not know the transaction id.
    public let environments: [AppStoreEnvironment]
    let http: HTTPClient
    /// The token clock; tests pin it.
    var now: () -> Date = { Date() }

    public init(key: AppStoreAPIKey, endpoints: AppStoreEndpoints, policy: HTTPPolicy,
                environments: [AppStoreEnvironment] = [.production, .sandbox], maxConnections: Int = 8,
                onRetry: (@Sendable (HTTPRetryNotice) -> Void)? = nil) {
        self.key = key
        self.endpoints = endpoints
        self.environments = environments.isEmpty ? [.production, .sandbox] : environments
        http = HTTPClient(policy: policy, maxConnectionsPerHost: maxConnections, onRetry: onRetry)
    }

    /// Get All Subscription Statuses, from the first environment that knows `transactionId`
    /// (any transactionId, originalTransactionId, or, since API 1.20, appTransactionId of the customer).
    public func subscriptionStatuses(transactionId: String) throws -> SubscriptionStatusesResponse {
        let id = try Self.checkedTransactionId(transactionId)
        var tried: [String] = []
        for environment in environments {
            tried.append(environment.rawValue)
            let url = try endpoints.serverAPI(for: environment).appendingPathComponent("inApps/v1/subscriptions/\(id)")
            guard let json = try get(url, treatingNotFoundAsNil: true) else { continue }
            return try decode(url) { try SubscriptionStatusesResponse(json: json) }
        }
        throw RevalidationError.transactionNotFound(transactionId: id, environments: tried)
    }

    /// Every page of Get Transaction History in `environment` (for a transaction id or, since
    /// API 1.20, the customer's appTransactionId), following `revision` while
    /// `hasMore`, at most `pageLimit` pages.
    public func transactionHistory(transactionId: String, environment: AppStoreEnvironment,
                                   pageLimit: Int = 100) throws -> [TransactionHistoryResponse] {
        let id = try Self.checkedTransactionId(transactionId)
        let base = try endpoints.serverAPI(for: environment).appendingPathComponent("inApps/v2/history/\(id)")
        var pages: [TransactionHistoryResponse] = []
        var revision: String?
        while true {
            var components = URLComponents(url: base, resolvingAgainstBaseURL: false)
            var query = [URLQueryItem(name: "sort", value: "ASCENDING")]
            if let revision { query.append(URLQueryItem(name: "revision", value: revision)) }
            components?.queryItems = query
            guard let url = components?.url else {
                throw RevalidationError.notConfigured("cannot form a history URL from \(base.absoluteString)")
            }
            guard let json = try get(url, treatingNotFoundAsNil: true) else {
                throw RevalidationError.transactionNotFound(transactionId: id, environments: [environment.rawValue])
            }
            let page = try decode(url) { try TransactionHistoryResponse(json: json) }
            pages.append(page)
            guard page.hasMore else { return pages }
            guard let next = page.revision, !next.isEmpty, next != revision else {
                throw RevalidationError.malformedResponse(request: "GET \(url.absoluteString)",
                                                          problem: "hasMore is true but revision did not advance")
            }
            guard pages.count < pageLimit else {
                throw RevalidationError.malformedResponse(request: "GET \(base.absoluteString)",
                                                          problem: "history still has more after \(pageLimit) pages")
            }
            revision = next
        }
    }

    /// What Get Notification History is asked: a window of at most 180 days in the past,
    /// and whether only notifications Apple failed to deliver.
    public struct NotificationHistoryRequest: Equatable, Sendable {
        public var start: Millis
        public var end: Millis
        public var onlyFailures: Bool

        public init(start: Millis, end: Millis, onlyFailures: Bool) {
            self.start = start
            self.end = end
            self.onlyFailures = onlyFailures
        }
    }

    /// One page of Get Notification History in `environment`: the first without a token,
    /// the next with the token the previous page gave.
    public func notificationHistory(_ request: NotificationHistoryRequest, environment: AppStoreEnvironment,
                                    paginationToken: String?) throws -> NotificationHistoryResponse {
        let base = try endpoints.serverAPI(for: environment).appendingPathComponent("inApps/v1/notifications/history")
        var components = URLComponents(url: base, resolvingAgainstBaseURL: false)
        if let paginationToken { components?.queryItems = [URLQueryItem(name: "paginationToken", value: paginationToken)] }
        guard let url = components?.url else {
            throw RevalidationError.notConfigured("cannot form a notification history URL from \(base.absoluteString)")
        }
        var body: [String: Any] = ["startDate": request.start, "endDate": request.end]
        if request.onlyFailures { body["onlyFailures"] = true }
        let data = try JSONSerialization.data(withJSONObject: body, options: [.sortedKeys])
        guard let json = try send("POST", url, body: data, treatingNotFoundAsNil: false) else {
            throw RevalidationError.malformedResponse(request: "POST \(url.absoluteString)", problem: "no answer")
        }
        return try decode(url) { try NotificationHistoryResponse(json: json) }
    }

    /// Get Refund History: every refunded transaction of the customer who made
    /// `transactionId` (or whose app download is that appTransactionId, since API 1.20), following `revision` while `hasMore`, at most `pageLimit` pages.
    public func refundHistory(transactionId: String, environment: AppStoreEnvironment, pageLimit: Int = 50) throws -> [String] {
        let id = try Self.checkedTransactionId(transactionId)
        let base = try endpoints.serverAPI(for: environment).appendingPathComponent("inApps/v2/refund/lookup/\(id)")
        var signed: [String] = []
        var revision: String?
        for _ in 0..<pageLimit {
            var components = URLComponents(url: base, resolvingAgainstBaseURL: false)
            if let revision { components?.queryItems = [URLQueryItem(name: "revision", value: revision)] }
            guard let url = components?.url, let json = try get(url, treatingNotFoundAsNil: true) else {
                throw RevalidationError.transactionNotFound(transactionId: id, environments: [environment.rawValue])
            }
            signed += try json.strings("signedTransactions") ?? []
            guard try json.bool("hasMore") == true else { return signed }
            guard let next = try json.string("revision"), !next.isEmpty, next != revision else {
                throw RevalidationError.malformedResponse(request: "GET \(url.absoluteString)", problem: "hasMore is true but revision did not advance")
            }
            revision = next
        }
        throw RevalidationError.malformedResponse(request: "GET \(base.absoluteString)", problem: "refund history still has more after \(pageLimit) pages")
    }

    /// Get Transaction Info: one transaction as Apple has it now.
    public func transactionInfo(transactionId: String, environment: AppStoreEnvironment) throws -> String {
        let id = try Self.checkedTransactionId(transactionId)
        let url = try endpoints.serverAPI(for: environment).appendingPathComponent("inApps/v1/transactions/\(id)")
        guard let json = try get(url, treatingNotFoundAsNil: true) else {
            throw RevalidationError.transactionNotFound(transactionId: id, environments: [environment.rawValue])
        }
        guard let signed = try json.string("signedTransactionInfo") else {
            throw RevalidationError.malformedResponse(request: "GET \(url.absoluteString)", problem: "signedTransactionInfo missing")
        }
        return signed
    }

    /// Get App Transaction Info (API 1.17): the customer's app download, signed, for any of
    /// their transaction ids or their appTransactionId, from the first environment that has
    /// one; nil when none does (Apple's 4040019, or an id it does not know). Returns the
    /// `signedAppTransactionInfo` and the environment that answered.
    public func appTransactionInfo(id anyId: String) throws -> (signed: String, environment: AppStoreEnvironment)? {
        let id = try Self.checkedTransactionId(anyId)
        for environment in environments {
            let url = try endpoints.serverAPI(for: environment).appendingPathComponent("inApps/v1/transactions/appTransactions/\(id)")
            guard let json = try send("GET", url, body: nil, treatingNotFoundAsNil: true,
                                      alsoNotFound: [AppStoreAPIErrorBody.appTransactionDoesNotExist]) else { continue }
            guard let signed = try decode(url, { try json.string("signedAppTransactionInfo") }), !signed.isEmpty else {
                throw RevalidationError.malformedResponse(request: "GET \(url.absoluteString)", problem: "signedAppTransactionInfo missing")
            }
            return (signed, environment)
        }
        return nil
    }

    /// Set App Account Token: Apple records `token` (a UUID) on the purchase, so its later
    /// transactions and notifications carry it. Family-shared purchases are refused by Apple.
    public func setAppAccountToken(originalTransactionId: String, token: String, environment: AppStoreEnvironment) throws {
        let id = try Self.checkedTransactionId(originalTransactionId)
        guard UUID(uuidString: token) != nil else {
            throw RevalidationError.notConfigured("\(token.escapingControlCharacters()) is not a UUID; an app account token must be one")
        }
        let url = try endpoints.serverAPI(for: environment).appendingPathComponent("inApps/v1/transactions/\(id)/appAccountToken")
        let body = try JSONSerialization.data(withJSONObject: ["appAccountToken": token.lowercased()])
        _ = try send("PUT", url, body: body, treatingNotFoundAsNil: false, emptyAnswerAllowed: true)
    }

    /// Send Consumption Information (the version Apple documents today, keyed by the
    /// refunded transaction's id): `body` is a `ConsumptionAnswer`'s JSON. Apple answers 202.
    public func sendConsumptionInformation(transactionId: String, body: Data, environment: AppStoreEnvironment) throws {
        let id = try Self.checkedTransactionId(transactionId)
        let url = try endpoints.serverAPI(for: environment).appendingPathComponent("inApps/v2/transactions/consumption/\(id)")
        _ = try send("PUT", url, body: body, treatingNotFoundAsNil: false, emptyAnswerAllowed: true)
    }

    /// Extend a Subscription Renewal Date: `days` (1-90) for `reasonCode` (0 undeclared,
    /// 1 customer satisfaction, 2 other, 3 service issue or outage).
    public func extendRenewalDate(originalTransactionId: String, days: Int, reasonCode: Int, requestIdentifier: String,
                                  environment: AppStoreEnvironment) throws -> ExtendRenewalDateResponse {
        let id = try Self.checkedTransactionId(originalTransactionId)
        let url = try endpoints.serverAPI(for: environment).appendingPathComponent("inApps/v1/subscriptions/extend/\(id)")
        let body = try JSONSerialization.data(withJSONObject: ["extendByDays": days, "extendReasonCode": reasonCode,
                                                              "requestIdentifier": requestIdentifier], options: [.sortedKeys])
        guard let json = try send("PUT", url, body: body, treatingNotFoundAsNil: false) else {
            throw RevalidationError.malformedResponse(request: "PUT \(url.absoluteString)", problem: "no answer")
        }
        return try decode(url) { try ExtendRenewalDateResponse(json: json) }
    }

    /// Extend Subscription Renewal Dates for All Active Subscribers of `productId`
    /// (optionally only in `storefronts`); Apple works through them in the background.
    public func extendForAllActive(productId: String, days: Int, reasonCode: Int, requestIdentifier: String,
                                   storefronts: [String], environment: AppStoreEnvironment) throws {
        let url = try endpoints.serverAPI(for: environment).appendingPathComponent("inApps/v1/subscriptions/extend/mass")
        var object: [String: Any] = ["extendByDays": days, "extendReasonCode": reasonCode, "requestIdentifier": requestIdentifier,
                                     "productId": productId]
        if !storefronts.isEmpty { object["storefrontCountryCodes"] = storefronts }
        let body = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        _ = try send("POST", url, body: body, treatingNotFoundAsNil: false, emptyAnswerAllowed: true)
    }

    /// Get Status of Subscription Renewal Date Extensions for a mass extension.
    public func massExtensionStatus(productId: String, requestIdentifier: String, environment: AppStoreEnvironment) throws -> MassExtensionStatus {
        guard UUID(uuidString: requestIdentifier) != nil,
              !productId.isEmpty, productId.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) }) else {
            throw RevalidationError.notConfigured("a product id and a request identifier (UUID) are needed to ask for an extension's status")
        }
        let url = try endpoints.serverAPI(for: environment)
            .appendingPathComponent("inApps/v1/subscriptions/extend/mass/\(productId)/\(requestIdentifier)")
        guard let json = try get(url, treatingNotFoundAsNil: false) else {
            throw RevalidationError.malformedResponse(request: "GET \(url.absoluteString)", problem: "no answer")
        }
        return try decode(url) { try MassExtensionStatus(json: json) }
    }

    /// Look Up Order ID (production only: orders are real purchases). Order ids are the
    /// letters and digits on the customer's e-mailed receipt; anything else is refused
    /// before it can bend the request path.
    public func lookUpOrder(_ orderId: String) throws -> OrderLookupResponse {
        guard AppStoreServerAPIClient.looksLikeOrderId(orderId) else {
            throw RevalidationError.unknownSubscription("\(orderId.escapingControlCharacters()) is not an order id (letters and digits)")
        }
        let url = try endpoints.serverAPI(for: .production).appendingPathComponent("inApps/v1/lookup/\(orderId)")
        guard let json = try get(url, treatingNotFoundAsNil: false) else {
            throw RevalidationError.malformedResponse(request: "GET \(url.absoluteString)", problem: "no answer")
        }
        return try decode(url) { try OrderLookupResponse(json: json) }
    }

    /// An order id as Apple prints it on receipts: upper-case letters and digits, with at
    /// least one letter (an id of digits only is a transaction id).
    public static func looksLikeOrderId(_ text: String) -> Bool {
        (6...32).contains(text.count) && text.allSatisfy { $0.isASCII && ($0.isUppercase || $0.isNumber) }
            && text.contains { $0.isLetter }
    }

    /// Request a Test Notification: Apple sends a TEST notification to the app's server
    /// URL for `environment`; the token names it for `testNotificationStatus`.
    public func requestTestNotification(environment: AppStoreEnvironment) throws -> String {
        let url = try endpoints.serverAPI(for: environment).appendingPathComponent("inApps/v1/notifications/test")
        guard let json = try send("POST", url, body: nil, treatingNotFoundAsNil: false),
              let token = try json.string("testNotificationToken"), !token.isEmpty else {
            throw RevalidationError.malformedResponse(request: "POST \(url.absoluteString)", problem: "no testNotificationToken")
        }
        return token
    }

    /// Get Test Notification Status: the TEST notification's signed payload and Apple's
    /// attempts to deliver it so far.
    public func testNotificationStatus(token: String, environment: AppStoreEnvironment) throws -> TestNotificationStatus {
        guard !token.isEmpty, token.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == ".") }) else {
            throw RevalidationError.malformedResponse(request: "test notification", problem: "the token \(token.escapingControlCharacters()) is not one Apple gives")
        }
        let url = try endpoints.serverAPI(for: environment).appendingPathComponent("inApps/v1/notifications/test/\(token)")
        guard let json = try get(url, treatingNotFoundAsNil: false) else {
            throw RevalidationError.malformedResponse(request: "GET \(url.absoluteString)", problem: "no answer")
        }
        return try decode(url) { try TestNotificationStatus(json: json) }
    }

    /// Apple's transaction ids are decimal digits; anything else is refused before it can
    /// bend the request path.
    public static func checkedTransactionId(_ id: String) throws -> String {
        guard !id.isEmpty, id.count <= 64, id.allSatisfy({ $0.isASCII && $0.isNumber }) else {
            throw RevalidationError.unknownSubscription("\(id.escapingControlCharacters()) is not an App Store transaction id (digits only)")
        }
        return id
    }

    /// A GET with a fresh token. A 404 carrying error 4040010 gives nil, so the caller
    /// can ask the next environment; other non-2xx answers throw, named.
    private func get(_ url: URL, treatingNotFoundAsNil: Bool) throws -> JSONFields? {
        try send("GET", url, body: nil, treatingNotFoundAsNil: treatingNotFoundAsNil)
    }

    /// A request with a fresh token, JSON in and out; errors as `get` says.
    /// - Parameter alsoNotFound: error codes besides 4040010 that mean "not here" for this request.
    private func send(_ method: String, _ url: URL, body: Data?, treatingNotFoundAsNil: Bool,
                      emptyAnswerAllowed: Bool = false, alsoNotFound: [Int] = []) throws -> JSONFields? {
        let token: String
        do {
            token = try key.token(now: now())
        } catch {
            throw RevalidationError.notConfigured("cannot sign the App Store Server API token: \(error)")
        }
        var headers = ["Authorization": "Bearer \(token)", "Accept": "application/json"]
        if body != nil { headers["Content-Type"] = "application/json" }
        let request = HTTPRequest(method: method, url: url, headers: headers, body: body)
        let response = try http.send(request)
        let label = request.label
        if (200..<300).contains(response.status) {
            if emptyAnswerAllowed && response.body.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D }) { return nil }
            do {
                return try JSONFields(data: response.body, path: "response")
            } catch let fault as DecodingFault {
                throw RevalidationError.malformedResponse(request: label, problem: fault.description)
            }
        }
        let error = AppStoreAPIErrorBody(response.body)
        if treatingNotFoundAsNil, response.status == 404,
           let code = error?.errorCode, code == AppStoreAPIErrorBody.transactionIdNotFound || alsoNotFound.contains(code) {
            return nil
        }
        let message: String
        switch response.status {
        case 401: message = "unauthorized: Apple refused the token (check api_key_id, api_issuer_id, bundle_id and the key file)"
        default: message = error?.summary ?? "no error body"
        }
        throw RevalidationError.http(request: label, status: response.status, apiErrorCode: error?.errorCode,
                                     message: message, attempts: 1)
    }

    private func decode<T>(_ url: URL, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let fault as DecodingFault {
            throw RevalidationError.malformedResponse(request: url.absoluteString, problem: fault.description)
        }
    }
}
