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

    /// A transaction from an API response: no stored notification carries it, so its signed
    /// payload is kept with it.
    func transaction(_ jws: String, field: String, in context: Context) throws -> TransactionRecord {
        let checked = try transactionAndPieces(jws, field: field, in: context)
        var t = checked.record
        t.payload = checked.pieces?.payload ?? Base64URL.decode(String(jws.split(separator: ".").dropFirst().first ?? ""))
        return t
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

    /// An app transaction (`signedAppTransactionInfo`): verified like any JWS, then held
    /// to the policy as Apple's libraries hold one: its bundle id, its app Apple id (in
    /// Production) and its environment (`receiptType`), which must also be the container's.
    func appTransactionAndPieces(_ jws: String, field: String, in context: Context) throws
        -> (appTransaction: AppTransaction, pieces: JWSPieces?) {
        let verified = try verifier.verifiedPieces(jws, field: field)
        let app = try AppTransaction(json: JSONFields(dictionary: verified.object, path: field))
        if let p = policy.bundleProblem(app.bundleId, field: field) { throw Rejection(reason: p) }
        if let receiptType = app.environment {
            if let env = context.environment, receiptType != env {
                throw Rejection(reason: "\(field): receiptType \(receiptType) differs from \(context.owner) \(env)")
            }
            if let p = policy.environmentProblem(receiptType, field: "\(field) receiptType") { throw Rejection(reason: p) }
            if let p = policy.appAppleIdProblem(app.appAppleId, environment: receiptType, field: field) { throw Rejection(reason: p) }
        }
        return (app, verified.pieces)
    }

    /// - Parameter expectedOriginal: the originalTransactionId the renewal info must belong
    ///   to, and the field that named it.
    func renewal(_ jws: String, field: String, in context: Context,
                 expectedOriginal: (id: String, source: String)?) throws -> RenewalRecord {
        let checked = try renewalAndPieces(jws, field: field, in: context, expectedOriginal: expectedOriginal)
        var r = checked.record
        r.payload = checked.pieces?.payload ?? Base64URL.decode(String(jws.split(separator: ".").dropFirst().first ?? ""))
        return r
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
