import CNCurses
import Foundation
import TerminalUI

/// The ncurses screen: the only code that talks to the terminal.
///
/// It paints runs of changed cells, maps theme roles to colour pairs and
/// turns ncurses key codes into `Key`s. Everything it draws was already
/// sanitized by `ScreenBuffer`, so no payload byte reaches the terminal raw.
final class CursesTerminal {
    /// What waiting for input produced.
    enum Input {
        case key(Key)
        case resize
        /// Nothing within the timeout: time to refresh live views.
        case timeout
        /// SIGINT, SIGTERM or SIGHUP arrived.
        case signal(Int32)
    }

    private let window: UnsafeMutablePointer<WINDOW>
    private var stopped = false
    /// Attributes and colour pair for each role in the current theme.
    private var styles: [StyleRole: (attributes: attr_t, pair: Int16)] = [:]
    /// The theme as adapted to this terminal's colours.
    private(set) var theme: Theme = .monochrome
    /// Whether only ASCII can be shown: the locale's character set is not UTF-8 (the C
    /// locale, say), or SUBDESK_ASCII=1 asks for it. Then every run is drawn through
    /// `ASCIIFallback`, so borders and glyphs turn into ASCII instead of disappearing.
    let asciiOnly: Bool

    /// Takes over the terminal. Always pair with `stop()`.
    init(inputTimeoutMilliseconds: Int32) {
        // Without the locale, ncursesw draws UTF-8 box lines and wide characters as bytes.
        setlocale(LC_ALL, "")
        let codeset = nl_langinfo(nl_item(CODESET)).map { String(cString: $0) } ?? ""
        asciiOnly = ProcessInfo.processInfo.environment["SUBDESK_ASCII"] == "1"
            || !["UTF-8", "UTF8"].contains(codeset.uppercased())
        // ESC alone must feel like Esc, not wait a second for a key sequence that never comes.
        setenv("ESCDELAY", "25", 0)
        _ = initscr()
        window = subdesk_stdscr()!
        subdesk_restore_at_exit()
        subdesk_catch_quit_signals()
        cbreak()
        noecho()
        nonl()
        keypad(window, true)
        curs_set(0)
        wtimeout(window, inputTimeoutMilliseconds)
        if has_colors() {
            start_color()
            use_default_colors()
        }
    }

    /// Gives the terminal back: normal screen, cursor and echo, as before.
    func stop() {
        guard !stopped else { return }
        stopped = true
        curs_set(1)
        endwin()
    }

    deinit { stop() }

    var size: (width: Int, height: Int) {
        (Int(subdesk_maxx(window)), Int(subdesk_maxy(window)))
    }

    /// How many colours the terminal offers; 0 when it has none.
    var colorCount: Int { has_colors() ? Int(subdesk_colors()) : 0 }

    // MARK: - Theme

    /// The theme this terminal can show for `requested`: as is, or monochrome.
    ///
    /// A 256-colour theme squeezed into 8 colours maps greys to yellow and
    /// blues to black, which reads worse than attributes alone; so a theme
    /// needing more colours than the terminal has falls back to mono, while
    /// the 8-colour default works anywhere with colour.
    func adapt(_ requested: Theme) -> Theme {
        let colors = colorCount
        if colors == 0 || subdesk_color_pairs() <= StyleRole.allCases.count { return .monochrome }
        return requested.colorsRequired <= colors ? requested : .monochrome
    }

    /// Defines one colour pair per role and remembers each role's attributes.
    func apply(_ requested: Theme) {
        theme = adapt(requested)
        styles = [:]
        let colors = colorCount > 0
        for (index, role) in StyleRole.allCases.enumerated() {
            let style = theme[role]
            var attributes = subdesk_a_normal()
            for attribute in style.attributes {
                switch attribute {
                case .bold: attributes |= subdesk_a_bold()
                case .dim: attributes |= subdesk_a_dim()
                case .reverse: attributes |= subdesk_a_reverse()
                case .underline: attributes |= subdesk_a_underline()
                }
            }
            var pair: Int16 = 0
            if colors {
                pair = Int16(index + 1)
                let fg = style.fg.index.map(Int16.init) ?? -1
                let bg = style.bg.index.map(Int16.init) ?? -1
                init_pair(pair, fg, bg)
            }
            styles[role] = (attributes, pair)
        }
        // Cells keep their text across a theme change, so only a full repaint shows it.
        clearok(window, true)
    }

    // MARK: - Painting

    /// Draws the given runs and shows the result; cells not in a run are left as they are.
    func paint(_ runs: [CellRun]) {
        for run in runs {
            let style = styles[run.role] ?? (subdesk_a_normal(), 0)
            var text = (asciiOnly ? ASCIIFallback.text(run.text) : run.text).unicodeScalars.map { wchar_t(bitPattern: $0.value) }
            text.append(0)
            text.withUnsafeBufferPointer { buffer in
                _ = subdesk_paint(window, Int32(run.y), Int32(run.x), buffer.baseAddress, Int32(buffer.count - 1),
                                  style.attributes, style.pair)
            }
        }
        wrefresh(window)
    }

    /// Asks the terminal to put `text` on the system clipboard (OSC 52), for terminals (and
    /// tmux with `set-clipboard on`) that allow it. The text is sent base64-encoded, so no
    /// byte of it reaches the terminal raw.
    func copyToClipboard(_ text: String) {
        let sequence = "\u{1B}]52;c;" + Data(text.utf8).base64EncodedString() + "\u{07}"
        fflush(stdout)
        FileHandle.standardOutput.write(Data(sequence.utf8))
    }

    /// Forgets what the terminal shows, so the next paint redraws it all (after a resize).
    func invalidate() {
        clearok(window, true)
    }

    // MARK: - Input

    /// Waits for one key, a resize, a signal, or the input timeout.
    func read() -> Input {
        var character: wint_t = 0
        let status = wget_wch(window, &character)
        let signal = subdesk_take_signal()
        if signal != 0 { return .signal(signal) }
        if status == ERR { return .timeout }
        if status == subdesk_key_code_yes() {
            if Int32(character) == subdesk_key_resize() { return .resize }
            return CursesKeys.functionKey(Int32(character)).map { .key($0) } ?? .timeout
        }
        return CursesKeys.character(UInt32(character)).map { .key($0) } ?? .timeout
    }
}

/// ncurses key codes as `Key`s.
enum CursesKeys {
    static func functionKey(_ code: Int32) -> Key? {
        switch code {
        case KEY_UP: return .up
        case KEY_DOWN: return .down
        case KEY_LEFT: return .left
        case KEY_RIGHT: return .right
        case KEY_PPAGE: return .pageUp
        case KEY_NPAGE: return .pageDown
        case KEY_HOME: return .home
        case KEY_END: return .end
        case KEY_BACKSPACE: return .backspace
        case KEY_DC: return .delete
        case KEY_BTAB: return .backTab
        case KEY_ENTER: return .enter
        default:
            for n in 1...24 where code == subdesk_key_f(Int32(n)) { return .function(n) }
            return nil
        }
    }

    static func character(_ value: UInt32) -> Key? {
        switch value {
        case 10, 13: return .enter
        case 27: return .escape
        case 127, 8: return .backspace
        case 9: return .tab
        case 1...26: return .ctrl(Character(Unicode.Scalar(value + 96)!))
        default:
            guard let scalar = Unicode.Scalar(value) else { return nil }
            return .char(Character(scalar))
        }
    }
}
