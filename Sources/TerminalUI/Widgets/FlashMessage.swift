/// A one-line message after an action: "revalidated: no change", or what went wrong.
public struct FlashMessage: Sendable, Hashable {
    public enum Kind: Sendable, Hashable {
        case info
        case error
    }

    public var text: String
    public var kind: Kind

    public init(_ text: String, kind: Kind = .info) {
        self.text = text
        self.kind = kind
    }

    public static func info(_ text: String) -> FlashMessage { FlashMessage(text, kind: .info) }
    public static func error(_ text: String) -> FlashMessage { FlashMessage(text, kind: .error) }

    public var role: StyleRole { kind == .error ? .flashError : .flashInfo }

    /// Draws the message across the first row of `area`, the whole row in the message's role.
    public func render(in area: Rect, buffer: inout ScreenBuffer) {
        guard !area.isEmpty else { return }
        buffer.put(text, x: area.x, y: area.y, width: area.width, alignment: .left, role: role)
    }
}
