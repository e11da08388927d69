import XCTest
@testable import TerminalUI

final class TextWidthTests: XCTestCase {
    func testASCIIIsOneColumnEach() {
        XCTAssertEqual(TextWidth.width(of: "app.monthly"), 11)
        XCTAssertEqual(TextWidth.width(of: ""), 0)
    }

    func testCJKAndKanaAndHangulAreTwoColumns() {
        XCTAssertEqual(TextWidth.width(of: "漢字"), 4)
        XCTAssertEqual(TextWidth.width(of: "カタカナ"), 8)
        XCTAssertEqual(TextWidth.width(of: "ひらがな"), 8)
        XCTAssertEqual(TextWidth.width(of: "한국어"), 6)
        XCTAssertEqual(TextWidth.width(of: "ＡＢ"), 4, "fullwidth forms")
        XCTAssertEqual(TextWidth.width(of: "a漢b"), 4)
    }

    func testEmojiPresentationIsTwoColumns() {
        XCTAssertEqual(TextWidth.width(of: "🎉"), 2)
        XCTAssertEqual(TextWidth.width(of: "😀"), 2)
        XCTAssertEqual(TextWidth.width(of: "🧾"), 2)
        XCTAssertEqual(TextWidth.width(of: "👍🏽"), 2, "skin tone modifier joins the base")
        XCTAssertEqual(TextWidth.width(of: "👩‍👩‍👧"), 2, "ZWJ family sequence is one glyph")
        XCTAssertEqual(TextWidth.width(of: "🇯🇵"), 2, "flag")
        XCTAssertEqual(TextWidth.width(of: "❤️"), 2, "text symbol with emoji selector")
        XCTAssertEqual(TextWidth.width(of: "❤"), 1, "text presentation by default")
        XCTAssertEqual(TextWidth.width(of: "🌡"), 1, "text-presentation symbol inside the pictograph block")
    }

    func testCombiningMarksJoinersAndSelectorsAreZero() {
        XCTAssertEqual(TextWidth.width(of: "e\u{301}"), 1)
        XCTAssertEqual(TextWidth.width(of: Unicode.Scalar(0x301)!), 0)
        XCTAssertEqual(TextWidth.width(of: Unicode.Scalar(0x200D)!), 0)
        XCTAssertEqual(TextWidth.width(of: Unicode.Scalar(0xFE0F)!), 0)
        XCTAssertEqual(TextWidth.width(of: Unicode.Scalar(0x200B)!), 0)
        XCTAssertEqual(TextWidth.width(of: "각"), 2, "precomposed Hangul syllable")
        XCTAssertEqual(TextWidth.width(of: "\u{1100}\u{1161}\u{11A8}"), 2, "conjoining jamo form one wide syllable")
    }

    func testBoxDrawingAndBlocksAreOneColumn() {
        XCTAssertEqual(TextWidth.width(of: "┌─┐│└┘├┤"), 8)
        XCTAssertEqual(TextWidth.width(of: "▁▂▃▄▅▆▇█"), 8)
        XCTAssertEqual(TextWidth.width(of: "…▸●↑"), 4)
    }

    func testTruncateAddsEllipsisOnlyWhenCutting() {
        XCTAssertEqual(TextWidth.truncate("subscribers", toWidth: 11), "subscribers")
        XCTAssertEqual(TextWidth.truncate("subscribers", toWidth: 6), "subsc…")
        XCTAssertEqual(TextWidth.truncate("subscribers", toWidth: 1), "…")
        XCTAssertEqual(TextWidth.truncate("subscribers", toWidth: 0), "")
    }

    func testTruncateNeverSplitsAWideCharacter() {
        // 5 columns: "漢字" is 4 wide, with the "…" 5; the third ideograph cannot be halved.
        XCTAssertEqual(TextWidth.truncate("漢字漢字", toWidth: 5), "漢字…")
        XCTAssertEqual(TextWidth.truncate("漢字漢字", toWidth: 4), "漢…")
        XCTAssertEqual(TextWidth.width(of: TextWidth.truncate("漢字漢字", toWidth: 4)), 3)
        XCTAssertEqual(TextWidth.truncate("🎉🎉🎉", toWidth: 4), "🎉…")
    }

    func testFitPadsToExactWidth() {
        XCTAssertEqual(TextWidth.fit("ab", toWidth: 5), "ab   ")
        XCTAssertEqual(TextWidth.fit("ab", toWidth: 5, alignment: .right), "   ab")
        XCTAssertEqual(TextWidth.fit("ab", toWidth: 5, alignment: .center), " ab  ")
        XCTAssertEqual(TextWidth.fit("漢字漢字", toWidth: 4), "漢… ", "a wide char that would cross the edge leaves a space")
        XCTAssertEqual(TextWidth.width(of: TextWidth.fit("🎉🎉🎉", toWidth: 4)), 4)
    }

    func testPrefixAndSuffixByColumns() {
        XCTAssertEqual(TextWidth.prefix("a漢字", maxWidth: 4).text, "a漢")
        XCTAssertEqual(TextWidth.prefix("a漢字", maxWidth: 4).width, 3)
        XCTAssertEqual(TextWidth.suffix("a漢字", maxWidth: 3).text, "字")
        XCTAssertEqual(TextWidth.suffix("abc", maxWidth: 2).text, "bc")
    }

    func testWrapBreaksAtSpacesAndSplitsLongWords() {
        XCTAssertEqual(TextWidth.wrap("grant entitlement until a date", toWidth: 12),
                       ["grant", "entitlement", "until a date"])
        XCTAssertEqual(TextWidth.wrap("2000000412345678", toWidth: 6), ["200000", "041234", "5678"])
        XCTAssertEqual(TextWidth.wrap("one\ntwo", toWidth: 10), ["one", "two"])
        XCTAssertEqual(TextWidth.wrap("漢字漢字", toWidth: 5), ["漢字", "漢字"])
    }
}
