import Foundation

/// The decoded pieces of one verified JWS: what verification already worked out and
/// compact storage needs again.
public struct JWSPieces: Sendable {
    /// The header segment exactly as received.
    public var header: String
    /// The decoded payload: the JSON bytes exactly as signed.
    public var payload: Data
    /// The raw 64-byte signature.
    public var signature: Data

    public init(header: String, payload: Data, signature: Data) {
        self.header = header
        self.payload = payload
        self.signature = signature
    }

    /// Length of the compact JWS these pieces were decoded from, when its payload and
    /// signature segments carried no padding.
    var textLength: Int {
        header.utf8.count + 1 + Base64URL.unpaddedLength(of: payload.count) + 1 + Base64URL.unpaddedLength(of: signature.count)
    }
}

/// A V2 body's JWS pieces: the outer one, and each nested JWS with its exact text.
public struct NotificationPieces: Sendable {
    public var outer: JWSPieces
    public var nested: [(text: String, pieces: JWSPieces)]
}

/// A byte-exact, compact form of V2 notification bodies.
///
/// A V2 body is `{"signedPayload":"H.P.S"}` whose payload P nests two more JWS. Each
/// header H carries kilobytes of certificates and repeats in every body the same chain
/// signed, so headers are stored once (by id); payloads are kept as decoded JSON with
/// Apple's field names replaced by one- or two-byte tokens (bytes that never occur raw in
/// JSON); signatures as their 64 raw bytes. A body becomes compact only when decoding the
/// compact form gives back exactly the original bytes; anything else is stored as it came.
///
/// Format 1 (the token table below is part of it and must never change; add a format):
/// `0x01 | jws | varint(n) | n × jws`, where `jws = varint(headerId) | varint(len) | payload | 64-byte signature`,
/// and the outer payload holds `0x00 (0x80 + k)` where nested JWS k stood (a byte no token uses).
enum CompactBody {
    static let format: UInt8 = 1
    /// What a V2 body in Apple's exact form starts with; it ends with `"}`.
    static let signedPayloadPrefix = #"{"signedPayload":""#

    /// `"key":` and `"value"` patterns Apple's payloads repeat. Indices are format 1.
    static let patterns: [String] = {
        let keys = [
            "transactionId", "originalTransactionId", "webOrderLineItemId", "bundleId", "productId",
            "subscriptionGroupIdentifier", "purchaseDate", "originalPurchaseDate", "expiresDate", "quantity", "type",
            "inAppOwnershipType", "signedDate", "environment", "transactionReason", "storefront", "storefrontId", "price",
            "currency", "appTransactionId", "offerType", "offerIdentifier", "offerDiscountType", "offerPeriod",
            "appAccountToken", "revocationDate", "revocationReason", "isUpgraded", "autoRenewProductId", "autoRenewStatus",
            "renewalDate", "recentSubscriptionStartDate", "expirationIntent", "isInBillingRetryPeriod",
            "gracePeriodExpiresDate", "priceIncreaseStatus", "renewalPrice", "eligibleWinBackOfferIds",
            "notificationType", "subtype", "notificationUUID", "version", "data", "appAppleId", "bundleVersion",
            "signedTransactionInfo", "signedRenewalInfo", "status", "summary", "externalPurchaseToken",
            "consumptionRequestReason", "advancedCommerceInfo",
        ].map { "\"\($0)\":" }
        let values = [
            "Auto-Renewable Subscription", "Production", "Sandbox", "PURCHASED", "FAMILY_SHARED", "RENEWAL", "PURCHASE",
            "USD", "EUR", "GBP", "USA", "143441", "2.0", "DID_RENEW", "SUBSCRIBED", "INITIAL_BUY", "RESUBSCRIBE",
            "DID_CHANGE_RENEWAL_STATUS", "DID_CHANGE_RENEWAL_PREF", "DID_FAIL_TO_RENEW", "EXPIRED", "FREE_TRIAL",
            "Non-Consumable", "Consumable", "Non-Renewing Subscription",
        ].map { "\"\($0)\"" }
        return keys + values
    }()

