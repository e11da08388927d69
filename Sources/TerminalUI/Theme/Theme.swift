import Foundation

/// How every `StyleRole` looks on screen.
///
/// Built-in `standard` (the fallback for any key a theme file leaves out)
/// and `monochrome` (for `NO_COLOR` or terminals without colour) need no
/// files; others are loaded from `NAME.theme` files by `load(name:searchPaths:)`.
public struct Theme: Equatable, Sendable {
    public var name: String
    /// A style for every role; roles never missing is what lets renderers skip checks.
    public private(set) var styles: [StyleRole: ThemeStyle]

    /// A theme from explicit styles; roles not given take their style from `fallback`.
    public init(name: String, styles: [StyleRole: ThemeStyle], fallback: Theme? = nil) {
        self.name = name
        var complete: [StyleRole: ThemeStyle] = [:]
        for role in StyleRole.allCases {
            complete[role] = styles[role] ?? fallback?.styles[role] ?? .plain
        }
        self.styles = complete
    }

    public subscript(role: StyleRole) -> ThemeStyle {
        get { styles[role] ?? .plain }
        set { styles[role] = newValue }
    }

    /// The smallest palette the theme is designed for: 0 (attributes only), 8, 16 or 256.
    public var colorsRequired: Int {
        let highest = styles.values.flatMap { [$0.fg.index, $0.bg.index] }.compactMap { $0 }.max()
        guard let highest else { return 0 }
        if highest < 8 { return 8 }
        if highest < 16 { return 16 }
        return 256
    }

    /// Whether the theme uses colours beyond the 16 basic ones.
    public var needs256Colors: Bool { colorsRequired > 16 }

    /// The theme adapted to a terminal with only `colors` colours.
    ///
    /// Colours the terminal lacks become the nearest basic colour. When a
    /// foreground and background that differed collapse into the same colour,
    /// the foreground is swapped for black or white so text stays legible.
    /// With fewer than 8 colours, colours are dropped and any role that relied
    /// on a background (selection, dialogs) is shown reversed instead.
    public func downgraded(toColors colors: Int) -> Theme {
        if colors >= 256 || colorsRequired <= colors { return self }
        var result = self
        for (role, style) in styles {
            var adapted = style
            if colors < 8 {
                adapted.fg = .default
                adapted.bg = .default
                if style.bg != .default { adapted.attributes.insert(.reverse) }
            } else {
                adapted.fg = Theme.downgrade(style.fg, colors: colors)
                adapted.bg = Theme.downgrade(style.bg, colors: colors)
                if adapted.fg == adapted.bg, style.fg != style.bg, let bg = adapted.bg.index {
                    adapted.fg = XTermPalette.isDark(bg) ? .white : .black
                }
            }
            result.styles[role] = adapted
        }
        return result
    }

    private static func downgrade(_ color: ThemeColor, colors: Int) -> ThemeColor {
        guard let index = color.index, Int(index) >= colors else { return color }
        return .index(XTermPalette.nearestBasic(to: index, count: colors))
    }

    /// Whether the environment asks for no colour (`NO_COLOR` set and not empty, per no-color.org).
    public static func prefersMonochrome(environment: [String: String]) -> Bool {
        if let value = environment["NO_COLOR"], !value.isEmpty { return true }
        return false
    }

    /// The built-in theme with this name, if there is one (`default`, `mono`).
    public static func builtIn(named name: String) -> Theme? {
        switch name {
        case "default": return .standard
        case "mono", "monochrome": return .monochrome
        default: return nil
        }
    }

