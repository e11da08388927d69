import Foundation

/// The decoders behind a verified signature, fed raw JSON rather than base64 inside a
/// JWS, so that mutations land on fields instead of on base64 letters: the notification
/// payload, a transaction, renewal info, a V1 body, then state derivation and the
/// timeline over whatever decoded, and the whole intake with the input as the payload.
enum PayloadTarget {
    static let now: Millis = 1_780_272_000_000
    nonisolated(unsafe) static var inputs = 0
    nonisolated(unsafe) static var intake: Intake?

    static func run(_ input: Data) {
        guard let json = try? JSONFields(data: input, path: "fuzz") else { return }
        _ = try? NotificationPayloadV2(json: json)
        let transaction = try? TransactionRecord(v2: json)
        let renewal = try? RenewalRecord(v2: json)
        var transactions = transaction.map { [$0] } ?? []
        var renewals = renewal.map { [$0] } ?? []
        if let v1 = try? NotificationV1(json: json) {
            transactions += v1.transactions
            renewals += v1.renewals
        }
        for otid in Set(transactions.map(\.originalTransactionId) + renewals.map(\.originalTransactionId)) {
            let mine = transactions.filter { $0.originalTransactionId == otid }
            let renewal = renewals.first { $0.originalTransactionId == otid }
            _ = StateDerivation.derive(originalTransactionId: otid, transactions: mine, renewal: renewal,
                                       events: [], now: now)
            _ = Timeline.build(transactions: mine, events: [])
        }

        if inputs % 500 == 0 {
            intake = IntakeTarget.makeIntake(IntakeTarget.PayloadOnly())
        }
        inputs += 1
        let jws = "e30." + Base64URL.encode(input) + ".c2ln"
        guard let body = try? JSONSerialization.data(withJSONObject: ["signedPayload": jws]) else { return }
        do {
            _ = try intake!.ingest(body, source: "fuzz", receivedAt: now)
        } catch {
            fatalError("intake threw for a body instead of refusing it: \(error)")
        }
    }
}
