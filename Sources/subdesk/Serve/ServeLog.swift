import Foundation

/// The operator's log of a long-lived process (standard error: the journal under systemd,
/// the web server's error log otherwise), rate-limited so that a flood of junk requests
/// cannot fill it: at most `perMinute` lines a minute, then one line saying how many were
/// left out.
final class ServeLog: @unchecked Sendable {
    private let lock = NSLock()
    private let perMinute: Int
    private var windowStart = Date.distantPast
    private var written = 0
    private var suppressed = 0
    private let write: (String) -> Void
    private let now: () -> Date

    init(perMinute: Int = 60, write: @escaping (String) -> Void = { Output.error($0) }, now: @escaping () -> Date = Date.init) {
        self.perMinute = perMinute
        self.write = write
        self.now = now
    }

    /// Always written (start, stop, reload).
    func notice(_ text: String) {
        Output.progress("serve: " + text)
    }

    /// Written unless the minute's budget is spent.
    func error(_ text: String) {
        lock.lock()
        let now = now()
        var lines: [String] = []
        if now.timeIntervalSince(windowStart) >= 60 {
            if suppressed > 0 { lines.append("serve: \(suppressed) more error lines were left out in the last minute") }
            windowStart = now
            written = 0
            suppressed = 0
        }
        if written < perMinute {
            written += 1
            lines.append("serve: " + text)
        } else {
            suppressed += 1
        }
        lock.unlock()
        for line in lines { write(line) }
    }
}
