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
    private var count = 0

    var running: Int {
        lock.lock()
        defer { lock.unlock() }
        return count
    }

    /// Runs `job` on the worker queue (one job at a time, in order); its action waits for `finished()`.
    func run(_ job: @escaping @Sendable () -> DashboardAction) {
        lock.lock()
        count += 1
        lock.unlock()
        group.enter()
        queue.async { [self] in
            let action = job()
            lock.lock()
            results.append(action)
            count -= 1
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
