import Foundation
import SubscriptionCore

/// Where `subdesk serve` takes connections: a unix socket, a TCP port (loopback unless told
/// otherwise), a listening socket inherited on file descriptor 0 (the FastCGI convention:
/// lighttpd's `bin-path`, spawn-fcgi) or one systemd passes (`LISTEN_FDS`).
struct ServeListener {
    enum Address: Equatable {
        case unix(String)
        case tcp(host: String, port: UInt16)

        /// `unix:PATH`, `HOST:PORT`, `[V6]:PORT` or a bare `PORT` (on 127.0.0.1).
        static func parse(_ text: String) throws -> Address {
            if text.hasPrefix("unix:") {
                let path = String(text.dropFirst(5))
                guard !path.isEmpty else { throw UsageError("--listen unix:PATH needs a path") }
                guard path.utf8.count < 108 else { throw UsageError("--listen \(text): a unix socket path is at most 107 bytes") }
                return .unix(path)
            }
            var host = "127.0.0.1", portText = text
            if let colon = text.lastIndex(of: ":") {
                host = String(text[..<colon])
                portText = String(text[text.index(after: colon)...])
                if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
                if host == "localhost" { host = "127.0.0.1" }
            }
            guard let port = UInt16(portText), port > 0 else {
                throw UsageError("--listen \(text): expected unix:PATH, HOST:PORT or PORT")
            }
            return .tcp(host: host, port: port)
        }
    }

    let fd: Int32
    /// What the operator's log calls it.
    let name: String
    /// The socket file this process made, removed when it stops if the path still names it.
    let socketPath: String?
    /// The device and inode of that socket file, as bound.
    var socketFile: FileIdentity? = nil
    /// The peer addresses a TCP connection may come from; nil takes any (a unix socket, or
    /// a loopback port with no list given).
    let allowedPeers: Set<String>?

    /// Connections the kernel queues before `serve` accepts them (capped by net.core.somaxconn).
    static let backlog: Int32 = 1024

    static func isLoopback(_ host: String) -> Bool { host == "::1" || host.hasPrefix("127.") }

    /// The listener the options and environment name. `allowed` is `--allow-from` with
    /// `FCGI_WEB_SERVER_ADDRS` (comma-separated, as FastCGI's own servers read it).
    static func open(listen: String?, socketMode: mode_t, allowed: [String], environment: [String: String]) throws -> ServeListener {
        let allowedPeers = allowedPeers(allowed, environment)
        if let listen {
            switch try Address.parse(listen) {
            case .unix(let path):
                let fd = try bindUnix(path, mode: socketMode)
                return ServeListener(fd: fd, name: "unix:\(path)", socketPath: path, socketFile: FileIdentity(lstat: path),
                                     allowedPeers: nil)
            case .tcp(let host, let port):
                if !isLoopback(host) && allowedPeers == nil {
                    throw UsageError("--listen \(listen) is not on the loopback: name the web servers that may connect "
                                     + "with --allow-from ADDRESS (or FCGI_WEB_SERVER_ADDRS)")
                }
                return ServeListener(fd: try bindTCP(host: host, port: port), name: "\(host):\(port)", socketPath: nil,
                                     allowedPeers: allowedPeers)
            }
        }
        if let passed = try fromSystemd(environment, allowed: allowed) { return passed.intake }
        if isListening(0) {
            return ServeListener(fd: 0, name: "the listening socket on file descriptor 0", socketPath: nil, allowedPeers: allowedPeers)
        }
        throw UsageError("serve needs somewhere to listen: --listen unix:PATH or --listen HOST:PORT, a listening socket "
                         + "on file descriptor 0 (a web server's bin-path, spawn-fcgi), or systemd socket activation")
    }

    /// systemd socket activation: the listening sockets passed to this process, from file
    /// descriptor 3 (LISTEN_PID, LISTEN_FDS). The one LISTEN_FDNAMES names `metrics`
    /// (subdesk-serve-metrics.socket's FileDescriptorName) takes /metrics scrapes, the first
    /// other the notification URL; nil when systemd passed none. The variables are unset, so
    /// no child inherits them.
    static func fromSystemd(_ environment: [String: String], allowed: [String]) throws -> (intake: ServeListener, metrics: ServeListener?)? {
        guard let pid = environment["LISTEN_PID"], Int32(pid) == getpid(), let count = Int(environment["LISTEN_FDS"] ?? ""), count >= 1
        else { return nil }
        // Descriptors from 3: a count past any open-file limit is no socket systemd passed.
        guard count <= 1024 else { throw UsageError("LISTEN_FDS says \(count) sockets: at most 1024 are taken") }
        let roles = systemdRoles(count: count, names: environment["LISTEN_FDNAMES"])
        guard let intake = roles.intake else { throw UsageError("systemd passed only the metrics socket: serve needs the notification URL's") }
        for fd in [intake] + (roles.metrics.map { [$0] } ?? []) {
            guard isListening(fd) else { throw UsageError("LISTEN_FDS names file descriptor \(fd), which is not a listening socket") }
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        unsetenv("LISTEN_PID")
        unsetenv("LISTEN_FDS")
        unsetenv("LISTEN_FDNAMES")
        let allowedPeers = allowedPeers(allowed, environment)
        return (ServeListener(fd: intake, name: "the socket systemd passed", socketPath: nil, allowedPeers: allowedPeers),
                roles.metrics.map { ServeListener(fd: $0, name: "the metrics socket systemd passed", socketPath: nil, allowedPeers: allowedPeers) })
    }

    /// Which of the `count` descriptors systemd passed (from 3) is which, by LISTEN_FDNAMES
    /// (colon-separated, in order): the first named `metrics` takes scrapes, the first other
    /// intake. Decided by the unit's name for the socket, never by anything a client sends.
    static func systemdRoles(count: Int, names: String?) -> (intake: Int32?, metrics: Int32?) {
        let list = (names ?? "").split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        var intake: Int32?, metrics: Int32?
        for index in 0..<max(0, count) {
            let fd = Int32(3 + index)
            if index < list.count && list[index] == metricsSocketName { metrics = metrics ?? fd } else { intake = intake ?? fd }
        }
        return (intake, metrics)
    }

    /// The FileDescriptorName of the socket unit that takes scrapes.
    static let metricsSocketName = "metrics"

    /// `--allow-from` with `FCGI_WEB_SERVER_ADDRS` (comma-separated); nil when neither names one.
    static func allowedPeers(_ allowed: [String], _ environment: [String: String]) -> Set<String>? {
        let fromEnvironment = (environment["FCGI_WEB_SERVER_ADDRS"] ?? "").split(separator: ",")
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        let peers = allowed + fromEnvironment
        return peers.isEmpty ? nil : Set(peers)
    }

    static func isListening(_ fd: Int32) -> Bool {
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        return getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &value, &length) == 0 && value == 1
    }

