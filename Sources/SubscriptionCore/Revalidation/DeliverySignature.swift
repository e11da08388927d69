import Foundation

/// The `Subdesk-Signature` header of a delivery to a forward target: `t=UNIX,v1=HEX`, where
/// HEX is HMAC-SHA256, under the target's shared secret, of the decimal time, a full stop
/// and the body's bytes (the form payment webhooks use). The time is signed too, so a
/// target that refuses old times refuses a recorded delivery sent again by someone else.
public struct DeliverySignature: Sendable {
    public static let header = "Subdesk-Signature"

    let secret: Data

    /// The secret as `secret_file` holds it: its text, surrounding white space trimmed (as
    /// `$(cat FILE)` gives it to `openssl dgst -hmac`). `warn` hears about a file others may read.
    public static func load(file: String, target: String, warn: (String) -> Void) throws -> DeliverySignature {
        DeliverySignature(secret: Data(try SecretFile.readText(file, what: "[forward \(target)] secret", warn: warn).utf8))
    }

    public init(secret: Data) { self.secret = secret }

    /// The header's value for `body` sent at `time` (seconds since 1970).
    public func value(body: Data, time: Int64) -> String {
        "t=\(time),v1=" + ContentDigest.hex(ContentDigest.hmacSHA256(key: secret, message: Data("\(time).".utf8) + body) ?? Data())
    }

    /// Whether `header` signs `body` under this secret: what a target checks (and the tests).
    public func verifies(_ header: String, body: Data) -> Bool {
        var time: Int64?
        var signatures: [String] = []
        for part in header.split(separator: ",") {
            let pair = part.split(separator: "=", maxSplits: 1).map(String.init)
            guard pair.count == 2 else { continue }
            if pair[0] == "t" { time = Int64(pair[1]) }
            if pair[0] == "v1" { signatures.append(pair[1]) }
        }
        guard let time else { return false }
        let expected = value(body: body, time: time).split(separator: "=").last.map(String.init) ?? ""
        return signatures.contains { Self.sameBytes($0, expected) }
    }

    /// Compares in time that does not depend on where two texts first differ.
    static func sameBytes(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count else { return false }
        return zip(x, y).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }
}
