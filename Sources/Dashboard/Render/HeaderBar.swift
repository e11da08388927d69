import TerminalUI

/// The top line: where you are on the left, facts about the session on the right.
///
/// ```
///  subdesk ▸ subscribers ▸ 2000000412345678          store: prod.db  UTC  ● live
/// ```
/// When space is short the breadcrumb loses its first segments, since the
/// last one says what is on screen.
struct HeaderBar {
    var path: [String]
    var items: [(text: String, role: StyleRole)]

    func render(in area: Rect, buffer: inout ScreenBuffer) {
        guard !area.isEmpty else { return }
        buffer.fill(Rect(x: area.x, y: area.y, width: area.width, height: 1))
        let texts = items.map { SafeText.sanitize($0.text) }
        let itemsWidth = texts.map { TextWidth.width(of: $0) }.reduce(0, +) + 2 * max(0, texts.count - 1)
        var right = area.maxX
        if itemsWidth + 1 <= area.width {
            right = area.maxX - itemsWidth - 1
            var x = right
            for (text, item) in zip(texts, items) {
                x += buffer.put(text, x: x, y: area.y, role: item.role) + 2
            }
        }
        let room = max(0, right - area.x - 3)
        buffer.put(" " + breadcrumb(fitting: room), x: area.x, y: area.y, role: .breadcrumb, maxWidth: room + 1)
    }

    private func breadcrumb(fitting room: Int) -> String {
        let segments = path.map(SafeText.sanitize)
        for kept in stride(from: segments.count, through: 1, by: -1) {
            let tail = segments.suffix(kept).joined(separator: " ▸ ")
            let text = kept == segments.count ? tail : "… ▸ " + tail
            if TextWidth.width(of: text) <= room { return text }
        }
        return TextWidth.truncate(segments.last ?? "", toWidth: room)
    }
}
