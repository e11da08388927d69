/// One terminal column: a grapheme and the role it is drawn in.
///
/// A wide character occupies two cells: the first holds the grapheme with
/// `width` 2, the second is its continuation, with empty `text` and `width`
/// 0, so that column arithmetic stays one cell per column.
public struct Cell: Hashable, Sendable {
    public var text: String
    public var width: Int
    public var role: StyleRole

    public init(text: String, width: Int, role: StyleRole) {
        self.text = text
        self.width = width
        self.role = role
    }

    /// An empty column in the given role.
    public static func blank(_ role: StyleRole = .normal) -> Cell {
        Cell(text: " ", width: 1, role: role)
    }

    /// The right-hand column of a wide character.
    public static func continuation(_ role: StyleRole) -> Cell {
        Cell(text: "", width: 0, role: role)
    }

    public var isContinuation: Bool { width == 0 }
}

/// A stretch of changed cells on one row that share a role: one paint call for the backend.
public struct CellRun: Hashable, Sendable, CustomStringConvertible {
    /// The first column of the run.
    public var x: Int
    public var y: Int
    /// The text to draw, whose display width is `width`.
    public var text: String
    /// Columns covered, counting both halves of wide characters.
    public var width: Int
    public var role: StyleRole

    public init(x: Int, y: Int, text: String, width: Int, role: StyleRole) {
        self.x = x
        self.y = y
        self.text = text
        self.width = width
        self.role = role
    }

    public var description: String { "(\(x),\(y)) \(role.rawValue) \"\(text)\"" }
}
