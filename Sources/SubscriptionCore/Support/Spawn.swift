import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Starts programs with posix_spawn, which works from a statically linked binary, where
/// Foundation's Process has no place. The child starts with no signal blocked or ignored,
/// whatever the calling thread has: a child that inherits SIGCHLD or SIGTERM blocked
/// (lighttpd, say) never reaps its own children and cannot be stopped.
enum Spawn {
    /// posix_spawn's error number.
    struct Failure: Error, CustomStringConvertible {
        let code: Int32
        var description: String { String(cString: strerror(code)) }
    }

    /// Starts `executable` with `arguments` and this process's environment; `fileActions`
    /// sets up the child's descriptors. With `ownProcessGroup`, the child leads a group of
    /// its own and signals sent to this process's group (Ctrl-C) do not reach it.
    static func start(_ executable: String, _ arguments: [String] = [], ownProcessGroup: Bool = false,
                      fileActions: (UnsafeMutablePointer<posix_spawn_file_actions_t>) -> Void) throws(Failure) -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        fileActions(&actions)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigdefault(&attributes, &all)
        var flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF
        if ownProcessGroup {
            posix_spawnattr_setpgroup(&attributes, 0)
            flags |= POSIX_SPAWN_SETPGROUP
        }
        posix_spawnattr_setflags(&attributes, Int16(flags))

        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
        guard status == 0 else { throw Failure(code: status) }
        return pid
    }
}
