import Foundation

extension SignedDataVerifier: SignedPayloadVerifier {
    public func verifiedPayload(_ compactJWS: String, field: String) throws -> [String: Any] {
        try verify(compactJWS, field: field).payloadObject
    }

    public func verifiedPieces(_ compactJWS: String, field: String) throws -> (object: [String: Any], pieces: JWSPieces?) {
        let v = try verify(compactJWS, field: field)
        return (v.payloadObject, JWSPieces(header: v.headerSegment, payload: v.payload, signature: v.signature))
    }
}
