/// Milliseconds since 1970-01-01 UTC, the unit Apple uses for every date.
public typealias Millis = Int64

extension Int64 {
    /// `value` rounded toward zero, held at `Int64.min` or `Int64.max` when it lies beyond
    /// them, and 0 for NaN: the conversion for a Double that came from outside (a row, a
    /// header, a payload's arithmetic), which `Int64(_:)` would trap on.
    public init(saturating value: Double) {
        if value.isNaN { self = 0 } else if value >= 9_223_372_036_854_775_807.0 { self = .max }
        else if value <= -9_223_372_036_854_775_808.0 { self = .min } else { self = Int64(value) }
    }
}
