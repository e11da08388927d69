import Foundation

/// The rates that put money in several currencies into one reporting currency, from a
/// file the user keeps (subdesk has no network for rates):
///
///     # one unit of each currency, in the reporting currency
///     reporting USD
///     EUR 1.08
///     JPY 0.0066
public struct ExchangeRates: Equatable, Sendable {
    public var reporting: String
    /// One unit of each currency in units of `reporting`; `reporting` itself is 1.
    public var rates: [String: Double]

    public init(reporting: String, rates: [String: Double]) {
        self.reporting = reporting
        self.rates = rates
        self.rates[reporting] = 1
    }

    /// Parses the file's text; `source` names it in errors (`rates:3: ...`). An error names
    /// the line and what is wrong with it, never what the line holds: `--rates` may name a
    /// file that was never a rates file (a key, a password file), whose lines stay unsaid.
    /// A currency given twice, or a second `reporting` line, is refused.
    public init(text: String, source: String) throws {
        var reporting: (code: String, line: Int)?
        var rates: [String: Double] = [:]
        var lineOf: [String: Int] = [:]
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init)?
                .trimmingCharacters(in: .whitespaces) ?? ""
            if line.isEmpty { continue }
            let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "=" }).map(String.init)
            let place = "\(source):\(index + 1)"
            guard words.count == 2 else {
                throw ConfigurationError("\(place): expected `reporting CODE` or `CODE RATE` (two words), found \(words.count)")
            }
            if words[0] == "reporting" {
                guard MetricContributions.isCurrency(words[1]) else {
                    throw ConfigurationError("\(place): the reporting currency is not a currency code (three capitals)")
                }
                if let first = reporting { throw ConfigurationError("\(place): a second `reporting` line (the first is line \(first.line))") }
                reporting = (words[1], index + 1)
                continue
            }
            guard MetricContributions.isCurrency(words[0]) else {
                throw ConfigurationError("\(place): the first word is neither `reporting` nor a currency code (three capitals)")
            }
            guard let rate = Double(words[1]), rate.isFinite, rate > 0 else {
                throw ConfigurationError("\(place): \(words[0])'s rate is not a positive number")
            }
            if let first = lineOf[words[0]] { throw ConfigurationError("\(place): \(words[0]) is given again (first on line \(first))") }
            lineOf[words[0]] = index + 1
            rates[words[0]] = rate
        }
        guard let reporting else { throw ConfigurationError("\(source): no `reporting CODE` line names the currency to report in") }
        self.init(reporting: reporting.code, rates: rates)
    }

    public static func load(path: String) throws -> ExchangeRates {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw ConfigurationError("cannot read the rates file \(path)")
        }
        return try ExchangeRates(text: text, source: path)
    }
}
