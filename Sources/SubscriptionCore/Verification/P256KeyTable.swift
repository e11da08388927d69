import Foundation
import COpenSSL

/// ECDSA P-256 verification for one public key that signs many messages.
///
/// A verification computes `u1·G + u2·Q` (RFC 6090 §5.4.2, SEC 1 §4.1.4). libcrypto
/// keeps a table of multiples of the curve's generator `G`, so `u1·G` is cheap, but
/// multiplies the key `Q` from scratch every time: about two thirds of the work. Every
/// JWS of a notification, and every notification of a batch, is signed by the same
/// leaf key, so this type builds the same kind of table for `Q` (a copy of the curve
/// whose generator is `Q`) and then both products are table look-ups: a verification
/// costs about half as much. The table takes some milliseconds to build and ~150 KB,
/// which is why `ES256.PublicKey` builds one only for a key that has already verified
/// many signatures.
///
/// Only public values take part, so nothing here needs to run in constant time.
final class P256KeyTable: @unchecked Sendable {
    /// The curve with generator `Q` and its precomputed multiples; read-only once built.
    private let keyGroup: OpaquePointer
    private let curve: Curve
    /// Scratch numbers and points, one set per concurrent verification.
    private var idle: [Scratch] = []
    private let lock = NSLock()

    /// A table for `key` (an `EVP_PKEY` holding a P-256 public key); nil when libcrypto
    /// cannot build one, and the caller verifies the ordinary way.
    init?(key: OpaquePointer) {
        guard let curve = Curve.shared else { return nil }
        var encoded: UnsafeMutablePointer<UInt8>?
        let length = EVP_PKEY_get1_encoded_public_key(key, &encoded)
        defer { subdesk_openssl_free(encoded) }
        guard length > 0, let encoded, let context = BN_CTX_new() else {
            OpenSSL.clearErrors()
            return nil
        }
        defer { BN_CTX_free(context) }
        guard let group = EC_GROUP_dup(curve.group) else {
            OpenSSL.clearErrors()
            return nil
        }
        let point = EC_POINT_new(group)
        defer { EC_POINT_free(point) }
        // oct2point refuses a point that is not on the curve; the order is prime and the
        // cofactor 1, so any such point other than infinity generates the whole group.
        guard let point, EC_POINT_oct2point(group, point, encoded, length, context) == 1,
              EC_POINT_is_at_infinity(group, point) == 0,
              EC_GROUP_set_generator(group, point, EC_GROUP_get0_order(curve.group), BN_value_one()) == 1,
              subdesk_ec_group_precompute_mult(group, context) == 1 else {
            EC_GROUP_free(group)
            OpenSSL.clearErrors()
            return nil
        }
        keyGroup = group
        self.curve = curve
    }

    deinit { EC_GROUP_free(keyGroup) }

    /// Whether raw `r || s` (64 bytes) signs the 32-byte SHA-256 `digest` by this key.
    func verify(raw signature: UnsafeBufferPointer<UInt8>, digest: UnsafeBufferPointer<UInt8>) -> Bool {
        guard signature.count == ES256.signatureLength, digest.count == 32,
              let signatureBase = signature.baseAddress, let digestBase = digest.baseAddress else { return false }
        lock.lock()
        let lent = idle.popLast()
        lock.unlock()
        guard let scratch = lent ?? Scratch(curve: curve) else {
            OpenSSL.clearErrors()
            return false
        }
        let valid = check(signatureBase, digestBase, scratch)
        if !valid { OpenSSL.clearErrors() }
        lock.lock()
        idle.append(scratch)
        lock.unlock()
        return valid
    }

    private func check(_ signature: UnsafePointer<UInt8>, _ digest: UnsafePointer<UInt8>, _ scratch: Scratch) -> Bool {
        let n = curve.order, p = curve.prime, ctx = scratch.context
        let r = scratch.r, s = scratch.s, e = scratch.e, w = scratch.w, u1 = scratch.u1, u2 = scratch.u2
        let x = scratch.x, y = scratch.y, z = scratch.z, zz = scratch.zz, candidate = scratch.candidate
        guard BN_bin2bn(signature, Int32(ES256.scalarLength), r) != nil,
              BN_bin2bn(signature + ES256.scalarLength, Int32(ES256.scalarLength), s) != nil,
              BN_bin2bn(digest, 32, e) != nil else { return false }
        // 0 < r, s < n; a 256-bit digest needs no truncation for a 256-bit order.
        guard BN_is_zero(r) == 0, BN_is_zero(s) == 0, BN_cmp(r, n) < 0, BN_cmp(s, n) < 0 else { return false }
        guard let inverse = P256ScalarInverse.inverse(.init(bigEndian: signature + ES256.scalarLength)) else { return false }
        inverse.write(bigEndian: scratch.bytes)
        guard BN_bin2bn(scratch.bytes, Int32(ES256.scalarLength), w) != nil,
              BN_mod_mul(u1, e, w, n, ctx) == 1, BN_mod_mul(u2, r, w, n, ctx) == 1 else { return false }
        // R = u1·G + u2·Q, both from tables.
        guard EC_POINT_mul(curve.group, scratch.sum, u1, nil, nil, ctx) == 1,
              EC_POINT_mul(keyGroup, scratch.part, u2, nil, nil, ctx) == 1,
              EC_POINT_add(curve.group, scratch.sum, scratch.sum, scratch.part, ctx) == 1,
              EC_POINT_is_at_infinity(curve.group, scratch.sum) == 0 else { return false }
        // Valid when R's affine x is r modulo n. R is kept as Jacobian (X, Y, Z) with
        // x = X / Z², so compare X with r·Z² mod p instead of inverting Z. x < p, and
        // x ≡ r (mod n) means x = r or, when r + n < p, x = r + n.
        guard subdesk_ec_point_jacobian(curve.group, scratch.sum, x, y, z, ctx) == 1,
              BN_mod_sqr(zz, z, p, ctx) == 1, BN_mod_mul(candidate, r, zz, p, ctx) == 1 else { return false }
        if BN_cmp(candidate, x) == 0 { return true }
        guard BN_cmp(r, curve.orderGap) < 0, BN_add(candidate, r, n) == 1,
              BN_mod_mul(candidate, candidate, zz, p, ctx) == 1 else { return false }
        return BN_cmp(candidate, x) == 0
    }

