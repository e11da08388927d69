import Foundation
import FastCGI
import XCTest

/// A web server's side of FastCGI, for the tests: requests over a unix socket, one
/// connection each or several on a kept connection.
final class FastCGITestClient {
    let fd: Int32
    private var parser = RecordParser()

    struct Answer: Equatable {
        /// The whole FCGI_STDOUT: what `ingest --cgi` would have printed.
        var stdout: String
        var appStatus: UInt32
        var status: Int { Int(stdout.dropFirst("Status: ".count).prefix(3)) ?? 0 }
        /// The body after the headers, without its final newline.
        var text: String {
            guard let range = stdout.range(of: "\r\n\r\n") else { return stdout }
            return String(stdout[range.upperBound...]).trimmingCharacters(in: .newlines)
        }
    }

    init(socket path: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = ServeListenerTestAddress.unix(path)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        try Self.ready(fd, connected: connected == 0, to: path)
    }

    /// A connection made (or not) to `what`: reads wait at most two minutes.
    private static func ready(_ fd: Int32, connected: Bool, to what: String) throws {
        guard connected else {
            let message = String(cString: strerror(errno))
            close(fd)
            throw NSError(domain: "fastcgi", code: 1, userInfo: [NSLocalizedDescriptionKey: "connect \(what): \(message)"])
        }
        var timeout = timeval(tv_sec: 120, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    /// A connection to a TCP port on the loopback.
    init(port: Int) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = WebServerTests.loopback(port: port)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        try Self.ready(fd, connected: connected == 0, to: "127.0.0.1:\(port)")
    }

    deinit { close(fd) }

    static func params(length: Int?, method: String = "POST") -> [(String, String)] {
        var pairs = [("REQUEST_METHOD", method), ("GATEWAY_INTERFACE", "CGI/1.1"), ("REMOTE_ADDR", "192.0.2.7"),
                     ("SCRIPT_NAME", "/appstore/notifications")]
        if let length { pairs.append(("CONTENT_LENGTH", String(length))) }
        return pairs
    }

    /// The records of one request, the body in records of at most 8 KiB.
    static func requestBytes(id: UInt16 = 1, params: [(String, String)], body: Data, keep: Bool) -> [UInt8] {
        var out = FastCGIRecord.beginRequest(requestId: id, keepConnection: keep).encoded()
        out += FastCGIRecord.stream(.params, requestId: id, NameValuePairs.encode(params), end: true)
        var offset = 0
        let bytes = [UInt8](body)
        while offset < bytes.count {
            let end = min(bytes.count, offset + 8192)
            out += FastCGIRecord(.stdin, requestId: id, content: Array(bytes[offset..<end])).encoded()
            offset = end
        }
        out += FastCGIRecord(.stdin, requestId: id).encoded()
        return out
    }

    @discardableResult
    func send(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { Foundation.send(fd, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { return false }
            offset += n
        }
        return true
    }

    /// The answer to request `id`: nil when the connection ended first.
    func readAnswer(id: UInt16 = 1) -> Answer? {
        var stdout: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            while let record = try? parser.next() {
                guard record.requestId == id else { continue }
                if record.kind == .stdout { stdout += record.content }
                if record.kind == .endRequest, record.content.count == 8 {
                    let status = record.content.prefix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
                    return Answer(stdout: String(decoding: stdout, as: UTF8.self), appStatus: status)
                }
            }
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return nil }
            parser.append(buffer[0..<n])
        }
    }

    /// One whole request and its answer.
    func post(_ body: Data, params: [(String, String)]? = nil, keep: Bool = true) -> Answer? {
        guard send(Self.requestBytes(params: params ?? Self.params(length: body.count), body: body, keep: keep)) else { return nil }
        return readAnswer()
    }

    /// Whether the server closed the connection (a read sees its end).
    func isClosedByServer() -> Bool {
        var byte: UInt8 = 0
        return read(fd, &byte, 1) == 0
    }
}

/// A `subdesk serve` process under test, its standard error in a file.
final class ServeProcess {
    let process = Process()
    let socket: String
    let logPath: String

    init(binary: String, arguments: [String], socket: String, log: String, environment: [String: String],
         listen: String? = nil) throws {
        self.socket = socket
        logPath = log
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["serve", "--listen", listen ?? "unix:" + socket] + arguments
        process.environment = environment
        FileManager.default.createFile(atPath: log, contents: nil)
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        process.standardOutput = FileHandle.nullDevice
        try process.run()
    }

    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// Waits until the socket answers (or the process ended).
    func waitUntilAnswering(timeout: TimeInterval = 60) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            guard process.isRunning else {
                throw NSError(domain: "serve", code: Int(process.terminationStatus),
                              userInfo: [NSLocalizedDescriptionKey: "serve exited \(process.terminationStatus): \(log)"])
            }
            if log.contains("answering FastCGI on"), (try? FastCGITestClient(socket: socket)) != nil { return }
            usleep(50_000)
        }
        XCTFail("serve did not answer within \(timeout) s: \(log)")
    }

    func signal(_ number: Int32) { kill(process.processIdentifier, number) }

    /// Waits for the process to end, up to `timeout`; its exit status, or nil if it did not end.
    func waitForExit(timeout: TimeInterval = 60) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning { return nil }
        return process.terminationStatus
    }

    func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}

enum ServeListenerTestAddress {
    static func unix(_ path: String) -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
        return address
    }

    /// A unix stream socket bound at `path` (a socket file made there); -1 if it fails.
    static func boundSocket(_ path: String) -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = unix(path)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        if bound != 0 { close(fd); return -1 }
        return fd
    }
}
