/// A grid of styled cells that widgets draw into and a backend paints.
///
/// Drawing is pure and cheap: a frame is rendered into a fresh buffer, the
/// backend asks for `changes(since:)` against the previous frame and paints
/// only those runs. Tests compare `lines()` against expected text.
///
/// All text passes through `SafeText.sanitize(_:)` on its way in, so no
/// widget can put a control character on the terminal by forgetting to.
public struct ScreenBuffer: Equatable, Sendable {
    public let width: Int
    public let height: Int
    private var cells: [Cell]

    public init(width: Int, height: Int, role: StyleRole = .normal) {
        self.width = max(0, width)
        self.height = max(0, height)
        cells = Array(repeating: .blank(role), count: self.width * self.height)
    }

    /// The whole buffer as a rectangle.
    public var bounds: Rect { Rect(x: 0, y: 0, width: width, height: height) }

    /// The cell at a column and row; out-of-range positions read as blank.
    public subscript(x: Int, y: Int) -> Cell {
        guard x >= 0, x < width, y >= 0, y < height else { return .blank() }
        return cells[y * width + x]
    }

    // MARK: - Drawing

    /// Writes `text` from column `x` of row `y`, returning the columns written.
    ///
    /// Writing stops at the right edge of the buffer or after `maxWidth`
    /// columns, whichever comes first. A wide character that would cross
    /// that edge is replaced by a space, so it is never half drawn; the
    /// space counts as written. Zero-width graphemes that have no base to
    /// attach to are dropped.
    @discardableResult
    public mutating func put(_ text: String, x: Int, y: Int, role: StyleRole = .normal, maxWidth: Int? = nil) -> Int {
        guard y >= 0, y < height, !text.isEmpty else { return 0 }
        var limit = width
        if let maxWidth { limit = min(limit, x + max(0, maxWidth)) }
        guard x < limit else { return 0 }

        var column = x
        for character in SafeText.sanitize(text) {
            let w = TextWidth.width(of: character)
            if w == 0 { continue }
            if column >= limit { break }
            if column + w > limit {
                if column >= 0 { write(.blank(role), x: column, y: y) }
                column = limit
                break
            }
            if column < 0 {
                // Only the right half of a wide character is on screen.
                if column + w > 0 {
                    for visible in 0..<(column + w) { write(.blank(role), x: visible, y: y) }
                }
            } else {
                write(Cell(text: String(character), width: w, role: role), x: column, y: y)
            }
            column += w
        }
        return max(0, min(column, limit) - max(x, 0))
    }

    /// Writes `text` into exactly `width` columns: truncated with "…" or padded with spaces.
    ///
    /// The padding is drawn in `padRole` when given, so that a coloured
    /// badge in a wide column colours only its own text.
    @discardableResult
    public mutating func put(_ text: String, x: Int, y: Int, width: Int, alignment: Alignment,
                             role: StyleRole = .normal, padRole: StyleRole? = nil) -> Int {
        guard width > 0 else { return 0 }
        let fitted = TextWidth.truncate(SafeText.sanitize(text), toWidth: width)
        let missing = width - TextWidth.width(of: fitted)
        let before: Int
        switch alignment {
        case .left: before = 0
        case .right: before = missing
        case .center: before = missing / 2
        }
        let padding = padRole ?? role
        let leading = put(String(repeating: " ", count: before), x: x, y: y, role: padding)
        let written = put(fitted, x: x + before, y: y, role: role, maxWidth: width - before)
        let trailing = put(String(repeating: " ", count: max(0, width - before - written)),
                           x: x + before + written, y: y, role: padding)
        return leading + written + trailing
    }

    /// Fills a rectangle (clipped to the buffer) with a character, blank by default.
    ///
    /// A wide fill character is repeated every two columns, with a space
    /// where an odd column is left over.
    public mutating func fill(_ rect: Rect, role: StyleRole = .normal, with character: Character = " ") {
        let area = rect.intersection(bounds)
        guard !area.isEmpty else { return }
        let w = TextWidth.width(of: character)
        let row: String
        if w <= 1 {
            row = String(repeating: String(w == 0 ? " " : character), count: area.width)
        } else {
            row = String(repeating: String(character), count: area.width / w)
                + String(repeating: " ", count: area.width % w)
        }
        for y in area.y..<area.maxY {
            put(row, x: area.x, y: y, role: role, maxWidth: area.width)
        }
    }

