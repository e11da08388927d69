import Foundation

/// The compact JWS parser and ES256 check: any text must verify or throw a
/// VerificationError, never trap.
enum JWSTarget {
    static let verifier = SignedDataVerifier(roots: FuzzFixtures.roots)

    static func run(_ input: Data) {
        let text = String(decoding: input, as: UTF8.self)
        do {
            _ = try verifier.verify(text, field: "fuzz")
        } catch is VerificationError {
        } catch {
            fatalError("verify threw something other than a VerificationError: \(error)")
        }
    }
}
