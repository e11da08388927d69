import Foundation
import SubscriptionCore

/// What is at the path `serve --listen unix:PATH` names when it is taken, and whether serve
/// may replace it: only a socket that nothing answers on, left by a process that was killed.
enum SocketPathOccupant: Equatable {
    /// A socket whose connect is refused: nothing listens on it any more.
    case staleSocket
    /// A socket a process accepts connections on.
    case liveSocket
    /// A socket whose connect failed otherwise (permission, a full backlog): not known stale.
    case socketNotProbed(errno: Int32)
    case regularFile(bytes: Int64)
    case directory
    case symbolicLink
    case other
    /// Gone between the bind and the look.
    case nothing

    /// What lstat and a connect say of `path`.
    static func probe(_ path: String) -> SocketPathOccupant {
        var info = stat()
        guard lstat(path, &info) == 0 else { return .nothing }
        switch info.st_mode & S_IFMT {
        case S_IFSOCK:
            let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { return .socketNotProbed(errno: errno) }
            defer { close(fd) }
            if ServeListener.connect(fd, unix: path) { return .liveSocket }
            return of(socketConnectErrno: errno)
        case S_IFREG: return .regularFile(bytes: Int64(info.st_size))
        case S_IFDIR: return .directory
        case S_IFLNK: return .symbolicLink
        default: return .other
        }
    }

    /// A socket's verdict from the errno its connect failed with.
    static func of(socketConnectErrno code: Int32) -> SocketPathOccupant {
        code == ECONNREFUSED ? .staleSocket : .socketNotProbed(errno: code)
    }

    /// Why serve does not take the path, in the operator's words.
    var refusal: String {
        switch self {
        case .staleSocket, .nothing:
            return "the path changed while it was being taken; try again"
        case .liveSocket:
            return "another process answers on this socket (a subdesk serve still running?); stop it or listen elsewhere"
        case .socketNotProbed(let code):
            return "a socket is there that could not be probed (\(String(cString: strerror(code)))); "
                + "remove it yourself if nothing uses it, or listen elsewhere"
        case .regularFile(let bytes):
            return "a regular file of \(bytes) bytes is there (a store?); serve replaces only a socket nothing answers on: "
                + "name another path"
        case .directory:
            return "a directory is there; name the socket's own path inside it (unix:DIR/subdesk.sock)"
        case .symbolicLink:
            return "a symbolic link is there; serve does not follow or replace links: name the socket's real path"
        case .other:
            return "a file that is not a socket is there (a device or a pipe); name another path"
        }
    }
}
