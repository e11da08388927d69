/// The decoded `signedPayload` of a V2 notification (responseBodyV2DecodedPayload).
public struct NotificationPayloadV2: Equatable, Sendable {
    public var notificationType: NotificationType
    public var subtype: NotificationSubtype?
    public var notificationUUID: String
    public var version: String?
    public var signedDate: Millis
    public var data: NotificationData?
    public var summary: RenewalExtensionSummary?
    public var externalPurchaseToken: ExternalPurchaseToken?
    public var appData: AppData?

    /// The notification's `data` object: which app, which environment, and the nested JWS.
    public struct NotificationData: Equatable, Sendable {
        public var appAppleId: Int64?
        public var bundleId: String?
        public var bundleVersion: String?
        public var environment: AppStoreEnvironment?
        public var signedTransactionInfo: String?
        public var signedRenewalInfo: String?
        public var status: Int?
        public var consumptionRequestReason: String?
    }

    /// The `summary` object of RENEWAL_EXTENSION / SUMMARY.
    public struct RenewalExtensionSummary: Equatable, Sendable {
        public var requestIdentifier: String?
        public var environment: AppStoreEnvironment?
        public var appAppleId: Int64?
        public var bundleId: String?
        public var productId: String?
        public var storefrontCountryCodes: [String]?
        public var succeededCount: Int64?
        public var failedCount: Int64?
    }

    /// The `externalPurchaseToken` object of EXTERNAL_PURCHASE_TOKEN.
    public struct ExternalPurchaseToken: Equatable, Sendable {
        public var externalPurchaseId: String?
        public var tokenCreationDate: Millis?
        public var appAppleId: Int64?
        public var bundleId: String?
    }

    /// The `appData` object of RESCIND_CONSENT (and other app-level notifications).
    public struct AppData: Equatable, Sendable {
        public var appAppleId: Int64?
        public var bundleId: String?
        public var environment: AppStoreEnvironment?
        public var signedAppTransactionInfo: String?
    }

    /// Whether the payload carries its app facts in any object subdesk knows (`data`,
    /// `summary`, `externalPurchaseToken`, `appData`); a validly signed payload in a shape of
    /// Apple's that is newer than subdesk has none of them, and is kept as it is.
    public var hasKnownShape: Bool { data != nil || summary != nil || externalPurchaseToken != nil || appData != nil }

    /// The bundle id, wherever this type of notification carries it.
    public var bundleId: String? {
        data?.bundleId ?? summary?.bundleId ?? externalPurchaseToken?.bundleId ?? appData?.bundleId
    }
    /// The environment, wherever this type of notification carries it. An external purchase
    /// token says it only through its id: `SANDBOX...` ids are Sandbox, the others Production.
    public var environment: AppStoreEnvironment? {
        if let e = data?.environment ?? summary?.environment ?? appData?.environment { return e }
        if let token = externalPurchaseToken {
            return (token.externalPurchaseId ?? "").uppercased().hasPrefix("SANDBOX") ? .sandbox : .production
        }
        return nil
    }
    public var appAppleId: Int64? {
        data?.appAppleId ?? summary?.appAppleId ?? externalPurchaseToken?.appAppleId ?? appData?.appAppleId
    }

    public init(json: JSONFields) throws {
        notificationType = NotificationType(rawValue: try json.requiredString("notificationType"))
        subtype = try json.string("subtype").map(NotificationSubtype.init(rawValue:))
        notificationUUID = try json.requiredString("notificationUUID")
        guard !notificationUUID.isEmpty, notificationUUID.count <= 128 else {
            throw DecodingFault(path: json.fieldPath("notificationUUID"), problem: "empty or longer than 128 characters")
        }
        version = try json.string("version")
        guard let signed = try json.millis("signedDate") else {
            throw DecodingFault(path: json.fieldPath("signedDate"), problem: "missing")
        }
        signedDate = signed
        if let d = try json.object("data") {
            data = NotificationData(
                appAppleId: try d.int64("appAppleId"),
                bundleId: try d.string("bundleId"),
                bundleVersion: try d.string("bundleVersion"),
                environment: try d.string("environment").map(AppStoreEnvironment.init(rawValue:)),
                signedTransactionInfo: try d.string("signedTransactionInfo"),
                signedRenewalInfo: try d.string("signedRenewalInfo"),
                status: try d.int("status"),
                consumptionRequestReason: try d.string("consumptionRequestReason"))
        }
        if let s = try json.object("summary") {
            summary = RenewalExtensionSummary(
                requestIdentifier: try s.string("requestIdentifier"),
                environment: try s.string("environment").map(AppStoreEnvironment.init(rawValue:)),
                appAppleId: try s.int64("appAppleId"),
                bundleId: try s.string("bundleId"),
                productId: try s.string("productId"),
                storefrontCountryCodes: try s.strings("storefrontCountryCodes"),
                succeededCount: try s.int64("succeededCount"),
                failedCount: try s.int64("failedCount"))
        }
        if let a = try json.object("appData") {
            appData = AppData(appAppleId: try a.int64("appAppleId"), bundleId: try a.string("bundleId"),
                              environment: try a.string("environment").map(AppStoreEnvironment.init(rawValue:)),
                              signedAppTransactionInfo: try a.string("signedAppTransactionInfo"))
        }
        if let e = try json.object("externalPurchaseToken") {
            externalPurchaseToken = ExternalPurchaseToken(
                externalPurchaseId: try e.string("externalPurchaseId"),
                tokenCreationDate: try e.millis("tokenCreationDate"),
                appAppleId: try e.int64("appAppleId"),
                bundleId: try e.string("bundleId"))
        }
    }
}
