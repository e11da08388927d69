import Foundation

/// A column of Apple's "App Store Retention Messaging" analytics report, as its header names it.
///
/// Apple's field names, as its page "App Store Retention Messaging" (Analytics Reports,
/// developer.apple.com/documentation/analytics-reports/app-store-retention-messaging) lists
/// them. A header names each once, in any order, matched ignoring case and surrounding
/// spaces; a file with another column, or without one of these, is refused naming it.
public enum RetentionReportColumn: String, CaseIterable, Sendable {
    case date = "Date"
    case appName = "App Name"
    case appAppleId = "App Apple Identifier"
    case groupName = "Current Group Subscription"
    case groupId = "Current Subscription Group Identifier"
    case subscriptionName = "Current Subscription"
    case subscriptionId = "Current Subscription Identifier"
    case page = "Page"
    case messageType = "Retention Message Type"
    case selectionType = "Message Selection Type"
    case event = "Event"
    case saveType = "Save Type"
    case device = "Device"
    case platformVersion = "Platform Version"
    case territory = "Territory"
    case counts = "Counts"

    static let byFoldedName = Dictionary(uniqueKeysWithValues: allCases.map { (RetentionReportText.fold($0.rawValue), $0) })

    /// The column `name` is in a header: Apple's name, ignoring case and surrounding spaces.
    public init?(header name: String) {
        guard let column = Self.byFoldedName[RetentionReportText.fold(name)] else { return nil }
        self = column
    }

    /// Columns of the file shape the import first assumed (before Apple's page was read in
    /// full), which Apple's file does not have, and Apple's column for the same thing: a
    /// refusal names both.
    static let earlierNames: [String: RetentionReportColumn] = ["message type": .messageType]
}

/// How the report's values are compared with Apple's: lower-cased, surrounding spaces
/// trimmed, a typographic apostrophe read as `'`.
enum RetentionReportText {
    static func fold(_ text: String) -> String {
        text.trimmingCharacters(in: .whitespaces).lowercased().replacingOccurrences(of: "\u{2019}", with: "'")
    }
}

/// A column's values as Apple's glossary lists them, one case each (its raw value Apple's
/// value), and `other` (raw value empty) for any value it does not list.
protocol RetentionReportValue: CaseIterable, RawRepresentable where RawValue == String {
    static var other: Self { get }
    /// Each case by its Apple value folded (`foldedTable()`, kept once).
    static var byFoldedValue: [String: Self] { get }
}

extension RetentionReportValue {
    /// Apple's value for the case; nil for `other`.
    public var appleValue: String? { rawValue.isEmpty ? nil : rawValue }

    static func foldedTable() -> [String: Self] {
        Dictionary(uniqueKeysWithValues: allCases.compactMap { kind in kind.appleValue.map { (RetentionReportText.fold($0), kind) } })
    }

    /// The case whose Apple value `text` is, matched as header names are; `other` when none is.
    static func matching(_ text: String) -> Self { byFoldedValue[RetentionReportText.fold(text)] ?? other }
}

/// What an `Event` of the report is, by Apple's glossary: `Page views` (the cancellation
/// sheet shown), `Saves` (the subscriber chose not to cancel; which choice is in Save Type)
/// and `Cancels`, matched ignoring case and surrounding spaces. Any other value is kept
/// and counted apart (`other`), in no figure.
public enum RetentionEventKind: String, RetentionReportValue, Sendable {
    case view = "Page views", save = "Saves", cancel = "Cancels", other = ""

    static let byFoldedValue = foldedTable()

    public init(event: String) { self = Self.matching(event) }
}

/// Which save a `Saves` row counts, by Apple's `Save Type`: `Redeem offer`, `Switch plan`
/// or `Don't cancel`, matched as events are; any other value (or none) is `other`.
public enum RetentionSaveKind: String, RetentionReportValue, Sendable {
    case redeemOffer = "Redeem offer", switchPlan = "Switch plan", dontCancel = "Don't cancel", other = ""

