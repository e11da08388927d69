import Foundation

/// Subscriptions' shares summed by dimension value: every reported entry once under each
/// of `SegmentDimension`, with its variant's value. Strings are interned and a cell is one
/// 64-bit word, so summing a million shares is a few hundred million cheap additions, and
/// each aggregate row is written once however many shares reach it.
public struct SegmentSums: Sendable {
    /// One aggregate row of `metric_segments` and what to add to it.
    public typealias Row = (dimension: SegmentDimension, value: String, key: String, segment: CountSegment, bucket: Millis, delta: Int)

    /// One aggregate row packed into a word, most significant first in the aggregate
    /// table's key order: dimension (3 bits: up to eight dimensions), value rank or id (20),
    /// key id (12), segment (2), and the hour since 1970 (27 bits, some 15,000 years: hours
    /// before 1970 are not counted).
    private static func cell(dimension: Int, value: Int32, key: Int32, segment: Int, hour: Int64) -> UInt64 {
        UInt64(dimension) << 61 | UInt64(value) << 41 | UInt64(key) << 29 | UInt64(segment) << 27 | UInt64(hour)
    }

    /// Strings numbered in the order first seen.
    struct Interned: Sendable {
        var strings: [String] = []
        var ids: [String: Int32] = [:]

        mutating func id(_ text: String) -> Int32 {
            if let id = ids[text] { return id }
            let id = Int32(strings.count)
            strings.append(text)
            ids[text] = id
            return id
        }
    }

    private var sums: [UInt64: Int] = [:]
    private var valueNames = Interned()
    private var keyNames = Interned()
    /// Key ids by `PeriodKey.rawValue`, so count entries need no string at all.
    private var periodKeyIds: [Int32?] = Array(repeating: nil, count: 256)

    public init() {}

    private mutating func value(_ text: String) -> Int32 { valueNames.id(text) }

    private mutating func key(_ text: String) -> Int32 { keyNames.id(text) }

    private mutating func key(_ k: MetricContributions.PeriodKey) -> Int32 {
        if let id = periodKeyIds[Int(k.rawValue)] { return id }
        let id = key(k.name)
        periodKeyIds[Int(k.rawValue)] = id
        return id
    }

    /// Adds `share` (`sign` 1) or takes it away (`sign` -1).
    public mutating func add(_ share: MetricContributions, sign: Int) {
        add(counts: share.counts.map { ($0.key, $0.value) }, amounts: share.amounts.map { ($0.key, $0.value) },
            attributes: share.attributes, sign: sign)
    }

    /// Adds a share in its stored form, read without building its dictionaries.
    public mutating func add(encoded: Data, sign: Int) {
        let entries = MetricContributions.entries(encoded: encoded)
        add(counts: entries.counts, amounts: entries.amounts, attributes: entries.attributes, sign: sign)
    }

    private mutating func add(counts: [(MetricContributions.Key, Int)], amounts: [(MetricContributions.AmountKey, Int64)],
                              attributes: [MetricContributions.Attributes], sign: Int) {
        let dimensions = SegmentDimension.allCases
        let unknown = Array(repeating: value("unknown"), count: dimensions.count)
        var byVariant: [[Int32]] = []
        for a in attributes { byVariant.append(dimensions.map { value(a[$0]) }) }
        func ids(_ variant: UInt8) -> [Int32] { Int(variant) < byVariant.count ? byVariant[Int(variant)] : unknown }
        func spread(_ hour: Int64, _ key: Int32, _ segment: CountSegment, _ variant: UInt8, _ delta: Int) {
            guard hour >= 0, hour < 1 << 27, key < 1 << 12 else { return }
            let valueIds = ids(variant)
            let s = CountSegment.allCases.firstIndex(of: segment)!
            for d in 0..<valueIds.count where valueIds[d] < 1 << 20 {
                sums[Self.cell(dimension: d, value: valueIds[d], key: key, segment: s, hour: hour), default: 0] += delta
            }
        }
        for (k, v) in counts where k.key.isReported {
            spread(k.bucket / MetricContributions.bucketMs, key(k.key), k.segment, k.variant, sign * v)
        }
        for (k, v) in amounts {
            spread(k.bucket / MetricContributions.bucketMs, key(k.kind.name(k.currency)), k.segment, k.variant, sign * Int(v))
        }
    }

