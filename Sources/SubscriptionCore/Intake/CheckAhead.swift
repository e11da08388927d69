import Foundation

/// Bodies checked (decoded and verified) ahead of the writer, on worker threads that each
/// hold a connection of their own (one `Intake` apiece), and handed to the writer in input
/// order: a batch's signatures are verified on every core while the batch before it is
/// written. At most `window` bodies are checked and not yet taken, so memory stays bounded
/// however long the input is.
///
/// Checking ahead changes nothing stored: a check only reads the store (whether a body is
/// already stored, which subscription an app transaction belongs to), and the write looks
/// again under its lock, as it does for two bodies of one batch.
final class CheckAhead: @unchecked Sendable {
    typealias Checked = (body: Intake.CheckedBody, source: String)

    private let condition = NSCondition()
    /// The next index a worker takes, and the next the writer takes.
    private var next: Int
    private var taken: Int
    private var ready: [Int: Result<Checked, Error>] = [:]
    private var stopped = false
    private let end: Int
    private let window: Int
    private let body: (Int) throws -> BatchIngest.Body
    private let clock: @Sendable () -> Millis
    private let finished = DispatchGroup()

    /// Starts one thread per checker on bodies `start..<end`; `body(i)` is called under the
    /// pipeline's lock, one call at a time, in index order.
    init(checkers: [Intake], start: Int, end: Int, window: Int, clock: @escaping @Sendable () -> Millis,
         body: @escaping (Int) throws -> BatchIngest.Body) {
        precondition(!checkers.isEmpty && window >= 1)
        next = start
        taken = start
        self.end = end
        self.window = window
        self.body = body
        self.clock = clock
        for checker in checkers {
            finished.enter()
            let thread = Thread { [self] in
                work(checker)
                finished.leave()
            }
            thread.stackSize = 4 << 20
            thread.start()
        }
    }

    private func work(_ checker: Intake) {
        while true {
            condition.lock()
            while !stopped && next < end && next - taken >= window { condition.wait() }
            guard !stopped && next < end else {
                condition.unlock()
                return
            }
            let index = next
            next += 1
            let item = Result { try body(index) }
            condition.unlock()
            let result = item.flatMap { b in Result { (body: try checker.check(b.data, source: b.source, receivedAt: clock()), source: b.source) } }
            condition.lock()
            ready[index] = result
            condition.broadcast()
            condition.unlock()
        }
    }

    /// The body at `index`, checked: the writer takes them one after another, from `start`.
    /// Throws what reading or checking it threw.
    func take(_ index: Int) throws -> Checked {
        condition.lock()
        defer { condition.unlock() }
        precondition(index == taken, "bodies are taken in order")
        while ready[index] == nil { condition.wait() }
        let result = ready.removeValue(forKey: index)!
        taken = index + 1
        condition.broadcast()
        return try result.get()
    }

    /// Stops the workers (a body being checked is finished first) and waits for them.
    func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
        finished.wait()
    }
}
