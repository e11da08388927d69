/// A key press, as the terminal backend reports it.
///
/// The backend maps its own key codes onto this; everything above it (key
/// tables, reducers, tests) speaks only `Key`. `description` is the short
/// label shown in the hint bar and the help screen.
public enum Key: Hashable, Sendable, CustomStringConvertible {
    case char(Character)
    case up, down, left, right
    case pageUp, pageDown, home, end
    case enter, escape, backspace, tab, backTab, delete
    /// The terminal changed size; not a key, but it arrives on the same channel.
    case resize
    case function(Int)
    /// A control chord; the backend reports the letter in lower case.
    case ctrl(Character)

    public var description: String {
        switch self {
        case .char(" "): return "Space"
        case .char(let c): return SafeText.sanitize(String(c))
        case .up: return "↑"
        case .down: return "↓"
        case .left: return "←"
        case .right: return "→"
        case .pageUp: return "PgUp"
        case .pageDown: return "PgDn"
        case .home: return "Home"
        case .end: return "End"
        case .enter: return "Enter"
        case .escape: return "Esc"
        case .backspace: return "Bksp"
        case .tab: return "Tab"
        case .backTab: return "S-Tab"
        case .delete: return "Del"
        case .resize: return "Resize"
        case .function(let n): return "F\(n)"
        case .ctrl(let c): return "^" + String(c).uppercased()
        }
    }

    /// Parses a key name as written in key tables and config: the inverse of `description`.
    ///
    /// Accepts the descriptions above case-insensitively, plus a few common
    /// spellings (`ctrl-c`, `C-c`, `pgdn`, `return`, `space`). Any other
    /// single character names itself.
    public init?(name: String) {
        let lower = name.lowercased()
        if let key = Key.named[lower] {
            self = key
            return
        }
        if name.count == 1, let c = name.first {
            self = .char(c)
            return
        }
        for prefix in ["^", "ctrl-", "ctrl+", "c-"] where lower.hasPrefix(prefix) {
            let rest = lower.dropFirst(prefix.count)
            if rest.count == 1, let c = rest.first {
                self = .ctrl(c)
                return
            }
        }
        if lower.hasPrefix("f"), let n = Int(lower.dropFirst()), (1...24).contains(n) {
            self = .function(n)
            return
        }
        return nil
    }

    private static let named: [String: Key] = [
        "space": .char(" "),
        "↑": .up, "up": .up,
        "↓": .down, "down": .down,
        "←": .left, "left": .left,
        "→": .right, "right": .right,
        "pgup": .pageUp, "pageup": .pageUp,
        "pgdn": .pageDown, "pagedown": .pageDown,
        "home": .home, "end": .end,
        "enter": .enter, "return": .enter,
        "esc": .escape, "escape": .escape,
        "bksp": .backspace, "backspace": .backspace,
        "tab": .tab,
        "s-tab": .backTab, "shift-tab": .backTab, "backtab": .backTab,
        "del": .delete, "delete": .delete,
        "resize": .resize,
    ]
}
