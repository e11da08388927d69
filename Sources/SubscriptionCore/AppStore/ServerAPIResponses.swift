import Foundation

/// Get All Subscription Statuses (`GET /inApps/v1/subscriptions/{transactionId}`).
public struct SubscriptionStatusesResponse: Sendable {
    public var environment: AppStoreEnvironment?
    public var bundleId: String?
    public var appAppleId: Int64?
    public var groups: [Group]

    /// One subscription group's `lastTransactions`.
    public struct Group: Sendable {
        public var subscriptionGroupIdentifier: String?
        public var lastTransactions: [LastTransaction]
    }

    /// The newest transaction and renewal info of one subscription, both still signed.
    public struct LastTransaction: Sendable {
        public var originalTransactionId: String
        /// Apple's status: 1 active, 2 expired, 3 billing retry, 4 grace period, 5 revoked.
        public var status: Int?
        public var signedTransactionInfo: String?
        public var signedRenewalInfo: String?
    }

    public init(json: JSONFields) throws {
        environment = try json.string("environment").map(AppStoreEnvironment.init(rawValue:))
        bundleId = try json.string("bundleId")
        appAppleId = try json.int64("appAppleId")
        groups = try (json.objects("data") ?? []).map { group in
            Group(subscriptionGroupIdentifier: try group.stringOrNumber("subscriptionGroupIdentifier"),
                  lastTransactions: try (group.objects("lastTransactions") ?? []).map { last in
                      LastTransaction(
                          originalTransactionId: try last.stringOrNumber("originalTransactionId")
                              ?? { throw DecodingFault(path: last.fieldPath("originalTransactionId"), problem: "missing") }(),
                          status: try last.int("status"),
                          signedTransactionInfo: try last.string("signedTransactionInfo"),
                          signedRenewalInfo: try last.string("signedRenewalInfo"))
                  })
        }
    }
}

/// One page of Get Transaction History (`GET /inApps/v2/history/{transactionId}`).
public struct TransactionHistoryResponse: Sendable {
    /// Where the next page starts.
    public var revision: String?
    public var hasMore: Bool
    public var environment: AppStoreEnvironment?
    public var bundleId: String?
    public var appAppleId: Int64?
    public var signedTransactions: [String]

    public init(json: JSONFields) throws {
        revision = try json.string("revision")
        hasMore = try json.bool("hasMore") ?? false
        environment = try json.string("environment").map(AppStoreEnvironment.init(rawValue:))
        bundleId = try json.string("bundleId")
        appAppleId = try json.int64("appAppleId")
        signedTransactions = try json.strings("signedTransactions") ?? []
    }
}

/// One try of Apple's to deliver a notification: when, and what came of it
/// (`SUCCESS`, `TIMED_OUT`, `NO_RESPONSE`, `CIRCULAR_REDIRECT`, `SSL_ISSUE`, ...).
public struct SendAttempt: Equatable, Sendable {
    public var date: Millis
    public var result: String

    public init(date: Millis, result: String) {
        self.date = date
        self.result = result
    }

    public init(json: JSONFields) throws {
        date = try json.millis("attemptDate") ?? 0
        result = try json.string("sendAttemptResult") ?? "UNKNOWN"
    }

    /// `[{"attemptDate": ..., "sendAttemptResult": ...}]`, as Apple writes them, for the store.
    public static func json(_ attempts: [SendAttempt]) -> String {
        // Apple's results are upper-case names; one that is not goes through the serializer.
        let plain = attempts.allSatisfy { $0.result.utf8.allSatisfy { ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x5F } }
        guard plain else {
            let objects = attempts.map { ["attemptDate": $0.date, "sendAttemptResult": $0.result] as [String: Any] }
            let data = (try? JSONSerialization.data(withJSONObject: objects, options: [.sortedKeys])) ?? Data("[]".utf8)
            return String(decoding: data, as: UTF8.self)
        }
        return "[" + attempts.map { #"{"attemptDate":\#($0.date),"sendAttemptResult":"\#($0.result)"}"# }.joined(separator: ",") + "]"
    }

    public static func parse(_ text: String) -> [SendAttempt] {
        guard let array = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [[String: Any]] else { return [] }
        return array.map { SendAttempt(date: ($0["attemptDate"] as? NSNumber)?.int64Value ?? 0,
                                       result: $0["sendAttemptResult"] as? String ?? "UNKNOWN") }
    }
}

/// Look Up Order ID: status 0 with the order's signed transactions, or 1 for an order id
/// Apple does not know.
public struct OrderLookupResponse: Sendable {
    public var status: Int
    public var signedTransactions: [String]

