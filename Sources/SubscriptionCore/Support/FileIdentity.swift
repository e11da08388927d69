import Foundation

/// A file's device and inode: what stays the same while a file is written in place and
/// changes when another file takes its path (a store restored under a running process, a
/// socket path that now names something else).
public struct FileIdentity: Hashable, Sendable {
    public let device: UInt64
    public let inode: UInt64
    public let isSocket: Bool

    /// The file `path` leads to (links followed). Nil when nothing is there (or it is an
    /// in-memory store).
    public init?(path: String) {
        var info = stat()
        guard path != ":memory:", stat(path, &info) == 0 else { return nil }
        self.init(info)
    }

    /// The file at `path` itself, a link not followed. Nil when nothing is there.
    public init?(lstat path: String) {
        var info = stat()
        guard Glibc.lstat(path, &info) == 0 else { return nil }
        self.init(info)
    }

    /// The file `info` (from `stat` or `fstat`) describes.
    public init(_ info: stat) {
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        isSocket = info.st_mode & S_IFMT == S_IFSOCK
    }
}
