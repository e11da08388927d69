/// A frame of box-drawing lines with an optional title set into the top border.
///
/// ```
/// ┌ Subscription 2000000412345678 ──────┐
/// │                                     │
/// ├ Timeline ───────────────────────────┤
/// └─────────────────────────────────────┘
/// ```
public struct Box: Sendable {
    public var title: String?
    public var borderRole: StyleRole
    public var titleRole: StyleRole
    /// The role the interior is cleared to, or nil to leave what is underneath.
    public var fillRole: StyleRole?

    public init(title: String? = nil, borderRole: StyleRole = .border, titleRole: StyleRole = .title, fillRole: StyleRole? = .normal) {
        self.title = title
        self.borderRole = borderRole
        self.titleRole = titleRole
        self.fillRole = fillRole
    }

    /// Draws the frame and returns the area inside it.
    ///
    /// An area smaller than 2×2 has no room for a frame; nothing is drawn and
    /// the interior is empty.
    @discardableResult
    public func render(in area: Rect, buffer: inout ScreenBuffer) -> Rect {
        guard area.width >= 2, area.height >= 2 else { return Rect(x: area.x, y: area.y, width: 0, height: 0) }
        let inner = area.inset(by: 1)
        if let fillRole { buffer.fill(inner, role: fillRole) }

        let horizontal = String(repeating: "─", count: area.width - 2)
        buffer.put("┌" + horizontal + "┐", x: area.x, y: area.y, role: borderRole)
        buffer.put("└" + horizontal + "┘", x: area.x, y: area.maxY - 1, role: borderRole)
        for y in inner.y..<inner.maxY {
            buffer.put("│", x: area.x, y: y, role: borderRole)
            buffer.put("│", x: area.maxX - 1, y: y, role: borderRole)
        }
        if let title {
            Box.drawTitle(title, x: area.x + 1, y: area.y, width: area.width - 2, buffer: &buffer,
                          borderRole: borderRole, titleRole: titleRole)
        }
        return inner
    }

    /// Draws a `├ Title ───┤` line across a framed area, splitting it into sections.
    ///
    /// `area` is the outer rectangle the frame was drawn in; `y` the row to divide at.
    public static func divider(title: String? = nil, y: Int, in area: Rect, buffer: inout ScreenBuffer,
                               borderRole: StyleRole = .border, titleRole: StyleRole = .title) {
        guard area.width >= 2 else { return }
        buffer.put("├" + String(repeating: "─", count: area.width - 2) + "┤", x: area.x, y: y, role: borderRole)
        if let title {
            drawTitle(title, x: area.x + 1, y: y, width: area.width - 2, buffer: &buffer,
                      borderRole: borderRole, titleRole: titleRole)
        }
    }

    /// Writes ` title ` over a border line, leaving at least the corners intact.
    private static func drawTitle(_ title: String, x: Int, y: Int, width: Int, buffer: inout ScreenBuffer,
                                  borderRole: StyleRole, titleRole: StyleRole) {
        // One space either side of the title keeps it from touching the line.
        let room = width - 2
        let text = TextWidth.truncate(SafeText.sanitize(title), toWidth: room)
        guard room > 0, !text.isEmpty else { return }
        buffer.put(" ", x: x, y: y, role: borderRole)
        let written = buffer.put(text, x: x + 1, y: y, role: titleRole, maxWidth: room)
        buffer.put(" ", x: x + 1 + written, y: y, role: borderRole)
    }
}
