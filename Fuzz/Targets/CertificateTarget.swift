import Foundation

/// DER and PEM certificate parsing and chain validation to the test root.
///
/// The input is read three ways: as one certificate (DER or PEM), as a chain of
/// concatenated DER certificates, and as a stand-in for the leaf and for the
/// intermediate of the genuine test chain, so mutations reach path validation.
enum CertificateTarget {
    static let verifier = SignedDataVerifier(roots: FuzzFixtures.roots, cacheCapacity: 4)

    static func run(_ input: Data) {
        if let certificate = try? X509Certificate(der: input) {
            _ = certificate.hasExtension(oid: SignedDataVerifier.leafMarkerOID)
            _ = certificate.isValid(at: FuzzFixtures.checkDate)
            _ = certificate.sha256
        }
        if let certificates = try? X509Certificate.load(input) {
            for certificate in certificates { _ = certificate.subjectSummary }
        }
        verify(derElements(input))
        verify([input, FuzzFixtures.intermediate, FuzzFixtures.root])
        verify([FuzzFixtures.leaf, input])
        // The cache must not let a changed chain through on an earlier one's say-so.
        verifier.clearCache()
    }

    static func verify(_ chain: [Data]) {
        guard !chain.isEmpty else { return }
        do {
            _ = try verifier.verifyChain(chain, at: FuzzFixtures.checkDate, field: "fuzz")
        } catch is VerificationError {
        } catch {
            fatalError("verifyChain threw something other than a VerificationError: \(error)")
        }
    }

    /// Splits bytes into top-level DER elements by their length headers (up to six);
    /// whatever does not parse as one is the last element.
    static func derElements(_ data: Data) -> [Data] {
        let bytes = [UInt8](data)
        var elements: [Data] = []
        var offset = 0
        while offset < bytes.count && elements.count < 6 {
            guard offset + 2 <= bytes.count else { break }
            var length = Int(bytes[offset + 1])
            var header = 2
            if length & 0x80 != 0 {
                let octets = length & 0x7f
                guard octets >= 1 && octets <= 3 && offset + 2 + octets <= bytes.count else { break }
                length = 0
                for i in 0..<octets { length = length << 8 | Int(bytes[offset + 2 + i]) }
                header += octets
            }
            let end = offset + header + length
            guard end <= bytes.count else { break }
            elements.append(Data(bytes[offset..<end]))
            offset = end
        }
        if offset < bytes.count { elements.append(Data(bytes[offset...])) }
        return elements
    }
}
