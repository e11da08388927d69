/// The xterm 256-colour palette: mapping RGB to indices and back.
enum XTermPalette {
    /// The six channel levels of the 6×6×6 colour cube (indices 16–231).
    private static let cubeLevels = [0, 95, 135, 175, 215, 255]

    /// xterm's own values for the 16 basic colours. Terminals let users change
    /// these, so they are only used to judge closeness when downgrading.
    private static let basic: [(Int, Int, Int)] = [
        (0, 0, 0), (205, 0, 0), (0, 205, 0), (205, 205, 0),
        (0, 0, 238), (205, 0, 205), (0, 205, 205), (229, 229, 229),
        (127, 127, 127), (255, 0, 0), (0, 255, 0), (255, 255, 0),
        (92, 92, 255), (255, 0, 255), (0, 255, 255), (255, 255, 255),
    ]

    static func parseHex(_ digits: String) -> (red: Int, green: Int, blue: Int)? {
        guard digits.count == 6, digits.allSatisfy(\.isHexDigit), let value = Int(digits, radix: 16) else { return nil }
        return ((value >> 16) & 0xFF, (value >> 8) & 0xFF, value & 0xFF)
    }

    static func rgb(of index: UInt8) -> (red: Int, green: Int, blue: Int) {
        let i = Int(index)
        switch i {
        case 0..<16:
            return basic[i]
        case 16..<232:
            let n = i - 16
            return (cubeLevels[n / 36], cubeLevels[(n / 6) % 6], cubeLevels[n % 6])
        default:
            let level = 8 + 10 * (i - 232)
            return (level, level, level)
        }
    }

    /// The cube or grey-ramp index (16–255) closest to an RGB colour.
    static func nearestIndex(red: Int, green: Int, blue: Int) -> UInt8 {
        let r = nearestLevel(red), g = nearestLevel(green), b = nearestLevel(blue)
        let cube = 16 + 36 * r + 6 * g + b
        let average = (red + green + blue) / 3
        let grey = 232 + min(23, max(0, (average - 3) / 10))
        let cubeDistance = distance((red, green, blue), rgb(of: UInt8(cube)))
        let greyDistance = distance((red, green, blue), rgb(of: UInt8(grey)))
        return UInt8(greyDistance < cubeDistance ? grey : cube)
    }

    /// The closest of the first `count` palette entries (8 or 16) to a palette index.
    static func nearestBasic(to index: UInt8, count: Int) -> UInt8 {
        let target = rgb(of: index)
        var best = 0
        var bestDistance = Int.max
        for candidate in 0..<min(count, 16) {
            let d = distance(target, basic[candidate])
            if d < bestDistance {
                best = candidate
                bestDistance = d
            }
        }
        return UInt8(best)
    }

    /// Whether a palette entry reads as a dark background.
    static func isDark(_ index: UInt8) -> Bool {
        let (r, g, b) = rgb(of: index)
        return r * 299 + g * 587 + b * 114 < 128_000
    }

    private static func nearestLevel(_ channel: Int) -> Int {
        var best = 0
        for (i, level) in cubeLevels.enumerated() where abs(level - channel) < abs(cubeLevels[best] - channel) {
            best = i
        }
        return best
    }

    private static func distance(_ a: (Int, Int, Int), _ b: (Int, Int, Int)) -> Int {
        let dr = a.0 - b.0, dg = a.1 - b.1, db = a.2 - b.2
        return dr * dr + dg * dg + db * db
    }
}
