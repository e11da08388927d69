/// A one-line message after an action: "revalidated: no change", or what went wrong.
public struct FlashMessage: Sendable, Hashable {
    public enum Kind: Sendable, Hashable {
        case info
        case error
    }

    public var text: String
    public var kind: Kind
    /// The same meaning in fewer words, longest first, for a line too narrow for `text`.
    public var shorter: [String] = []

    public init(_ text: String, kind: Kind = .info, shorter: [String] = []) {
        self.text = text
        self.kind = kind
        self.shorter = shorter
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
