import Foundation

/// The FastCGI record parser and a responder's connection state, as `subdesk serve` drives
/// them: any bytes from a web server must become records and events or a
/// FastCGIProtocolError (that connection closed), never trap; every reply written back must
/// itself parse as records; parameters and open records stay within their bounds.
enum FastCGITarget {
    static func run(_ input: Data) {
        var parser = RecordParser()
        var state = FastCGIConnectionState(limits: .init(maxParamsBytes: 4096, maxConnections: 4))
        // Cut the input at a point it chooses, so records spanning reads are exercised.
        let cut = input.first.map { Int($0) % 17 + 1 } ?? 1
        var offset = input.startIndex
        while offset < input.endIndex {
            let end = min(input.endIndex, offset + cut)
            parser.append(input[offset..<end])
            offset = end
            do {
                while let record = try parser.next() {
                    precondition(record.content.count <= FastCGIRecord.maxContentLength)
                    for event in try state.take(record) {
                        switch event {
                        case .send(let bytes):
                            var replies = RecordParser()
                            replies.append(bytes)
                            guard (try? replies.next()) != nil, replies.pendingCount == 0 else {
                                fatalError("a reply is not one whole record")
                            }
                        case .bodyEnd, .abort:
                            state.finished()
                        case .params(let params):
                            precondition(params.reduce(0) { $0 + $1.key.utf8.count + $1.value.utf8.count } <= 4096)
                        case .begin, .body:
                            break
                        }
                    }
                }
                // Never more than one record and a header's worth buffered unparsed.
                precondition(parser.pendingCount < FastCGIRecord.headerLength + 65_535 + 255 + cut)
            } catch is FastCGIProtocolError {
                return
            } catch {
                fatalError("the FastCGI parser threw something other than a FastCGIProtocolError: \(error)")
            }
        }
    }
}
