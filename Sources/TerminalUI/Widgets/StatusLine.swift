/// A fact shown at the right of the status line, such as `UTC` or `● live`.
public struct StatusItem: Sendable, Hashable {
    public var text: String
    public var role: StyleRole

    public init(_ text: String, role: StyleRole = .dim) {
        self.text = text
        self.role = role
    }
}

/// The top line of every screen: where you are on the left, status facts on the right.
///
/// ```
/// subdesk ▸ subscribers ▸ 2000000412345678        store: prod.db  UTC  ● live
/// ```
///
/// When space runs out the breadcrumb loses whole segments from its
/// beginning, since the deepest segment says what is on screen; the status
/// facts on the right are kept whole as long as they fit at all.
public struct StatusLine: Sendable {
    public var path: [String]
    public var items: [StatusItem]
    public var separator: String

    public init(path: [String], items: [StatusItem] = [], separator: String = " ▸ ") {
        self.path = path
        self.items = items
        self.separator = separator
    }

    public func render(in area: Rect, buffer: inout ScreenBuffer) {
        guard !area.isEmpty else { return }
        let y = area.y
        buffer.fill(Rect(x: area.x, y: y, width: area.width, height: 1))

        let texts = items.map { SafeText.sanitize($0.text) }
        let itemsWidth = texts.map { TextWidth.width(of: $0) }.reduce(0, +) + 2 * max(0, texts.count - 1)
        var itemsX = area.maxX
        if itemsWidth <= area.width {
            itemsX = area.maxX - itemsWidth
            var x = itemsX
            for (text, item) in zip(texts, items) {
                x += buffer.put(text, x: x, y: y, role: item.role) + 2
            }
        }

        let room = max(0, itemsX - area.x - (itemsX < area.maxX ? 2 : 0))
        buffer.put(breadcrumb(fitting: room), x: area.x, y: y, role: .breadcrumb, maxWidth: room)
    }

    /// The most trailing whole segments that fit, after "… ▸ " when any were dropped.
    private func breadcrumb(fitting room: Int) -> String {
        let segments = path.map(SafeText.sanitize)
        for kept in stride(from: segments.count, through: 1, by: -1) {
            let tail = segments.suffix(kept).joined(separator: separator)
            let text = kept == segments.count ? tail : "…" + separator + tail
            if TextWidth.width(of: text) <= room { return text }
        }
        return TextWidth.truncate(segments.last ?? "", toWidth: room)
    }
}
