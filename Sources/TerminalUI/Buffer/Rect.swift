/// A rectangle of cells on the screen, in columns and rows from the top left.
public struct Rect: Hashable, Sendable, CustomStringConvertible {
    public var x: Int
    public var y: Int
    public var width: Int
    public var height: Int

    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x
        self.y = y
        // A negative size is always the result of subtracting borders from too
        // small an area; treating it as empty spares every caller a check.
        self.width = max(0, width)
        self.height = max(0, height)
    }

    public static let zero = Rect(x: 0, y: 0, width: 0, height: 0)

    /// The first column past the right edge.
    public var maxX: Int { x + width }
    /// The first row past the bottom edge.
    public var maxY: Int { y + height }
    public var isEmpty: Bool { width == 0 || height == 0 }
    public var description: String { "Rect(x: \(x), y: \(y), width: \(width), height: \(height))" }

    public func contains(x column: Int, y row: Int) -> Bool {
        column >= x && column < maxX && row >= y && row < maxY
    }

    /// The rectangle shrunk by the same margin on every side.
    public func inset(by margin: Int) -> Rect {
        inset(top: margin, left: margin, bottom: margin, right: margin)
    }

    /// The rectangle shrunk by `horizontal` columns left and right and `vertical` rows top and bottom.
    public func inset(horizontal: Int, vertical: Int) -> Rect {
        inset(top: vertical, left: horizontal, bottom: vertical, right: horizontal)
    }

    public func inset(top: Int = 0, left: Int = 0, bottom: Int = 0, right: Int = 0) -> Rect {
        Rect(x: x + left, y: y + top, width: width - left - right, height: height - top - bottom)
    }

    /// The overlap of two rectangles, empty when they do not meet.
    public func intersection(_ other: Rect) -> Rect {
        let left = max(x, other.x)
        let top = max(y, other.y)
        let right = min(maxX, other.maxX)
        let bottom = min(maxY, other.maxY)
        guard right > left, bottom > top else { return Rect(x: left, y: top, width: 0, height: 0) }
        return Rect(x: left, y: top, width: right - left, height: bottom - top)
    }

    /// A rectangle of the given size centred in this one, clipped to it.
    public func centered(width: Int, height: Int) -> Rect {
        let w = min(width, self.width)
        let h = min(height, self.height)
        return Rect(x: x + (self.width - w) / 2, y: y + (self.height - h) / 2, width: w, height: h)
    }

    /// The top `count` rows and what is left below them.
    public func splitTop(_ count: Int) -> (top: Rect, rest: Rect) {
        let n = min(max(0, count), height)
        return (Rect(x: x, y: y, width: width, height: n),
                Rect(x: x, y: y + n, width: width, height: height - n))
    }

    /// The bottom `count` rows and what is left above them.
    public func splitBottom(_ count: Int) -> (rest: Rect, bottom: Rect) {
        let n = min(max(0, count), height)
        return (Rect(x: x, y: y, width: width, height: height - n),
                Rect(x: x, y: maxY - n, width: width, height: n))
    }

    /// Stacks rows of the given lengths top to bottom, `spacing` rows apart.
    public func rows(_ lengths: [Length], spacing: Int = 0) -> [Rect] {
        Length.resolve(lengths, in: height, spacing: spacing).map {
            Rect(x: x, y: y + $0.offset, width: width, height: $0.size)
        }
    }

    /// Places columns of the given lengths left to right, `spacing` columns apart.
    public func columns(_ lengths: [Length], spacing: Int = 0) -> [Rect] {
        Length.resolve(lengths, in: width, spacing: spacing).map {
            Rect(x: x + $0.offset, y: y, width: $0.size, height: height)
        }
    }
}

/// The size of one slice when a rectangle is split: fixed, or a share of what is left.
public enum Length: Hashable, Sendable {
    /// Exactly this many cells (fewer if space runs out).
    case fixed(Int)
    /// A share, by weight, of the space the fixed slices leave.
    case flex(Int)

    /// Offsets and sizes for each length within `total` cells.
    ///
    /// Fixed slices are served first, left to right, so when space is short
    /// the trailing slices shrink to nothing rather than all becoming
    /// unreadably narrow. Rounding leftovers go to the last flexible slice.
    public static func resolve(_ lengths: [Length], in total: Int, spacing: Int = 0) -> [(offset: Int, size: Int)] {
        guard !lengths.isEmpty else { return [] }
        let gaps = spacing * (lengths.count - 1)
        let fixedTotal = lengths.reduce(0) { sum, length in
            if case .fixed(let n) = length { return sum + max(0, n) }
            return sum
        }
        let weights = lengths.reduce(0) { sum, length in
            if case .flex(let w) = length { return sum + max(0, w) }
            return sum
        }
        var flexSpace = max(0, total - fixedTotal - gaps)
        let lastFlex = lengths.lastIndex { if case .flex(let w) = $0 { return w > 0 } else { return false } }
        let flexShare = flexSpace

        var result: [(offset: Int, size: Int)] = []
        var offset = 0
        for (index, length) in lengths.enumerated() {
            var size: Int
            switch length {
            case .fixed(let n):
                size = max(0, n)
            case .flex(let w):
                if index == lastFlex {
                    size = flexSpace
                } else {
                    size = weights > 0 ? flexShare * max(0, w) / weights : 0
                }
                flexSpace -= size
            }
            size = max(0, min(size, total - offset))
            result.append((offset, size))
            offset = min(total, offset + size + spacing)
        }
        return result
    }
}
