import Foundation
import XCTest
@testable import SubscriptionCore
@testable import Dashboard

final class PayloadTextTests: XCTestCase {
    let utc = ZonedTime.utc

    func jws(_ payload: String, header: String = #"{"alg":"ES256","x5c":["a","b","c"]}"#) -> String {
        Base64URL.encode(Data(header.utf8)) + "." + Base64URL.encode(Data(payload.utf8)) + ".c2lnbmF0dXJl"
    }

    func testJSONKeepsDocumentOrderExactNumbersAndEscapes() throws {
        let text = #"{"z": 1, "a": [true, false, null], "big": 2000000412345678901, "f": 1.50, "s": "tab\tquote\"slash\/ \ud83d\ude00 \u00e9"}"#
        let value = try XCTUnwrap(JSONValue.parse(Array(text.utf8)))
        guard case .object(let members) = value else { return XCTFail() }
        XCTAssertEqual(members.map(\.key), ["z", "a", "big", "f", "s"])
        XCTAssertEqual(value["big"], .number("2000000412345678901"))
        XCTAssertEqual(value["f"], .number("1.50"))
        XCTAssertEqual(value["a"], .array([.bool(true), .bool(false), .null]))
        XCTAssertEqual(value["s"], .string("tab\tquote\"slash/ 😀 é"))
    }

    func testJSONRefusesWhatIsNotOneValue() {
        for text in ["", "{", #"{"a":}"#, "[1,]", "1 2", #"{"a" 1}"#, "nul", "\"open"] {
            XCTAssertNil(JSONValue.parse(Array(text.utf8)), text)
        }
        let deep = String(repeating: "[", count: 200) + String(repeating: "]", count: 200)
        XCTAssertNil(JSONValue.parse(Array(deep.utf8)), "nesting is bounded")
    }

    func testNestedJWSPayloadsAreDecodedInPlace() {
        let transaction = jws(#"{"transactionId":"2000000000000002","purchaseDate":1794830400000}"#)
        let payload = #"{"notificationType":"DID_RENEW","data":{"signedTransactionInfo":"\#(transaction)"}}"#
        let body = Data(#"{"signedPayload":"\#(jws(payload))"}"#.utf8)
        XCTAssertEqual(PayloadText.notificationLines(body, time: utc), [
            "{",
            #"  "signedPayload": JWS(ES256, x5c: 3 certificates) {"#,
            #"    "notificationType": "DID_RENEW","#,
            #"    "data": {"#,
            #"      "signedTransactionInfo": JWS(ES256, x5c: 3 certificates) {"#,
            #"        "transactionId": "2000000000000002","#,
            #"        "purchaseDate": 1794830400000  // 2026-11-16 12:00:00 UTC"#,
            "      }",
            "    }",
            "  }",
            "}",
        ])
    }

    func testDatesAreWrittenInTheChosenZone() {
        let body = Data(#"{"signedDate": 1794830400000}"#.utf8)
        let tokyo = ZonedTime(zone: TimeZone(identifier: "Asia/Tokyo")!)
        XCTAssertEqual(PayloadText.notificationLines(body, time: tokyo)[1],
                       #"  "signedDate": 1794830400000  // 2026-11-16 21:00:00 Asia/Tokyo"#)
    }

    func testStringsThatOnlyLookLikeJWSStayStrings() {
        let body = Data(#"{"signedPayload":"not.a-jws","version":"2.0.1"}"#.utf8)
        let lines = PayloadText.notificationLines(body, time: utc)
        XCTAssertEqual(lines[1], #"  "signedPayload": "not.a-jws","#)
        XCTAssertEqual(lines[2], #"  "version": "2.0.1""#)
    }

    func testControlAndBidiCharactersAreVisibleEscapes() {
        let payload = #"{"productId":"app\u001b[31mred\u0007","note":"\#u{202E}gnp.exe","path":"C:\\dir \"quoted\""}"#
        let lines = PayloadText.notificationLines(Data(#"{"signedPayload":"\#(jws(payload))"}"#.utf8), time: utc)
        XCTAssertEqual(lines[2], #"    "productId": "app\e[31mred\x07","#)
        XCTAssertEqual(lines[3], #"    "note": "\u{202E}gnp.exe","#)
        XCTAssertEqual(lines[4], #"    "path": "C:\\dir \"quoted\"""#, "backslashes are escaped, so an escape shown is never literal text")
    }

    func testABodyThatIsNotJSONIsShownRawAndEscaped() {
        let lines = PayloadText.notificationLines(Data("hello\u{1B}[2J\nworld".utf8), time: utc)
        XCTAssertEqual(lines, ["body is not JSON (15 bytes):", #"hello\e[2J"#, "world"])
    }

    func testQuarantinedBodiesShowDecodedAndRaw() {
        let lines = PayloadText.quarantinedLines(Data(#"{"a":1}"#.utf8), time: utc)
        XCTAssertEqual(lines, ["decoded:", "  {", #"    "a": 1"#, "  }", "", "raw (7 bytes):", #"  {"a":1}"#])
    }

    func testTransactionFieldsWithPriceAndZone() {
        let transaction = TransactionRecord(
            transactionId: "2000000000000002", originalTransactionId: "2000000000000001", productId: "app.monthly",
            purchaseDate: 1_794_830_400_000, expiresDate: 1_797_422_400_000, offerType: .introductory, offerDiscountType: "FREE_TRIAL",
            price: 9990, currency: "USD", appAccountToken: "tok\u{1B}en", signedDate: 1_794_830_400_000)
        let lines = PayloadText.transactionLines(transaction, time: utc)
        XCTAssertTrue(lines.contains("price                  9.99 USD"), lines.joined(separator: "\n"))
        XCTAssertTrue(lines.contains("purchaseDate           2026-11-16 12:00:00 UTC  (1794830400000)"), lines.joined(separator: "\n"))
        XCTAssertTrue(lines.contains("offer                  free trial"))
        XCTAssertTrue(lines.contains(#"appAccountToken        tok\een"#))
    }

    func testHardWrapKeepsIndentationAndEveryCharacter() {
        XCTAssertEqual(TextLayout.hardWrap("  abcdefgh", width: 4), ["  ab", "cdef", "gh"])
        XCTAssertEqual(TextLayout.hardWrap("", width: 4), [""])
        XCTAssertEqual(TextLayout.hardWrap("漢字漢字", width: 5), ["漢字", "漢字"], "wide characters are never split")
    }
}
