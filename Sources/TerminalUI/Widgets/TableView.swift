/// One column of a `TableView`: its header, width and alignment.
public struct TableColumn: Sendable, Hashable {
    public var title: String
    public var width: Length
    public var alignment: Alignment

    public init(_ title: String, width: Length = .flex(1), alignment: Alignment = .left) {
        self.title = title
        self.width = width
        self.alignment = alignment
    }
}

/// One cell of a `TableView`: text, and optionally its own role (a status badge).
public struct TableCell: Sendable, Hashable, ExpressibleByStringLiteral {
    public var text: String
    /// Overrides the row's role, except on the selected row.
    public var role: StyleRole?

    public init(_ text: String, role: StyleRole? = nil) {
        self.text = text
        self.role = role
    }

    public init(stringLiteral value: String) {
        self.init(value)
    }
}

/// A scrolling table with a header row and one selected row.
///
/// The table is rebuilt every frame from app state, so the scroll offset
/// lives with the caller: `render` returns the offset it used (adjusted to
/// keep the selection visible) for the caller to store.
public struct TableView: Sendable {
    public var columns: [TableColumn]
    public var rows: [[TableCell]]
    public var selectedRow: Int?
    /// Index of the first row shown.
    public var scrollOffset: Int
    public var showsHeader: Bool
    /// Columns of space between adjacent columns.
    public var columnSpacing: Int
    /// Shown in place of rows when there are none.
    public var emptyText: String
    public var rowRole: StyleRole

    public init(columns: [TableColumn], rows: [[TableCell]], selectedRow: Int? = nil, scrollOffset: Int = 0,
                showsHeader: Bool = true, columnSpacing: Int = 2, emptyText: String = "no rows", rowRole: StyleRole = .normal) {
        self.columns = columns
        self.rows = rows
        self.selectedRow = selectedRow
        self.scrollOffset = scrollOffset
        self.showsHeader = showsHeader
        self.columnSpacing = columnSpacing
        self.emptyText = emptyText
        self.rowRole = rowRole
    }

    /// How many data rows fit in `area` below the header.
    public func visibleRowCount(in area: Rect) -> Int {
        max(0, area.height - (showsHeader ? 1 : 0))
    }

    /// The first row to show so that `selected` is on screen, moving as little as possible.
    public static func scrollOffset(current: Int, selected: Int?, visibleRows: Int, rowCount: Int) -> Int {
        guard visibleRows > 0, rowCount > 0 else { return 0 }
        var offset = current
        if let selected {
            let row = min(max(0, selected), rowCount - 1)
            if row < offset { offset = row }
            if row >= offset + visibleRows { offset = row - visibleRows + 1 }
        }
        // Never leave blank rows at the bottom while rows above are hidden.
        return min(max(0, offset), max(0, rowCount - visibleRows))
    }

    /// Draws the table and returns the scroll offset used.
    @discardableResult
    public func render(in area: Rect, buffer: inout ScreenBuffer) -> Int {
        guard !area.isEmpty else { return scrollOffset }
        buffer.fill(area, role: rowRole)
        let slots = area.columns(columns.map(\.width), spacing: columnSpacing)
        var y = area.y

        if showsHeader {
            buffer.fill(Rect(x: area.x, y: y, width: area.width, height: 1), role: .header)
            for (column, slot) in zip(columns, slots) where slot.width > 0 {
                buffer.put(column.title, x: slot.x, y: y, width: slot.width, alignment: column.alignment, role: .header)
            }
            y += 1
        }

        let visible = visibleRowCount(in: area)
        guard !rows.isEmpty else {
            if visible > 0 {
                buffer.put(emptyText, x: area.x, y: y, width: area.width, alignment: .center, role: .dim)
            }
            return 0
        }

        let selected = selectedRow.map { min(max(0, $0), rows.count - 1) }
        let offset = TableView.scrollOffset(current: scrollOffset, selected: selected, visibleRows: visible, rowCount: rows.count)
        for index in offset..<min(rows.count, offset + visible) {
            let isSelected = index == selected
            if isSelected {
                buffer.fill(Rect(x: area.x, y: y, width: area.width, height: 1), role: .selection)
            }
            for (cell, (column, slot)) in zip(rows[index], zip(columns, slots)) where slot.width > 0 {
                let base: StyleRole = isSelected ? .selection : rowRole
                buffer.put(cell.text, x: slot.x, y: y, width: slot.width, alignment: column.alignment,
                           role: isSelected ? .selection : (cell.role ?? rowRole), padRole: base)
            }
            y += 1
        }
        return offset
    }
}
