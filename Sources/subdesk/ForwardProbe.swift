import Foundation
import SubscriptionCore

/// Whether a forward target's host answers a TCP connection on its port (`doctor --probe`):
/// the connection is closed as soon as it is made, so nothing is sent and the target records
/// no delivery. It proves the address resolves and a firewall lets it through, not that the
/// target accepts what it is sent (`subdesk forward status` says that).
enum ForwardProbe {
    /// nil when `host`:`port` took a connection within `timeout`, else why not.
    static func problem(host: String, port: Int, timeout: TimeInterval) -> String? {
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var found: UnsafeMutablePointer<addrinfo>?
        let resolved = getaddrinfo(bare, String(port), &hints, &found)
        guard resolved == 0, let first = found else {
            return "\(bare) does not resolve (\(String(cString: gai_strerror(resolved))))"
        }
        defer { freeaddrinfo(first) }
        var last = "no address"
        var next: UnsafeMutablePointer<addrinfo>? = first
        let deadline = Date().addingTimeInterval(timeout)
        while let address = next?.pointee {
            next = address.ai_next
            guard let why = connect(address, until: deadline) else { return nil }
            last = why
        }
        return "\(bare):\(port) took no connection: \(last)"
    }

    /// Connects to one address without blocking past `deadline`; nil once connected.
    private static func connect(_ address: addrinfo, until deadline: Date) -> String? {
        let fd = socket(address.ai_family, address.ai_socktype | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), address.ai_protocol)
        guard fd >= 0 else { return String(cString: strerror(errno)) }
        defer { close(fd) }
        if Glibc.connect(fd, address.ai_addr, address.ai_addrlen) == 0 { return nil }
        guard errno == EINPROGRESS else { return String(cString: strerror(errno)) }
        var poller = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
        let waitMs = Int32(max(0, deadline.timeIntervalSinceNow) * 1000)
        guard poll(&poller, 1, waitMs) == 1 else { return "no answer within the timeout" }
        var failure: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &failure, &length)
        return failure == 0 ? nil : String(cString: strerror(failure))
    }
}
