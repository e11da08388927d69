/// An HTTP/1.1 request as bytes (RFC 9112 section 3): the request line, `Host`, the
/// caller's fields, `Content-Length` where there is a body (or the method sends one), then
/// the body. The framing fields are this type's alone: a caller's `Host`, `Content-Length`,
/// `Transfer-Encoding` or `Connection` is dropped. Nothing is written that could split
/// into a second request: a method, target, name or value holding a control character or a
/// line break is refused, naming which.
public enum HTTP1Request {
    public struct Refused: Error, Equatable, CustomStringConvertible {
        public var description: String
    }

    static let framingFields: Set<String> = ["host", "content-length", "transfer-encoding", "connection"]

    /// `target`: the path and query (`/inApps/v1/...?x=1`); `host`: the Host field's value.
    public static func encode(method: String, target: String, host: String, fields: [(name: String, value: String)],
                              body: [UInt8]) throws -> [UInt8] {
        guard !method.isEmpty, method.utf8.allSatisfy(isToken) else { throw Refused(description: "the method is not a token") }
        guard target.hasPrefix("/"), target.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw Refused(description: "the request target is not an absolute path of visible ASCII")
        }
        guard !host.isEmpty, host.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else { throw Refused(description: "the host is not visible ASCII") }
        var out = Array("\(method) \(target) HTTP/1.1\r\nHost: \(host)\r\n".utf8)
        for field in fields {
            guard !field.name.isEmpty, field.name.utf8.allSatisfy(isToken) else {
                throw Refused(description: "the header name \(printable(field.name.utf8.prefix(40))) is not a token")
            }
            guard field.value.utf8.allSatisfy({ $0 == 0x09 || ($0 >= 0x20 && $0 != 0x7F) }) else {
                throw Refused(description: "the value of header \(field.name) holds a control character or a line break")
            }
            if framingFields.contains(field.name.lowercased()) { continue }
            out += Array("\(field.name): \(field.value.trimmed)\r\n".utf8)
        }
        if !body.isEmpty || ["POST", "PUT", "PATCH"].contains(method) { out += Array("Content-Length: \(body.count)\r\n".utf8) }
        out += [0x0D, 0x0A]
        out += body
        return out
    }
}
