import Foundation

extension Operations {
    /// Owes the notifications `selection` names to `targets` again, with their delivery ids
    /// (a target takes only those of its apps, environments and types), audited once.
    /// Returns how many deliveries each target is owed again.
    public func replayForward(_ selection: ForwardReplaySelection, to targets: [ForwardTarget], of all: ForwardTargets,
                              reason: String, now: Millis = DateText.nowMillis()) throws -> [(target: String, count: Int)] {
        try store.write {
            let counts = try targets.map { target in
                (target.name, try store.outbox.requeue(selection, to: target, targetBundleIds: all.bundleIds(of: target), now: now))
            }
            var what = selection.notificationUUID.map { "notification \($0)" } ?? "notifications received"
            if selection.notificationUUID == nil {
                if let since = selection.since { what += " from \(DateText.minute(since)) UTC" }
                if let until = selection.until { what += " to \(DateText.minute(until)) UTC" }
            }
            if let apps = selection.bundleIds { what += " of " + apps.joined(separator: ", ") }
            try store.audit.append(AuditEntry(at: now, operatorName: operatorName, action: .forwardReplay, target: nil,
                                             reason: reason.isEmpty ? nil : reason,
                                             outcome: "\(counts.map(\.1).reduce(0, +)) deliveries owed again",
                                             detail: what + "; " + counts.map { "\($0.0): \($0.1)" }.joined(separator: ", ")))
            return counts
        }
    }

    /// Owes the dead deliveries of `targets` again, audited once.
    public func retryDeadForward(_ targets: [ForwardTarget], reason: String, now: Millis = DateText.nowMillis()) throws -> [(target: String, count: Int)] {
        try store.write {
            let counts = try targets.map { ($0.name, try store.outbox.retryDead(target: $0.name, maxAge: $0.maxAge, now: now)) }
            try store.audit.append(AuditEntry(at: now, operatorName: operatorName, action: .forwardRetry, target: nil,
                                             reason: reason.isEmpty ? nil : reason,
                                             outcome: "\(counts.map(\.1).reduce(0, +)) dead deliveries owed again",
                                             detail: counts.map { "\($0.0): \($0.1)" }.joined(separator: ", ")))
            return counts
        }
    }
}
