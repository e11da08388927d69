/// Display width of text in terminal columns, and fitting text to a width.
///
/// Terminals lay text out by `wcwidth`, not by `Character` count, so every
/// column computation in this module goes through here. The tables follow
/// Unicode's East Asian Width (W and F) and emoji presentation properties;
/// they are deliberately small, covering the scripts an operator will see in
/// product names, locales and user-supplied strings.
public enum TextWidth {
    /// The ellipsis appended when text is cut short.
    public static let ellipsis: Character = "…"

    /// Columns taken by one Unicode scalar on its own: 0, 1 or 2.
    public static func width(of scalar: Unicode.Scalar) -> Int {
        let value = scalar.value
        // Printable ASCII is by far the most common case.
        if value >= 0x20 && value < 0x7F { return 1 }
        if isZeroWidth(scalar) { return 0 }
        if isWide(value) || scalar.properties.isEmojiPresentation { return 2 }
        return 1
    }

    /// Columns taken by one grapheme cluster.
    ///
    /// A cluster is as wide as its base scalar, except that an emoji
    /// presentation selector (U+FE0F), a keycap, or a regional-indicator pair
    /// turns it into a two-column emoji.
    public static func width(of character: Character) -> Int {
        let scalars = character.unicodeScalars
        guard let first = scalars.first else { return 0 }
        var width = Self.width(of: first)
        if scalars.count > 1 {
            if scalars.contains(where: { $0.value == 0xFE0F }) && first.properties.isEmoji {
                width = 2
            } else if isRegionalIndicator(first.value) {
                width = 2
            } else if width == 0 {
                // A cluster that starts with a mark (text that began mid-sequence)
                // is as wide as whatever visible scalar it carries.
                width = scalars.map { Self.width(of: $0) }.max() ?? 0
            }
        }
        return width
    }

    /// Columns taken by a whole string.
    public static func width(of text: String) -> Int {
        var total = 0
        for character in text { total += width(of: character) }
        return total
    }

    /// Cuts `text` to at most `width` columns, ending in "…" when anything was cut.
    ///
    /// A wide character never straddles the limit: when one would, it is
    /// dropped and the result is one column short of `width`.
    public static func truncate(_ text: String, toWidth width: Int) -> String {
        guard width > 0 else { return "" }
        if Self.width(of: text) <= width { return text }
        return prefix(text, maxWidth: width - 1).text + String(ellipsis)
    }

    /// Exactly `width` columns: truncated with "…" if too long, padded with spaces otherwise.
    public static func fit(_ text: String, toWidth width: Int, alignment: Alignment = .left) -> String {
        pad(truncate(text, toWidth: width), toWidth: width, alignment: alignment)
    }

    /// Pads with spaces to `width` columns; text already that wide is returned unchanged.
    public static func pad(_ text: String, toWidth width: Int, alignment: Alignment = .left) -> String {
        let missing = width - Self.width(of: text)
        guard missing > 0 else { return text }
        switch alignment {
        case .left:
            return text + String(repeating: " ", count: missing)
        case .right:
            return String(repeating: " ", count: missing) + text
        case .center:
            let left = missing / 2
            return String(repeating: " ", count: left) + text + String(repeating: " ", count: missing - left)
        }
    }

    /// The longest leading part of `text` that fits in `maxWidth` columns, and its width.
    public static func prefix(_ text: String, maxWidth: Int) -> (text: String, width: Int) {
        var result = ""
        var used = 0
        for character in text {
            let w = width(of: character)
            if used + w > maxWidth { break }
            result.append(character)
            used += w
        }
        return (result, used)
    }

    /// The longest trailing part of `text` that fits in `maxWidth` columns, and its width.
    ///
    /// Used where the end of a value matters more than its start, such as an
    /// input field the operator is typing into.
    public static func suffix(_ text: String, maxWidth: Int) -> (text: String, width: Int) {
        var kept: [Character] = []
        var used = 0
        for character in text.reversed() {
            let w = width(of: character)
            if used + w > maxWidth { break }
            kept.append(character)
            used += w
        }
        return (String(kept.reversed()), used)
    }

