import Foundation

/// How busy a process keeps answering intake: the time during which at least one request was
/// being answered, summed. `serve` marks each webhook request; its deliverers read the busy
/// fraction over their last batch and rest in proportion (`ForwardDeliverer.Pacing.intake`),
/// so a backlog drains with what answering Apple leaves.
public final class IntakeLoad: @unchecked Sendable {
    private let lock = NSLock()
    private var inFlight = 0
    /// When `inFlight` last went from 0 to 1.
    private var since: UInt64 = 0
    private var busy: UInt64 = 0

    public init() {}

    /// A request began to be answered (`now`: uptime nanoseconds).
    public func begin(now: UInt64 = DispatchTime.now().uptimeNanoseconds) {
        lock.lock()
        if inFlight == 0 { since = now }
        inFlight += 1
        lock.unlock()
    }

    /// A request begun with `begin` was answered.
    public func end(now: UInt64 = DispatchTime.now().uptimeNanoseconds) {
        lock.lock()
        if inFlight > 0 {
            inFlight -= 1
            if inFlight == 0 && now > since { busy += now - since }
        }
        lock.unlock()
    }

    /// Runs `body` as one request.
    public func answering<T>(_ body: () throws -> T) rethrows -> T {
        begin()
        defer { end() }
        return try body()
    }

    /// The busy nanoseconds up to `now`, counting the requests still being answered.
    public func busyNanoseconds(now: UInt64 = DispatchTime.now().uptimeNanoseconds) -> UInt64 {
        lock.lock()
        defer { lock.unlock() }
        return busy + (inFlight > 0 && now > since ? now - since : 0)
    }

    /// What a reader saw last: the busy fraction between two readings.
    public struct Reading: Sendable {
        var at: UInt64
        var busy: UInt64
    }

    public func reading(now: UInt64 = DispatchTime.now().uptimeNanoseconds) -> Reading {
        Reading(at: now, busy: busyNanoseconds(now: now))
    }

    /// The share of the time from `earlier` to `later` during which intake was being answered,
    /// 0 to 1 (0 when no time passed).
    public static func fraction(from earlier: Reading, to later: Reading) -> Double {
        guard later.at > earlier.at else { return 0 }
        let busy = later.busy >= earlier.busy ? later.busy - earlier.busy : 0
        return min(1, Double(busy) / Double(later.at - earlier.at))
    }
}
