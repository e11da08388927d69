import Foundation
import TerminalUI

/// Where theme files are looked for, and loading them by name.
public struct ThemeCatalog: Sendable {
    /// Directories searched in order; the first holding `NAME.theme` wins.
    public var searchPaths: [String]

    public init(searchPaths: [String]) {
        self.searchPaths = searchPaths
    }

    /// The user's theme folder, then `themes/` in the working directory, then the `themes/`
    /// of the checkout the executable was built in (a build folder sits inside it).
    public static func standardSearchPaths(environment: [String: String] = ProcessInfo.processInfo.environment,
                                           executablePath: String = CommandLine.arguments.first ?? "",
                                           currentDirectory: String = FileManager.default.currentDirectoryPath) -> [String] {
        var paths: [String] = []
        if let config = environment["XDG_CONFIG_HOME"], !config.isEmpty {
            paths.append(config + "/subdesk/themes")
        } else if let home = environment["HOME"], !home.isEmpty {
            paths.append(home + "/.config/subdesk/themes")
        }
        paths.append(URL(fileURLWithPath: currentDirectory).appendingPathComponent("themes").path)
        var directory = URL(fileURLWithPath: executablePath).resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0..<8 {
            let candidate = directory.appendingPathComponent("themes").path
            if FileManager.default.fileExists(atPath: candidate + "/default.theme") {
                paths.append(candidate)
                break
            }
            directory.deleteLastPathComponent()
        }
        var seen = Set<String>()
        return paths.filter { seen.insert($0).inserted }
    }

    /// Every theme name available: files in the search paths and the built-in ones, sorted.
    public func availableNames() -> [String] {
        var names: Set<String> = ["default", "mono"]
        for directory in searchPaths {
            let files = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
            for file in files where file.hasSuffix(".theme") && !file.hasPrefix(".") {
                names.insert(String(file.dropLast(".theme".count)))
            }
        }
        return names.sorted()
    }

    /// Loads a theme by name; a malformed file throws a `ThemeError` naming file and line.
    public func load(_ name: String) throws -> ThemeLoadResult {
        try Theme.load(name: name, searchPaths: searchPaths)
    }
}
