import Foundation
import HelperWire
#if canImport(Glibc)
import Glibc
#endif

// subdesk-http: subdesk's HTTP client (HTTP/1.1 with OpenSSL's TLS: Transport.swift) in a
// process of its own, so that nothing a server sends is parsed in the process that holds
// the store, and a CGI process answering one notification never loads the TLS library. So
// subdesk starts this helper on its first request, on a socket that is the helper's stdin
// and stdout, and keeps it for the rest of its life. Requests run concurrently; each
// answer is written when it completes (see HelperWire for the format). The helper exits
// when subdesk closes the socket or exits.

if CommandLine.arguments.count > 1 {
    FileHandle.standardError.write(Data("""
        subdesk-http: subdesk's HTTP helper. subdesk starts it on its first HTTP request;
        install it beside subdesk. It takes no arguments and speaks only on its stdin/stdout.

        """.utf8))
    exit(2)
}

// A write to a subdesk that has gone fails with EPIPE and ends the loop below.
signal(SIGPIPE, SIG_IGN)

/// Answers go out whole, one at a time, from whichever thread completes a request.
final class AnswerWriter: @unchecked Sendable {
    private let lock = NSLock()

    func write(_ response: HelperResponse) {
        lock.lock()
        let written = HelperWire.writeAll(STDOUT_FILENO, response.frame)
        lock.unlock()
        if !written { exit(0) }
    }
}

let writer = AnswerWriter()
let transport = Transport()
reading: while true {
    switch HelperWire.readFrame(STDIN_FILENO) {
    case .closed:
        break reading
    case .oversized(let length):
        FileHandle.standardError.write(Data("subdesk-http: a request frame of \(length) bytes is over the limit\n".utf8))
        exit(3)
    case .frame(let frame):
        guard let request = HelperRequest(frame: frame) else {
            FileHandle.standardError.write(Data("subdesk-http: malformed request frame\n".utf8))
            exit(3)
        }
        transport.perform(request, answer: writer.write)
    }
}
exit(0)
