import Foundation

/// A JWS whose chain and signature checked out, decoded into the model its field holds:
/// what `SignedDataVerifier` hands back for each kind of App Store signed data.
public struct Verified<Decoded> {
    /// The payload decoded into its model.
    public let decoded: Decoded
    /// The JWS itself: its payload bytes exactly as signed, header segment, signature,
    /// signing date and chain.
    public let jws: VerifiedJWS
}

extension Verified: @unchecked Sendable where Decoded: Sendable {}

/// A V2 notification's `signedPayload` (responseBodyV2DecodedPayload).
public typealias VerifiedNotification = Verified<NotificationPayloadV2>
/// A `signedTransactionInfo` (JWSTransactionDecodedPayload).
public typealias VerifiedTransaction = Verified<TransactionRecord>
/// A `signedRenewalInfo` (JWSRenewalInfoDecodedPayload).
public typealias VerifiedRenewalInfo = Verified<RenewalRecord>
/// A `signedAppTransactionInfo` (AppTransaction).
public typealias VerifiedAppTransaction = Verified<AppTransaction>

/// Checks a compact JWS and decodes its payload into a model. `SignedDataVerifier` is the
/// real one; the fuzz harness has one that checks nothing, so that mutated payloads reach
/// the decoders, state derivation and the store.
public protocol SignedPayloadVerifier {
    /// Verifies `compactJWS` and decodes its payload with `decode`; faults name `field`.
    func verify<Decoded>(_ compactJWS: String, field: String,
                         as decode: (JSONFields) throws -> Decoded) throws -> Verified<Decoded>
    /// Many payloads follow: work that pays only over many checks may start early.
    func expectMany()
}

extension SignedPayloadVerifier {
    public func expectMany() {}
}

extension SignedPayloadVerifier {
    /// Verifies a V2 notification's `signedPayload` and decodes it.
    public func verifyNotification(_ signedPayload: String, field: String = "signedPayload") throws -> VerifiedNotification {
        try verify(signedPayload, field: field, as: NotificationPayloadV2.init(json:))
    }

    /// Verifies a `signedTransactionInfo` (or a transaction of a Server API answer) and decodes it.
    public func verifyTransaction(_ signedTransaction: String, field: String) throws -> VerifiedTransaction {
        try verify(signedTransaction, field: field, as: TransactionRecord.init(v2:))
    }

    /// Verifies a `signedRenewalInfo` and decodes it.
    public func verifyRenewalInfo(_ signedRenewalInfo: String, field: String) throws -> VerifiedRenewalInfo {
        try verify(signedRenewalInfo, field: field, as: RenewalRecord.init(v2:))
    }

    /// Verifies a `signedAppTransactionInfo` and decodes it.
    public func verifyAppTransaction(_ signedAppTransaction: String, field: String) throws -> VerifiedAppTransaction {
        try verify(signedAppTransaction, field: field, as: AppTransaction.init(json:))
    }
}

extension SignedDataVerifier: SignedPayloadVerifier {
    /// Decodes from the JSON parsed once during verification.
    public func verify<Decoded>(_ compactJWS: String, field: String,
                                as decode: (JSONFields) throws -> Decoded) throws -> Verified<Decoded> {
        let jws = try verify(compactJWS, field: field)
        return Verified(decoded: try decode(JSONFields(dictionary: jws.payloadObject, path: field)), jws: jws)
    }
}
