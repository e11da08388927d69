import Foundation
import XCTest
@testable import SubscriptionCore

/// The hot-path JSON reader accepts and refuses exactly what Foundation's does, on the
/// inputs that matter here, and reads values the same.
final class FastJSONTests: XCTestCase {
    func testAgreesWithFoundationOnValidityAndValues() throws {
        let inputs = [
            #"{}"#, #"[]"#, #"{"a":1,"b":-2,"c":1.5,"d":1e3,"e":true,"f":false,"g":null,"h":"x"}"#,
            #"{"s":"\u00e9\ud83d\ude00\n\t\"\\\/"}"#, #"{"n":9007199254740993}"#, #"{"big":1e400}"#,
            #"{"a":[1,[2,[3]]],"b":{"c":{}}}"#, "  {\"a\" : 1 }\n", #"{"a":01}"#, #"{"a":1.}"#, #"{"a":.5}"#,
            #"{"a":-}"#, #"{"a" 1}"#, #"{'a':1}"#, #"{"a":tru}"#, #"{"a":"x"} x"#, "{\"a\":\"\u{1}\"}",
            #"{"a":"\x"}"#, #"{"a":"\ud800"}"#, #"{"a":"é"}"#, "\"just a string\"", "12", "", "{", #"{"a":"\u12"}"#,
            #"{"price":12990,"expiresDate":1780272000123.5,"flag":true}"#,
        ]
        for text in inputs {
            let data = Data(text.utf8)
            let foundation = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
            let fast = try? FastJSON.parse(data)
            XCTAssertEqual(foundation == nil, fast == nil, "validity differs for \(text)")
            if let foundation, let fast {
                XCTAssertEqual(describe(foundation), describe(fast), text)
            }
        }
        XCTAssertNil(try? FastJSON.parse(Data([0x22, 0xff, 0xfe, 0x22])), "invalid UTF-8 is refused")
        // Foundation lets a trailing comma through; RFC 8259 does not, and neither does this reader.
        XCTAssertNil(try? FastJSON.parse(Data(#"{"a":1,}"#.utf8)))
    }

    /// Foundation keeps a repeated key's last value; this reader refuses the object, at any
    /// depth, and names the key.
    func testARepeatedKeyIsRefusedAtAnyDepthAndNamed() {
        for (text, key) in [(#"{"a":1,"b":2,"a":3}"#, "a"), (#"{"o":{"x":1,"x":1}}"#, "x"),
                            (#"[{"k":[{"d":true,"d":false}]}]"#, "d"), (#"{"signedPayload":"A","signedPayload":"B"}"#, "signedPayload"),
                            (#"{"\u0061":1,"a":2}"#, "a")] {
            XCTAssertThrowsError(try FastJSON.parse(Data(text.utf8)), text) { error in
                guard case .duplicateKey(let named, _)? = error as? FastJSON.Failure else { return XCTFail("\(error)") }
                XCTAssertEqual(named, key)
                XCTAssertEqual(FastJSON.describe(error), "duplicate key \"\(key)\"")
            }
        }
        XCTAssertNoThrow(try FastJSON.parse(Data(#"{"a":{"a":1},"b":[{"a":1},{"a":2}]}"#.utf8)), "the same key in other objects is fine")
    }

    func testNestingPast512IsRefusedAsTooDeep() {
        let deep = Data((String(repeating: "[", count: 513) + String(repeating: "]", count: 513)).utf8)
        XCTAssertThrowsError(try FastJSON.parse(deep)) { XCTAssertEqual($0 as? FastJSON.Failure, .tooDeep) }
        let fine = Data((String(repeating: "[", count: 512) + String(repeating: "]", count: 512)).utf8)
        XCTAssertNoThrow(try FastJSON.parse(fine))
    }

    /// null reads as an absent field, whatever the field's type, from either parser.
    func testNullFieldsReadAsAbsent() throws {
        let text = #"{"s":null,"o":null,"a":null,"n":null,"d":{"x":null},"l":[null]}"#
        for dictionary in [try FastJSON.parse(Data(text.utf8)), try JSONSerialization.jsonObject(with: Data(text.utf8))] {
            let fields = JSONFields(dictionary: try XCTUnwrap(dictionary as? [String: Any]), path: "p")
            for key in ["s", "o", "a", "n", "missing"] { XCTAssertFalse(fields.has(key), key) }
            XCTAssertNil(try fields.string("s"))
            XCTAssertNil(try fields.object("o"))
            XCTAssertNil(try fields.objects("a"))
            XCTAssertNil(try fields.int64("n"))
            XCTAssertTrue(fields.has("d"))
            XCTAssertNil(try XCTUnwrap(try fields.object("d")).string("x"))
            XCTAssertThrowsError(try fields.string("d")) { XCTAssertEqual("\($0)", "p.d: expected a string") }
        }
    }

    /// A canonical text form of a parsed value, so both readers' outputs can be compared.
    func describe(_ v: Any) -> String {
        switch v {
        case let d as [String: Any]: return "{" + d.keys.sorted().map { "\($0):\(describe(d[$0]!))" }.joined(separator: ",") + "}"
        case let a as [Any]: return "[" + a.map(describe).joined(separator: ",") + "]"
        case let s as String: return "s:" + s
        case is NSNull: return "null"
        case let b as Bool where !(v is Int) && !(v is Double) && String(describing: type(of: v)).contains("Bool"): return "b:\(b)"
        case let n as NSNumber where JSONFields.isBool(n): return "b:\(n.boolValue)"
        case let n as Int: return "n:\(Double(n))"
        case let n as Double: return "n:\(n)"
        case let n as NSNumber: return "n:\(n.doubleValue)"
        default: return "?\(v)"
        }
    }
}

extension FastJSONTests {
    /// `\u0000` in a string would be stored cut short (SQLite) or not at all (PostgreSQL):
    /// it is refused, named, where a raw NUL byte already was.
    func testAStringHoldingNULIsRefusedAndNamed() {
        XCTAssertThrowsError(try FastJSON.parse(Data(#"{"a":"x\u0000y"}"#.utf8))) { error in
            XCTAssertEqual(error as? FastJSON.Failure, .nulInString(offset: 7))
            XCTAssertTrue(FastJSON.describe(error).hasPrefix(#"a string holds U+0000 (\u0000, at byte 7)"#), FastJSON.describe(error))
        }
        XCTAssertEqual(try FastJSON.parse(Data(#"{"a":"x\u0001y"}"#.utf8)) as? [String: String], ["a": "x\u{1}y"])
    }
}
