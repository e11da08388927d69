import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// A TCP socket bound to a free port on the loopback, for tests that play a server (or a
/// port where none listens) at the level of bytes.
public enum LoopbackSocket {
    /// The socket, bound and not yet listening, and its port; skips the test where the
    /// host has no loopback socket to give.
    public static func bound() throws -> (fd: Int32, port: Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard fd >= 0, ok else {
            if fd >= 0 { close(fd) }
            throw XCTSkip("no loopback socket here")
        }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }
}
