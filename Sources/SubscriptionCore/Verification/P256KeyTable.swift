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
