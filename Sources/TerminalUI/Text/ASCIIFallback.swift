/// Text for a terminal that cannot show anything but ASCII (the C locale, a non-UTF-8
/// terminal): each character becomes ASCII of the same width, so borders, glyphs and
/// columns stay where they were instead of vanishing.
///
/// Box lines become `-`, `|` and `+`; status glyphs and arrows their usual ASCII
/// stand-ins (`●` `*`, `▸` `>`, `…` `~`, `⊘` `!`); sparkline blocks a rising `_ . - = #`; any other
/// character one `?` per column it takes.
public enum ASCIIFallback {
    public static func text(_ text: String) -> String {
        guard !text.unicodeScalars.allSatisfy(\.isASCII) else { return text }
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for character in text {
            if character.isASCII {
                out.append(character)
            } else if let scalar = character.unicodeScalars.first, let mapped = replacement(scalar) {
                out.append(mapped)
            } else {
                out += String(repeating: "?", count: TextWidth.width(of: character))
            }
        }
        return out
    }

    static let glyphs: [Unicode.Scalar: Character] = [
        "●": "*", "○": "o", "•": "*", "◂": "<", "▸": ">", "◄": "<", "►": ">", "▴": "^", "▾": "v", "▲": "^", "▼": "v",
        "↑": "^", "↓": "v", "←": "<", "→": ">", "·": ".", "…": "~", "—": "-", "–": "-", "✕": "x", "✗": "x", "×": "x",
        "✓": "v", "✔": "v", "‹": "<", "›": ">", "«": "<", "»": ">", "≤": "<", "≥": ">", "°": "o", "⚑": "!", "⊘": "!",
        "▁": "_", "▂": "_", "▃": ".", "▄": "-", "▅": "=", "▆": "=", "▇": "#", "█": "#",
    ]

    static func replacement(_ scalar: Unicode.Scalar) -> Character? {
        if let glyph = glyphs[scalar] { return glyph }
        switch scalar.value {
        case 0x2500...0x257F:  // box drawing
            if "─━═╌╍┄┅┈┉╴╶╸╺".unicodeScalars.contains(scalar) { return "-" }
            if "│┃║╎╏┆┇┊┋╵╷╹╻".unicodeScalars.contains(scalar) { return "|" }
            return "+"
        case 0x2580...0x259F:  // block elements
            return "#"
        default:
            return nil
        }
    }
}
