/// The `:` command line or `/` filter being typed.
public struct PromptState: Equatable, Sendable {
    public enum Kind: Equatable, Sendable {
        case command
        case filter
        /// Why a consent withdrawal is handled (what was done for the family), for `h` on `:consent`.
        case consentReason(notificationUUID: String)
        /// The product and locale an APPROVED message becomes the default of, for `m` on `:retention`.
        case retentionDefault(messageId: String)
        /// The sandbox purchase Apple's performance test uses, for `t` on `:retention`.
        case retentionPerformanceTest
    }

    public var kind: Kind
    public var text: String
    /// In characters: 0 before the first, `text.count` at the end.
    public var cursor: Int
    public var completions: [String] = []
    /// A filter's text when the prompt opened: Esc puts it back, as typing applies each change.
    public var original: String
    /// The completion Tab last put in the text, when cycling through several.
    public var selectedCompletion: Int?

    public init(kind: Kind, text: String = "") {
        self.kind = kind
        self.text = text
        self.cursor = text.count
        self.original = text
    }

    /// `/`: a new filter, typed from the start, replacing `current` as it is typed; Esc puts
    /// `current` back.
    public static func filter(replacing current: String) -> PromptState {
        var prompt = PromptState(kind: .filter)
        prompt.original = current
        return prompt
    }

    /// What the line starts with: `:`, `/`, or the question a reason answers.
    public var symbol: String {
        switch kind {
        case .command: return ":"
        case .filter: return "/"
        case .consentReason: return "reason (what was done for the family): "
        case .retentionDefault: return "default of PRODUCT LOCALE: "
        case .retentionPerformanceTest: return "sandbox original transaction id: "
        }
    }

    mutating func insert(_ character: Character) {
        var characters = Array(text)
        characters.insert(character, at: min(max(0, cursor), characters.count))
        text = String(characters)
        cursor += 1
    }

    /// Deletes the character before the cursor; false when there was none.
    mutating func deleteBackward() -> Bool {
        guard cursor > 0 else { return false }
        var characters = Array(text)
        characters.remove(at: cursor - 1)
        text = String(characters)
        cursor -= 1
        return true
    }

    mutating func deleteForward() {
        var characters = Array(text)
        guard cursor < characters.count else { return }
        characters.remove(at: cursor)
        text = String(characters)
    }

    mutating func setText(_ newText: String) {
        text = newText
        cursor = newText.count
    }
}
