import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The HTTP library (`libSubdeskHTTP.so`, URLSession behind a C interface), loaded the
/// first time a request is sent. Linking URLSession into every subdesk process would load
/// libcurl and the thirty-odd libraries behind it at each start, some 12 ms that a CGI
/// process answering one notification pays and never uses.
///
/// Looked for at `$SUBDESK_HTTP_LIBRARY`, then beside the running executable, then where
/// the dynamic loader looks.
final class HTTPTransportLibrary: @unchecked Sendable {
    static let fileName = "libSubdeskHTTP.so"

    typealias Open = @convention(c) (Int32, Double) -> UnsafeMutableRawPointer?
    typealias Close = @convention(c) (UnsafeMutableRawPointer?) -> Void
    typealias Perform = @convention(c) (
        UnsafeMutableRawPointer?, UnsafePointer<CChar>?, UnsafePointer<CChar>?, UnsafePointer<CChar>?,
        UnsafePointer<UInt8>?, Int, Double,
        UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?, UnsafeMutablePointer<Int>?,
        UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?, UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32
    typealias Free = @convention(c) (UnsafeMutableRawPointer?) -> Void

    let open: Open
    let close: Close
    let perform: Perform
    let free: Free

    private init(open: Open, close: Close, perform: Perform, free: Free) {
        self.open = open
        self.close = close
        self.perform = perform
        self.free = free
    }

    /// The library, or why it cannot be used.
    static let shared: Result<HTTPTransportLibrary, HTTPClient.TransportProblem> = load()

    static func candidates() -> [String] {
        var paths: [String] = []
        if let explicit = ProcessInfo.processInfo.environment["SUBDESK_HTTP_LIBRARY"], !explicit.isEmpty { paths.append(explicit) }
        if let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            paths.append((executable as NSString).deletingLastPathComponent + "/" + fileName)
        }
        paths.append(fileName)
        return paths
    }

    private static func load() -> Result<HTTPTransportLibrary, HTTPClient.TransportProblem> {
        var reasons: [String] = []
        for path in candidates() {
            guard let handle = dlopen(path, RTLD_NOW | RTLD_LOCAL) else {
                if path.contains("/") && FileManager.default.fileExists(atPath: path) {
                    reasons.append(dlerror().map { String(cString: $0) } ?? path)
                }
                continue
            }
            guard let open = dlsym(handle, "subdesk_http_open"), let close = dlsym(handle, "subdesk_http_close"),
                  let perform = dlsym(handle, "subdesk_http_perform"), let free = dlsym(handle, "subdesk_http_free") else {
                reasons.append("\(path) lacks the subdesk_http_* functions")
                continue
            }
            return .success(HTTPTransportLibrary(open: unsafeBitCast(open, to: Open.self), close: unsafeBitCast(close, to: Close.self),
                                                 perform: unsafeBitCast(perform, to: Perform.self),
                                                 free: unsafeBitCast(free, to: Free.self)))
        }
        let looked = candidates().joined(separator: ", ")
        return .failure(.network("HTTP support library not found (looked for \(looked)\(reasons.isEmpty ? "" : "; " + reasons.joined(separator: "; "))): "
                                 + "build it with `swift build` and keep \(fileName) beside subdesk"))
    }
}
