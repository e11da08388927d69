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
            let text: String
            do { text = try String(contentsOfFile: file, encoding: .utf8) } catch {
                throw UsageError("[app \(app.name)] retention_rules \(SafeText.sanitize(file)): cannot read it (\(error.localizedDescription))")
            }
            let known = try groups ?? store.subscriptionGroups()
            groups = known
            do {
                let rules = try RetentionRules.parse(text, file: file, groupOf: { known[$0] }, canSignOffers: app.offerKey != nil)
                setups[app.name] = RetentionAppSetup(rules: rules, offers: offers)
            } catch let e as RetentionRulesError { throw UsageError(e.description) }
        }
        return RetentionResponder(apps: apps, setups: setups, verifier: SignedDataVerifier(roots: try trustRoots()))
    }
}
