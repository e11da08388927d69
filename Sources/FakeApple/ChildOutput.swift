import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Reading a child process's output in the tests and the benchmark.
public enum ChildOutput {
    /// Everything up to end of file. A read a signal interrupts is tried again, where
    /// Foundation's `readDataToEndOfFile` stops the whole test process (it traps on EINTR).
    public static func readAll(_ handle: FileHandle) -> Data {
        let descriptor = handle.fileDescriptor
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = read(descriptor, &buffer, buffer.count)
            if count > 0 {
                data.append(buffer, count: count)
            } else if count == 0 || (errno != EINTR && errno != EAGAIN) {
                return data
            }
        }
    }
}

extension ChildOutput {
    /// Runs `executable` to its end with stdout and stderr gathered together; `environment`
    /// nil inherits this process's. The one way the tests run a program to completion.
    public static func run(_ executable: String, _ arguments: [String],
                           environment: [String: String]? = nil) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment { process.environment = environment }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let data = readAll(output.fileHandleForReading)
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}

extension ChildOutput {
    /// The program `name` built beside the running one (the test bundle's runner sits in
    /// the build folder with `subdesk`), when it is there and executable.
    public static func programBesideThisOne(_ name: String) -> String? {
        guard let running = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") else { return nil }
        let path = (running as NSString).deletingLastPathComponent + "/" + name
        return FileManager.default.isExecutableFile(atPath: path) ? path : nil
    }
}
