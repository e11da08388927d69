import Foundation
import XCTest
@testable import SubscriptionCore

/// Numbers from outside (typed, read back, in a payload) convert without trapping.
final class OutsideNumberTests: XCTestCase {
    func testOffsetsPastAHundredYearsAreRefusedNotOverflowed() {
        XCTAssertEqual(DateText.parseOffset("+36500d"), 36_500 * 86_400_000)
        XCTAssertNil(DateText.parseOffset("+36501d"))
        XCTAssertNil(DateText.parseOffset("-99999999999999d"))
        XCTAssertNil(DateText.parseOffset("+106751991167d"))
        XCTAssertNil(DateText.parseOffset("+36500d1h"))
    }

    func testDatesOutsideYearsOneTo9999AreRefused() {
        XCTAssertNil(DateText.parse("9223372036854775807"))
        XCTAssertNil(DateText.parse("-9223372036854775808"))
        XCTAssertEqual(DateText.parse("253402300799999"), 253_402_300_799_999)
        XCTAssertEqual(DateText.millis(Date(timeIntervalSince1970: 1e300)), DateText.representable.upperBound)
        XCTAssertEqual(DateText.millis(Date(timeIntervalSince1970: -1e300)), DateText.representable.lowerBound)
        XCTAssertEqual(DateText.millis(Date(timeIntervalSince1970: .nan)), 0)
    }

    func testSaturatingConversion() {
        XCTAssertEqual(Int64(saturating: 1e300), .max)
        XCTAssertEqual(Int64(saturating: -1e300), .min)
        XCTAssertEqual(Int64(saturating: 9_223_372_036_854_775_807.0), .max)
        XCTAssertEqual(Int64(saturating: .nan), 0)
        XCTAssertEqual(Int64(saturating: -12.9), -12)
    }

    /// A price over a period of a millisecond (both within what a payload may say) is a
    /// monthly price too large for 64 bits: held at the maximum, not a trap.
    func testAMonthlyPriceOfAnInstantSaturates() {
        XCTAssertEqual(MetricContributions.monthly(price: 9_000_000_000_000_000, periodMs: 1), .max)
        XCTAssertEqual(MetricContributions.monthly(price: 9_990, periodMs: 30 * 86_400_000), 9_990)
    }

    func testCohortMonthsAreFourDigitYearsFrom1970() {
        XCTAssertNil(CohortPeriod.month.parse("-0001-01"))
        XCTAssertNil(CohortPeriod.month.parse("99999999999-01"))
        XCTAssertNil(CohortPeriod.month.parse("1969-12"))
        XCTAssertEqual(CohortPeriod.month.parse("1970-01"), 0)
        XCTAssertNotNil(CohortPeriod.month.parse("9999-12"))
        XCTAssertNil(CohortPeriod.week.parse("2026-W054"))
        XCTAssertEqual(CohortPeriod.week.parse("2026-W11"), CohortPeriod.week.parse("2026-03-09"))
    }
}
