import XCTest
@testable import TerminalUI

final class ASCIIFallbackTests: XCTestCase {
    func testBordersGlyphsAndSparklinesBecomeASCIIOfTheSameWidth() {
        XCTAssertEqual(ASCIIFallback.text("┌ Subscription ─┐"), "+ Subscription -+")
        XCTAssertEqual(ASCIIFallback.text("│ x │"), "| x |")
        XCTAssertEqual(ASCIIFallback.text("└──┘ ├┤"), "+--+ ++")
        XCTAssertEqual(ASCIIFallback.text("store: demo.db  UTC  ● live"), "store: demo.db  UTC  * live")
        XCTAssertEqual(ASCIIFallback.text("subdesk ▸ feed · 12/553 …"), "subdesk > feed . 12/553 ~")
        XCTAssertEqual(ASCIIFallback.text("▁▂▃▄▅▆▇█"), "__.-==##")
        XCTAssertEqual(ASCIIFallback.text("plain ascii"), "plain ascii")
    }

    func testAnyOtherCharacterKeepsItsColumns() {
        let text = "用户 é ✕ \u{1F600}"
        let ascii = ASCIIFallback.text(text)
        XCTAssertTrue(ascii.unicodeScalars.allSatisfy(\.isASCII), ascii)
        XCTAssertEqual(TextWidth.width(of: ascii), TextWidth.width(of: text), ascii)
        XCTAssertEqual(ascii, "???? ? x ??")
    }
}
