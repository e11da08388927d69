/// A terminal colour: the terminal's own default, or an index into the 256-colour palette.
public enum ThemeColor: Hashable, Sendable, CustomStringConvertible {
    case `default`
    case index(UInt8)

    public static let black = ThemeColor.index(0)
    public static let red = ThemeColor.index(1)
    public static let green = ThemeColor.index(2)
    public static let yellow = ThemeColor.index(3)
    public static let blue = ThemeColor.index(4)
    public static let magenta = ThemeColor.index(5)
    public static let cyan = ThemeColor.index(6)
    public static let white = ThemeColor.index(7)

    /// The basic colour names theme files accept, by palette index; `bright_` names are 8 higher.
    public static let basicNames = ["black", "red", "green", "yellow", "blue", "magenta", "cyan", "white"]

    /// Parses a theme-file colour: `default`, `0`–`255`, `#rrggbb`, or a basic name (`red`, `bright_red`).
    ///
    /// `#rrggbb` becomes the nearest entry of the xterm 256-colour cube or grey
    /// ramp; the first 16 entries are never chosen, since users redefine them.
    public init?(themeValue: String) {
        let text = themeValue.lowercased()
        if text == "default" {
            self = .default
        } else if let number = Int(text), (0...255).contains(number), text.allSatisfy(\.isASCII) {
            self = .index(UInt8(number))
        } else if text.hasPrefix("#") {
            guard let rgb = XTermPalette.parseHex(String(text.dropFirst())) else { return nil }
            self = .index(XTermPalette.nearestIndex(red: rgb.red, green: rgb.green, blue: rgb.blue))
        } else if let basic = ThemeColor.basicNames.firstIndex(of: text) {
            self = .index(UInt8(basic))
        } else if text.hasPrefix("bright_"), let basic = ThemeColor.basicNames.firstIndex(of: String(text.dropFirst(7))) {
            self = .index(UInt8(basic + 8))
        } else {
            return nil
        }
    }

    /// The palette index, or nil for the terminal default.
    public var index: UInt8? {
        if case .index(let n) = self { return n }
        return nil
    }

    /// The spelling a theme file would use: a name for the first 16 colours, else the number.
    public var description: String {
        switch self {
        case .default:
            return "default"
        case .index(let n) where n < 8:
            return ThemeColor.basicNames[Int(n)]
        case .index(let n) where n < 16:
            return "bright_" + ThemeColor.basicNames[Int(n) - 8]
        case .index(let n):
            return String(n)
        }
    }
}

/// A text attribute a theme may turn on for a role.
public enum Attr: String, CaseIterable, Hashable, Sendable, Comparable {
    case bold
    case dim
    case reverse
    case underline

    public static func < (lhs: Attr, rhs: Attr) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}

/// How one `StyleRole` looks: foreground, background and attributes.
public struct ThemeStyle: Hashable, Sendable {
    public var fg: ThemeColor
    public var bg: ThemeColor
    public var attributes: Set<Attr>

    public init(fg: ThemeColor = .default, bg: ThemeColor = .default, attributes: Set<Attr> = []) {
        self.fg = fg
        self.bg = bg
        self.attributes = attributes
    }

    /// Terminal defaults, no attributes.
    public static let plain = ThemeStyle()
}
