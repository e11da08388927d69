/// Prices arrive in milliunits (9990 = 9.99).
public enum Money {
    /// An amount in units to the cent, thousands grouped: `844.87`, `1,499.04`, `-12,000.00`.
    public static func cents(_ units: Double) -> String {
        // Past what 64 bits of cents hold (or not a number): as Swift prints it, never a trap.
        guard units.isFinite, abs(units) < 9e16 else { return String(units) }
        let total = Int64((abs(units) * 100).rounded())
        var whole = String(total / 100)
        var groups: [String] = []
        while whole.count > 3 {
            groups.insert(String(whole.suffix(3)), at: 0)
            whole.removeLast(3)
        }
        groups.insert(whole, at: 0)
        let cents = total % 100
        return (units < 0 && total > 0 ? "-" : "") + groups.joined(separator: ",") + "." + (cents < 10 ? "0" : "") + String(cents)
    }

    public static func format(milliunits: Int64, currency: String) -> String {
        let negative = milliunits < 0
        let v = abs(milliunits)
        let whole = v / 1000, cents = (v % 1000) / 10
        return "\(negative ? "-" : "")\(whole).\(cents < 10 ? "0" : "")\(cents) \(currency)"
    }
}
