import Foundation
import SubscriptionCore
import TerminalUI

/// `subdesk forward`: deliver what intake owed the `[forward]` targets, and say how they stand.
enum ForwardCommand {
    static let spec: CommandSpec = CommandSpec(
        name: "forward", arguments: "run|status", abstract: "relay stored notifications to the [forward] targets, and their state",
        usage: """
        subdesk forward run [--once] [--target NAME]
        subdesk forward status [--json]
        subdesk forward replay --uuid UUID | --since DATE [--until DATE] [--app NAME] [--target NAME] [--reason TEXT]
        subdesk forward retry --dead [--target NAME] [--reason TEXT]
        subdesk forward test NAME
        """,
        discussion: """
        Every notification intake stores (the webhook, serve, ingest, backfill, a quarantine
        replay) is owed, in the same write, to each [forward NAME] target of the config whose
        apps, environments and types match it: a notification answered 200 to Apple will be
        relayed, whatever stops afterwards. A refused body is owed to nobody, and a body
        Apple sends again is owed once.

        `run` delivers: it POSTs each owed delivery to its target (the body as Apple sent it,
        or body = envelope), signed with the target's secret (Subdesk-Signature), and keeps
        every answer. 2xx is delivered; 408, 429, 5xx, a timeout or a lost connection are
        tried again after a growing wait (Retry-After honoured, at most an hour); another
        answer is tried three times; after the target's max_age a delivery is dead. For one
        target, the deliveries of one subscription go one at a time in the order they were
        stored; one that fails holds back only the later ones of its subscription, and a
        dead one holds nothing. `run` goes on until SIGTERM, waking when another process
        stores a notification; with --once it sends what is due and exits (1 when a
        delivery failed or died).

        `status` lists each target: deliveries pending and the oldest one's age, delivered
        and failed attempts in the last hour, dead deliveries and the last error.

        `replay` owes stored notifications again (one by --uuid, or those received from
        --since to before --until, of --app), to every target or --target, each only what
        its apps, environments and types take, with their delivery ids: the target sees a
        redelivery, not a new notification. `retry --dead` owes the dead deliveries again.
        Both are audited (forward_replay, forward_retry). `test NAME` sends the target one
        TEST-shaped delivery marked Subdesk-Test: true, stores nothing, and prints the
        answer (exit 1 unless 2xx).
        """,
        options: [
            .flag(.once, "run: send what is due now, then exit"),
            .value(.target, "NAME", "run, replay, retry: only this target"),
            .value(.uuid, "UUID", "replay: this notification"),
            .value(.since, "DATE", "replay: notifications received since DATE"),
            .value(.until, "DATE", "replay: and before DATE"),
            .flag(.dead, "retry: the dead deliveries"),
            .value(.reason, "TEXT", "replay, retry: why, for the audit log"),
            .operatorName,
        ],
        action: StoreAction(words: "deliver notifications to forward targets", privilege: .update, table: "forward_outbox"),
        run: run)

