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
        let rules = try retentionRules(of: apps.apps, store: store)
        var setups: [String: RetentionAppSetup] = [:]
        for app in apps.apps {
            guard let appRules = rules[app.name] else { continue }
            let offers: Result<PromotionalOfferSigner, ConfigurationError>? = app.offerKey.map { key in
                guard let bundleId = app.bundleId else { return .failure(ConfigurationError("[app \(app.name)] has no bundle_id")) }
                do { return .success(try PromotionalOfferSigner.load(key, bundleId: bundleId, warn: Output.warn)) } catch {
                    Output.warn("[app \(app.name)] offer_key \(key.name): \(error); its promotional offers fall back")
                    return .failure(ConfigurationError("\(error)"))
                }
            }
            setups[app.name] = RetentionAppSetup(rules: appRules, offers: offers)
        }
        return RetentionResponder(apps: apps, setups: setups, verifier: SignedDataVerifier(roots: try trustRoots()))
    }

    /// The rules of each of `apps` that names a rules file, by app name, each checked against
    /// the store's subscription groups (read once, and only when an app has rules).
    func retentionRules(of apps: [ConfiguredApp], store: Store) throws -> [String: RetentionRules] {
        var groups: [String: String]?
        var rules: [String: RetentionRules] = [:]
        for app in apps {
            guard let file = app.retentionRules else { continue }
            let known = try groups ?? store.transactions.subscriptionGroups()
            groups = known
            rules[app.name] = try retentionRules(app, file: file, groups: known)
        }
        return rules
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
        let apps = try configuredApps().apps.filter { $0.bundleId != nil }
        let rules = try retentionRules(of: apps, store: store)
        var layers: [String: RetentionCoverage.AppLayers] = [:]
        for app in apps {
            guard let bundleId = app.bundleId else { continue }
            layers[bundleId] = RetentionCoverage.AppLayers(rules: rules[app.name], connect: app.retentionAppStoreConnect)
        }
        return RetentionCoverage.rows(products: try store.retention.content.products(), defaults: try store.retention.content.records(kind: .defaultMessage),
                                      locales: locales, scope: scope, layers: layers)
    }
}
