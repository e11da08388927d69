import SubscriptionCore
import TerminalUI

/// The daily counts: metrics down, days across (the latest that fit), and a chart of one metric over the range.
enum DailyView {
    typealias Columns = Layout.DailyColumns

    static func render(_ state: DashboardState, in area: Rect, buffer: inout ScreenBuffer) {
        guard area.height >= 4 else { return }
        let daily = state.daily
        let request = daily.request ?? Selectors.dailyRequest(state)
        let zone = ZonedTime.label(for: request.zone)

        var x = area.x + 1
        x = DashboardRenderer.fact(request.period == .day ? "days" : request.period == .week ? "weeks" : "months",
                                   "\(request.from) … \(request.to)", x: x, y: area.y, maxX: area.maxX, buffer: &buffer)
        x += buffer.put(" (\(zone))", x: x, y: area.y, role: .accent, maxWidth: max(0, area.maxX - x)) + 3
        x = DashboardRenderer.fact("segment", request.segmentLabel, x: x, y: area.y, maxX: area.maxX, buffer: &buffer) + 3
        // What TOTAL adds up, and which days the columns show when not all fit.
        let shown = Selectors.visibleDays(daily, width: state.width)
        let unit = "\(request.period.rawValue)\(daily.days.count == 1 ? "" : "s")"
        var legend = "TOTAL: all \(daily.days.count) \(unit)"
        if let first = shown.first, let last = shown.last, shown.count < daily.days.count {
            legend += "; columns \(columnLabel(first.day)) … \(columnLabel(last.day)), h/l move"
        }
        let short = "TOTAL: \(daily.days.count) \(unit)" + (shown.count < daily.days.count ? ", h/l more" : "")
        if daily.loaded, let fitting = [legend, short].first(where: { area.maxX - 1 - x >= TextWidth.width(of: $0) }) {
            buffer.put(fitting, x: x, y: area.y, role: .dim)
        }

        let (tableRows, chartRows) = Layout.daily(height: area.height + 2, metrics: state.daily.metrics.count)
        let tableArea = Rect(x: area.x + 1, y: area.y + 1, width: area.width - 2, height: tableRows + 1)
        renderTable(state, in: tableArea, buffer: &buffer)
        let chartArea = Rect(x: area.x + 1, y: area.maxY - chartRows, width: area.width - 2, height: chartRows)
        renderChart(state, request: request, in: chartArea, buffer: &buffer)
    }

    /// A metric's name, spelled out: levels say they are counted at the end of each column's
    /// period (a day, a week, a month), in words that fit the METRIC column.
    static func label(_ metric: Metric, wide: Bool, period: CountPeriod = .day) -> String {
        guard metric.isEndOfDayLevel else { return metric.label }
        let name = !wide || period != .day ? metric.narrowLabel ?? metric.label : metric.label
        if wide { return name + " at end of \(period.rawValue)" }
        return name + (period == .day ? " (end of day)" : " (\(period.rawValue) end)")
    }

    /// A column's heading in five characters: `11-16` for a day or the Monday of a week,
    /// `Nov26` for a month.
    static func columnLabel(_ day: String) -> String {
        guard day.count == 7, let month = Int(day.suffix(2)), (1...12).contains(month) else { return String(day.dropFirst(5)) }
        let names = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        return names[month - 1] + String(day.dropFirst(2).prefix(2))
    }

    /// `metric` over all of `days` in `width` characters: neighbouring periods share a
    /// character (counts added, levels and rates as the later one's).
    static func trend(_ metric: Metric, _ days: [DayCounts], width: Int) -> String {
        guard !days.isEmpty else { return "" }
        let per = max(1, (days.count + width - 1) / width)
        var values: [Double] = []
        var index = 0
        while index < days.count {
            let group = days[index..<min(days.count, index + per)]
            values.append(metric.isEndOfDayLevel || metric.isRate ? group.last!.value(metric) : group.reduce(0) { $0 + $1.value(metric) })
            index += per
        }
        let low = min(0, values.min() ?? 0)
        return Sparkline.string(values.map { $0 - low })
    }

