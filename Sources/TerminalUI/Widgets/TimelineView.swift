/// One dated line of a `TimelineView`, with the extra lines shown when it is expanded.
public struct TimelineEntry: Sendable, Hashable {
    public var date: String
    public var kind: String
    public var detail: String
    /// The role of the kind and detail text; the date is always dim.
    public var role: StyleRole
    /// Shown indented under the entry when expanded, such as a decoded payload.
    public var extraLines: [String]

    public init(date: String, kind: String, detail: String, role: StyleRole = .normal, extraLines: [String] = []) {
        self.date = date
        self.kind = kind
        self.detail = detail
        self.role = role
        self.extraLines = extraLines
    }
}

/// A scrolling list of dated events, any of which can be expanded to show its payload.
///
/// ```
/// 2026-09-16 09:14  SUBSCRIBED/INITIAL_BUY    free trial, 7d
/// 2026-09-23 09:14  DID_RENEW                 app.monthly  9.99 USD
///                     "notificationType": "DID_RENEW",
/// ```
///
/// Like `TableView`, the scroll offset (in screen lines, counting expanded
/// lines) belongs to the caller, and `render` returns the one it used.
public struct TimelineView: Sendable {
    public var entries: [TimelineEntry]
    public var selectedEntry: Int?
    public var expandedEntries: Set<Int>
    /// Index of the first screen line shown.
    public var scrollOffset: Int
    /// Width of the kind column; nil sizes it to the widest kind, up to half the width after the date.
    public var kindWidth: Int?
    public var columnSpacing: Int
    /// How far expanded lines sit to the right of the kind column.
    public var indent: Int
    public var emptyText: String

    public init(entries: [TimelineEntry], selectedEntry: Int? = nil, expandedEntries: Set<Int> = [], scrollOffset: Int = 0,
                kindWidth: Int? = nil, columnSpacing: Int = 2, indent: Int = 2, emptyText: String = "no events") {
        self.entries = entries
        self.selectedEntry = selectedEntry
        self.expandedEntries = expandedEntries
        self.scrollOffset = scrollOffset
        self.kindWidth = kindWidth
        self.columnSpacing = columnSpacing
        self.indent = indent
        self.emptyText = emptyText
    }

    private enum Line {
        case entry(Int)
        case extra(entry: Int, line: Int)
    }

    private var lines: [Line] {
        var result: [Line] = []
        for (index, entry) in entries.enumerated() {
            result.append(.entry(index))
            if expandedEntries.contains(index) {
                result += entry.extraLines.indices.map { .extra(entry: index, line: $0) }
            }
        }
        return result
    }

    /// Draws the timeline and returns the scroll offset used.
    @discardableResult
    public func render(in area: Rect, buffer: inout ScreenBuffer) -> Int {
        guard !area.isEmpty else { return scrollOffset }
        buffer.fill(area)
        guard !entries.isEmpty else {
            buffer.put(emptyText, x: area.x, y: area.y, width: area.width, alignment: .center, role: .dim)
            return 0
        }

        let lines = self.lines
        let selected = selectedEntry.map { min(max(0, $0), entries.count - 1) }
        let offset = scrollOffset(for: lines, selected: selected, visible: area.height)

        let dateWidth = min(area.width, entries.map { TextWidth.width(of: SafeText.sanitize($0.date)) }.max() ?? 0)
        let widestKind = entries.map { TextWidth.width(of: SafeText.sanitize($0.kind)) }.max() ?? 0
        let kindWidth = self.kindWidth ?? min(widestKind, max(0, area.width - dateWidth) / 2)
        let slots = area.columns([.fixed(dateWidth), .fixed(kindWidth), .flex(1)], spacing: columnSpacing)

        for (row, line) in lines[offset..<min(lines.count, offset + area.height)].enumerated() {
            let y = area.y + row
            switch line {
            case .entry(let index):
                let entry = entries[index]
                let isSelected = index == selected
                if isSelected { buffer.fill(Rect(x: area.x, y: y, width: area.width, height: 1), role: .selection) }
                let pad: StyleRole = isSelected ? .selection : .normal
                buffer.put(entry.date, x: slots[0].x, y: y, width: slots[0].width, alignment: .left,
                           role: isSelected ? .selection : .dim, padRole: pad)
                buffer.put(entry.kind, x: slots[1].x, y: y, width: slots[1].width, alignment: .left,
                           role: isSelected ? .selection : entry.role, padRole: pad)
                buffer.put(entry.detail, x: slots[2].x, y: y, width: slots[2].width, alignment: .left,
                           role: isSelected ? .selection : entry.role, padRole: pad)
            case .extra(let index, let number):
                let x = slots[1].x + indent
                buffer.put(TextWidth.truncate(SafeText.sanitize(entries[index].extraLines[number]), toWidth: area.maxX - x),
                           x: x, y: y, role: .normal, maxWidth: area.maxX - x)
            }
        }
        return offset
    }

    /// Keeps the selected entry's own line on screen, and as much of its expansion as fits.
    private func scrollOffset(for lines: [Line], selected: Int?, visible: Int) -> Int {
        var offset = scrollOffset
        if let selected, let first = lines.firstIndex(where: { if case .entry(selected) = $0 { return true } else { return false } }) {
            var last = first
            while last + 1 < lines.count, case .extra(selected, _) = lines[last + 1] { last += 1 }
            if last >= offset + visible { offset = last - visible + 1 }
            if first < offset { offset = first }
        }
        return min(max(0, offset), max(0, lines.count - visible))
    }
}