    /// Changes the role of every cell in a rectangle, keeping the text.
    ///
    /// A wide character cut by the rectangle's edge is restyled whole, since
    /// a terminal cannot draw its two halves differently.
    public mutating func restyle(_ rect: Rect, role: StyleRole) {
        let area = rect.intersection(bounds)
        guard !area.isEmpty else { return }
        for y in area.y..<area.maxY {
            var start = area.x
            if start > 0 && cells[y * width + start].isContinuation { start -= 1 }
            var end = area.maxX
            if end < width && cells[y * width + end].isContinuation { end += 1 }
            for x in start..<end { cells[y * width + x].role = role }
        }
    }

    /// Stores one cell, turning any wide character it half-covers into a blank.
    private mutating func write(_ cell: Cell, x: Int, y: Int) {
        breakWideCharacter(at: x, y: y)
        if cell.width == 2 {
            breakWideCharacter(at: x + 1, y: y)
            cells[y * width + x] = cell
            cells[y * width + x + 1] = .continuation(cell.role)
        } else {
            cells[y * width + x] = cell
        }
    }

    private mutating func breakWideCharacter(at x: Int, y: Int) {
        guard x >= 0, x < width else { return }
        let index = y * width + x
        let cell = cells[index]
        if cell.isContinuation && x > 0 {
            cells[index - 1] = .blank(cells[index - 1].role)
            cells[index] = .blank(cell.role)
        } else if cell.width == 2 && x + 1 < width {
            cells[index + 1] = .blank(cell.role)
        }
    }

    // MARK: - Reading

    /// One row as text, full width, with wide characters once.
    public func row(_ y: Int) -> String {
        guard y >= 0, y < height else { return "" }
        var text = ""
        for x in 0..<width { text += cells[y * width + x].text }
        return text
    }

    /// Every row as text with trailing spaces trimmed: the form snapshot tests compare.
    public func lines() -> [String] {
        (0..<height).map { y in
            var text = row(y)
            while text.last == " " { text.removeLast() }
            return text
        }
    }

    /// The roles of one row, one per column, for tests that check styling.
    public func roles(_ y: Int) -> [StyleRole] {
        guard y >= 0, y < height else { return [] }
        return (0..<width).map { cells[y * width + $0].role }
    }

    // MARK: - Diffing

    /// Runs of cells that differ from `previous`, grouped by row and role.
    ///
    /// With no previous frame, or one of another size (after a resize), every
    /// cell is reported so the backend repaints the whole screen. A run never
    /// starts or ends inside a wide character.
    public func changes(since previous: ScreenBuffer?) -> [CellRun] {
        var previousCells: [Cell]?
        if let previous, previous.width == width, previous.height == height { previousCells = previous.cells }
        var runs: [CellRun] = []
        for y in 0..<height {
            var current: CellRun?
            var x = 0
            while x < width {
                let index = y * width + x
                let cell = cells[index]
                let span = max(1, cell.width)
                var changed = true
                if let previousCells {
                    // Both halves count: a wide character can keep its lead cell and lose its continuation.
                    changed = (0..<min(span, width - x)).contains { cells[index + $0] != previousCells[index + $0] }
                }
                if changed {
                    if var run = current, run.role == cell.role, run.x + run.width == x {
                        run.text += cell.text
                        run.width += span
                        current = run
                    } else {
                        if let run = current { runs.append(run) }
                        current = CellRun(x: x, y: y, text: cell.text, width: span, role: cell.role)
                    }
                } else if let run = current {
                    runs.append(run)
                    current = nil
                }
                x += span
            }
            if let run = current { runs.append(run) }
        }
        return runs
    }
}
