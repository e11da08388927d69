/// Vertical bars drawn with block characters, labels under them and the scale's top value above.
///
/// ```
/// 412
///      █
///   ▃  █  ▆
///  ██ ██ ██
/// 11-14 …
/// ```
///
/// Bar heights are resolved to eighths of a row with ▁▂▃▄▅▆▇█, so small
/// differences stay visible in a short chart.
public struct BarChart: Sendable {
    public struct Bar: Sendable, Hashable {
        public var label: String
        public var value: Double
        /// Overrides the chart's bar role, to pick one bar out.
        public var role: StyleRole?

        public init(label: String, value: Double, role: StyleRole? = nil) {
            self.label = label
            self.value = value
            self.role = role
        }
    }

    public var bars: [Bar]
    public var barWidth: Int
    public var gap: Int
    /// The value of a full-height bar; nil uses the largest value.
    public var maxValue: Double?
    public var showsMaxLabel: Bool
    public var barRole: StyleRole

    public init(bars: [Bar], barWidth: Int = 3, gap: Int = 1, maxValue: Double? = nil,
                showsMaxLabel: Bool = true, barRole: StyleRole = .chartBar) {
        self.bars = bars
        self.barWidth = barWidth
        self.gap = gap
        self.maxValue = maxValue
        self.showsMaxLabel = showsMaxLabel
        self.barRole = barRole
    }

    static let eighths: [Character] = ["▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"]

    /// Draws the chart. When not every bar fits, the last ones are shown,
    /// since charts here run oldest to newest and the newest matter most.
    public func render(in area: Rect, buffer: inout ScreenBuffer) {
        guard !area.isEmpty, barWidth > 0 else { return }
        buffer.fill(area)
        let scale = maxValue ?? bars.map { Self.clean($0.value) }.max() ?? 0

        var chart = area
        if showsMaxLabel && chart.height >= 3 {
            buffer.put(Self.format(scale), x: chart.x, y: chart.y, role: .dim, maxWidth: chart.width)
            chart = chart.inset(top: 1)
        }
        let hasLabels = bars.contains { !$0.label.isEmpty }
        var labelRow: Int?
        if hasLabels && chart.height >= 2 {
            labelRow = chart.maxY - 1
            chart = chart.inset(bottom: 1)
        }

        let fitting = max(0, (area.width + gap) / (barWidth + gap))
        let shown = bars.suffix(fitting)
        for (slot, bar) in shown.enumerated() {
            let x = area.x + slot * (barWidth + gap)
            let height = Self.eighthsHigh(value: Self.clean(bar.value), scale: scale, rows: chart.height)
            let role = bar.role ?? barRole
            for row in 0..<chart.height {
                let filled = height - row * 8
                guard filled > 0 else { break }
                let block = Self.eighths[min(filled, 8) - 1]
                buffer.put(String(repeating: String(block), count: barWidth), x: x, y: chart.maxY - 1 - row, role: role)
            }
            if let labelRow {
                buffer.put(bar.label, x: x, y: labelRow, width: barWidth, alignment: .center, role: .dim, padRole: .normal)
            }
        }
    }

    /// Height in eighths of a row; a positive value always shows at least ▁.
    static func eighthsHigh(value: Double, scale: Double, rows: Int) -> Int {
        guard scale > 0, value > 0, rows > 0 else { return 0 }
        let eighths = Int((min(value, scale) / scale * Double(rows * 8)).rounded())
        return max(1, eighths)
    }

    /// NaN, infinities and negatives draw as empty rather than trapping the conversion to Int.
    static func clean(_ value: Double) -> Double {
        value.isFinite && value > 0 ? value : 0
    }

    /// Whole numbers without a decimal point, others to one place.
    static func format(_ value: Double) -> String {
        if value.isFinite, value == value.rounded(), abs(value) < 1e15 { return String(Int(value)) }
        return String((value * 10).rounded() / 10)
    }
}

/// One row of ▁▂▃▄▅▆▇█, each value scaled against the largest (or a given maximum).
public struct Sparkline: Sendable {
    public var values: [Double]
    public var maxValue: Double?
    public var role: StyleRole

    public init(values: [Double], maxValue: Double? = nil, role: StyleRole = .sparkline) {
        self.values = values
        self.maxValue = maxValue
        self.role = role
    }

    /// The sparkline as text, for embedding in a status line; the last `width` values when given.
    public static func string(_ values: [Double], maxValue: Double? = nil, width: Int? = nil) -> String {
        let shown = width.map { Array(values.suffix(max(0, $0))) } ?? values
        let scale = maxValue ?? shown.map(BarChart.clean).max() ?? 0
        return String(shown.map { value -> Character in
            let v = BarChart.clean(value)
            guard scale > 0 else { return BarChart.eighths[0] }
            let level = Int((min(v, scale) / scale * 7).rounded())
            return BarChart.eighths[min(7, max(0, level))]
        })
    }

    /// Draws the most recent values that fit on the first row of `area`.
    public func render(in area: Rect, buffer: inout ScreenBuffer) {
        guard !area.isEmpty else { return }
        buffer.put(Sparkline.string(values, maxValue: maxValue, width: area.width), x: area.x, y: area.y, role: role)
    }
}
