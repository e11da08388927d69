/// A V2 `notificationType`. Unknown values are kept as they came, never rejected.
public struct NotificationType: RawRepresentable, Hashable, Codable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    public static let subscribed = NotificationType(rawValue: "SUBSCRIBED")
    public static let didRenew = NotificationType(rawValue: "DID_RENEW")
    public static let didChangeRenewalPref = NotificationType(rawValue: "DID_CHANGE_RENEWAL_PREF")
    public static let didChangeRenewalStatus = NotificationType(rawValue: "DID_CHANGE_RENEWAL_STATUS")
    public static let offerRedeemed = NotificationType(rawValue: "OFFER_REDEEMED")
    public static let didFailToRenew = NotificationType(rawValue: "DID_FAIL_TO_RENEW")
    public static let gracePeriodExpired = NotificationType(rawValue: "GRACE_PERIOD_EXPIRED")
    public static let expired = NotificationType(rawValue: "EXPIRED")
    public static let priceIncrease = NotificationType(rawValue: "PRICE_INCREASE")
    public static let refund = NotificationType(rawValue: "REFUND")
    public static let refundDeclined = NotificationType(rawValue: "REFUND_DECLINED")
    public static let refundReversed = NotificationType(rawValue: "REFUND_REVERSED")
    public static let consumptionRequest = NotificationType(rawValue: "CONSUMPTION_REQUEST")
    public static let renewalExtended = NotificationType(rawValue: "RENEWAL_EXTENDED")
    public static let renewalExtension = NotificationType(rawValue: "RENEWAL_EXTENSION")
    public static let revoke = NotificationType(rawValue: "REVOKE")
    public static let test = NotificationType(rawValue: "TEST")
    public static let externalPurchaseToken = NotificationType(rawValue: "EXTERNAL_PURCHASE_TOKEN")
    public static let oneTimeCharge = NotificationType(rawValue: "ONE_TIME_CHARGE")
    /// A parent or guardian withdrew consent (Notifications 2.19): Apple stops the app from
    /// launching for that user. It carries `appData`, naming the app transaction, not a purchase.
    public static let rescindConsent = NotificationType(rawValue: "RESCIND_CONSENT")

    /// Types Apple added after the ones above (its changelog and libraries, 2025): subdesk
    /// keeps them and models no state effect for them (`NotificationMeanings.standard`).
    public static let metadataUpdate = NotificationType(rawValue: "METADATA_UPDATE")
    public static let migration = NotificationType(rawValue: "MIGRATION")
    public static let priceChange = NotificationType(rawValue: "PRICE_CHANGE")

    // V1 names (`notification_type`) that V2 does not use; the others are spelled as V2's.
    public static let initialBuy = NotificationType(rawValue: "INITIAL_BUY")
    public static let cancel = NotificationType(rawValue: "CANCEL")
    public static let renewal = NotificationType(rawValue: "RENEWAL")
    public static let interactiveRenewal = NotificationType(rawValue: "INTERACTIVE_RENEWAL")
    public static let didRecover = NotificationType(rawValue: "DID_RECOVER")
    public static let priceIncreaseConsent = NotificationType(rawValue: "PRICE_INCREASE_CONSENT")

    /// Every V2 type the table of meanings knows, in its order.
    public static var documented: [NotificationType] { NotificationMeanings.standard.v2Types }

    public var isDocumented: Bool { NotificationMeanings.standard.v2Types.contains(self) }
}

/// A V2 `subtype`. Unknown values are kept as they came.
public struct NotificationSubtype: RawRepresentable, Hashable, Codable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    public static let initialBuy = NotificationSubtype(rawValue: "INITIAL_BUY")
    public static let resubscribe = NotificationSubtype(rawValue: "RESUBSCRIBE")
    public static let downgrade = NotificationSubtype(rawValue: "DOWNGRADE")
    public static let upgrade = NotificationSubtype(rawValue: "UPGRADE")
    public static let autoRenewEnabled = NotificationSubtype(rawValue: "AUTO_RENEW_ENABLED")
    public static let autoRenewDisabled = NotificationSubtype(rawValue: "AUTO_RENEW_DISABLED")
    public static let voluntary = NotificationSubtype(rawValue: "VOLUNTARY")
    public static let billingRetry = NotificationSubtype(rawValue: "BILLING_RETRY")
    public static let priceIncrease = NotificationSubtype(rawValue: "PRICE_INCREASE")
    public static let gracePeriod = NotificationSubtype(rawValue: "GRACE_PERIOD")
    public static let pending = NotificationSubtype(rawValue: "PENDING")
    public static let accepted = NotificationSubtype(rawValue: "ACCEPTED")
    public static let billingRecovery = NotificationSubtype(rawValue: "BILLING_RECOVERY")
    public static let productNotForSale = NotificationSubtype(rawValue: "PRODUCT_NOT_FOR_SALE")
    public static let summary = NotificationSubtype(rawValue: "SUMMARY")
    public static let failure = NotificationSubtype(rawValue: "FAILURE")
    public static let unreported = NotificationSubtype(rawValue: "UNREPORTED")

    /// External purchase tokens (Apple's changelog, 2025): a reminder about an active token,
    /// and a token created.
    public static let activeTokenReminder = NotificationSubtype(rawValue: "ACTIVE_TOKEN_REMINDER")
    public static let created = NotificationSubtype(rawValue: "CREATED")

    /// Every subtype the table of meanings names, in its order.
    public static var documented: [NotificationSubtype] { NotificationMeanings.standard.subtypes }
}

/// Apple's `environment` values. Unknown values are kept as they came.
public struct AppStoreEnvironment: RawRepresentable, Hashable, Codable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    public static let production = AppStoreEnvironment(rawValue: "Production")
    public static let sandbox = AppStoreEnvironment(rawValue: "Sandbox")
    public static let xcode = AppStoreEnvironment(rawValue: "Xcode")
    public static let localTesting = AppStoreEnvironment(rawValue: "LocalTesting")

    /// Parses a user's spelling (`production`, `PROD`, `sandbox`...) of an environment.
    public static func parse(_ text: String) -> AppStoreEnvironment? {
        switch text.lowercased() {
        case "production", "prod": return .production
        case "sandbox": return .sandbox
        case "xcode": return .xcode
        case "localtesting", "local-testing", "local_testing": return .localTesting
        default: return nil
        }
    }

    /// V1 notifications say `PROD` or `Sandbox`.
    public static func fromV1(_ text: String) -> AppStoreEnvironment {
        text.uppercased() == "PROD" ? .production : (text.lowercased() == "sandbox" ? .sandbox : AppStoreEnvironment(rawValue: text))
    }
}
