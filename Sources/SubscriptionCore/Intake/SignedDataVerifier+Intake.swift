import Foundation

extension SignedDataVerifier: SignedPayloadVerifier {
    public func verifiedPayload(_ compactJWS: String, field: String) throws -> [String: Any] {
        try verify(compactJWS, field: field).payloadObject
    }
}