    /// P-256 itself, shared by every table.
    private final class Curve: @unchecked Sendable {
        let group: OpaquePointer
        /// The group order n, as a plain number: libcrypto flags the group's own copy for
        /// constant-time arithmetic, which makes the inverse of s several times slower.
        let order: OpaquePointer
        let prime: OpaquePointer
        /// p - n: an x below it has a second representative r = x - n.
        let orderGap: OpaquePointer

        static let shared: Curve? = Curve()

        private init?() {
            guard let group = EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1) else { return nil }
            guard let order = BN_new(), let prime = BN_new(), let gap = BN_new(),
                  BN_copy(order, EC_GROUP_get0_order(group)) != nil,
                  EC_GROUP_get_curve(group, prime, nil, nil, nil) == 1,
                  BN_sub(gap, prime, order) == 1 else {
                EC_GROUP_free(group)
                OpenSSL.clearErrors()
                return nil
            }
            BN_set_flags(order, 0)
            self.group = group
            self.order = order
            self.prime = prime
            self.orderGap = gap
        }
    }

    /// Numbers and points for one verification at a time.
    private final class Scratch {
        let context: OpaquePointer
        let r, s, e, w, u1, u2, x, y, z, zz, candidate: OpaquePointer
        let sum, part: OpaquePointer
        /// 32 bytes for the inverse of s on its way into `w`.
        let bytes = UnsafeMutablePointer<UInt8>.allocate(capacity: ES256.scalarLength)

        init?(curve: Curve) {
            guard let context = BN_CTX_new() else { return nil }
            var numbers: [OpaquePointer] = []
            for _ in 0..<11 {
                guard let number = BN_new() else {
                    numbers.forEach { BN_free($0) }
                    BN_CTX_free(context)
                    return nil
                }
                numbers.append(number)
            }
            guard let sum = EC_POINT_new(curve.group), let part = EC_POINT_new(curve.group) else {
                numbers.forEach { BN_free($0) }
                BN_CTX_free(context)
                return nil
            }
            self.context = context
            (r, s, e, w, u1, u2) = (numbers[0], numbers[1], numbers[2], numbers[3], numbers[4], numbers[5])
            (x, y, z, zz, candidate) = (numbers[6], numbers[7], numbers[8], numbers[9], numbers[10])
            self.sum = sum
            self.part = part
        }

        deinit {
            for number in [r, s, e, w, u1, u2, x, y, z, zz, candidate] { BN_free(number) }
            EC_POINT_free(sum)
            EC_POINT_free(part)
            BN_CTX_free(context)
            bytes.deallocate()
        }
    }
}

/// The inverse of a scalar modulo P-256's group order n, for the `s⁻¹` of a verification.
///
/// libcrypto's `BN_mod_inverse` on a 256-bit number costs as much as both table
/// multiplications together (its binary algorithm runs through generic bignum calls
/// bit by bit); the same algorithm on four fixed 64-bit limbs is several times faster.
/// Inputs are public, so it need not run in constant time.
enum P256ScalarInverse {
    /// A 256-bit number as four 64-bit limbs, least significant first.
    struct Limbs: Equatable {
        var a0: UInt64, a1: UInt64, a2: UInt64, a3: UInt64

        static let order = Limbs(a0: 0xF3B9_CAC2_FC63_2551, a1: 0xBCE6_FAAD_A717_9E84,
                                 a2: 0xFFFF_FFFF_FFFF_FFFF, a3: 0xFFFF_FFFF_0000_0000)
        static let one = Limbs(a0: 1, a1: 0, a2: 0, a3: 0)
        static let zero = Limbs(a0: 0, a1: 0, a2: 0, a3: 0)