    /// The non-zero sums, in the aggregate table's key order (dimension, value, key,
    /// segment, bucket), so they are written as one ordered pass: the cells are re-packed
    /// with each value's and key's rank among the strings, then sorted as words.
    public func rows() -> [Row] {
        // Dimensions sort by name (group, offer, plan, product, storefront), segments by raw value.
        let dimensionNames = SegmentDimension.allCases.map(\.rawValue)
        let dimensionRank = Self.ranks(dimensionNames), segmentRank = Self.ranks(CountSegment.allCases.map(\.rawValue))
        let values = valueNames.strings, keys = keyNames.strings
        let valueRank = Self.ranks(values), keyRank = Self.ranks(keys)
        let valueByRank = Self.byRank(values, valueRank), keyByRank = Self.byRank(keys, keyRank)
        let dimensionByRank = Self.byRank(SegmentDimension.allCases, dimensionRank)
        let segmentByRank = Self.byRank(CountSegment.allCases, segmentRank)
        var ranked: [(cell: UInt64, delta: Int)] = []
        ranked.reserveCapacity(sums.count)
        for (cell, delta) in sums where delta != 0 {
            let d = Int(cell >> 61), v = Int(cell >> 41 & 0xFFFFF), k = Int(cell >> 29 & 0xFFF), s = Int(cell >> 27 & 3)
            ranked.append((Self.cell(dimension: dimensionRank[d], value: Int32(valueRank[v]), key: Int32(keyRank[k]),
                                     segment: segmentRank[s], hour: Int64(cell & 0x7FFFFFF)), delta))
        }
        ranked.sort { $0.cell < $1.cell }
        return ranked.map { r in
            (dimensionByRank[Int(r.cell >> 61)], valueByRank[Int(r.cell >> 41 & 0xFFFFF)], keyByRank[Int(r.cell >> 29 & 0xFFF)],
             segmentByRank[Int(r.cell >> 27 & 3)], Int64(r.cell & 0x7FFFFFF) * MetricContributions.bucketMs, r.delta)
        }
    }

    /// Each string's place in sorted order (by UTF-8 bytes, as SQLite compares text).
    private static func ranks(_ strings: [String]) -> [Int] {
        var rank = Array(repeating: 0, count: strings.count)
        for (place, index) in strings.indices.sorted(by: { Array(strings[$0].utf8).lexicographicallyPrecedes(strings[$1].utf8) }).enumerated() {
            rank[index] = place
        }
        return rank
    }

    private static func byRank<T>(_ items: [T], _ rank: [Int]) -> [T] {
        var out = items
        for (index, item) in items.enumerated() { out[rank[index]] = item }
        return out
    }
}

/// Where an aggregate row of `metric_segments` stands in the table's key order (dimension,
/// value, key, segment, bucket; text by UTF-8 bytes, as both engines compare it there):
/// how far a catch-up has written (`Store.catchUpSegments`).
struct SegmentRowKey: Hashable, Comparable, Sendable {
    var dimension: String, value: String, key: String, segment: String, bucket: Millis

    init(dimension: String, value: String, key: String, segment: String, bucket: Millis) {
        (self.dimension, self.value, self.key, self.segment, self.bucket) = (dimension, value, key, segment, bucket)
    }

    init(_ row: SegmentSums.Row) {
        self.init(dimension: row.dimension.rawValue, value: row.value, key: row.key, segment: row.segment.rawValue, bucket: row.bucket)
    }

    static func < (a: SegmentRowKey, b: SegmentRowKey) -> Bool {
        for (x, y) in [(a.dimension, b.dimension), (a.value, b.value), (a.key, b.key), (a.segment, b.segment)] where !x.utf8.elementsEqual(y.utf8) {
            return x.utf8.lexicographicallyPrecedes(y.utf8)
        }
        return a.bucket < b.bucket
    }
}
