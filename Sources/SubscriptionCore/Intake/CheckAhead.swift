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
    /// The index the next body read gets, and the next the writer takes.
    private var read = 0
    private var taken = 0
    private var ready: [Int: Result<Checked, Error>] = [:]
    /// Batches the writer has committed, freed by a checker (`retire`).
    private var spent: [[Checked]] = []
    private var stopped = false
    /// How many bodies there are, once the input has said it has no more (or failed).
    private var end: Int?
    private let window: Int
    /// Dropped once the workers have stopped: the caller's closure does not escape the call
    /// (a worker's thread may end a moment after it said it had finished).
    private var next: (() throws -> BatchIngest.Body?)?
    private let clock: @Sendable () -> Millis
    private let finished = DispatchGroup()
    /// Held by the worker reading the input.
    private let reading = NSLock()
    /// The writer comes first: the checkers run at a lower CPU priority, so that the one
    /// thread every body waits for is never the one left waiting for a core. With as many
    /// checkers as cores, they take up whatever the writer leaves (at the same priority the
    /// scheduler shares each core evenly among the three threads on two cores, and the
    /// writer, the pipeline's bottleneck, runs two thirds of the time:
    /// `bench/ingest-workers.sh`, BENCHMARKS.md).
    static let niceness: Int32 = 10

    /// Starts one thread per checker on the bodies `next` gives until it gives nil; `next`
    /// is called by one worker at a time, in order, outside the pipeline's lock.
    init(checkers: [Intake], window: Int, clock: @escaping @Sendable () -> Millis,
         next: @escaping () throws -> BatchIngest.Body?) {
        precondition(!checkers.isEmpty && window >= 1)
        self.window = window
        self.next = next
        self.clock = clock
        for checker in checkers {
            finished.enter()
            let thread = Thread { [self] in
                // This thread only (on Linux a thread's nice value is its own, and a new
                // thread starts with its creator's): below the writer, however nice it is.
                let writer = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
                setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, min(19, writer + Self.niceness))
                work(checker)
                finished.leave()
            }
            thread.stackSize = 4 << 20
            thread.start()
        }
    }

    private func work(_ checker: Intake) {
        while true {
            // One read at a time, in order, and outside the pipeline's lock: a read that waits
            // (a pipe whose writer is slow) holds up neither the other checkers nor the writer.
            // Batches the writer committed are released here, on this thread rather than the
            // writer's, and outside both locks.
            condition.lock()
            var freed = spent
            spent.removeAll()
            condition.unlock()
            freed.removeAll()
            reading.lock()
            condition.lock()
            while !stopped && end == nil && read - taken >= window { condition.wait() }
            guard !stopped && end == nil, let next else {
                condition.unlock()
                reading.unlock()
                return
            }
            let index = read
            condition.unlock()
            let item: Result<BatchIngest.Body?, Error> = Result { try next() }
            condition.lock()
            switch item {
            case .success(nil):
                end = index
                condition.broadcast()
            case .success:
                read += 1
            case .failure:
                // Nothing is read after an input that failed; the writer stops at it.
                read += 1
                end = index + 1
            }
            condition.unlock()
            reading.unlock()
            guard case .success(let body?) = item else {
                if case .failure(let error) = item { post(index, .failure(error)) }
                return
            }
            post(index, Result { (body: try checker.check(body.data, source: body.source, receivedAt: clock()), source: body.source) })
        }
    }

    private func post(_ index: Int, _ result: Result<Checked, Error>) {
        condition.lock()
        ready[index] = result
        condition.broadcast()
        condition.unlock()
    }

    /// What the writer is handed: the next body checked, the end of the input, or nothing yet.
    enum Taken {
        case body(Checked)
        case end
        /// The deadline passed first (the body is still being read or checked).
        case late
    }

    /// The body at `index`, checked, once it is there (or `deadline` passes): the writer takes
    /// them one after another, from 0. Throws what reading or checking it threw.
    func take(_ index: Int, by deadline: Date) throws -> Taken {
        condition.lock()
        defer { condition.unlock() }
        precondition(index == taken, "bodies are taken in order")
        while ready[index] == nil {
            if let end, index >= end { return .end }
            if !condition.wait(until: deadline) && ready[index] == nil {
                if let end, index >= end { return .end }
                return .late
            }
        }
        let result = ready.removeValue(forKey: index)!
        taken = index + 1
        condition.broadcast()
        return .body(try result.get())
    }

    /// Hands a committed batch back to be freed by a checker: the writer, the pipeline's
    /// bottleneck, spends no time releasing its bodies and what checking them made.
    func retire(_ batch: inout [Checked]) {
        condition.lock()
        spent.append(batch)
        condition.unlock()
        batch = []
    }

    /// Stops the workers (a body being checked is finished first) and waits for them.
    func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
        finished.wait()
        condition.lock()
        next = nil
        condition.unlock()
    }
}