    static func unixAddress(_ path: String) -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            let bytes = Array(path.utf8)
            raw.copyBytes(from: bytes.prefix(raw.count - 1))
        }
        return address
    }

    static func systemError(_ what: String) -> UsageError {
        UsageError("\(what): \(String(cString: strerror(errno)))")
    }

    /// Removes the socket file this process bound, if the path still names that very file
    /// (another process may have put its own socket, or anything else, there since).
    func removeSocketFile() {
        guard let path = socketPath, let bound = socketFile, FileIdentity(lstat: path) == bound, bound.isSocket else { return }
        unlink(path)
    }

    /// Binds a unix socket at `path`. Only a socket file that nothing answers on (connect is
    /// refused: its process was killed) is replaced; anything else there (a live socket, a
    /// regular file such as a store, a directory, a link) is refused, named.
    static func bindUnix(_ path: String, mode: mode_t) throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw systemError("socket") }
        var address = unixAddress(path)
        func bind() -> Int32 {
            withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
        }
        if bind() != 0 {
            guard errno == EADDRINUSE else { close(fd); throw systemError("bind unix:\(path)") }
            let found = SocketPathOccupant.probe(path)
            guard found == .staleSocket, let stale = FileIdentity(lstat: path) else {
                close(fd)
                throw UsageError("--listen unix:\(path): \(found.refusal)")
            }
            // Removed only if the path still names the socket just probed.
            guard FileIdentity(lstat: path) == stale, unlink(path) == 0 || errno == ENOENT, bind() == 0 else {
                close(fd)
                throw systemError("bind unix:\(path)")
            }
        }
        chmod(path, mode)
        guard listen(fd, ServeListener.backlog) == 0 else { close(fd); throw systemError("listen on unix:\(path)") }
        return fd
    }


    /// Connects the stream socket `fd` to the unix socket at `path`; false with errno set.
    static func connect(_ fd: Int32, unix path: String) -> Bool {
        var address = unixAddress(path)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        } == 0
    }

    static func bindTCP(host: String, port: UInt16) throws -> Int32 {
        var v4 = sockaddr_in(), v6 = sockaddr_in6()
        let isV6 = host.contains(":")
        if isV6 {
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = port.bigEndian
            guard inet_pton(AF_INET6, host, &v6.sin6_addr) == 1 else { throw UsageError("--listen: \(host) is not an IPv6 address") }
        } else {
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = port.bigEndian
            guard inet_pton(AF_INET, host, &v4.sin_addr) == 1 else { throw UsageError("--listen: \(host) is not an IPv4 address") }
        }
        let fd = socket(isV6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw systemError("socket") }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        let bound = isV6
            ? withUnsafePointer(to: &v6) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) } }
            : withUnsafePointer(to: &v4) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard bound == 0 else { close(fd); throw systemError("bind \(host):\(port)") }
        guard listen(fd, ServeListener.backlog) == 0 else { close(fd); throw systemError("listen on \(host):\(port)") }
        return fd
    }

    /// The numeric address a connected TCP socket's peer has; nil for a unix socket.
    static func peerAddress(_ fd: Int32) -> String? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let got = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(fd, $0, &length) }
        }
        guard got == 0 else { return nil }
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        switch Int32(storage.ss_family) {
        case AF_INET:
            var a = withUnsafePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr } }
            inet_ntop(AF_INET, &a, &text, socklen_t(text.count))
        case AF_INET6:
            var a = withUnsafePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_addr } }
            inet_ntop(AF_INET6, &a, &text, socklen_t(text.count))
            let v6 = String(cString: text)
            // An IPv4 peer on a dual-stack socket is named as IPv4, as an operator lists it.
            return v6.hasPrefix("::ffff:") && v6.contains(".") ? String(v6.dropFirst(7)) : v6
        default:
            return nil
        }
        return String(cString: text)
    }
}
