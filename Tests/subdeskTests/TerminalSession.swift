import Foundation
import XCTest

/// A tmux server of its own running the built `subdesk`, driven by keys and read by screen captures.
final class TerminalSession {
    let tmux: String
    let socket: String
    let name = "e2e"

    init(tmux: String) {
        self.tmux = tmux
        socket = "subdesk-e2e-" + UUID().uuidString.prefix(8).lowercased()
    }

    /// Finds `tmux` on the PATH.
    static func findTmux() -> String? {
        let paths = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
        for directory in paths + ["/usr/bin", "/usr/local/bin"] {
            let candidate = String(directory) + "/tmux"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    /// Starts a shell in a detached window of the given size.
    func start(width: Int, height: Int) throws {
        try spawnDetached(["new-session", "-d", "-x", String(width), "-y", String(height), "-s", name, "sh"])
        // A plain prompt keeps captures free of the machine's shell configuration.
        try send(literal: "PS1='$ '")
        try send(keys: "Enter")
    }

    /// Ends the server and what runs in it, and waits until it is gone. `kill-server` makes
    /// the server send itself SIGTERM; a server that still holds it blocked would stay, so one
    /// still running after two seconds is killed.
    func stop() {
        let pid = (try? run(["display-message", "-p", "#{pid}"], check: false))
            .flatMap { pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        _ = try? run(["kill-server"], check: false)
        guard let pid, pid > 1 else { return }
        let deadline = Date().addingTimeInterval(2)
        while Self.isRunning(pid) && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        if Self.isRunning(pid) { kill(pid, SIGKILL) }
    }

    /// Whether `pid` still runs. The server is a daemon, a child of the machine's first process;
    /// once it has exited it stays a zombie until that process reaps it, which can take seconds
    /// (in a container whose first process is no init), and a zombie runs nothing.
    static func isRunning(_ pid: pid_t) -> Bool {
        guard kill(pid, 0) == 0 else { return false }
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return true }
        // The state is the first field after the command name, which is in parentheses.
        let state = stat[stat.index(after: close)...].drop { $0 == " " }.first
        return state != "Z" && state != "X"
    }

    /// Runs the tmux command that starts the server, without `Process`.
    ///
    /// The server forks off and keeps every descriptor it inherited;
    /// Foundation's `Process` watches for a child's exit through such a
    /// descriptor, so it would wait on the server forever.
    func spawnDetached(_ arguments: [String]) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let argv: [UnsafeMutablePointer<CChar>?] = ([tmux, "-L", socket] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        // The server starts with no signal blocked or ignored, whatever the calling thread has
        // (an async test runs on a thread that blocks them all, and a server started from it
        // never received the SIGTERM of kill-server).
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t(), all = sigset_t()
        sigemptyset(&none)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, tmux, &actions, &attributes, argv, environ)
        guard spawned == 0 else {
            throw NSError(domain: "tmux", code: Int(spawned), userInfo: [NSLocalizedDescriptionKey: "cannot start tmux"])
        }
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        guard status == 0 else {
            throw NSError(domain: "tmux", code: Int(status), userInfo: [NSLocalizedDescriptionKey: "tmux \(arguments.joined(separator: " ")) failed"])
        }
    }

    @discardableResult
    func run(_ arguments: [String], check: Bool = true) throws -> String {
        let (status, text) = try runToEnd(tmux, ["-L", socket] + arguments)
        if check && status != 0 {
            throw NSError(domain: "tmux", code: Int(status),
                          userInfo: [NSLocalizedDescriptionKey: "tmux \(arguments.joined(separator: " ")): \(text)"])
        }
        return text
    }

    /// Types text exactly as given.
    func send(literal text: String) throws {
        try run(["send-keys", "-t", name, "-l", text])
    }

    /// Sends tmux key names: `Enter`, `Escape`, `C-c`, `q`.
    func send(keys: String...) throws {
        try run(["send-keys", "-t", name] + keys)
    }

    /// Types a shell command line and runs it.
    func shell(_ command: String) throws {
        try send(literal: command)
        try send(keys: "Enter")
    }

    func capture() throws -> String {
        try run(["capture-pane", "-p", "-t", name])
    }

    func resize(width: Int, height: Int) throws {
        try run(["resize-window", "-t", name, "-x", String(width), "-y", String(height)])
    }

    /// Whether the pane shows the alternate screen, as full-screen programs do while running.
    func alternateScreenOn() throws -> Bool {
        try run(["display-message", "-p", "-t", name, "#{alternate_on}"]).trimmingCharacters(in: .whitespacesAndNewlines) == "1"
    }

    /// Polls the screen until `condition` holds or `timeout` passes; returns the last capture.
    @discardableResult
    func waitFor(_ what: String, timeout: TimeInterval = 8, file: StaticString = #filePath, line: UInt = #line,
                 _ condition: (String) -> Bool) throws -> String {
        let deadline = Date().addingTimeInterval(timeout)
        var screen = try capture()
        while !condition(screen) {
            if Date() > deadline {
                XCTFail("timed out waiting for \(what); the screen shows:\n\(screen)", file: file, line: line)
                return screen
            }
            Thread.sleep(forTimeInterval: 0.1)
            screen = try capture()
        }
        return screen
    }

    @discardableResult
    func waitFor(text: String, timeout: TimeInterval = 8, file: StaticString = #filePath, line: UInt = #line) throws -> String {
        try waitFor("\"\(text)\"", timeout: timeout, file: file, line: line) { $0.contains(text) }
    }
}