    static let byFoldedValue = foldedTable()

    public init(saveType: String) { self = Self.matching(saveType) }
}

/// One row of the report: a day's count of one event on one page of the cancellation flow,
/// for one subscription, retention message type, message selection type, save type, device,
/// platform version and territory.
public struct RetentionReportRow: Equatable, Sendable {
    /// `YYYY-MM-DD`, the day Apple counted the events in.
    public var day: String
    public var appName: String
    public var appAppleId: String
    public var groupName: String
    public var groupId: String
    public var subscriptionName: String
    public var subscriptionId: String
    public var page: String
    /// Apple's `Retention Message Type`.
    public var messageType: String
    /// Apple's `Message Selection Type` (`Default` or `Real-time`).
    public var selectionType: String
    public var event: String
    /// Apple's `Save Type`, on a `Saves` row.
    public var saveType: String
    public var device: String
    public var platformVersion: String
    public var territory: String
    public var counts: Int64

    public init(day: String, appName: String, appAppleId: String, groupName: String, groupId: String,
                subscriptionName: String, subscriptionId: String, page: String, messageType: String, selectionType: String,
                event: String, saveType: String, device: String, platformVersion: String, territory: String, counts: Int64) {
        self.day = day
        self.appName = appName
        self.appAppleId = appAppleId
        self.groupName = groupName
        self.groupId = groupId
        self.subscriptionName = subscriptionName
        self.subscriptionId = subscriptionId
        self.page = page
        self.messageType = messageType
        self.selectionType = selectionType
        self.event = event
        self.saveType = saveType
        self.device = device
        self.platformVersion = platformVersion
        self.territory = territory
        self.counts = counts
    }

    /// Every field but Counts: the row a re-import of the same Apple row replaces rather than
    /// adds to, each distinct row of Apple's its own. Fields are joined by a tab, which no
    /// field of a tab-separated file holds.
    public var key: String {
        [day, appName, appAppleId, groupName, groupId, subscriptionName, subscriptionId, page, messageType, selectionType,
         event, saveType, device, platformVersion, territory].joined(separator: "\t")
    }

    public var kind: RetentionEventKind { RetentionEventKind(event: event) }
    public var saveKind: RetentionSaveKind { RetentionSaveKind(saveType: saveType) }
}

/// Why a report file was refused: the place (line, and column when one is at fault) and what was wrong.
public struct RetentionReportError: Error, Equatable, CustomStringConvertible, Sendable {
    public var file: String
    public var line: Int
    public var column: String?
    public var problem: String

    public var description: String {
        "\(file):\(line): " + (column.map { "column \"\($0)\": " } ?? "") + problem
    }
}

/// Reads the report: tab-separated, a header row first (Apple's Analytics Reports are
/// tab-delimited text, delivered gzip-compressed: unpack first). Bounded: any input is
/// read without crashing, and the first fault refuses the whole file.
public enum RetentionReportFile {
    /// The largest file read (an Analytics Reports instance of one app's days is far smaller).
    public static let maxBytes = 256 << 20
    /// The longest line read.
    public static let maxLineBytes = 64 << 10
    /// The largest count taken: fifteen digits, so no sum of a store's rows overflows.
    public static let maxCount: Int64 = 999_999_999_999_999
    /// The longest text field kept.
    static let maxFieldBytes = 1024

    /// The rows of `data`, rows with the same dimensions and day added together.
    public static func parse(_ data: Data, file: String) throws -> [RetentionReportRow] {
        func refuse(_ line: Int, _ column: RetentionReportColumn?, _ problem: String) -> RetentionReportError {
            RetentionReportError(file: file, line: line, column: column?.rawValue, problem: problem)
        }
        func refuse(_ line: Int, _ problem: String) -> RetentionReportError { refuse(line, nil, problem) }
        guard data.count <= maxBytes else { throw refuse(1, "the file has \(data.count) bytes, more than the \(maxBytes) read") }
        if data.starts(with: [0x1F, 0x8B]) { throw refuse(1, "gzip-compressed: unpack it first (gunzip)") }
        var bytes = [UInt8](data)
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.removeFirst(3) }
        var lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        if lines.last?.isEmpty == true { lines.removeLast() }
        guard !lines.isEmpty else { throw refuse(1, "empty: expected a header row naming the report's columns") }

