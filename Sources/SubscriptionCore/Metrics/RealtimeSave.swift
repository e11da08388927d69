import Foundation

/// One real-time retention request the responder answered (`retention_decisions`, outcome
/// `answered`): when it was decided, and the answer's kind and identifier (the message's,
/// the alternate product's or the promotional offer's).
public struct RealtimeRetentionAnswer: Equatable, Sendable {
    public var at: Millis
    public var kind: RetentionAnswerKind
    public var value: String
}

/// Which answered requests saved the subscription (the README's definition of a real-time
/// save, under the metric `saved`): read from the subscription's own history in the day
/// after each request.
enum RealtimeSave {
    /// How long after a request its evidence counts, and how long after a counted save
    /// another request of the subscription counts again.
    static let window: Millis = 86_400_000

    /// Renewal info as the history keeps it: each notification's (its signing time taken as
    /// the renewal info's) and the latest stored one.
    struct RenewalSeen {
        var at: Millis
        var autoRenew: Bool
        var productId: String?
    }

    /// The times of the requests that saved the subscription, oldest first, one per window.
    /// `ordered`: its transactions in purchase order; `retentionSaves`: the transactions
    /// counted as retention-offer saves (a real-time save whose next period is one of them
    /// is that save, counted once).
    static func saves(_ requests: [RealtimeRetentionAnswer], ordered: [TransactionRecord], retentionSaves: Set<String>,
                      events: [(event: NotificationEvent, effect: NotificationMeaning.Effect?)], renewal: RenewalRecord?) -> [Millis] {
        guard !requests.isEmpty, !ordered.isEmpty else { return [] }
        var seen = events.compactMap { e in e.event.autoRenew.map { RenewalSeen(at: e.event.signedDate, autoRenew: $0, productId: e.event.autoRenewProductId) } }
        if let renewal { seen.append(RenewalSeen(at: renewal.signedDate, autoRenew: renewal.autoRenewStatus, productId: renewal.autoRenewProductId)) }
        seen.sort { $0.at < $1.at }
        let lastEvidence = max(events.last?.event.signedDate ?? .min, renewal?.signedDate ?? .min)
        var saves: [Millis] = []
        for request in requests.sorted(by: { $0.at < $1.at }) {
            let t = request.at, end = t + window
            if let last = saves.last, t - last < window { continue }
            var saved = false
            switch request.kind {
            case .promotionalOffer:
                saved = ordered.contains { $0.purchaseDate > t && $0.purchaseDate <= end && $0.offerType == .promotional
                    && $0.offerIdentifier == request.value }
            case .alternateProduct:
                saved = seen.contains { $0.at > t && $0.at <= end && $0.productId == request.value }
            case .message:
                break
            }
            if !saved, lastEvidence > end {
                // Auto-renew left on: every renewal info of the day after, and the first one
                // after it, says on, and no notification of that day turned it off.
                let day = seen.filter { $0.at >= t && $0.at <= end }
                saved = day.allSatisfy(\.autoRenew) && seen.first(where: { $0.at > end })?.autoRenew != false
                    && !events.contains { $0.event.signedDate >= t && $0.event.signedDate <= end && $0.effect?.autoRenew == .disabled }
            }
            guard saved else { continue }
            if let next = ordered.first(where: { $0.purchaseDate > t }), retentionSaves.contains(next.transactionId) { continue }
            saves.append(t)
        }
        return saves
    }
}
