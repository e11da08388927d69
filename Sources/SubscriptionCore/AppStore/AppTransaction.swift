import Foundation

/// The customer's download of the app, as Apple signs it (`signedAppTransactionInfo`, in a
/// RESCIND_CONSENT notification or a Get App Transaction Info answer). One per Apple Account
/// (per family member with Family Sharing); it stays the same across redownloads, refunds
/// and storefront changes, which is why RESCIND_CONSENT names it rather than a purchase.
public struct AppTransaction: Equatable, Sendable {
    public var appTransactionId: String?
    public var bundleId: String?
    public var appAppleId: Int64?
    /// Apple calls the environment `receiptType` here (Production, Sandbox, Xcode, LocalTesting).
    public var environment: AppStoreEnvironment?
    public var originalPlatform: String?
    public var originalPurchaseDate: Millis?
    public var applicationVersion: String?
    public var originalApplicationVersion: String?
    public var preorderDate: Millis?
    public var receiptCreationDate: Millis?

    public init(json: JSONFields) throws {
        appTransactionId = try json.stringOrNumber("appTransactionId")
        bundleId = try json.string("bundleId")
        appAppleId = try json.int64("appAppleId")
        environment = try json.string("receiptType").map(AppStoreEnvironment.init(rawValue:))
        originalPlatform = try json.string("originalPlatform")
        originalPurchaseDate = try json.int64("originalPurchaseDate")
        applicationVersion = try json.string("applicationVersion")
        originalApplicationVersion = try json.string("originalApplicationVersion")
        preorderDate = try json.int64("preorderDate")
        receiptCreationDate = try json.int64("receiptCreationDate")
    }

    /// The facts support reads, as phrases: `app transaction 71134 · iOS · downloaded
    /// 2026-05-31 00:00 UTC · version 1.1.2 (now 1.2.3) · LocalTesting`.
    public var phrases: [String] {
        var parts = ["app transaction \(appTransactionId ?? "?")"]
        if let p = originalPlatform { parts.append(p) }
        if let d = originalPurchaseDate { parts.append("downloaded \(DateText.minute(d)) UTC") }
        if let d = preorderDate { parts.append("pre-ordered \(DateText.minute(d)) UTC") }
        if let v = originalApplicationVersion {
            parts.append("version \(v)" + (applicationVersion.map { $0 == v ? "" : " (now \($0))" } ?? ""))
        } else if let v = applicationVersion {
            parts.append("version \(v)")
        }
        if let e = environment { parts.append(e.rawValue) }
        return parts
    }

    /// As `show --json` and `consent --json` print it.
    public func jsonObject() -> [String: Any] {
        func opt(_ v: Any?) -> Any { v ?? NSNull() }
        return ["appTransactionId": opt(appTransactionId), "bundleId": opt(bundleId), "appAppleId": opt(appAppleId),
                "environment": opt(environment?.rawValue), "originalPlatform": opt(originalPlatform),
                "originalPurchaseDate": opt(originalPurchaseDate), "applicationVersion": opt(applicationVersion),
                "originalApplicationVersion": opt(originalApplicationVersion), "preorderDate": opt(preorderDate),
                "receiptCreationDate": opt(receiptCreationDate)]
    }
}
