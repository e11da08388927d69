/// Prices arrive in milliunits (9990 = 9.99).
public enum Money {
    public static func format(milliunits: Int64, currency: String) -> String {
        let negative = milliunits < 0
        let v = abs(milliunits)
        let whole = v / 1000, cents = (v % 1000) / 10
        return "\(negative ? "-" : "")\(whole).\(cents < 10 ? "0" : "")\(cents) \(currency)"
    }
}
