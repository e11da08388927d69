import Foundation
import HelperWire
#if canImport(Glibc)
import Glibc
#endif

/// One running `subdesk-http` (see `HTTPHelper`): the socket to it, the requests waiting
/// for their answers, and a reader thread that hands each answer to its request by id.
/// When the helper's end of the socket closes (it exited, crashed or was killed), the
/// reader reaps it and fails every waiting request at once with the exit status, and
/// the process refuses new requests so that `HTTPHelper` starts a fresh one.
final class HTTPHelperProcess: @unchecked Sendable {
    let pid: pid_t
    private let socket: Int32

    private let lock = NSLock()
    private var nextId: UInt64 = 0
    private var waiting: [UInt64: Waiter] = [:]
    /// Why the helper is gone; set once, before the waiting requests are failed.
    private var ended: String?

    /// Exchanges begun (`begin`), those not yet ended, and whether the helper is retired:
    /// a retired helper's input is closed when its last exchange ends (`HTTPHelper.exchange`).
    private var begun = 0
    private var inFlight = 0
    private var retired = false

    /// Writes go out whole, one at a time; the socket is closed under this lock too, so a
    /// writer never sends on a descriptor number that has been reused.
    private let writeLock = NSLock()
    private var socketOpen = true

    /// Starts the helper at `executable` with the socket as its stdin and stdout; throws a
    /// reason when it cannot be started.
    init(executable: String) throws(HTTPHelper.Unavailable) {
        var pair: [Int32] = [-1, -1]
        // Close-on-exec on both ends: dup2 gives the helper copies without the flag, and
        // no other program subdesk starts inherits either end.
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
            throw Self.socketFailure()
        }
        // The helper's end must not be 0 or 1 itself (a subdesk started with stdin closed),
        // where dup2 onto itself would keep close-on-exec.
        let child = pair[1] > STDOUT_FILENO ? pair[1] : fcntl(pair[1], F_DUPFD_CLOEXEC, STDERR_FILENO + 1)
        defer {
            if child >= 0 { close(child) }
            if child != pair[1] { close(pair[1]) }
        }
        guard child >= 0 else {
            close(pair[0])
            throw Self.socketFailure()
        }
        do {
            // Its own process group: Ctrl-C at the terminal reaches subdesk (the dashboard
            // catches it and shuts down in order), not the helper it may still be waiting
            // on. The helper ends when subdesk does, by the socket closing.
            pid = try Spawn.start(executable, ownProcessGroup: true) { actions in
                posix_spawn_file_actions_adddup2(actions, child, STDIN_FILENO)
                posix_spawn_file_actions_adddup2(actions, child, STDOUT_FILENO)
            }
        } catch {
            close(pair[0])
            throw HTTPHelper.Unavailable("cannot start the HTTP helper \(executable): \(error)")
        }
        socket = pair[0]
        let reader = Thread { [self] in readAnswers() }
        reader.name = "subdesk-http reader"
        reader.start()
    }

    private static func socketFailure() -> HTTPHelper.Unavailable {
        HTTPHelper.Unavailable("cannot create a socket for the HTTP helper: \(String(cString: strerror(errno)))")
    }

    /// False once the helper is gone.
    var isRunning: Bool {
        lock.lock()
        defer { lock.unlock() }
        return ended == nil
    }

    /// Sends `request` and waits for its answer until `timeout` seconds from now; an answer
    /// that comes later is discarded.
    func exchange(_ request: HTTPRequest, timeout: TimeInterval, connectionsPerHost: Int,
                  maxResponseBytes: Int) -> Result<HTTPResponse, HTTPClient.TransportProblem> {
        let deadline = DispatchTime.now() + timeout
        let waiter = Waiter()
        lock.lock()
        if let ended {
            lock.unlock()
            return .failure(.network(ended))
        }
        nextId += 1
        let id = nextId
        waiting[id] = waiter
        lock.unlock()

        let frame = HTTPHelperWire.requestFrame(id: id, request, timeout: timeout, connectionsPerHost: connectionsPerHost,
                                                maxResponseBytes: maxResponseBytes)
        writeLock.lock()
        // A failed write means the helper is gone or broken: shutting the socket down makes
        // the reader see the end at once, reap the helper and fail this request with why.
        if socketOpen && !HelperWire.writeAll(socket, frame) { shutdown(socket, Int32(SHUT_RDWR)) }
        writeLock.unlock()

        if waiter.done.wait(timeout: deadline) == .timedOut {
            lock.lock()
            let stillWaiting = waiting.removeValue(forKey: id) != nil
            lock.unlock()
            if stillWaiting { return .failure(.timedOut) }
            // The answer was handed over as time ran out: it is on its way.
            waiter.done.wait()
        }
        return waiter.outcome!
    }

    /// How many exchanges have begun on this helper.
    var requestsBegun: Int {
        lock.lock()
        defer { lock.unlock() }
        return begun
    }

    /// Counts an exchange about to be made (called before `exchange`, under the owner's lock,
    /// so that no exchange begins on a helper after it is retired).
    func begin() {
        lock.lock()
        begun += 1
        inFlight += 1
        lock.unlock()
    }

    /// Counts an exchange ended; the last one of a retired helper closes its input.
    func end() {
        lock.lock()
        inFlight -= 1
        let finished = retired && inFlight == 0
        lock.unlock()
        if finished { finishInput() }
    }

    /// Takes no more exchanges: the helper exits once those under way have their answers.
    func retire() {
        lock.lock()
        retired = true
        let finished = inFlight == 0
        lock.unlock()
        if finished { finishInput() }
    }

    /// Closes the helper's input: it exits, and the reader reaps it.
    func finishInput() {
        writeLock.lock()
        if socketOpen { shutdown(socket, Int32(SHUT_WR)) }
        writeLock.unlock()
    }

    /// The reader thread: hands out answers until the helper's end closes, then reaps it.
    private func readAnswers() {
        var fault: String?
        reading: while true {
            switch HelperWire.readFrame(socket) {
            case .closed:
                break reading
            case .oversized(let length):
                fault = "sent a frame of \(length) bytes, over the limit"
                break reading
            case .frame(let frame):
                guard let (id, outcome) = HTTPHelperWire.response(frame) else {
                    fault = "sent a malformed frame"
                    break reading
                }
                lock.lock()
                let waiter = waiting.removeValue(forKey: id)
                lock.unlock()
                // Nil: the request timed out and its caller has gone.
                waiter?.finish(outcome)
            }
        }
        writeLock.lock()
        socketOpen = false
        close(socket)
        writeLock.unlock()
        let exit = reap()
        let reason = "the HTTP helper (pid \(pid)) " + (fault.map { "\($0) and was stopped" } ?? "exited (\(exit))")
        lock.lock()
        ended = reason
        let failed = waiting
        waiting = [:]
        lock.unlock()
        for waiter in failed.values { waiter.finish(.failure(.network(reason))) }
    }

    /// Waits for the helper and says how it ended. Its end of the socket is closed, so it
    /// has exited, or it is a broken helper: SIGKILL makes the wait certain either way
    /// (a helper that has already exited keeps its own status).
    private func reap() -> String {
        kill(pid, SIGKILL)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            if errno != EINTR { return "its status is unknown: \(String(cString: strerror(errno)))" }
        }
        let signal = status & 0x7f
        return signal == 0 ? "status \((status >> 8) & 0xff)" : "killed by signal \(signal)"
    }

    /// One request's wait.
    private final class Waiter {
        let done = DispatchSemaphore(value: 0)
        private(set) var outcome: Result<HTTPResponse, HTTPClient.TransportProblem>?

        /// Called once; the semaphore publishes `outcome` to the waiting thread.
        func finish(_ outcome: Result<HTTPResponse, HTTPClient.TransportProblem>) {
            self.outcome = outcome
            done.signal()
        }
    }
}