        /// From 32 big-endian bytes.
        init(bigEndian bytes: UnsafePointer<UInt8>) {
            func word(_ at: Int) -> UInt64 {
                var value: UInt64 = 0
                for i in 0..<8 { value = value << 8 | UInt64(bytes[at + i]) }
                return value
            }
            self.init(a0: word(24), a1: word(16), a2: word(8), a3: word(0))
        }

        init(a0: UInt64, a1: UInt64, a2: UInt64, a3: UInt64) {
            (self.a0, self.a1, self.a2, self.a3) = (a0, a1, a2, a3)
        }

        /// As 32 big-endian bytes into `out`.
        func write(bigEndian out: UnsafeMutablePointer<UInt8>) {
            func put(_ word: UInt64, at: Int) {
                for i in 0..<8 { out[at + i] = UInt8(truncatingIfNeeded: word >> (56 - 8 * UInt64(i))) }
            }
            put(a3, at: 0)
            put(a2, at: 8)
            put(a1, at: 16)
            put(a0, at: 24)
        }

        var isEven: Bool { a0 & 1 == 0 }
        var isOne: Bool { a0 == 1 && a1 == 0 && a2 == 0 && a3 == 0 }
        var isZero: Bool { a0 | a1 | a2 | a3 == 0 }

        static func >= (x: Limbs, y: Limbs) -> Bool {
            if x.a3 != y.a3 { return x.a3 > y.a3 }
            if x.a2 != y.a2 { return x.a2 > y.a2 }
            if x.a1 != y.a1 { return x.a1 > y.a1 }
            return x.a0 >= y.a0
        }

        /// `self + other`, and the carry out of the top limb.
        func adding(_ other: Limbs) -> (Limbs, UInt64) {
            let (s0, c0) = a0.addingReportingOverflow(other.a0)
            var (s1, c1) = a1.addingReportingOverflow(other.a1)
            var (s2, c2) = a2.addingReportingOverflow(other.a2)
            var (s3, c3) = a3.addingReportingOverflow(other.a3)
            if c0 { (s1, c1) = (s1 &+ 1, c1 || s1 == .max) }
            if c1 { (s2, c2) = (s2 &+ 1, c2 || s2 == .max) }
            if c2 { (s3, c3) = (s3 &+ 1, c3 || s3 == .max) }
            return (Limbs(a0: s0, a1: s1, a2: s2, a3: s3), c3 ? 1 : 0)
        }

        /// `self - other`, and whether it borrowed out of the top limb.
        func subtracting(_ other: Limbs) -> (Limbs, Bool) {
            let (d0, b0) = a0.subtractingReportingOverflow(other.a0)
            var (d1, b1) = a1.subtractingReportingOverflow(other.a1)
            var (d2, b2) = a2.subtractingReportingOverflow(other.a2)
            var (d3, b3) = a3.subtractingReportingOverflow(other.a3)
            if b0 { (d1, b1) = (d1 &- 1, b1 || d1 == 0) }
            if b1 { (d2, b2) = (d2 &- 1, b2 || d2 == 0) }
            if b2 { (d3, b3) = (d3 &- 1, b3 || d3 == 0) }
            return (Limbs(a0: d0, a1: d1, a2: d2, a3: d3), b3)
        }

        /// `self >> 1`, with `top` shifted in as the new highest bit.
        func halved(top: UInt64 = 0) -> Limbs {
            Limbs(a0: a0 >> 1 | a1 << 63, a1: a1 >> 1 | a2 << 63, a2: a2 >> 1 | a3 << 63, a3: a3 >> 1 | top << 63)
        }

        /// `self / 2 mod n` for `self < n`: an odd value has n added first.
        func halvedModOrder() -> Limbs {
            if isEven { return halved() }
            let (sum, carry) = adding(.order)
            return sum.halved(top: carry)
        }

        /// `self - other mod n` for both below n.
        func minusModOrder(_ other: Limbs) -> Limbs {
            let (difference, borrowed) = subtracting(other)
            return borrowed ? difference.adding(.order).0 : difference
        }
    }

    /// `value⁻¹ mod n` for 0 < value < n; nil otherwise.
    ///
    /// Binary extended Euclid: u and v start at value and n, and x1·value ≡ u,
    /// x2·value ≡ v (mod n) hold throughout; halving an even u halves x1 mod n, and
    /// the larger of u, v loses the smaller. n is prime, so u or v reaches 1.
    static func inverse(_ value: Limbs) -> Limbs? {
        guard !value.isZero, !(value >= .order) else { return nil }
        var u = value, v = Limbs.order
        var x1 = Limbs.one, x2 = Limbs.zero
        while !u.isOne && !v.isOne {
            while u.isEven {
                u = u.halved()
                x1 = x1.halvedModOrder()
            }
            while v.isEven {
                v = v.halved()
                x2 = x2.halvedModOrder()
            }
            if u >= v {
                u = u.subtracting(v).0
                x1 = x1.minusModOrder(x2)
            } else {
                v = v.subtracting(u).0
                x2 = x2.minusModOrder(x1)
            }
            if u.isZero || v.isZero { return nil }
        }
        return u.isOne ? x1 : x2
    }
}