        func text(_ line: ArraySlice<UInt8>, _ number: Int) throws -> String {
            guard line.count <= maxLineBytes else {
                throw refuse(number, "the line has \(line.count) bytes, more than the \(maxLineBytes) read")
            }
            let body = line.last == UInt8(ascii: "\r") ? line.dropLast() : line
            guard let string = String(validating: body, as: UTF8.self) else { throw refuse(number, "not UTF-8 text") }
            return string
        }

        let header = try text(lines[0], 1).split(separator: "\t", omittingEmptySubsequences: false).map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        guard header.count > 1 else {
            throw refuse(1, "not a tab-separated header: expected the columns "
                         + RetentionReportColumn.allCases.map(\.rawValue).joined(separator: ", "))
        }
        var place: [RetentionReportColumn: Int] = [:]
        for (index, name) in header.enumerated() {
            guard let column = RetentionReportColumn(header: name) else {
                let apple = RetentionReportColumn.earlierNames[RetentionReportText.fold(name)]
                throw RetentionReportError(file: file, line: 1, column: name.escapingControlCharacters(limit: 80),
                                           problem: "not a column of Apple's retention messaging report"
                                           + (apple.map { " (a file in the shape first assumed: Apple's column is \"\($0.rawValue)\")" } ?? ""))
            }
            guard place[column] == nil else { throw refuse(1, column, "named twice") }
            place[column] = index
        }
        if let missing = RetentionReportColumn.allCases.first(where: { place[$0] == nil }) {
            throw refuse(1, missing, "missing from the header")
        }

        var merged: [String: RetentionReportRow] = [:]
        var order: [String] = []
        for (offset, raw) in lines.enumerated().dropFirst() {
            let number = offset + 1
            let line = try text(raw, number)
            if line.isEmpty { continue }
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard fields.count == header.count else {
                throw refuse(number, "\(fields.count) fields, the header has \(header.count)")
            }
            func field(_ column: RetentionReportColumn) throws -> String {
                let value = fields[place[column]!].trimmingCharacters(in: .whitespaces)
                guard value.utf8.count <= maxFieldBytes else { throw refuse(number, column, "longer than \(maxFieldBytes) bytes") }
                return value
            }
            func identifier(_ column: RetentionReportColumn, required: Bool) throws -> String {
                let value = try field(column)
                if value.isEmpty && !required { return value }
                guard !value.isEmpty, value.utf8.count <= 19, value.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
                    throw refuse(number, column, "expected an identifier (a whole number), got \"\(value.escapingControlCharacters(limit: 40))\"")
                }
                return value
            }
            let countText = try field(.counts)
            guard !countText.isEmpty, countText.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
                throw refuse(number, .counts, "expected a whole number, got \"\(countText.escapingControlCharacters(limit: 40))\"")
            }
            guard countText.utf8.count <= 15, let counts = Int64(countText), counts <= maxCount else {
                throw refuse(number, .counts, "\(countText.escapingControlCharacters(limit: 40)) is more than \(maxCount)")
            }
            let day = try field(.date)
            guard DayText.isDay(day) else {
                throw refuse(number, .date, "expected a day YYYY-MM-DD, got \"\(day.escapingControlCharacters(limit: 40))\"")
            }
            let event = try field(.event)
            guard !event.isEmpty else { throw refuse(number, .event, "empty") }
            let row = RetentionReportRow(
                day: day, appName: try field(.appName), appAppleId: try identifier(.appAppleId, required: true),
                groupName: try field(.groupName), groupId: try identifier(.groupId, required: false),
                subscriptionName: try field(.subscriptionName), subscriptionId: try identifier(.subscriptionId, required: false),
                page: try field(.page), messageType: try field(.messageType), selectionType: try field(.selectionType),
                event: event, saveType: try field(.saveType), device: try field(.device),
                platformVersion: try field(.platformVersion), territory: try field(.territory), counts: counts)
            if var earlier = merged[row.key] {
                earlier.counts = min(maxCount * 1000, earlier.counts + row.counts)
                merged[row.key] = earlier
            } else {
                merged[row.key] = row
                order.append(row.key)
            }
        }
        return order.map { merged[$0]! }
    }
}

