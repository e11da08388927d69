import Foundation
import XCTest
@testable import SubscriptionCore

/// Project Wycheproof's ECDSA P-256 / SHA-256 vectors (Fixtures/wycheproof, Apache 2.0) through
/// every path the ES256 verifier has: raw r||s by libcrypto, raw r||s by the key's table of
/// multiples and the hand-written scalar inverse, and DER by libcrypto. Every `valid` vector is
/// accepted and every `invalid` one refused. `acceptable` vectors (legal but discouraged
/// encodings) are only required to give the same answer on every raw path.
final class WycheproofTests: XCTestCase {
    struct Vector { let key: Data; let message: Data; let signature: Data; let result: String; let id: Int; let comment: String }

    static func vectors(_ file: String) throws -> [Vector] {
        let url = VerificationTests.fixtureDirectory.deletingLastPathComponent().appendingPathComponent("wycheproof/\(file)")
        let root = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        var out: [Vector] = []
        for group in try XCTUnwrap(root["testGroups"] as? [[String: Any]]) {
            let key = try XCTUnwrap(hex(try XCTUnwrap(group["publicKeyDer"] as? String)))
            for t in try XCTUnwrap(group["tests"] as? [[String: Any]]) {
                out.append(Vector(key: key, message: try XCTUnwrap(hex(t["msg"] as! String)), signature: try XCTUnwrap(hex(t["sig"] as! String)),
                                  result: t["result"] as! String, id: t["tcId"] as! Int, comment: t["comment"] as? String ?? ""))
            }
        }
        return out
    }

    static func hex(_ text: String) -> Data? {
        var data = Data(capacity: text.count / 2)
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(index, offsetBy: 2, limitedBy: text.endIndex) ?? text.endIndex
            guard let byte = UInt8(text[index..<next], radix: 16) else { return nil }
            data.append(byte)
            index = next
        }
        return data
    }

    /// A valid vector must be accepted and an invalid one refused; acceptable ones may go either way.
    func check(_ v: Vector, accepted: Bool, path: String, counted: UnsafeMutablePointer<(valid: Int, invalid: Int)>?) {
        switch v.result {
        case "valid":
            XCTAssertTrue(accepted, "#\(v.id) \(v.comment): valid signature refused by \(path)")
            counted?.pointee.valid += 1
        case "invalid":
            XCTAssertFalse(accepted, "#\(v.id) \(v.comment): invalid signature accepted by \(path)")
            counted?.pointee.invalid += 1
        default:
            break
        }
    }

    func testRawSignatureVectorsOnTheLibcryptoAndTablePaths() throws {
        let vectors = try Self.vectors("ecdsa_secp256r1_sha256_p1363_test.json")
        XCTAssertGreaterThan(vectors.count, 200)
        var keys: [Data: (plain: ES256.PublicKey, table: ES256.PublicKey)] = [:]
        var counted = (valid: 0, invalid: 0)
        for v in vectors {
            // A key the vectors mean to be unusable is refused before any signature is read.
            guard let plain = keys[v.key]?.plain ?? ES256.PublicKey(subjectPublicKeyInfo: v.key, tableThreshold: .max),
                  let table = keys[v.key]?.table ?? ES256.PublicKey(subjectPublicKeyInfo: v.key, tableThreshold: 1) else {
                XCTAssertNotEqual(v.result, "valid", "#\(v.id) \(v.comment): key refused")
                continue
            }
            keys[v.key] = (plain, table)
            let byLibcrypto = ES256.isValidSignature(v.signature, of: v.message, by: plain)
            let byTable = ES256.isValidSignature(v.signature, of: v.message, by: table)
            // A signature of the wrong length is refused before any key is used.
            if v.signature.count == ES256.signatureLength { XCTAssertTrue(table.hasTable, "#\(v.id): the table path was taken") }
            XCTAssertEqual(byLibcrypto, byTable, "#\(v.id) \(v.comment): the two paths disagree")
            check(v, accepted: byLibcrypto, path: "libcrypto", counted: &counted)
            check(v, accepted: byTable, path: "the table", counted: nil)
        }
        XCTAssertGreaterThan(counted.valid, 50)
        XCTAssertGreaterThan(counted.invalid, 80)
    }

    func testDERSignatureVectorsOnTheDERPath() throws {
        let vectors = try Self.vectors("ecdsa_secp256r1_sha256_test.json")
        XCTAssertGreaterThan(vectors.count, 300)
        var keys: [Data: ES256.PublicKey] = [:]
        var counted = (valid: 0, invalid: 0)
        for v in vectors {
            guard let key = keys[v.key] ?? ES256.PublicKey(subjectPublicKeyInfo: v.key, tableThreshold: .max) else {
                XCTAssertNotEqual(v.result, "valid", "#\(v.id) \(v.comment): key refused")
                continue
            }
            keys[v.key] = key
            let digest = [UInt8](ContentDigest.sha256(v.message))
            let accepted = [UInt8](v.signature).withUnsafeBufferPointer { der in
                digest.withUnsafeBufferPointer { key.verify(der: der, digest: $0) }
            }
            check(v, accepted: accepted, path: "DER", counted: &counted)
        }
        XCTAssertGreaterThan(counted.valid, 50)
        XCTAssertGreaterThan(counted.invalid, 100)
    }
}
