/// Why intake refused a body: its kind, the field it concerns and the fault, in the shape of
/// `VerificationError`. The message is rendered from these, never parsed back.
public struct Refusal: Error, CustomStringConvertible, Equatable, Sendable {
    public let kind: RejectionClass
    /// Where the fault is (`body`, `signedPayload`, `body.password`, ...); empty when the
    /// fault names its own place.
    public let field: String
    public let fault: String

    public init(_ kind: RejectionClass, field: String, fault: String) {
        self.kind = kind
        self.field = field
        self.fault = fault
    }

    public var description: String { field.isEmpty ? fault : "\(field): \(fault)" }

    /// A refused signed payload: its kind follows from the typed fault.
    public init(_ error: VerificationError) {
        self.init(Refusal.kind(of: error.fault), field: error.field.escapingControlCharacters(), fault: error.fault.description)
    }

    /// A body whose JSON does not hold what its fields should.
    public init(_ fault: DecodingFault) {
        self.init(.malformed, field: fault.path, fault: fault.problem)
    }

    static func kind(of fault: VerificationError.Fault) -> RejectionClass {
        switch fault {
        case .certificateRevoked:
            return .revoked
        case .notCompactJWS, .badBase64URL, .headerNotJSONObject, .payloadNotJSON, .payloadNotJSONObject,
             .payloadHoldsNUL, .duplicateKey, .signedDateNotANumber, .libcrypto:
            return .malformed
        case .algorithmMissing, .algorithmNotES256, .criticalHeaderParameters, .x5cMissing, .x5cNotArrayOfStrings,
             .x5cEmpty, .x5cTooShort, .x5cTooLong, .x5cEntryNotBase64, .x5cEntryNotCertificate, .missingMarkerOID,
             .leafKeyNotP256, .chainUntrusted, .pathBypassesIntermediate, .certificateExpired, .certificateNotYetValid,
             .signatureWrongLength, .signatureMismatch, .timeOutOfRange, .noOCSPResponder:
            return .signature
        }
    }
}
