import Foundation

/// Which layer would answer the App Store's cancellation sheet for a product in a locale,
/// as far as this store knows: a default message set through the API, or nothing. The
/// real-time rules and App Store Connect's own configuration are the team's to declare and
/// are reported as unknown, not guessed.
public struct RetentionCoverage: Equatable, Sendable {
    public enum Layer: String, Sendable {
        case defaultMessage = "API default message"
        case nothing = "nothing (gap)"
    }
    public var app: String
    public var product: String
    public var locale: String?
    public var layer: Layer
    public var messageId: String?
    public var environment: String?

    /// Products from the transactions stored; locales: those the defaults name, plus `locales`.
    public static func rows(products: [(app: String, product: String)], defaults: [RetentionRecord], locales extra: [String],
                            scope: String?) -> [RetentionCoverage] {
        var locales = Set(extra)
        var keyed: [String: RetentionRecord] = [:]
        for d in defaults {
            let parts = d.identifier.split(separator: " ", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { continue }
            locales.insert(parts[1])
            // Production's default is the one subscribers see; a sandbox one only where no production one is.
            let key = "\(d.app)\n\(parts[0])\n\(parts[1])"
            if keyed[key] == nil || d.environment == AppStoreEnvironment.production.rawValue { keyed[key] = d }
        }
        var out: [RetentionCoverage] = []
        for (app, product) in products where scope == nil || app == scope {
            if locales.isEmpty {
                out.append(RetentionCoverage(app: app, product: product, locale: nil, layer: .nothing))
                continue
            }
            for locale in locales.sorted() {
                let d = keyed["\(app)\n\(product)\n\(locale)"]
                out.append(RetentionCoverage(app: app, product: product, locale: locale, layer: d == nil ? .nothing : .defaultMessage,
                                             messageId: d?.content, environment: d?.environment))
            }
        }
        return out
    }
}
