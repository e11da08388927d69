/// A V2 `notificationType`. Unknown values are kept as they came, never rejected.
public struct NotificationType: RawRepresentable, Hashable, Codable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    /// A type subdesk declares: one of `Name`'s.
    public init(_ name: Name) { rawValue = name.rawValue }
    public var description: String { rawValue }

    /// The types subdesk declares, each a case once (the table of meanings gives each a
    /// row: `NotificationMeaningTests`); one Apple adds later is kept all the same, as it came.
    public enum Name: String, CaseIterable, Sendable {
        case subscribed = "SUBSCRIBED"
        case didRenew = "DID_RENEW"
        case didChangeRenewalPref = "DID_CHANGE_RENEWAL_PREF"
        case didChangeRenewalStatus = "DID_CHANGE_RENEWAL_STATUS"
        case offerRedeemed = "OFFER_REDEEMED"
        case didFailToRenew = "DID_FAIL_TO_RENEW"
        case gracePeriodExpired = "GRACE_PERIOD_EXPIRED"
        case expired = "EXPIRED"
        case priceIncrease = "PRICE_INCREASE"
        case refund = "REFUND"
        case refundDeclined = "REFUND_DECLINED"
        case refundReversed = "REFUND_REVERSED"
        case consumptionRequest = "CONSUMPTION_REQUEST"
        case renewalExtended = "RENEWAL_EXTENDED"
        case renewalExtension = "RENEWAL_EXTENSION"
        case revoke = "REVOKE"
        case test = "TEST"
        case externalPurchaseToken = "EXTERNAL_PURCHASE_TOKEN"
        case oneTimeCharge = "ONE_TIME_CHARGE"
        /// A parent or guardian withdrew consent (Notifications 2.19): Apple stops the app from
        /// launching for that user. It carries `appData`, naming the app transaction, not a purchase.
        case rescindConsent = "RESCIND_CONSENT"

        /// Types Apple added after the ones above (its changelog and libraries, 2025): subdesk
        /// keeps them and models no state effect for them (`NotificationMeanings.standard`).
        case metadataUpdate = "METADATA_UPDATE"
        case migration = "MIGRATION"
        case priceChange = "PRICE_CHANGE"

        // V1 names (`notification_type`) that V2 does not use; the others are spelled as V2's.
        case initialBuy = "INITIAL_BUY"
        case cancel = "CANCEL"
        case renewal = "RENEWAL"
        case interactiveRenewal = "INTERACTIVE_RENEWAL"
        case didRecover = "DID_RECOVER"
        case priceIncreaseConsent = "PRICE_INCREASE_CONSENT"
    }

    public static let subscribed = NotificationType(.subscribed)
    public static let didRenew = NotificationType(.didRenew)
    public static let didChangeRenewalPref = NotificationType(.didChangeRenewalPref)
    public static let didChangeRenewalStatus = NotificationType(.didChangeRenewalStatus)
    public static let offerRedeemed = NotificationType(.offerRedeemed)
    public static let didFailToRenew = NotificationType(.didFailToRenew)
    public static let gracePeriodExpired = NotificationType(.gracePeriodExpired)
    public static let expired = NotificationType(.expired)
    public static let priceIncrease = NotificationType(.priceIncrease)
    public static let refund = NotificationType(.refund)
    public static let refundDeclined = NotificationType(.refundDeclined)
    public static let refundReversed = NotificationType(.refundReversed)
    public static let consumptionRequest = NotificationType(.consumptionRequest)
    public static let renewalExtended = NotificationType(.renewalExtended)
    public static let renewalExtension = NotificationType(.renewalExtension)
    public static let revoke = NotificationType(.revoke)
    public static let test = NotificationType(.test)
    public static let externalPurchaseToken = NotificationType(.externalPurchaseToken)
    public static let oneTimeCharge = NotificationType(.oneTimeCharge)
    public static let rescindConsent = NotificationType(.rescindConsent)
    public static let metadataUpdate = NotificationType(.metadataUpdate)
    public static let migration = NotificationType(.migration)
    public static let priceChange = NotificationType(.priceChange)
    public static let initialBuy = NotificationType(.initialBuy)
    public static let cancel = NotificationType(.cancel)
    public static let renewal = NotificationType(.renewal)
    public static let interactiveRenewal = NotificationType(.interactiveRenewal)
    public static let didRecover = NotificationType(.didRecover)
    public static let priceIncreaseConsent = NotificationType(.priceIncreaseConsent)

    public static var documented: [NotificationType] { NotificationMeanings.standard.v2Types }

    public var isDocumented: Bool { NotificationMeanings.standard.v2Types.contains(self) }
}

/// A V2 `subtype`. Unknown values are kept as they came.
public struct NotificationSubtype: RawRepresentable, Hashable, Codable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    /// A subtype subdesk declares: one of `Name`'s.
    public init(_ name: Name) { rawValue = name.rawValue }
    public var description: String { rawValue }

    /// The subtypes subdesk declares, each a case once (the table of meanings gives each a
    /// row: `NotificationMeaningTests`); one Apple adds later is kept all the same, as it came.
    public enum Name: String, CaseIterable, Sendable {
        case initialBuy = "INITIAL_BUY"
        case resubscribe = "RESUBSCRIBE"
        case downgrade = "DOWNGRADE"
        case upgrade = "UPGRADE"
        case autoRenewEnabled = "AUTO_RENEW_ENABLED"
        case autoRenewDisabled = "AUTO_RENEW_DISABLED"
        case voluntary = "VOLUNTARY"
        case billingRetry = "BILLING_RETRY"
        case priceIncrease = "PRICE_INCREASE"
        case gracePeriod = "GRACE_PERIOD"
        case pending = "PENDING"
        case accepted = "ACCEPTED"
        case billingRecovery = "BILLING_RECOVERY"
        case productNotForSale = "PRODUCT_NOT_FOR_SALE"
        case summary = "SUMMARY"
        case failure = "FAILURE"
        case unreported = "UNREPORTED"

        /// External purchase tokens (Apple's changelog, 2025): a reminder about an active token,
        /// and a token created.
        case activeTokenReminder = "ACTIVE_TOKEN_REMINDER"
        case created = "CREATED"
    }

    public static let initialBuy = NotificationSubtype(.initialBuy)
    public static let resubscribe = NotificationSubtype(.resubscribe)
    public static let downgrade = NotificationSubtype(.downgrade)
    public static let upgrade = NotificationSubtype(.upgrade)
    public static let autoRenewEnabled = NotificationSubtype(.autoRenewEnabled)
    public static let autoRenewDisabled = NotificationSubtype(.autoRenewDisabled)
    public static let voluntary = NotificationSubtype(.voluntary)
    public static let billingRetry = NotificationSubtype(.billingRetry)
    public static let priceIncrease = NotificationSubtype(.priceIncrease)
    public static let gracePeriod = NotificationSubtype(.gracePeriod)
    public static let pending = NotificationSubtype(.pending)
    public static let accepted = NotificationSubtype(.accepted)
    public static let billingRecovery = NotificationSubtype(.billingRecovery)
    public static let productNotForSale = NotificationSubtype(.productNotForSale)
    public static let summary = NotificationSubtype(.summary)
    public static let failure = NotificationSubtype(.failure)
    public static let unreported = NotificationSubtype(.unreported)
    public static let activeTokenReminder = NotificationSubtype(.activeTokenReminder)
    public static let created = NotificationSubtype(.created)

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
