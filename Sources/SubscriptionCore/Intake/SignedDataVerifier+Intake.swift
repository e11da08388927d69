import Foundation

extension SignedDataVerifier: SignedPayloadVerifier {
    public func verifiedPayload(_ compactJWS: String, field: String) throws -> Data {
        try verify(compactJWS, field: field).payload
    }
}
