/// A labelled input in a `Dialog`.
public struct DialogField: Sendable, Hashable {
    public var label: String
    public var value: String
    /// Shown dimmed while the value is empty, such as "required".
    public var placeholder: String

    public init(label: String, value: String = "", placeholder: String = "") {
        self.label = label
        self.value = value
        self.placeholder = placeholder
    }
}

/// A modal box centred over the screen: title, wrapped body text, input fields and buttons.
///
/// ```
/// ┌ Override subscription ─────────────────┐
/// │ Grant entitlement until a date. The    │
/// │ action is audited.                     │
/// │                                        │
/// │ Until   2026-12-31                     │
/// │ Reason  support ticket 4411            │
/// │                                        │
/// │          [ Override ]  [ Cancel ]      │
/// └────────────────────────────────────────┘
/// ```
public struct Dialog: Sendable {
    /// What keyboard input goes to.
    public enum Focus: Sendable, Hashable {
        case none
        case field(Int)
        case button(Int)
    }

    public var title: String
    public var body: [String]
    public var fields: [DialogField]
    public var buttons: [String]
    public var focus: Focus
    /// A line between the fields and the buttons that answers what the operator did:
    /// a validation error, or a question to confirm.
    public var note: String?
    public var noteRole: StyleRole
    /// Widest the text inside the frame may be; narrower screens shrink it further.
    public var maximumWidth: Int
    /// Narrowest an input field's value area is allowed to make the dialog.
    public var minimumFieldWidth: Int

    public init(title: String, body: [String] = [], fields: [DialogField] = [], buttons: [String] = ["OK"],
                focus: Focus = .none, note: String? = nil, noteRole: StyleRole = .error,
                maximumWidth: Int = 64, minimumFieldWidth: Int = 24) {
        self.title = title
        self.body = body
        self.fields = fields
        self.buttons = buttons
        self.focus = focus
        self.note = note
        self.noteRole = noteRole
        self.maximumWidth = maximumWidth
        self.minimumFieldWidth = minimumFieldWidth
    }

    /// Draws the dialog centred in `area` and returns its frame.
    ///
    /// When the screen is too short, body lines give way first (the last one
    /// shown ends in "…"), since the fields, the note and the buttons are what
    /// the operator must reach.
    @discardableResult
    public func render(in area: Rect, buffer: inout ScreenBuffer) -> Rect {
        let labels = fields.map { SafeText.sanitize($0.label) }
        let labelWidth = labels.map { TextWidth.width(of: $0) }.max() ?? 0
        let buttonTexts = buttons.map { "[ " + SafeText.sanitize($0) + " ]" }
        let buttonRowWidth = buttonTexts.map { TextWidth.width(of: $0) }.reduce(0, +) + 2 * max(0, buttonTexts.count - 1)

        var natural = TextWidth.width(of: SafeText.sanitize(title)) + 4
        natural = max(natural, body.map { TextWidth.width(of: SafeText.sanitize($0)) }.max() ?? 0)
        if !fields.isEmpty {
            let longestValue = fields.map { TextWidth.width(of: SafeText.sanitize($0.value)) }.max() ?? 0
            natural = max(natural, labelWidth + 2 + max(minimumFieldWidth, longestValue + 1))
        }
        natural = max(natural, buttonRowWidth)
        natural = max(natural, note.map { TextWidth.width(of: SafeText.sanitize($0)) } ?? 0)
        // Frame plus one column of padding either side.
        let innerWidth = max(1, min(natural, maximumWidth, area.width - 4))

        var bodyLines = body.flatMap { TextWidth.wrap(SafeText.sanitize($0), toWidth: innerWidth) }
        let noteLines = note.map { TextWidth.wrap(SafeText.sanitize($0), toWidth: innerWidth) } ?? []
        let buttonRows = buttons.isEmpty ? 0 : 2
        // A blank row separates the body from the fields, and the fields from the note.
        let noteGap = fields.isEmpty && body.isEmpty ? 0 : 1
        let noteRows = noteLines.isEmpty ? 0 : noteLines.count + noteGap
        let roomForBody = max(0, area.height - 2 - buttonRows - noteRows - (fields.isEmpty ? 0 : fields.count + 1))
        if bodyLines.count > roomForBody {
            bodyLines = Array(bodyLines.prefix(roomForBody))
            if let last = bodyLines.indices.last {
                bodyLines[last] = TextWidth.truncate(bodyLines[last] + " …", toWidth: innerWidth)
            }
        }

        let fieldRows = fields.isEmpty ? 0 : fields.count + (bodyLines.isEmpty ? 0 : 1)
        let frame = area.centered(width: innerWidth + 4, height: 2 + bodyLines.count + fieldRows + noteRows + buttonRows)
        let inner = Box(title: title, borderRole: .dialogBorder, titleRole: .dialogBorder, fillRole: .dialog)
            .render(in: frame, buffer: &buffer)
        let content = inner.inset(horizontal: 1, vertical: 0)
        guard !content.isEmpty else { return frame }

        var y = content.y
        for line in bodyLines where y < content.maxY {
            buffer.put(line, x: content.x, y: y, role: .dialog, maxWidth: content.width)
            y += 1
        }
        if !fields.isEmpty && !bodyLines.isEmpty { y += 1 }

        let valueX = content.x + labelWidth + 2
        let valueWidth = max(0, content.maxX - valueX)
        for (index, field) in fields.enumerated() where y < content.maxY {
            buffer.put(labels[index], x: content.x, y: y, role: .dialog, maxWidth: content.width)
            let focused = focus == .field(index)
            let role: StyleRole = focused ? .selection : .input
            let value = SafeText.sanitize(field.value)
            if valueWidth > 0 {
                buffer.fill(Rect(x: valueX, y: y, width: valueWidth, height: 1), role: role)
                if value.isEmpty && !field.placeholder.isEmpty && !focused {
                    buffer.put(field.placeholder, x: valueX, y: y, role: .dim, maxWidth: valueWidth)
                } else {
                    // The end of the value is what is being typed, so that is what stays in view.
                    let visible = TextWidth.suffix(value, maxWidth: max(0, valueWidth - 1)).text
                    buffer.put(visible, x: valueX, y: y, role: role, maxWidth: valueWidth)
                }
            }
            y += 1
        }

        if !noteLines.isEmpty {
            y += noteGap
            for line in noteLines where y < content.maxY {
                buffer.put(line, x: content.x, y: y, role: noteRole, maxWidth: content.width)
                y += 1
            }
        }

        if !buttons.isEmpty {
            let buttonY = content.maxY - 1
            var x = content.x + max(0, (content.width - buttonRowWidth) / 2)
            for (index, text) in buttonTexts.enumerated() {
                let role: StyleRole = focus == .button(index) ? .selection : .dialog
                x += buffer.put(text, x: x, y: buttonY, role: role, maxWidth: content.maxX - x) + 2
                if x >= content.maxX { break }
            }
        }
        return frame
    }
}
