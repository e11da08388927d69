/// A key and what it does, as shown in the hint bar.
public struct Hint: Sendable, Hashable {
    public var key: String
    public var label: String

    public init(_ key: String, _ label: String) {
        self.key = key
        self.label = label
    }

    public init(_ key: Key, _ label: String) {
        self.init(key.description, label)
    }
}

/// One row of `key label` pairs: ` r revalidate  o override  esc back  ? help`.
///
/// When the row is too narrow, whole pairs are dropped from the end and a
/// "…" marks that there are more, rather than cutting a label in half.
public struct HintBar: Sendable {
    public var hints: [Hint]
    /// Columns between pairs.
    public var spacing: Int

    public init(hints: [Hint], spacing: Int = 2) {
        self.hints = hints
        self.spacing = spacing
    }

    public func render(in area: Rect, buffer: inout ScreenBuffer) {
        guard !area.isEmpty else { return }
        let row = Rect(x: area.x, y: area.y, width: area.width, height: 1)
        buffer.fill(row, role: .hintText)

        let pairs = hints.map { (key: SafeText.sanitize($0.key), label: SafeText.sanitize($0.label)) }
        let widths = pairs.map { TextWidth.width(of: $0.key) + 1 + TextWidth.width(of: $0.label) }
        func widthOfFirst(_ count: Int) -> Int {
            count == 0 ? 0 : widths[..<count].reduce(0, +) + spacing * (count - 1)
        }

        var shown = pairs.count
        let truncated = widthOfFirst(shown) > area.width
        if truncated {
            // Keep as many whole pairs as leave room for the "…" after them.
            shown = 0
            while shown < pairs.count, widthOfFirst(shown + 1) + spacing + 1 <= area.width { shown += 1 }
        }

        var x = area.x
        for (index, pair) in pairs.prefix(shown).enumerated() {
            if index > 0 { x += spacing }
            x += buffer.put(pair.key, x: x, y: area.y, role: .hintKey, maxWidth: area.maxX - x)
            x += 1
            x += buffer.put(pair.label, x: x, y: area.y, role: .hintText, maxWidth: area.maxX - x)
        }
        if truncated {
            if shown > 0 { x += spacing }
            buffer.put("…", x: x, y: area.y, role: .hintText, maxWidth: area.maxX - x)
        }
    }
}
