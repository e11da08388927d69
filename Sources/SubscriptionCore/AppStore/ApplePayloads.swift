import Foundation

/// Apple's signed payloads read back out of stored, already verified bodies, for display:
/// every field Apple sent, those subdesk does not type included. Nothing here verifies.
public enum ApplePayloads {
    /// The fields of a notification payload that hold a JWS of their own.
    static let nestedJWSFields = ["signedTransactionInfo", "signedRenewalInfo", "signedAppTransactionInfo"]

    /// The JSON bytes a compact JWS carries.
    public static func payload(ofJWS jws: String) -> Data? {
        let segments = jws.split(separator: ".", omittingEmptySubsequences: false)
        guard segments.count == 3 else { return nil }
        return Base64URL.decode(segments[1])
    }

    /// The `signedPayload` of a stored V2 body.
    static func signedPayload(body: Data) -> String? {
        if let jws = JWSBytes.signedPayloadFastPath(body) { return jws }
        return (try? JSONSerialization.jsonObject(with: body) as? [String: Any])?["signedPayload"] as? String
    }

    /// The payload of a JWS nested in a stored V2 body (`signedTransactionInfo`, ...), wherever
    /// the payload's shape keeps it (`data`, `appData`).
    public static func nestedPayload(body: Data, field: String) -> Data? {
        guard let jws = signedPayload(body: body), let outer = payload(ofJWS: jws),
              let object = try? JSONSerialization.jsonObject(with: outer) as? [String: Any] else { return nil }
        for container in ["data", "appData"] {
            if let nested = (object[container] as? [String: Any])?[field] as? String { return payload(ofJWS: nested) }
        }
        return nil
    }

    /// A stored body as a support agent reads it: a V2 body's decoded payload with each nested
    /// JWS replaced by its decoded payload; a V1 body as it came, without its `password`.
    public static func notificationObject(body: Data) -> [String: Any]? {
        if let jws = signedPayload(body: body) {
            guard let outer = payload(ofJWS: jws),
                  var object = try? JSONSerialization.jsonObject(with: outer) as? [String: Any] else { return nil }
            for container in ["data", "appData"] {
                guard var inner = object[container] as? [String: Any] else { continue }
                for field in nestedJWSFields {
                    if let nested = inner[field] as? String, let bytes = payload(ofJWS: nested),
                       let decoded = try? JSONSerialization.jsonObject(with: bytes) {
                        inner[field] = decoded
                    }
                }
                object[container] = inner
            }
            return object
        }
        guard var v1 = try? JSONSerialization.jsonObject(with: body) as? [String: Any] else { return nil }
        v1.removeValue(forKey: "password")
        return v1
    }
}
