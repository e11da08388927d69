import Foundation

/// The statuses verifyReceipt answers with, and what each means.
public enum VerifyReceiptStatus {
    public static let valid = 0
    /// Valid, but the subscription expired; the receipt is decoded and returned all the same.
    public static let validButExpired = 21006
    /// A sandbox receipt sent to production: ask the sandbox.
    public static let sandboxReceiptSentToProduction = 21007

    /// The documented meaning of `status` (21000-21010, 21100-21199).
    public static func meaning(_ status: Int) -> String {
        switch status {
        case 0: return "the receipt is valid"
        case 21000: return "the request to the App Store was not made using the HTTP POST request method"
        case 21001: return "this status code is no longer sent by the App Store"
        case 21002: return "the data in the receipt-data property was malformed or the service experienced a temporary issue"
        case 21003: return "the receipt could not be authenticated"
        case 21004: return "the shared secret you provided does not match the shared secret on file for your account"
        case 21005: return "the receipt server was temporarily unable to provide the receipt"
        case 21006: return "the receipt is valid but the subscription has expired"
        case 21007: return "this receipt is from the test environment, but it was sent to the production environment for verification"
        case 21008: return "this receipt is from the production environment, but it was sent to the test environment for verification"
        case 21009: return "internal data access error"
        case 21010: return "the user account cannot be found or has been deleted"
        case 21100...21199: return "internal data access error (App Store internal error \(status))"
        default: return "undocumented status \(status)"
        }
    }

    /// Statuses whose documentation says "try again": a retry may well succeed.
    /// 21100-21199 carry their own `is-retryable`, which decides for them.
    public static func isTemporary(_ status: Int) -> Bool {
        status == 21002 || status == 21005 || status == 21009
    }

    public static func isInternalError(_ status: Int) -> Bool { (21100...21199).contains(status) }
}

/// A verifyReceipt response body, decoded into the same records intake stores.
public struct VerifyReceiptResponse: Sendable {
    public var status: Int
    public var environment: AppStoreEnvironment?
    /// Only meaningful for 21100-21199.
    public var isRetryable: Bool?
    public var latestReceipt: String?
    /// `receipt.bundle_id`.
    public var bundleId: String?
    /// `latest_receipt_info` and `receipt.in_app` together, one record per transaction id.
    public var transactions: [TransactionRecord]
    public var renewals: [RenewalRecord]

    /// - Parameter receivedAt: when the answer came, the stand-in for a signing time
    ///   when the receipt has no `request_date_ms`.
    public init(json: JSONFields, receivedAt: Millis) throws {
        guard let status = try json.int("status") else {
            throw DecodingFault(path: json.fieldPath("status"), problem: "missing")
        }
        self.status = status
        environment = try json.string("environment").map(AppStoreEnvironment.fromV1)
        isRetryable = try json.bool("is-retryable")
        latestReceipt = try json.string("latest_receipt")
        let receipt = try json.object("receipt")
        bundleId = try receipt?.string("bundle_id") ?? receipt?.string("bid")
        let env = environment ?? .production
        let bid = bundleId

        // Only auto-renewable entries (those with an expiry) matter here; consumables
        // and non-consumables in `in_app` would otherwise turn into subscriptions.
        var byId: [String: TransactionRecord] = [:]
        var order: [String] = []
        let latest = try (json.objects("latest_receipt_info") ?? []).map { try ReceiptInfo.transaction($0, environment: env, bundleId: bid) }
        let inApp = try (receipt?.objects("in_app") ?? []).map { try ReceiptInfo.transaction($0, environment: env, bundleId: bid) }
        // latest_receipt_info comes first: it is the fuller list and wins over in_app.
        for t in latest + inApp where t.expiresDate != nil && byId[t.transactionId] == nil {
            byId[t.transactionId] = t
            order.append(t.transactionId)
        }
        let newest = ReceiptInfo.newestDate(Array(byId.values))
        transactions = order.compactMap { byId[$0] }.map { var t = $0; t.signedDate = newest; return t }
        // Pending renewal info is Apple's view as of the request, so it is versioned by the
        // request time and replaces renewal info signed before it.
        let asOf = try receipt?.millis("request_date_ms") ?? receivedAt
        renewals = try (json.objects("pending_renewal_info") ?? []).map {
            try ReceiptInfo.renewal($0, environment: env, defaultAutoRenewStatus: nil, signedDate: asOf)
        }
    }

    /// Whether the body carries usable receipt data.
    public var isValid: Bool { status == VerifyReceiptStatus.valid || status == VerifyReceiptStatus.validButExpired }
}
