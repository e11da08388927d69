import Foundation

/// Verifies and decodes the signed transaction and renewal info that both notifications
/// and the App Store Server API carry, so that data from either source passes the same
/// signature, bundle id and environment checks before it may be merged.
struct SignedRecordChecks {
    let verifier: SignedPayloadVerifier
    let policy: IntakePolicy

    /// Where the JWS sat, for messages: its environment and how to name the container
    /// ("the notification's", "the Server API response's").
    struct Context {
        var environment: AppStoreEnvironment?
        var owner: String
    }

    func transaction(_ jws: String, field: String, in context: Context) throws -> TransactionRecord {
        try transactionAndPieces(jws, field: field, in: context).record
    }

    /// The transaction, and the decoded pieces of its JWS when the verifier has them.
    func transactionAndPieces(_ jws: String, field: String, in context: Context) throws
        -> (record: TransactionRecord, pieces: JWSPieces?) {
        let verified = try verifier.verifiedPieces(jws, field: field)
        let t = try TransactionRecord(v2: JSONFields(dictionary: verified.object, path: field))
        if let p = policy.bundleProblem(t.bundleId, field: field) { throw Rejection(reason: p) }
        if let env = context.environment, t.environment != env {
            throw Rejection(reason: "\(field): environment \(t.environment) differs from \(context.owner) \(env)")
        }
        return (t, verified.pieces)
    }

    /// - Parameter expectedOriginal: the originalTransactionId the renewal info must belong
    ///   to, and the field that named it.
    func renewal(_ jws: String, field: String, in context: Context,
                 expectedOriginal: (id: String, source: String)?) throws -> RenewalRecord {
        try renewalAndPieces(jws, field: field, in: context, expectedOriginal: expectedOriginal).record
    }

    /// The renewal info, and the decoded pieces of its JWS when the verifier has them.
    func renewalAndPieces(_ jws: String, field: String, in context: Context,
                          expectedOriginal: (id: String, source: String)?) throws -> (record: RenewalRecord, pieces: JWSPieces?) {
        let verified = try verifier.verifiedPieces(jws, field: field)
        let r = try RenewalRecord(v2: JSONFields(dictionary: verified.object, path: field))
        if let expected = expectedOriginal, r.originalTransactionId != expected.id {
            throw Rejection(reason: "\(field): originalTransactionId \(r.originalTransactionId) differs from \(expected.source)'s \(expected.id)")
        }
        if let env = context.environment, r.environment != env {
            throw Rejection(reason: "\(field): environment \(r.environment) differs from \(context.owner) \(env)")
        }
        return (r, verified.pieces)
    }
}
