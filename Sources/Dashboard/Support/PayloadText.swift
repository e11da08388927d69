import Foundation
import SubscriptionCore
import TerminalUI

/// Readable lines for what a timeline entry or a quarantined body holds.
///
/// Stored bodies are JSON whose interesting parts are JWS strings (the
/// notification's `signedPayload`, and inside it `signedTransactionInfo`
/// and `signedRenewalInfo`). Each JWS is shown as its decoded payload,
/// nested where the string was, so support reads one document instead of
/// three base64 blobs. Nothing here verifies signatures: intake already did,
/// and a quarantined body is shown precisely because it failed to.
///
/// Every string from a payload passes through `SafeText`, so control and
/// bidi characters arrive on screen as visible escapes.
public enum PayloadText {
    /// The body of a stored notification, decoded and pretty-printed.
    public static func notificationLines(_ body: Data, time: ZonedTime) -> [String] {
        guard let value = JSONValue.parse(Array(body)) else {
            return ["body is not JSON (\(body.count) bytes):"] + rawLines(body)
        }
        return render(value, time: time)
    }

    /// A transaction's fields, one per line, dates also shown in `time`'s zone.
    public static func transactionLines(_ t: TransactionRecord, time: ZonedTime) -> [String] {
        var fields: [(String, String?)] = [
            ("transactionId", t.transactionId),
            ("originalTransactionId", t.originalTransactionId),
            ("productId", t.productId),
            ("subscriptionGroupIdentifier", t.subscriptionGroupIdentifier),
            ("type", t.type),
            ("transactionReason", t.transactionReason?.rawValue),
            ("purchaseDate", date(t.purchaseDate, time)),
            ("originalPurchaseDate", t.originalPurchaseDate.map { date($0, time) }),
            ("expiresDate", t.expiresDate.map { date($0, time) }),
            ("revocationDate", t.revocationDate.map { date($0, time) }),
            ("revocationReason", t.revocationReason.map { "\($0.rawValue) (\($0.words))" }),
            ("isUpgraded", t.isUpgraded ? "true" : nil),
            ("offer", Timeline.offerDescription(type: t.offerType, discount: t.offerDiscountType, identifier: t.offerIdentifier)),
            ("inAppOwnershipType", t.ownershipType.rawValue),
        ]
        if let price = t.price, let currency = t.currency {
            fields.append(("price", Money.format(milliunits: price, currency: currency)))
        }
        fields += [
            ("environment", t.environment.rawValue),
            ("appAccountToken", t.appAccountToken),
            ("storefront", t.storefront),
            ("bundleId", t.bundleId),
            ("webOrderLineItemId", t.webOrderLineItemId),
            ("signedDate", date(t.signedDate, time)),
        ]
        let shown = fields.compactMap { name, value in value.map { (name, $0) } }
        let width = shown.map { $0.0.count }.max() ?? 0
        return shown.map { name, value in
            name.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + SafeText.sanitize(value)
        }
    }

    /// A quarantined body: decoded where it parses, then the raw text.
    public static func quarantinedLines(_ body: Data, time: ZonedTime) -> [String] {
        var lines: [String] = []
        if let value = JSONValue.parse(Array(body)) {
            lines.append("decoded:")
            lines += render(value, time: time).map { "  " + $0 }
            lines.append("")
        }
        lines.append("raw (\(body.count) bytes):")
        lines += rawLines(body).map { "  " + $0 }
        return lines
    }

    /// The body as text, one line per line of the body, control characters escaped.
    static func rawLines(_ body: Data) -> [String] {
        let text = String(decoding: body, as: UTF8.self)
        return text.split(separator: "\n", omittingEmptySubsequences: false).map { SafeText.sanitize(String($0)) }
    }

    // MARK: - Pretty printing

    static func render(_ value: JSONValue, time: ZonedTime) -> [String] {
        var lines: [String] = []
        append(value, prefix: "", indent: "", trailer: "", into: &lines, time: time)
        return lines
    }

    /// Writes `value` after `prefix` (a key, or nothing), its nested lines indented by `indent`.
    private static func append(_ value: JSONValue, prefix: String, indent: String, trailer: String,
                               into lines: inout [String], time: ZonedTime, key: String? = nil) {
        switch value {
        case .object(let members):
            guard !members.isEmpty else { lines.append(indent + prefix + "{}" + trailer); return }
            lines.append(indent + prefix + "{")
            for (index, member) in members.enumerated() {
                let comma = index == members.count - 1 ? "" : ","
                append(member.value, prefix: quoted(member.key) + ": ", indent: indent + "  ", trailer: comma,
                       into: &lines, time: time, key: member.key)
            }
            lines.append(indent + "}" + trailer)
        case .array(let items):
            guard !items.isEmpty else { lines.append(indent + prefix + "[]" + trailer); return }
            lines.append(indent + prefix + "[")
            for (index, item) in items.enumerated() {
                append(item, prefix: "", indent: indent + "  ", trailer: index == items.count - 1 ? "" : ",",
                       into: &lines, time: time)
            }
            lines.append(indent + "]" + trailer)
        case .string(let text):
            if let jws = decodeJWS(text) {
                // The decoded payload stands where the string was, labelled so no one mistakes it for the wire form.
                append(jws.payload, prefix: prefix + "JWS(\(jws.summary)) ", indent: indent, trailer: trailer,
                       into: &lines, time: time)
            } else {
                lines.append(indent + prefix + quoted(text) + trailer)
            }
        case .number(let text):
            var line = indent + prefix + text + trailer
            if let key, isDateKey(key), let millis = Int64(text), millis > 100_000_000_000 {
                line += "  // " + time.format(millis, "yyyy-MM-dd HH:mm:ss") + " " + time.label
            }
            lines.append(line)
        case .bool(let flag):
            lines.append(indent + prefix + (flag ? "true" : "false") + trailer)
        case .null:
            lines.append(indent + prefix + "null" + trailer)
        }
    }

    /// A JSON string literal whose control and bidi characters are visible escapes.
    static func quoted(_ text: String) -> String {
        let escaped = text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
        return "\"" + SafeText.sanitize(escaped) + "\""
    }

    private static func isDateKey(_ key: String) -> Bool {
        key.hasSuffix("Date") || key.hasSuffix("_date_ms") || key.hasSuffix("Date_ms")
    }

    /// The payload of a compact JWS and a short description of its header, or nil if `text` is not one.
    static func decodeJWS(_ text: String) -> (payload: JSONValue, summary: String)? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count > 4, parts[1].count > 4,
              let headerData = Base64URL.decode(parts[0]), let header = JSONValue.parse(Array(headerData)),
              let payloadData = Base64URL.decode(parts[1]), let payload = JSONValue.parse(Array(payloadData)) else {
            return nil
        }
        var summary: [String] = []
        if case .string(let alg)? = header["alg"] { summary.append(SafeText.sanitize(alg)) }
        if case .array(let chain)? = header["x5c"] { summary.append("x5c: \(chain.count) certificates") }
        return (payload, summary.isEmpty ? "no header" : summary.joined(separator: ", "))
    }

    private static func date(_ millis: Millis, _ time: ZonedTime) -> String {
        "\(time.format(millis, "yyyy-MM-dd HH:mm:ss")) \(time.label)  (\(millis))"
    }
}
