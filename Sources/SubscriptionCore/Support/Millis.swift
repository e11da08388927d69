/// Milliseconds since 1970-01-01 UTC, the unit Apple uses for every date.
public typealias Millis = Int64
