import Foundation

/// An HTTP/1.x response as subdesk-http reads it (`HTTP1ResponseReader`), from any bytes a
/// server might send, cut into pieces as a socket might deliver them. The first byte picks
/// the body's bound and the request's method, the second the pieces' size. Any bytes must
/// become a response or a reason, never a trap; the body never passes its bound; and the
/// outcome is the same whether the bytes arrive whole or in pieces (status, body, whether
/// the connection may be kept, or the same reason).
enum HTTPTarget {
    enum Outcome: Equatable {
        case response(status: Int?, body: [UInt8], complete: Bool, reusable: Bool)
        case refused(HTTP1ResponseError)
    }

    static func read(_ bytes: ArraySlice<UInt8>, limit: Int, method: String, piece: Int, ended: Bool) -> Outcome {
        var reader = HTTP1ResponseReader(maxBodyBytes: limit, maxHeadBytes: 256, requestMethod: method)
        do {
            var index = bytes.startIndex
            while index < bytes.endIndex && !reader.isComplete {
                let end = min(bytes.endIndex, index + piece)
                try reader.feed(bytes[index..<end])
                precondition(reader.body.count <= limit, "a body of \(reader.body.count) bytes past its bound of \(limit)")
                index = end
            }
            if ended && !reader.isComplete { try reader.end() }
        } catch let error as HTTP1ResponseError {
            return .refused(error)
        } catch {
            preconditionFailure("not a reader's error: \(error)")
        }
        precondition(!reader.isComplete || reader.head != nil, "complete with no head")
        return .response(status: reader.head?.status, body: reader.body, complete: reader.isComplete, reusable: reader.connectionReusable)
    }

    static func run(_ input: Data) {
        let bytes = [UInt8](input)
        guard bytes.count >= 2 else { return }
        let limit = [0, 1, 16, 300, 4_096][Int(bytes[0]) % 5]
        let method = bytes[0] & 0x80 != 0 ? "HEAD" : "GET"
        let piece = Int(bytes[1]) % 64 + 1
        let body = bytes[2...]
        for ended in [false, true] {
            let whole = read(body, limit: limit, method: method, piece: max(1, body.count), ended: ended)
            let pieces = read(body, limit: limit, method: method, piece: piece, ended: ended)
            // Fed whole, a reader that completed early never saw the bytes after the end;
            // in pieces it stopped feeding at the end too: both count the same surplus only
            // when the last piece held it, so whether it may be kept is compared apart.
            switch (whole, pieces) {
            case let (.response(s1, b1, c1, _), .response(s2, b2, c2, _)):
                precondition(s1 == s2 && b1 == b2 && c1 == c2, "whole \(whole) but in pieces of \(piece) \(pieces)")
            default:
                precondition(whole == pieces, "whole \(whole) but in pieces of \(piece) \(pieces)")
            }
        }
    }
}
