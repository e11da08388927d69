/// A theme file problem that stops it loading, located by file and line.
public struct ThemeError: Error, Equatable, Sendable, CustomStringConvertible {
    public var file: String
    /// 1-based; nil when the problem is the file as a whole.
    public var line: Int?
    public var message: String

    public init(file: String, line: Int?, message: String) {
        self.file = file
        self.line = line
        self.message = message
    }

    /// `file:line: message`, the form editors and terminals link to.
    public var description: String {
        if let line { return "\(file):\(line): \(message)" }
        return "\(file): \(message)"
    }
}

/// A theme file problem that is reported but does not stop it loading.
public struct ThemeWarning: Equatable, Sendable, CustomStringConvertible {
    public var file: String
    public var line: Int
    public var message: String

    public init(file: String, line: Int, message: String) {
        self.file = file
        self.line = line
        self.message = message
    }

    public var description: String { "\(file):\(line): \(message)" }
}

/// Parses `key = value` theme files (see DESIGN.md, "Theme files").
///
/// The format is small enough that a hand-written line parser is clearer
/// than any dependency: blank lines and lines starting with `#` are
/// ignored; `key = value` sets `<role>_fg`, `<role>_bg` or `<role>_attr`.
/// A `#` preceded by whitespace and followed by whitespace or the end of
/// the line starts a trailing comment, which keeps `#rrggbb` values intact.
public enum ThemeParser {
    /// A parsed theme and the warnings met on the way.
    public struct Parsed: Sendable {
        public var theme: Theme
        public var warnings: [ThemeWarning]
    }

    private enum Part: String, CaseIterable {
        case fg, bg, attr
    }

    /// Parses theme text; keys it leaves out keep their value from `base`.
    ///
    /// - Parameters:
    ///   - file: the name used in errors and warnings.
    ///   - name: the theme's name; defaults to `file` without directory or extension.
    /// - Throws: `ThemeError` for the first malformed line, bad colour or bad attribute.
    public static func parse(_ text: String, file: String, name: String? = nil, base: Theme = .standard) throws -> Parsed {
        var theme = base
        theme.name = name ?? defaultName(for: file)
        var warnings: [ThemeWarning] = []
        var seen: [String: Int] = [:]

        for (offset, rawLine) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            let lineNumber = offset + 1
            let line = stripComment(String(rawLine)).trimmingWhitespace()
            if line.isEmpty { continue }

            func fail(_ message: String) -> ThemeError {
                ThemeError(file: file, line: lineNumber, message: message)
            }

            guard let equals = line.firstIndex(of: "=") else {
                throw fail("expected key = value")
            }
            let key = String(line[..<equals]).trimmingWhitespace().lowercased()
            let value = String(line[line.index(after: equals)...]).trimmingWhitespace()
            guard !key.isEmpty, !key.contains(where: { $0 == " " || $0 == "\t" }) else {
                throw fail("expected key = value")
            }
            guard !value.isEmpty else {
                throw fail("\(key): missing value")
            }

            guard let (role, part) = splitKey(key) else {
                warnings.append(ThemeWarning(file: file, line: lineNumber, message: "unknown key '\(SafeText.sanitize(key))' (ignored)"))
                continue
            }
            if let earlier = seen[key] {
                warnings.append(ThemeWarning(file: file, line: lineNumber, message: "\(key) set again, replacing line \(earlier)"))
            }
            seen[key] = lineNumber

            switch part {
            case .fg, .bg:
                guard let color = ThemeColor(themeValue: value) else {
                    throw fail("\(key): bad colour '\(SafeText.sanitize(value))' (expected #rrggbb, 0-255, a colour name such as red or bright_red, or default)")
                }
                if part == .fg { theme[role].fg = color } else { theme[role].bg = color }
            case .attr:
                theme[role].attributes = try parseAttributes(value, key: key, fail: fail)
            }
        }
        return Parsed(theme: theme, warnings: warnings)
    }

    private static func parseAttributes(_ value: String, key: String, fail: (String) -> ThemeError) throws -> Set<Attr> {
        let words = value.lowercased()
            .split(whereSeparator: { $0 == "," || $0 == " " || $0 == "\t" })
            .map(String.init)
        if words == ["none"] { return [] }
        var attributes: Set<Attr> = []
        for word in words {
            guard let attribute = Attr(rawValue: word) else {
                throw fail("\(key): unknown attribute '\(SafeText.sanitize(word))' (expected bold, dim, reverse, underline, or none alone)")
            }
            attributes.insert(attribute)
        }
        return attributes
    }

    private static func splitKey(_ key: String) -> (StyleRole, Part)? {
        for part in Part.allCases {
            let suffix = "_" + part.rawValue
            if key.hasSuffix(suffix), let role = StyleRole(rawValue: String(key.dropLast(suffix.count))) {
                return (role, part)
            }
        }
        return nil
    }

    private static func stripComment(_ line: String) -> String {
        if line.trimmingWhitespace().hasPrefix("#") { return "" }
        var previous: Character = " "
        var index = line.startIndex
        while index < line.endIndex {
            let character = line[index]
            let next = line.index(after: index)
            if character == "#", previous.isWhitespace, next == line.endIndex || line[next].isWhitespace {
                return String(line[..<index])
            }
            previous = character
            index = next
        }
        return line
    }

    private static func defaultName(for file: String) -> String {
        var name = file.split(separator: "/").last.map(String.init) ?? file
        if name.hasSuffix(".theme") { name.removeLast(".theme".count) }
        return name
    }
}

extension String {
    /// Without leading and trailing spaces, tabs and carriage returns (CRLF files work too).
    func trimmingWhitespace() -> String {
        var slice = Substring(self)
        while let first = slice.first, first.isWhitespace { slice.removeFirst() }
        while let last = slice.last, last.isWhitespace { slice.removeLast() }
        return String(slice)
    }
}