    static func renderTable(_ state: DashboardState, in area: Rect, buffer: inout ScreenBuffer) {
        let daily = state.daily
        let wide = area.width >= 110
        let labelWidth = Columns.labelWidth(wide: wide)
        let dayWidth = Columns.dayWidth
        let spacing = Columns.spacing
        let days = Array(Selectors.visibleDays(daily, width: state.width))

        let trend = Columns.showsTrend(width: state.width)
        var columns = [TableColumn("METRIC", width: .fixed(labelWidth)), TableColumn("TOTAL", width: .fixed(6), alignment: .right)]
        if trend { columns.append(TableColumn("TREND (ALL)", width: .fixed(Columns.trendWidth))) }
        columns += days.map { TableColumn(columnLabel($0.day), width: .fixed(dayWidth), alignment: .right) }
        let sum = DailyCountsReport.total(daily.days)
        let rows: [[TableCell]] = daily.metrics.map { metric in
            // Levels (active at the end of a period) do not add up over days; events add up, and rates
            // are taken from the range's sums, except churn: a churn rate is a period's.
            let total = metric.hasRangeTotal ? sum?.text(metric) ?? "" : ""
            return [TableCell(label(metric, wide: wide, period: daily.request?.period ?? daily.period), role: metric.isFromTransactions ? nil : .dim), TableCell(total, role: .title)]
                + (trend ? [TableCell(self.trend(metric, daily.days, width: Columns.trendWidth), role: .sparkline)] : [])
                + days.map { day in
                    let text = day.text(metric)
                    return TableCell(text, role: text == "0" || text == "-" ? .dim : nil)
                }
        }
        TableView(columns: columns, rows: daily.loaded ? rows : [], selectedRow: daily.metric,
                  scrollOffset: daily.scrollOffset, columnSpacing: spacing, emptyText: "loading…")
            .render(in: area, buffer: &buffer)
    }

    static func renderChart(_ state: DashboardState, request: DailyRequest, in area: Rect, buffer: inout ScreenBuffer) {
        guard area.height >= 4 else { return }
        let daily = state.daily
        let metric = daily.selectedMetric
        let zone = ZonedTime.label(for: request.zone)
        let period = request.period.rawValue
        let what = metric.isEndOfDayLevel ? "at the end of each \(period)" : metric.isRate ? "each \(period)" : "per \(period)"
        buffer.put("\(metric.label) \(what), \(request.from) … \(request.to) \(zone), \(request.segmentLabel)",
                   x: area.x, y: area.y, role: .title, maxWidth: area.width)
        // What the selected metric counts, whole, so a number on screen is never a guess:
        // wrapped over as many lines as it needs while three rows of chart stay.
        let wrapped = TextWidth.wrap(metric.definition, toWidth: max(10, area.width))
        let definitionRows = max(1, min(wrapped.count, area.height - 6))
        for (row, line) in wrapped.prefix(definitionRows).enumerated() {
            let cut = row == definitionRows - 1 && wrapped.count > definitionRows
            buffer.put(cut ? line + " …" : line, x: area.x, y: area.y + 1 + row, role: .dim, maxWidth: area.width)
        }
        let days = daily.days
        guard !days.isEmpty else { return }

        let gap = 1
        let barWidth = max(1, min(3, (area.width + gap) / days.count - gap))
        let chart = Rect(x: area.x, y: area.y + 1 + definitionRows, width: area.width, height: area.height - 2 - definitionRows)
        let bars = days.map { BarChart.Bar(label: "", value: $0.value(metric)) }
        BarChart(bars: bars, barWidth: barWidth, gap: gap).render(in: chart, buffer: &buffer)

        // Weekly ticks counted back from the last day, which is the one people look for.
        let shown = min(days.count, max(0, (area.width + gap) / (barWidth + gap)))
        let first = days.count - shown
        let axisY = area.maxY - 1
        var index = days.count - 1
        var lastLabelX = Int.max
        while index >= first {
            let x = area.x + (index - first) * (barWidth + gap)
            let text = columnLabel(days[index].day)
            if x + TextWidth.width(of: text) < lastLabelX {
                buffer.put(text, x: x, y: axisY, role: .dim, maxWidth: area.maxX - x)
                lastLabelX = x - 1
            }
            index -= 7
        }
    }
}
