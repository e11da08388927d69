import Foundation
import SubscriptionCore

/// The requests `serve` answered 503, counted in the process: a 503 usually means the store
/// could not take the request, so the store cannot record it either. `subdesk metrics` and
/// `subdesk check` ask for these over the socket (`FCGI_GET_VALUES`).
final class ServeUnavailableCounts: @unchecked Sendable {
    private let lock = NSLock()
    private var totals: [ServeUnavailableReason: Int] = [:]
    /// When each reason's latest 503 was answered.
    private var lastAt: [ServeUnavailableReason: Millis] = [:]
    /// When the 503s of the last hour were answered (at most `recentLimit` kept: past it the
    /// hour's count says "at least").
    private var recent: [Date] = []
    static let recentLimit = 10_000
    /// How the real-time retention requests ended, by outcome key.
    private var retention: [String: Int] = [:]

    func countRetention(_ outcome: String) {
        lock.lock()
        retention[outcome, default: 0] += 1
        lock.unlock()
    }

    func count(_ reason: ServeUnavailableReason, at now: Date = Date()) {
        lock.lock()
        defer { lock.unlock() }
        totals[reason, default: 0] += 1
        lastAt[reason] = Millis(now.timeIntervalSince1970 * 1000)
        prune(now)
        if recent.count < Self.recentLimit { recent.append(now) }
    }

    var current: ServeUnavailability {
        lock.lock()
        defer { lock.unlock() }
        prune(Date())
        return ServeUnavailability(totals: totals, lastHour: recent.count, lastAt: lastAt, retention: retention)
    }

    /// The FastCGI values serve answers besides the standard ones.
    func values() -> [String: String] {
        let c = current
        return [ServeUnavailability.totalName: c.encodedTotals, ServeUnavailability.lastHourName: String(c.lastHour),
                ServeUnavailability.lastAtName: c.encodedLastAt, ServeUnavailability.retentionName: c.encodedRetention]
    }

    private func prune(_ now: Date) {
        let cutoff = now.addingTimeInterval(-3600)
        if let keep = recent.firstIndex(where: { $0 >= cutoff }) { recent.removeFirst(keep) } else { recent.removeAll() }
    }
}
