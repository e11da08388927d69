import XCTest
@testable import SubscriptionCore

/// Money as `counts`' text table writes it: to the cent, thousands grouped; the screen's
/// narrow day columns keep the compact form.
final class MoneyTextTests: XCTestCase {
    func testCentsWithThousandsGrouped() {
        XCTAssertEqual(Money.cents(844.87), "844.87")
        XCTAssertEqual(Money.cents(1_499.04), "1,499.04")
        XCTAssertEqual(Money.cents(1_234_567.5), "1,234,567.50")
        XCTAssertEqual(Money.cents(0), "0.00")
        XCTAssertEqual(Money.cents(9.999), "10.00")
        XCTAssertEqual(Money.cents(-12_000), "-12,000.00")
        XCTAssertEqual(Money.cents(-0.001), "0.00", "no minus on what rounds to nothing")
        // A sum past 64 bits of cents, or not a number, is printed, never a trap.
        XCTAssertEqual(Money.cents(.infinity), "inf")
        XCTAssertEqual(Money.cents(.nan), "nan")
        XCTAssertEqual(Money.cents(1e300), "1e+300")
    }

    func testATableGivesMoneyToTheCentOrCompact() {
        var day = DayCounts(day: "2026-11-01", start: 0, values: [:])
        day.money = [.mrr: 844.87, .revenue: 1_499.04]
        XCTAssertEqual(day.text(.mrr, money: .cents), "844.87")
        XCTAssertEqual(day.text(.revenue, money: .cents), "1,499.04")
        XCTAssertEqual(day.text(.mrr), "845", "the screen's five-character days")
        XCTAssertEqual(day.text(.revenue), "1.5k")
        XCTAssertEqual(DayCounts(day: "2026-11-02", start: 0, values: [:]).text(.mrr, money: .cents), "-", "undefined stays -")
    }
}
