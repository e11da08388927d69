import Foundation

/// What the team declares App Store Connect's Retention Messaging configuration covers for
/// an app (`retention_app_store_connect = PRODUCT [LOCALE], ...`): reading it needs the App
/// Store Connect API and a key of its own, so this store is told rather than asks.
public struct RetentionConnectDeclaration: Equatable, Sendable {
    public var product: String
    /// nil: every locale.
    public var locale: String?

    public init(product: String, locale: String?) {
        self.product = product
        self.locale = locale
    }

    /// `app.monthly, app.yearly en-US`: each entry a product id, and a locale when the
    /// configuration covers only that one; refused naming the entry.
    public static func parse(_ text: String) throws -> [RetentionConnectDeclaration] {
        try text.split(separator: ",").map { entry in
            let words = entry.split(separator: " ").map(String.init)
            guard (1...2).contains(words.count) else {
                throw ConfigurationError("retention_app_store_connect: \"\(entry.trimmingCharacters(in: .whitespaces))\" is not PRODUCT or PRODUCT LOCALE")
            }
            do {
                return RetentionConnectDeclaration(product: try RetentionText.productId(words[0]),
                                                   locale: try words.count == 2 ? RetentionText.locale(words[1]) : nil)
            } catch let refusal as RetentionContentError {
                throw ConfigurationError("retention_app_store_connect: \(refusal.description)")
            }
        }
    }

    public func covers(product: String, locale: String) -> Bool {
        self.product == product && (self.locale.map { RetentionCoverage.localeCovers($0, locale) } ?? true)
    }
}

/// Which layer would answer the App Store's cancellation sheet for a product in a locale,
/// in Apple's order: the real-time rules `serve` answers by (a rule that answers every
/// subscriber of the product in the locale, whatever their state), the App Store Connect
/// configuration the team declares, the default message set through the API, or nothing.
public struct RetentionCoverage: Equatable, Sendable {
    public enum Layer: String, Sendable {
        case realtimeRule = "real-time rule"
        case appStoreConnect = "App Store Connect (declared)"
        case defaultMessage = "API default message"
        case nothing = "nothing (gap)"
    }
    public var app: String
    public var product: String
    public var locale: String?
    public var layer: Layer
    public var messageId: String?
    public var environment: String?
    /// The rule that answers, for a real-time row.
    public var rule: String?

    /// What each app (by bundle id) has besides the API's defaults.
    public struct AppLayers: Sendable {
        public var rules: RetentionRules?
        public var connect: [RetentionConnectDeclaration]
        public init(rules: RetentionRules?, connect: [RetentionConnectDeclaration]) {
            self.rules = rules
            self.connect = connect
        }
    }

    /// Whether a locale as a rule or declaration names it (`en`, `en-US`) takes in `locale`.
    static func localeCovers(_ named: String, _ locale: String) -> Bool {
        let named = named.lowercased(), locale = locale.lowercased()
        return named == locale || locale.hasPrefix(named + "-") || locale.hasPrefix(named + "_")
    }

    /// Products from the transactions stored; locales: those the defaults, the rules and the
    /// declarations name, plus `locales`.
    public static func rows(products: [(app: String, product: String)], defaults: [RetentionRecord], locales extra: [String],
                            scope: String?, layers: [String: AppLayers] = [:]) -> [RetentionCoverage] {
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
        for (app, layer) in layers where scope == nil || app == scope {
            locales.formUnion(layer.rules?.rules.flatMap(\.locales) ?? [])
            locales.formUnion(layer.connect.compactMap(\.locale))
        }
        var out: [RetentionCoverage] = []
        for (app, product) in products where scope == nil || app == scope {
            if locales.isEmpty {
                out.append(RetentionCoverage(app: app, product: product, locale: nil, layer: .nothing))
                continue
            }
            let layer = layers[app]
            for locale in locales.sorted() {
                if let rule = layer?.rules?.rules.first(where: { $0.covers(product: product, locale: locale) }) {
                    out.append(RetentionCoverage(app: app, product: product, locale: locale, layer: .realtimeRule, rule: rule.name))
                } else if layer?.connect.contains(where: { $0.covers(product: product, locale: locale) }) == true {
                    out.append(RetentionCoverage(app: app, product: product, locale: locale, layer: .appStoreConnect))
                } else {
                    let d = keyed["\(app)\n\(product)\n\(locale)"]
                    out.append(RetentionCoverage(app: app, product: product, locale: locale, layer: d == nil ? .nothing : .defaultMessage,
                                                 messageId: d?.content, environment: d?.environment))
                }
            }
        }
        return out
    }
}
