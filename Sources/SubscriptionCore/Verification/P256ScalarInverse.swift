/// The inverse of a scalar modulo P-256's group order n, for the `s⁻¹` of a verification.
///
/// libcrypto's `BN_mod_inverse` runs a binary algorithm bit by bit through generic
/// bignum calls; on a 256-bit number it cost as much as both table multiplications of a
/// verification together. This is Bernstein and Yang's divstep algorithm ("Fast
/// constant-time gcd computation and modular inversion", 2019) in its variable-time
/// form: the steps are decided by the low bits of f and g only, so 62 of them run on one
/// 64-bit word each and are collected in a 2×2 matrix, which is then applied to the full
/// numbers (f, g) and to their coefficients (d, e) modulo n. A 256-bit inverse takes
/// about ten such rounds.
///
/// Inputs are public (the s of a signature), so nothing here runs in constant time.
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

        var isZero: Bool { a0 | a1 | a2 | a3 == 0 }

        static func >= (x: Limbs, y: Limbs) -> Bool {
            if x.a3 != y.a3 { return x.a3 > y.a3 }
            if x.a2 != y.a2 { return x.a2 > y.a2 }
            if x.a1 != y.a1 { return x.a1 > y.a1 }
            return x.a0 >= y.a0
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
    }

    /// `value⁻¹ mod n` for 0 < value < n; nil otherwise.
    ///
    /// Invariants: d·value ≡ f and e·value ≡ g (mod n), starting from f = n, d = 0,
    /// g = value, e = 1. Each round divides both rows by 2⁶² the same way, so they hold
    /// throughout; g reaches 0 and f then is ±gcd = ±1, so ±d is the inverse.
    static func inverse(_ value: Limbs) -> Limbs? {
        guard !value.isZero, !(value >= .order) else { return nil }
        var f = modulus, g = Signed62(value)
        var d = Signed62.zero, e = Signed62.one
        var eta = -1
        // The variable-time algorithm needs at most 590 steps for 256-bit inputs (ten
        // rounds); the bound only guards against looping for ever.
        for _ in 0..<24 {
            let t = divsteps(&eta, f.l0, g.l0)
            (d, e) = (t.applyModular(d, e, row: 0), t.applyModular(d, e, row: 1))
            (f, g) = (t.applyExact(f, g, row: 0), t.applyExact(f, g, row: 1))
            guard g.isZero else { continue }
            if f == .one { return d.limbs }
            if f == .minusOne { return d.isZero ? d.limbs : modulus.subtracting(d).limbs }
            return nil
        }
        return nil
    }

    /// The matrix of 62 steps: after them f' = (u·f + v·g) / 2⁶², g' = (q·f + r·g) / 2⁶².
    struct Transition {
        var u: Int64, v: Int64, q: Int64, r: Int64

        /// Row `row` of the matrix applied to (f, g); the sum is divisible by 2⁶² exactly.
        @inline(__always)
        func applyExact(_ f: Signed62, _ g: Signed62, row: Int) -> Signed62 {
            let (a, b) = row == 0 ? (Int128(u), Int128(v)) : (Int128(q), Int128(r))
            return Transition.shiftedSum(a, f, b, g, plus: 0, .zero)
        }

        /// Row `row` applied to (d, e), both in [0, n), divided by 2⁶² modulo n: a
        /// multiple of n is added first to make the sum divisible. The result is in [0, n).
        @inline(__always)
        func applyModular(_ d: Signed62, _ e: Signed62, row: Int) -> Signed62 {
            let (a, b) = row == 0 ? (Int128(u), Int128(v)) : (Int128(q), Int128(r))
            let n = modulus
            let low = a &* Int128(d.l0) &+ b &* Int128(e.l0)
            let m = Int128(Int64(bitPattern: (0 &- UInt64(truncatingIfNeeded: low) &* modulusInverse) & UInt64(mask62)))
            var result = Transition.shiftedSum(a, d, b, e, plus: m, n)
            // |u| + |v| ≤ 2⁶², so the value lies in (-n, 2n): one correction suffices; the
            // loops only make the bound not matter for correctness.
            while result.l4 < 0 { result = result.adding(n) }
            while result >= n { result = result.subtracting(n) }
            return result
        }

        /// (a·x + b·y + m·z) / 2⁶², for a sum whose low 62 bits are zero.
        @inline(__always)
        static func shiftedSum(_ a: Int128, _ x: Signed62, _ b: Int128, _ y: Signed62,
                               plus m: Int128, _ z: Signed62) -> Signed62 {
            var c = a &* Int128(x.l0) &+ b &* Int128(y.l0) &+ m &* Int128(z.l0)
            c >>= 62
            c &+= a &* Int128(x.l1) &+ b &* Int128(y.l1) &+ m &* Int128(z.l1)
            let l0 = Int64(truncatingIfNeeded: c) & mask62
            c >>= 62
            c &+= a &* Int128(x.l2) &+ b &* Int128(y.l2) &+ m &* Int128(z.l2)
            let l1 = Int64(truncatingIfNeeded: c) & mask62
            c >>= 62
            c &+= a &* Int128(x.l3) &+ b &* Int128(y.l3) &+ m &* Int128(z.l3)
            let l2 = Int64(truncatingIfNeeded: c) & mask62
            c >>= 62
            c &+= a &* Int128(x.l4) &+ b &* Int128(y.l4) &+ m &* Int128(z.l4)
            let l3 = Int64(truncatingIfNeeded: c) & mask62
            c >>= 62
            return Signed62(l0: l0, l1: l1, l2: l2, l3: l3, l4: Int64(truncatingIfNeeded: c))
        }
    }

    /// 62 divsteps on the low 64 bits of f (odd) and g, with eta = -δ.
    ///
    /// A divstep: when δ > 0 and g is odd, (f, g) ← (g, (g - f)/2) and δ ← 1 - δ;
    /// otherwise g ← (g + f)/2 if g is odd, g/2 if even, and δ ← 1 + δ. After s steps
    /// only the low 64 - s bits of f and g are still exact, which is why a round stops at 62.
    /// Runs of even g are taken at once, and so are up to eight consecutive steps that
    /// cannot swap: g + w·f with w chosen to clear that many low bits.
    @inline(__always)
    static func divsteps(_ eta: inout Int, _ f0: Int64, _ g0: Int64) -> Transition {
        var f = UInt64(bitPattern: f0), g = UInt64(bitPattern: g0)
        var u: UInt64 = 1, v: UInt64 = 0, q: UInt64 = 0, r: UInt64 = 1
        var left = 62
        while true {
            let zeros = Swift.min(left, g.trailingZeroBitCount)
            g &>>= UInt64(zeros)
            u &<<= UInt64(zeros)
            v &<<= UInt64(zeros)
            eta -= zeros
            left -= zeros
            if left == 0 { break }
            // g is odd here.
            if eta < 0 {
                eta = -eta
                (f, g, u, v, q, r) = (g, 0 &- f, q, r, 0 &- u, 0 &- v)
            }
            // The next `count` steps all have δ <= 0, so each adds f when g is odd.
            let count = Swift.min(Swift.min(eta + 1, left), 8)
            var fInverse = (f &* 3) ^ 2                      // f⁻¹ mod 2⁵
            fInverse = fInverse &* (2 &- f &* fInverse)       // f⁻¹ mod 2¹⁰
            let w = (0 &- g &* fInverse) & ((1 &<< UInt64(count)) &- 1)
            g = g &+ w &* f
            q = q &+ w &* u
            r = r &+ w &* v
        }
        return Transition(u: Int64(bitPattern: u), v: Int64(bitPattern: v), q: Int64(bitPattern: q), r: Int64(bitPattern: r))
    }

    static let mask62: Int64 = (1 << 62) - 1

    /// A signed number as Σ lᵢ·2⁶²ⁱ: l0…l3 in [0, 2⁶²), l4 carries the sign.
    struct Signed62: Equatable {
        var l0: Int64, l1: Int64, l2: Int64, l3: Int64, l4: Int64

        static let zero = Signed62(l0: 0, l1: 0, l2: 0, l3: 0, l4: 0)
        static let one = Signed62(l0: 1, l1: 0, l2: 0, l3: 0, l4: 0)
        static let minusOne = Signed62(l0: mask62, l1: mask62, l2: mask62, l3: mask62, l4: -1)

        init(l0: Int64, l1: Int64, l2: Int64, l3: Int64, l4: Int64) {
            (self.l0, self.l1, self.l2, self.l3, self.l4) = (l0, l1, l2, l3, l4)
        }

        init(_ x: Limbs) {
            let m = UInt64(mask62)
            l0 = Int64(x.a0 & m)
            l1 = Int64((x.a0 >> 62 | x.a1 << 2) & m)
            l2 = Int64((x.a1 >> 60 | x.a2 << 4) & m)
            l3 = Int64((x.a2 >> 58 | x.a3 << 6) & m)
            l4 = Int64(x.a3 >> 56)
        }

        /// The value as four 64-bit limbs; for values in [0, 2²⁵⁶).
        var limbs: Limbs {
            let (b0, b1, b2, b3, b4) = (UInt64(l0), UInt64(l1), UInt64(l2), UInt64(l3), UInt64(bitPattern: l4))
            return Limbs(a0: b0 | b1 << 62, a1: b1 >> 2 | b2 << 60, a2: b2 >> 4 | b3 << 58, a3: b3 >> 6 | b4 << 56)
        }

        var isZero: Bool { l0 | l1 | l2 | l3 | l4 == 0 }

        func adding(_ o: Signed62) -> Signed62 {
            var c = l0 + o.l0
            let r0 = c & mask62
            c = (c >> 62) + l1 + o.l1
            let r1 = c & mask62
            c = (c >> 62) + l2 + o.l2
            let r2 = c & mask62
            c = (c >> 62) + l3 + o.l3
            let r3 = c & mask62
            return Signed62(l0: r0, l1: r1, l2: r2, l3: r3, l4: (c >> 62) + l4 + o.l4)
        }

        func subtracting(_ other: Signed62) -> Signed62 {
            adding(Signed62(l0: -other.l0, l1: -other.l1, l2: -other.l2, l3: -other.l3, l4: -other.l4))
        }

        /// For normalised values with l4 >= 0.
        static func >= (x: Signed62, y: Signed62) -> Bool {
            if x.l4 != y.l4 { return x.l4 > y.l4 }
            if x.l3 != y.l3 { return x.l3 > y.l3 }
            if x.l2 != y.l2 { return x.l2 > y.l2 }
            if x.l1 != y.l1 { return x.l1 > y.l1 }
            return x.l0 >= y.l0
        }
    }

    static let modulus = Signed62(.order)

    /// n⁻¹ mod 2⁶⁴ by Newton's iteration (an odd x is its own inverse mod 8; each step
    /// doubles the correct bits); only its low 62 bits are used.
    static let modulusInverse: UInt64 = {
        let n0 = Limbs.order.a0
        var x = n0
        for _ in 0..<5 { x = x &* (2 &- n0 &* x) }
        return x
    }()
}
