import Foundation
import HelperWire

// The helper's side of subdesk's frames (the format is described in HelperWire).

/// One request as subdesk sent it.
struct HelperRequest {
    var id: UInt64
    var timeout: TimeInterval
    var connectionsPerHost: Int
    /// The body is read up to this many bytes; past it the transfer is cancelled.
    var maxResponseBytes: Int
    var method: String
    var url: String
    var headers: String
    var body: [UInt8]

    /// Nil when the frame does not have the request's shape.
    init?(frame: [UInt8]) {
        var reader = HelperWire.Reader(frame)
        guard let id = reader.integer(8), let milliseconds = reader.integer(4), let connections = reader.integer(4),
              let maxBody = reader.integer(4),
              let method = reader.bytes(), let url = reader.bytes(), let headers = reader.bytes(), let body = reader.bytes(),
              reader.isAtEnd
        else { return nil }
        self.id = id
        timeout = TimeInterval(milliseconds) / 1000
        connectionsPerHost = Int(connections)
        maxResponseBytes = Int(maxBody)
        self.method = String(decoding: method, as: UTF8.self)
        self.url = String(decoding: url, as: UTF8.self)
        self.headers = String(decoding: headers, as: UTF8.self)
        self.body = Array(body)
    }
}

/// One answer for subdesk.
struct HelperResponse {
    static let timedOut = HelperWire.timedOut
    static let noAnswer = HelperWire.noAnswer
    static let tooLarge = HelperWire.tooLarge

    var id: UInt64
    var status: Int32
    var headers = ""
    var body: [UInt8] = []

    static func failure(_ id: UInt64, _ status: Int32, _ reason: String) -> HelperResponse {
        HelperResponse(id: id, status: status, body: Array(reason.utf8))
    }

    var frame: [UInt8] {
        var writer = HelperWire.Writer()
        writer.integer(id)
        writer.integer(status)
        writer.bytes(headers.utf8)
        writer.bytes(body)
        return writer.frame
    }
}
