import Foundation

/// Whole intake on an in-memory store: body parsing, V1 and V2 decoding, verification,
/// dedupe, apply and quarantine. Every input must end stored, duplicate or rejected;
/// only a store failure may throw, and an in-memory store has none to give.
enum IntakeTarget {
    /// Verifies nothing: hands back the JWS payload so that mutated payloads reach the
    /// decoders, state derivation and the store, which signatures would otherwise guard.
    struct PayloadOnly: SignedPayloadVerifier {
        func verify<Decoded>(_ compactJWS: String, field: String,
                             as decode: (JSONFields) throws -> Decoded) throws -> Verified<Decoded> {
            let parts = compactJWS.split(separator: ".", omittingEmptySubsequences: false)
            guard parts.count == 3, let payload = Base64URL.decode(parts[1]) else {
                throw VerificationError(field: field, fault: .notCompactJWS(segmentCount: parts.count))
            }
            guard let object = try? FastJSON.parse(payload) as? [String: Any] else {
                throw VerificationError(field: field, fault: .payloadNotJSONObject)
            }
            // The pieces as the text has them: the store compacts a body only when they give
            // back its very bytes.
            let jws = VerifiedJWS(payload: payload, payloadObject: object,
                                  header: JWSHeader(algorithm: "none", certificateCount: 0, keyID: nil, type: nil),
                                  signedDate: nil, chainHash: "", signerSubject: "", headerSegment: String(parts[0]),
                                  signature: Base64URL.decode(parts[2]) ?? Data())
            return Verified(decoded: try decode(JSONFields(dictionary: object, path: field)), jws: jws)
        }
    }

    static let policy = IntakePolicy(bundleId: "com.example.subdesk.demo", appAppleId: 1_234_567_890,
                                     allowV1: true)
    static let verifier = SignedDataVerifier(roots: FuzzFixtures.roots)
    nonisolated(unsafe) static var inputs = 0
    nonisolated(unsafe) static var verified: Intake?
    nonisolated(unsafe) static var unverified: Intake?

    static func makeIntake(_ verifier: SignedPayloadVerifier) -> Intake {
        do {
            return Intake(store: try Store(path: ":memory:"), verifier: verifier, policy: policy)
        } catch {
            fatalError("in-memory store: \(error)")
        }
    }

    static func run(_ body: Data) {
        // Quarantine keeps every body, so a long run would grow the store without
        // bound; a fresh pair now and then keeps memory flat while duplicates and
        // merges across inputs still happen in between.
        if inputs % 500 == 0 {
            verified = makeIntake(verifier)
            unverified = makeIntake(PayloadOnly())
        }
        inputs += 1
        for intake in [verified!, unverified!] {
            do {
                _ = try intake.ingest(body, source: "fuzz", receivedAt: 1_780_272_000_000)
            } catch {
                fatalError("intake threw for a body instead of refusing it: \(error)")
            }
        }
    }
}
