import Foundation

/// A file's device and inode: what stays the same while a file is written in place and
/// changes when another file takes its path.
struct FileIdentity: Equatable {
    let device: UInt64
    let inode: UInt64

    /// Nil when nothing is at `path` (or it is an in-memory store).
    init?(path: String) {
        var info = stat()
        guard path != ":memory:", stat(path, &info) == 0 else { return nil }
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
    }
}