/// `YYYY-MM-DD` days, as the report and `--since`/`--until` write them.
enum DayText {
    static func isDay(_ text: String) -> Bool {
        let b = Array(text.utf8)
        guard b.count == 10, b[4] == UInt8(ascii: "-"), b[7] == UInt8(ascii: "-") else { return false }
        let digits = b[0..<4] + b[5..<7] + b[8..<10]
        guard digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return false }
        let month = Int(text.dropFirst(5).prefix(2))!, day = Int(text.suffix(2))!
        return (1...12).contains(month) && (1...31).contains(day)
    }
}


/// The figures of some rows, by Apple's definitions: the cancellation sheet's views
/// (`Page views`), the saves (`Saves`, split by `Save Type`), the cancellations (`Cancels`),
/// and the save rate.
public struct RetentionFigures: Equatable, Sendable {
    public var views: Int64 = 0
    public var cancellations: Int64 = 0
    /// Every `Saves` row's count, whatever its Save Type.
    public var saves: Int64 = 0
    /// `Saves` with Save Type `Redeem offer`.
    public var offersRedeemed: Int64 = 0
    /// `Saves` with Save Type `Switch plan`.
    public var plansSwitched: Int64 = 0
    /// `Saves` with Save Type `Don't cancel`.
    public var dontCancel: Int64 = 0
    /// `Saves` with another Save Type, or none: in `saves`, in no split.
    public var otherSaves: Int64 = 0
    /// Events of other kinds (`RetentionEventKind.other`), kept but in no figure.
    public var otherEvents: Int64 = 0

    public init() {}

    public mutating func add(_ row: RetentionReportRow) {
        switch row.kind {
        case .view: views += row.counts
        case .cancel: cancellations += row.counts
        case .other: otherEvents += row.counts
        case .save:
            saves += row.counts
            switch row.saveKind {
            case .redeemOffer: offersRedeemed += row.counts
            case .switchPlan: plansSwitched += row.counts
            case .dontCancel: dontCancel += row.counts
            case .other: otherSaves += row.counts
            }
        }
    }

    /// Apple's save rate: saves (every choice not to cancel) per view of the cancellation
    /// sheet; nil without a view.
    public var saveRate: Double? { views == 0 ? nil : Double(saves) / Double(views) }

    /// The figures as `retention report` and `:retention` write them, in `RetentionReport.headings`' order.
    public var cells: [String] {
        [views, saves, offersRedeemed, plansSwitched, dontCancel, cancellations].map(String.init) + [saveRateText]
    }

    /// `12.5%`, or `-` without a view.
    public var saveRateText: String {
        guard let rate = saveRate else { return "-" }
        return String(format: "%.1f%%", rate * 100)
    }
}

/// What the report is broken down by: the subscription, the territory, Apple's Retention
/// Message Type or its Message Selection Type (default or real-time).
public enum RetentionGrouping: String, CaseIterable, Sendable {
    case product, territory, message, selection

    /// `product, territory, message or selection`, as refusals name the choices.
    public static var choices: String { PermissionDenial.either(allCases.map(\.rawValue)) }

    func label(_ row: RetentionReportRow) -> String {
        switch self {
        case .product:
            let name = row.subscriptionName.isEmpty ? "(no subscription)" : row.subscriptionName
            return row.subscriptionId.isEmpty ? name : "\(name) (\(row.subscriptionId))"
        case .territory: return row.territory.isEmpty ? "(no territory)" : row.territory
        case .message: return row.messageType.isEmpty ? "(no message type)" : row.messageType
        case .selection: return row.selectionType.isEmpty ? "(no selection type)" : row.selectionType
        }
    }
}

