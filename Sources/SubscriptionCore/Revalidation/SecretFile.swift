import Foundation

/// Reads secrets (the `.p8` API key, the shared secret) from files, so they never
/// pass through command lines, config files or logs.
public enum SecretFile {
    /// The file's bytes. `warn` hears when the file is readable by group or others,
    /// since anyone who can read it can act as the app towards Apple.
    public static func read(_ path: String, what: String, warn: (String) -> Void) throws -> Data {
        let shown = path.escapingControlCharacters()
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw SecretFileError("\(what) file \(shown) does not exist")
        }
        guard !isDirectory.boolValue else { throw SecretFileError("\(what) file \(shown) is a directory") }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw SecretFileError("\(what) file \(shown) cannot be read (check its permissions)")
        }
        if let mode = permissions(path), mode & 0o077 != 0 {
            warn("\(what) file \(shown) is readable by others (mode \(String(mode, radix: 8))); chmod 600 it")
        }
        if let owner = foreignLinkOwner(path) {
            warn("\(what) file \(shown) is a link owned by uid \(owner), who can point it at another file; "
                 + "name the file itself, or a link you own")
        }
        return data
    }

    /// The file as text, surrounding whitespace and the trailing newline trimmed.
    public static func readText(_ path: String, what: String, warn: (String) -> Void) throws -> String {
        let trimmed = try readWhole(path, what: what, warn: warn).trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { throw SecretFileError("\(what) file \(path.escapingControlCharacters()) is empty") }
        return trimmed
    }

    /// The file's text as written, less one final newline (`\n` or `\r\n`) only: for a
    /// secret whose spaces may be its own (a password), which `readText` would trim.
    public static func readLine(_ path: String, what: String, warn: (String) -> Void) throws -> String {
        let text = try readWhole(path, what: what, warn: warn)
        // "\r\n" is one Character in Swift: dropping the last drops it whole.
        return text.hasSuffix("\r\n") || text.hasSuffix("\n") ? String(text.dropLast()) : text
    }

    private static func readWhole(_ path: String, what: String, warn: (String) -> Void) throws -> String {
        let data = try read(path, what: what, warn: warn)
        guard let text = String(data: data, encoding: .utf8) else {
            throw SecretFileError("\(what) file \(path.escapingControlCharacters()) is not UTF-8 text")
        }
        return text
    }

    /// Why a file that decides what subdesk trusts (the config file, a root certificate)
    /// is unsafe, or nil: anyone who can write it can make subdesk accept forged notifications.
    public static func trustProblem(_ path: String, what: String) -> String? {
        guard let mode = permissions(path), mode & 0o022 != 0 else { return nil }
        let who = mode & 0o002 != 0 ? "every user" : "its group"
        return "\(what) \(path.escapingControlCharacters()) can be written by \(who) (mode \(String(mode & 0o777, radix: 8))), "
            + "who could then decide which notifications are trusted; chmod go-w it"
    }

    /// The mode of the file `path` leads to, links followed: a link's own mode (0777 on
    /// Linux) says nothing of who can read the key.
    public static func permissions(_ path: String) -> Int? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return Int(info.st_mode & 0o7777)
    }

    /// The owner of a link at `path` (or of any link on the way to the file) when it is
    /// neither this user nor root: whoever owns a link can make it name another file.
    static func foreignLinkOwner(_ path: String) -> uid_t? {
        var current = path
        for _ in 0..<40 {
            var info = stat()
            guard lstat(current, &info) == 0, info.st_mode & S_IFMT == S_IFLNK else { return nil }
            if info.st_uid != geteuid() && info.st_uid != 0 { return info.st_uid }
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: current) else { return nil }
            current = target.hasPrefix("/") ? target : ((current as NSString).deletingLastPathComponent as NSString).appendingPathComponent(target)
        }
        return nil
    }
}

public struct SecretFileError: Error, CustomStringConvertible, Equatable {
    public let description: String
    public init(_ description: String) { self.description = description }
}
