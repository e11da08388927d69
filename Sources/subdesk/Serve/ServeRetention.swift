import Foundation
import SubscriptionCore
import TerminalUI

/// A real-time retention answer as a FastCGI responder writes it.
struct RetentionCGIAnswer {
    let status: Int
    let reason: String
    let body: String

    var cgiText: String { "Status: \(status) \(reason)\r\nContent-Type: application/json\r\n\r\n\(body)" }
}

extension Context {
    /// The responder of this configuration: each app's rules (validated against the store's
    /// subscription groups) and offer key. Only offer keys are read, never an App Store Server
    /// API key; an offer key that cannot be read is kept as such (its offers fall back).
    func retentionResponder(store: Store) throws -> RetentionResponder {
        let apps = try configuredApps()
        var setups: [String: RetentionAppSetup] = [:]
        var groups: [String: String]?
        for app in apps.apps {
            guard let file = app.retentionRules else { continue }
            let offers: Result<PromotionalOfferSigner, ConfigurationError>? = app.offerKey.map { key in
                guard let bundleId = app.bundleId else { return .failure(ConfigurationError("[app \(app.name)] has no bundle_id")) }
                do { return .success(try PromotionalOfferSigner.load(key, bundleId: bundleId, warn: Output.warn)) } catch {
                    Output.warn("[app \(app.name)] offer_key \(key.name): \(error); its promotional offers fall back")
                    return .failure(ConfigurationError("\(error)"))
                }
            }
            let known = try groups ?? store.subscriptionGroups()
            groups = known
            setups[app.name] = RetentionAppSetup(rules: try retentionRules(app, file: file, groups: known), offers: offers)
        }
        return RetentionResponder(apps: apps, setups: setups, verifier: SignedDataVerifier(roots: try trustRoots()))
    }

    /// An app's rules file, read and checked against the store's subscription groups.
    func retentionRules(_ app: ConfiguredApp, file: String, groups: [String: String]) throws -> RetentionRules {
        let text: String
        do { text = try String(contentsOfFile: file, encoding: .utf8) } catch {
            throw UsageError("[app \(app.name)] retention_rules \(SafeText.sanitize(file)): cannot read it (\(error.localizedDescription))")
        }
        do {
            return try RetentionRules.parse(text, file: file, groupOf: { groups[$0] }, canSignOffers: app.offerKey != nil)
        } catch let e as RetentionRulesError { throw UsageError(e.description) }
    }

    /// Which layer answers the cancellation sheet for each app, product and locale the store
    /// and the configuration know (`locales` added): what `retention coverage` lists and
    /// `doctor` warns of.
    func retentionCoverage(store: Store, locales: [String], scope: String?) throws -> [RetentionCoverage] {
        // The groups only where an app has rules to check against them: a read of every
        // product's group is seconds at a million subscriptions.
        var groups: [String: String]?
        var layers: [String: RetentionCoverage.AppLayers] = [:]
        for app in try configuredApps().apps {
            guard let bundleId = app.bundleId else { continue }
            let rules = try app.retentionRules.map { file in
                let known = try groups ?? store.subscriptionGroups()
                groups = known
                return try retentionRules(app, file: file, groups: known)
            }
            layers[bundleId] = RetentionCoverage.AppLayers(rules: rules, connect: app.retentionAppStoreConnect)
        }
        return RetentionCoverage.rows(products: try store.retentionProducts(), defaults: try store.retentionRecords(kind: .defaultMessage),
                                      locales: locales, scope: scope, layers: layers)
    }
}
