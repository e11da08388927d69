/// The `:` command or `/` filter line being typed, with its cursor and completions.
///
/// ```
/// :sub▏  subscribers  subscriptions
/// ```
public struct PromptLine: Sendable {
    /// `:` for commands, `/` for filters, or a question such as `reason: ` for a free answer.
    public var symbol: String
    public var text: String
    /// Position of the cursor in `text`, in characters: 0 before the first, `text.count` at the end.
    public var cursor: Int
    public var completions: [String]
    /// The completion Tab would pick, highlighted.
    public var selectedCompletion: Int?

    public init(symbol: String, text: String, cursor: Int? = nil, completions: [String] = [], selectedCompletion: Int? = nil) {
        self.symbol = symbol
        self.text = text
        self.cursor = cursor ?? text.count
        self.completions = completions
        self.selectedCompletion = selectedCompletion
    }

    /// Draws the prompt on the first row of `area`; returns the cursor's screen column.
    ///
    /// The cursor cell is drawn reversed (`.selection`) so it shows even when
    /// the backend hides the terminal cursor. Text too long for the row
    /// scrolls so the cursor stays in view. Completions follow the text, as
    /// many as fit.
    @discardableResult
    public func render(in area: Rect, buffer: inout ScreenBuffer) -> Int? {
        guard !area.isEmpty else { return nil }
        let y = area.y
        buffer.fill(Rect(x: area.x, y: y, width: area.width, height: 1))
        let symbolWidth = buffer.put(symbol, x: area.x, y: y, role: .prompt, maxWidth: area.width / 2)
        let field = Rect(x: area.x + symbolWidth, y: y, width: area.width - symbolWidth, height: 1)
        guard field.width > 0 else { return nil }

        // Escaping per character keeps `cursor` (an index into the raw text) meaningful.
        let pieces = text.map { SafeText.sanitize(String($0)) }
        let cursorIndex = min(max(0, cursor), pieces.count)
        let widths = pieces.map { TextWidth.width(of: $0) }

        var start = 0
        var cursorColumn = widths[..<cursorIndex].reduce(0, +)
        while cursorColumn + 1 > field.width && start < cursorIndex {
            cursorColumn -= widths[start]
            start += 1
        }

        var x = field.x
        for index in start..<pieces.count {
            let role: StyleRole = index == cursorIndex ? .selection : .normal
            let written = buffer.put(pieces[index], x: x, y: y, role: role, maxWidth: field.maxX - x)
            if written == 0 { break }
            x += written
        }
        if cursorIndex == pieces.count && x < field.maxX {
            buffer.put(" ", x: x, y: y, role: .selection)
            x += 1
        }

        var completionX = x + 2
        for (index, completion) in completions.enumerated() {
            let clean = SafeText.sanitize(completion)
            let width = TextWidth.width(of: clean)
            guard completionX + width <= field.maxX else { break }
            buffer.put(clean, x: completionX, y: y, role: index == selectedCompletion ? .accent : .dim)
            completionX += width + 2
        }
        return field.x + cursorColumn
    }
}
