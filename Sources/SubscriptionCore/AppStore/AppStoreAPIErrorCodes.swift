import Foundation

/// One error code the App Store Server API answers with: Apple's name for it, what it
/// means in words an operator reads, and whether Apple documents it as one to try again.
public struct AppStoreAPIErrorCode: Equatable, Sendable {
    public let code: Int
    public let name: String
    public let meaning: String
    /// Apple marks only the "…Retryable" errors as worth another try; every other 4xx
    /// and 5000000 gives the same answer however often it is asked.
    public let retryable: Bool

    /// Apple's documented list (App Store Server API "Error codes", as of API 1.21), in one
    /// place: messages, retries and the README all read it from here.
    public static let known: [Int: AppStoreAPIErrorCode] = {
        let rows: [(Int, String, String, Bool)] = [
            (4000000, "GeneralBadRequestError", "invalid request", false),
            (4000002, "InvalidAppIdentifierError", "invalid app identifier", false),
            (4000005, "InvalidRequestRevisionError", "invalid request revision", false),
            (4000006, "InvalidTransactionIdError", "invalid transaction id", false),
            (4000008, "InvalidOriginalTransactionIdError", "invalid original transaction id", false),
            (4000009, "InvalidExtendByDaysError", "invalid extend-by-days value (1 to 90)", false),
            (4000010, "InvalidExtendReasonCodeError", "invalid extension reason code", false),
            (4000011, "InvalidRequestIdentifierError", "invalid request identifier", false),
            (4000012, "StartDateTooFarInPastError", "the start date is earlier than Apple allows", false),
            (4000013, "StartDateAfterEndDateError", "the end date is not after the start date", false),
            (4000014, "InvalidPaginationTokenError", "invalid pagination token", false),
            (4000015, "InvalidStartDateError", "invalid start date", false),
            (4000016, "InvalidEndDateError", "invalid end date", false),
            (4000017, "PaginationTokenExpiredError", "the pagination token expired", false),
            (4000018, "InvalidNotificationTypeError", "invalid notification type or subtype", false),
            (4000019, "MultipleFiltersSuppliedError", "too many filters in one request", false),
            (4000020, "InvalidTestNotificationTokenError", "invalid test notification token", false),
            (4000021, "InvalidSortError", "invalid sort parameter", false),
            (4000022, "InvalidProductTypeError", "invalid product type", false),
            (4000023, "InvalidProductIdError", "invalid product id", false),
            (4000024, "InvalidSubscriptionGroupIdentifierError", "invalid subscription group identifier", false),
            (4000025, "InvalidExcludeRevokedError", "invalid exclude-revoked parameter", false),
            (4000026, "InvalidInAppOwnershipTypeError", "invalid in-app ownership type", false),
            (4000027, "InvalidEmptyStorefrontCountryCodeListError", "the storefront country code list is empty", false),
            (4000028, "InvalidStorefrontCountryCodeError", "invalid storefront country code", false),
            (4000030, "InvalidRevokedError", "invalid revoked parameter", false),
            (4000031, "InvalidStatusError", "invalid status parameter", false),
            (4000032, "InvalidAccountTenureError", "invalid account tenure", false),
            (4000033, "InvalidAppAccountTokenError", "invalid app account token", false),
            (4000034, "InvalidConsumptionStatusError", "invalid consumption status", false),
            (4000035, "InvalidCustomerConsentedError", "customerConsented is missing or not true", false),
            (4000036, "InvalidDeliveryStatusError", "invalid delivery status", false),
            (4000037, "InvalidLifetimeDollarsPurchasedError", "invalid lifetime dollars purchased", false),
            (4000038, "InvalidLifetimeDollarsRefundedError", "invalid lifetime dollars refunded", false),
            (4000039, "InvalidPlatformError", "invalid platform", false),
            (4000040, "InvalidPlayTimeError", "invalid play time", false),
            (4000041, "InvalidSampleContentProvidedError", "invalid sample content provided", false),
            (4000042, "InvalidUserStatusError", "invalid user status", false),
            (4000043, "InvalidTransactionNotConsumableError", "the transaction is not a consumable", false),
            (4000047, "InvalidTransactionTypeNotSupportedError", "the transaction's product type is not supported here", false),
            (4000048, "AppTransactionIdNotSupportedError", "this endpoint does not take an app transaction id", false),
            (4000183, "InvalidAppAccountTokenUUIDError", "the app account token is not a UUID", false),
            (4000185, "FamilyTransactionNotSupportedError", "family-shared purchases are not supported here", false),
            (4000187, "TransactionIdIsNotOriginalTransactionIdError", "this endpoint needs an original transaction id", false),
            (4030004, "SubscriptionExtensionIneligibleError", "the subscription's state does not allow a renewal-date extension", false),
            (4030005, "SubscriptionMaxExtensionError", "the subscription already had the most renewal-date extensions Apple allows", false),
            (4030007, "FamilySharedSubscriptionExtensionIneligibleError", "a family-shared subscription cannot be extended directly", false),
            (4040001, "AccountNotFoundError", "App Store account not found", false),
            (4040002, "AccountNotFoundRetryableError", "App Store account not found; try again", true),
            (4040003, "AppNotFoundError", "app not found (check bundle_id)", false),
            (4040004, "AppNotFoundRetryableError", "app not found; try again", true),
            (4040005, "OriginalTransactionIdNotFoundError", "original transaction id not found", false),
            (4040006, "OriginalTransactionIdNotFoundRetryableError", "original transaction id not found; try again", true),
            (4040007, "ServerNotificationURLNotFoundError", "no App Store Server Notifications URL is set for this environment", false),
            (4040008, "TestNotificationNotFoundError", "the test notification token expired or its status is not available", false),
            (4040009, "StatusRequestNotFoundError", "no renewal-date extension request with this identifier and product", false),
            (4040010, "TransactionIdNotFoundError", "transaction id not found", false),
            (4040019, "AppTransactionDoesNotExistError", "no app transaction for this customer", false),
            (4290000, "RateLimitExceededError", "rate limit exceeded", true),
            (5000000, "GeneralInternalError", "general internal error", false),
            (5000001, "GeneralInternalRetryableError", "general internal error; try again", true),
        ]
        // The Retention Messaging API's own codes, none of them one to try again.
        let retention = RetentionAPIError.allCases.map { ($0.rawValue, $0.entry.name, $0.entry.meaning, false) }
        return Dictionary(uniqueKeysWithValues: (rows + retention).map { ($0.0, AppStoreAPIErrorCode(code: $0.0, name: $0.1, meaning: $0.2, retryable: $0.3)) })
    }()

    public static func lookup(_ code: Int) -> AppStoreAPIErrorCode? { known[code] }
}