    static func run(_ context: Context) throws -> Int32 {
        let words = context.arguments.positionals
        switch words.first {
        case "run":
            guard words.count == 1 else { throw UsageError("forward run takes no argument (--target NAME names a target)") }
            return try deliver(context)
        case "status":
            guard words.count == 1 else { throw UsageError("forward status takes no argument") }
            return try status(context)
        case "replay":
            guard words.count == 1 else { throw UsageError("forward replay takes no argument (--uuid UUID names a notification)") }
            return try replay(context)
        case "retry":
            guard words.count == 1, context.arguments.has(.dead) else {
                throw UsageError("forward retry takes --dead: the dead deliveries are owed again")
            }
            let targets = try targets(context)
            let store = try context.openStore(mode: .existing)
            let counts = try OperatorCommands.operations(context, store: store)
                .retryDeadForward(targets, reason: context.arguments.value(.reason) ?? "")
            return report(counts, "dead deliveries owed again", context)
        case "test":
            guard words.count == 2 else { throw UsageError("forward test takes the name of one [forward] target") }
            let all = try context.forwardTargets()
            guard let target = all.target(named: words[1]) else {
                throw UsageError("forward test: \(words[1]) names no [forward] target (targets: "
                                 + all.targets.map(\.name).joined(separator: ", ") + ")")
            }
            let signature = try DeliverySignature.load(file: target.secretFile, target: target.name, warn: Output.warn)
            let attempt = ForwardDeliverer(target: target, store: try context.openStore(mode: .reading), signature: signature).sendTest()
            let answered = attempt.status.map { "answered \($0)" } ?? "no answer: \(attempt.error ?? "?")"
            if context.wantsJSON {
                Output.json(["target": target.name, "status": attempt.status as Any? ?? NSNull(), "error": attempt.error as Any? ?? NSNull(),
                             "tookMs": attempt.tookMs,
                             "answer": attempt.answer.map { String(decoding: $0, as: UTF8.self) } as Any? ?? NSNull()])
            } else {
                Output.line("\(target.name) (\(target.url.absoluteString)): \(answered) in \(attempt.tookMs) ms")
            }
            return attempt.next == .delivered ? 0 : 1
        default:
            throw UsageError("forward takes run, status, replay, retry or test (see subdesk forward --help)")
        }
    }

    static func replay(_ context: Context) throws -> Int32 {
        var selection = ForwardReplaySelection()
        selection.notificationUUID = context.arguments.value(.uuid)
        if let text = context.arguments.value(.since) { selection.since = try ListCommands.parseSince(text) }
        if let text = context.arguments.value(.until) { selection.until = try ListCommands.parseSince(text) }
        guard (selection.notificationUUID == nil) != (selection.since == nil) else {
            throw UsageError("forward replay takes --uuid UUID or --since DATE (with --until DATE), one of the two")
        }
        if selection.notificationUUID != nil && selection.until != nil { throw UsageError("--until goes with --since, not --uuid") }
        if let since = selection.since, let until = selection.until, until <= since {
            throw UsageError("--until \(DateText.minute(until)) UTC is not after --since \(DateText.minute(since)) UTC")
        }
        if let scope = try context.appScope() { selection.bundleIds = [scope.bundleId] }
        let store = try context.openStore(mode: .existing)
        if let uuid = selection.notificationUUID, try store.notifications.event(uuid: uuid) == nil {
            Output.error("no stored notification \(SafeText.sanitize(uuid))")
            return 2
        }
        let counts = try OperatorCommands.operations(context, store: store)
            .replayForward(selection, to: try targets(context), of: try context.forwardTargets(), reason: context.arguments.value(.reason) ?? "")
        return report(counts, "deliveries owed again", context)
    }

    /// Each target's count, and the total, as replay and retry say them.
    static func report(_ counts: [(target: String, count: Int)], _ what: String, _ context: Context) -> Int32 {
        if context.wantsJSON {
            Output.json(["owedAgain": Dictionary(counts.map { ($0.target, $0.count) }, uniquingKeysWith: +),
                         "total": counts.map(\.count).reduce(0, +)])
        } else {
            Output.line("\(counts.map(\.count).reduce(0, +)) \(what) (" + counts.map { "\($0.target) \($0.count)" }.joined(separator: ", ")
                        + "); audited")
        }
        return 0
    }

    static func targets(_ context: Context) throws -> [ForwardTarget] {
        let all = try context.forwardTargets()
        guard !all.isEmpty else {
            throw UsageError("no [forward NAME] target is configured (see subdesk sample-config, [forward NAME])")
        }
        guard let name = context.arguments.value(.target) else { return all.targets }
        guard let target = all.target(named: name) else {
            throw UsageError("--target: \(name) names no [forward] target (targets: " + all.targets.map(\.name).joined(separator: ", ") + ")")
        }
        return [target]
    }