    /// Token codes: control bytes JSON never holds raw (not NUL, TAB, LF or CR); the
    /// last one escapes a second byte for patterns past the single-byte codes.
    static let singleCodes: [UInt8] = Array(1...8) + [11, 12] + Array(14...30)
    static let escape: UInt8 = 31

    static let patternBytes: [[UInt8]] = patterns.map { Array($0.utf8) }

    @inline(__always)
    static func fnv(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in bytes { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
        return h
    }

    /// The token table laid out for the byte loops: every pattern in one block, and
    /// look-ups by code byte and by hash that need no dictionary. It is built once and
    /// never freed, so the loops read it through plain pointers.
    struct Table: @unchecked Sendable {
        /// All patterns back to back; pattern i is `bytes[start[i]..<start[i + 1]]`.
        let bytes: UnsafeBufferPointer<UInt8>
        let start: UnsafeBufferPointer<Int>
        /// Pattern index + 1 for a single-byte code, 0 for a byte that is no code.
        let byCode: UnsafeBufferPointer<Int16>
        /// 1 for every byte that would be read back as a token (the codes and the escape).
        let isCode: UnsafeBufferPointer<UInt8>
        /// Open addressing on a pattern's hash: pattern index + 1, 0 for an empty slot.
        let slots: UnsafeBufferPointer<Int16>
        let hashes: UnsafeBufferPointer<UInt64>
        static let slotMask = 511

        init() {
            var bytes: [UInt8] = [], start: [Int] = []
            for p in patternBytes { start.append(bytes.count); bytes += p }
            start.append(bytes.count)
            var byCode = [Int16](repeating: 0, count: 256), isCode = [UInt8](repeating: 0, count: 256)
            for (i, code) in singleCodes.enumerated() { byCode[Int(code)] = Int16(i + 1); isCode[Int(code)] = 1 }
            isCode[Int(escape)] = 1
            let hashes = patternBytes.map { p in p.withUnsafeBufferPointer { fnv($0) } }
            var slots = [Int16](repeating: 0, count: Table.slotMask + 1)
            for (i, h) in hashes.enumerated() {
                var slot = Int(truncatingIfNeeded: h) & Table.slotMask
                while slots[slot] != 0 { slot = (slot + 1) & Table.slotMask }
                slots[slot] = Int16(i + 1)
            }
            self.bytes = Table.permanent(bytes)
            self.start = Table.permanent(start)
            self.byCode = Table.permanent(byCode)
            self.isCode = Table.permanent(isCode)
            self.slots = Table.permanent(slots)
            self.hashes = Table.permanent(hashes)
        }

        private static func permanent<T>(_ values: [T]) -> UnsafeBufferPointer<T> {
            let buffer = UnsafeMutableBufferPointer<T>.allocate(capacity: values.count)
            _ = buffer.initialize(from: values)
            return UnsafeBufferPointer(buffer)
        }

        /// The bytes of pattern `index`.
        func pattern(_ index: Int) -> UnsafeBufferPointer<UInt8> {
            UnsafeBufferPointer(rebasing: bytes[start[index]..<start[index + 1]])
        }

        /// The index of the pattern that is exactly `candidate` (never empty).
        func index(of candidate: UnsafeBufferPointer<UInt8>) -> Int? {
            let h = fnv(candidate)
            var slot = Int(truncatingIfNeeded: h) & Table.slotMask
            while slots[slot] != 0 {
                let index = Int(slots[slot]) - 1
                let p = pattern(index)
                if hashes[index] == h, p.count == candidate.count, memcmp(p.baseAddress!, candidate.baseAddress!, p.count) == 0 {
                    return index
                }
                slot = (slot + 1) & Table.slotMask
            }
            return nil
        }

        /// The pattern index of the token at `b[i]` and the token's length, nil for a plain byte.
        func token(in b: UnsafeBufferPointer<UInt8>, at i: Int) throws -> (index: Int, length: Int)? {
            if b[i] == escape {
                guard i + 1 < b.count else { throw Corrupt(description: "stored body is corrupt: truncated token") }
                let index = singleCodes.count + Int(b[i + 1])
                guard index + 1 < start.count else { throw Corrupt(description: "stored body is corrupt: unknown token") }
                return (index, 2)
            }
            let code = Int(byCode[Int(b[i])])
            return code == 0 ? nil : (code - 1, 1)
        }
    }

    static let table = Table()

    /// The compact form of `body`, or nil when it is not a body this form can hold exactly.
    ///
    /// Every part is checked to come back exactly (each payload detokenizes to itself,
    /// and base64url decoding is strict, so re-encoding gives the very segments back).
    static func encode(_ body: Data, headerId: (String) throws -> Int64) rethrows -> Data? {
        try body.withUnsafeBytes { (raw: UnsafeRawBufferPointer) -> Data? in
            let b = raw.bindMemory(to: UInt8.self)
            let prefix = signedPayloadPrefix.utf8
            guard b.count > prefix.count + 2, prefix.elementsEqual(b[0..<prefix.count]),
                  b[b.count - 2] == UInt8(ascii: "\""), b[b.count - 1] == UInt8(ascii: "}") else { return nil }
            guard let outer = try split(b[prefix.count..<(b.count - 2)], headerId: headerId) else { return nil }
            // Nested JWS inside the outer payload become placeholders.
            var payload = outer.payload
            var nested: [Part] = []
            for value in jwsStringValues(in: payload) where nested.count < 30 {
                let inner = try payload.withUnsafeBufferPointer { try split($0[value], headerId: headerId) }
                guard let inner, let tokens = tokenizeChecked(inner.payload) else { continue }
                nested.append((inner.header, tokens, inner.signature))
                payload.replaceSubrange(value, with: [0, UInt8(0x80 + nested.count - 1)])
            }
            guard let outerTokens = tokenizeChecked(payload) else { return nil }
            return assemble((outer.header, outerTokens, outer.signature), nested)
        }
    }

    /// A body's compact form but for its JWS headers' ids, which the store gives when the
    /// body is written: built while the body is checked (on a checker's thread, when intake
    /// has several), so the writer only looks the ids up and joins the parts (`assemble`).
    struct Prepared: Sendable {
        struct Part: Sendable {
            let header: String
            let payload: [UInt8]
            let signature: [UInt8]
        }
        let outer: Part
        let nested: [Part]

        /// The format 1 bytes, each header given its id by `headerId` (the nested ones
        /// first, in order, then the outer one).
        func assemble(headerId: (String) throws -> Int64) rethrows -> Data {
            var ids: [Int64] = []
            for n in nested { ids.append(try headerId(n.header)) }
            let outerId = try headerId(outer.header)
            var out: [UInt8] = [format]
            out.reserveCapacity(outer.payload.count + nested.reduce(0) { $0 + $1.payload.count + 80 } + 80)
            appendJWS(&out, outerId, outer.payload, outer.signature)
            appendVarint(&out, UInt64(nested.count))
            for (n, id) in zip(nested, ids) { appendJWS(&out, id, n.payload, n.signature) }
            return Data(out)
        }
    }

    /// The compact form of `body` built from pieces verification already decoded, or nil
    /// when `body` is not exactly `{"signedPayload":"<outer JWS>"}`.
    ///
    /// Exactness holds as in `encode(_:headerId:)`: each payload is checked to detokenize
    /// to itself, and the pieces come from strict base64url decoding of segments without
    /// padding, so encoding them again gives back those very segments. A nested JWS is
    /// replaced only where its exact text stands between quotes in the outer payload.
    static func encode(_ body: Data, pieces: NotificationPieces, headerId: (String) throws -> Int64) rethrows -> Data? {
        try prepare(body, pieces: pieces)?.assemble(headerId: headerId)
    }

    /// `encode(_:pieces:headerId:)` but for the headers' ids.
    static func prepare(_ body: Data, pieces: NotificationPieces) -> Prepared? {
        guard pieces.outer.signature.count == 64,
              body.count == signedPayloadPrefix.utf8.count + pieces.outer.textLength + 2,
              body.last == UInt8(ascii: "}") else { return nil }
        var payload = [UInt8](pieces.outer.payload)
        var found: [(range: Range<Int>, index: Int)] = []
        var nested: [Prepared.Part] = []
        for (text, inner) in pieces.nested {
            guard inner.signature.count == 64, let range = quotedRange(of: text, in: payload),
                  payload.withUnsafeBufferPointer({ memchr($0.baseAddress! + range.lowerBound, 0x3D, range.count) == nil }),
                  text.utf8.count == inner.textLength,
                  let tokens = tokenizeChecked([UInt8](inner.payload)) else { continue }
            found.append((range, nested.count))
            nested.append(Prepared.Part(header: inner.header, payload: tokens, signature: [UInt8](inner.signature)))
        }
        for f in found.sorted(by: { $0.range.lowerBound > $1.range.lowerBound }) {
            payload.replaceSubrange(f.range, with: [0, UInt8(0x80 + f.index)])
        }
        guard let outerTokens = tokenizeChecked(payload) else { return nil }
        return Prepared(outer: Prepared.Part(header: pieces.outer.header, payload: outerTokens,
                                             signature: [UInt8](pieces.outer.signature)), nested: nested)
    }

    typealias Part = (header: Int64, payload: [UInt8], signature: [UInt8])

    /// Format 1 bytes of an outer JWS (payload tokenized, placeholders in) and its nested ones.
    private static func assemble(_ outer: Part, _ nested: [Part]) -> Data {
        var out: [UInt8] = [format]
        out.reserveCapacity(outer.payload.count + nested.reduce(0) { $0 + $1.payload.count + 80 } + 80)
        appendJWS(&out, outer.header, outer.payload, outer.signature)
        appendVarint(&out, UInt64(nested.count))
        for n in nested { appendJWS(&out, n.header, n.payload, n.signature) }
        return Data(out)
    }

    /// Where `text` stands as a whole JSON string in `json` (the range inside the quotes).
    private static func quotedRange(of text: String, in json: [UInt8]) -> Range<Int>? {
        var text = text
        return text.withUTF8 { t -> Range<Int>? in
            guard t.count > 0, t.count + 2 <= json.count else { return nil }
            return json.withUnsafeBufferPointer { j -> Range<Int>? in
                // Each quote is a candidate start; the text must follow it whole, then a quote.
                var from = 0
                while from + t.count + 2 <= j.count, let hit = memchr(j.baseAddress! + from, 0x22, j.count - from) {
                    let start = j.baseAddress!.distance(to: hit.assumingMemoryBound(to: UInt8.self)) + 1
                    let end = start + t.count
                    if end < j.count, j[end] == UInt8(ascii: "\""), memcmp(j.baseAddress! + start, t.baseAddress!, t.count) == 0 {
                        return start..<end
                    }
                    from = start
                }
                return nil
            }
        }
    }

    /// Header id, decoded payload and signature of a JWS.
    private static func split(_ jws: Slice<UnsafeBufferPointer<UInt8>>, headerId: (String) throws -> Int64) rethrows
        -> (header: Int64, payload: [UInt8], signature: [UInt8])? {
        guard let d1 = jws.firstIndex(of: UInt8(ascii: ".")),
              let d2 = jws[(d1 + 1)...].firstIndex(of: UInt8(ascii: ".")),
              !jws[(d2 + 1)...].contains(UInt8(ascii: ".")),
              let payload = Base64URL.decode(bytes: UnsafeBufferPointer(rebasing: jws[(d1 + 1)..<d2]), allowPadding: false),
              let signature = Base64URL.decode(bytes: UnsafeBufferPointer(rebasing: jws[(d2 + 1)...]), allowPadding: false),
              signature.count == 64 else { return nil }
        // Decoding is strict (no padding, zero leftover bits), so encoding gives back these very segments.
        let id = try headerId(String(decoding: UnsafeBufferPointer(rebasing: jws[jws.startIndex..<d1]), as: UTF8.self))
        return (id, [UInt8](payload), [UInt8](signature))
    }

    /// Ranges of string contents (without quotes) in `json` that look like a compact JWS,
    /// last first, so replacing one leaves the earlier ranges valid.
    private static func jwsStringValues(in json: [UInt8]) -> [Range<Int>] {
        var result: [Range<Int>] = []
        json.withUnsafeBufferPointer { j in
            JWSBytes.base64URLOrDot.withUnsafeBufferPointer { table in
                var i = 0
                while i < j.count {
                    guard j[i] == UInt8(ascii: "\"") else { i += 1; continue }
                    var k = i + 1, dots = 0
                    var bad: UInt8 = 0
                    while k < j.count, j[k] != UInt8(ascii: "\"") {
                        let c = j[k]
                        bad |= table[Int(c)]
                        if c == UInt8(ascii: ".") { dots += 1 }
                        if c == UInt8(ascii: "\\") { k += 1 }
                        k += 1
                    }
                    if bad == 0 && dots == 2 && k - i > 200 { result.append((i + 1)..<k) }
                    i = k + 1
                }
            }
        }
        return result.reversed()
    }

    /// Tokenized `json`, or nil when detokenizing would not give it back exactly.
    ///
    /// Tokenizing replaces whole patterns by their codes and copies every other byte, and
    /// detokenizing maps codes back to those very patterns, so the round trip is exact
    /// unless `json` itself holds a byte that would be read back as a code.
    static func tokenizeChecked(_ json: [UInt8]) -> [UInt8]? {
        let isCode = table.isCode
        var any: UInt8 = 0
        for b in json { any |= isCode[Int(b)] }
        return any != 0 ? nil : tokenize(json)
    }

    static func tokenize(_ json: [UInt8]) -> [UInt8] {
        let t = table
        // Each pattern is longer than its one- or two-byte code, so the output is never longer.
        return [UInt8](unsafeUninitializedCapacity: json.count) { out, count in
            json.withUnsafeBufferPointer { j in
                func emit(_ index: Int) {
                    if index < singleCodes.count {
                        out[count] = singleCodes[index]
                        count += 1
                    } else {
                        out[count] = escape
                        out[count + 1] = UInt8(index - singleCodes.count)
                        count += 2
                    }
                }
                func copy(_ from: Int, _ to: Int) {
                    memcpy(out.baseAddress! + count, j.baseAddress! + from, to - from)
                    count += to - from
                }
                func match(_ from: Int, _ to: Int) -> Int? { t.index(of: UnsafeBufferPointer(rebasing: j[from..<to])) }
                var i = 0
                while i < j.count {
                    guard j[i] == UInt8(ascii: "\"") else { out[count] = j[i]; count += 1; i += 1; continue }
                    var k = i + 1
                    while k < j.count, j[k] != UInt8(ascii: "\"") { k += j[k] == UInt8(ascii: "\\") ? 2 : 1 }
                    guard k < j.count else { copy(i, j.count); break }
                    if k + 1 < j.count, j[k + 1] == UInt8(ascii: ":"), let index = match(i, k + 2) {
                        emit(index)
                        i = k + 2
                    } else if let index = match(i, k + 1) {
                        emit(index)
                        i = k + 1
                    } else {
                        copy(i, k + 1)
                        i = k + 1
                    }
                }
            }
        }
    }

    private static func appendJWS(_ out: inout [UInt8], _ header: Int64, _ payload: [UInt8], _ signature: [UInt8]) {
        appendVarint(&out, UInt64(header))
        appendVarint(&out, UInt64(payload.count))
        out += payload
        out += signature
    }

    /// The varint at `i` of `b`, moving `i` past it; nil when `b` ends first.
    static func readVarint(_ b: [UInt8], _ i: inout Int) -> UInt64? {
        var v: UInt64 = 0, shift: UInt64 = 0
        while i < b.count, shift < 64 {
            let byte = b[i]; i += 1
            v |= UInt64(byte & 0x7f) << shift
            if byte < 0x80 { return v }
            shift += 7
        }
        return nil
    }

    static func appendVarint(_ out: inout [UInt8], _ value: UInt64) {
        var v = value
        while v >= 0x80 { out.append(UInt8(v & 0x7f) | 0x80); v >>= 7 }
        out.append(UInt8(v))
    }
}
