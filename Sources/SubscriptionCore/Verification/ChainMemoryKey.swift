import COpenSSL
import Foundation

/// The secret that seals remembered chain checks (`RememberedChain.seal`).
///
/// It lives in a file of the host that verifies (mode 0600, owned by the user that runs
/// intake), never in the store: a login that can write the store cannot compute a seal, so
/// a row it plants is ignored. The file is made on first use; receivers that share a store
/// may each have their own key (their rows do not collide).
public struct ChainMemoryKey: Sendable {
    static let length = 32
    let bytes: Data

    init(bytes: Data) { self.bytes = bytes }

    /// A fresh random key, for tests and for a store whose receivers keep no key file.
    public static func random() -> ChainMemoryKey {
        var generator = SystemRandomNumberGenerator()
        return ChainMemoryKey(bytes: Data((0..<length).map { _ in UInt8.random(in: .min ... .max, using: &generator) }))
    }

    /// Why a key file cannot be used; the verifier then remembers nothing (every chain is
    /// checked in full) and `doctor` says so.
    public struct Unavailable: Error, CustomStringConvertible {
        public let description: String
    }

    /// The key in `path`, made there first (0600, atomically, never replacing a file another
    /// process made meanwhile) when it does not exist. Refused when others may read or
    /// write it, when it is not a regular file owned by this user, or when it is not exactly
    /// 32 bytes.
    public static func load(path: String, create: Bool = true) throws -> ChainMemoryKey {
        var info = stat()
        if lstat(path, &info) != 0 {
            guard errno == ENOENT, create else {
                throw Unavailable(description: "chain key \(path) cannot be read: \(String(cString: strerror(errno)))")
            }
            try make(path)
            guard lstat(path, &info) == 0 else {
                throw Unavailable(description: "chain key \(path) cannot be read: \(String(cString: strerror(errno)))")
            }
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw Unavailable(description: "chain key \(path) is not a regular file")
        }
        guard info.st_uid == geteuid() else {
            throw Unavailable(description: "chain key \(path) belongs to uid \(info.st_uid), not to this user (uid \(geteuid()))")
        }
        guard info.st_mode & 0o077 == 0 else {
            throw Unavailable(description: "chain key \(path) has mode \(String(info.st_mode & 0o777, radix: 8)): others may read or "
                              + "change it; chmod 600 it")
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw Unavailable(description: "chain key \(path) cannot be read")
        }
        guard data.count == length else {
            throw Unavailable(description: "chain key \(path) holds \(data.count) bytes, not \(length)")
        }
        return ChainMemoryKey(bytes: data)
    }

    /// Writes a new key beside `path` and links it into place: link(2) fails when another
    /// process got there first, and then that process's key is the one used.
    private static func make(_ path: String) throws {
        let directory = (path as NSString).deletingLastPathComponent
        if !directory.isEmpty, !FileManager.default.fileExists(atPath: directory) {
            do {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                                        attributes: [.posixPermissions: 0o700])
            } catch {
                throw Unavailable(description: "chain key folder \(directory) cannot be made: \(error.localizedDescription)")
            }
        }
        let temporary = path + ".\(getpid()).new"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw Unavailable(description: "chain key \(path) cannot be made: \(String(cString: strerror(errno)))")
        }
        defer { unlink(temporary) }
        let key = random().bytes
        let written = key.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        let synced = fsync(fd) == 0
        close(fd)
        guard written == key.count, synced else {
            throw Unavailable(description: "chain key \(path) cannot be written: \(String(cString: strerror(errno)))")
        }
        if link(temporary, path) != 0 && errno != EEXIST {
            throw Unavailable(description: "chain key \(path) cannot be made: \(String(cString: strerror(errno)))")
        }
    }

    /// HMAC-SHA256 of `message` under this key. It fails only when libcrypto cannot
    /// allocate; a seal that matches nothing then makes every recall a miss, which is safe.
    func mac(_ message: Data) -> Data {
        ContentDigest.hmacSHA256(key: bytes, message: message) ?? Data()
    }

    /// The value rows are filed under for `rootsFingerprint`: bound to the key, so a
    /// receiver with another key neither finds nor overwrites these rows.
    func rowKey(roots rootsFingerprint: Data) -> Data {
        mac(Data("subdesk chain roots v1\n".utf8) + rootsFingerprint)
    }

    /// The seal over everything a recall relies on.
    func seal(chainHash: Data, roots rootsFingerprint: Data, entryLengths: [Int], subjects: [String],
              validFrom: Date, validUntil: Date) -> Data {
        var message = Data("subdesk chain v1\n".utf8)
        message += chainHash
        message += rootsFingerprint
        // Lengths and counts before variable-length text, so no two records share a message.
        func append(_ text: String) {
            let utf8 = Data(text.utf8)
            message += Data("\(utf8.count):".utf8) + utf8
        }
        append(entryLengths.map(String.init).joined(separator: ","))
        append(String(subjects.count))
        subjects.forEach(append)
        append(String(Int64(validFrom.timeIntervalSince1970)))
        append(String(Int64(validUntil.timeIntervalSince1970)))
        return mac(message)
    }

    /// Compares two seals in time independent of where they differ.
    static func sealsMatch(_ a: Data, _ b: Data) -> Bool {
        guard a.count == b.count, !a.isEmpty else { return false }
        return a.withUnsafeBytes { x in b.withUnsafeBytes { y in CRYPTO_memcmp(x.baseAddress, y.baseAddress, a.count) == 0 } }
    }
}
