import Foundation

/// The body of a delivery to a target with `body = envelope`: Apple's notification as it
/// came (a V2 body's `signedPayload` unchanged, for the target to verify with its own
/// library; a V1 body as its JSON object) beside the subscription's state as the store has
/// it when the delivery is sent, so a retry or a replay carries the state of its own time.
/// Nothing of it is written at intake: it is read when sent.
///
/// ```
/// {"deliveryId": "UUID/TARGET", "sequence": 812, "asOf": "2026-11-29T17:03:12.402Z",
///  "notificationUUID": "...", "notificationType": "DID_RENEW", "subtype": null,
///  "app": {"name": "fitness", "bundleId": "com.example.fitness"}, "environment": "Production",
///  "signedPayload": "eyJ...", "subscription": { show --json's state, entitlement and renewal info }}
/// ```
/// `sequence` is the order subdesk owed its deliveries in: larger is later.
public enum ForwardEnvelope {
    /// The fields of `show --json`'s subscription document an envelope leaves out: the
    /// history (transactions, notifications, timeline) is the target's own to keep.
    static let historyFields = ["transactions", "notifications", "timeline", "consentWithdrawals", "appTransaction"]

    public static func document(for d: ForwardDelivery, body: Data, store: Store, at now: Millis) throws -> Data {
        var o: [String: Any] = [
            "deliveryId": d.deliveryId, "sequence": d.id, "asOf": DateText.iso(now),
            "notificationUUID": d.notificationUUID, "notificationType": d.type,
            "environment": d.environment as Any? ?? NSNull(),
            "app": ["bundleId": d.bundleId as Any? ?? NSNull()] as [String: Any],
        ]
        let notification = ApplePayloads.notificationObject(body: body)
        o["subtype"] = (notification?["subtype"]) ?? NSNull()
        if let jws = JWSBytes.signedPayloadFastPath(body) ?? ((try? JSONFields(data: body, path: "body").string("signedPayload")) ?? nil) {
            o["signedPayload"] = jws
        } else {
            o["v1Body"] = (try? JSONSerialization.jsonObject(with: body)) ?? NSNull()
        }
        o["subscription"] = NSNull()
        if let otid = d.originalTransactionId, let row = try store.subscriptions.find(originalTransactionId: otid) {
            var state = try SubscriptionReport.load(store: store, row: row, now: now).jsonObject()
            for field in historyFields { state.removeValue(forKey: field) }
            if var renewal = state["renewalInfo"] as? [String: Any] {
                renewal.removeValue(forKey: "apple")
                state["renewalInfo"] = renewal
            }
            o["subscription"] = state
        }
        return try JSONSerialization.data(withJSONObject: o, options: [.sortedKeys, .withoutEscapingSlashes])
    }
}
