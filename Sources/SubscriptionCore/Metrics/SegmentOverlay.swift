import Foundation

/// The by-segment aggregate rows a reader sums in memory for the subscriptions still
/// pending (`Store.segmentOverlay`), indexed by dimension and value for the reports' look-ups.
struct SegmentOverlay: Sendable {
    typealias Row = (segment: CountSegment, bucket: Millis, delta: Int)
    /// By dimension, value and key.
    private var rows: [SegmentDimension: [String: [String: [Row]]]] = [:]

    init(_ sums: [SegmentSums.Row]) {
        for r in sums where r.delta != 0 {
            rows[r.dimension, default: [:]][r.value, default: [:]][r.key, default: []].append((r.segment, r.bucket, r.delta))
        }
    }

    var isEmpty: Bool { rows.isEmpty }

    /// Deltas by bucket of `key` in `segment` for `filter`'s part, in [from, to).
    func deltas(_ filter: SegmentFilter, key: String, segment: CountSegment, from: Millis, to: Millis) -> [Millis: Int] {
        var out: [Millis: Int] = [:]
        for r in rows[filter.dimension]?[filter.value]?[key] ?? [] where r.segment == segment && r.bucket >= from && r.bucket < to {
            out[r.bucket, default: 0] += r.delta
        }
        return out
    }

    /// Sums by key and segment of `filter`'s part over every bucket before `instant`.
    func totals(_ filter: SegmentFilter, keys: Set<String>, before instant: Millis) -> [(String, CountSegment, Int)] {
        var out: [String: [CountSegment: Int]] = [:]
        for (key, list) in rows[filter.dimension]?[filter.value] ?? [:] where keys.contains(key) {
            for r in list where r.bucket < instant { out[key, default: [:]][r.segment, default: 0] += r.delta }
        }
        return out.flatMap { key, bySegment in bySegment.map { (key, $0.key, $0.value) } }
    }

    /// The values `dimension` takes among the pending rows.
    func values(_ dimension: SegmentDimension) -> [String] { Array((rows[dimension] ?? [:]).keys) }
}
