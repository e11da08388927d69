/// One row of the help screen: the keys, what they do, and the section they belong to.
public struct HelpEntry: Sendable, Hashable {
    public var keys: String
    public var description: String
    public var section: String

    public init(keys: String, description: String, section: String) {
        self.keys = keys
        self.description = description
        self.section = section
    }
}

/// The `?` help screen: key bindings grouped by section, flowed into columns.
///
/// Generated from the same key table as the hint bar, so the two never
/// disagree. Sections appear in the order they are first mentioned; a
/// section moves to the next column rather than splitting, unless it is
/// taller than a whole column.
public struct HelpView: Sendable {
    public var entries: [HelpEntry]
    /// Columns between help columns.
    public var columnGap: Int

    public init(entries: [HelpEntry], columnGap: Int = 4) {
        self.entries = entries
        self.columnGap = columnGap
    }

    public init(_ entries: [(keys: String, description: String, section: String)], columnGap: Int = 4) {
        self.init(entries: entries.map { HelpEntry(keys: $0.keys, description: $0.description, section: $0.section) },
                  columnGap: columnGap)
    }

    private enum Line {
        case section(String)
        case entry(HelpEntry)
        case blank
    }

    public func render(in area: Rect, buffer: inout ScreenBuffer) {
        guard !area.isEmpty else { return }
        buffer.fill(area)

        var sections: [(name: String, entries: [HelpEntry])] = []
        for entry in entries {
            if let index = sections.firstIndex(where: { $0.name == entry.section }) {
                sections[index].entries.append(entry)
            } else {
                sections.append((entry.section, [entry]))
            }
        }

        let keysWidth = entries.map { TextWidth.width(of: SafeText.sanitize($0.keys)) }.max() ?? 0
        let descriptionWidth = entries.map { TextWidth.width(of: SafeText.sanitize($0.description)) }.max() ?? 0
        let sectionWidth = sections.map { TextWidth.width(of: SafeText.sanitize($0.name)) }.max() ?? 0
        let columnWidth = min(area.width, max(keysWidth + 2 + descriptionWidth, sectionWidth))
        let columnCount = max(1, (area.width + columnGap) / (columnWidth + columnGap))

        // Lay sections out column by column.
        var columns: [[Line]] = [[]]
        for section in sections {
            let block = [Line.section(section.name)] + section.entries.map { Line.entry($0) }
            var current = columns[columns.count - 1]
            let separator = current.isEmpty ? 0 : 1
            if !current.isEmpty && current.count + separator + block.count > area.height && block.count <= area.height {
                columns.append([])
                current = []
            } else if !current.isEmpty {
                current.append(.blank)
            }
            for line in block {
                if current.count == area.height {
                    columns[columns.count - 1] = current
                    columns.append([])
                    current = []
                }
                current.append(line)
            }
            columns[columns.count - 1] = current
        }

        for (columnIndex, lines) in columns.prefix(columnCount).enumerated() {
            let x = area.x + columnIndex * (columnWidth + columnGap)
            let width = min(columnWidth, area.maxX - x)
            for (row, line) in lines.enumerated() {
                let y = area.y + row
                switch line {
                case .section(let name):
                    buffer.put(name, x: x, y: y, width: width, alignment: .left, role: .header, padRole: .normal)
                case .entry(let entry):
                    buffer.put(entry.keys, x: x, y: y, width: min(keysWidth, width), alignment: .left,
                               role: .hintKey, padRole: .normal)
                    let descriptionX = x + keysWidth + 2
                    if descriptionX < x + width {
                        buffer.put(entry.description, x: descriptionX, y: y, width: x + width - descriptionX,
                                   alignment: .left, role: .hintText, padRole: .normal)
                    }
                case .blank:
                    break
                }
            }
        }
    }
}
