import Foundation

/// An aggregate row of the daily counts: an hour bucket, a key (`p:...` for period events
/// and levels, `a:...` for money; stores written before every metric came from the shares
/// also hold `n:TYPE/SUBTYPE` notification counts, which nothing reads) and a segment.
public struct MetricsBucket: Equatable, Sendable {
    public var bucketStart: Millis
    public var key: String
    public var segment: CountSegment
    public var count: Int
}

/// Subscriptions counted apart: paid Production ones, family-shared access, and sandbox.
public enum CountSegment: String, CaseIterable, Sendable {
    case paid, familyShared = "family_shared", sandbox
}

/// What a report can be split by beyond `CountSegment`: each transaction's product,
/// subscription group, storefront and offer type (`OfferType.segmentValues`).
public enum SegmentDimension: String, CaseIterable, Sendable {
    case product, group, storefront, offer
    /// The billing plan of a subscription with a commitment (`monthly`, `upfront`), `none`
    /// for the rest.
    case plan
    /// The app, as the transaction's bundle id (a report shows the configured app's name).
    case app
}

/// One value of one dimension (`product=app.monthly`): the part of a report that is read.
public struct DimensionFilter<Dimension>: Equatable, Sendable, CustomStringConvertible
where Dimension: RawRepresentable & Equatable & Sendable, Dimension.RawValue == String {
    public var dimension: Dimension
    public var value: String

    public init(dimension: Dimension, value: String) {
        self.dimension = dimension
        self.value = value
    }

    public var description: String { "\(dimension.rawValue)=\(value)" }
}

/// The part of the counts a report by segment reads.
public typealias SegmentFilter = DimensionFilter<SegmentDimension>

extension DimensionFilter where Dimension == SegmentDimension {
    /// Reads `DIMENSION=VALUE`: a product, group, storefront or offer type gives a filter;
    /// `environment=Production|Sandbox` and `ownership=PURCHASED|FAMILY_SHARED` give the
    /// `CountSegment`s they are.
    public static func parse(_ text: String) throws -> (filter: SegmentFilter?, segments: Set<CountSegment>?) {
        let parts = text.split(separator: "=", maxSplits: 1).map { String($0).trimmingCharacters(in: .whitespaces) }
        let names = (SegmentDimension.allCases.map(\.rawValue) + ["environment", "ownership"]).joined(separator: ", ")
        guard parts.count == 2, !parts[1].isEmpty else {
            throw ConfigurationError("a segment is DIMENSION=VALUE (\(names)), not \(text)")
        }
        switch (parts[0].lowercased(), parts[1].lowercased()) {
        case ("environment", "production"): return (nil, [.paid, .familyShared])
        case ("environment", "sandbox"): return (nil, [.sandbox])
        case ("environment", _): throw ConfigurationError("environment is Production or Sandbox, not \(parts[1])")
        case ("ownership", "purchased"): return (nil, [.paid])
        case ("ownership", "family_shared"): return (nil, [.familyShared])
        case ("ownership", _): throw ConfigurationError("ownership is PURCHASED or FAMILY_SHARED, not \(parts[1])")
        default:
            guard let dimension = SegmentDimension(rawValue: parts[0].lowercased()) else {
                throw ConfigurationError("no segment dimension \(parts[0]): use one of \(names)")
            }
            return (SegmentFilter(dimension: dimension, value: parts[1]), nil)
        }
    }
}
