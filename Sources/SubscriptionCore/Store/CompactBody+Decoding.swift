import Foundation

extension CompactBody {
    // MARK: Decoding

    struct Corrupt: Error, CustomStringConvertible {
        let description: String
    }

    /// The original body bytes of a compact body.
    static func decode(_ data: Data, header: (Int64) throws -> String) throws -> Data {
        let b = [UInt8](data)
        var i = 0
        func fail(_ why: String) -> Corrupt { Corrupt(description: "stored body is corrupt: \(why)") }
        func varint() throws -> UInt64 {
            var v: UInt64 = 0, shift: UInt64 = 0
            while true {
                guard i < b.count, shift < 64 else { throw fail("truncated number") }
                let byte = b[i]; i += 1
                v |= UInt64(byte & 0x7f) << shift
                if byte < 0x80 { return v }
                shift += 7
            }
        }
        func jws() throws -> (header: String, payload: [UInt8], signature: [UInt8]) {
            let h = try header(Int64(try varint()))
            let n = Int(try varint())
            guard n >= 0, i + n + 64 <= b.count else { throw fail("truncated payload") }
            let payload = try detokenize(b[i..<(i + n)])
            let signature = Array(b[(i + n)..<(i + n + 64)])
            i += n + 64
            return (h, payload, signature)
        }
        guard b.first == format else { throw fail("unknown format \(b.first ?? 0)") }
        i = 1
        let outer = try jws()
        let count = Int(try varint())
        var nested: [String] = []
        for _ in 0..<count {
            let n = try jws()
            nested.append(n.header + "." + Base64URL.encode(Data(n.payload)) + "." + Base64URL.encode(Data(n.signature)))
        }
        var payload: [UInt8] = []
        var k = 0
        while k < outer.payload.count {
            if outer.payload[k] == 0, k + 1 < outer.payload.count, outer.payload[k + 1] >= 0x80,
               Int(outer.payload[k + 1]) - 0x80 < nested.count {
                payload += Array(nested[Int(outer.payload[k + 1]) - 0x80].utf8)
                k += 2
            } else {
                payload.append(outer.payload[k])
                k += 1
            }
        }
        let text = signedPayloadPrefix + outer.header + "." + Base64URL.encode(Data(payload)) + "." + Base64URL.encode(Data(outer.signature)) + "\"}"
        return Data(text.utf8)
    }

    static func detokenize(_ bytes: ArraySlice<UInt8>) throws -> [UInt8] {
        let t = table
        return try bytes.withUnsafeBufferPointer { b in
            // Measure first, then fill an array of exactly that size.
            var length = 0, i = 0
            while i < b.count {
                if let token = try t.token(in: b, at: i) {
                    length += t.pattern(token.index).count
                    i += token.length
                } else {
                    length += 1
                    i += 1
                }
            }
            return try [UInt8](unsafeUninitializedCapacity: length) { out, count in
                var i = 0
                while i < b.count {
                    if let token = try t.token(in: b, at: i) {
                        let p = t.pattern(token.index)
                        memcpy(out.baseAddress! + count, p.baseAddress!, p.count)
                        count += p.count
                        i += token.length
                    } else {
                        out[count] = b[i]
                        count += 1
                        i += 1
                    }
                }
            }
        }
    }
}