    public init(json: JSONFields) throws {
        status = try json.int("status") ?? -1
        signedTransactions = try json.strings("signedTransactions") ?? []
    }
}

/// Extend a Subscription Renewal Date's answer.
public struct ExtendRenewalDateResponse: Sendable {
    public var success: Bool
    public var effectiveDate: Millis?
    public var originalTransactionId: String?

    public init(json: JSONFields) throws {
        success = try json.bool("success") ?? false
        effectiveDate = try json.millis("effectiveDate")
        originalTransactionId = try json.string("originalTransactionId")
    }
}

/// Get Status of Subscription Renewal Date Extensions: how far a mass extension has got.
public struct MassExtensionStatus: Sendable {
    public var requestIdentifier: String?
    public var complete: Bool
    public var completeDate: Millis?
    public var succeededCount: Int?
    public var failedCount: Int?

    public init(json: JSONFields) throws {
        requestIdentifier = try json.string("requestIdentifier")
        complete = try json.bool("complete") ?? false
        completeDate = try json.millis("completeDate")
        succeededCount = try json.int("succeededCount")
        failedCount = try json.int("failedCount")
    }
}

/// Get Test Notification Status: the TEST notification Apple sent and how delivering it went.
public struct TestNotificationStatus: Sendable {
    public var signedPayload: String?
    public var sendAttempts: [SendAttempt]

    public init(json: JSONFields) throws {
        signedPayload = try json.string("signedPayload")
        sendAttempts = try (json.objects("sendAttempts") ?? []).map(SendAttempt.init(json:))
    }
}

/// A page of Get Notification History: notifications Apple sent (or tried to) in a time
/// window, each with its signed payload and Apple's delivery attempts.
public struct NotificationHistoryResponse: Sendable {
    public struct Item: Sendable {
        public var signedPayload: String
        public var sendAttempts: [SendAttempt]
    }

    /// Where the next page starts.
    public var paginationToken: String?
    public var hasMore: Bool
    public var items: [Item]

    public init(json: JSONFields) throws {
        paginationToken = try json.string("paginationToken")
        hasMore = try json.bool("hasMore") ?? false
        items = try (json.objects("notificationHistory") ?? []).map { item in
            Item(signedPayload: try item.requiredString("signedPayload"),
                 sendAttempts: try (item.objects("sendAttempts") ?? []).map(SendAttempt.init(json:)))
        }
    }
}

/// The error body the App Store Server API sends with a 4xx or 5xx: `{"errorCode", "errorMessage"}`.
public struct AppStoreAPIErrorBody: Equatable, Sendable {
    public var errorCode: Int
    public var errorMessage: String?

    public static let transactionIdNotFound = 4040010
    /// Get App Transaction Info: the customer has no app transaction (in this environment).
    public static let appTransactionDoesNotExist = 4040019

    /// Parses an error body; nil when the body is not one (Apple sends none with a 401).
    public init?(_ body: Data) {
        guard !body.isEmpty, let json = try? JSONFields(data: body, path: "error"),
              let code = try? json.int("errorCode") else { return nil }
        errorCode = code
        errorMessage = (try? json.string("errorMessage")) ?? nil
    }

    /// Apple's message, or what the code means when the message is missing.
    public var summary: String {
        let known = Self.meaning(errorCode)
        let message = errorMessage.map { $0.escapingControlCharacters() }
        switch (message, known) {
        case let (m?, _): return m
        case let (nil, k?): return k
        default: return "no message"
        }
    }

    /// What the code means, from Apple's list (`AppStoreAPIErrorCode`).
    public static func meaning(_ code: Int) -> String? {
        AppStoreAPIErrorCode.lookup(code)?.meaning
    }

    /// Whether Apple documents this code as one to try again.
    public var isRetryable: Bool { AppStoreAPIErrorCode.lookup(errorCode)?.retryable ?? false }
}