    /// The theme as `key = value` lines, in the form `ThemeParser` reads back.
    public func serialized() -> String {
        var lines = ["# \(name)"]
        for role in StyleRole.allCases {
            let style = self[role]
            let attributes = style.attributes.isEmpty ? "none" : style.attributes.sorted().map(\.rawValue).joined(separator: ",")
            lines.append("\(role.rawValue)_fg = \(style.fg)")
            lines.append("\(role.rawValue)_bg = \(style.bg)")
            lines.append("\(role.rawValue)_attr = \(attributes)")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}

// MARK: - Built-in themes

extension Theme {
    /// The default theme: the 8 basic colours, so it works on any colour terminal.
    ///
    /// Kept identical to `themes/default.theme`; a test holds them together.
    public static let standard = Theme(name: "default", styles: [
        .normal: ThemeStyle(),
        .dim: ThemeStyle(attributes: [.dim]),
        .title: ThemeStyle(fg: .cyan, attributes: [.bold]),
        .header: ThemeStyle(attributes: [.bold, .underline]),
        .border: ThemeStyle(fg: .blue),
        .selection: ThemeStyle(fg: .black, bg: .cyan),
        .hintKey: ThemeStyle(fg: .cyan, attributes: [.bold]),
        .hintText: ThemeStyle(),
        .breadcrumb: ThemeStyle(fg: .cyan, attributes: [.bold]),
        .badgeActive: ThemeStyle(fg: .green, attributes: [.bold]),
        .badgeExpired: ThemeStyle(attributes: [.dim]),
        .badgeBillingRetry: ThemeStyle(fg: .red, attributes: [.bold]),
        .badgeGrace: ThemeStyle(fg: .yellow, attributes: [.bold]),
        .badgeRevoked: ThemeStyle(fg: .magenta, attributes: [.bold]),
        .warning: ThemeStyle(fg: .yellow),
        .error: ThemeStyle(fg: .red, attributes: [.bold]),
        .success: ThemeStyle(fg: .green),
        .accent: ThemeStyle(fg: .magenta),
        .chartBar: ThemeStyle(fg: .cyan),
        .sparkline: ThemeStyle(fg: .green),
        .heatLow: ThemeStyle(attributes: [.dim]),
        .heatMedium: ThemeStyle(fg: .cyan),
        .heatHigh: ThemeStyle(fg: .green, attributes: [.bold]),
        .heatTop: ThemeStyle(fg: .black, bg: .green, attributes: [.bold]),
        .prompt: ThemeStyle(fg: .yellow, attributes: [.bold]),
        .input: ThemeStyle(fg: .black, bg: .white),
        .match: ThemeStyle(fg: .black, bg: .yellow),
        .dialog: ThemeStyle(fg: .white, bg: .blue),
        .dialogBorder: ThemeStyle(fg: .cyan, bg: .blue, attributes: [.bold]),
        .flashInfo: ThemeStyle(fg: .green, attributes: [.bold]),
        .flashError: ThemeStyle(fg: .white, bg: .red, attributes: [.bold]),
        .feedStored: ThemeStyle(fg: .green),
        .feedDuplicate: ThemeStyle(fg: .yellow),
        .feedRejected: ThemeStyle(fg: .red, attributes: [.bold]),
    ])

    /// Attributes only, no colour: for `NO_COLOR` and monochrome terminals.
    ///
    /// Kept identical to `themes/mono.theme`; a test holds them together.
    public static let monochrome = Theme(name: "mono", styles: [
        .normal: ThemeStyle(),
        .dim: ThemeStyle(attributes: [.dim]),
        .title: ThemeStyle(attributes: [.bold]),
        .header: ThemeStyle(attributes: [.bold, .underline]),
        .border: ThemeStyle(),
        .selection: ThemeStyle(attributes: [.reverse]),
        .hintKey: ThemeStyle(attributes: [.bold]),
        .hintText: ThemeStyle(),
        .breadcrumb: ThemeStyle(attributes: [.bold]),
        .badgeActive: ThemeStyle(attributes: [.bold]),
        .badgeExpired: ThemeStyle(attributes: [.dim]),
        .badgeBillingRetry: ThemeStyle(attributes: [.bold, .underline]),
        .badgeGrace: ThemeStyle(attributes: [.underline]),
        .badgeRevoked: ThemeStyle(attributes: [.bold, .dim]),
        .warning: ThemeStyle(attributes: [.bold]),
        .error: ThemeStyle(attributes: [.bold, .underline]),
        .success: ThemeStyle(),
        .accent: ThemeStyle(attributes: [.underline]),
        .chartBar: ThemeStyle(),
        .sparkline: ThemeStyle(),
        .heatLow: ThemeStyle(attributes: [.dim]),
        .heatMedium: ThemeStyle(),
        .heatHigh: ThemeStyle(attributes: [.bold]),
        .heatTop: ThemeStyle(attributes: [.bold, .reverse]),
        .prompt: ThemeStyle(attributes: [.bold]),
        .input: ThemeStyle(attributes: [.underline]),
        .match: ThemeStyle(attributes: [.underline]),
        .dialog: ThemeStyle(),
        .dialogBorder: ThemeStyle(attributes: [.bold]),
        .flashInfo: ThemeStyle(attributes: [.bold]),
        .flashError: ThemeStyle(attributes: [.bold, .reverse]),
        .feedStored: ThemeStyle(),
        .feedDuplicate: ThemeStyle(attributes: [.dim]),
        .feedRejected: ThemeStyle(attributes: [.bold]),
    ])
}

// MARK: - Loading

/// A loaded theme with the warnings its file produced.
public struct ThemeLoadResult: Sendable {
    public var theme: Theme
    public var warnings: [ThemeWarning]
    /// The file read, or nil for a built-in theme.
    public var path: String?
}

extension Theme {
    /// Finds `NAME.theme` in the first search path that has it and parses it.
    ///
    /// Paths are tried in order, so a user directory listed first overrides
    /// the shipped themes. When no file exists, the built-in `default` and
    /// `mono` themes still answer to their names so the program works without
    /// its themes directory. Names are bare words: a name with a path
    /// separator or a leading dot is refused rather than resolved, since it
    /// may come from an environment variable.
    public static func load(name: String, searchPaths: [String], base: Theme = .standard) throws -> ThemeLoadResult {
        guard !name.isEmpty, !name.hasPrefix("."), !name.contains("/"), !name.contains("\\") else {
            throw ThemeError(file: name, line: nil, message: "theme names are bare words, like 'midnight'")
        }
        let fileManager = FileManager.default
        for directory in searchPaths {
            let path = URL(fileURLWithPath: directory).appendingPathComponent(name + ".theme").path
            if fileManager.fileExists(atPath: path) {
                return try load(path: path, base: base)
            }
        }
        if let builtIn = builtIn(named: name) {
            return ThemeLoadResult(theme: builtIn, warnings: [], path: nil)
        }
        let searched = searchPaths.isEmpty ? "no search paths" : searchPaths.joined(separator: ", ")
        throw ThemeError(file: name + ".theme", line: nil, message: "not found in \(searched)")
    }

    /// Reads and parses one theme file; the theme is named after the file.
    public static func load(path: String, base: Theme = .standard) throws -> ThemeLoadResult {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw ThemeError(file: path, line: nil, message: "cannot read: \(error.localizedDescription)")
        }
        let name = URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
        let parsed = try ThemeParser.parse(text, file: path, name: name, base: base)
        return ThemeLoadResult(theme: parsed.theme, warnings: parsed.warnings, path: path)
    }
}
