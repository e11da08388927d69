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

    static func permissions(_ path: String) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: path))?[.posixPermissions] as? Int
    }
}

public struct SecretFileError: Error, CustomStringConvertible, Equatable {
    public let description: String
    public init(_ description: String) { self.description = description }
}
