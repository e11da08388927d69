import TerminalUI

/// Cutting text into screen lines where the widgets' word wrapping would not do.
enum TextLayout {
    /// Cuts `line` into pieces of at most `width` columns, keeping every character and its indentation.
    ///
    /// Word wrapping drops leading spaces and treats a long token as one
    /// word; indented JSON and base64 bodies need neither.
    static func hardWrap(_ line: String, width: Int) -> [String] {
        guard width > 0 else { return [] }
        var pieces: [String] = []
        var piece = ""
        var used = 0
        for character in line {
            let w = TextWidth.width(of: character)
            if used + w > width && !piece.isEmpty {
                pieces.append(piece)
                piece = ""
                used = 0
            }
            piece.append(character)
            used += w
        }
        pieces.append(piece)
        return pieces
    }
}