    /// One deliverer per target, each on its own thread and store connection.
    static func deliver(_ context: Context) throws -> Int32 {
        let targets = try targets(context)
        let once = context.arguments.has(.once)
        var deliverers: [ForwardDeliverer] = []
        for target in targets {
            let signature = try DeliverySignature.load(file: target.secretFile, target: target.name, warn: Output.warn)
            deliverers.append(ForwardDeliverer(target: target, store: try context.openStore(mode: .existing), signature: signature))
        }
        let stopping = StopFlag()
        var sources: [DispatchSourceSignal] = []
        if !once {
            for number in [SIGTERM, SIGINT] {
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
                source.setEventHandler { stopping.set() }
                source.resume()
                sources.append(source)
            }
            Output.warn("forward: delivering to " + targets.map { "\($0.name) (\($0.url.absoluteString))" }.joined(separator: ", "))
        }
        let results = RunResults(count: deliverers.count)
        let group = DispatchGroup()
        for (index, deliverer) in deliverers.enumerated() {
            group.enter()
            Thread {
                defer { group.leave() }
                results.set(index, Result { try deliverer.run(once: once, stop: { stopping.isSet }) })
            }.start()
        }
        group.wait()
        _ = sources
        var failed = false
        for (deliverer, result) in zip(deliverers, results.all) {
            switch result {
            case .success(let counts):
                if once {
                    Output.line("\(deliverer.target.name): \(counts.delivered) delivered, \(counts.retried) to try again, \(counts.dead) dead")
                }
                failed = failed || counts.retried > 0 || counts.dead > 0
            case .failure(let error):
                Output.error("forward \(deliverer.target.name): \(error)")
                return 1
            case nil:
                break
            }
        }
        return once && failed ? 1 : 0
    }

    static func status(_ context: Context) throws -> Int32 {
        let names = try context.forwardTargets().targets.map(\.name)
        let store = try context.openStore(mode: .reading)
        let now = DateText.nowMillis()
        let rows = try store.outbox.status(targets: names, now: now)
        if context.wantsJSON {
            Output.json(["asOf": DateText.iso(now), "targets": rows.map { row -> [String: Any] in
                ["target": row.target, "configured": names.contains(row.target), "pending": row.pending,
                 "oldestPendingAgeSeconds": ForwardStatusText.oldestAge(row, now: now).map { $0 / 1000 } as Any? ?? NSNull(),
                 "deliveredLastHour": row.deliveredLastHour, "failedLastHour": row.failedLastHour, "dead": row.dead,
                 "lastError": row.lastError as Any? ?? NSNull(),
                 "lastErrorAt": row.lastErrorAt.map(DateText.iso) as Any? ?? NSNull()]
            }])
            return 0
        }
        guard !rows.isEmpty else {
            Output.line("no [forward] target is configured, and the outbox is empty")
            return 0
        }
        let header = ForwardStatusText.header
        let lines = rows.map { row in
            ForwardStatusText.cells(row, configured: names.contains(row.target), now: now).map(SafeText.sanitize)
        }
        let widths = header.indices.map { i in ([header[i]] + lines.map { $0[i] }).map(\.count).max() ?? 0 }
        for line in [header] + lines {
            Output.line(line.enumerated().map { i, cell in i == line.count - 1 ? cell : cell.padding(toLength: widths[i], withPad: " ", startingAt: 0) }
                .joined(separator: "  "))
        }
        return 0
    }

    private final class StopFlag: @unchecked Sendable {
        private let lock = NSLock()
        private var value = false
        var isSet: Bool { lock.lock(); defer { lock.unlock() }; return value }
        func set() { lock.lock(); value = true; lock.unlock() }
    }

    private final class RunResults: @unchecked Sendable {
        private let lock = NSLock()
        private var results: [Result<ForwardDeliverer.Counts, Error>?]
        init(count: Int) { results = Array(repeating: nil, count: count) }
        func set(_ index: Int, _ result: Result<ForwardDeliverer.Counts, Error>) { lock.lock(); results[index] = result; lock.unlock() }
        var all: [Result<ForwardDeliverer.Counts, Error>?] { lock.lock(); defer { lock.unlock() }; return results }
    }
}
