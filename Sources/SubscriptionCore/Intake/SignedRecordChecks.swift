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
        let checked = try verifiedTransaction(jws, field: field, in: context)
        var t = checked.decoded
        t.payload = checked.jws.payload
        return t
    }

    /// The transaction with its verified JWS.
    func verifiedTransaction(_ jws: String, field: String, in context: Context) throws -> VerifiedTransaction {
        let verified = try verifier.verifyTransaction(jws, field: field)
        let t = verified.decoded
        if let p = policy.bundleProblem(t.bundleId, field: field) { throw p }
        if let env = context.environment, t.environment != env {
            throw Refusal(.policy, field: field, fault: "environment \(t.environment) differs from \(context.owner) \(env)")
        }
        return verified
    }

    /// An app transaction (`signedAppTransactionInfo`): verified like any JWS, then held
    /// to the policy as Apple's libraries hold one: its bundle id, its app Apple id (in
    /// Production) and its environment (`receiptType`), which must also be the container's.
    func verifiedAppTransaction(_ jws: String, field: String, in context: Context) throws -> VerifiedAppTransaction {
        let verified = try verifier.verifyAppTransaction(jws, field: field)
        let app = verified.decoded
        if let p = policy.bundleProblem(app.bundleId, field: field) { throw p }
        if let receiptType = app.environment {
            if let env = context.environment, receiptType != env {
                throw Refusal(.policy, field: field, fault: "receiptType \(receiptType) differs from \(context.owner) \(env)")
            }
            if let p = policy.environmentProblem(receiptType, field: "\(field) receiptType") { throw p }
            if let p = policy.appAppleIdProblem(app.appAppleId, environment: receiptType, field: field) { throw p }
        }
        return verified
    }

    /// - Parameter expectedOriginal: the originalTransactionId the renewal info must belong
    ///   to, and the field that named it.
    func renewal(_ jws: String, field: String, in context: Context,
                 expectedOriginal: (id: String, source: String)?) throws -> RenewalRecord {
        let checked = try verifiedRenewal(jws, field: field, in: context, expectedOriginal: expectedOriginal)
        var r = checked.decoded
        r.payload = checked.jws.payload
        return r
    }

    /// The renewal info with its verified JWS.
    func verifiedRenewal(_ jws: String, field: String, in context: Context,
                         expectedOriginal: (id: String, source: String)?) throws -> VerifiedRenewalInfo {
        let verified = try verifier.verifyRenewalInfo(jws, field: field)
        let r = verified.decoded
        if let expected = expectedOriginal, r.originalTransactionId != expected.id {
            throw Refusal(.malformed, field: field, fault: "originalTransactionId \(r.originalTransactionId) differs from \(expected.source)'s \(expected.id)")
        }
        if let env = context.environment, r.environment != env {
            throw Refusal(.policy, field: field, fault: "environment \(r.environment) differs from \(context.owner) \(env)")
        }
        return verified
    }
}

extension VerifiedJWS {
    /// What compact storage of the body needs of this JWS, decoded once during verification.
    var pieces: JWSPieces { JWSPieces(header: headerSegment, payload: payload, signature: signature) }
}

/// A record a notification carries as a nested JWS: a transaction or renewal info.
protocol NotificationCarriedRecord {
    var notificationSignedDate: Millis? { get set }
    var sourceNotificationUUID: String? { get set }
    var payload: Data? { get set }
    /// Whether the version holds fields its table has no columns for.
    var needsPayloadKept: Bool { get }
}

extension TransactionRecord: NotificationCarriedRecord {}
extension RenewalRecord: NotificationCarriedRecord {}

extension Verified where Decoded: NotificationCarriedRecord {
    /// The record stamped with the notification that carried it. A version with fields its
    /// table has no columns for keeps its payload, and loading reads them from it.
    func carried(by notification: NotificationPayloadV2) -> Decoded {
        var record = decoded
        record.notificationSignedDate = notification.signedDate
        record.sourceNotificationUUID = notification.notificationUUID
        if record.needsPayloadKept { record.payload = jws.payload }
        return record
    }
}
