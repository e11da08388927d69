import Foundation
import SubscriptionCore

/// What `serve` delivers while it runs: one `ForwardDeliverer` per `[forward]` target, each on
/// a thread and store connection of its own, so a slow or hanging target never holds a
/// worker that answers Apple, nor another target. A deliverer whose store fails says so and
/// starts again after a pause; a reload (SIGHUP) stops these and starts the new configuration's.
///
/// Intake comes first: each deliverer's thread runs at a lower CPU priority (`niceness`),
/// and so do the threads it starts and its own HTTP helper process, which its first send
/// starts. On a host whose cores are busy answering Apple, a backlog drains with what they
/// leave, instead of slowing the answers; on an idle host the priority changes nothing. A
/// deliverer that is behind also rests after each batch in proportion to how busy answering
/// intake kept serve meanwhile (`ForwardDeliverer.Pacing.intake`).
final class ServeRelay: @unchecked Sendable {
    /// The nice value of the delivering threads (and helper), 0 being serve's own.
    static let niceness: Int32 = 10
    private let lock = NSLock()
    /// The deliverers' HTTP helper, started by the first send from a delivering thread (so
    /// at its priority), ended with this relay.
    private let helper = HTTPHelper()
    private var stopped = false
    private let group = DispatchGroup()
    let targets: [ForwardTarget]

    /// The pause before a deliverer whose store failed starts again.
    static let restartPause: TimeInterval = 5

    /// Starts delivering to `context`'s targets; none configured starts nothing.
    /// `intake`: serve's webhook requests, which the deliverers give way to.
    init(context: Context, log: ServeLog, intake: IntakeLoad) throws {
        targets = try context.forwardTargets().targets
        for target in targets {
            let signature = try DeliverySignature.load(file: target.secretFile, target: target.name, warn: log.notice)
            // Opened here, where a store that cannot be opened stops serve's start or reload.
            let first = try context.openStore(mode: .existing)
            group.enter()
            let thread = Thread { [self] in
                defer { group.leave() }
                // This thread only: on Linux a thread's nice value is its own, and the threads
                // and processes it starts take it.
                setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, Self.niceness)
                deliver(to: target, signature: signature, first: first, context: context, log: log, intake: intake)
            }
            thread.name = "subdesk-forward-\(target.name)"
            thread.start()
        }
        if !targets.isEmpty {
            log.notice("relaying to " + targets.map { "\($0.name) (\($0.url.absoluteString))" }.joined(separator: ", "))
        }
    }

    /// Delivers to `target` until stopped, starting again on a fresh connection after a failure.
    private func deliver(to target: ForwardTarget, signature: DeliverySignature, first: Store, context: Context, log: ServeLog,
                         intake: IntakeLoad) {
        var store: Store? = first
        while !isStopped {
            do {
                let opened = try store ?? context.openStore(mode: .existing)
                store = opened
                var pacing = ForwardDeliverer.Pacing()
                pacing.intake = intake
                try ForwardDeliverer(target: target, store: opened, signature: signature, pacing: pacing, helper: helper).run(stop: { self.isStopped })
            } catch {
                log.error("forward \(target.name): \(error); delivering again in \(Int(Self.restartPause)) s")
                store = nil
                let until = Date().addingTimeInterval(Self.restartPause)
                while !isStopped && Date() < until { Thread.sleep(forTimeInterval: 0.2) }
            }
        }
    }

    var isStopped: Bool {
        lock.lock()
        defer { lock.unlock() }
        return stopped
    }

    /// Stops every deliverer and waits up to `seconds` for the sends under way: one still
    /// sending then keeps its claim, and the delivery is sent again once the claim ends.
    func stop(waitingUpTo seconds: TimeInterval) {
        lock.lock()
        stopped = true
        lock.unlock()
        _ = group.wait(timeout: .now() + seconds)
    }
}
