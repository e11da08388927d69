/// Making untrusted strings safe to draw on a terminal.
///
/// Payload fields (product ids, app account tokens, error messages from
/// Apple or from whoever posted to the intake) reach the screen verbatim
/// otherwise. An embedded ESC can rewrite the screen, set the window title
/// or, on some terminals, answer back keystrokes; CR and bidi overrides can
/// make one value look like another. Every such scalar becomes a visible,
/// printable escape instead.
public enum SafeText {
    /// Replaces control and bidi-override scalars with visible escapes.
    ///
    /// C0 controls, DEL and C1 controls (U+0080–U+009F) become `\e`, `\n`,
    /// `\r`, `\t`, `\x07`-style escapes; format characters (bidi embeddings,
    /// overrides and isolates, zero-width spaces and joiners, LRM/RLM/ALM, the
    /// BOM: every scalar of category Cf) and the line/paragraph separators
    /// (U+2028, U+2029) become `\u{200B}`-style escapes.
    /// Backslashes are left alone, so sanitizing twice changes nothing.
    public static func sanitize(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        var result = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if needsEscape(scalar) {
                result.append(contentsOf: escape(scalar).unicodeScalars)
            } else {
                result.append(scalar)
            }
        }
        return String(result)
    }

    /// Whether `text` would be changed by `sanitize(_:)`.
    public static func isSafe(_ text: String) -> Bool {
        !text.unicodeScalars.contains(where: needsEscape)
    }

    private static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F:
            return true
        case 0xA0..<0xAD:
            return false
        case 0x2028, 0x2029:
            return true
        default:
            // Format characters (Cf) draw nothing: zero-width spaces and joiners, LRM/RLM/ALM,
            // bidi embeddings, overrides and isolates, word joiners, the BOM, tag characters.
            // Left raw they make two different ids look alike, and a joiner makes some
            // terminals merge cells, which shifts every column after it.
            return scalar.value > 0x7F && scalar.properties.generalCategory == .format
        }
    }

    private static func escape(_ scalar: Unicode.Scalar) -> String {
        switch scalar.value {
        case 0x1B: return "\\e"
        case 0x0A: return "\\n"
        case 0x0D: return "\\r"
        case 0x09: return "\\t"
        case 0x00...0x1F, 0x7F:
            return "\\x" + hex(scalar.value, digits: 2)
        default:
            return "\\u{" + hex(scalar.value, digits: scalar.value > 0xFF ? 4 : 2) + "}"
        }
    }

    private static func hex(_ value: UInt32, digits: Int) -> String {
        let text = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }
}