/// Which stored rows a report reads: one app (its name or Apple ID), and days from
/// `since` to `until`, both included.
public struct RetentionReportQuery: Equatable, Sendable {
    public var app: String?
    /// Apple IDs that also name the app (a configured app's `app_apple_id`).
    public var appAppleIds: [String]
    public var since: String?
    public var until: String?

    public init(app: String? = nil, appAppleIds: [String] = [], since: String? = nil, until: String? = nil) {
        self.app = app
        self.appAppleIds = appAppleIds
        self.since = since
        self.until = until
    }

    /// Whether `day` is a day `--since`/`--until` takes.
    public static func isDay(_ day: String) -> Bool { DayText.isDay(day) }
}

/// The report's figures, in total and by one grouping, groups by most views first.
public struct RetentionReport: Equatable, Sendable {
    public struct Group: Equatable, Sendable {
        public var label: String
        public var figures: RetentionFigures
    }

    public var grouping: RetentionGrouping
    public var total: RetentionFigures
    public var groups: [Group]
    /// The first and last day of the rows read; nil without rows.
    public var firstDay: String?
    public var lastDay: String?

    /// Rows imported before the import read Apple's columns (migration 41), kept as they were
    /// and in no figure.
    public var earlierRows: Int

    public init(rows: [RetentionReportRow], grouping: RetentionGrouping, earlierRows: Int = 0) {
        self.grouping = grouping
        self.earlierRows = earlierRows
        var total = RetentionFigures()
        var byLabel: [String: RetentionFigures] = [:]
        for row in rows {
            total.add(row)
            byLabel[grouping.label(row), default: RetentionFigures()].add(row)
        }
        self.total = total
        groups = byLabel.map { Group(label: $0.key, figures: $0.value) }
            .sorted { ($0.figures.views, $1.label) > ($1.figures.views, $0.label) }
        firstDay = rows.map(\.day).min()
        lastDay = rows.map(\.day).max()
    }

    /// What `retention report --json` prints.
    public func jsonObject() -> [String: Any] {
        func figures(_ f: RetentionFigures) -> [String: Any] {
            ["views": f.views, "saves": f.saves, "offersRedeemed": f.offersRedeemed, "plansSwitched": f.plansSwitched,
             "dontCancel": f.dontCancel, "otherSaves": f.otherSaves, "cancellations": f.cancellations,
             "otherEvents": f.otherEvents, "saveRate": f.saveRate.map { $0 as Any } ?? NSNull()]
        }
        return [
            "by": grouping.rawValue,
            "firstDay": firstDay.map { $0 as Any } ?? NSNull(),
            "lastDay": lastDay.map { $0 as Any } ?? NSNull(),
            "saveRateDefinition": RetentionReport.saveRateDefinition,
            "earlierRowsNotCounted": earlierRows,
            "total": figures(total),
            "groups": groups.map { ["label": $0.label, "figures": figures($0.figures)] as [String: Any] },
        ]
    }

    /// The figures' columns, as `retention report` and `:retention` head them.
    public static let headings = ["VIEWS", "SAVES", "OFFERS", "SWITCHED", "DON'T CANCEL", "CANCELLED", "SAVE RATE"]

    /// What is said of rows imported before the import read Apple's columns; nil without any.
    public var earlierNote: String? {
        guard earlierRows > 0 else { return nil }
        return "\(earlierRows) row\(earlierRows == 1 ? "" : "s") imported before Apple's columns were read"
            + " (a Message Type column, events of subdesk's own): kept, in no figure"
    }

    /// The save rate's formula, as the JSON and the screen name it.
    public static let saveRateDefinition = "Saves / Page views: every choice not to cancel, per view of the cancellation sheet (Apple's)"
}
