import Foundation
import HelperWire

/// subdesk's side of the helper's frames (the format is described in HelperWire).
enum HTTPHelperWire {
    static func requestFrame(id: UInt64, _ request: HTTPRequest, timeout: TimeInterval, connectionsPerHost: Int,
                             maxResponseBytes: Int) -> [UInt8] {
        var writer = HelperWire.Writer()
        writer.integer(id)
        writer.integer(UInt32(min(max(0, timeout * 1000), Double(UInt32.max)).rounded(.up)))
        writer.integer(UInt32(clamping: connectionsPerHost))
        writer.integer(UInt32(clamping: maxResponseBytes))
        writer.bytes(request.method.utf8)
        writer.bytes(request.url.absoluteString.utf8)
        writer.bytes(request.headers.map { "\($0.key): \($0.value)\n" }.joined().utf8)
        writer.bytes(request.body ?? Data())
        return writer.frame
    }

    /// A response frame's id and what it says; nil when it does not have the response's shape.
    static func response(_ frame: [UInt8]) -> (id: UInt64, outcome: Result<HTTPResponse, HTTPClient.TransportProblem>)? {
        var reader = HelperWire.Reader(frame)
        guard let id = reader.integer(8), let rawStatus = reader.integer(4), let headers = reader.bytes(),
              let body = reader.bytes(), reader.isAtEnd
        else { return nil }
        switch Int32(bitPattern: UInt32(rawStatus)) {
        case HelperWire.timedOut:
            return (id, .failure(.timedOut))
        case HelperWire.tooLarge:
            return (id, .failure(.tooLarge(String(decoding: body, as: UTF8.self))))
        case ..<0:
            return (id, .failure(.network(String(decoding: body, as: UTF8.self))))
        case let status:
            var fields: [String: String] = [:]
            for line in String(decoding: headers, as: UTF8.self).split(separator: "\n") {
                guard let colon = line.firstIndex(of: ":") else { continue }
                fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
            return (id, .success(HTTPResponse(status: Int(status), headers: fields, body: Data(body))))
        }
    }
}
