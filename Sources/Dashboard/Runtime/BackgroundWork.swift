import Foundation

/// Work that must not hold up the screen, with its results kept until the main loop asks.
///
/// Results go through a lock rather than straight into the session, whose state and
/// store belong to the thread that draws and reads keys.
final class BackgroundWork: @unchecked Sendable {
    private let queue = DispatchQueue(label: "subdesk.dashboard.background")
    private let group = DispatchGroup()
    private let lock = NSLock()
    private var results: [DashboardAction] = []
    /// What each job not yet finished is doing, by the order it was started in.
    private var labels: [Int: String] = [:]
    private var started = 0

    var running: Int {
        lock.lock()
        defer { lock.unlock() }
        return labels.count
    }

    /// What the jobs not yet finished are doing, oldest first.
    var runningLabels: [String] {
        lock.lock()
        defer { lock.unlock() }
        return labels.sorted { $0.key < $1.key }.map(\.value)
    }

    /// Runs `job` on the worker queue (one job at a time, in order); its action waits for `finished()`.
    /// `label` says what it does while it runs (`revalidating 2000000400000901 at Apple`).
    func run(label: String, _ job: @escaping @Sendable () -> DashboardAction) {
        lock.lock()
        started += 1
        let number = started
        labels[number] = label
        lock.unlock()
        group.enter()
        queue.async { [self] in
            let action = job()
            lock.lock()
            results.append(action)
            labels[number] = nil
            lock.unlock()
            group.leave()
        }
    }

    /// The actions of jobs that finished since the last call, oldest first.
    func finished() -> [DashboardAction] {
        lock.lock()
        defer { lock.unlock() }
        let done = results
        results = []
        return done
    }

    /// Blocks until every job started so far has finished; false when `timeout` passed first.
    func wait(timeout: TimeInterval) -> Bool {
        group.wait(timeout: .now() + timeout) == .success
    }
}
