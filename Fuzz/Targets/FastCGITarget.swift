import Foundation

/// A web server connection as `subdesk serve` keeps it (`FastCGIConnectionGuard`: the record
/// parser, the responder's state, the bytes owed and the deadlines), driven by a script:
/// each step lets time pass, lets the peer read what it is owed or not, answers a whole
/// request or not, then delivers the next piece of input. Any bytes and any timing must
/// become events or a reason to close, never a trap; everything written back must parse as
/// whole records; parameters and the bytes owed stay within their bounds; a deadline closes
/// the connection exactly when `nextDeadline` said it would; nothing is read while a request
/// is answered; replies asked for without a request never outrun their rate.
enum FastCGITarget {
    static let limits = FastCGIConnectionGuard.Limits(requestSeconds: 10, idleSeconds: 15, writeSeconds: 10,
                                                      replyBurst: 4, repliesPerSecond: 2, maxOutputBytes: 4096)
    static let pauses: [Double] = [0, 0.25, 3, 12]

    static func run(_ input: Data) {
        var now = 1_000.0
        let started = now
        var connection = FastCGIConnectionGuard(limits: limits, protocolLimits: .init(maxParamsBytes: 4096, maxConnections: 4),
                                                now: now)
        var peer = RecordParser()
        var repliesWithoutRequest = 0
        let cut = input.first.map { Int($0) % 17 + 1 } ?? 1
        var offset = input.index(input.startIndex, offsetBy: min(1, input.count))
        while offset < input.endIndex {
            let control = input[offset]
            offset = input.index(after: offset)
            let deadline = connection.nextDeadline
            now += pauses[Int(control & 3)]
            let expired = connection.expired(now: now)
            precondition((expired != nil) == (deadline.map { now > $0 } ?? false),
                         "expired \(String(describing: expired)) at \(now), the deadline said \(String(describing: deadline))")
            if expired != nil { return }
            if control & 4 != 0 {
                let owed = Array(connection.pendingOutput)
                peer.append(owed)
                connection.wrote(owed.count, now: now)
                do {
                    while let record = try peer.next() {
                        if record.kind == .getValuesResult || record.kind == .unknownType { repliesWithoutRequest += 1 }
                    }
                } catch {
                    fatalError("what was written back is not whole records: \(error)")
                }
            }
            if control & 8 != 0, connection.phase == .answering {
                let end = FastCGIRecord.endRequest(requestId: connection.requestId, appStatus: 0, protocolStatus: .requestComplete)
                // A reason to close is all it throws (typed): the connection is closed.
                do throws(FastCGIConnectionGuard.Close) {
                    try connection.answered(end.encoded(), now: now)
                    check(try connection.resume(now: now))
                } catch {
                    return
                }
            }
            let end = input.index(offset, offsetBy: min(cut, input.distance(from: offset, to: input.endIndex)))
            if connection.wantsRead && offset < end {
                do throws(FastCGIConnectionGuard.Close) {
                    check(try connection.received(input[offset..<end], now: now))
                } catch {
                    return
                }
                offset = end
            }
            precondition(connection.pendingOutput.count <= limits.maxOutputBytes, "more owed than the limit")
            precondition(!(connection.wantsRead && connection.phase == .answering), "read while answering")
            precondition(Double(repliesWithoutRequest) <= limits.replyBurst + (now - started) * limits.repliesPerSecond + 1,
                         "\(repliesWithoutRequest) replies in \(now - started) s")
        }
    }

    static func check(_ events: [FastCGIConnectionState.Event]) {
        for event in events {
            if case .params(let params) = event {
                precondition(params.reduce(0) { $0 + $1.key.utf8.count + $1.value.utf8.count } <= 4096)
            }
            if case .send = event { fatalError("a reply was handed out instead of queued") }
        }
    }
}