    /// Breaks `text` into lines of at most `width` columns, at spaces where possible.
    ///
    /// Existing newlines are kept as line breaks; a word longer than a line
    /// is split by columns rather than overflowing.
    public static func wrap(_ text: String, toWidth width: Int) -> [String] {
        guard width > 0 else { return [] }
        var lines: [String] = []
        for paragraph in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline) {
            var line = ""
            var lineWidth = 0
            for word in paragraph.split(separator: " ", omittingEmptySubsequences: true) {
                var word = String(word)
                var wordWidth = Self.width(of: word)
                if lineWidth > 0 && lineWidth + 1 + wordWidth <= width {
                    line += " " + word
                    lineWidth += 1 + wordWidth
                    continue
                }
                if lineWidth > 0 {
                    lines.append(line)
                    line = ""
                    lineWidth = 0
                }
                while wordWidth > width {
                    var piece = prefix(word, maxWidth: width)
                    if piece.text.isEmpty {
                        // Only a wide character that cannot fit at all (width 1): show it anyway.
                        piece = (String(word.first!), width)
                    }
                    lines.append(piece.text)
                    word.removeFirst(piece.text.count)
                    wordWidth = Self.width(of: word)
                }
                line = word
                lineWidth = wordWidth
            }
            lines.append(line)
        }
        return lines
    }

    // MARK: - Tables

    private static func isZeroWidth(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        // Hangul medial vowels and final consonants join the preceding initial.
        if (0x1160...0x11FF).contains(value) || (0xD7B0...0xD7FF).contains(value) { return true }
        // The soft hyphen is a format character that terminals nonetheless show.
        if value == 0x00AD { return false }
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format, .control:
            // Covers combining marks, ZWJ/ZWNJ, variation selectors (Mn) and
            // bidi marks; controls never reach the screen unescaped anyway.
            return true
        default:
            return value == 0x200B
        }
    }

    private static func isRegionalIndicator(_ value: UInt32) -> Bool {
        (0x1F1E6...0x1F1FF).contains(value)
    }

    /// East Asian Wide and Fullwidth blocks.
    ///
    /// Emoji (U+1F300–1F64F, U+1F900–1F9FF and the rest) are not listed: the
    /// emoji-presentation property marks exactly the wide ones, whereas those
    /// blocks also hold text-presentation symbols such as U+1F321 that
    /// terminals draw in one column.
    private static let wideRanges: [ClosedRange<UInt32>] = [
        0x1100...0x115F,   // Hangul Jamo initial consonants
        0x2329...0x232A,   // angle brackets
        0x2E80...0x303E,   // CJK radicals, Kangxi, CJK symbols and punctuation
        0x3041...0x33FF,   // Hiragana, Katakana, Bopomofo, Hangul compatibility, CJK compatibility
        0x3400...0x4DBF,   // CJK extension A
        0x4E00...0x9FFF,   // CJK unified ideographs
        0xA000...0xA4CF,   // Yi
        0xA960...0xA97F,   // Hangul Jamo extended A
        0xAC00...0xD7A3,   // Hangul syllables
        0xF900...0xFAFF,   // CJK compatibility ideographs
        0xFE10...0xFE19,   // vertical forms
        0xFE30...0xFE6F,   // CJK compatibility forms, small form variants
        0xFF00...0xFF60,   // fullwidth ASCII and punctuation
        0xFFE0...0xFFE6,   // fullwidth signs
        0x16FE0...0x16FE4, // ideographic symbols
        0x17000...0x18CFF, // Tangut, Khitan
        0x1B000...0x1B2FF, // Kana supplement and extensions, Nushu
        0x1F200...0x1F2FF, // enclosed ideographic supplement
        0x20000...0x2FFFD, // CJK extensions B and later
        0x30000...0x3FFFD, // CJK extension G and later
    ]

    private static func isWide(_ value: UInt32) -> Bool {
        guard value >= 0x1100 else { return false }
        var low = 0
        var high = wideRanges.count - 1
        while low <= high {
            let mid = (low + high) / 2
            let range = wideRanges[mid]
            if value < range.lowerBound {
                high = mid - 1
            } else if value > range.upperBound {
                low = mid + 1
            } else {
                return true
            }
        }
        return false
    }
}

/// Horizontal placement of text inside a wider space.
public enum Alignment: Sendable, Hashable {
    case left
    case right
    case center
}
