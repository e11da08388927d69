import XCTest
@testable import TerminalUI

final class SafeTextTests: XCTestCase {
    func testPlainTextIsUnchanged() {
        XCTAssertEqual(SafeText.sanitize("app.monthly 9.99 USD"), "app.monthly 9.99 USD")
        XCTAssertEqual(SafeText.sanitize("漢字 🎉 é"), "漢字 🎉 é")
        XCTAssertTrue(SafeText.isSafe("2000000412345678"))
    }

    func testEscapeSequenceIsDefused() {
        // A payload trying to clear the screen and retitle the window.
        let hostile = "app\u{1B}[2J\u{1B}]0;pwned\u{07}.monthly"
        let safe = SafeText.sanitize(hostile)
        XCTAssertEqual(safe, "app\\e[2J\\e]0;pwned\\x07.monthly")
        XCTAssertFalse(safe.unicodeScalars.contains { $0.value < 0x20 })
    }

    func testLineControlsBecomeVisible() {
        XCTAssertEqual(SafeText.sanitize("a\rb\nc\td"), "a\\rb\\nc\\td")
        XCTAssertEqual(SafeText.sanitize("a\r\nb"), "a\\r\\nb", "CRLF is one Character but two escapes")
        XCTAssertEqual(SafeText.sanitize("\u{0}\u{7F}"), "\\x00\\x7F")
    }

    func testC1ControlsAreEscaped() {
        XCTAssertEqual(SafeText.sanitize("x\u{9B}31m"), "x\\u{9B}31m", "CSI as a single C1 byte")
        XCTAssertEqual(SafeText.sanitize("\u{85}"), "\\u{85}")
    }

    func testBidiOverridesAndIsolatesAreEscaped() {
        // "gpj.exe" displayed reversed would read as "exe.jpg".
        XCTAssertEqual(SafeText.sanitize("invoice\u{202E}gpj.exe"), "invoice\\u{202E}gpj.exe")
        for value: UInt32 in [0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069] {
            let text = String(Character(Unicode.Scalar(value)!))
            XCTAssertFalse(SafeText.isSafe(text), String(value, radix: 16))
            XCTAssertEqual(SafeText.sanitize(text), "\\u{\(String(value, radix: 16, uppercase: true))}")
        }
    }

    /// Characters that draw nothing make two ids look alike and shift terminal cells.
    func testInvisibleFormatCharactersBecomeVisible() {
        XCTAssertEqual(SafeText.sanitize("user-10\u{200B}01"), "user-10\\u{200B}01")
        XCTAssertNotEqual(SafeText.sanitize("user-10\u{200B}01"), SafeText.sanitize("user-1001"))
        for value: UInt32 in [0x200B, 0x200C, 0x200D, 0x200E, 0x200F, 0x061C, 0x2060, 0x2061, 0x2064, 0xFEFF, 0x00AD, 0xE0041, 0x180E] {
            let text = "a" + String(Character(Unicode.Scalar(value)!)) + "b"
            XCTAssertFalse(SafeText.isSafe(text), String(value, radix: 16))
            XCTAssertEqual(SafeText.sanitize(text), "a\\u{" + String(format: value > 0xFF ? "%04X" : "%02X", value) + "}b")
        }
        // Visible non-ASCII text is untouched: accents, CJK, emoji, NBSP, combining marks.
        for text in ["café", "漢字かな", "🎉", "a\u{A0}b", "e\u{301}", "ا"] { XCTAssertTrue(SafeText.isSafe(text), text) }
    }

    func testSanitizingTwiceChangesNothing() {
        let once = SafeText.sanitize("a\u{1B}b\\e\u{202E}")
        XCTAssertEqual(SafeText.sanitize(once), once)
    }

    func testScreenBufferSanitizesWhatItIsGiven() {
        var buffer = ScreenBuffer(width: 12, height: 1)
        buffer.put("a\u{1B}[31mb", x: 0, y: 0)
        XCTAssertEqual(buffer.lines(), ["a\\e[31mb"])
    }
}
