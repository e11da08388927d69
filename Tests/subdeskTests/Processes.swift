import Foundation
import FakeApple

/// Runs `executable` to its end with stdout and stderr gathered together; `environment`
/// nil inherits this process's. The one way these tests run a helper program to completion.
func runToEnd(_ executable: String, _ arguments: [String],
              environment: [String: String]? = nil) throws -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    if let environment { process.environment = environment }
    let output = Pipe()
    process.standardOutput = output
    process.standardError = output
    try process.run()
    let data = ChildOutput.readAll(output.fileHandleForReading)
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: data, as: UTF8.self))
}
