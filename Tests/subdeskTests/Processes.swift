import Foundation
import FakeApple

/// Runs `executable` to its end with stdout and stderr gathered together; `environment`
/// nil inherits this process's. The one way these tests run a helper program to completion.
func runToEnd(_ executable: String, _ arguments: [String],
              environment: [String: String]? = nil) throws -> (status: Int32, output: String) {
    try ChildOutput.run(executable, arguments, environment: environment)
}
