/// A fact shown at the right of the status line, such as `UTC` or `● live`.
public struct StatusItem: Sendable, Hashable {
    public var text: String
    public var role: StyleRole
    /// Where room runs out, the items of lowest `keep` go first: shortened to `short` when
    /// they have a short form, else left out. Equal ones go from the left.
    public var keep: Int
    public var short: String?

    public init(_ text: String, role: StyleRole = .dim, keep: Int = 0, short: String? = nil) {
        self.text = text
        self.role = role
        self.keep = keep
        self.short = short
    }
}

/// The top line of every screen: where you are on the left, status facts on the right.
///
/// ```
/// subdesk ▸ subscribers ▸ 2000000412345678        store: prod.db  UTC  ● live
/// ```
///
/// When space runs out the breadcrumb loses whole segments from its
/// beginning, since the deepest segment says what is on screen; then the
/// status facts on the right are shortened or left out, lowest `keep` first.
public struct StatusLine: Sendable {
    public var path: [String]
    public var items: [StatusItem]
    public var separator: String

    public init(path: [String], items: [StatusItem] = [], separator: String = " ▸ ") {
        self.path = path
        self.items = items
        self.separator = separator
    }

    /// Columns the breadcrumb keeps before status items give way.
    public static let pathRoom = 21

    public func render(in area: Rect, buffer: inout ScreenBuffer) {
        guard !area.isEmpty else { return }
        let y = area.y
        buffer.fill(Rect(x: area.x, y: y, width: area.width, height: 1))

        let shown = fitting(area.width)
        let texts = shown.map { SafeText.sanitize($0.text) }
        let itemsWidth = texts.map { TextWidth.width(of: $0) }.reduce(0, +) + 2 * max(0, texts.count - 1)
        var itemsX = area.maxX
        if !shown.isEmpty && itemsWidth <= area.width {
            itemsX = area.maxX - itemsWidth
            var x = itemsX
            for (text, item) in zip(texts, shown) {
                x += buffer.put(text, x: x, y: y, role: item.role) + 2
            }
        }

        let room = max(0, itemsX - area.x - (itemsX < area.maxX ? 2 : 0))
        buffer.put(breadcrumb(fitting: room), x: area.x, y: y, role: .breadcrumb, maxWidth: room)
    }

    /// The items that fit in `width` beside the breadcrumb's last segment, and at least
    /// `pathRoom` columns of it (a top-level path such as `subdesk ▸ subscribers` stays whole):
    /// the lowest `keep` shortened or left out first.
    public func fitting(_ width: Int) -> [StatusItem] {
        let segments = path.map(SafeText.sanitize)
        let whole = TextWidth.width(of: segments.joined(separator: separator))
        let last = TextWidth.width(of: segments.last ?? "") + (segments.count > 1 ? TextWidth.width(of: "…" + separator) : 0)
        let pathRoom = min(whole, max(StatusLine.pathRoom, last))
        var items = self.items
        func total() -> Int {
            items.map { TextWidth.width(of: SafeText.sanitize($0.text)) }.reduce(0, +) + 2 * max(0, items.count - 1)
                + (items.isEmpty ? 0 : 2) + pathRoom
        }
        while !items.isEmpty && total() > width {
            let lowest = items.map(\.keep).min()!
            let index = items.firstIndex { $0.keep == lowest }!
            if let short = items[index].short {
                items[index].text = short
                items[index].short = nil
            } else {
                items.remove(at: index)
            }
        }
        return items
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
